package gcs

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestProbeIntervalTooShort: a probe interval under probe.MinInterval is
// refused before anything is sent.
func TestProbeIntervalTooShort(t *testing.T) {
	t.Parallel()
	_, err := New(newClient(t, nil).Bucket("locks"), &Options{ProbeInterval: time.Millisecond})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with ProbeInterval 1ms: %v; want an error matching fence.ErrInvalid", err)
	}
}
