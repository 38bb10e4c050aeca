package sql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// fenceToken reads, in x, the token of key's fence row (0 when it has
// none).
func (e *lockedEnv) fenceToken(x txn, key string) (fence.Token, error) {
	v, err := x.scalar(`SELECT token FROM "`+e.tables.FenceTable+`" WHERE key = $1`, key)
	if err != nil {
		return 0, err
	}
	n, _ := v.(int64)
	return fence.Token(n), nil
}

// TestRunAllCommits: under locks taken together, the transaction passes
// each key's fence with that key's own token before fn runs, and commits.
func TestRunAllCommits(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		sess := e.session(t, time.Minute)
		// Two tokens apart: bob's key has been taken once before.
		h, err := sess.Lock(ctx, "account:bob", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
		hs, err := sess.LockAll(ctx, []string{"account:bob", "account:alice"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, h := range hs {
				_ = h.Release(context.WithoutCancel(ctx))
			}
		}()
		err = e.runAll(ctx, hs, func(ctx context.Context, x txn) error {
			for _, h := range hs {
				got, err := e.fenceToken(x, h.Key())
				if err != nil {
					return err
				}
				if got != h.Token() {
					t.Errorf("in the transaction the fence row of %q holds %d; want its handle's token %d", h.Key(), got, h.Token())
				}
			}
			return e.credit(25)(ctx, x)
		})
		if err != nil {
			t.Fatal(err)
		}
		e.wantBalance(t, 25)
	})
}

// TestRunAllStaleKey: when a newer holder of one key has passed its
// fence, the transaction under the older handles is refused as a whole:
// a stale token naming that key, fn not run, and the other key's fence
// row not advanced.
func TestRunAllStaleKey(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		// A minute's lease: the session renews after 20 s, so the old
		// handles do not see the break during the test.
		old, err := e.session(t, time.Minute).LockAll(ctx, []string{"account:alice", "account:bob"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.locker.Break(ctx, "account:bob"); err != nil {
			t.Fatal(err)
		}
		newer := e.session(t, time.Minute)
		if err := e.locked(ctx, e.run, newer, "account:bob", func(context.Context, txn) error { return nil }, nil, nil); err != nil {
			t.Fatal(err)
		}
		ran := false
		err = e.runAll(ctx, old, func(ctx context.Context, x txn) error {
			ran = true
			return e.credit(25)(ctx, x)
		})
		var stale *fence.StaleTokenError
		if !errors.As(err, &stale) || stale.Key != "account:bob" {
			t.Fatalf("RunAll under a stale handle of bob: %v; want a *fence.StaleTokenError on account:bob", err)
		}
		if ran {
			t.Error("fn ran although a fence refused the transaction")
		}
		e.wantBalance(t, 0)
		err = e.run(ctx, old[0], func(ctx context.Context, x txn) error {
			got, err := e.fenceToken(x, "account:alice")
			if err == nil && got != old[0].Token() {
				t.Errorf("alice's fence row holds %d after the refused transaction; want %d, written by this check only", got, old[0].Token())
			}
			return err
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunAllInvalid: no handle, a nil handle, two handles of one key or a
// nil fn get fence.ErrInvalid and nothing runs.
func TestRunAllInvalid(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		h, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		noop := func(context.Context, txn) error { return nil }
		for name, hs := range map[string][]*fence.Handle{"none": nil, "nil": {h, nil}, "twice": {h, h}} {
			if err := e.runAll(ctx, hs, noop); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("%s: %v; want fence.ErrInvalid", name, err)
			}
		}
		if err := e.runAll(ctx, []*fence.Handle{h}, nil); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("nil fn: %v; want fence.ErrInvalid", err)
		}
	})
}

// TestRunAllLostHandle: a handle whose lease is lost already gets its
// Err, matching fence.ErrLeaseLost, and nothing is sent.
func TestRunAllLostHandle(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		hs, err := e.session(t, time.Minute).LockAll(ctx, []string{"account:alice", "account:bob"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := hs[1].Release(ctx); err != nil {
			t.Fatal(err)
		}
		ran := false
		err = e.runAll(ctx, hs, func(context.Context, txn) error { ran = true; return nil })
		if !errors.Is(err, fence.ErrReleased) || ran {
			t.Fatalf("RunAll with a released handle: %v (fn ran: %v); want fence.ErrReleased and nothing run", err, ran)
		}
	})
}
