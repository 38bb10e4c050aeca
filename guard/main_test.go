package guard_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the run if goroutines started by the guard outlive the
// tests: every Do must have stopped its renewer and store calls by the time
// it returns.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/guard"))
}
