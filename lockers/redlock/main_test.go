package redlock_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/leakcheck"
)

// TestMain fails the run when goroutines of the package (a notifier's
// subscriptions, an attempt's fan-out) outlive the tests.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/lockers/redlock"))
}
