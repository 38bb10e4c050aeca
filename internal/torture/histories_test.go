package torture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestWriteHistories: an illegal history is written out, each of its
// operations on a line of its own, with a drawing beside it; a legal
// run writes nothing.
func TestWriteHistories(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	claim := Read{Worker: 2, Name: "k/0", Start: at(10), End: at(20), Claim: 5, Claimed: Applied}
	stalePut := Attempt{Worker: 1, Seq: 1, Name: "k/0", Token: 4, ReadStart: at(30), Start: at(30), End: at(40), Outcome: Applied}
	read := Read{Worker: 3, Name: "k/0", Start: at(50), End: at(60), Last: stalePut.ID()}

	dir := t.TempDir()
	r := &Result{Pair: "memory/memory", Linear: CheckLinearizable([]Attempt{stalePut}, []Read{claim, read}, time.Second)}
	if r.Linear.Illegal != 1 {
		t.Fatalf("history judged %+v; want 1 illegal", r.Linear)
	}
	paths, err := WriteHistories(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(dir, "memory_memory-fenced-k_0.txt")
	if len(paths) != 2 || paths[0] != txt || paths[1] != strings.TrimSuffix(txt, ".txt")+".html" {
		t.Fatalf("WriteHistories wrote %q; want %s and its .html", paths, txt)
	}
	b, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"2  0.0  10.0  claim token 5: applied",
		"1  20.0  30.0  put " + stalePut.ID() + " token 4: applied",
		"3  40.0  50.0  read: last \"" + stalePut.ID() + "\"",
	}
	if len(lines) != 2+len(want) {
		t.Fatalf("%s:\n%s\nwant 2 header lines and %d operations", txt, b, len(want))
	}
	for i, w := range want {
		if lines[2+i] != w {
			t.Errorf("operation %d: %q; want %q", i, lines[2+i], w)
		}
	}
	if html, err := os.ReadFile(paths[1]); err != nil || !strings.Contains(string(html), "claim token 5") {
		t.Errorf("drawing %s does not show the claim (err %v)", paths[1], err)
	}

	legal := &Result{Pair: "memory/memory", Linear: CheckLinearizable([]Attempt{{Worker: 1, Seq: 1, Name: "k/0", Token: fence.Token(6), ReadStart: at(30), Start: at(30), End: at(40), Outcome: Applied}}, []Read{claim}, time.Second)}
	if paths, err := WriteHistories(t.TempDir(), legal); err != nil || len(paths) != 0 {
		t.Errorf("a legal run wrote %q (err %v); want nothing", paths, err)
	}
}
