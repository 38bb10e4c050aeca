package schedule_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if goroutines of packages schedule or guard
// outlive the tests: Run and Attempt must leave nothing running when they
// return.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leftovers(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers returns the stacks of goroutines running code of package
// schedule or guard, after giving goroutines that are finishing a moment
// to exit.
func leftovers() string {
	var leaked string
	for range 200 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		leaked = ""
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "fencekit/fence/schedule.") || strings.Contains(g, "fencekit/fence/guard.") {
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
