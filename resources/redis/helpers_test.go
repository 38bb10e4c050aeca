package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// newClient connects to the shared test server, with dial as its dialer
// when not nil; the client is closed when the test ends.
func newClient(t testing.TB, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatalf("parse FENCE_REDIS_URL: %v", err)
	}
	o.Dialer = dial
	c := goredis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniquePrefix returns a key prefix no other test or run uses.
func uniquePrefix(tag string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "fence-test:res:" + tag + ":" + hex.EncodeToString(b[:]) + ":"
}

// newResource returns a resource on c under prefix.
func newResource(t testing.TB, c goredis.UniversalClient, prefix string) *fence.Resource {
	t.Helper()
	r, err := New(c, &Options{Prefix: prefix})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// keyOf returns the name of the Redis hash that holds r's value name.
func keyOf(r *fence.Resource, name string) string {
	return driver.ResourceOf(r).(*store).key(name)
}

// errDropped is what a connection of lostAnswer returns instead of the
// answer it dropped.
var errDropped = errors.New("test: answer dropped")

// lostAnswer dials connections on which the first fenced write (the write
// script's EVALSHA or EVAL) reaches the server, whose answer is read and
// dropped: after runs, then the connection is closed and the read fails,
// as when a connection drops once the server has answered.
type lostAnswer struct {
	after func()
	mu    sync.Mutex
	armed bool // a fenced write was sent; its answer is to be dropped
	fired bool
}

func (l *lostAnswer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &lostConn{Conn: c, l: l}, nil
}

type lostConn struct {
	net.Conn
	l *lostAnswer
}

func (c *lostConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	if !c.l.fired && isWrite(b) {
		c.l.armed = true
	}
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// isWrite reports whether b sends the write script.
func isWrite(b []byte) bool {
	s := strings.ToLower(string(b))
	return (strings.Contains(s, "\r\nevalsha\r\n") && strings.Contains(s, writeScript.Hash())) ||
		(strings.Contains(s, "\r\neval\r\n") && strings.Contains(s, "arg"+"v[3] == 'delete'"))
}

func (c *lostConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.l.mu.Lock()
	drop := c.l.armed && !c.l.fired && n > 0
	if drop {
		c.l.fired, c.l.armed = true, false
	}
	c.l.mu.Unlock()
	if drop {
		c.l.after()
		_ = c.Conn.Close()
		return 0, errDropped
	}
	return n, err
}
