package main

import "github.com/fencekit/fence/internal/redisclient"

// The command prints its own errors: go-redis's process-wide logger, which
// would write its dial failures on standard error, discards them.
func init() { redisclient.Quiet() }
