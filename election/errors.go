package election

import "errors"

// Sentinel errors of package election.
var (
	// ErrResigned is the cause of the leader's context when Resign ended
	// its term.
	ErrResigned = errors.New("election: leader resigned")
	// ErrReturned is the demotion cause reported to Observer.Demoted when
	// the leader's function returned while its term was still running.
	ErrReturned = errors.New("election: leader function returned")
	// ErrCampaigning is returned by Campaign when the candidate is already
	// campaigning: each Candidate campaigns once at a time.
	ErrCampaigning = errors.New("election: candidate already campaigning")
)
