package memory

import (
	"context"
	"net/url"
	"sync"

	"github.com/fencekit/fence"
)

func init() { fence.RegisterLocker("mem", &URLOpener{}) }

// URLOpener opens memory lockers from URLs of the form mem:// (a new,
// empty locker on every open) or mem://NAME (the one locker of this
// process named NAME, created on first open: lockers opened with one name
// share their leases). It takes no parameters.
// A named locker keeps the Clock it was first opened with.
type URLOpener struct {
	mu    sync.Mutex
	named map[string]*Locker
}

// URLForm implements fence.LockerURLOpener.
func (*URLOpener) URLForm() string { return "mem://[NAME]" }

// OpenLockerURL implements fence.LockerURLOpener.
func (o *URLOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.PortableLocker], error) {
	p := fence.NewURLParams(u)
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") {
		p.Fail("a memory locker URL is mem:// or mem://NAME")
	}
	if err := p.Done(); err != nil {
		return fence.Opened[*fence.PortableLocker]{}, err
	}
	if u.Host == "" {
		return fence.Opened[*fence.PortableLocker]{Value: New(&Options{Clock: opts.ClockOrSystem()})}, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.named[u.Host]
	if !ok {
		if o.named == nil {
			o.named = make(map[string]*Locker)
		}
		l = New(&Options{Clock: opts.ClockOrSystem()})
		o.named[u.Host] = l
	}
	return fence.Opened[*fence.PortableLocker]{Value: l}, nil
}
