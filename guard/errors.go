package guard

import "github.com/fencekit/fence"

// ErrDeadlinePassed: the local safety deadline of a lease passed before a
// renewal succeeded. See DeadlineError.
var ErrDeadlinePassed = fence.ErrDeadlinePassed

// DeadlineError is the reason (LeaseLostError.Err) of a lease lost because
// its local safety deadline passed while renewals failed transiently or
// hung: fence.DeadlineError.
type DeadlineError = fence.DeadlineError

// ReconcileError is the reason (LeaseLostError.Err) of a lease found lost
// when the session re-read the record after a renewal with an ambiguous
// outcome: fence.ReconcileError.
type ReconcileError = fence.ReconcileError
