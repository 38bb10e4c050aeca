package resourcetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// Outcome is how a recorded write ended.
type Outcome int

const (
	// Accepted: the resource applied the write (it returned nil).
	Accepted Outcome = iota + 1
	// Rejected: the resource refused the write as stale (an error matching
	// fence.ErrStaleToken) and changed nothing.
	Rejected
	// Unknown: the write failed another way (a timeout, a dropped
	// connection, a cancelled context) and may or may not have been
	// applied.
	Unknown
)

// String returns the outcome in words.
func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Rejected:
		return "rejected"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// OutcomeOf classifies the error a Put or Delete returned: nil is Accepted,
// an error matching fence.ErrStaleToken is Rejected, anything else is
// Unknown.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Accepted
	case errors.Is(err, fence.ErrStaleToken):
		return Rejected
	}
	return Unknown
}

// Op is one write attempt (a Put or a Delete) in a History.
type Op struct {
	// Name is the resource written.
	Name string
	// Token is the token the write carried.
	Token fence.Token
	// Start is read before the call and End after it returned, both from
	// time.Now in this process (so they carry monotonic readings).
	Start, End time.Time
	// Outcome is how the write ended.
	Outcome Outcome
	// Highest is, for a Rejected write, the highest token its
	// *fence.StaleTokenError reported; 0 when it reported none.
	Highest fence.Token
}

// String describes op for a violation report.
func (op Op) String() string {
	s := fmt.Sprintf("write of %q with token %d %s", op.Name, op.Token, op.Outcome)
	if op.Outcome == Rejected && op.Highest != 0 {
		s += fmt.Sprintf(" (highest reported %d)", op.Highest)
	}
	return s
}

// History records write attempts on fenced resources, from any number of
// goroutines, and checks afterwards that the resources behaved as the
// contract says. The zero value is ready to use.
//
// Check assumes the history holds every write made to the names it
// contains, from the first one on. Use fresh names per history.
type History struct {
	mu  sync.Mutex
	ops []Op
}

// Record adds op to the history.
func (h *History) Record(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Write calls write, which must perform one Put or Delete of name carrying
// token, records the attempt with its times and outcome, and returns
// write's error unchanged.
func (h *History) Write(name string, token fence.Token, write func() error) error {
	start := time.Now()
	err := write()
	op := Op{Name: name, Token: token, Start: start, End: time.Now(), Outcome: OutcomeOf(err)}
	if se := (*fence.StaleTokenError)(nil); errors.As(err, &se) {
		op.Highest = se.Highest
	}
	h.Record(op)
	return err
}

// Ops returns a copy of the recorded attempts, in the order recorded.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// MaxAccepted returns the highest token of an accepted write of name; 0 if
// none was accepted.
func (h *History) MaxAccepted(name string) fence.Token {
	var m fence.Token
	for _, op := range h.Ops() {
		if op.Name == name && op.Outcome == Accepted {
			m = max(m, op.Token)
		}
	}
	return m
}

// Check returns nil if the history is one a correct fenced resource could
// produce, and otherwise an error describing each violation:
//
//   - accepted tokens never decrease: when write A was accepted and ended
//     before write B started, and B was accepted too, B's token is at least
//     A's;
//   - a rejection is justified: a write rejected as stale had a token lower
//     than that of some write (accepted, or of unknown outcome) that started
//     before the rejected one ended;
//   - a reported highest is true: when a rejection reported a non-zero
//     highest token, it is greater than the refused token, it was carried
//     by some write that started before the rejected one ended, and it is
//     at least every token accepted by writes that ended before the
//     rejected one started.
//
// Writes of different names are checked independently.
func (h *History) Check() error {
	byName := map[string][]Op{}
	var names []string
	for _, op := range h.Ops() {
		if _, ok := byName[op.Name]; !ok {
			names = append(names, op.Name)
		}
		byName[op.Name] = append(byName[op.Name], op)
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, checkName(byName[name])...)
	}
	if len(errs) == 0 {
		return nil
	}
	const show = 20
	head := fmt.Errorf("resourcetest: history breaks the fencing contract in %d places", len(errs))
	if len(errs) > show {
		errs = append(errs[:show], fmt.Errorf("... and %d more", len(errs)-show))
	}
	return errors.Join(append([]error{head}, errs...)...)
}

// prefixMax holds ops sorted by a time, with the op of the highest token in
// every prefix, so that "the highest token among ops whose time is before
// t" is a binary search.
type prefixMax struct {
	at   []time.Time
	best []Op
}

func newPrefixMax(ops []Op, key func(Op) time.Time) prefixMax {
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b Op) int { return key(a).Compare(key(b)) })
	p := prefixMax{at: make([]time.Time, len(sorted)), best: make([]Op, len(sorted))}
	for i, op := range sorted {
		p.at[i] = key(op)
		p.best[i] = op
		if i > 0 && p.best[i-1].Token > op.Token {
			p.best[i] = p.best[i-1]
		}
	}
	return p
}

// before returns the op with the highest token among those whose time is
// strictly before t, and false if there is none.
func (p prefixMax) before(t time.Time) (Op, bool) {
	n, _ := slices.BinarySearchFunc(p.at, t, func(a, b time.Time) int {
		if a.Before(b) {
			return -1
		}
		return 1 // equal times count as not before
	})
	if n == 0 {
		return Op{}, false
	}
	return p.best[n-1], true
}

func checkName(ops []Op) []error {
	var accepted, maybeApplied []Op
	for _, op := range ops {
		switch op.Outcome {
		case Accepted:
			accepted = append(accepted, op)
			maybeApplied = append(maybeApplied, op)
		case Unknown:
			maybeApplied = append(maybeApplied, op)
		}
	}
	endedBefore := newPrefixMax(accepted, func(op Op) time.Time { return op.End })
	startedBefore := newPrefixMax(maybeApplied, func(op Op) time.Time { return op.Start })
	firstStart := map[fence.Token]time.Time{}
	for _, op := range maybeApplied {
		if s, ok := firstStart[op.Token]; !ok || op.Start.Before(s) {
			firstStart[op.Token] = op.Start
		}
	}
	var errs []error
	for _, op := range ops {
		switch op.Outcome {
		case Accepted:
			if prev, ok := endedBefore.before(op.Start); ok && prev.Token > op.Token {
				errs = append(errs, fmt.Errorf("accepted token decreased: %v after the %v had ended", op, prev))
			}
		case Rejected:
			if w, ok := startedBefore.before(op.End); !ok || w.Token <= op.Token {
				errs = append(errs, fmt.Errorf("unjustified rejection: %v, but no write with a higher token had started before it ended", op))
			}
			if op.Highest == 0 {
				continue
			}
			if op.Highest <= op.Token {
				errs = append(errs, fmt.Errorf("false highest: %v, not higher than the refused token", op))
			} else if s, ok := firstStart[op.Highest]; !ok || !s.Before(op.End) {
				errs = append(errs, fmt.Errorf("false highest: %v, but no write with token %d had started before it ended", op, op.Highest))
			}
			if prev, ok := endedBefore.before(op.Start); ok && prev.Token > op.Highest {
				errs = append(errs, fmt.Errorf("false highest: %v, but the %v had ended before it started", op, prev))
			}
		}
	}
	return errs
}
