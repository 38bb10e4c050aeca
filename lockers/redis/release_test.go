package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// releaseDropper dials connections that drop the answer of the first
// release script the server ran: the read of that answer fails and the
// connection closes, as when it drops once the server has answered.
type releaseDropper struct {
	armed, fired atomic.Bool
}

func (d *releaseDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, d: d}, nil
}

type dropConn struct {
	net.Conn
	d *releaseDropper
}

func (c *dropConn) Write(b []byte) (int, error) {
	if !c.d.fired.Load() && strings.Contains(string(b), releaseScript.Hash()) {
		c.d.armed.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *dropConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.d.armed.Load() && c.d.fired.CompareAndSwap(false, true) {
		_ = c.Conn.Close()
		return 0, errors.New("test: answer dropped")
	}
	return n, err
}

// TestReleaseAnswerLost: a Release whose answer is lost after the server
// ran it is not sent again (go-redis would resend it, and the resent one
// would find the key free and answer not held): it fails with the lost
// answer's error, not fence.ErrNotHeld, and the key is free.
func TestReleaseAnswerLost(t *testing.T) {
	t.Parallel()
	o, err := goredis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	d := &releaseDropper{}
	o.Dialer = d.dial
	c := goredis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	if err := releaseScript.Load(t.Context(), c).Err(); err != nil { // so that the release is one EVALSHA
		t.Fatal(err)
	}
	l := newLocker(t, c, nil)
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Release(t.Context(), lease)
	if !d.fired.Load() {
		t.Fatal("the release's answer was not dropped")
	}
	if err == nil || errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release with its answer lost: %v; want the lost answer's error, not ErrNotHeld", err)
	}
	info, err := l.Inspect(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if info.Held || info.Token != lease.Token {
		t.Errorf("after the release that ran: %+v; want free, last token %d", info, lease.Token)
	}
}
