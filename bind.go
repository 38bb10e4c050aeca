package fence

import (
	"context"
	"fmt"
	"strings"
)

// BindOptions are the optional settings of Bind. A nil *BindOptions means
// every default.
type BindOptions struct {
	// Name is the resource name the Bound writes, reads and deletes. It
	// must be the handle's key or a name under it: the key, a "/" and at
	// least one more byte, with no "." or ".." between slashes (see
	// BoundName). Default: the handle's key.
	Name string
}

// Bound is a Resource bound to a Handle: its writes carry the handle's
// token, on one resource name that belongs to the handle's key (the key
// itself by default). A token is only comparable with the tokens of the
// same key, so tying the name to the key keeps a token of one lock from
// being written, by accident, to a resource that another lock guards. Get
// one from Bind.
//
// A Bound does not look at the handle's state before it writes. A write
// after the lease was lost (or released) still goes to the resource, with
// the handle's token, and the resource decides: it refuses the write with
// ErrStaleToken once a newer holder has written, and applies it otherwise,
// which is safe, since no newer token has been seen there. The token,
// checked by the resource, is the safety; Handle.Done and Handle.Err only
// tell the work when to stop.
//
// A Bound is safe for concurrent use when its Resource is.
type Bound struct {
	r    *Resource
	h    *Handle
	name string
}

// Bind returns r bound to h: a Bound that writes with h's token on the
// resource name h.Key(), or on opts.Name. It returns an error matching
// ErrInvalid when r or h is nil or opts.Name is not the key or a name
// under it (see BoundName). The name is checked against the resource's own
// rules (length, characters) on each call.
func Bind(r *Resource, h *Handle, opts *BindOptions) (*Bound, error) {
	if r == nil {
		return nil, &InvalidError{Field: "resource", Reason: "nil"}
	}
	if h == nil {
		return nil, &InvalidError{Field: "handle", Reason: "nil"}
	}
	var name string
	if opts != nil {
		name = opts.Name
	}
	name, err := BoundName(h.Key(), name)
	if err != nil {
		return nil, err
	}
	return &Bound{r: r, h: h, name: name}, nil
}

// BoundName returns the resource name that writes under the lock key use:
// key itself when name is empty, and otherwise name, which must be key, or
// key followed by "/" and at least one more byte, in which no segment
// between slashes is "." or "..". Any other name gets a *InvalidError
// (field "name"): writing it with key's token could meet the tokens of
// another key's counter. The segment rule keeps a store or proxy that
// resolves paths from taking the name out from under the key. Bind and the
// SQL helpers of resources/sql check their names
// with it.
//
// Keys that extend one another with a "/" ("report" and "report/2026")
// share names: the name "report/2026" is then both the default name of
// the second lock and a name under the first. Give such locks names of
// their own, or do not nest their keys.
func BoundName(key, name string) (string, error) {
	if key == "" {
		return "", &InvalidError{Field: "key", Reason: "empty"}
	}
	if name == "" || name == key {
		return key, nil
	}
	rest, ok := strings.CutPrefix(name, key+"/")
	if !ok {
		return "", &InvalidError{Field: "name", Reason: fmt.Sprintf("%q is neither the lock's key %q nor a name under it (%q)", name, key, key+"/...")}
	}
	if err := checkSub(rest); err != nil {
		return "", &InvalidError{Field: "name", Reason: fmt.Sprintf("%q under the key %q: %s", name, key, err)}
	}
	return name, nil
}

// checkSub checks the part of a bound name after the key and its "/".
func checkSub(rest string) error {
	if rest == "" {
		return fmt.Errorf("nothing follows the %q", "/")
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("has a %q segment", seg)
		}
	}
	return nil
}

// Name returns the resource name the Bound uses.
func (b *Bound) Name() string { return b.name }

// Sub returns a Bound on the name b.Name() + "/" + sub, with the same
// resource and handle: one lock guarding several values (the parts of an
// upload, the rows of a job). sub must be non-empty and hold no "." or
// ".." segment, else the error matches ErrInvalid. Every method of a
// Bound works on its one name; Sub, rather than a name argument on each
// method, keeps it so.
func (b *Bound) Sub(sub string) (*Bound, error) {
	if err := checkSub(sub); err != nil {
		return nil, &InvalidError{Field: "name", Reason: fmt.Sprintf("%q under %q: %s", sub, b.name, err)}
	}
	return &Bound{r: b.r, h: b.h, name: b.name + "/" + sub}, nil
}

// Put stores value under the bound name with the handle's token: applied
// if the token is at least the highest the resource has seen for the
// name, refused with an error matching ErrStaleToken otherwise (see
// Resource.Put; the handle's state is not consulted, see Bound).
func (b *Bound) Put(ctx context.Context, value []byte) error {
	return b.r.Put(ctx, b.name, b.h.Token(), value)
}

// Get returns the value stored under the bound name and the token of the
// write that stored it (see Resource.Get). A read carries no token and is
// not fenced: it sees whatever the latest admitted write left.
func (b *Bound) Get(ctx context.Context) ([]byte, Token, error) {
	return b.r.Get(ctx, b.name)
}

// Delete removes the value under the bound name with the handle's token,
// leaving a tombstone (see Resource.Delete).
func (b *Bound) Delete(ctx context.Context) error {
	return b.r.Delete(ctx, b.name, b.h.Token())
}

// Highest returns the highest token the resource has accepted for the
// bound name (see Resource.Highest). When it is above the handle's token,
// a newer holder has written and every write of b will be refused.
func (b *Bound) Highest(ctx context.Context) (Token, error) {
	return b.r.Highest(ctx, b.name)
}
