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

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Prefix starts the Redis key of every value: the value named N is
	// the hash PREFIX + N. Default: DefaultPrefix.
	Prefix string
}

// New returns a resource that keeps its values in Redis through client,
// under opts.Prefix; it is safe for concurrent use. It does not contact
// the server. Its Close does not close client.
func New(client goredis.UniversalClient, opts *Options) (*fence.Resource, error) {
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
	return driver.NewResource(&store{c: client, prefix: o.Prefix}, nil)
}

// checkOptions checks o and sets its defaults.
func checkOptions(o *Options) error {
	p, err := redisscript.Prefix(o.Prefix, DefaultPrefix)
	o.Prefix = p
	return err
}
