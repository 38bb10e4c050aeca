package memory

import (
	"context"
	"net/url"
	"sync"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterResource("mem", &URLOpener{}) }

// URLOpener opens memory resources from URLs of the form mem:// (a new,
// empty resource on every open) or mem://NAME (the one resource of this
// process named NAME, created on first open: resources opened with one
// name share their values). It takes no parameters; an unfenced resource
// (Options.Unfenced) is not offered by URL.
type URLOpener struct {
	named sync.Map // name -> *Resource
}

// URLForm implements driver.ResourceOpener.
func (*URLOpener) URLForm() string { return "mem://[NAME]" }

// parseURL returns the name a mem:// URL gives, "" for none.
func parseURL(u *url.URL) (string, error) {
	p := urlparam.New(u)
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		p.Fail("a memory resource URL is mem:// or mem://NAME")
	}
	if err := p.Done(); err != nil {
		return "", err
	}
	return u.Host, nil
}

// OpenResourceURL implements driver.ResourceOpener.
func (o *URLOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	name, err := parseURL(u)
	if err != nil {
		return fence.Opened[*fence.Resource]{}, err
	}
	if name == "" {
		return fence.Opened[*fence.Resource]{Value: New(nil)}, nil
	}
	r, ok := o.named.Load(name)
	if !ok {
		r, _ = o.named.LoadOrStore(name, New(nil))
	}
	return fence.Opened[*fence.Resource]{Value: r.(*Resource)}, nil
}
