package s3

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	good := []struct {
		raw  string
		want urlConfig
	}{
		{"s3://ops-locks", urlConfig{conn: s3conn.Config{Bucket: "ops-locks"}}},
		{"s3://my.bucket-1?region=r&endpoint=http://h:1/&path-style=true", urlConfig{conn: s3conn.Config{Bucket: "my.bucket-1", Region: "r", Endpoint: "http://h:1", PathStyle: true}}},
		{"s3://b?prefix=locks/&max-key-segment=255", urlConfig{conn: s3conn.Config{Bucket: "b"}, prefix: "locks/", segment: 255}},
		{"s3://b?prefix=", urlConfig{conn: s3conn.Config{Bucket: "b"}}},
		{"s3://b?prefix=a%20b%2F", urlConfig{conn: s3conn.Config{Bucket: "b"}, prefix: "a b/"}},
	}
	for _, tc := range good {
		got, err := parseURL(objlocktest.ParseURL(t, tc.raw))
		if err != nil || got != tc.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
	bad := []struct{ raw, want string }{
		{"s3://", "no bucket name"},
		{"s3://user:hunter2@b", "no user or password"},
		{"s3://" + strings.Repeat("b", 256), "longer than 255"},
		{"s3://b?region=", "region is empty"},
		{"s3://b?prefix=a&prefix=b", "more than once"},
		{"s3://b?prefix=a%00b", "NUL"},
		{"s3://b?prefix=" + strings.Repeat("p", MaxObjectKeyLen), "no room for a key"},
		{"s3://b?endpoint=http://u:hunter2@x", "user information"},
		{"s3://b?path-style=yes", "not true or false"},
		{"s3://b?max-key-segment=1025", "from 1 to 1024"},
	}
	for _, tc := range bad {
		_, err := parseURL(objlocktest.ParseURL(t, tc.raw))
		objlocktest.WantRefused(t, tc.raw, err, tc.want)
	}
}

// TestURLParams: the parameters lockers/gcs shares (see
// objlocktest.TestURLParams).
func TestURLParams(t *testing.T) {
	t.Parallel()
	objlocktest.TestURLParams(t, "s3://b", maxBackoff, func(u *url.URL) (objlocktest.URLParams, error) {
		c, err := parseURL(u)
		return objlocktest.URLParams{Mode: c.mode, Backoff: c.backoff, Probe: c.probe}, err
	})
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"s3://b", "s3://ops-locks?prefix=locks/&region=eu-west-1&endpoint=http://127.0.0.1:1&path-style=true",
		"s3://b?trusted-clock=true&max-clock-skew=1s", "s3://u:pw@b", "s3://b?password=pw",
		"s3://b?endpoint=http://u:pw@h", "s3://B%41D", "s3://b?prefix=%00", "s3://b?x=%zz",
		"s3://b?backoff=20ms", "s3://b?max-key-segment=255", "s3://b?probe-interval=off",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			objlocktest.CheckURLError(t, raw, err)
			return
		}
		switch {
		case badBucketName(c.conn.Bucket) != "":
			t.Fatalf("parseURL(%q) accepted the bucket %q", raw, c.conn.Bucket)
		case checkPrefix(c.prefix) != nil:
			t.Fatalf("parseURL(%q) accepted the prefix %q", raw, c.prefix)
		case c.mode.Check() != nil:
			t.Fatalf("parseURL(%q) accepted the mode %+v", raw, c.mode)
		case c.conn.Endpoint != "" && !strings.HasPrefix(c.conn.Endpoint, "http"):
			t.Fatalf("parseURL(%q) accepted the endpoint %q", raw, c.conn.Endpoint)
		case c.backoff < 0 || c.backoff > maxBackoff:
			t.Fatalf("parseURL(%q) accepted the backoff %v", raw, c.backoff)
		case c.segment < 0 || c.segment > MaxObjectKeyLen:
			t.Fatalf("parseURL(%q) accepted the segment limit %d", raw, c.segment)
		}
	})
}

// minioURL returns an s3:// URL of bucket on MinIO, with more parameters
// (starting with &).
func minioURL(t testing.TB, bucket, more string) string {
	return "s3://" + bucket + "?region=us-east-1&path-style=true&max-key-segment=255&endpoint=" + url.QueryEscape(testenv.S3Endpoint(t)) + more
}

// fence.OpenLocker on an s3:// URL, with credentials from the SDK's
// environment (scripts/emulators.sh points AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY at MinIO): the bucket is missing until Create
// makes it, then Acquire and Release work.
func TestOpenLocker(t *testing.T) {
	t.Parallel()
	testenv.S3Credentials(t)
	bucket := emulators.UniqueName("fence-url-")
	t.Cleanup(func() { removeBucket(t, bucket) })
	ctx := t.Context()
	l, err := fence.OpenLocker(ctx, minioURL(t, bucket, "&prefix=locks/"), nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if info := driver.InfoOf(l); info.Name != "s3" || info.MaxKeyLen != 255 || !info.ClockFree {
		t.Errorf("driver.InfoOf = %+v; want name s3, MaxKeyLen 255 (MinIO's segments), clock-free", info)
	}
	if _, err := l.Acquire(ctx, "k", MinTTL, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Acquire before Create = %v; want an error matching fence.ErrStoreMissing", err)
	}
	for range 2 { // creating an existing bucket is no error
		if err := l.Create(ctx); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	lease, err := l.Acquire(ctx, "k", MinTTL, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if e := etagOf(t, bucket, "locks/k"); e == "" {
		t.Errorf("no object locks/k after Acquire")
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// fence.OpenLocker takes the HTTP client and the Clock the URL cannot
// give, and the URL's endpoint and trusted-clock mode.
func TestOpenLockerWithClientAndClock(t *testing.T) {
	t.Parallel()
	testenv.S3Credentials(t)
	bucket := newBucket(t)
	ctx := t.Context()
	counted := &counter{next: http.DefaultTransport}
	clock := clocktest.New(time.Now().Add(-time.Hour))
	l, err := fence.OpenLocker(ctx, minioURL(t, bucket, "&trusted-clock=true&max-clock-skew=1s&backoff=20ms"), &fence.OpenOptions{HTTPClient: &http.Client{Transport: counted}, Clock: clock})
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	lease, err := l.Acquire(ctx, "k", MinTTL, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if !lease.ValidUntil.Equal(clock.Now().Add(MinTTL)) {
		t.Errorf("ValidUntil = %v; want the fake clock's now plus TTL, %v", lease.ValidUntil, clock.Now().Add(MinTTL))
	}
	if counted.puts.Load() != 1 {
		t.Errorf("%d PUTs went through the given HTTP client; want 1", counted.puts.Load())
	}
	var rec struct {
		Expires int64 `json:"expires_unix_ns"`
	}
	err = json.Unmarshal(readRaw(t, bucket, "k"), &rec)
	if err != nil || rec.Expires != clock.Now().Add(MinTTL).UnixNano() {
		t.Errorf("stored record %+v, %v; want a trusted-clock expiry at the fake clock's now plus TTL", rec, err)
	}
	d := storeOf(t, l)
	if d.Backoff().First != 20*time.Millisecond || !d.Mode().TrustedClock || d.Mode().MaxClockSkew != time.Second {
		t.Errorf("store from the URL: backoff %v, mode %+v; want 20ms and trusted with 1s of skew", d.Backoff().First, d.Mode())
	}
}

// TestAs: As gives the client under a Locker, the caller's from New and
// the one the opener made from a URL, and nothing else. It makes no
// request.
func TestAs(t *testing.T) {
	t.Parallel()
	refuse := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL)
		return nil, errors.New("no requests here")
	})
	client := s3.New(s3.Options{Region: "us-east-1", HTTPClient: &http.Client{Transport: refuse}})
	l, err := New(client, "b00", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got *s3.Client
	if !l.As(&got) || got != client {
		t.Errorf("As(**s3.Client) of New's Locker = %v; want the client given to New", got)
	}
	var s string
	if l.As(&s) || l.As(nil) || l.As(client) {
		t.Error("As succeeded for a target other than **s3.Client")
	}
	opened, err := fence.OpenLocker(t.Context(), "s3://b01?region=us-east-1", &fence.OpenOptions{HTTPClient: &http.Client{Transport: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if got = nil; !opened.As(&got) || got == nil || got.Options().Region != "us-east-1" {
		t.Errorf("As(**s3.Client) of an opened Locker = %v; want the client the opener made", got)
	}
}

// New refuses impossible settings before any request.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	client := s3.New(s3.Options{Region: "us-east-1"})
	for _, tc := range []struct {
		name   string
		client *s3.Client
		bucket string
		opts   Options
	}{
		{"nil client", nil, "b", Options{}},
		{"empty bucket", client, "", Options{}},
		{"bucket with a slash", client, "a/b", Options{}},
		{"prefix leaving no room", client, "b", Options{Prefix: strings.Repeat("p", MaxObjectKeyLen)}},
		{"prefix not UTF-8", client, "b", Options{Prefix: "\xff"}},
		{"negative segment limit", client, "b", Options{MaxKeySegmentLen: -1}},
		{"prefix segment over the limit", client, "b", Options{Prefix: strings.Repeat("p", 256) + "/", MaxKeySegmentLen: 255}},
		{"prefix's last segment filling the limit", client, "b", Options{Prefix: "locks/" + strings.Repeat("p", 255), MaxKeySegmentLen: 255}},
		{"skew without trusted clock", client, "b", Options{MaxClockSkew: time.Second}},
		{"negative attempts", client, "b", Options{MaxAttempts: -1}},
		{"backoff over 8s", client, "b", Options{Backoff: 9 * time.Second}},
		{"probe interval under 10ms", client, "b", Options{ProbeInterval: time.Millisecond}},
	} {
		if _, err := New(tc.client, tc.bucket, &tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New with %s: %v; want an error matching fence.ErrInvalid", tc.name, err)
		}
	}
	l, err := New(client, "b", &Options{Prefix: "locks/ab", MaxKeySegmentLen: 255})
	if err != nil {
		t.Fatal(err)
	}
	if got := driver.InfoOf(l).MaxKeyLen; got != 253 {
		t.Errorf("MaxKeyLen with prefix locks/ab and segments of 255 = %d; want 253", got)
	}
}
