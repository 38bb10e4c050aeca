package fenceotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// Owner ids act as lease ids on some stores (Azure), and connection errors
// can quote a DSN: neither reaches the logs or the spans, even when a
// store's error text carries them.
func TestLogsNeverCarryOwnerIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	ctx := t.Context()
	s := e.session(t)

	// A busy key whose holder has a chosen owner id.
	holder, err := e.mem.Acquire(ctx, "job", time.Minute, &fence.AcquireOptions{Owner: "worker-secret-owner"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, "job", nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Lock on a busy key: %v", err)
	}
	if err := e.mem.Release(ctx, holder); err != nil {
		t.Fatal(err)
	}

	// An acquisition failing with an error that quotes a DSN.
	e.faults.setAcquire(func(context.Context, string) (fence.Lease, error) {
		return fence.Lease{}, fmt.Errorf("dial postgres://fence:hunter2@db:5432/locks (password=hunter2): %w", errTransient)
	})
	if _, err := s.Lock(ctx, "job", nil); !errors.Is(err, errTransient) {
		t.Fatalf("Lock with a failing store: %v", err)
	}
	e.faults.setAcquire(nil)

	// A renewal refused with an error quoting the owner id, and the
	// release after it.
	e.faults.setRenew(func(_ context.Context, l fence.Lease) error {
		return fmt.Errorf("lease of owner %s: %w", l.Owner, fence.ErrNotHeld)
	})
	j := startJob(t, s, "job")
	e.waitIdle(t)
	e.clk.Advance(interval)
	<-j.ctx.Done()
	if err := j.end(func(context.Context, *fence.Handle) error { return nil }); !errors.Is(err, fence.ErrLeaseLost) {
		t.Fatalf("work: %v, want lease lost", err)
	}

	logs := e.logs.String()
	for _, want := range []string{"fence: lock busy", "fence: acquire failed", "fence: renew failed", "fence: lease lost", "[redacted]"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	secrets := []string{holder.Owner, j.h.Lease().Owner, "hunter2"}
	for _, secret := range secrets {
		if strings.Contains(logs, secret) {
			t.Errorf("logs carry %q:\n%s", secret, logs)
		}
		for _, s := range e.spans.Ended() {
			texts := []string{s.Status().Description}
			for _, ev := range s.Events() {
				for _, kv := range ev.Attributes {
					texts = append(texts, kv.Value.Emit())
				}
			}
			for _, kv := range s.Attributes() {
				texts = append(texts, kv.Value.Emit())
			}
			for _, text := range texts {
				if strings.Contains(text, secret) {
					t.Errorf("span %s carries %q: %q", s.Name(), secret, text)
				}
			}
		}
	}
}

// With no providers the global (no-op) ones are used, and an observed
// locker and resource return their results and errors unchanged.
func TestDefaultsPassThrough(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tel, err := fenceotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	locker := memory.New(nil)
	locker.SetObserver(tel.Observer())
	res := memres.New(nil)
	res.SetObserver(tel.Observer())
	first, err := locker.Acquire(ctx, "k", time.Minute, &fence.AcquireOptions{Owner: "w1"})
	if err != nil || first.Token != 1 || first.Owner != "w1" {
		t.Fatalf("Acquire = %+v, %v", first, err)
	}
	_, err = locker.Acquire(ctx, "k", time.Minute, nil)
	if held, ok := errors.AsType[*fence.HeldError](err); !ok || held.Owner != "w1" || held.Token != 1 {
		t.Fatalf("busy Acquire: %v, want the HeldError of w1", err)
	}
	if info, err := locker.Inspect(ctx, "k"); err != nil || !info.Held || info.Token != 1 {
		t.Fatalf("Inspect = %+v, %v", info, err)
	}
	if err := locker.Break(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Renew(ctx, first); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew after Break: %v, want ErrNotHeld", err)
	}
	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sess.Lock(ctx, "k", nil)
	if err != nil || h.Token() != 2 {
		t.Fatalf("Lock: %v, token %d, want 2", err, h.Token())
	}
	if err := res.Put(ctx, "n", h.Token(), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	err = res.Put(ctx, "n", 1, []byte("old"))
	if stale, ok := errors.AsType[*fence.StaleTokenError](err); !ok || stale.Token != 1 || stale.Highest != 2 {
		t.Fatalf("stale Put: %v, want a StaleTokenError 1 < 2", err)
	}
	if v, tok, err := res.Get(ctx, "n"); err != nil || string(v) != "v" || tok != 2 {
		t.Errorf("Get = %q, %d, %v", v, tok, err)
	}
	if h, err := res.Highest(ctx, "n"); err != nil || h != 2 {
		t.Errorf("Highest = %d, %v", h, err)
	}
	if err := res.Delete(ctx, "n", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := res.Get(ctx, "n"); !errors.Is(err, fence.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
}
