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
	o := &URLOpener{}
	driver.RegisterResource("etcd", o)
	driver.RegisterResource("etcds", o)
}

// URLOpener opens etcd resources from URLs of the form of URLForm (see the
// package doc). Each open makes a *clientv3.Client, which the opened
// resource's Close closes.
type URLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (*URLOpener) URLForm() string {
	return "etcd[s]://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s&ca=FILE&cert=FILE&key=FILE]"
}

// OpenResourceURL implements driver.ResourceOpener. It makes the client
// but does not contact the cluster unless the URL names a user.
func (*URLOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	p := urlparam.New(u)
	cfg, prefix := etcdclient.FromURL(u, p)
	if err := p.Done(); err != nil {
		return none, err
	}
	client, err := etcdclient.New("etcd", cfg)
	if err != nil {
		return none, err
	}
	r, err := New(client, &Options{Prefix: prefix})
	if err != nil {
		_ = client.Close()
		return none, err
	}
	return fence.Opened[*fence.Resource]{Value: r.PortableResource, Close: client.Close}, nil
}
