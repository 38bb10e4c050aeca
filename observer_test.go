package fence_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// calls records what an Observer's Call sees.
type calls struct {
	mu   sync.Mutex
	seen []string // "op key token -> token err"
}

type ctxKey struct{}

func (c *calls) observer() *fence.Observer {
	return &fence.Observer{Call: func(ctx context.Context, call fence.Call) (context.Context, func(fence.Token, error)) {
		return context.WithValue(ctx, ctxKey{}, call.Op), func(t fence.Token, err error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.seen = append(c.seen, call.Backend+" "+call.Op+" "+call.Key+" "+call.Token.String()+" -> "+t.String()+" "+errName(err))
		}
	}}
}

func (c *calls) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

func errName(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, fence.ErrHeld):
		return "held"
	case errors.Is(err, fence.ErrNotHeld):
		return "not-held"
	case errors.Is(err, fence.ErrStaleToken):
		return "stale"
	case errors.Is(err, fence.ErrNotFound):
		return "not-found"
	}
	return err.Error()
}

// seenCtx is a driver that records the value the Observer put in the
// context of each Acquire.
type seenCtx struct {
	driver.Locker
	mu  sync.Mutex
	got []any
}

func (s *seenCtx) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	s.mu.Lock()
	s.got = append(s.got, ctx.Value(ctxKey{}))
	s.mu.Unlock()
	return s.Locker.Acquire(ctx, key, owner, ttl)
}

// Every store call of a Locker reaches the Observer's Call, in the
// context the call runs with, and its end carries the call's token and
// error; a Session's calls are the Locker's.
func TestObserverCallSeesLockerCalls(t *testing.T) {
	t.Parallel()
	var seen *seenCtx
	l, err := driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker {
		seen = &seenCtx{Locker: d}
		return seen
	})
	if err != nil {
		t.Fatal(err)
	}
	var c calls
	l.SetObserver(c.observer())
	ctx := t.Context()
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("second Acquire: %v; want ErrHeld", err)
	}
	if _, err := l.Renew(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Inspect(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	sess, err := fence.NewSession(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Lock(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"memory acquire k 0 -> 1 ok",
		"memory acquire k 0 -> 0 held",
		"memory renew k 1 -> 1 ok",
		"memory inspect k 0 -> 1 ok",
		"memory release k 1 -> 1 ok",
		"memory break k 0 -> 0 ok",
		"memory acquire s 0 -> 1 ok",
		"memory release s 1 -> 1 ok",
	}
	if got := c.get(); !slices.Equal(got, want) {
		t.Errorf("calls seen:\n%q\nwant:\n%q", got, want)
	}
	if !slices.Equal(seen.got, []any{"acquire", "acquire", "acquire"}) {
		t.Errorf("the driver's Acquire ran with the values %v; want the Observer's context each time", seen.got)
	}
	l.SetObserver(nil)
	if _, err := l.Inspect(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := len(c.get()); n != len(want) {
		t.Errorf("%d calls seen after SetObserver(nil); want %d", n, len(want))
	}
}

// A Resource's calls reach its Observer's Call too.
func TestObserverCallSeesResourceCalls(t *testing.T) {
	t.Parallel()
	r := memres.New(nil)
	var c calls
	r.SetObserver(c.observer())
	ctx := t.Context()
	_ = r.Put(ctx, "n", 2, []byte("v"))
	_ = r.Put(ctx, "n", 1, []byte("old"))
	_, _, _ = r.Get(ctx, "n")
	_, _ = r.Highest(ctx, "n")
	_ = r.Claim(ctx, "n", 3)
	_ = r.Delete(ctx, "n", 3)
	_, _, _ = r.Get(ctx, "n")
	want := []string{
		"memory put n 2 -> 2 ok",
		"memory put n 1 -> 1 stale",
		"memory get n 0 -> 2 ok",
		"memory highest n 0 -> 2 ok",
		"memory claim n 3 -> 3 ok",
		"memory delete n 3 -> 3 ok",
		"memory get n 0 -> 0 not-found",
	}
	if got := c.get(); !slices.Equal(got, want) {
		t.Errorf("calls seen:\n%q\nwant:\n%q", got, want)
	}
}

// As reaches nothing on a backend that offers nothing, and Wrap keeps the
// Info of the driver it wraps.
func TestAsAndInfoOf(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	var anything *int
	if l.As(&anything) {
		t.Error("memory Locker.As gave a value; the memory backend offers none")
	}
	if r := memres.New(nil); r.As(&anything) {
		t.Error("memory Resource.As gave a value; the memory backend offers none")
	}
	info := driver.InfoOf(l)
	if info.Name != "memory" || !info.InProcess || info.MaxOwnerLen != driver.DefaultMaxOwnerLen || l.Name() != "memory" {
		t.Errorf("InfoOf(memory) = %+v, Name %q; want memory, in process, the default owner limit", info, l.Name())
	}
}
