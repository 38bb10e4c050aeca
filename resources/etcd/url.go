package etcd

import (
	"context"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/etcdclient"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() {
	o := &urlOpener{}
	driver.RegisterResource("etcd", o)
	driver.RegisterResource("etcds", o)
}

// urlOpener opens etcd resources from URLs of the form of URLForm (see the
// package doc). Each open makes a *clientv3.Client, which the opened
// resource's Close closes.
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*urlOpener) URLForm() string {
	return "etcd[s]://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s&ca=FILE&cert=FILE&key=FILE]"
}

// OpenResourceURL implements driver.ResourceOpener. It makes the client
// but does not contact the cluster unless the URL names a user.
func (*urlOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	p := urlparam.New(u)
	cfg, prefix := etcdclient.FromURL(u, p)
	if err := p.Done(); err != nil {
		return nil, err
	}
	client, err := etcdclient.New("etcd", cfg)
	if err != nil {
		return nil, err
	}
	r, err := newResource(client, &Options{Prefix: prefix}, &driver.ResourceOptions{Close: client.Close})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return r, nil
}
