package guard_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the run if goroutines of package guard, or of the
// sessions under it, outlive the tests: every Run must have released its
// lease, so that the session's keepalive, holding nothing, has stopped,
// by the time it returns.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence", "github.com/fencekit/fence/guard"))
}
