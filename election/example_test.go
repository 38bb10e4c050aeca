package election_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/lockers/memory"
)

// Lead until the context ends. The term's token goes with every write the
// leader makes to a protected resource.
func ExampleRun() {
	ctx, cancel := context.WithCancel(context.Background())
	sess, err := fence.NewSession(memory.New(nil), nil) // one per application
	if err != nil {
		panic(err)
	}
	err = election.Run(ctx, sess, "dispatcher", func(ctx context.Context, term *fence.Handle) error {
		fmt.Println("leading with token", term.Token())
		cancel() // shutting down: the term ends and the lease is released
		<-ctx.Done()
		return context.Cause(ctx)
	}, nil)
	fmt.Println("campaign ended:", err)
	// Output:
	// leading with token 1
	// campaign ended: context canceled
}

// Two replicas campaign; the leader steps down and the other takes over
// at once, with a higher token, without waiting for the lease to expire.
// Each replica has its session (here over one in-memory store).
func ExampleCandidate_Resign() {
	ctx, cancel := context.WithCancel(context.Background())
	locker := memory.New(nil)
	var campaigns sync.WaitGroup
	elected := make(chan string) // "name elected with token N", printed in order below
	newCandidate := func(name string) *election.Candidate {
		sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 10 * time.Second})
		if err != nil {
			panic(err)
		}
		c, err := election.New(sess, "dispatcher", &election.Options{
			RetryInterval: 10 * time.Millisecond,
			Holdoff:       time.Hour, // after resigning, leave the key to the others
			Observer: &election.Observer{
				Demoted: func(e election.DemotedEvent) {
					fmt.Printf("%s demoted: %v\n", name, e.Cause)
				},
			},
		})
		if err != nil {
			panic(err)
		}
		campaigns.Go(func() {
			_ = c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
				elected <- fmt.Sprintf("%s elected with token %d", name, term.Token())
				<-ctx.Done()
				return nil
			})
		})
		return c
	}
	a := newCandidate("a")
	fmt.Println(<-elected)
	newCandidate("b")
	fmt.Println("a leads:", a.IsLeader())
	if err := a.Resign(ctx); err != nil {
		panic(err)
	}
	fmt.Println("a leads:", a.IsLeader())
	fmt.Println(<-elected)
	cancel() // shut down: b's term ends too
	campaigns.Wait()
	// Output:
	// a elected with token 1
	// a leads: true
	// a demoted: election: leader resigned
	// a leads: false
	// b elected with token 2
	// b demoted: context canceled
}

// A replica that does not campaign follows the leader and sends its
// requests to the address the leader published with its term. It sees
// the term and the value, never the leader's owner id.
func Example_observe() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	locker := memory.New(nil) // the store every replica shares

	// The follower.
	f, err := election.Observe(ctx, locker, "api-leader", nil)
	if err != nil {
		panic(err)
	}
	route := func(l election.Leader) {
		if l.Term == 0 {
			fmt.Println("no leader: hold requests")
			return
		}
		fmt.Printf("send requests to %s (term %d)\n", l.Value, l.Term)
	}
	route((<-f.Changes()).Leader)

	// A candidate, in another replica, wins and publishes its address.
	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		panic(err)
	}
	c, err := election.New(sess, "api-leader", &election.Options{Value: "10.0.0.7:8080", Holdoff: time.Hour})
	if err != nil {
		panic(err)
	}
	campaign := make(chan error)
	go func() {
		campaign <- c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
			<-ctx.Done()
			return nil
		})
	}()
	for ch := range f.Changes() {
		if ch.Started() || ch.ValueChanged() {
			if ch.Leader.Value == "" {
				continue // the term's value comes right after it
			}
			route(ch.Leader)
			break
		}
	}

	// The leader steps down; the follower learns at once.
	if err := c.Resign(ctx); err != nil {
		panic(err)
	}
	ch := <-f.Changes()
	fmt.Println("term", ch.Previous.Term, "ended:", ch.Ended)
	route(ch.Leader)
	cancel()
	<-campaign
	// Output:
	// no leader: hold requests
	// send requests to 10.0.0.7:8080 (term 1)
	// term 1 ended: released
	// no leader: hold requests
}
