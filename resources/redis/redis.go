package redis

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisscript"
)

// Limits and defaults.
const (
	// MaxKeyLen is the longest name accepted, in bytes.
	MaxKeyLen = 1024
	// DefaultPrefix starts the Redis key of every value when
	// Options.Prefix is empty.
	DefaultPrefix = "fence:value:"
)

// Options configure a Resource. A nil *Options means all defaults.
type Options struct {
	// Prefix starts the Redis key of every value: the value named N is
	// the hash PREFIX + N. Default: DefaultPrefix.
	Prefix string
}

// Resource is a fence.Resource on Redis: the portable resource (its
// methods are fence.Resource's) over this package's driver. Create it
// with New; it is safe for concurrent use.
type Resource struct {
	*fence.Resource
	d *store
}

var _ fence.Resource = (*Resource)(nil)

// New returns a Resource that keeps its values in Redis through client,
// under opts.Prefix. It does not contact the server.
func New(client goredis.UniversalClient, opts *Options) (*Resource, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkOptions(&o); err != nil {
		return nil, err
	}
	d := &store{c: client, prefix: o.Prefix}
	pr, err := driver.NewResource(d)
	if err != nil {
		return nil, err
	}
	return &Resource{PortableResource: pr, d: d}, nil
}

// checkOptions checks o and sets its defaults.
func checkOptions(o *Options) error {
	p, err := redisscript.Prefix(o.Prefix, DefaultPrefix)
	o.Prefix = p
	return err
}

// Key returns the name of the Redis hash that holds the value name.
func (r *Resource) Key(name string) string { return r.d.key(name) }
