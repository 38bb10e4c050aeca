package s3conn

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

// parse reads raw with Parse and MaxKeySegment(p, 1024), as an opener does.
func parse(t *testing.T, raw string) (Config, int, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	p := urlparam.New(u)
	c := Parse(p)
	n := MaxKeySegment(p, 1024)
	return c, n, p.Done()
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw     string
		want    Config
		segment int
	}{
		{"s3://b", Config{Bucket: "b"}, 0},
		{"s3://b/", Config{Bucket: "b"}, 0},
		{"s3://my.bucket-1?region=eu-west-1", Config{Bucket: "my.bucket-1", Region: "eu-west-1"}, 0},
		{"s3://b?endpoint=http://127.0.0.1:9000/&path-style=true", Config{Bucket: "b", Endpoint: "http://127.0.0.1:9000", PathStyle: true}, 0},
		{"s3://b?path-style=false", Config{Bucket: "b"}, 0},
		{"s3://b?max-key-segment=1", Config{Bucket: "b"}, 1},
		{"s3://b?max-key-segment=1024", Config{Bucket: "b"}, 1024},
	} {
		got, n, err := parse(t, tc.raw)
		if err != nil || got != tc.want || n != tc.segment {
			t.Errorf("parse(%q) = %+v, %d, %v; want %+v, %d", tc.raw, got, n, err, tc.want, tc.segment)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"s3://", "no bucket name"},
		{"s3:///b", "no bucket name"},
		{"s3://b:9000", "no port"},
		{"s3://b/key", "unexpected path"},
		{"s3://user:hunter2@b", "no user or password"},
		{"s3://b?region=", "region is empty"},
		{"s3://b?region=a&region=b", "more than once"},
		{"s3://b?endpoint=ftp://host", "not an http"},
		{"s3://b?endpoint=http://user:hunter2@host", "user information"},
		{"s3://b?path-style=yes", "not true or false"},
		{"s3://b?max-key-segment=0", "from 1 to 1024"},
		{"s3://b?max-key-segment=-1", "from 1 to 1024"},
		{"s3://b?max-key-segment=x", "from 1 to 1024"},
		{"s3://b?max-key-segment=1025", "from 1 to 1024"},
		{"s3://b?table=t", "unknown parameter"},
	} {
		_, _, err := parse(t, tc.raw)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) = %v; want an error matching fence.ErrInvalid that says %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parse(%q) = %v, which shows the password", tc.raw, err)
		}
	}
}
