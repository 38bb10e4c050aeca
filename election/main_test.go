package election_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the run if goroutines of packages election or guard, or
// of the sessions under them, outlive the tests: a Campaign must leave
// nothing running when it returns.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence", "github.com/fencekit/fence/election", "github.com/fencekit/fence/guard"))
}
