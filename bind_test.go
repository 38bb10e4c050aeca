package fence_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/jackc/pgx/v5"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/testing/testenv"
	memlock "github.com/fencekit/fence/lockers/memory"
	_ "github.com/fencekit/fence/resources/gcs" // gs://
	memres "github.com/fencekit/fence/resources/memory"
	_ "github.com/fencekit/fence/resources/sql" // postgres://
)

func TestBoundName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, name string
		want      string // "" when invalid
	}{
		{"job", "", "job"},
		{"job", "job", "job"},
		{"job", "job/part-1", "job/part-1"},
		{"job", "job/a/b", "job/a/b"},
		{"job", "job//a", "job//a"},
		{"job", "job/.a/..b", "job/.a/..b"},
		{"a/b", "a/b/c", "a/b/c"},
		{"job", "job/", ""},
		{"job", "jobs", ""},
		{"job", "job2/x", ""},
		{"job", "other", ""},
		{"job", "jo", ""},
		{"a/b", "a", ""},
		{"job", "job/..", ""},
		{"job", "job/../other", ""},
		{"job", "job/./x", ""},
		{"job", "job/x/.", ""},
		{"", "x", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		got, err := fence.BoundName(tt.key, tt.name)
		if tt.want == "" {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("BoundName(%q, %q) = %q, %v; want an error matching ErrInvalid", tt.key, tt.name, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("BoundName(%q, %q) = %q, %v; want %q", tt.key, tt.name, got, err, tt.want)
		}
	}
}

// tryLock takes key through s, failing the test when it cannot.
func tryLock(t *testing.T, s *fence.Session, key string) *fence.Handle {
	t.Helper()
	h, err := s.Lock(t.Context(), key, nil)
	if err != nil {
		t.Fatalf("TryLock(%q): %v", key, err)
	}
	return h
}

// bind binds r to h, failing the test on an error.
func bind(t *testing.T, r *fence.Resource, h *fence.Handle, opts *fence.BindOptions) *fence.Bound {
	t.Helper()
	b, err := fence.Bind(r, h, opts)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	return b
}

func TestBindRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := newSession(t, memlock.New(nil), &fence.SessionOptions{TTL: time.Minute})
	h := tryLock(t, s, "job")
	r := memres.New(nil)
	for _, tc := range []struct {
		name string
		r    *fence.Resource
		h    *fence.Handle
		opts *fence.BindOptions
	}{
		{"nil resource", nil, h, nil},
		{"nil handle", r, nil, nil},
		{"another key's name", r, h, &fence.BindOptions{Name: "other"}},
		{"a key sharing the prefix", r, h, &fence.BindOptions{Name: "jobs/x"}},
		{"a name climbing out", r, h, &fence.BindOptions{Name: "job/../other"}},
	} {
		if b, err := fence.Bind(tc.r, tc.h, tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: Bind = %v, %v; want an error matching ErrInvalid", tc.name, b, err)
		}
	}
	b := bind(t, r, h, nil)
	for _, sub := range []string{"", "..", ".", "a/../b"} {
		if got, err := b.Sub(sub); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("Sub(%q) = %v, %v; want an error matching ErrInvalid", sub, got, err)
		}
	}
}

// resourceCase is a resource backend the bound writes are tested on.
type resourceCase struct {
	name string
	open func(t *testing.T) *fence.Resource
}

// resourceCases are the in-memory resource, the SQL resource on the test
// PostgreSQL server and the Cloud Storage resource on fake-gcs-server.
// The real ones skip (or fail under scripts/test.sh) when their server is
// not running.
var resourceCases = []resourceCase{
	{"memory", func(*testing.T) *fence.Resource { return memres.New(nil) }},
	{"postgres", openPostgresResource},
	{"gcs", openGCSResource},
}

// lowerName returns prefix and a random lower-case suffix: a table or
// bucket name no other test run uses.
func lowerName(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:12])
}

// openResource opens rawURL with fence.OpenResource, creates its store and
// closes it when the test ends.
func openResource(t *testing.T, rawURL string) *fence.Resource {
	t.Helper()
	r, err := fence.OpenResource(t.Context(), rawURL, nil)
	if err != nil {
		t.Fatalf("open %s: %v", redact.URL(rawURL), err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if err := r.Create(t.Context()); err != nil {
		t.Fatalf("create %s: %v", redact.URL(rawURL), err)
	}
	return r
}

// openPostgresResource opens resources/sql on tables of their own on the
// test server, dropped when the test ends.
func openPostgresResource(t *testing.T) *fence.Resource {
	base := testenv.PostgresURL(t)
	ft, vt := lowerName("bind_fence_"), lowerName("bind_value_")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	r := openResource(t, base+sep+"fence-table="+ft+"&value-table="+vt)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop tables: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+ft+", "+vt); err != nil {
			t.Logf("drop tables: %v", err)
		}
	})
	return r
}

// openGCSResource opens resources/gcs on a bucket of its own on
// fake-gcs-server, removed when the test ends.
func openGCSResource(t *testing.T) *fence.Resource {
	endpoint := testenv.GCSEndpoint(t)
	bucket := lowerName("fence-bind-")
	r := openResource(t, "gs://"+bucket+"?endpoint="+endpoint)
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := storage.NewClient(ctx, option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
		if err != nil {
			t.Logf("remove bucket: %v", err)
			return
		}
		defer c.Close()
		if err := gcsbucket.Remove(ctx, c.Bucket(bucket)); err != nil {
			t.Logf("remove bucket %s: %v", bucket, err)
		}
	})
	return r
}

// TestBoundWrites: a Bound writes, reads and deletes on the handle's key
// with its token, and names under the key through BindOptions.Name and
// Sub, on every resource case.
func TestBoundWrites(t *testing.T) {
	t.Parallel()
	for _, rc := range resourceCases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			r := rc.open(t)
			s := newSession(t, memlock.New(nil), &fence.SessionOptions{TTL: time.Minute})
			key := lowerName("report-")
			h := tryLock(t, s, key)
			b := bind(t, r, h, nil)
			if b.Name() != key {
				t.Fatalf("Bound has name %q; want %q", b.Name(), key)
			}
			if err := b.Put(ctx, []byte("v1")); err != nil {
				t.Fatal(err)
			}
			wantValue(t, r, key, "v1", h.Token())
			if got, err := b.Highest(ctx); err != nil || got != h.Token() {
				t.Fatalf("Highest = %d, %v; want %d", got, err, h.Token())
			}
			if v, tok, err := b.Get(ctx); err != nil || string(v) != "v1" || tok != h.Token() {
				t.Fatalf("Get = %q, %d, %v; want v1, %d", v, tok, err, h.Token())
			}

			part := bind(t, r, h, &fence.BindOptions{Name: key + "/part-1"})
			if err := part.Put(ctx, []byte("p1")); err != nil {
				t.Fatal(err)
			}
			wantValue(t, r, key+"/part-1", "p1", h.Token())
			sub, err := part.Sub("meta")
			if err != nil {
				t.Fatal(err)
			}
			if sub.Name() != key+"/part-1/meta" {
				t.Fatalf("Sub name = %q; want %q", sub.Name(), key+"/part-1/meta")
			}
			if err := sub.Put(ctx, []byte("m")); err != nil {
				t.Fatal(err)
			}
			wantValue(t, r, key+"/part-1/meta", "m", h.Token())

			if err := b.Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, _, err := r.Get(ctx, key); !errors.Is(err, fence.ErrNotFound) {
				t.Fatalf("Get after Delete: %v; want ErrNotFound", err)
			}
			if got, err := r.Highest(ctx, key); err != nil || got != h.Token() {
				t.Fatalf("Highest after Delete = %d, %v; want %d (the tombstone keeps it)", got, err, h.Token())
			}
		})
	}
}

// wantValue checks that r holds value under name, written with token.
func wantValue(t *testing.T, r *fence.Resource, name, value string, token fence.Token) {
	t.Helper()
	v, tok, err := r.Get(t.Context(), name)
	if err != nil || string(v) != value || tok != token {
		t.Fatalf("Get(%q) = %q, %d, %v; want %q, %d", name, v, tok, err, value, token)
	}
}

// TestBoundStaleHolderRefused: after an operator breaks the lock and a new
// holder writes, the old holder's Bound is refused with both tokens, and
// its write changes nothing; before the new holder writes, the old
// holder's write still goes through (the Bound does not consult the
// handle), which is safe since no newer token was seen.
func TestBoundStaleHolderRefused(t *testing.T) {
	t.Parallel()
	for _, rc := range resourceCases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			r := rc.open(t)
			locker := memlock.New(nil)
			key := lowerName("ledger-")
			old := tryLock(t, newSession(t, locker, &fence.SessionOptions{TTL: time.Minute}), key)
			oldB := bind(t, r, old, nil)
			if err := oldB.Put(ctx, []byte("old-1")); err != nil {
				t.Fatal(err)
			}
			if err := locker.Break(ctx, key); err != nil {
				t.Fatal(err)
			}
			// The old holder has not noticed yet: its write goes to the
			// resource and is applied, no newer token having been seen.
			if err := oldB.Put(ctx, []byte("old-2")); err != nil {
				t.Fatalf("old holder's write before a newer one: %v; want it applied", err)
			}
			cur := tryLock(t, newSession(t, locker, &fence.SessionOptions{TTL: time.Minute}), key)
			if cur.Token() <= old.Token() {
				t.Fatalf("new token %d is not above the broken holder's %d", cur.Token(), old.Token())
			}
			if err := bind(t, r, cur, nil).Put(ctx, []byte("new")); err != nil {
				t.Fatal(err)
			}
			for op, write := range map[string]func() error{
				"Put":    func() error { return oldB.Put(ctx, []byte("old-3")) },
				"Delete": func() error { return oldB.Delete(ctx) },
			} {
				err := write()
				stale, ok := errors.AsType[*fence.StaleTokenError](err)
				if !ok || !errors.Is(err, fence.ErrStaleToken) || stale.Token != old.Token() || stale.Highest != cur.Token() {
					t.Fatalf("old holder's %s: %v; want a *StaleTokenError with token %d and highest %d", op, err, old.Token(), cur.Token())
				}
			}
			wantValue(t, r, key, "new", cur.Token())
		})
	}
}

// TestBoundAfterLossStillWrites: a Bound whose handle was lost (an
// operator broke the lock; the keepalive found out) still sends its write,
// and the resource decides by the token.
func TestBoundAfterLossStillWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	locker := memlock.New(nil)
	r := memres.New(nil)
	s, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	h := tryLock(t, s, "job")
	b := bind(t, r, h, nil)
	if err := locker.Break(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the handle was not lost 10 s after its lock was broken")
	}
	if !errors.Is(h.Err(), fence.ErrLeaseLost) {
		t.Fatalf("Err = %v; want ErrLeaseLost", h.Err())
	}
	if err := b.Put(ctx, []byte("late")); err != nil {
		t.Fatalf("Put after the loss, no newer token seen: %v; want it applied", err)
	}
	wantValue(t, r, "job", "late", h.Token())
}
