package torture

import (
	"context"
	"sync"
)

// Spec is one run of RunAll: a pair and its configuration.
type Spec struct {
	Pair   Pair
	Config Config
}

// Ran is what one run of RunAll returned.
type Ran struct {
	Result *Result
	Err    error
}

// RunAll runs every spec at once and returns what each returned, in order. All
// set up first (stores, private servers, workers) and then start
// together, so that a private server's start-up (seconds of CPU for a
// ZooKeeper ensemble's JVMs) does not starve runs already going. A spec's
// own Config.SetUp is called when the run is set up, before it waits for
// the others. A run that fails to set up does not hold the others back.
func RunAll(ctx context.Context, specs []Spec) []Ran {
	out := make([]Ran, len(specs))
	var wg, setUp sync.WaitGroup
	start := make(chan struct{})
	setUp.Add(len(specs))
	for i, sp := range specs {
		var once sync.Once
		ready := func() { once.Do(setUp.Done) }
		own := sp.Config.SetUp
		cfg := sp.Config
		cfg.SetUp = func(ctx context.Context) error {
			if own != nil {
				if err := own(ctx); err != nil {
					return err
				}
			}
			ready()
			select {
			case <-start:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		wg.Go(func() {
			defer ready()
			out[i].Result, out[i].Err = Run(ctx, sp.Pair, cfg)
		})
	}
	setUp.Wait()
	close(start)
	wg.Wait()
	return out
}
