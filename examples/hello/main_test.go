package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The program's output: A's late write is refused with its token and
// the highest token the store has seen.
func Example() {
	main()
	// Output:
	// A wrote with token 1
	// B wrote with token 2
	// A's late write: fence/memory: put "report": stale token 1 (highest seen 2)
	// stale: true
}

// TestREADMEShowsTheProgram: the first Go block of the README's "Using it"
// section is this program, byte for byte, so the program a reader copies
// from the README compiles and is the one whose output Example checks.
func TestREADMEShowsTheProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Using it\n")
	if !ok {
		t.Fatal(`README.md has no "## Using it" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		t.Fatal(`README.md's "Using it" section has no Go block`)
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal(`README.md's "Using it" Go block does not end`)
	}
	if block+"\n" != string(program) {
		t.Fatalf("README.md's \"Using it\" program differs from examples/hello/main.go (%s); copy main.go into the README", firstDiff(block+"\n", string(program)))
	}
}

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: README %q, main.go %q", i+1, x, y)
		}
	}
	return "no line differs (line endings?)"
}
