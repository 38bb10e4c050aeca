package main

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs its connection pool's dial failures to stderr on its own;
// the command reports the store's errors itself, once and scrubbed.
func init() { goredis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
