package torture

import (
	"strings"
	"testing"
)

// TestWriteSummary: the totals add up the fenced runs and the controls
// apart, and the faults of both.
func TestWriteSummary(t *testing.T) {
	t.Parallel()
	results := []*Result{
		{Pair: "a/b", Writes: 10, Applied: 8, Faults: map[string]int{FaultSigkill: 2}},
		{Pair: "c/d", Writes: 5, Applied: 5, Verdict: Verdict{Violations: []Violation{{Kind: KindStaleAccepted}}, Lost: []Attempt{{}}, Overwritten: 3},
			Linear: Linearizability{Illegal: 2}, Expected: []Violation{{Kind: KindTokenReissued}}, Faults: map[string]int{FaultRestart: 1}},
		{Pair: "a/b", Control: true, Writes: 7, Applied: 7, Verdict: Verdict{Violations: []Violation{{Kind: KindDecrease}, {Kind: KindStaleAccepted}}}, Faults: map[string]int{FaultSigkill: 1}},
		{Pair: "c/d", Control: true, Writes: 4, Applied: 3},
	}
	var b strings.Builder
	if err := WriteSummary(&b, results); err != nil {
		t.Fatal(err)
	}
	want := "fenced:  2 runs, 15 writes (13 applied), 3 violations, 1 acked-lost, 3 overwritten, 2 illegal histories; 1 expected violations, labelled\n" +
		"control: 2 runs, 11 writes (10 applied), 2 violations, 0 acked-lost, 0 overwritten, 0 illegal histories; 1 runs without a violation\n" +
		"faults:  restart=1 sigkill=3\n"
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWaves: the two halves hold every pair once, in order, the lockers
// of Wave 1 in the second.
func TestWaves(t *testing.T) {
	t.Parallel()
	all := Pairs()
	waves := Waves(all)
	if len(waves) != 2 {
		t.Fatalf("%d waves; want 2", len(waves))
	}
	n := 0
	for i, w := range waves {
		for _, p := range w {
			if p.Locker.Wave != i {
				t.Errorf("%s (Wave %d) in wave %d", p.Name(), p.Locker.Wave, i)
			}
			n++
		}
	}
	if n != len(all) {
		t.Errorf("the waves hold %d pairs; want %d", n, len(all))
	}
	if got := Waves(all[:1]); len(got) != 1 || got[0][0].Name() != all[0].Name() {
		t.Errorf("Waves of one pair = %v; want one wave of it", got)
	}
}
