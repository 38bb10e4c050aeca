package election_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// benchPoll is the PollInterval of both followers of
// BenchmarkFollowerNotice.
const benchPoll = 100 * time.Millisecond

// BenchmarkFollowerNotice measures, on each store of the shared table,
// how late a follower learns of a change: from the leader's Publish call
// (a new term's value) or Release call (the term's end) to the follower
// seeing it. Two followers watch side by side, each on its own Locker:
// Observe (woken by the store's notifications, polling every 100 ms as
// well) and a poller that calls Inspect every 100 ms. Each iteration is
// two changes: a term taken and its value published, then released;
// each change comes after a random pause of up to 100 ms, so that the
// changes do not keep step with the poller.
//
//	go test -run '^$' -bench FollowerNotice -benchtime 25x ./election/
func BenchmarkFollowerNotice(b *testing.B) {
	for _, be := range testlockers.Backends {
		b.Run(be.Name, func(b *testing.B) {
			benchFollowerNotice(b, be)
		})
	}
}

func benchFollowerNotice(b *testing.B, be testlockers.Backend) {
	lockers := be.Lockers(b, 3, nil)
	ttl := max(be.MinTTL, time.Second)
	key := "leader-" + b.Name()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f, err := election.Observe(ctx, lockers[1], key, &election.ObserveOptions{PollInterval: benchPoll})
	if err != nil {
		b.Fatal(err)
	}
	pushed := make(chan sighting, 1024)
	go func() {
		for c := range f.Changes() {
			pushed <- sighting{c.Leader, time.Now()}
		}
	}()
	polled := make(chan sighting, 1024)
	go pollLeader(ctx, lockers[2], key, polled)

	sess, err := fence.NewSession(lockers[0], &fence.SessionOptions{TTL: ttl})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close(context.Background())
	var push, poll []time.Duration
	b.ResetTimer()
	for i := range b.N {
		h, err := sess.Lock(ctx, key, &fence.LockOptions{Wait: ttl * 3})
		if err != nil {
			b.Fatal(err)
		}
		value := fmt.Sprint("10.0.0.1:", 8000+i)
		time.Sleep(rand.N(benchPoll))
		start := time.Now()
		if err := h.Publish(ctx, value); err != nil {
			b.Fatal(err)
		}
		published := func(l election.Leader) bool { return l.Term == h.Token() && l.Value == value }
		push = append(push, waitSighting(b, pushed, published, start))
		poll = append(poll, waitSighting(b, polled, published, start))

		time.Sleep(rand.N(benchPoll))
		start = time.Now()
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
		free := func(l election.Leader) bool { return l.Term == 0 }
		push = append(push, waitSighting(b, pushed, free, start))
		poll = append(poll, waitSighting(b, polled, free, start))
	}
	b.StopTimer()
	pushP50, pushP99 := percentile(push, 50), percentile(push, 99)
	pollP50, pollP99 := percentile(poll, 50), percentile(poll, 99)
	b.ReportMetric(ms(pushP50), "observe-p50-ms")
	b.ReportMetric(ms(pushP99), "observe-p99-ms")
	b.ReportMetric(ms(pollP50), "poll-p50-ms")
	b.ReportMetric(ms(pollP99), "poll-p99-ms")
	if pushP50 > 0 {
		b.ReportMetric(float64(pollP50)/float64(pushP50), "poll/observe-p50")
	}
}

// sighting is a Leader a follower saw, and when.
type sighting struct {
	l  election.Leader
	at time.Time
}

// pollLeader reads key every benchPoll and sends each new state to c,
// until ctx ends: a follower without notifications.
func pollLeader(ctx context.Context, l *fence.Locker, key string, c chan<- sighting) {
	t := time.NewTicker(benchPoll)
	defer t.Stop()
	var last election.Leader
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, _, err := election.CurrentLeader(ctx, l, key)
		if err != nil || cur.Term == last.Term && cur.Value == last.Value {
			continue
		}
		last = cur
		c <- sighting{cur, time.Now()}
	}
}

// waitSighting returns how long after start c reported a Leader that
// satisfies want.
func waitSighting(b *testing.B, c <-chan sighting, want func(election.Leader) bool, start time.Time) time.Duration {
	b.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case s := <-c:
			if want(s.l) {
				return max(s.at.Sub(start), 0)
			}
		case <-timeout:
			b.Fatal("a follower did not see a change within a minute")
		}
	}
}

// percentile returns the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
