package azblob

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// parallel is how many cases run at once unless -test.parallel is given.
// The conformance suite runs its cases in parallel and about twenty of
// them wait for a real 15 s Azure lease to run out; with Go's default
// (GOMAXPROCS, 2 on the project's machines) they would wait one or two at
// a time, for minutes. They wait on the clock, not the CPU.
const parallel = 64

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", fmt.Sprint(parallel)); err != nil {
			fmt.Fprintln(os.Stderr, "setting -test.parallel:", err)
			os.Exit(2)
		}
	}
	// A probe must not outlive the wait it served.
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/internal/probe"))
}
