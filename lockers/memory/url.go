package memory

import (
	"context"
	"net/url"
	"sync"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("mem", &urlOpener{}) }

// urlOpener opens memory lockers from URLs of the form mem:// (a new,
// empty locker on every open) or mem://NAME (the one locker of this
// process named NAME, created on first open: lockers opened with one name
// share their leases). It takes no parameters.
// A named locker keeps the Clock it was first opened with.
type urlOpener struct {
	mu    sync.Mutex
	named map[string]*fence.Locker
}

// URLForm implements driver.LockerOpener.
func (*urlOpener) URLForm() string { return "mem://[NAME]" }

// OpenLockerURL implements driver.LockerOpener.
func (o *urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	p := urlparam.New(u)
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") {
		p.Fail("a memory locker URL is mem:// or mem://NAME")
	}
	if err := p.Done(); err != nil {
		return nil, err
	}
	if u.Host == "" {
		return New(&Options{Clock: urlparam.Clock(opts)}), nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.named[u.Host]
	if !ok {
		if o.named == nil {
			o.named = make(map[string]*fence.Locker)
		}
		l = New(&Options{Clock: urlparam.Clock(opts)})
		o.named[u.Host] = l
	}
	return l, nil
}
