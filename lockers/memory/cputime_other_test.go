//go:build !unix

package memory

import "time"

// cpuTime returns 0 where the process's CPU time is not read.
func cpuTime() time.Duration { return 0 }
