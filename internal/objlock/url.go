package objlock

import (
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/urlparam"
)

// ParseURLParams reads the URL parameters every object-store locker takes
// besides its bucket and prefix: backoff (at most maxBackoff; 0 for the
// default), the expiry mode (trusted-clock, max-clock-skew) and the probe
// interval. Bad values are recorded in p, as p.Fail does.
func ParseURLParams(p *urlparam.Params, maxBackoff time.Duration) (backoff time.Duration, mode clockfree.Mode, probeInterval time.Duration) {
	if backoff = p.Duration("backoff"); backoff > maxBackoff {
		p.Fail("backoff=%v is outside the range 0 to %v", backoff, maxBackoff)
	}
	mode = clockfree.FromURL(p)
	if ie, ok := mode.Check().(*fence.InvalidError); ok {
		p.Fail("max-clock-skew: %s", ie.Reason)
	}
	return backoff, mode, probe.FromURL(p)
}
