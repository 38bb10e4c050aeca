package redis

import (
	"context"
	"net/url"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/redisclient"
	"github.com/fencekit/fence/internal/redisscript"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	o := &urlOpener{}
	driver.RegisterResource("redis", o)
	driver.RegisterResource("rediss", o)
}

// urlOpener opens Redis resources from URLs of the form of URLForm: the
// prefix parameter is fence's (Options.Prefix), every other one
// go-redis's (see goredis.ParseURL). Each open makes a client, which the
// opened resource's Close closes.
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*urlOpener) URLForm() string {
	return "redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB][?prefix=P&...]"
}

// OpenResourceURL implements driver.ResourceOpener. It parses the URL
// and makes a client, but does not connect.
func (*urlOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	o, ropts, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client := redisclient.New(ropts)
	r, err := driver.NewResource(&store{c: client, prefix: o.Prefix}, &driver.ResourceOptions{Close: client.Close})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return r, nil
}

// parseURL reads a redis:// or rediss:// URL. Errors match
// fence.ErrInvalid and never show the URL's password.
func parseURL(u *url.URL) (Options, *goredis.Options, error) {
	pws := redact.Passwords(u)
	invalid := func(reason string) error {
		shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
		return &fence.InvalidError{Field: "url", Reason: redact.Scrub(shown.String()+": "+reason, pws...)}
	}
	if u.Opaque != "" {
		return Options{}, nil, invalid("want " + u.Scheme + "://HOST...")
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		return Options{}, nil, invalid("the query cannot be parsed (a bad %-escape, or ';' between parameters)")
	}
	ours, theirs := redisscript.SplitQuery(u.RawQuery, []string{"prefix"})
	fu := *u
	fu.RawQuery = ours
	p := urlparam.New(&fu)
	o := Options{Prefix: p.String("prefix")}
	if err := p.Done(); err != nil {
		return Options{}, nil, err
	}
	if err := checkOptions(&o); err != nil {
		return Options{}, nil, invalid(err.(*fence.InvalidError).Reason)
	}
	rest := *u
	rest.RawQuery = theirs
	ro, err := goredis.ParseURL(rest.String())
	if err != nil {
		return Options{}, nil, invalid(err.Error())
	}
	return o, ro, nil
}
