package azblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// op names the request kinds the fault tests pick on.
type op string

const (
	opAcquire  op = "acquire"  // lease action acquire
	opRelease  op = "release"  // lease action release
	opRenew    op = "renew"    // lease action renew
	opMetadata op = "metadata" // Set Blob Metadata
	opOther    op = "other"
)

// opOf classifies a request to the blob service.
func opOf(req *http.Request) op {
	switch req.URL.Query().Get("comp") {
	case "lease":
		switch header(req, "x-ms-lease-action") {
		case "acquire":
			return opAcquire
		case "release":
			return opRelease
		case "renew":
			return opRenew
		}
	case "metadata":
		if req.Method == http.MethodPut {
			return opMetadata
		}
	}
	return opOther
}

// header returns the request header name: the SDK sets some headers
// under lower-case keys, which http.Header.Get does not find.
func header(req *http.Request, name string) string {
	for k, v := range req.Header {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// faulty forwards requests to Azurite, except that for the next n
// requests of kind target it either sends the request and then drops the
// answer (the request is applied, the client gets an error), drops the
// request unsent, or runs before first. It is a wrapper around the real emulator: every answer
// the client gets comes from Azurite.
type faulty struct {
	mu      sync.Mutex
	target  op
	n       int
	unsent  bool   // drop the request instead of its answer
	onFault func() // called after each fault, if set
	// before, if set, turns each fault into a call made before the
	// request, which is then forwarded and answered as usual.
	before func(*http.Request)
	faults int        // faults injected
	seen   map[op]int // requests forwarded or dropped, by kind
}

func (f *faulty) arm(target op, n int, unsent bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.target, f.n, f.unsent, f.faults = target, n, unsent, 0
}

func (f *faulty) Do(req *http.Request) (*http.Response, error) {
	kind := opOf(req)
	f.mu.Lock()
	if f.seen == nil {
		f.seen = map[op]int{}
	}
	f.seen[kind]++
	fault := kind == f.target && f.n > 0
	if fault {
		f.n--
		f.faults++
	}
	unsent, onFault, before := f.unsent, f.onFault, f.before
	f.mu.Unlock()
	if fault && before != nil {
		before(req)
		fault = false // the request itself goes through
	}
	if fault && unsent {
		if onFault != nil {
			onFault()
		}
		return nil, fmt.Errorf("faulty: %s request dropped unsent", kind)
	}
	resp, err := http.DefaultClient.Do(req)
	if !fault || err != nil {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if onFault != nil {
		onFault()
	}
	return nil, fmt.Errorf("faulty: the answer to %s (status %d) was lost", kind, resp.StatusCode)
}

func (f *faulty) count(kind op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[kind]
}

// TestLostAnswers checks that Acquire settles a request whose answer was
// lost by asking the store, with the SDK's retries off (Acquire reads the
// blob itself) and on (the SDK repeats the request): the lease is taken
// once, with the next token, and holds.
//
// Gap: Azure may also answer 500 OperationTimedOut ("may or may not have
// succeeded"), which the Locker treats like a lost answer; Azurite never
// sends it, so only the lost answer is tested.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	t.Log("not verifiable on Azurite: 500 OperationTimedOut answers (treated as lost answers, which are tested)")
	for _, retries := range []bool{false, true} {
		for _, target := range []op{opAcquire, opMetadata} {
			t.Run(fmt.Sprintf("%s/retries=%v", target, retries), func(t *testing.T) {
				t.Parallel()
				f := &faulty{}
				l := newLocker(t, azuritetest.NewContainer(t, f, retries), nil)
				k := key(t)
				first := mustAcquire(t, l, k, MinTTL, nil)
				if err := l.Release(t.Context(), first); err != nil {
					t.Fatalf("Release: %v", err)
				}
				f.arm(target, 1, false)
				lease, err := l.Acquire(t.Context(), k, MinTTL, nil)
				if err != nil {
					t.Fatalf("Acquire with the answer to one %s request lost: %v", target, err)
				}
				if f.faults != 1 {
					t.Fatalf("%d faults injected; want 1", f.faults)
				}
				if lease.Token != first.Token+1 {
					t.Fatalf("Acquire returned token %d; want %d", lease.Token, first.Token+1)
				}
				wantHeld(t, plainLocker(t, l), lease)
				if _, err := l.Renew(t.Context(), lease); err != nil {
					t.Fatalf("Renew of the lease: %v", err)
				}
				if err := l.Release(t.Context(), lease); err != nil {
					t.Fatalf("Release of the lease: %v", err)
				}
			})
		}
	}
}

// TestUnsentTokenWrite checks that when the token write never reaches the
// store, Acquire gives up after its attempts, releases the lease it took
// and issues no token: the key is free and the next Acquire gets token 1.
func TestUnsentTokenWrite(t *testing.T) {
	t.Parallel()
	f := &faulty{}
	l := newLocker(t, azuritetest.NewContainer(t, f, false), nil)
	k := key(t)
	f.arm(opMetadata, maxAttempts, true)
	_, err := l.Acquire(t.Context(), k, MinTTL, nil)
	if err == nil || errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire with every token write lost: %v; want an error not matching fence.ErrHeld", err)
	}
	t.Logf("Acquire: %v", err)
	if f.faults != maxAttempts {
		t.Fatalf("%d token writes attempted; want %d", f.faults, maxAttempts)
	}
	if n := f.count(opRelease); n != 1 {
		t.Fatalf("%d release requests; want 1 (the lease taken is given back)", n)
	}
	other := plainLocker(t, l)
	wantFree(t, other, k, "", 0)
	if lease := mustAcquire(t, other, k, MinTTL, nil); lease.Token != 1 {
		t.Fatalf("the next Acquire got token %d; want 1", lease.Token)
	}
}

// TestCancelInFlight checks Acquire when its ctx ends while a request is
// in flight and its answer is lost: the error wraps context.Canceled, the
// lease taken is released with a context of its own, and the key is left
// free, with or without the token written (both are outcomes the
// contract allows); the next Acquire gets a higher token.
func TestCancelInFlight(t *testing.T) {
	t.Parallel()
	for _, target := range []op{opAcquire, opMetadata} {
		t.Run(string(target), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			f := &faulty{onFault: cancel}
			l := newLocker(t, azuritetest.NewContainer(t, f, false), nil)
			k := key(t)
			f.arm(target, 1, false)
			owner := fence.NewOwnerID()
			_, err := l.Acquire(ctx, k, MinTTL, &fence.AcquireOptions{Owner: owner})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Acquire cancelled in flight: %v; want an error matching context.Canceled", err)
			}
			other := plainLocker(t, l)
			info, err := other.Inspect(t.Context(), k)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if info.Held || (info.Token != 0 && info.Owner != owner) {
				t.Fatalf("after a cancelled Acquire, Inspect = %+v; want free, never acquired or last acquired by %q", info, owner)
			}
			if lease := mustAcquire(t, other, k, MinTTL, nil); lease.Token != info.Token+1 {
				t.Fatalf("the next Acquire got token %d; want %d", lease.Token, info.Token+1)
			}
		})
	}
}

// TestLostReleaseAnswer checks a Release whose answer was lost. Without
// the SDK's retries it is ambiguous (an error not matching ErrNotHeld) and
// a retry answers ErrNotHeld; with them, the SDK's repeat finds the lease
// gone and Release answers ErrNotHeld at once. Either way the key is free.
func TestLostReleaseAnswer(t *testing.T) {
	t.Parallel()
	for _, retries := range []bool{false, true} {
		t.Run(fmt.Sprintf("retries=%v", retries), func(t *testing.T) {
			t.Parallel()
			f := &faulty{}
			l := newLocker(t, azuritetest.NewContainer(t, f, retries), nil)
			lease := mustAcquire(t, l, key(t), MinTTL, nil)
			f.arm(opRelease, 1, false)
			err := l.Release(t.Context(), lease)
			if retries {
				if !errors.Is(err, fence.ErrNotHeld) {
					t.Fatalf("Release with its answer lost and retried: %v; want an error matching fence.ErrNotHeld", err)
				}
			} else {
				if err == nil || errors.Is(err, fence.ErrNotHeld) {
					t.Fatalf("Release with its answer lost: %v; want an ambiguous error", err)
				}
				if err := l.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
					t.Fatalf("a retry of the Release: %v; want an error matching fence.ErrNotHeld", err)
				}
			}
			wantFree(t, plainLocker(t, l), lease.Key, lease.Owner, lease.Token)
		})
	}
}

// TestLostRenewAnswer checks that a Renew whose answer was lost and which
// the SDK repeated succeeds: renewing is idempotent.
func TestLostRenewAnswer(t *testing.T) {
	t.Parallel()
	f := &faulty{}
	l := newLocker(t, azuritetest.NewContainer(t, f, true), nil)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	f.arm(opRenew, 1, false)
	renewed, err := l.Renew(t.Context(), lease)
	if err != nil {
		t.Fatalf("Renew with its answer lost and retried: %v", err)
	}
	if f.faults != 1 || f.count(opRenew) != 2 {
		t.Fatalf("%d faults, %d renew requests; want 1 and 2", f.faults, f.count(opRenew))
	}
	wantHeld(t, plainLocker(t, l), renewed)
}

// TestTokenWriteFindsTheBlobChanged checks the token write when the blob
// changed under the lease after it was read: someone holding the lease id
// rewrote the metadata just before the write (the fault transport does it
// with the request's own lease id). With the token unchanged, the write is
// made again on the new ETag; with the token moved, Acquire refuses with
// ErrCorrupt and gives the lease back.
func TestTokenWriteFindsTheBlobChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		token   string
		corrupt bool
	}{
		{"token unchanged", "0", false},
		{"token moved", "5", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &faulty{}
			l := newLocker(t, azuritetest.NewContainer(t, f, false), nil)
			other := plainLocker(t, l)
			k := key(t)
			f.before = func(req *http.Request) {
				meta := metaOf(metaToken, tt.token)
				if tt.token != "0" {
					meta = metaOf(metaToken, tt.token, metaOwner, "someone", metaTTL, "15")
				}
				if err := other.d.setMeta(req.Context(), k, header(req, "x-ms-lease-id"), azcore.ETagAny, meta); err != nil {
					t.Errorf("SetMetadata under the lease: %v", err)
				}
			}
			f.arm(opMetadata, 1, false)
			lease, err := l.Acquire(t.Context(), k, MinTTL, nil)
			if tt.corrupt {
				if !errors.Is(err, fence.ErrCorrupt) {
					t.Fatalf("Acquire with the token moved under its lease: %v; want an error matching fence.ErrCorrupt", err)
				}
				wantFree(t, other, k, "someone", 5)
				return
			}
			if err != nil || lease.Token != 1 {
				t.Fatalf("Acquire with the blob changed under its lease = %+v, %v; want token 1", lease, err)
			}
			if n := f.count(opMetadata); n != 2 {
				t.Fatalf("%d token writes; want 2", n)
			}
			wantHeld(t, other, lease)
		})
	}
}
