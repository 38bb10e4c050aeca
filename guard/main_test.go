package guard_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if goroutines started by the guard outlive the
// tests: every Do must have stopped its renewer and store calls by the time
// it returns.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := guardGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines of package guard leaked:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// guardGoroutines returns the stacks of goroutines running code of package
// guard, after giving goroutines that are finishing a moment to exit.
func guardGoroutines() string {
	var leaked string
	for range 200 { // up to about 2 s for goroutines that are just exiting
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		leaked = ""
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "fencekit/fence/guard.") {
				leaked += g + "\n\n"
			}
		}
		if leaked == "" {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return leaked
}
