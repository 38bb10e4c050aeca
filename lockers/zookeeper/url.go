package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	driver.RegisterLocker("zk", urlOpener{})
}

// Defaults of a zk:// URL.
const (
	// defaultPort is the port of a server named without one.
	defaultPort = "2181"
	// defaultSessionTimeout is the session-timeout of a URL that names
	// none: within the server's default limits (4 s to 40 s, with its
	// default tick of 2 s), so granted as asked.
	defaultSessionTimeout = 10 * time.Second
	// defaultConnectTimeout is how long an open waits for a session
	// when the URL names no connect-timeout.
	defaultConnectTimeout = 10 * time.Second
)

// urlOpener opens ZooKeeper lockers from URLs of the form of URLForm
// (see the package doc). Each open makes a *zk.Conn, which the opened
// locker's Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "zk://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]...][/ROOT][?session-timeout=10s&connect-timeout=10s]"
}

// OpenLockerURL implements driver.LockerOpener. It connects, adds the
// URL's user and password as digest credentials, and waits for a session
// (at most connect-timeout, and as long as ctx), so that a wrong address
// fails here.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	conn, events, err := zk.Connect(c.servers, c.sessionTimeout, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, &fence.OpError{Backend: "zookeeper", Op: "open", Err: err}
	}
	fail := func(err error) (*fence.Locker, error) {
		conn.Close()
		return nil, &fence.OpError{Backend: "zookeeper", Op: "open", Err: err}
	}
	if c.user != "" {
		if err := conn.AddAuth("digest", []byte(c.user+":"+c.password)); err != nil {
			return fail(errors.New(redact.Scrub(fmt.Sprintf("add the digest credentials of user %q: %v", c.user, err), c.password)))
		}
	}
	wait := time.NewTimer(c.connectTimeout)
	defer wait.Stop()
	for session := false; !session; {
		select {
		case ev := <-events:
			session = ev.State == zk.StateHasSession
			if ev.State == zk.StateAuthFailed {
				return fail(fmt.Errorf("the servers refused the credentials of user %q", c.user))
			}
		case <-wait.C:
			return fail(fmt.Errorf("no session with %s after %v", strings.Join(c.servers, ","), c.connectTimeout))
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	go func() {
		for range events {
		}
	}()
	closeConn := func() error { conn.Close(); return nil }
	l, _, err := newLocker(conn, &Options{Root: c.root, SessionTimeout: c.sessionTimeout, Clock: urlparam.Clock(opts)}, closeConn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return l, nil
}

// quiet discards the client's log lines.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// urlConfig is what a zk:// URL says.
type urlConfig struct {
	servers                        []string
	root                           string
	user, password                 string
	sessionTimeout, connectTimeout time.Duration
}

// parseURL reads a zk:// URL. Errors match fence.ErrInvalid and never
// show the URL's password.
func parseURL(u *url.URL) (urlConfig, error) {
	var c urlConfig
	p := urlparam.New(u)
	if u.Opaque != "" || u.Host == "" {
		p.Fail("want zk://HOST[:PORT][,HOST[:PORT]...][/ROOT]")
		return c, p.Done()
	}
	for _, s := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
				p.Fail("server %q is not HOST[:PORT]", s)
				break
			}
			host, port = strings.Trim(s, "[]"), defaultPort
		}
		if host == "" || port == "" {
			p.Fail("server %q is not HOST[:PORT]", s)
			break
		}
		c.servers = append(c.servers, net.JoinHostPort(host, port))
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
		if c.user == "" {
			p.Fail("a password without a user name")
		}
	}
	c.root = strings.TrimSuffix(u.Path, "/")
	if c.root == "" {
		c.root = DefaultRoot
	}
	if err := checkRoot(c.root); err != nil {
		p.Fail("root %q: %s", c.root, strings.TrimPrefix(err.(*fence.InvalidError).Reason, fmt.Sprintf("%q ", c.root)))
	}
	c.sessionTimeout = p.Duration("session-timeout")
	if c.sessionTimeout == 0 {
		c.sessionTimeout = defaultSessionTimeout
	}
	if c.sessionTimeout < MinTTL*3/2 || c.sessionTimeout%time.Millisecond != 0 || c.sessionTimeout > 24*time.Hour {
		p.Fail("session-timeout=%v is not whole milliseconds between %v and 24h", c.sessionTimeout, MinTTL*3/2)
	}
	c.connectTimeout = p.Duration("connect-timeout")
	if c.connectTimeout == 0 {
		c.connectTimeout = defaultConnectTimeout
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}
