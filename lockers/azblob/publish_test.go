package azblob

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// TestPublishRequests: a Publish is two requests (a read and a metadata
// write under the lease); Renew stays one and keeps the value, as does a
// blob's other metadata. Blobs of earlier releases carry no value
// metadata and take a Publish as they are: Azure metadata has no schema.
func TestPublishRequests(t *testing.T) {
	t.Parallel()
	n := &counter{}
	l := newLocker(t, azuritetest.NewContainer(t, n, false), nil)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	if _, err := l.d.c.NewBlobClient(lease.Key).GetProperties(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	before := n.n.Load()
	if err := l.Publish(t.Context(), lease, "10.0.0.7:8080"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := n.n.Load() - before; got != 2 {
		t.Errorf("Publish sent %d requests; want 2", got)
	}
	before = n.n.Load()
	if _, err := l.Renew(t.Context(), lease); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if got := n.n.Load() - before; got != 1 {
		t.Errorf("Renew after a Publish sent %d requests; want 1", got)
	}
	if info, err := l.Inspect(t.Context(), lease.Key); err != nil || info.Value != "10.0.0.7:8080" {
		t.Fatalf("Inspect after Renew = %+v, %v; want the value kept", info, err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	next := mustAcquire(t, l, lease.Key, MinTTL, nil)
	r, err := l.d.read(t.Context(), next.Key, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lookup(r.meta, metaValue); ok {
		t.Errorf("the next Acquire kept the value metadata of an earlier lease: %v", r.meta)
	}
}

// TestPublishKeepsOtherMetadata: metadata that others put on the lock
// blob survives a Publish and its clearing.
func TestPublishKeepsOtherMetadata(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	id := LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)
	r, err := l.d.read(t.Context(), lease.Key, id)
	if err != nil {
		t.Fatal(err)
	}
	r.meta["team"] = ptr("payments")
	if err := l.d.setMeta(t.Context(), lease.Key, id, r.etag, r.meta); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v", ""} {
		if err := l.Publish(t.Context(), lease, v); err != nil {
			t.Fatalf("Publish(%q): %v", v, err)
		}
		r, err := l.d.read(t.Context(), lease.Key, "")
		if err != nil {
			t.Fatal(err)
		}
		if team, _ := lookup(r.meta, "team"); team != "payments" {
			t.Fatalf("after Publish(%q) the blob's metadata is %v; want team=payments kept", v, r.meta)
		}
	}
}

// TestCorruptValueMetadata: value metadata edited by hand. Inspect
// answers with a *fence.CorruptError while the value is the current
// lease's; a broken value of an earlier lease is not read. Renew and
// Release do not read values, and the next Publish writes a good one.
func TestCorruptValueMetadata(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	for _, tc := range []struct {
		name    string
		corrupt bool
		edit    func(meta map[string]*string, token fence.Token)
	}{
		{"value not base64", true, func(m map[string]*string, tok fence.Token) {
			m[metaValueToken], m[metaValue] = ptr(tok.String()), ptr("not base64!")
		}},
		{"value over the limit", true, func(m map[string]*string, tok fence.Token) {
			m[metaValueToken] = ptr(tok.String())
			m[metaValue] = ptr(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", fence.MaxValueLen+1))))
		}},
		{"value missing", true, func(m map[string]*string, tok fence.Token) { m[metaValueToken] = ptr(tok.String()) }},
		{"value token not a token", true, func(m map[string]*string, _ fence.Token) {
			m[metaValueToken], m[metaValue] = ptr("seven"), ptr("eA==")
		}},
		{"a broken value of an earlier lease", false, func(m map[string]*string, tok fence.Token) {
			m[metaValueToken], m[metaValue] = ptr((tok - 1).String()), ptr("not base64!")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := key(t)
			release(t, l, mustAcquire(t, l, k, MinTTL, nil)) // token 1 before
			lease := mustAcquire(t, l, k, MinTTL, nil)
			id := LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)
			r, err := l.d.read(t.Context(), k, id)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(r.meta, lease.Token)
			if err := l.d.setMeta(t.Context(), k, id, r.etag, r.meta); err != nil {
				t.Fatal(err)
			}
			info, err := l.Inspect(t.Context(), k)
			switch {
			case tc.corrupt:
				if _, ok := errors.AsType[*fence.CorruptError](err); !ok || errors.Is(err, fence.ErrInvalid) {
					t.Fatalf("Inspect: %v; want a *fence.CorruptError that does not match fence.ErrInvalid", err)
				}
			case err != nil || info.Value != "":
				t.Fatalf("Inspect = %+v, %v; want no value and no error", info, err)
			}
			if lease, err = l.Renew(t.Context(), lease); err != nil {
				t.Fatalf("Renew with a broken value: %v", err)
			}
			if err := l.Publish(t.Context(), lease, "good"); err != nil {
				t.Fatalf("Publish over a broken value: %v", err)
			}
			if info, err := l.Inspect(t.Context(), k); err != nil || info.Value != "good" {
				t.Fatalf("Inspect after Publish = %+v, %v", info, err)
			}
			release(t, l, lease)
		})
	}
}

// TestPublishOnAHangingStore: Publish returns once its ctx is done when
// the service accepts the request and never answers.
func TestPublishOnAHangingStore(t *testing.T) {
	t.Parallel()
	// No container is needed: no request is ever answered.
	l := newLocker(t, azuritetest.Client(t, "fence-hang", hang{}, false), nil)
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 1, TTL: MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish on a service that never answers returned %v; want an error wrapping context.DeadlineExceeded", err)
	}
}

// hang accepts every request and never answers it, until its context
// ends.
type hang struct{}

func (hang) Do(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

func release(t *testing.T, l *testLocker, lease fence.Lease) {
	t.Helper()
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// FuzzPublished feeds record.published arbitrary value metadata: it never
// panics, refuses with a *fence.CorruptError only, and what it accepts is
// the current lease's value, decoded.
func FuzzPublished(f *testing.F) {
	f.Add("7", "MTAuMC4wLjc6ODA4MA==", uint64(7), true)
	f.Add("6", "not base64!", uint64(7), true)
	f.Add("seven", "eA==", uint64(7), true)
	f.Add("7", "", uint64(7), false)
	f.Fuzz(func(t *testing.T, valueToken, value string, token uint64, hasValue bool) {
		meta := metaOf(metaValueToken, valueToken)
		if hasValue {
			meta[metaValue] = ptr(value)
		}
		got, err := record{token: fence.Token(token), meta: meta}.published("k")
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("published failed with %v; want a CorruptError that does not match ErrInvalid", err)
			}
			return
		}
		if got == "" {
			return
		}
		raw, derr := base64.StdEncoding.DecodeString(value)
		if tok, perr := fence.ParseToken(valueToken); perr != nil || uint64(tok) != token || derr != nil || string(raw) != got || len(got) > fence.MaxValueLen {
			t.Fatalf("published accepted %q from token %q value %q for lease %d", got, valueToken, value, token)
		}
	})
}
