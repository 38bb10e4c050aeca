package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencekit/fence"
)

func init() {
	o := &URLOpener{}
	fence.RegisterLocker("etcd", o)
	fence.RegisterLocker("etcds", o)
}

// DefaultPort is the port of an endpoint named without one.
const DefaultPort = "2379"

// DefaultDialTimeout is the dial-timeout of a URL that names none.
const DefaultDialTimeout = 5 * time.Second

// URLOpener opens etcd lockers from URLs of the form of URLForm (see the
// package doc). Each open makes a *clientv3.Client, which the opened
// locker's Close closes.
type URLOpener struct{}

// URLForm implements fence.LockerURLOpener.
func (*URLOpener) URLForm() string {
	return "etcd[s]://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s&min-ttl=2s&ca=FILE&cert=FILE&key=FILE]"
}

// OpenLockerURL implements fence.LockerURLOpener. It makes the client but
// does not contact the cluster unless the URL names a user: the client
// then authenticates at once.
func (*URLOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.PortableLocker], error) {
	var none fence.Opened[*fence.PortableLocker]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	client, err := NewClient("etcd", c.cfg)
	if err != nil {
		return none, err
	}
	l, err := New(client, &Options{Prefix: c.prefix, MinTTL: c.minTTL, Clock: opts.ClockOrSystem()})
	if err != nil {
		_ = client.Close()
		return none, err
	}
	return fence.Opened[*fence.PortableLocker]{Value: l.PortableLocker, Close: client.Close}, nil
}

// urlConfig is what a URL says.
type urlConfig struct {
	cfg    clientv3.Config
	prefix string
	minTTL time.Duration
}

// parseURL reads an etcd:// or etcds:// URL. Errors match
// fence.ErrInvalid and never show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	var c urlConfig
	p := fence.NewURLParams(u)
	c.cfg, c.prefix = ClientURL(u, p)
	c.minTTL = p.Duration("min-ttl")
	if c.minTTL != 0 && (c.minTTL < time.Second || c.minTTL%time.Second != 0) {
		p.Fail("min-ttl=%v is not a whole number of seconds, at least 1s", c.minTTL)
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// ClientURL reads what an etcd:// or etcds:// URL says of the client and
// the prefix, for the URL openers of this package and of resources/etcd:
// the endpoints, the user and password, the path as the prefix (with a
// slash added at its end; "" when the URL has no path) and the
// parameters dial-timeout, and ca, cert and key (etcds:// only); see the
// package doc. It records the first problem in p, whose Done the caller
// calls after reading its own parameters; its errors never show the
// password. The Config has a logger that discards everything.
func ClientURL(u *url.URL, p *fence.URLParams) (cfg clientv3.Config, prefix string) {
	if u.Opaque != "" || u.Host == "" {
		p.Fail("want %s://HOST[:PORT][,HOST[:PORT]...][/PREFIX/]", u.Scheme)
		return cfg, ""
	}
	for _, ep := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(ep)
		if err != nil {
			host, port = ep, DefaultPort
			if strings.Contains(ep, ":") && !strings.HasPrefix(ep, "[") {
				p.Fail("endpoint %q is not HOST[:PORT]", ep)
				break
			}
			host = strings.Trim(host, "[]")
		}
		if host == "" || port == "" {
			p.Fail("endpoint %q is not HOST[:PORT]", ep)
			break
		}
		cfg.Endpoints = append(cfg.Endpoints, net.JoinHostPort(host, port))
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		if cfg.Username == "" {
			p.Fail("a password without a user name")
		}
	}
	if path := strings.TrimPrefix(u.Path, "/"); path != "" {
		if !strings.HasSuffix(path, "/") {
			path += "/"
		}
		prefix = path
	}
	cfg.DialTimeout = p.Duration("dial-timeout")
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	ca, cert, key := p.String("ca"), p.String("cert"), p.String("key")
	switch {
	case u.Scheme != "etcds" && (ca != "" || cert != "" || key != ""):
		p.Fail("ca, cert and key are parameters of etcds://, which speaks TLS")
	case (cert == "") != (key == ""):
		p.Fail("cert and key go together")
	case u.Scheme == "etcds":
		tc, err := tlsConfig(ca, cert, key)
		if err != nil {
			p.Fail("%v", err)
		}
		cfg.TLS = tc
	}
	cfg.Logger = zap.NewNop()
	return cfg, prefix
}

// NewClient makes the client of cfg, from ClientURL, for an opener: the
// error, an *fence.OpError of backend and op "open", never shows cfg's
// password.
func NewClient(backend string, cfg clientv3.Config) (*clientv3.Client, error) {
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, &fence.OpError{Backend: backend, Op: "open", Err: &scrubbedError{msg: fence.Scrub(err.Error(), cfg.Password), err: err}}
	}
	return c, nil
}

// tlsConfig returns the TLS settings of an etcds:// URL: the system's
// roots, or those of the PEM file ca, and a client certificate when cert
// and key are set.
func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca %s holds no PEM certificate", ca)
		}
		tc.RootCAs = pool
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
