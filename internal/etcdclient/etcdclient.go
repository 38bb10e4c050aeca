// Package etcdclient holds what the etcd locker and the etcd resource
// share: reading an etcd:// or etcds:// URL into a client configuration,
// making the client without showing a password, and telling a write the
// server refused from one whose outcome is unknown.
package etcdclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
)

// DefaultPort is the port of an endpoint named without one.
const DefaultPort = "2379"

// DefaultDialTimeout is the dial-timeout of a URL that names none.
const DefaultDialTimeout = 5 * time.Second

// FromURL reads what an etcd:// or etcds:// URL says of the client and
// the prefix, for the URL openers of lockers/etcd and resources/etcd:
// the endpoints, the user and password, the path as the prefix (with a
// slash added at its end; "" when the URL has no path) and the
// parameters dial-timeout, and ca, cert and key (etcds:// only); see the
// lockers/etcd package doc. It records the first problem in p, whose Done the caller
// calls after reading its own parameters; its errors never show the
// password. The Config has a logger that discards everything.
func FromURL(u *url.URL, p *urlparam.Params) (cfg clientv3.Config, prefix string) {
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

// New makes the client of cfg, from FromURL, for an opener: the
// error, an *fence.OpError of backend and op "open", never shows cfg's
// password.
func New(backend string, cfg clientv3.Config) (*clientv3.Client, error) {
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, &fence.OpError{Backend: backend, Op: "open", Err: &scrubbedError{msg: redact.Scrub(err.Error(), cfg.Password), err: err}}
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

// Refused reports whether err, from a write, is an answer of the server
// that refused it, so that the write was not applied: a request too large,
// too many operations, a missing lease, a permission denied. Any other
// error (a timeout, a lost connection, ctx ending) may follow a write
// that was applied.
func Refused(err error) bool {
	var ee rpctypes.EtcdError
	if !errors.As(err, &ee) {
		return false
	}
	switch ee {
	case rpctypes.ErrRequestTooLarge, rpctypes.ErrTooManyOps, rpctypes.ErrLeaseNotFound,
		rpctypes.ErrPermissionDenied, rpctypes.ErrUserEmpty, rpctypes.ErrAuthFailed,
		rpctypes.ErrInvalidAuthToken, rpctypes.ErrKeyNotFound, rpctypes.ErrDuplicateKey,
		rpctypes.ErrEmptyKey, rpctypes.ErrLeaseTTLTooLarge, rpctypes.ErrNoSpace:
		return true
	}
	return false
}
