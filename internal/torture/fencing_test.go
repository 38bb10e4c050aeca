package torture

import (
	"strings"
	"testing"
)

// TestFencedRunFailsOnOverwritten: the workers claim each name before they
// read it, so a fenced run in which a write was overwritten by a holder
// that read before it landed has lost an acknowledged write; a control
// run reports it only.
func TestFencedRunFailsOnOverwritten(t *testing.T) {
	t.Parallel()
	fenced := &Result{Pair: "memory/memory", Verdict: Verdict{Overwritten: 2, Stored: 10}}
	err := fenced.fencingErr()
	if err == nil || !strings.Contains(err.Error(), "2 acknowledged writes overwritten") {
		t.Fatalf("fenced run with 2 overwritten writes: %v; want an error naming them", err)
	}
	if clean := (&Result{Pair: "memory/memory", Verdict: Verdict{Stored: 10}}); clean.fencingErr() != nil {
		t.Fatalf("fenced run without violations: %v; want nil", clean.fencingErr())
	}
	control := &Result{Pair: "memory/memory", Control: true, Verdict: Verdict{Overwritten: 2, Violations: []Violation{{Kind: KindStaleAccepted}}}}
	if err := control.fencingErr(); err != nil {
		t.Fatalf("control run with violations: %v; want nil", err)
	}
}
