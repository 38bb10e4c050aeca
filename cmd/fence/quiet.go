package main

import "github.com/fencekit/fence/internal/sdklog"

// The command prints its own errors: go-redis's and client-go's
// process-wide loggers, which would write dial failures and cut responses
// on standard error, discard them.
func init() { sdklog.Quiet() }
