package torture

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
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
				v.Violations = append(v.Violations, Violation{KindPhantom, name, fmt.Sprintf("entry %s stored twice", id)})
				continue
			}
			present[id] = true
			if i > 0 && e.Token < list[i-1].Token {
				v.Violations = append(v.Violations, Violation{KindDecrease, name,
					fmt.Sprintf("entry %s with token %d stored after %s with token %d", id, e.Token, list[i-1].ID(), list[i-1].Token)})
			}
			a, ok := byID[id]
			switch {
			case !ok || a.Name != name || a.Token != e.Token:
				v.Violations = append(v.Violations, Violation{KindPhantom, name, fmt.Sprintf("entry %s (token %d) matches no attempt", id, e.Token)})
			case a.Outcome == Stale:
				v.Violations = append(v.Violations, Violation{KindRejectedPresent, name, fmt.Sprintf("%v is stored", a)})
			case a.Outcome == Failed:
				v.Violations = append(v.Violations, Violation{KindPhantom, name, fmt.Sprintf("%v, which failed before sending, is stored", a)})
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
			out = append(out, Violation{KindStaleAccepted, name,
				fmt.Sprintf("%v is %s, but %v had been acknowledged %v before it began", w, how, best[n-1], w.Start.Sub(best[n-1].End).Round(time.Millisecond))})
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
