package redlock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisclient"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("redlock", urlOpener{}) }

// defaultTimeout is the dial, read and write timeout of the clients the
// URL opener makes, unless the URL's timeout parameter says otherwise.
const defaultTimeout = 500 * time.Millisecond

// urlOpener opens Redlock lockers from URLs of the form of URLForm (see
// the package doc, "Opening from a URL"). Each open makes one client per
// master, which the opened locker's Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "redlock://[USER:PASSWORD@]HOST1:PORT1,HOST2:PORT2,HOST3:PORT3/[?prefix=P&db=N&timeout=D&tls=B]"
}

// OpenLockerURL implements driver.LockerOpener. It makes the clients
// but does not connect: the first call does.
func (urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	made := make([]*goredis.Client, len(c.addrs))
	masters := make([]Client, len(c.addrs))
	for i, addr := range c.addrs {
		made[i] = redisclient.New(c.clientOptions(addr))
		masters[i] = made[i]
	}
	closeClients := func() error {
		var errs []error
		for _, m := range made {
			errs = append(errs, m.Close())
		}
		return errors.Join(errs...)
	}
	d, err := newStore(masters, &Options{Prefix: c.prefix, Clock: urlparam.Clock(opts)})
	if err == nil {
		var l *fence.Locker
		if l, err = d.locker(closeClients); err == nil {
			return l, nil
		}
	}
	_ = closeClients()
	return nil, err
}

// urlConfig is what a redlock:// URL says.
type urlConfig struct {
	addrs              []string // host:port of each master, in order
	username, password string
	prefix             string
	db                 int
	timeout            time.Duration
	tls                bool
}

// parseURL reads a redlock:// URL. Errors match fence.ErrInvalid and
// never show the password.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	var c urlConfig
	if u.User != nil {
		c.username = u.User.Username()
		c.password, _ = u.User.Password()
	}
	switch {
	case u.Opaque != "":
		p.Fail("want redlock://HOST1:PORT1,HOST2:PORT2,...")
	case u.Host == "":
		p.Fail("no masters after redlock://")
	case u.Path != "" && u.Path != "/":
		p.Fail("unexpected path %q after the masters (the database is ?db=N)", u.Path)
	}
	if u.Host != "" {
		for h := range strings.SplitSeq(u.Host, ",") {
			addr, reason := masterAddr(h)
			if reason != "" {
				p.Fail("master %q: %s", h, reason)
				break
			}
			if slices.Contains(c.addrs, addr) {
				p.Fail("master %s given twice", addr)
				break
			}
			c.addrs = append(c.addrs, addr)
		}
	}
	c.prefix = p.String("prefix")
	if db := p.String("db"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 || strconv.Itoa(n) != db {
			p.Fail("db=%q is not a database number", db)
		}
		c.db = n
	}
	c.timeout = p.Duration("timeout")
	if c.timeout == 0 {
		c.timeout = defaultTimeout
	}
	c.tls = p.Bool("tls")
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// masterAddr checks one HOST[:PORT] of the URL and returns it with the
// port (default 6379), or why it is not one.
func masterAddr(h string) (addr, reason string) {
	if h == "" {
		return "", "empty (two commas, or a comma at an end)"
	}
	host, port := h, "6379"
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1 {
		var err error
		host, port, err = net.SplitHostPort(h)
		if err != nil {
			if !strings.HasPrefix(h, "[") || !strings.HasSuffix(h, "]") {
				return "", "not HOST or HOST:PORT"
			}
			host, port = strings.Trim(h, "[]"), "6379"
		}
	} else if strings.Contains(h, ":") {
		return "", "an IPv6 address goes in brackets: [ADDR]:PORT"
	}
	if host == "" {
		return "", "no host name"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return "", "port " + strconv.Quote(port) + " is not from 1 to 65535"
	}
	return net.JoinHostPort(host, port), ""
}

// clientOptions returns the go-redis options of the client for addr:
// fail fast, no retries (a master that fails is outvoted, not waited
// for), the URL's credentials, database and TLS.
func (c urlConfig) clientOptions(addr string) *goredis.Options {
	o := &goredis.Options{
		Addr:                  addr,
		Username:              c.username,
		Password:              c.password,
		DB:                    c.db,
		DialTimeout:           c.timeout,
		ReadTimeout:           c.timeout,
		WriteTimeout:          c.timeout,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialerRetries:         1,
	}
	if c.tls {
		host, _, _ := net.SplitHostPort(addr)
		o.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return o
}
