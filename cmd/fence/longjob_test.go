package main

import (
	"testing"
)

// TestLongJobReleases: a command that runs for three TTLs keeps its lease
// through the renewals, fence exits with its status 0 and releases the
// lease, so a --no-wait run right after gets the key.
func TestLongJobReleases(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		r := fenceRun(t, nil, "run", "--ttl", b.ttl, "--store", store, "long", "--", "sleep", seconds(3*b.minTTL))
		wantCode(t, r, 0)
		if s := inspectJSON(t, store, "long"); s.Held {
			t.Errorf("after a job of three TTLs the key is still held: %+v\nthe run said: %v", s, r)
		}
		wantCode(t, fenceRun(t, nil, "run", "--no-wait", "--ttl", b.ttl, "--store", store, "long", "--", "true"), 0)
	})
}
