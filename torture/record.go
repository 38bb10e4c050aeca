package torture

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// Outcome is how a write attempt ended, as its worker saw it.
type Outcome int

const (
	// Applied: the resource acknowledged the write.
	Applied Outcome = iota + 1
	// Stale: the resource refused the write with fence.ErrStaleToken.
	Stale
	// Failed: the write failed before reaching the store, so it was not
	// applied (bad input, or the read before it failed).
	Failed
	// Unknown: the write failed after it may have been sent (a timeout,
	// a dropped answer, a cut connection): it may or may not have been
	// applied.
	Unknown
)

// String returns the outcome in words.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Stale:
		return "stale-rejected"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// outcomeOf classifies the error of a Put.
func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Applied
	case errors.Is(err, fence.ErrStaleToken):
		return Stale
	case errors.Is(err, fence.ErrInvalid), errors.Is(err, fence.ErrCorrupt):
		return Failed
	}
	return Unknown
}

// Attempt is one read-modify-write by a worker: the read, then the write
// of the list it read plus its own entry.
type Attempt struct {
	Worker, Seq int
	// Key is the lease key; Name the resource written.
	Key, Name string
	Token     fence.Token
	// Parent is the ID of the last entry of the list read, "" when the
	// list was empty or absent.
	Parent string
	// ReadStart is when the read began; Start and End bound the write.
	ReadStart, Start, End time.Time
	Outcome               Outcome
	// Paused is true when the worker paused longer than the TTL between
	// its read and its write (or between acquiring and reading).
	Paused bool
	// Err is the write's error, if any.
	Err string
}

// ID names the attempt's write, as Entry.ID does.
func (a Attempt) ID() string { return entryID(a.Worker, a.Seq) }

// String describes a for a violation report.
func (a Attempt) String() string {
	s := fmt.Sprintf("%s of %q with token %d (%s", a.ID(), a.Name, a.Token, a.Outcome)
	if a.Paused {
		s += ", after a pause"
	}
	return s + ")"
}

// Read is one read of a resource by a worker, for the linearizability
// check: it saw the list whose last entry is Last ("" if empty).
type Read struct {
	Worker     int
	Name, Last string
	Start, End time.Time
	// Claim, when not 0, makes this the record of a claim of Name with
	// that token (fence.Resource.Claim) before a read, not of the read:
	// Claimed says how it ended, and Last is empty.
	Claim   fence.Token
	Claimed Outcome
}

// Recorder collects attempts, reads and how leases ended from many
// goroutines.
type Recorder struct {
	mu         sync.Mutex
	attempts   []Attempt
	reads      []Read
	leases     int
	leasesLost int
	longJobs   []LongJob
	refused    []Refusal
}

func (r *Recorder) attempt(a Attempt) {
	r.mu.Lock()
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
}

// appliedAbove reports whether a write on the resource name with a token
// above t has been applied.
func (r *Recorder) appliedAbove(name string, t fence.Token) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.attempts {
		if a.Name == name && a.Token > t && a.Outcome == Applied {
			return true
		}
	}
	return false
}

func (r *Recorder) read(rd Read) {
	r.mu.Lock()
	r.reads = append(r.reads, rd)
	r.mu.Unlock()
}

func (r *Recorder) lease() {
	r.mu.Lock()
	r.leases++
	r.mu.Unlock()
}

// Attempts returns a copy of the recorded attempts.
func (r *Recorder) Attempts() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.attempts)
}

// Reads returns a copy of the recorded reads.
func (r *Recorder) Reads() []Read {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reads)
}

// Leases returns how many leases the workers took.
func (r *Recorder) Leases() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leases
}

func (r *Recorder) leaseLost() {
	r.mu.Lock()
	r.leasesLost++
	r.mu.Unlock()
}

func (r *Recorder) longJob(j LongJob) {
	r.mu.Lock()
	r.longJobs = append(r.longJobs, j)
	r.mu.Unlock()
}

func (r *Recorder) refusal(x Refusal) {
	r.mu.Lock()
	r.refused = append(r.refused, x)
	r.mu.Unlock()
}

// LeasesLost returns how many leases ended lost.
func (r *Recorder) LeasesLost() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leasesLost
}

// LongJobs returns a copy of the recorded long jobs.
func (r *Recorder) LongJobs() []LongJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.longJobs)
}

// Refused returns a copy of the recorded refused releases.
func (r *Recorder) Refused() []Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.refused)
}
