package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestInspectShowsPublishedValue: on every store, inspect prints the
// public value the holder published (an election's leader, its address),
// in text and JSON, and nothing once the lease is released.
func TestInspectShowsPublishedValue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		l, err := fence.OpenLocker(t.Context(), store, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		lease, err := l.Acquire(t.Context(), "k", 20*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		const addr = "http://10.0.0.7:8080 \"primary\""
		if err := l.Publish(t.Context(), lease, addr); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		r := fenceRun(t, nil, "inspect", "--store", store, "k")
		wantCode(t, r, 0)
		if !strings.Contains(r.stdout, "value:   \"http://10.0.0.7:8080 \\\"primary\\\"\"\n") {
			t.Errorf("inspect does not print the published value: %v", r)
		}
		r = fenceRun(t, nil, "inspect", "--json", "--store", store, "k")
		wantCode(t, r, 0)
		var s state
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Value != addr {
			t.Errorf("inspect --json: %+v (%v); want value %q", s, err, addr)
		}
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatal(err)
		}
		r = fenceRun(t, nil, "inspect", "--store", store, "k")
		wantCode(t, r, 0)
		if strings.Contains(r.stdout, "value:") {
			t.Errorf("inspect of a released key prints a value: %v", r)
		}
	})
}
