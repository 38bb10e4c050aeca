package nats

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("nats", urlOpener{}) }

// Defaults of the URL opener.
const (
	// DefaultPort is the port of a server named without one.
	DefaultPort = "4222"
	// DefaultDialTimeout bounds the connection to one server, and its
	// handshake, when the URL names no dial-timeout.
	DefaultDialTimeout = 5 * time.Second
	// reconnectWait is the wait between reconnection attempts to one
	// server (nats.go adds up to 100 ms of jitter, 1 s with TLS).
	reconnectWait = 250 * time.Millisecond
)

// urlOpener opens NATS lockers from URLs of the form of URLForm (see the
// package doc). Each open makes a connection, which the opened locker's
// Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT][,HOST[:PORT]...]?bucket=B[&replicas=N&creds=FILE&nkey=FILE&tls=true&ca=FILE&cert=FILE&key=FILE&dial-timeout=5s&name=CLIENT]"
}

// urlConfig is what a URL says.
type urlConfig struct {
	servers     []string // nats://HOST:PORT, without credentials
	bucket      string
	replicas    int
	user, pass  string
	token       string
	creds       string
	nkey        string
	tls         bool
	ca          string
	cert, key   string
	dialTimeout time.Duration
	name        string
}

// parseURL reads a nats:// URL. Errors match fence.ErrInvalid and never
// show the URL's password or token.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	var c urlConfig
	if u.Opaque != "" || u.Host == "" {
		p.Fail("want nats://HOST[:PORT][,HOST[:PORT]...]?bucket=B")
	}
	for _, ep := range strings.Split(u.Host, ",") {
		if u.Host == "" {
			break
		}
		host, port, err := net.SplitHostPort(ep)
		if err != nil {
			host, port = ep, DefaultPort
			if strings.Contains(ep, ":") && !strings.HasPrefix(ep, "[") {
				p.Fail("server %q is not HOST[:PORT]", ep)
				break
			}
			host = strings.Trim(host, "[]")
		}
		if host == "" || port == "" {
			p.Fail("server %q is not HOST[:PORT]", ep)
			break
		}
		c.servers = append(c.servers, "nats://"+net.JoinHostPort(host, port))
	}
	if u.Path != "" && u.Path != "/" {
		p.Fail("unexpected path %q; name the bucket with ?bucket=", u.Path)
	}
	if u.User != nil {
		pass, ok := u.User.Password()
		switch {
		case u.User.Username() == "":
			p.Fail("a password without a user name")
		case ok:
			c.user, c.pass = u.User.Username(), pass
		default:
			c.token = u.User.Username() // NATS's convention: a user without a password is a token
		}
	}
	c.bucket = p.String("bucket")
	if r := p.String("replicas"); r != "" {
		if _, err := fmt.Sscan(r, &c.replicas); err != nil || fmt.Sprint(c.replicas) != r || checkReplicas(c.replicas) != nil {
			p.Fail("replicas=%q is not a number from 1 to %d", r, MaxReplicas)
		}
	}
	c.creds, c.nkey = p.String("creds"), p.String("nkey")
	c.tls = p.Bool("tls")
	c.ca, c.cert, c.key = p.String("ca"), p.String("cert"), p.String("key")
	c.dialTimeout = p.Duration("dial-timeout")
	c.name = p.String("name")
	auth := 0
	for _, set := range []bool{c.user != "", c.token != "", c.creds != "", c.nkey != ""} {
		if set {
			auth++
		}
	}
	switch {
	case auth > 1:
		p.Fail("name one way to authenticate: a user and password, a token, creds or nkey")
	case (c.cert == "") != (c.key == ""):
		p.Fail("cert and key go together")
	case c.bucket == "":
		p.Fail("no bucket: add ?bucket=NAME")
	}
	if c.ca != "" || c.cert != "" {
		c.tls = true
	}
	if c.dialTimeout == 0 {
		c.dialTimeout = DefaultDialTimeout
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	if err := checkBucket(c.bucket); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// options returns the connection options of c, with a dial timeout of at
// most timeout.
func (c urlConfig) options(timeout time.Duration) []natsgo.Option {
	name := c.name
	if name == "" {
		name = "fence"
	}
	// Reconnect without end, soon: a lock client cut off for the default
	// two seconds between tries would let short leases run out.
	opts := []natsgo.Option{natsgo.Name(name), natsgo.Timeout(timeout), natsgo.MaxReconnects(-1), natsgo.ReconnectWait(reconnectWait)}
	switch {
	case c.user != "":
		opts = append(opts, natsgo.UserInfo(c.user, c.pass))
	case c.token != "":
		opts = append(opts, natsgo.Token(c.token))
	case c.creds != "":
		opts = append(opts, natsgo.UserCredentials(c.creds))
	case c.nkey != "":
		if o, err := natsgo.NkeyOptionFromSeed(c.nkey); err == nil {
			opts = append(opts, o)
		} else {
			opts = append(opts, func(*natsgo.Options) error { return fmt.Errorf("nkey file: %w", err) })
		}
	}
	if c.tls {
		opts = append(opts, natsgo.Secure())
	}
	if c.ca != "" {
		opts = append(opts, natsgo.RootCAs(c.ca))
	}
	if c.cert != "" {
		opts = append(opts, natsgo.ClientCert(c.cert, c.key))
	}
	return opts
}

// OpenLockerURL implements driver.LockerOpener. It connects to the
// servers (the first that answers), and returns when connected, or when
// ctx ends or the dial timeout passes for each server in turn. It does
// not look for the bucket: the first call does.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	nc, err := dial(ctx, c)
	if err != nil {
		return nil, &fence.OpError{Backend: "nats", Op: "open", Err: err}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, &fence.OpError{Backend: "nats", Op: "open", Err: err}
	}
	d, err := newStore(js, c.bucket, &Options{Clock: urlparam.Clock(opts), Replicas: c.replicas}, nil)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock, Close: func() error { nc.Close(); return nil }})
}

// dial connects to c's servers, giving up when ctx ends: a connection
// made after that is closed.
func dial(ctx context.Context, c urlConfig) (*natsgo.Conn, error) {
	// A dial that outlives ctx is abandoned; the dial timeout ends it a
	// little after ctx's deadline (not before: the caller is told that
	// ctx ended), so that its goroutine does not linger.
	timeout := c.dialTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(min(timeout, time.Until(dl)+250*time.Millisecond), time.Millisecond)
	}
	type result struct {
		nc  *natsgo.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := natsgo.Connect(strings.Join(c.servers, ","), c.options(timeout)...)
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		switch {
		case r.err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("connect to %s: %w (%w)", strings.Join(c.servers, ","), ctx.Err(), r.err)
		case r.err != nil:
			return nil, fmt.Errorf("connect to %s: %w", strings.Join(c.servers, ","), r.err)
		}
		return r.nc, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(c.servers, ","), ctx.Err())
	}
}
