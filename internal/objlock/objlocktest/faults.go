package objlocktest

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Fault is what Faults does with one write.
type Fault struct {
	kind      faultKind
	status    int
	code, msg string
}

type faultKind int

const (
	pass faultKind = iota
	refuse
	answerAfter
	drop
	lose
)

var (
	// Pass forwards the write.
	Pass = Fault{}
	// Drop forwards the write, then loses the response: applied, outcome
	// unknown.
	Drop = Fault{kind: drop}
	// Lose fails before forwarding: not applied, outcome unknown.
	Lose = Fault{kind: lose}
	// Throttle answers 429 without forwarding: not applied.
	Throttle = Refuse(http.StatusTooManyRequests, "TooManyRequests", "throttled (injected by the test)")
)

// Refuse answers status with code and msg without forwarding: not
// applied.
func Refuse(status int, code, msg string) Fault {
	return Fault{kind: refuse, status: status, code: code, msg: msg}
}

// AnswerAfter forwards the write, then answers status with code and msg:
// applied, which the answer does not say.
func AnswerAfter(status int, code, msg string) Fault {
	return Fault{kind: answerAfter, status: status, code: code, msg: msg}
}

// Faults answers some writes itself, around the store: each write
// (Harness.IsWrite) first takes a verdict from its plan (nil: pass).
type Faults struct {
	h    Harness
	next http.RoundTripper
	mu   sync.Mutex
	plan func(n int) Fault // n counts writes from 1
	n    int
	// Before, when set, runs before write n is forwarded: another
	// writer's step, so that a race goes a known way. Set it before the
	// Locker sends.
	Before func(n int)
}

// N returns the number of writes seen.
func (f *Faults) N() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// SetPlan replaces the plan and counts writes from 1 again.
func (f *Faults) SetPlan(plan func(n int) Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n, f.plan = 0, plan
}

func (f *Faults) RoundTrip(req *http.Request) (*http.Response, error) {
	if !f.h.IsWrite(req) {
		return f.next.RoundTrip(req)
	}
	f.mu.Lock()
	f.n++
	v := Pass
	if f.plan != nil {
		v = f.plan(f.n)
	}
	n, before := f.n, f.Before
	f.mu.Unlock()
	if before != nil {
		before(n)
	}
	discard := func() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	switch v.kind {
	case refuse:
		discard()
		return f.h.ErrorResponse(req, v.status, v.code, v.msg), nil
	case answerAfter:
		resp, err := f.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return f.h.ErrorResponse(req, v.status, v.code, v.msg), nil
	case drop:
		resp, err := f.next.RoundTrip(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return nil, errors.New("connection reset (response dropped by the test)")
	case lose:
		discard()
		return nil, errors.New("connection reset (request dropped by the test)")
	}
	return f.next.RoundTrip(req)
}

// FaultyLocker returns a Locker on bucket whose writes go through a
// Faults with plan in front of a Counter in front of the store, with
// fast retries when o is nil.
func FaultyLocker(t *testing.T, h Harness, bucket string, plan func(n int) Fault, o *Options) (*Locker, *Faults, *Counter) {
	t.Helper()
	c := &Counter{Next: http.DefaultTransport, IsWrite: h.IsWrite}
	f := &Faults{h: h, next: c, plan: plan}
	if o == nil {
		o = &Options{Backoff: time.Millisecond}
	}
	return h.NewLocker(t, bucket, f, *o), f, c
}

// First returns a plan that gives the first n writes verdict v.
func First(n int, v Fault) func(int) Fault {
	return func(i int) Fault {
		if i <= n {
			return v
		}
		return Pass
	}
}
