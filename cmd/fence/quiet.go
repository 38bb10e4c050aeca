package main

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// The command prints its own errors: go-redis's process-wide logger, which
// would write its dial failures on standard error, discards them.
func init() { goredis.SetLogger(discardRedis{}) }

type discardRedis struct{}

func (discardRedis) Printf(context.Context, string, ...any) {}
