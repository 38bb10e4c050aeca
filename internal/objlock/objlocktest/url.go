package objlocktest

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

// URLParams is what a Locker's URL says about the parameters that
// lockers/s3 and lockers/gcs share: the clock mode, the backoff and the
// probe interval.
type URLParams struct {
	Mode    clockfree.Mode
	Backoff time.Duration // 0 for the backend's default
	Probe   time.Duration
}

// TestURLParams checks that parse, a backend's URL parser, reads the
// shared parameters added to base (a URL of a valid bucket without a
// query) and refuses bad ones with an error matching fence.ErrInvalid
// that shows no password. maxBackoff is the backend's longest backoff.
func TestURLParams(t *testing.T, base string, maxBackoff time.Duration, parse func(*url.URL) (URLParams, error)) {
	t.Helper()
	for _, tc := range []struct {
		query string
		want  URLParams
	}{
		{"", URLParams{}},
		{"trusted-clock=1", URLParams{Mode: clockfree.Mode{TrustedClock: true}}},
		{"trusted-clock=true&max-clock-skew=500ms", URLParams{Mode: clockfree.Mode{TrustedClock: true, MaxClockSkew: 500 * time.Millisecond}}},
		{"backoff=20ms", URLParams{Backoff: 20 * time.Millisecond}},
		{"backoff=" + maxBackoff.String(), URLParams{Backoff: maxBackoff}},
		{"backoff=0s", URLParams{}},
		{"probe-interval=1s", URLParams{Probe: time.Second}},
		{"probe-interval=off", URLParams{Probe: probe.Off}},
	} {
		raw := base + "?" + tc.query
		got, err := parse(ParseURL(t, raw))
		if err != nil || got != tc.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", raw, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"max-clock-skew=2s", "needs trusted-clock"},
		{"trusted-clock=maybe", "not true or false"},
		{"trusted-clock=true&max-clock-skew=2h", "outside the range"},
		{"backoff=", "backoff is empty"},
		{"backoff=20", "not a duration"},
		{"backoff=-1ms", "not a duration"},
		{"backoff=" + (maxBackoff + time.Millisecond).String(), "outside the range 0 to " + maxBackoff.String()},
		{"backoff=1s&backoff=2s", "more than once"},
		{"probe-interval=0s", "below 10ms"},
		{"probe-interval=never", "not a duration"},
		{"table=t", "unknown parameter"},
		{"password=hunter2", "unknown parameter"},
	} {
		raw := base + "?" + tc.query
		_, err := parse(ParseURL(t, raw))
		WantRefused(t, raw, err, tc.want)
	}
}

// WantRefused fails the test unless err, the error of parsing raw,
// matches fence.ErrInvalid and says want, without the password hunter2
// that the tests' URLs use.
func WantRefused(t testing.TB, raw string, err error, want string) {
	t.Helper()
	if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Errorf("parseURL(%q) = %v; want an error matching fence.ErrInvalid that says %q", raw, err, want)
	}
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Errorf("parseURL(%q) = %v, which shows the password", raw, err)
	}
}

// CheckURLError fails the test when err, the error of parsing raw, does
// not match fence.ErrInvalid or shows the password of raw's user
// information or query (one of 3 bytes or more).
func CheckURLError(t testing.TB, raw string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("parseURL(%q) = %v; want an error matching fence.ErrInvalid", raw, err)
	}
	u, perr := url.Parse(raw)
	if perr != nil {
		return
	}
	if pw, ok := u.User.Password(); ok && len(pw) >= 3 && strings.Contains(err.Error(), ":"+pw+"@") {
		t.Fatalf("parseURL(%q) = %v, which shows the password", raw, err)
	}
}

// ParseURL parses raw, failing the test on error.
func ParseURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}
