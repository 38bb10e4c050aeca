package schedule_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the run if goroutines of packages schedule or guard, or
// of the sessions under them, outlive the tests: Run and Attempt must
// leave nothing running when they return.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence", "github.com/fencekit/fence/schedule", "github.com/fencekit/fence/guard"))
}
