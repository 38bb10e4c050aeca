package election

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// Options configure a Candidate. A nil *Options, and every zero field,
// means the documented default. New rejects impossible settings with an
// error matching fence.ErrInvalid. The lease of each term (its TTL,
// renewals, safety margin, clock) is the session's: see
// fence.SessionOptions.
type Options struct {
	// RetryInterval is the time a follower waits between two attempts to
	// take the key, on the session's clock. Each wait is drawn at random
	// from [RetryInterval/2, RetryInterval], so that candidates started
	// together spread out. After a leader dies, a follower takes over
	// within about the session's TTL + RetryInterval. Default: a third of
	// the session's TTL.
	RetryInterval time.Duration

	// Holdoff is how long a candidate waits before campaigning again after
	// its term ended by Resign or by its function returning. It should
	// exceed RetryInterval so that another candidate, whose next attempt
	// comes at most RetryInterval later, takes over first. Default:
	// 2 × RetryInterval.
	Holdoff time.Duration

	// Value is the public value the candidate publishes with each of its
	// terms (fence.Handle.Publish), before the leader's function runs and
	// before Observer.Elected: followers (Observe, CurrentLeader) read it
	// with the term. It is an address, say, never a secret: anyone who
	// can read the store reads it. At most fence.MaxValueLen bytes;
	// Candidate.Proclaim changes it. Default: empty (the term is still
	// published, with no value, to wake the followers).
	Value string

	// Observer receives elections, demotions and the leader's failures.
	// Default: nil.
	Observer *Observer
}

// settings are validated Options with defaults filled in.
type settings struct {
	retry, holdoff time.Duration
	clock          fence.Clock
	obs            *Observer
	value          string
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve fills defaults into a copy of o and validates the result for a
// session with leases of ttl.
func resolve(ttl time.Duration, o *Options) (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	var s settings
	switch {
	case in.RetryInterval < 0:
		return s, invalid("RetryInterval", "%v is negative", in.RetryInterval)
	case in.Holdoff < 0:
		return s, invalid("Holdoff", "%v is negative", in.Holdoff)
	case len(in.Value) > fence.MaxValueLen:
		return s, invalid("Value", "%d bytes exceed fence.MaxValueLen (%d)", len(in.Value), fence.MaxValueLen)
	}
	s.retry = in.RetryInterval
	if s.retry == 0 {
		s.retry = ttl / 3
	}
	if s.retry <= 0 {
		return s, invalid("RetryInterval", "the session's TTL %v is too short for the default", ttl)
	}
	s.holdoff = in.Holdoff
	if s.holdoff == 0 {
		s.holdoff = 2 * s.retry
	}
	s.obs = in.Observer
	s.value = in.Value
	return s, nil
}
