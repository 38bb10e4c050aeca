package nats

import (
	"os"
	"testing"

	"github.com/fencekit/fence/internal/testing/leakcheck"
)

// TestMain fails the package when goroutines of the locker outlive its
// tests: a watch not stopped, a call that never returned.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.MainAll(m))
}
