package torture

import (
	"strings"
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

// lease builds a lease of worker w on key "k" with token tok and owner
// owner, its acquisition sent at sent and taken at taken.
func lease(w int, owner string, tok fence.Token, sent, taken int) LeaseTaken {
	return LeaseTaken{Worker: w, Key: "k", Owner: owner, Token: tok, Sent: at(sent), At: at(taken)}
}

func TestCheckLeases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		leases []LeaseTaken
		slack  time.Duration
		kinds  map[string]int
	}{
		{"distinct increasing tokens", []LeaseTaken{lease(1, "a", 1, 0, 5), lease(2, "b", 2, 10, 15), lease(1, "c", 3, 20, 25)}, 0, nil},
		{"a token handed to two owners", []LeaseTaken{lease(1, "a", 1, 0, 5), lease(2, "b", 2, 10, 15), lease(3, "c", 2, 20, 25)}, 0,
			map[string]int{KindTokenReissued: 1}},
		{"one token reissued twice", []LeaseTaken{lease(1, "a", 4, 0, 5), lease(2, "b", 4, 10, 15), lease(3, "c", 4, 20, 25)}, 0,
			map[string]int{KindTokenReissued: 2}},
		{"the same token on two keys", []LeaseTaken{lease(1, "a", 1, 0, 5), {Worker: 2, Key: "j", Owner: "b", Token: 1, Sent: at(10), At: at(15)}}, 0, nil},
		{"a lower new token after a lease taken", []LeaseTaken{lease(1, "a", 5, 0, 5), lease(2, "b", 3, 10, 15)}, 0,
			map[string]int{KindTokenRegressed: 1}},
		{"a lower token whose acquisition was sent first", []LeaseTaken{lease(1, "a", 5, 0, 5), lease(2, "b", 3, 2, 15)}, 0, nil},
		{"a lower token within the clock slack", []LeaseTaken{lease(1, "a", 5, 0, 5), lease(2, "b", 3, 10, 15)}, 20 * time.Millisecond, nil},
		{"a lower reissued token is one reissue", []LeaseTaken{lease(1, "a", 3, 0, 5), lease(2, "b", 5, 10, 15), lease(3, "c", 3, 20, 25)}, 0,
			map[string]int{KindTokenReissued: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]int{}
			vs := CheckLeases(tt.leases, tt.slack)
			for _, v := range vs {
				got[v.Kind]++
				if v.Key != "k" || len(v.Tokens) == 0 {
					t.Errorf("%v: key %q, tokens %v; want the key and tokens", v, v.Key, v.Tokens)
				}
			}
			if len(got) != len(tt.kinds) {
				t.Fatalf("CheckLeases = %v; want kinds %v", vs, tt.kinds)
			}
			for k, n := range tt.kinds {
				if got[k] != n {
					t.Errorf("CheckLeases: %d of %s, want %d (%v)", got[k], k, n, vs)
				}
			}
		})
	}
}

// TestCheckExpected: with a locker whose reissued tokens are expected,
// the reissue and a lost write carrying the reissued token are counted
// apart, while a lost write with another token stays a violation; a
// locker without Expected keeps them all.
func TestCheckExpected(t *testing.T) {
	t.Parallel()
	leases := []LeaseTaken{lease(1, "a", 7, 0, 5), lease(2, "b", 7, 10, 15)}
	lostReissued := op(1, 1, 7, "", 20, 30, 40, Applied)
	lostOther := op(3, 1, 4, "", 20, 30, 40, Applied)
	exp := &Expected{Kinds: []string{KindTokenReissued, KindLost}, Short: "test"}
	for _, tt := range []struct {
		name                 string
		exp                  *Expected
		control              bool
		expected, kept, lost int
	}{
		{"expected", exp, false, 2, 0, 1},
		{"control: the locker's kinds only", exp, true, 1, 0, 2},
		{"not expected", nil, false, 0, 1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Verdict{Violations: CheckLeases(leases, 0), Lost: []Attempt{lostReissued, lostOther}}
			var l Linearizability
			got := splitExpected(tt.exp, tt.control, &v, &l, []Attempt{lostReissued, lostOther})
			if len(got) != tt.expected || len(v.Violations) != tt.kept || len(v.Lost) != tt.lost {
				t.Errorf("expected %v, kept %v, lost %v; want %d, %d, %d", got, v.Violations, v.Lost, tt.expected, tt.kept, tt.lost)
			}
		})
	}
}

// TestCheckExpectedErr: a fenced run of a locker with expected
// violations fails when none showed, passes when they did, and a control
// run is judged on its other violations only.
func TestCheckExpectedErr(t *testing.T) {
	t.Parallel()
	exp := &Expected{Kinds: []string{KindTokenReissued}, Short: "test", Why: "test"}
	shown := []Violation{{Kind: KindTokenReissued, Name: "k"}}
	none := &Result{Pair: "p", Allowed: exp}
	if err := none.Err(); err == nil || !strings.Contains(err.Error(), "did not show the documented hazard") {
		t.Errorf("fenced, none shown: Err = %v; want the hazard not shown", err)
	}
	if err := (&Result{Pair: "p", Allowed: exp, Expected: shown}).Err(); err != nil {
		t.Errorf("fenced, shown: Err = %v; want nil", err)
	}
	ctl := &Result{Pair: "p", Control: true, Allowed: exp, Verdict: Verdict{Violations: []Violation{{Kind: KindStaleAccepted}}}}
	if err := ctl.Err(); err != nil {
		t.Errorf("control with a violation, none expected shown: Err = %v; want nil", err)
	}
}

// TestCheckExpectedTransfers: in a transfer run of a locker whose
// reissued tokens are expected, a balance off its transfers on an account
// where a reissued token wrote is expected, and so is the total then; a
// balance off elsewhere keeps both as violations.
func TestCheckExpectedTransfers(t *testing.T) {
	t.Parallel()
	leases := []LeaseTaken{lease(1, "a", 7, 0, 5), lease(2, "b", 7, 10, 15)}
	exp := &Expected{Kinds: []string{KindTokenReissued, KindLedger, KindNotConserved}, Short: "test"}
	reissuedOn := Violation{Kind: KindLedger, Name: "k", Key: "k", Tokens: []fence.Token{3, 7}}
	otherOn := Violation{Kind: KindLedger, Name: "j", Key: "j", Tokens: []fence.Token{7}}
	total := Violation{Kind: KindNotConserved, Name: "accounts"}
	for _, tt := range []struct {
		name           string
		ledger         []Violation
		expected, kept int
	}{
		{"on the reissued token's key", []Violation{reissuedOn, total}, 3, 0},
		{"on another key too", []Violation{reissuedOn, otherOn, total}, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Verdict{Violations: append(CheckLeases(leases, 0), tt.ledger...)}
			var l Linearizability
			got := splitExpected(exp, false, &v, &l, nil)
			if len(got) != tt.expected || len(v.Violations) != tt.kept {
				t.Errorf("expected %v, kept %v; want %d and %d", got, v.Violations, tt.expected, tt.kept)
			}
		})
	}
}
