package redis

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/redisclient"
	"github.com/fencekit/fence/internal/redisscript"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	o := urlOpener{}
	driver.RegisterLocker("redis", o)
	driver.RegisterLocker("rediss", o)
	driver.RegisterLocker("redis+sentinel", o)
}

// urlOpener opens Redis lockers from URLs of the forms of URLForm (see
// the package doc, "Opening from a URL"): fence's parameters prefix,
// min-replicas and wait-timeout, and go-redis's for the rest. Each open
// makes a client, which the opened locker's Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB][?prefix=P&min-replicas=N&wait-timeout=D&...] | redis+sentinel://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...]/MASTER[/DB][?...]"
}

// The parameters that are fence's; every other one is go-redis's.
var ourParams = []string{"prefix", "min-replicas", "wait-timeout"}

// urlConfig is what a URL says.
type urlConfig struct {
	opts      Options
	simple    *goredis.Options         // redis://, rediss://
	failover  *goredis.FailoverOptions // redis+sentinel://
	passwords []string
}

// OpenLockerURL implements driver.LockerOpener. It parses the URL and
// makes a client, but does not connect: the first call does. The
// Locker's Close ends its subscription and closes the client.
func (urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	var client goredis.UniversalClient
	if c.failover != nil {
		client = redisclient.NewFailover(c.failover)
	} else {
		client = redisclient.New(c.simple)
	}
	c.opts.Clock = urlparam.Clock(opts)
	d, err := newStore(client, &c.opts)
	if err == nil {
		var l *fence.Locker
		if l, err = d.locker(func() error { d.subs.close(); return client.Close() }); err == nil {
			return l, nil
		}
	}
	_ = client.Close()
	return nil, err
}

// parseURL reads a redis://, rediss:// or redis+sentinel:// URL. Errors
// match fence.ErrInvalid and never show the URL's password. A query that
// url.ParseQuery rejects never gets here: fence.OpenLocker refuses it
// first.
func parseURL(u *url.URL) (urlConfig, error) {
	c := urlConfig{passwords: redact.Passwords(u)}
	invalid := func(reason string) error {
		shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
		return &fence.InvalidError{Field: "url", Reason: redact.Scrub(shown.String()+": "+reason, c.passwords...)}
	}
	if u.Opaque != "" {
		return urlConfig{}, invalid("want " + u.Scheme + "://HOST...")
	}
	ours, theirs := redisscript.SplitQuery(u.RawQuery, ourParams)
	fu := *u
	fu.RawQuery = ours
	p := urlparam.New(&fu)
	c.opts.Prefix = p.String("prefix")
	if n := p.String("min-replicas"); n != "" {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			p.Fail("min-replicas=%q is not a whole number of replicas", n)
		}
		c.opts.MinReplicas = v
	}
	c.opts.WaitTimeout = p.Duration("wait-timeout")
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	rest := *u
	rest.RawQuery = theirs
	if u.Scheme == "redis+sentinel" {
		fo, err := failoverOptions(&rest)
		if err != nil {
			return urlConfig{}, invalid(err.Error())
		}
		c.failover = fo
	} else {
		o, err := goredis.ParseURL(rest.String())
		if err != nil {
			return urlConfig{}, invalid(err.Error())
		}
		c.simple = o
	}
	// New's checks, here so that the URL's errors name the URL.
	if err := checkOptions(&c.opts); err != nil {
		return urlConfig{}, invalid(err.(*fence.InvalidError).Reason)
	}
	return c, nil
}

// failoverOptions reads redis+sentinel://[USER[:PASSWORD]@]H1:P1,H2:P2/MASTER[/DB]?...
// (fence's parameters removed): the hosts are the Sentinels, the user and
// password the data nodes' (Sentinels without authentication), the other
// parameters go-redis's (those of ParseFailoverURL).
func failoverOptions(u *url.URL) (*goredis.FailoverOptions, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("no Sentinel address after redis+sentinel://")
	}
	addrs := strings.Split(u.Host, ",")
	for _, a := range addrs {
		if h, port, err := net.SplitHostPort(a); err != nil || h == "" || port == "" {
			return nil, fmt.Errorf("Sentinel address %q is not HOST:PORT", a)
		}
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if parts[0] == "" || len(parts) > 2 {
		return nil, fmt.Errorf("want the master's name as the path: redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB]")
	}
	q := u.Query()
	if q.Has("master_name") || q.Has("addr") || q.Has("db") {
		return nil, fmt.Errorf("the master name, the Sentinels and the database go in the URL's path and host, not in master_name, addr or db")
	}
	q.Set("master_name", parts[0])
	for _, a := range addrs[1:] {
		q.Add("addr", a)
	}
	if len(parts) == 2 {
		if _, err := strconv.Atoi(parts[1]); err != nil {
			return nil, fmt.Errorf("database %q is not a number", parts[1])
		}
		q.Set("db", parts[1])
	}
	gu := url.URL{Scheme: "redis", User: u.User, Host: addrs[0], RawQuery: q.Encode()}
	fo, err := goredis.ParseFailoverURL(gu.String())
	if err != nil {
		return nil, err
	}
	// go-redis gives the URL's credentials to the Sentinels; here they
	// are the data nodes'.
	fo.Username, fo.Password = fo.SentinelUsername, fo.SentinelPassword
	fo.SentinelUsername, fo.SentinelPassword = "", ""
	return fo, nil
}
