package dynamo

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// errDropped is what faulty returns instead of a response.
var errDropped = errors.New("fence test: response dropped")

// faulty is an http.RoundTripper in front of the emulator that loses the
// answers to chosen operations: it forwards the request (the emulator
// applies it) and then returns an error instead of the response, as a
// connection cut after sending would. With unsent set it returns the error
// without forwarding instead. It also counts the requests per operation.
type faulty struct {
	next   http.RoundTripper
	mu     sync.Mutex
	drop   map[string]int // operation → answers still to lose
	unsent bool
	calls  map[string]int
	all    int // requests ever made
}

func newFaulty(t testing.TB) *faulty {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &faulty{next: tr, drop: map[string]int{}, calls: map[string]int{}}
}

// lose makes the next n requests of op lose their answers.
func (f *faulty) lose(op string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drop[op] = n
	f.calls = map[string]int{}
}

// count returns how many requests of op were made since the last lose.
func (f *faulty) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// total returns the number of requests ever made.
func (f *faulty) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all
}

func (f *faulty) RoundTrip(r *http.Request) (*http.Response, error) {
	op := operation(r)
	f.mu.Lock()
	f.calls[op]++
	f.all++
	lost := f.drop[op] > 0
	if lost {
		f.drop[op]--
	}
	f.mu.Unlock()
	if !lost {
		return f.next.RoundTrip(r)
	}
	if f.unsent {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, errDropped
	}
	resp, err := f.next.RoundTrip(r)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return nil, errDropped
}

// faultyLocker returns a Locker on a fresh table whose UpdateItem answers
// f can lose, and a plain Locker on the same table to check the state.
// sdkRetries is the SDK's attempts per call (1: no retries).
func faultyLocker(t *testing.T, sdkRetries int, unsent bool) (l, check *testLocker, f *faulty) {
	t.Helper()
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	f = newFaulty(t)
	f.unsent = unsent
	client := emulators.DynamoClient(t, f, func(o *dynamodb.Options) { o.RetryMaxAttempts = sdkRetries })
	return newLocker(t, client, table, nil), newLocker(t, plain, table, nil), f
}

// TestLostAnswers loses the answer to a write that the emulator applied.
// With the SDK's retries, the retry's condition fails against the write
// itself; without them, the call fails in transit. Either way the Locker
// reads the item back, finds its own version and reports success: it does
// not guess.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	for _, attempts := range []int{3, 1} {
		name := map[int]string{3: "SDKRetries", 1: "NoSDKRetries"}[attempts]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("Acquire", func(t *testing.T) {
				t.Parallel()
				l, check, f := faultyLocker(t, attempts, false)
				f.lose("UpdateItem", 1)
				lease, err := l.Acquire(t.Context(), "job", MinTTL, nil)
				if err != nil {
					t.Fatalf("Acquire with a lost answer: %v; want the lease it got", err)
				}
				if lease.Token != 1 {
					t.Errorf("Acquire with a lost answer returned token %d; want 1, the token of the first write", lease.Token)
				}
				if n := f.count("UpdateItem"); n != min(attempts, 2) {
					t.Errorf("%d UpdateItem requests; want %d", n, min(attempts, 2))
				}
				wantInfo(t, check, fence.LockInfo{Key: "job", Held: true, Owner: lease.Owner, Token: 1})
			})
			t.Run("Renew", func(t *testing.T) {
				t.Parallel()
				l, check, f := faultyLocker(t, attempts, false)
				lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
				if err != nil {
					t.Fatal(err)
				}
				before := getItem(t, check.d.api.(*dynamodb.Client), check.d.table, "job")
				f.lose("UpdateItem", 1)
				renewed, err := l.Renew(t.Context(), lease)
				if err != nil {
					t.Fatalf("Renew with a lost answer: %v; want the renewed lease", err)
				}
				if renewed.Token != lease.Token || renewed.ValidUntil.Before(lease.ValidUntil) {
					t.Errorf("Renew returned %+v after %+v", renewed, lease)
				}
				after := getItem(t, check.d.api.(*dynamodb.Client), check.d.table, "job")
				if versionOf(t, before) == versionOf(t, after) {
					t.Error("the renewal wrote no new version")
				}
				wantInfo(t, check, fence.LockInfo{Key: "job", Held: true, Owner: lease.Owner, Token: lease.Token})
			})
			t.Run("Release", func(t *testing.T) {
				t.Parallel()
				l, check, f := faultyLocker(t, attempts, false)
				lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
				if err != nil {
					t.Fatal(err)
				}
				f.lose("UpdateItem", 1)
				if err := l.Release(t.Context(), lease); err != nil {
					t.Fatalf("Release with a lost answer: %v; want nil", err)
				}
				wantInfo(t, check, fence.LockInfo{Key: "job", Owner: lease.Owner, Token: lease.Token})
			})
		})
	}
}

// TestUnsentWrites fails writes before they reach the emulator, with the
// SDK's retries off: the Locker reads the item back, does not find its
// version and returns the transport error (not ErrHeld or ErrNotHeld,
// which would be guesses), and the store is unchanged.
func TestUnsentWrites(t *testing.T) {
	t.Parallel()
	l, check, f := faultyLocker(t, 1, true)
	f.lose("UpdateItem", 1)
	_, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	wantTransportError(t, err, "Acquire")
	if f.count("GetItem") != 1 {
		t.Errorf("Acquire read the item %d times after the failure; want 1", f.count("GetItem"))
	}
	wantInfo(t, check, fence.LockInfo{Key: "job"})

	lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.lose("UpdateItem", 1)
	_, err = l.Renew(t.Context(), lease)
	wantTransportError(t, err, "Renew")
	f.lose("UpdateItem", 1)
	wantTransportError(t, l.Release(t.Context(), lease), "Release")
	wantInfo(t, check, fence.LockInfo{Key: "job", Held: true, Owner: lease.Owner, Token: lease.Token})
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release once the transport works: %v", err)
	}
}

// TestDeadlineInFlight ends ctx while the emulator is answering: the
// method returns an error matching context.DeadlineExceeded and reads
// nothing back, although the write was applied.
func TestDeadlineInFlight(t *testing.T) {
	t.Parallel()
	plain := emulators.DynamoClient(t, nil)
	table := newTable(t, plain, nil)
	slow := &slowAnswers{next: newFaulty(t)}
	l := newLocker(t, emulators.DynamoClient(t, slow), table, nil)
	check := newLocker(t, plain, table, nil)
	ctx, cancel := context.WithCancel(t.Context())
	slow.cancel = cancel
	owner := fence.NewOwnerID()
	_, err := l.Acquire(ctx, "job", time.Minute, &fence.AcquireOptions{Owner: owner})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire cancelled in flight returned %v; want an error matching context.Canceled", err)
	}
	wantInfo(t, check, fence.LockInfo{Key: "job", Held: true, Owner: owner, Token: 1})
}

// slowAnswers forwards a request, then cancels the caller's context before
// handing back the answer.
type slowAnswers struct {
	next   http.RoundTripper
	cancel context.CancelFunc
}

func (s *slowAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	s.cancel()
	<-r.Context().Done()
	if err == nil {
		_ = resp.Body.Close()
	}
	return nil, r.Context().Err()
}

func wantTransportError(t *testing.T, err error, call string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s whose request was never sent succeeded", call)
	case errors.Is(err, fence.ErrHeld) || errors.Is(err, fence.ErrNotHeld):
		t.Fatalf("%s whose request was never sent returned %v; want the transport error, not a guess", call, err)
	case !errors.Is(err, errDropped):
		t.Fatalf("%s returned %v; want an error wrapping %v", call, err, errDropped)
	}
}

// wantInfo fails unless Inspect with l returns want (ValidUntil is not
// compared).
func wantInfo(t *testing.T, l *testLocker, want fence.LockInfo) {
	t.Helper()
	got, err := l.Inspect(t.Context(), want.Key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", want.Key, err)
	}
	got.ValidUntil = time.Time{}
	if got != want {
		t.Fatalf("Inspect(%q) = %+v; want %+v", want.Key, got, want)
	}
}
