package etcd

import (
	"context"
	"net/url"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/etcdclient"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	o := urlOpener{}
	driver.RegisterLocker("etcd", o)
	driver.RegisterLocker("etcds", o)
}

// urlOpener opens etcd lockers from URLs of the form of URLForm (see the
// package doc). Each open makes a *clientv3.Client, which the opened
// locker's Close closes.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "etcd[s]://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s&min-ttl=2s&ca=FILE&cert=FILE&key=FILE]"
}

// OpenLockerURL implements driver.LockerOpener. It makes the client but
// does not contact the cluster unless the URL names a user: the client
// then authenticates at once.
func (urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := etcdclient.New("etcd", c.cfg)
	if err != nil {
		return nil, err
	}
	l, _, err := newLocker(client, &Options{Prefix: c.prefix, MinTTL: c.minTTL, Clock: urlparam.Clock(opts)}, client.Close)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return l, nil
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
	p := urlparam.New(u)
	c.cfg, c.prefix = etcdclient.FromURL(u, p)
	c.minTTL = p.Duration("min-ttl")
	if c.minTTL != 0 && (c.minTTL < time.Second || c.minTTL%time.Second != 0) {
		p.Fail("min-ttl=%v is not a whole number of seconds, at least 1s", c.minTTL)
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}
