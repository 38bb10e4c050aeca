package torture

import "github.com/fencekit/fence/internal/redisclient"

// The run reports what its clients meet in its own table and logs:
// go-redis's process-wide logger, which would print every dial failure of
// a Sentinel failover on standard error, discards them. The run and its
// worker processes are the only programs that import this package.
func init() { redisclient.Quiet() }
