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
