// Package netfault gives tests the servers of a store that is down or
// hung, on loopback: an address where nothing listens, a listener that
// drops every connection, and one that accepts connections and never
// answers. Every one lasts until the test ends.
package netfault

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Closed returns an address on which nothing listens: a stopped server.
func Closed(tb testing.TB) string {
	tb.Helper()
	ln := listen(tb)
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// Dropping returns the address of a listener that accepts connections
// and closes them at once.
func Dropping(tb testing.TB) string {
	tb.Helper()
	ln := listen(tb)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	tb.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

// HungServer accepts connections, reads what they send and never
// answers: a server that hangs.
type HungServer struct {
	// Addr is its address, HOST:PORT.
	Addr     string
	accepted atomic.Int64
}

// Accepted returns how many connections it has accepted.
func (s *HungServer) Accepted() int64 { return s.accepted.Load() }

// Hung starts a HungServer.
func Hung(tb testing.TB) *HungServer {
	tb.Helper()
	ln := listen(tb)
	s := &HungServer{Addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	tb.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return s
}

// ReturnWithContext runs each of calls in a parallel subtest of its name,
// with a context that ends after timeout, and fails the subtest unless the
// call returns an error matching context.DeadlineExceeded, or as soon as
// it has not returned a minute after its context ended: the check that a
// call against a hung store returns once its context is done.
func ReturnWithContext(t *testing.T, timeout time.Duration, calls map[string]func(ctx context.Context) error) {
	t.Helper()
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- call(ctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s = %v; want an error matching context.DeadlineExceeded", name, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s did not return a minute after its context ended", name)
			}
		})
	}
}

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}
