package resourcetest_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// at returns the time ms milliseconds after a fixed origin.
func at(ms int) time.Time {
	return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// op is an Op on name "r" from ms start to ms end.
func op(tok fence.Token, start, end int, o resourcetest.Outcome, highest fence.Token) resourcetest.Op {
	return resourcetest.Op{Name: "r", Token: tok, Start: at(start), End: at(end), Outcome: o, Highest: highest}
}

const (
	acc = resourcetest.Accepted
	rej = resourcetest.Rejected
	unk = resourcetest.Unknown
)

func TestHistoryCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		ops  []resourcetest.Op
		// want is a substring of the error; "" means Check must pass.
		want string
	}{
		{"empty", nil, ""},
		{"rising tokens", []resourcetest.Op{op(1, 0, 1, acc, 0), op(2, 2, 3, acc, 0), op(2, 4, 5, acc, 0)}, ""},
		{"justified rejection", []resourcetest.Op{op(5, 0, 1, acc, 0), op(3, 2, 3, rej, 5)}, ""},
		{"rejection with unknown highest", []resourcetest.Op{op(5, 0, 1, acc, 0), op(3, 2, 3, rej, 0)}, ""},
		{"overlapping writes in either order", []resourcetest.Op{op(5, 0, 10, acc, 0), op(3, 1, 9, acc, 0)}, ""},
		{"rejection by an overlapping write", []resourcetest.Op{op(3, 0, 10, rej, 5), op(5, 9, 12, acc, 0)}, ""},
		{"rejection by a write of unknown outcome", []resourcetest.Op{op(5, 0, 1, unk, 0), op(3, 2, 3, rej, 5)}, ""},
		{"unknown outcomes are not ordered", []resourcetest.Op{op(5, 0, 1, unk, 0), op(3, 2, 3, acc, 0)}, ""},
		{"names are independent", []resourcetest.Op{op(5, 0, 1, acc, 0), {Name: "other", Token: 3, Start: at(2), End: at(3), Outcome: acc}}, ""},

		{"accepted token decreased", []resourcetest.Op{op(5, 0, 1, acc, 0), op(3, 2, 3, acc, 0)}, "accepted token decreased"},
		{"decrease after a later write", []resourcetest.Op{op(2, 0, 1, acc, 0), op(7, 2, 3, acc, 0), op(4, 10, 11, acc, 0)}, "accepted token decreased"},
		{"rejection of the highest", []resourcetest.Op{op(5, 0, 1, acc, 0), op(5, 2, 3, rej, 0)}, "unjustified rejection"},
		{"rejection before any write", []resourcetest.Op{op(3, 0, 1, rej, 0), op(5, 2, 3, acc, 0)}, "unjustified rejection"},
		{"highest not above the token", []resourcetest.Op{op(5, 0, 1, acc, 0), op(3, 2, 3, rej, 3)}, "not higher than the refused token"},
		{"highest never written", []resourcetest.Op{op(5, 0, 1, acc, 0), op(3, 2, 3, rej, 9)}, "no write with token 9"},
		{"highest out of date", []resourcetest.Op{op(4, 0, 1, acc, 0), op(6, 2, 3, acc, 0), op(3, 4, 5, rej, 4)}, "had ended before it started"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			var h resourcetest.History
			for _, o := range tc.ops {
				h.Record(o)
			}
			err := h.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check() = %v; want nil", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Check() = nil; want a violation %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Check() = %v; want a violation %q", err, tc.want)
			}
		})
	}
}

func TestHistoryCheckCapsItsReport(t *testing.T) {
	t.Parallel()
	var h resourcetest.History
	for i := range 50 {
		h.Record(op(fence.Token(100-i), 2*i, 2*i+1, acc, 0))
	}
	err := h.Check()
	if err == nil {
		t.Fatal("Check() = nil on 49 decreasing writes")
	}
	if msg := err.Error(); !strings.Contains(msg, "49 places") || !strings.Contains(msg, "and 29 more") || strings.Count(msg, "\n") != 21 {
		t.Errorf("Check() = %v; want a count of 49 and 20 of them shown", msg)
	}
}

func TestHistoryWrite(t *testing.T) {
	t.Parallel()
	stale := &fence.StaleTokenError{Key: "r", Token: 3, Highest: 5}
	broken := errors.New("connection reset")
	var h resourcetest.History
	var wg sync.WaitGroup
	for _, e := range []error{nil, stale, broken} {
		wg.Go(func() {
			if got := h.Write("r", 3, func() error { return e }); got != e {
				t.Errorf("Write returned %v; want the write's error %v unchanged", got, e)
			}
		})
	}
	wg.Wait()
	seen := map[resourcetest.Outcome]resourcetest.Op{}
	for _, o := range h.Ops() {
		seen[o.Outcome] = o
		if o.Name != "r" || o.Token != 3 || o.End.Before(o.Start) {
			t.Errorf("recorded %+v; want name r, token 3, End not before Start", o)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("outcomes recorded: %v; want accepted, rejected and unknown", seen)
	}
	if got := seen[rej].Highest; got != 5 {
		t.Errorf("rejected write recorded Highest %d; want 5 from the StaleTokenError", got)
	}
	if got := h.MaxAccepted("r"); got != 3 {
		t.Errorf("MaxAccepted = %d; want 3", got)
	}
}

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want resourcetest.Outcome
	}{
		{nil, acc},
		{fence.ErrStaleToken, rej},
		{&fence.StaleTokenError{Token: 1, Highest: 2}, rej},
		{errors.Join(errors.New("wrapped"), &fence.StaleTokenError{Token: 1}), rej},
		{errors.New("timeout"), unk},
		{&fence.InvalidError{Field: "name", Reason: "empty"}, unk},
	} {
		if got := resourcetest.OutcomeOf(tc.err); got != tc.want {
			t.Errorf("OutcomeOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
