package s3

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the tests when a probe outlives the wait it served.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/internal/probe"))
}
