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
type URLOpener struct {
	// Clock is the Clock of the lockers it creates. Default:
	// fence.SystemClock.
	Clock fence.Clock

	mu    sync.Mutex
	named map[string]*Locker
}

// URLForm implements fence.LockerURLOpener.
func (*URLOpener) URLForm() string { return "mem://[NAME]" }

// OpenLockerURL implements fence.LockerURLOpener.
func (o *URLOpener) OpenLockerURL(_ context.Context, u *url.URL) (fence.Opened[*fence.PortableLocker], error) {
	p := fence.NewURLParams(u)
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") {
		p.Fail("a memory locker URL is mem:// or mem://NAME")
	}
	if err := p.Done(); err != nil {
		return fence.Opened[*fence.PortableLocker]{}, err
	}
	if u.Host == "" {
		return fence.Opened[*fence.PortableLocker]{Value: New(&Options{Clock: o.Clock})}, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.named[u.Host]
	if !ok {
		if o.named == nil {
			o.named = make(map[string]*Locker)
		}
		l = New(&Options{Clock: o.Clock})
		o.named[u.Host] = l
	}
	return fence.Opened[*fence.PortableLocker]{Value: l}, nil
}
