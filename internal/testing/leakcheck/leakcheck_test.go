package leakcheck

import (
	"strings"
	"testing"
	"time"
)

// parked blocks until release is closed: a goroutine of this package.
func parked(release <-chan struct{}) { <-release }

// TestRunning checks that running names a goroutine of the given package
// while it runs, ignores it for other packages, and no longer names it
// once it has exited.
func TestRunning(t *testing.T) {
	const self = "github.com/fencekit/fence/internal/testing/leakcheck"
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		parked(release)
	}()
	t.Cleanup(func() { // also when a check below fails
		select {
		case <-release:
		default:
			close(release)
		}
	})

	// The goroutine may not have reached parked yet: look until it has.
	var got string
	for range 200 {
		if got = running([]string{self}); strings.Contains(got, self+".parked") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(got, self+".parked") {
		t.Fatalf("running(%q) does not name the parked goroutine:\n%s", self, got)
	}
	if other := running([]string{"github.com/fencekit/fence/nosuchpackage"}); other != "" {
		t.Errorf("running names goroutines of a package that has none:\n%s", other)
	}

	close(release)
	<-done
	for range 200 {
		if got = running([]string{self}); !strings.Contains(got, self+".parked") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(got, self+".parked") {
		t.Errorf("running still names the goroutine after it exited:\n%s", got)
	}
}
