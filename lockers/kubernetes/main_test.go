package kubernetes_test

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the package when goroutines of the locker outlive its
// tests: a release watch not stopped, a call that never returned.
// client-go's own connection pools are not counted.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, "github.com/fencekit/fence/lockers/kubernetes"))
}
