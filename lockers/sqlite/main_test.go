package sqlite_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain runs a contender process of TestProcesses when the test binary
// was started as one, and otherwise fails the package when goroutines
// outlive its tests (a poller left running).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(leakcheck.MainAll(m))
}
