// Package redisclient makes the go-redis clients of the URL openers of
// lockers/redis, lockers/redlock and resources/redis, so that every one
// of them behaves alike:
//
//   - Its calls end when their context does: go-redis otherwise bounds a
//     call by its own read and write timeouts only (5 s by default), and
//     a server that accepts a connection and never answers holds a call
//     that long whatever its context allowed (ContextTimeoutEnabled).
//   - It writes nothing on standard error. go-redis logs through one
//     logger for the whole process (its dial failures, Sentinel's
//     answers), which writes there unless given another: importing this
//     package, as every Redis backend of fence does, sets it to one that
//     discards everything. A program that wants go-redis's lines calls
//     goredis.SetLogger with its own logger (after its imports' init
//     functions have run, as anything in main does); it then gets the
//     lines of fence's clients too.
package redisclient

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

func init() { goredis.SetLogger(discard{}) }

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// New returns the client of o, a single server's, with its calls bounded
// by their contexts. It sets o.ContextTimeoutEnabled.
func New(o *goredis.Options) *goredis.Client {
	o.ContextTimeoutEnabled = true
	return goredis.NewClient(o)
}

// NewFailover returns the client of o, a primary's behind Sentinel, with
// the calls to the data nodes and to the Sentinels bounded by their
// contexts. It sets o.ContextTimeoutEnabled.
func NewFailover(o *goredis.FailoverOptions) *goredis.Client {
	o.ContextTimeoutEnabled = true
	return goredis.NewFailoverClient(o)
}
