package torture

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fencekit/fence"
)

// register is the state of the fenced-register model: the highest token
// applied and the ID of the entry last written ("" before any write).
type register struct {
	highest fence.Token
	last    string
}

// putInput is a write of entry id with token.
type putInput struct {
	token fence.Token
	id    string
}

// getInput is a read.
type getInput struct{}

// claimInput is a claim of the register with token (fence.Resource.Claim);
// its outputs are those of a put.
type claimInput struct{ token fence.Token }

// Outputs of a put in the model.
const (
	putApplied = "applied"
	putStale   = "stale"
	putUnknown = "unknown"
)

// fencedRegister is the model: a put with token t is applied if and only if
// t >= highest, and then highest becomes t and the register holds its
// entry; a refused put changes nothing; a put of unknown outcome may do
// either; a claim is a put that keeps the entry; a read returns the entry
// last written.
var fencedRegister = porcupine.NondeterministicModel{
	Init:              func() []any { return []any{register{}} },
	DescribeOperation: describeOperation,
	DescribeState: func(state any) string {
		s := state.(register)
		return fmt.Sprintf("highest %d, last %q", s.highest, s.last)
	},
	Step: func(state, input, output any) []any {
		s := state.(register)
		switch in := input.(type) {
		case getInput:
			if output.(string) == s.last {
				return []any{s}
			}
			return nil
		case putInput, claimInput:
			var applied register
			switch in := in.(type) {
			case putInput:
				applied = register{highest: in.token, last: in.id}
			case claimInput:
				applied = register{highest: in.token, last: s.last}
			}
			ok := applied.highest >= s.highest
			switch output.(string) {
			case putApplied:
				if ok {
					return []any{applied}
				}
			case putStale:
				if !ok {
					return []any{s}
				}
			case putUnknown:
				if ok {
					return []any{s, applied}
				}
				return []any{s}
			}
		}
		return nil
	},
}

// Linearizability is the porcupine verdict over all resources of a run.
type Linearizability struct {
	// Checked counts the resources checked; Illegal those whose history
	// no fenced register could produce; TimedOut those the checker gave
	// up on.
	Checked, Illegal, TimedOut int
	// IllegalNames lists the first few illegal resources.
	IllegalNames []string

	// illegal holds the operations of the illegal resources, by name,
	// for WriteHistories.
	illegal map[string][]porcupine.Operation
}

// String is "ok", or the counts of illegal and timed-out histories.
func (l Linearizability) String() string {
	switch {
	case l.Illegal > 0 && l.TimedOut > 0:
		return strconv.Itoa(l.Illegal) + " illegal, " + strconv.Itoa(l.TimedOut) + " timeout"
	case l.Illegal > 0:
		return strconv.Itoa(l.Illegal) + " illegal"
	case l.TimedOut > 0:
		return strconv.Itoa(l.TimedOut) + " timeout"
	}
	return "ok"
}

// putOutput returns the model's output of a put or claim that ended with
// outcome at end, and its return time: the end of time for an unknown
// outcome, which may take effect at any time after it began. ok is false
// for one that failed before sending, which is left out.
func putOutput(outcome Outcome, end int64) (out string, ret int64, ok bool) {
	switch outcome {
	case Applied:
		return putApplied, end, true
	case Stale:
		return putStale, end, true
	case Unknown:
		return putUnknown, math.MaxInt64, true
	}
	return "", 0, false
}

// CheckLinearizable checks the recorded reads and writes of each resource
// with porcupine against a fenced register, giving each resource at most
// timeout. A write of unknown outcome may take effect at any time after it
// began, even after the run ended: its return is put at the end of time.
// Writes that failed before sending are left out.
func CheckLinearizable(attempts []Attempt, reads []Read, timeout time.Duration) Linearizability {
	var base time.Time
	for _, a := range attempts {
		if base.IsZero() || a.ReadStart.Before(base) {
			base = a.ReadStart
		}
	}
	for _, r := range reads {
		if base.IsZero() || r.Start.Before(base) {
			base = r.Start
		}
	}
	at := func(t time.Time) int64 { return int64(t.Sub(base)) }
	byName := map[string][]porcupine.Operation{}
	for _, a := range attempts {
		out, ret, ok := putOutput(a.Outcome, at(a.End))
		if !ok {
			continue
		}
		byName[a.Name] = append(byName[a.Name], porcupine.Operation{
			ClientId: a.Worker, Input: putInput{a.Token, a.ID()}, Call: at(a.Start), Output: out, Return: ret,
		})
	}
	for _, r := range reads {
		if r.Claim != 0 {
			out, ret, ok := putOutput(r.Claimed, at(r.End))
			if !ok {
				continue
			}
			byName[r.Name] = append(byName[r.Name], porcupine.Operation{
				ClientId: r.Worker, Input: claimInput{r.Claim}, Call: at(r.Start), Output: out, Return: ret,
			})
			continue
		}
		byName[r.Name] = append(byName[r.Name], porcupine.Operation{
			ClientId: r.Worker, Input: getInput{}, Call: at(r.Start), Output: r.Last, Return: at(r.End),
		})
	}
	model := fencedRegister.ToModel()
	var l Linearizability
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		l.Checked++
		switch porcupine.CheckOperationsTimeout(model, byName[name], timeout) {
		case porcupine.Illegal:
			l.Illegal++
			if len(l.IllegalNames) < 5 {
				l.IllegalNames = append(l.IllegalNames, name)
			}
			if l.illegal == nil {
				l.illegal = map[string][]porcupine.Operation{}
			}
			l.illegal[name] = byName[name]
		case porcupine.Unknown:
			l.TimedOut++
		}
	}
	return l
}
