package driver

import (
	"context"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// LockerOpener opens the lockers of one URL scheme, for fence.OpenLocker.
type LockerOpener interface {
	// OpenLockerURL opens the locker u names, with opts (which may be
	// nil). It checks u but need not contact the store; the first call
	// does. The Locker it returns closes the clients it made on Close
	// (LockerOptions.Close).
	OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error)
	// URLForm returns the URL form, for help texts and errors, for
	// example "postgres://[USER@]HOST[:PORT]/DB[?table=T]".
	URLForm() string
}

// ResourceOpener opens the resources of one URL scheme, for
// fence.OpenResource.
type ResourceOpener interface {
	OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error)
	URLForm() string
}

// RegisterLocker makes fence.OpenLocker open URLs of scheme with o.
// Backends call it from init. It panics if scheme is registered twice or
// is not a lower-case URL scheme.
func RegisterLocker(scheme string, o LockerOpener) { hook.Register("Locker", scheme, o) }

// RegisterResource makes fence.OpenResource open URLs of scheme with o.
func RegisterResource(scheme string, o ResourceOpener) { hook.Register("Resource", scheme, o) }

// LockerSchemes returns the registered locker URL schemes, sorted, and
// the URL form of each scheme's opener (once per opener).
func LockerSchemes() (schemes, forms []string) { return hook.Schemes("Locker") }

// ResourceSchemes returns the registered resource URL schemes, sorted, and
// the URL form of each scheme's opener (once per opener).
func ResourceSchemes() (schemes, forms []string) { return hook.Schemes("Resource") }
