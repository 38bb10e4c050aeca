// Package leakcheck fails a package's tests when goroutines outlive them:
// its TestMain passes m to Main (or MainAll) and the result to os.Exit.
package leakcheck

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main runs the tests of m and returns the exit code to pass to os.Exit.
// When the tests passed but a goroutine running code of one of pkgs
// (import paths, such as "github.com/fencekit/fence/guard") is still
// there after about 2 s, it prints the stacks of those goroutines to
// standard error and returns 1. Goroutines that are only finishing get
// those 2 s to exit.
func Main(m *testing.M, pkgs ...string) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	var leaked string
	for range 200 { // up to about 2 s for goroutines that are just exiting
		if leaked = running(pkgs); leaked == "" {
			return code
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "goroutines of %s leaked:\n%s\n", strings.Join(pkgs, ", "), leaked)
	return 1
}

// MainAll is Main for goroutines of any package: when the tests passed
// but there are still more goroutines than before them after 5 s, it
// prints the stacks of all goroutines to standard error and returns 1.
func MainAll(m *testing.M) int {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code != 0 || fuzzing() {
		return code
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "goroutines left after the tests:\n%s\n", strings.TrimSpace(stacks()))
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
	return code
}

// fuzzing reports whether the test binary runs a fuzz target (-test.fuzz):
// the fuzzing engine leaves a goroutine of its own (its signal handler),
// which MainAll would count as a leak.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// running returns the stacks of the goroutines that run code of one of
// pkgs, each followed by a blank line; "" if there are none.
func running(pkgs []string) string {
	var leaked strings.Builder
	for g := range strings.SplitSeq(stacks(), "\n\n") {
		for _, p := range pkgs {
			if strings.Contains(g, p+".") {
				leaked.WriteString(g + "\n\n")
				break
			}
		}
	}
	return leaked.String()
}

// stacks returns the stacks of all goroutines (up to 1 MiB of them).
func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
