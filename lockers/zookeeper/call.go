package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/z-division/go-zookeeper/zk"
)

// run runs op to its end in a goroutine of its own, and waits for it as
// long as ctx lasts. The ZooKeeper client takes no context: a request it
// sent is answered or fails with the connection. So when ctx ends first,
// run returns at once with an error wrapping ctx.Err(), and op goes on in
// the background to its end, whose outcome is then the driver's to settle
// (see the package doc: an Acquire may still win its lease, which lasts
// its TTL unless renewed; a Release or Break may still free the key).
func run[T any](ctx context.Context, op func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("gave up waiting for ZooKeeper, the request goes on: %w", ctx.Err())
	}
}

// parallel runs fs at once and waits for them all: requests of one
// session sent together travel in one round trip, and the server answers
// them in the order they were sent.
func parallel(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(f)
	}
	wg.Wait()
}

// answered reports whether err is an answer of the server (the request
// was refused), rather than a lost connection after which the request may
// or may not have been applied.
func answered(err error) bool {
	for _, e := range []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNoAuth, zk.ErrInvalidACL,
		zk.ErrBadArguments, zk.ErrNotEmpty, zk.ErrNoChildrenForEphemerals} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// over reports whether err says the client or its session is gone for
// good, so that a node of the session is gone too or soon will be.
func over(err error) bool {
	return errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrSessionExpired)
}

// closed reports whether c was closed: the client then stays
// disconnected, where a dropped connection is followed at once by a new
// attempt to connect.
func closed(c *zk.Conn) bool {
	for range 3 {
		if c.State() != zk.StateDisconnected {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
