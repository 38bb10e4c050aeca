package torture_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/torture"
)

// TestMain runs a worker process of a run with Config.Processes when the
// test binary was started as one (see torture.WorkerMain).
func TestMain(m *testing.M) {
	torture.WorkerMain()
	os.Exit(m.Run())
}
