package gcs

import (
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	good := []struct {
		raw  string
		want config
	}{
		{"gs://ops-locks", config{bucket: "ops-locks"}},
		{"gs://ops-locks/", config{bucket: "ops-locks"}},
		{"gs://ops-locks?prefix=locks/&project=p1", config{bucket: "ops-locks", prefix: "locks/", project: "p1"}},
		{"gs://b_1.example?prefix=", config{bucket: "b_1.example"}},
		{"gs://b00?endpoint=http://127.0.0.1:4443/", config{bucket: "b00", endpoint: "http://127.0.0.1:4443"}},
	}
	for _, tc := range good {
		got, err := parseURL(objlocktest.ParseURL(t, tc.raw))
		tc.want.url = objlocktest.ParseURL(t, tc.raw).Redacted()
		if err != nil || got != tc.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
	bad := []struct{ raw, want string }{
		{"gs://", "no bucket name"},
		{"gs://user:hunter2@b00", "no user or password"},
		{"gs://b00:443", "no port"},
		{"gs://b00/locks", "unexpected path"},
		{"gs://B00", "lower-case letters"},
		{"gs://ab", "3 to 222"},
		{"gs://" + strings.Repeat("b", 223), "3 to 222"},
		{"gs://-b00", "start and end"},
		{"gs://b00?prefix=a&prefix=b", "more than once"},
		{"gs://b00?prefix=a%0Ab", "line feed"},
		{"gs://b00?prefix=" + strings.Repeat("p", MaxObjectNameLen), "no room for a key"},
		{"gs://b00?project=", "project is empty"},
		{"gs://b00?endpoint=ftp://x", "not an http"},
		{"gs://b00?endpoint=http://u:hunter2@x", "user information"},
	}
	for _, tc := range bad {
		_, err := parseURL(objlocktest.ParseURL(t, tc.raw))
		objlocktest.WantRefused(t, tc.raw, err, tc.want)
	}
}

// TestURLParams: the parameters lockers/s3 shares (see
// objlocktest.TestURLParams).
func TestURLParams(t *testing.T) {
	t.Parallel()
	objlocktest.TestURLParams(t, "gs://b00", maxBackoff, func(u *url.URL) (objlocktest.URLParams, error) {
		c, err := parseURL(u)
		return objlocktest.URLParams{Mode: c.mode, Backoff: c.backoff, Probe: c.probe}, err
	})
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"gs://b00", "gs://ops-locks?prefix=locks/&project=p1&endpoint=http://127.0.0.1:1",
		"gs://b00?trusted-clock=true&max-clock-skew=1s", "gs://u:pw@b00", "gs://b00?password=pw",
		"gs://b00?endpoint=http://u:pw@h", "gs://B%41D", "gs://b00?prefix=%0A", "gs://b00?x=%zz",
		"gs://b00?backoff=20ms", "gs://b00?backoff=9s",
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
		case badBucketName(c.bucket) != "":
			t.Fatalf("parseURL(%q) accepted the bucket %q", raw, c.bucket)
		case checkPrefix(c.prefix) != nil:
			t.Fatalf("parseURL(%q) accepted the prefix %q", raw, c.prefix)
		case c.mode.Check() != nil:
			t.Fatalf("parseURL(%q) accepted the mode %+v", raw, c.mode)
		case c.endpoint != "" && !strings.HasPrefix(c.endpoint, "http"):
			t.Fatalf("parseURL(%q) accepted the endpoint %q", raw, c.endpoint)
		case c.backoff < 0 || c.backoff > maxBackoff:
			t.Fatalf("parseURL(%q) accepted the backoff %v", raw, c.backoff)
		}
	})
}

func TestCreateProject(t *testing.T) {
	t.Parallel()
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name   string
		c      config
		getenv func(string) string
		want   string
	}{
		{"from the URL", config{project: "p1"}, env(envProject, "p2"), "p1"},
		{"from the environment", config{}, env(envProject, "p2", envEmulator, "h:1"), "p2"},
		{"on an endpoint", config{endpoint: "http://h:1"}, env(), "emulator"},
		{"on the emulator host", config{}, env(envEmulator, "h:1"), "emulator"},
	} {
		if got, err := tc.c.createProject(tc.getenv); err != nil || got != tc.want {
			t.Errorf("%s: createProject = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := (config{url: "gs://b00"}).createProject(env()); !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), envProject) {
		t.Errorf("createProject without a project = %v; want an ErrInvalid naming %s", err, envProject)
	}
}

// uniqueBucket returns a bucket name no test used, for a bucket the test
// creates; it is removed when the test ends.
func uniqueBucket(t *testing.T) string {
	name := "fence-url-" + strings.ToLower(rand.Text()[:16])
	b := newClient(t, nil).Bucket(name)
	t.Cleanup(func() { removeBucket(t, b) })
	return name
}

// fence.OpenLocker on a gs:// URL, with the SDK finding the emulator
// through STORAGE_EMULATOR_HOST: the bucket is missing until Create makes
// it, then Acquire and Release work. Not parallel: it sets the environment.
func TestOpenLocker(t *testing.T) {
	t.Setenv(envEmulator, testenv.GCSEndpoint(t))
	t.Setenv(envProject, "")
	bucket := uniqueBucket(t)
	ctx := t.Context()
	l, err := fence.OpenLocker(ctx, "gs://"+bucket+"?prefix=locks/", nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if info := driver.InfoOf(l); info.Name != "gcs" || info.MaxKeyLen != MaxObjectNameLen-len("locks/") {
		t.Errorf("driver.InfoOf = %+v; want name gcs and MaxKeyLen %d", info, MaxObjectNameLen-len("locks/"))
	}
	if _, err := l.Acquire(ctx, "k", MinTTL, nil); !errors.Is(err, fence.ErrStoreMissing) || !errors.Is(err, storage.ErrBucketNotExist) {
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
	if g := generation(t, bucket, "locks/k"); g == 0 {
		t.Errorf("no object locks/k after Acquire")
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// fence.OpenLockerWith takes the HTTP client and the Clock the URL cannot
// give, and the URL's endpoint and trusted-clock mode.
func TestOpenLockerWithClientAndClock(t *testing.T) {
	t.Parallel()
	bucket := uniqueBucket(t)
	ctx := t.Context()
	counted := &counter{next: http.DefaultTransport}
	clock := clocktest.New(time.Now().Add(-time.Hour))
	raw := "gs://" + bucket + "?endpoint=" + url.QueryEscape(testenv.GCSEndpoint(t)) + "&trusted-clock=true&max-clock-skew=1s"
	l, err := fence.OpenLocker(ctx, raw, &fence.OpenOptions{HTTPClient: &http.Client{Transport: counted}, Clock: clock})
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	if err := l.Create(ctx); err != nil {
		t.Fatalf("Create: %v", err)
	}
	lease, err := l.Acquire(ctx, "k", MinTTL, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if !lease.ValidUntil.Equal(clock.Now().Add(MinTTL)) {
		t.Errorf("ValidUntil = %v; want the fake clock's now plus TTL, %v", lease.ValidUntil, clock.Now().Add(MinTTL))
	}
	if counted.writes.Load() != 1 {
		t.Errorf("%d uploads went through the given HTTP client; want 1", counted.writes.Load())
	}
	data, err := newClient(t, nil).Bucket(bucket).Object("k").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	var sb strings.Builder
	if _, err := data.WriteTo(&sb); err != nil {
		t.Fatal(err)
	}
	// Trusted-clock mode stores the expiry, on the given clock.
	if want := `"expires_unix_ns":` + strconv.FormatInt(clock.Now().Add(MinTTL).UnixNano(), 10); !strings.Contains(sb.String(), want) {
		t.Errorf("the record %s does not hold %s", sb.String(), want)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// The URL's backoff is the opened locker's Options.Backoff; without one,
// it is DefaultBackoff. Opening makes no request.
func TestOpenLockerURLBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want time.Duration
	}{
		{"gs://b00?backoff=20ms", 20 * time.Millisecond},
		{"gs://b00", DefaultBackoff},
	} {
		l, err := fence.OpenLocker(t.Context(), tc.raw, &fence.OpenOptions{HTTPClient: &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			t.Errorf("unexpected request %s %s", req.Method, req.URL)
			return nil, errors.New("no requests here")
		})}})
		if err != nil {
			t.Fatalf("OpenLocker(%s): %v", tc.raw, err)
		}
		if got := storeOf(t, l).Backoff().First; got != tc.want {
			t.Errorf("OpenLocker(%s): first backoff %v; want %v", tc.raw, got, tc.want)
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// Create without a project, outside an emulator, is refused before any
// request. Not parallel: it clears the environment.
func TestOpenedCreateNeedsAProject(t *testing.T) {
	t.Setenv(envEmulator, "")
	t.Setenv(envProject, "")
	refuse := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL)
		return nil, errors.New("no requests here")
	})
	l, err := fence.OpenLocker(t.Context(), "gs://b00", &fence.OpenOptions{HTTPClient: &http.Client{Transport: refuse}})
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	if err := l.Create(t.Context()); !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), "project") {
		t.Errorf("Create without a project = %v; want an ErrInvalid asking for one", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestAs: As gives the bucket under a Locker, the caller's from New and
// the one the opener made from a URL, and nothing else. It makes no
// request.
func TestAs(t *testing.T) {
	t.Parallel()
	refuse := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL)
		return nil, errors.New("no requests here")
	})
	client, err := storage.NewClient(t.Context(), option.WithHTTPClient(&http.Client{Transport: refuse}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	bucket := client.Bucket("b00")
	l, err := New(bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got *storage.BucketHandle
	if !l.As(&got) || got != bucket {
		t.Errorf("As(**storage.BucketHandle) of New's Locker = %v; want the bucket given to New", got)
	}
	var c *storage.Client
	if l.As(&c) || l.As(nil) || l.As(bucket) {
		t.Error("As succeeded for a target other than **storage.BucketHandle")
	}

	opened, err := fence.OpenLocker(t.Context(), "gs://b01", &fence.OpenOptions{HTTPClient: &http.Client{Transport: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if got = nil; !opened.As(&got) || got == nil || got.BucketName() != "b01" {
		t.Errorf("As(**storage.BucketHandle) of an opened Locker = %v; want the URL's bucket b01", got)
	}
}
