package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches and parses the metrics endpoint.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

// value sums the samples (a counter's or gauge's value, a histogram's
// count) of family name whose labels include want.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
	var sum float64
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, true
}

// The workload's metrics are served on the Prometheus endpoint: the test
// scrapes until every kind of event has been seen once, then checks the
// values against each other.
func TestServesFenceMetrics(t *testing.T) {
	t.Parallel()
	const workers = 3
	ctx, cancel := context.WithCancel(t.Context())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	stopped, closing := make(chan struct{}), make(chan struct{})
	cfg := config{addr: "127.0.0.1:0", workers: workers, idle: func() { close(stopped); <-closing }}
	go func() { done <- run(ctx, cfg, func(a string) { addrs <- a }) }()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("run returned before serving: %v", err)
	}
	url := fmt.Sprintf("http://%s/metrics", addr)

	type sample struct {
		name   string
		labels map[string]string
	}
	acquired := sample{"fence_lock_acquire_attempts_total", map[string]string{"fence_outcome": "acquired"}}
	attempts := sample{"fence_lock_acquire_attempts_total", nil}
	busy := sample{"fence_lock_acquire_attempts_total", map[string]string{"fence_outcome": "busy"}}
	acquireLatency := sample{"fence_lock_acquire_duration_seconds", nil}
	holds := sample{"fence_lock_hold_duration_seconds", nil}
	renewed := sample{"fence_lock_renewals_total", map[string]string{"fence_outcome": "renewed"}}
	lost := sample{"fence_lock_lost_total", map[string]string{"fence_reason": "not_held"}}
	held := sample{"fence_lock_held", nil}
	accepted := sample{"fence_resource_writes_total", map[string]string{"fence_backend": "memory", "fence_outcome": "accepted"}}
	stale := sample{"fence_resource_writes_total", map[string]string{"fence_backend": "memory", "fence_outcome": "stale"}}
	duplicates := sample{"fence_resource_duplicates_refused_total", map[string]string{"fence_resource": "ledger"}}
	lockCalls := sample{"fence_lock_operation_duration_seconds", map[string]string{"fence_backend": "memory", "fence_operation": "break", "fence_outcome": "broken"}}

	// Every kind of event happens within a second or so; scrape until
	// all have been seen. The bound is generous: it only keeps a broken
	// workload from hanging the test.
	var fams map[string]*dto.MetricFamily
	get := func(s sample) float64 { v, _ := value(fams, s.name, s.labels); return v }
	giveUp := time.Now().Add(2 * time.Minute)
	for {
		fams = scrape(t, url)
		seen := true
		for _, s := range []sample{acquired, busy, holds, renewed, lost, accepted, stale, duplicates, lockCalls} {
			seen = seen && get(s) > 0
		}
		if seen {
			break
		}
		if time.Now().After(giveUp) {
			t.Fatalf("not every event seen; last scrape:\n%v", fams)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Stop the workload and read the final values: every guarded call
	// has returned, so the counters agree exactly.
	cancel()
	<-stopped
	fams = scrape(t, url)
	close(closing)
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}

	checks := []struct {
		what string
		ok   bool
	}{
		{"acquired attempts < all attempts (some were busy)", get(acquired) < get(attempts)},
		{"one latency sample per acquisition", get(acquireLatency) == get(acquired)},
		{"one hold per acquisition", get(holds) == get(acquired)},
		{"no lease held once the work stopped", get(held) == 0},
		{"every stale write came from a lost lease", get(stale) <= get(lost)},
		{"writes accepted > stale writes", get(accepted) > get(stale)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not so in\n%v", c.what, fams)
		}
	}
	for _, name := range []string{"fence_lock_acquire_duration_seconds", "fence_lock_hold_duration_seconds"} {
		if f := fams[name]; f.GetType() != dto.MetricType_HISTOGRAM || !strings.Contains(f.GetHelp(), " ") {
			t.Errorf("%s: type %v help %q, want a histogram with help", name, f.GetType(), f.GetHelp())
		}
	}
}

// -duration ends the run by itself.
func TestDurationEndsRun(t *testing.T) {
	t.Parallel()
	var addr string
	err := run(t.Context(), config{addr: "127.0.0.1:0", workers: 1, duration: 200 * time.Millisecond}, func(a string) { addr = a })
	if err != nil || addr == "" {
		t.Fatalf("run = %v, addr %q", err, addr)
	}
}

// A bad address is an error, not a hang.
func TestBadAddress(t *testing.T) {
	t.Parallel()
	err := run(t.Context(), config{addr: "127.0.0.1:99999", workers: 1}, func(string) { t.Error("ready called") })
	if err == nil {
		t.Fatal("run on port 99999 succeeded")
	}
}
