package torture

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/wraptest"
)

// The pausing driver keeps the capabilities of the one it wraps.
func TestPausingPassesCapabilitiesOn(t *testing.T) {
	t.Parallel()
	wraptest.KeepsCapabilities(t, (&pausable{}).wrap)
}
