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

// recorder is what a worker records: a *Recorder in the run's process,
// a childRecorder (see process.go) in a worker process, which forwards
// each call to the run's Recorder. Forwarding a new method is a line in
// childRecorder and one in forwarded.
type recorder interface {
	// begin announces a write about to be sent; attempt records it with
	// its outcome.
	begin(Attempt)
	// beginClaim announces a claim about to be sent; read records it with
	// its outcome.
	beginClaim(Read)
	attempt(Attempt)
	read(Read)
	leaseTaken(LeaseTaken)
	leaseLost()
	longJob(LongJob)
	refusal(Refusal)
	appliedAbove(name string, t fence.Token) bool
}

var _ recorder = (*Recorder)(nil)

// Recorder collects attempts, reads and how leases ended from many
// goroutines.
type Recorder struct {
	mu         sync.Mutex
	attempts   []Attempt
	reads      []Read
	leases     int
	taken      []LeaseTaken
	leasesLost int
	longJobs   []LongJob
	refused    []Refusal
}

// begin does nothing: in the run's process a write in flight when the run
// ends is recorded by its worker, which outlives it.
func (r *Recorder) begin(Attempt) {}

// beginClaim does nothing, as begin.
func (r *Recorder) beginClaim(Read) {}

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

// LeaseTaken is one lease a worker took, as its guard handed it over.
type LeaseTaken struct {
	Worker     int
	Key, Owner string
	Token      fence.Token
	// Sent is when the acquisition's request was sent, on the worker's
	// clock (the lease's ValidUntil less its TTL); At is when the worker
	// got the lease (the guard called it back), on the true clock.
	Sent, At time.Time
}

// String describes l for a violation report.
func (l LeaseTaken) String() string {
	return fmt.Sprintf("worker %d's lease of %q with token %d (%s, at %s)", l.Worker, l.Key, l.Token, fence.OwnerFingerprint(l.Owner), l.At.Format("15:04:05.000"))
}

// taken returns the record of worker's lease h, handed over now.
func taken(worker int, h *fence.Handle) LeaseTaken {
	l := h.Lease()
	return LeaseTaken{Worker: worker, Key: l.Key, Owner: l.Owner, Token: l.Token, Sent: l.ValidUntil.Add(-l.TTL), At: time.Now()}
}

// leaseTaken counts a lease taken and records it for the locker-side
// check (CheckLeases).
func (r *Recorder) leaseTaken(t LeaseTaken) {
	r.mu.Lock()
	r.leases++
	r.taken = append(r.taken, t)
	r.mu.Unlock()
}

// LeasesTaken returns a copy of the recorded leases.
func (r *Recorder) LeasesTaken() []LeaseTaken {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.taken)
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
