// Package redisclient makes the go-redis clients of the URL openers of
// lockers/redis, lockers/redlock and resources/redis, so that every one
// of them behaves alike: its calls end when their context does. go-redis
// otherwise bounds a call by its own read and write timeouts only (5 s by
// default), and a server that accepts a connection and never answers
// holds a call that long whatever its context allowed
// (ContextTimeoutEnabled).
//
// go-redis logs through one logger for the whole process (its dial
// failures, Sentinel's answers), which writes on standard error unless
// the program gives it another with goredis.SetLogger. That logger is the
// program's to set: importing a Redis backend leaves it as it is.
package redisclient

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

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

// Quiet sets go-redis's process-wide logger to one that discards
// everything. Only programs call it (the fence command, the torture run):
// the logger is the program's, and importing a backend leaves it alone.
func Quiet() { goredis.SetLogger(discard{}) }

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
