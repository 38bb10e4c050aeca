package torture

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// at returns a time ms milliseconds after a fixed origin.
func at(ms int) time.Time {
	return time.Unix(1_700_000_000, 0).Add(time.Duration(ms) * time.Millisecond)
}

// op builds an attempt of worker w, sequence seq, on "r" with token tok,
// whose read starts at read and whose write spans [start, end].
func op(w, seq int, tok fence.Token, parent string, read, start, end int, o Outcome) Attempt {
	return Attempt{Worker: w, Seq: seq, Key: "k", Name: "r", Token: tok, Parent: parent,
		ReadStart: at(read), Start: at(start), End: at(end), Outcome: o}
}

func ent(w, seq int, tok fence.Token) Entry { return Entry{Worker: w, Seq: seq, Token: tok} }

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		attempts    []Attempt
		stored      []Entry
		kinds       map[string]int
		lost        int
		overwritten int
	}{
		{
			name: "sequential holders",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 3, 4, 5, Applied),
				op(1, 2, 3, "w2.1", 6, 7, 8, Applied),
			},
			stored: []Entry{ent(1, 1, 1), ent(2, 1, 2), ent(1, 2, 3)},
		},
		{
			name: "stale write refused",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(1, 2, 1, "w1.1", 3, 10, 11, Stale), // paused
				op(2, 1, 2, "w1.1", 4, 5, 6, Applied),
			},
			stored: []Entry{ent(1, 1, 1), ent(2, 1, 2)},
		},
		{
			name: "stale write applied over a newer list",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(1, 2, 1, "w1.1", 3, 10, 11, Applied), // paused, then accepted
				op(2, 1, 2, "w1.1", 4, 5, 6, Applied),
			},
			stored:      []Entry{ent(1, 1, 1), ent(1, 2, 1)},
			kinds:       map[string]int{KindStaleAccepted: 1},
			lost:        1, // w2.1: w1.2 had a lower token
			overwritten: 0,
		},
		{
			name: "stale write appended after a newer entry",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 4, 5, 6, Applied),
				op(1, 2, 1, "w2.1", 10, 11, 12, Applied), // paused before reading
			},
			stored: []Entry{ent(1, 1, 1), ent(2, 1, 2), ent(1, 2, 1)},
			kinds:  map[string]int{KindDecrease: 1, KindStaleAccepted: 1},
		},
		{
			name: "refused write stored",
			attempts: []Attempt{
				op(1, 1, 2, "", 0, 1, 2, Applied),
				op(2, 1, 1, "w1.1", 3, 4, 5, Stale),
			},
			stored: []Entry{ent(1, 1, 2), ent(2, 1, 1)},
			kinds:  map[string]int{KindRejectedPresent: 1, KindDecrease: 1, KindStaleAccepted: 1},
		},
		{
			name: "acknowledged write missing",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(1, 2, 1, "w1.1", 3, 4, 5, Applied),
			},
			stored: []Entry{ent(1, 1, 1)},
			lost:   1,
		},
		{
			name: "stale write landing between a newer holder's read and write",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 3, 8, 9, Applied),    // read at 3, wrote at 8
				op(1, 2, 1, "w1.1", 2, 5, 6, Applied),    // paused holder, landed at 5
				op(3, 1, 3, "w2.1", 10, 11, 12, Applied), // later holder
			},
			stored:      []Entry{ent(1, 1, 1), ent(2, 1, 2), ent(3, 1, 3)},
			overwritten: 1,
		},
		{
			name: "write of unknown outcome stored or not",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Unknown),
				op(1, 2, 1, "w1.1", 3, 4, 5, Unknown),
				op(2, 1, 2, "w1.1", 6, 7, 8, Applied),
			},
			stored: []Entry{ent(1, 1, 1), ent(2, 1, 2)},
		},
		{
			name:     "entry no attempt wrote",
			attempts: []Attempt{op(1, 1, 1, "", 0, 1, 2, Applied)},
			stored:   []Entry{ent(1, 1, 1), ent(9, 9, 1)},
			kinds:    map[string]int{KindPhantom: 1},
		},
		{
			name:     "entry stored twice",
			attempts: []Attempt{op(1, 1, 1, "", 0, 1, 2, Applied)},
			stored:   []Entry{ent(1, 1, 1), ent(1, 1, 1)},
			kinds:    map[string]int{KindPhantom: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := Check(tt.attempts, map[string][]Entry{"r": tt.stored})
			total := 0
			for _, kind := range []string{KindDecrease, KindStaleAccepted, KindRejectedPresent, KindPhantom} {
				total += tt.kinds[kind]
				if got := v.Count(kind); got != tt.kinds[kind] {
					t.Errorf("%s violations = %d; want %d (all: %v)", kind, got, tt.kinds[kind], v.Violations)
				}
			}
			if len(v.Violations) != total {
				t.Errorf("violations = %v; want %d", v.Violations, total)
			}
			if len(v.Lost) != tt.lost {
				t.Errorf("lost = %v; want %d", v.Lost, tt.lost)
			}
			if v.Overwritten != tt.overwritten {
				t.Errorf("overwritten = %d; want %d", v.Overwritten, tt.overwritten)
			}
			if v.Stored != len(tt.stored) {
				t.Errorf("stored = %d; want %d", v.Stored, len(tt.stored))
			}
		})
	}
}

func TestCheckLinearizable(t *testing.T) {
	t.Parallel()
	rd := func(w int, last string, start, end int) Read {
		return Read{Worker: w, Name: "r", Last: last, Start: at(start), End: at(end)}
	}
	tests := []struct {
		name     string
		attempts []Attempt
		reads    []Read
		illegal  int
	}{
		{
			name: "sequential",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 3, 4, 5, Applied),
			},
			reads: []Read{rd(1, "", 0, 1), rd(2, "w1.1", 3, 4), rd(1, "w2.1", 6, 7)},
		},
		{
			name: "stale refusal",
			attempts: []Attempt{
				op(2, 1, 2, "", 0, 1, 2, Applied),
				op(1, 1, 1, "", 0, 3, 4, Stale),
			},
		},
		{
			name: "lower token applied after a higher one",
			attempts: []Attempt{
				op(2, 1, 2, "", 0, 1, 2, Applied),
				op(1, 1, 1, "", 0, 3, 4, Applied),
			},
			illegal: 1,
		},
		{
			name: "refusal with nothing higher",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 0, 3, 4, Stale),
			},
			illegal: 1,
		},
		{
			name: "read of an overwritten value",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Applied),
				op(2, 1, 2, "w1.1", 3, 4, 5, Applied),
			},
			reads:   []Read{rd(3, "w1.1", 6, 7)},
			illegal: 1,
		},
		{
			name: "unknown outcome applied late",
			attempts: []Attempt{
				op(1, 1, 1, "", 0, 1, 2, Unknown),
				op(2, 1, 2, "", 3, 4, 5, Applied),
			},
			reads: []Read{rd(3, "w2.1", 6, 7)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := CheckLinearizable(tt.attempts, tt.reads, 5*time.Second)
			if l.Illegal != tt.illegal || l.TimedOut != 0 || l.Checked != 1 {
				t.Errorf("CheckLinearizable = %+v; want %d illegal of 1", l, tt.illegal)
			}
		})
	}
}
