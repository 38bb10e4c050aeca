package torture

import "github.com/fencekit/fence/internal/sdklog"

// The run reports what its clients meet in its own table and logs:
// go-redis's and client-go's process-wide loggers, which would print every
// dial failure of a Sentinel failover and every response a fault cut on
// standard error, discard them. The run and its worker processes are the
// only programs that import this package.
func init() { sdklog.Quiet() }
