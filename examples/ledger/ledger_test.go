package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
)

func play(t *testing.T, cfg config) (failed int, out string) {
	t.Helper()
	var buf bytes.Buffer
	rep, err := run(t.Context(), cfg, &buf)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	failed = rep.print(&buf)
	return failed, buf.String()
}

func defaults() config {
	return config{workers: 4, ttl: 2 * time.Second, pauseTTL: 300 * time.Millisecond}
}

func TestLedgerEmbedded(t *testing.T) {
	t.Parallel()
	failed, out := play(t, defaults())
	if failed != 0 || !strings.Contains(out, "REJECTED: fence/sql: check \"account:alice\": stale token") {
		t.Fatalf("%d invariants failed or no stale write was rejected:\n%s", failed, out)
	}
}

// TestLedgerUnfencedFails is the control: without the token check the
// paused worker's write is accepted and the invariants must catch it.
func TestLedgerUnfencedFails(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.unfenced = true
	failed, out := play(t, cfg)
	for _, want := range []string{
		"FAIL every balance equals",
		"FAIL tokens of applied writes never decrease",
		"FAIL the paused worker's stale write was rejected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("control run did not report %q", want)
		}
	}
	if failed == 0 {
		t.Fatalf("control run passed every invariant:\n%s", out)
	}
}

func TestLedgerPostgres(t *testing.T) {
	// Not parallel with itself: the demo uses fixed table names.
	cfg := defaults()
	cfg.postgres = testenv.PostgresURL(t)
	failed, out := play(t, cfg)
	if failed != 0 {
		t.Fatalf("%d invariants failed:\n%s", failed, out)
	}
}
