package backoff

import (
	"context"
	"testing"
	"time"
)

func TestDelayDoublesWithinJitterAndCap(t *testing.T) {
	t.Parallel()
	p := Policy{First: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 60: time.Second} {
		for range 200 {
			if d := p.Delay(n); d < want/2 || d > want {
				t.Fatalf("Delay(%d) = %v; want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}

func TestConstantWhenMaxIsZero(t *testing.T) {
	t.Parallel()
	p := Policy{First: time.Second}
	for range 200 {
		if d := p.Delay(7); d < time.Second/2 || d > time.Second {
			t.Fatalf("Delay(7) = %v; want within [500ms, 1s] with no Max", d)
		}
	}
}

func TestJitterSpreads(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for range 100 {
		seen[Jitter(time.Second)] = true
	}
	if len(seen) < 50 {
		t.Errorf("100 jittered waits took only %d distinct values", len(seen))
	}
}

func TestSleepHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context = %v; want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep(1ms) = %v", err)
	}
}
