package memory

import (
	"context"
	"net/url"
	"sync"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterResource("mem", &urlOpener{}) }

// urlOpener opens memory resources from mem:// URLs (see the package doc).
type urlOpener struct {
	named sync.Map // name -> *fence.Resource
}

// URLForm implements driver.ResourceOpener.
func (*urlOpener) URLForm() string { return "mem://[NAME]" }

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
func (o *urlOpener) OpenResourceURL(_ context.Context, u *url.URL, _ *fence.OpenOptions) (*fence.Resource, error) {
	name, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return New(nil), nil
	}
	r, ok := o.named.Load(name)
	if !ok {
		r, _ = o.named.LoadOrStore(name, New(nil))
	}
	return r.(*fence.Resource), nil
}
