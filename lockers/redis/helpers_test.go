package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// newClient connects to the shared test server; the client is closed when
// the test ends.
func newClient(t testing.TB) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatalf("parse FENCE_REDIS_URL: %v", err)
	}
	c := goredis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniquePrefix returns a key prefix no other test or run uses.
func uniquePrefix(tag string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "fence-test:" + tag + ":" + hex.EncodeToString(b[:]) + ":"
}

// newLocker returns a Locker on c under a unique prefix, with opts (its
// Prefix is set).
func newLocker(t testing.TB, c goredis.UniversalClient, opts *Options) *fence.Locker {
	t.Helper()
	l, _ := newStoreLocker(t, c, opts)
	return l
}

// newStoreLocker is newLocker, and returns the store under the Locker
// too, for the tests that look at its records or call it directly.
func newStoreLocker(t testing.TB, c goredis.UniversalClient, opts *Options) (*fence.Locker, *store) {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = uniquePrefix("t")
	}
	d, err := newStore(c, &o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := d.locker(func() error { d.subs.close(); return nil })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l, d
}

// server is a redis-server of a test's own, on a free loopback port.
type server struct {
	*testproc.Proc
	port int
	dir  string
	c    *goredis.Client
}

// startServer starts a redis-server of the test's own with args added
// to a loopback port, no RDB snapshots and its directory in a temporary
// directory, and waits until it answers.
func startServer(t testing.TB, name string, args ...string) *server {
	t.Helper()
	port := testproc.FreePort(t)
	dir := t.TempDir()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir,
		"--logfile", "", "--protected-mode", "no"}, args...)
	s := &server{Proc: testproc.Start(t, name, testenv.RedisServer(t), all...), port: port, dir: dir}
	s.c = goredis.NewClient(&goredis.Options{Addr: s.addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = s.c.Close() })
	s.waitUp(t)
	return s
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// client returns the client of s alone (closed when the test ends).
func (s *server) client(testing.TB) *goredis.Client { return s.c }

// waitUp waits until s answers PING (loading its data first).
func (s *server) waitUp(t testing.TB) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: s.addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer: %v", s.Name(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// configFile writes text to a file name in a temporary directory of t
// and returns its path.
func configFile(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
