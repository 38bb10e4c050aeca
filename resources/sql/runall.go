package sql

import (
	"context"
	"slices"
	"strings"

	"github.com/fencekit/fence"
)

// RunAll runs fn in one fenced transaction under hs, locks the caller
// holds together (take them with Session.LockAll): the transaction first
// checks and advances the fence row of each handle's key with that
// handle's own token, as Check does, then runs fn, and commits if fn
// returns nil. A transfer between two accounts is the example: each
// account's row is fenced by its own lock's token, and both writes commit
// or roll back together.
//
//	hs, err := sess.LockAll(ctx, []string{"account:alice", "account:bob"}, nil)
//	...
//	err = fences.RunAll(ctx, hs, func(ctx context.Context, tx pgx.Tx) error {
//		... debit alice, credit bob ...
//	})
//
// The fences are checked in key order, whatever the order of hs, so that
// two transactions over overlapping keys queue behind each other's fence
// rows instead of deadlocking. With pgx, BEGIN and every fence go to the
// server in one batch; database/sql sends each fence as a statement of
// its own (two in MySQL).
//
// It is Run for several handles, with Run's results: fn's ctx is
// cancelled when any handle loses its lease, and the transaction then
// rolls back; a stale token on any key (a newer holder of that key has
// passed its fence) rolls the whole transaction back with a
// *fence.StaleTokenError naming that key, and nothing of fn runs; a
// COMMIT whose answer was lost gets a *fence.UnknownOutcomeError naming
// the first key; conflicts run the whole transaction again, fences
// included. hs must hold at least one handle, none nil, with distinct
// keys (fence.ErrInvalid otherwise); a handle lost or released already
// gets its Err and nothing is sent.
func (f *Fences[Tx]) RunAll(ctx context.Context, hs []*fence.Handle, fn func(ctx context.Context, tx Tx) error) error {
	checks, err := f.runAllArgs(hs, fn == nil)
	if err != nil {
		return err
	}
	return underLeases(ctx, hs, checks[0].name, func(work context.Context) error {
		return f.conn.attempt(ctx, work, f.row, checks, 0, fn)
	})
}

// runAllArgs checks the arguments of RunAll and returns the fences to
// pass, in key order.
func (f *Fences[Tx]) runAllArgs(hs []*fence.Handle, nilFn bool) ([]fenceCheck, error) {
	invalid := func(key, field, reason string) error {
		return opError("transaction", key, &fence.InvalidError{Field: field, Reason: reason})
	}
	switch {
	case f == nil:
		return nil, invalid("", "fences", "nil")
	case len(hs) == 0:
		return nil, invalid("", "handles", "none")
	case nilFn:
		return nil, invalid("", "fn", "nil")
	}
	checks := make([]fenceCheck, len(hs))
	for i, h := range hs {
		if h == nil {
			return nil, invalid("", "handles", "a nil handle")
		}
		if err := validWrite(h.Key(), h.Token()); err != nil {
			return nil, opError("transaction", h.Key(), err)
		}
		checks[i] = fenceCheck{h.Key(), h.Token()}
	}
	slices.SortFunc(checks, func(a, b fenceCheck) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(checks); i++ {
		if checks[i].name == checks[i-1].name {
			return nil, invalid(checks[i].name, "handles", "two handles of one key")
		}
	}
	return checks, nil
}
