package torture

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// Transport is an http.RoundTripper that injects network faults between an
// SDK and its store, and counts them: it delays requests, fails some
// before sending them, and throws away the answer to others after the store
// answered (so the client cannot know that the request was applied). It
// can also fail every request for a while (Outage). Safe for concurrent
// use.
type Transport struct {
	next   http.RoundTripper
	faults NetFaults
	counts *Counts

	mu    sync.Mutex
	until time.Time // end of the current outage
}

// NewTransport returns a Transport in front of next (a clone of
// http.DefaultTransport when nil) that injects faults and counts them in
// counts.
func NewTransport(next http.RoundTripper, faults NetFaults, counts *Counts) *Transport {
	if next == nil {
		next = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Transport{next: next, faults: faults, counts: counts}
}

// connReset is the error of a request that failed on the network; SDKs
// treat it as retryable, as they would a real reset.
func connReset(op string) error {
	return &net.OpError{Op: op, Net: "tcp", Err: syscall.ECONNRESET}
}

// Outage makes every request fail before sending for d, and closes idle
// connections, as if the path to the store went down and came back.
func (t *Transport) Outage(d time.Duration) {
	t.mu.Lock()
	t.until = time.Now().Add(d)
	t.mu.Unlock()
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	t.counts.Add(FaultOutage)
}

func (t *Transport) down() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Now().Before(t.until)
}

// cleanKey marks a context whose requests pass the Transport untouched.
type cleanKey struct{}

// WithoutFaults returns a context whose HTTP requests the Transport passes
// on without faults or outages. The workload uses it for the run's
// guaranteed long job (acquisition, renewals, writes and release), so that
// a refused release of it can only come from the release itself, not from
// the faults.
func WithoutFaults(ctx context.Context) context.Context {
	return context.WithValue(ctx, cleanKey{}, true)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Value(cleanKey{}) != nil {
		return t.next.RoundTrip(req)
	}
	drop := func() (*http.Response, error) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, connReset("write")
	}
	if t.down() {
		return drop()
	}
	if chance(t.faults.Delay) {
		t.counts.Add(FaultDelay)
		if err := backoff.Sleep(req.Context(), randDuration(t.faults.MaxDelay/10, t.faults.MaxDelay)); err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
	}
	if chance(t.faults.DropRequest) {
		t.counts.Add(FaultDropRequest)
		return drop()
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || !chance(t.faults.DropResponse) {
		return resp, err
	}
	// The store answered: read the whole answer so that the request is
	// complete on its side, then lose it.
	t.counts.Add(FaultDropResponse)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return nil, connReset("read")
}
