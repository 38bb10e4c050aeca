package torture

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencekit/fence"
)

// Violation kinds found by Check.
const (
	// KindDecrease: a stored list holds an entry whose token is lower
	// than that of an entry stored before it.
	KindDecrease = "token-decrease"
	// KindStaleAccepted: a write that is stored, or was acknowledged,
	// carried a token lower than that of a write acknowledged before it
	// began.
	KindStaleAccepted = "stale-accepted"
	// KindRejectedPresent: a write refused as stale is stored.
	KindRejectedPresent = "rejected-present"
	// KindPhantom: a stored entry that no attempt could have written
	// (none recorded, or one that failed before sending), or an entry
	// stored twice.
	KindPhantom = "phantom"
)

// Violation is one way the stored history breaks the fencing contract.
type Violation struct {
	Kind string
	Name string
	// Detail says which writes are involved.
	Detail string
	// Key and Tokens are the lease key and the tokens of the leases or
	// writes involved, where known: a violation that follows a reissued
	// token may be expected (see Expected).
	Key    string
	Tokens []fence.Token
}

func (v Violation) String() string { return fmt.Sprintf("%s on %q: %s", v.Kind, v.Name, v.Detail) }

// Verdict is what Check found.
type Verdict struct {
	// Violations break the fencing contract: 0 in a fenced run.
	Violations []Violation
	// Lost lists writes acknowledged as applied that are missing from
	// the store and that no concurrent holder with a higher token
	// overwrote: 0 in a fenced run.
	Lost []Attempt
	// Overwritten counts acknowledged writes missing from the store that
	// a holder with a higher token overwrote after reading the list
	// before the write had been acknowledged: lost updates of an unfenced
	// read that fencing the write cannot prevent (see Check).
	Overwritten int
	// Stored counts the entries read back.
	Stored int
}

// Count returns how many violations of kind v holds.
func (v Verdict) Count(kind string) int {
	n := 0
	for _, x := range v.Violations {
		if x.Kind == kind {
			n++
		}
	}
	return n
}

// Check judges a run from the lists read back from the resources (stored,
// by resource name; a name missing from it was read back empty) against
// the attempts the workers recorded. It reports:
//
//   - per stored list, entries whose token is lower than an earlier
//     entry's (KindDecrease): a fenced resource applies writes in token
//     order;
//   - writes stored or acknowledged although a write with a higher token
//     on the same resource had been acknowledged before they began
//     (KindStaleAccepted);
//   - writes refused as stale that are stored (KindRejectedPresent);
//   - stored entries that no recorded attempt explains (KindPhantom);
//   - acknowledged writes missing from the store (Lost), except those
//     overwritten by a write X with a higher token whose read began
//     before the missing write was acknowledged and did not include it
//     (Overwritten). Such an X read the list, then the stale holder's
//     write landed (its token still the highest), then X put back the
//     list it had read: the read was not fenced, only the write, and no
//     token check on the write can tell.
func Check(attempts []Attempt, stored map[string][]Entry) Verdict {
	var v Verdict
	byID := make(map[string]Attempt, len(attempts))
	byName := map[string][]Attempt{}
	for _, a := range attempts {
		byID[a.ID()] = a
		byName[a.Name] = append(byName[a.Name], a)
	}
	present := map[string]bool{}
	names := slices.Sorted(maps.Keys(stored))
	for _, name := range names {
		list := stored[name]
		v.Stored += len(list)
		for i, e := range list {
			id := e.ID()
			if present[id] {
				v.Violations = append(v.Violations, Violation{Kind: KindPhantom, Name: name, Detail: fmt.Sprintf("entry %s stored twice", id)})
				continue
			}
			present[id] = true
			if i > 0 && e.Token < list[i-1].Token {
				v.Violations = append(v.Violations, Violation{Kind: KindDecrease, Name: name,
					Detail: fmt.Sprintf("entry %s with token %d stored after %s with token %d", id, e.Token, list[i-1].ID(), list[i-1].Token),
					Key:    byID[id].Key, Tokens: []fence.Token{e.Token, list[i-1].Token}})
			}
			a, ok := byID[id]
			switch {
			case !ok || a.Name != name || a.Token != e.Token:
				v.Violations = append(v.Violations, Violation{Kind: KindPhantom, Name: name, Detail: fmt.Sprintf("entry %s (token %d) matches no attempt", id, e.Token)})
			case a.Outcome == Stale:
				v.Violations = append(v.Violations, Violation{Kind: KindRejectedPresent, Name: name, Detail: fmt.Sprintf("%v is stored", a),
					Key: a.Key, Tokens: []fence.Token{a.Token}})
			case a.Outcome == Failed:
				v.Violations = append(v.Violations, Violation{Kind: KindPhantom, Name: name, Detail: fmt.Sprintf("%v, which failed before sending, is stored", a)})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ops := byName[name]
		v.Violations = append(v.Violations, staleAccepted(name, ops, present)...)
		for _, a := range ops {
			if a.Outcome != Applied || present[a.ID()] {
				continue
			}
			if overwritten(a, ops, byID) {
				v.Overwritten++
			} else {
				v.Lost = append(v.Lost, a)
			}
		}
	}
	return v
}

// staleAccepted finds the writes of one name, stored or acknowledged,
// that began after a write with a higher token had been acknowledged.
func staleAccepted(name string, ops []Attempt, present map[string]bool) []Violation {
	var acked []Attempt
	for _, a := range ops {
		if a.Outcome == Applied {
			acked = append(acked, a)
		}
	}
	sort.Slice(acked, func(i, j int) bool { return acked[i].End.Before(acked[j].End) })
	best := make([]Attempt, len(acked)) // best[i]: highest token among acked[:i+1]
	for i, a := range acked {
		best[i] = a
		if i > 0 && best[i-1].Token > a.Token {
			best[i] = best[i-1]
		}
	}
	var out []Violation
	for _, w := range ops {
		if w.Outcome != Applied && !present[w.ID()] {
			continue
		}
		// acked[:n] ended strictly before w started.
		n := sort.Search(len(acked), func(i int) bool { return !acked[i].End.Before(w.Start) })
		if n > 0 && best[n-1].Token > w.Token {
			how := "acknowledged"
			if present[w.ID()] {
				how = "stored"
			}
			out = append(out, Violation{Kind: KindStaleAccepted, Name: name,
				Detail: fmt.Sprintf("%v is %s, but %v had been acknowledged %v before it began", w, how, best[n-1], w.Start.Sub(best[n-1].End).Round(time.Millisecond)),
				Key:    w.Key, Tokens: []fence.Token{w.Token, best[n-1].Token}})
		}
	}
	return out
}

// overwritten reports whether the missing acknowledged write w was
// overwritten by a write with a higher token that may have been applied,
// whose read began before w was acknowledged and did not include w.
func overwritten(w Attempt, ops []Attempt, byID map[string]Attempt) bool {
	for _, x := range ops {
		if x.Token <= w.Token || (x.Outcome != Applied && x.Outcome != Unknown) || !x.ReadStart.Before(w.End) {
			continue
		}
		if !descends(x, w.ID(), byID) {
			return true
		}
	}
	return false
}

// descends reports whether the list x read included the entry id: whether
// id is on the chain of parents from x.
func descends(x Attempt, id string, byID map[string]Attempt) bool {
	seen := map[string]bool{}
	for p := x.Parent; p != "" && !seen[p]; {
		if p == id {
			return true
		}
		seen[p] = true
		a, ok := byID[p]
		if !ok {
			return false
		}
		p = a.Parent
	}
	return false
}

// Violation kinds of the locker found by CheckLeases, from the leases the
// workers took (Recorder.LeasesTaken).
const (
	// KindTokenReissued: two different leases of a key (different
	// owners) got the same token.
	KindTokenReissued = "token-reissued"
	// KindTokenRegressed: a lease of a key got a token lower than one
	// issued for the key by a lease taken before its acquisition was
	// sent, and the token had not been issued before (a reissued one is
	// KindTokenReissued).
	KindTokenRegressed = "token-regressed"
	// KindLost and KindPorcupine name, among expected violations (see
	// Expected), an acknowledged write lost and a resource whose history
	// porcupine found illegal.
	KindLost      = "acked-lost"
	KindPorcupine = "porcupine"
)

// CheckLeases judges the tokens the locker issued: per key, a token
// handed to two different leases (KindTokenReissued), and a token lower
// than one handed to a lease taken (At) before this lease's acquisition
// was sent (Sent) less slack (KindTokenRegressed). slack covers the
// workers' clock skew, on which Sent is read. A locker whose tokens
// increase with every acquisition shows neither.
func CheckLeases(leases []LeaseTaken, slack time.Duration) []Violation {
	byKey := map[string][]LeaseTaken{}
	for _, l := range leases {
		byKey[l.Key] = append(byKey[l.Key], l)
	}
	var out []Violation
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		ls := byKey[key]
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].At.Before(ls[j].At) })
		first := map[fence.Token]LeaseTaken{} // the first lease of each token
		for i, l := range ls {
			if f, ok := first[l.Token]; ok {
				if f.Owner != l.Owner || f.Worker != l.Worker {
					out = append(out, Violation{Kind: KindTokenReissued, Name: key, Key: key, Tokens: []fence.Token{l.Token},
						Detail: fmt.Sprintf("%v got the token of %v", l, f)})
				}
				continue
			}
			first[l.Token] = l
			// The highest token of a lease taken before l was sent.
			var best *LeaseTaken
			for j := range ls[:i] {
				if p := &ls[j]; p.At.Before(l.Sent.Add(-slack)) && (best == nil || p.Token > best.Token) {
					best = p
				}
			}
			if best != nil && best.Token > l.Token {
				out = append(out, Violation{Kind: KindTokenRegressed, Name: key, Key: key, Tokens: []fence.Token{l.Token, best.Token},
					Detail: fmt.Sprintf("%v is lower than that of %v, taken %v before", l, *best, l.Sent.Sub(best.At).Round(time.Millisecond))})
			}
		}
	}
	return out
}

// reissued returns the set of (key, token) that CheckLeases found handed
// to more than one lease.
func reissued(vs []Violation) map[keyToken]bool {
	m := map[keyToken]bool{}
	for _, v := range vs {
		if v.Kind == KindTokenReissued {
			for _, t := range v.Tokens {
				m[keyToken{v.Key, t}] = true
			}
		}
	}
	return m
}

type keyToken struct {
	key   string
	token fence.Token
}

// splitExpected moves out of v (its violations and lost writes) and l
// (its illegal histories) what exp allows, and returns it as violations
// (lost writes as KindLost, illegal histories as KindPorcupine). The
// locker's kinds (KindTokenReissued, KindTokenRegressed) are expected
// whenever exp names them; the resource's only when a write involved
// carries a token that was reissued on its key: the consequence of the
// locker's allowed fault, not a fault of the resource. A history
// porcupine found illegal is expected when exp names KindPorcupine and a
// write on the resource carries a reissued token. In a control run
// (control true) only the locker's kinds are: there the resource's
// violations are what the run shows of a resource without fencing.
func splitExpected(exp *Expected, control bool, v *Verdict, l *Linearizability, attempts []Attempt) []Violation {
	if exp == nil {
		return nil
	}
	allowed := func(kind string) bool {
		locker := kind == KindTokenReissued || kind == KindTokenRegressed
		return slices.Contains(exp.Kinds, kind) && (locker || !control)
	}
	again := reissued(v.Violations)
	tied := func(key string, tokens []fence.Token) bool {
		for _, t := range tokens {
			if again[keyToken{key, t}] {
				return true
			}
		}
		return false
	}
	var expected, kept []Violation
	for _, x := range v.Violations {
		locker := x.Kind == KindTokenReissued || x.Kind == KindTokenRegressed
		if allowed(x.Kind) && (locker || tied(x.Key, x.Tokens)) {
			expected = append(expected, x)
		} else {
			kept = append(kept, x)
		}
	}
	// The total of a transfer run is off only where some balance is off
	// its transfers: expected when each of those was.
	if allowed(KindNotConserved) && slices.ContainsFunc(expected, func(x Violation) bool { return x.Kind == KindLedger }) &&
		!slices.ContainsFunc(kept, func(x Violation) bool { return x.Kind == KindLedger }) {
		kept = slices.DeleteFunc(kept, func(x Violation) bool {
			if x.Kind == KindNotConserved {
				expected = append(expected, x)
				return true
			}
			return false
		})
	}
	v.Violations = kept
	if allowed(KindLost) {
		var lost []Attempt
		for _, a := range v.Lost {
			if tied(a.Key, []fence.Token{a.Token}) {
				expected = append(expected, Violation{Kind: KindLost, Name: a.Name, Key: a.Key, Tokens: []fence.Token{a.Token},
					Detail: fmt.Sprintf("acknowledged write lost: %v, whose token was reissued", a)})
			} else {
				lost = append(lost, a)
			}
		}
		v.Lost = lost
	}
	if allowed(KindPorcupine) && len(l.IllegalNames) > 0 {
		byName := map[string]bool{}
		for _, a := range attempts {
			if again[keyToken{a.Key, a.Token}] {
				byName[a.Name] = true
			}
		}
		var names []string
		for _, n := range l.IllegalNames {
			if byName[n] {
				expected = append(expected, Violation{Kind: KindPorcupine, Name: n,
					Detail: "no fenced register could produce its history, and a write on it carries a reissued token"})
				l.Illegal--
			} else {
				names = append(names, n)
			}
		}
		l.IllegalNames = names
	}
	return expected
}

// CountKinds is "kind=n ..." for the kinds of vs, in a fixed order.
func CountKinds(vs []Violation) string {
	kinds := map[string]int{}
	for _, v := range vs {
		kinds[v.Kind]++
	}
	var parts []string
	for _, k := range []string{KindTokenReissued, KindTokenRegressed, KindDecrease, KindStaleAccepted, KindRejectedPresent, KindPhantom,
		KindNotConserved, KindNegative, KindLedger, KindLost, KindPorcupine} {
		if kinds[k] > 0 {
			parts = append(parts, k+"="+strconv.Itoa(kinds[k]))
		}
	}
	return strings.Join(parts, " ")
}
