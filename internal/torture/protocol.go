package torture

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// The protocol between the run's process and its worker processes (see
// Config.Processes): one JSON message a line, the child's on a pipe of
// its own (fd 3), the parent's on the child's stdin. A child sends each
// record as it happens, so that one killed loses nothing it had sent.

// envWorker holds, in a worker process's environment, its childSpec as
// JSON.
const envWorker = "FENCE_TORTURE_WORKER"

// message is one line of the protocol: a method (a Recorder call, a
// request, a notice) and its argument.
type message struct {
	M string          `json:"m"`
	V json.RawMessage `json:"v,omitempty"`
}

// The child's messages beyond the forwarded Recorder calls.
const (
	msgBegin   = "begin"   // Attempt: a write about to be sent
	msgClaim   = "claim"   // Read: a claim about to be sent
	msgRead    = "read"    // Read: a read or a claim, with its outcome
	msgAttempt = "attempt" // Attempt: the write with its outcome
	msgFault   = "fault"   // string: a fault kind counted
	msgLog     = "log"     // string: a progress message
	msgHold    = "hold"    // string: the key of the lease held, "" when none
	msgHTTP    = "http"    // the worker's first HTTP request
	msgRequest = "req"     // request: answered by msgAnswer
	msgReady   = "ready"   // the worker opened its stores: it waits for msgStart
)

// The parent's messages.
const (
	msgAwaited = "awaited" // string: see worker.awaited ("" for none)
	msgBegun   = "begun"   // worker 1's guaranteed pause began
	msgAnswer  = "answer"  // int: the request answered
	msgOutage  = "outage"  // time.Duration: an outage of the HTTP path
	msgStart   = "start"   // time.Time: the run began; it ends then
)

// request is a child's request to the run's process.
type request struct {
	ID int    `json:"id"`
	Op string `json:"op"` // opStop, opCalm, opUncalm
	// Key, Name and Token, for opStop: the lease and the name read.
	Key   string      `json:"key,omitempty"`
	Name  string      `json:"name,omitempty"`
	Token fence.Token `json:"token,omitempty"`
}

const (
	// opStop: worker 1's guaranteed pause; the parent stops the process
	// (see procRun.guaranteedStop) and answers once it continued.
	opStop = "stop"
	// opCalm and opUncalm take and give back Stage.calm for reading.
	opCalm   = "calm"
	opUncalm = "uncalm"
)

// childSpec is what a worker process needs, in its environment.
type childSpec struct {
	Pair    string   // the pair's name in Pairs, for its ResourceKind.Unfenced
	ID      int      // the worker's number, never reused in a run
	StageID string   // the run's Stage.ID
	Keys    []string // the lease keys
	LongKey string   // the guaranteed long job's key, for its worker
	// LockerURL and ResourceURL are the faulty URLs, CleanURL the
	// resource's clean one.
	LockerURL, ResourceURL, CleanURL string
	TTL                              time.Duration
	MaxSkew                          time.Duration // the LockerKind's
	Offset                           time.Duration // of the worker's clock
	Config                           Config
	// Deadline is the run's end; zero for a worker started before the
	// run, which waits for msgStart.
	Deadline time.Time
	// PauseBegun and Awaited are the shared state at the child's start.
	PauseBegun bool
	Awaited    string
	// Logs: forward progress messages.
	Logs bool
}

// encodeMessage returns the line of method m with argument v (nil for
// none).
func encodeMessage(m string, v any) ([]byte, error) {
	msg := message{M: m}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		msg.V = b
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// mustEncode is encodeMessage for the two ends' sends: the protocol's
// values always marshal.
func mustEncode(m string, v any) []byte {
	b, err := encodeMessage(m, v)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeMessage parses one line.
func decodeMessage(line []byte) (message, error) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return message{}, fmt.Errorf("torture: bad message %q: %w", line, err)
	}
	return m, nil
}

// arg decodes m's argument.
func arg[T any](m message) (T, error) {
	var v T
	if err := json.Unmarshal(m.V, &v); err != nil {
		return v, fmt.Errorf("torture: bad %s message %q: %w", m.M, m.V, err)
	}
	return v, nil
}

// forwarded are the Recorder calls a worker process forwards, by method
// (childRecorder sends them): adding one is a line here and one there.
var forwarded = map[string]func(*Recorder, message) error{
	"leaseTaken": with((*Recorder).leaseTaken),
	"leaseLost":  func(r *Recorder, _ message) error { r.leaseLost(); return nil },
	"longJob":    with((*Recorder).longJob),
	"refusal":    with((*Recorder).refusal),
}

// with returns the forwarding of a Recorder method of one argument.
func with[T any](f func(*Recorder, T)) func(*Recorder, message) error {
	return func(r *Recorder, m message) error {
		v, err := arg[T](m)
		if err != nil {
			return err
		}
		f(r, v)
		return nil
	}
}

// childRecorder is a worker process's recorder: it sends each call to the
// run's process.
type childRecorder struct{ l *childLink }

var _ recorder = childRecorder{}

func (c childRecorder) begin(a Attempt)         { c.l.send(msgBegin, a) }
func (c childRecorder) beginClaim(rd Read)      { c.l.send(msgClaim, rd) }
func (c childRecorder) attempt(a Attempt)       { c.l.send(msgAttempt, a) }
func (c childRecorder) read(rd Read)            { c.l.send(msgRead, rd) }
func (c childRecorder) leaseTaken(t LeaseTaken) { c.l.send("leaseTaken", t) }
func (c childRecorder) leaseLost()              { c.l.send("leaseLost", nil) }
func (c childRecorder) longJob(j LongJob)       { c.l.send("longJob", j) }
func (c childRecorder) refusal(x Refusal)       { c.l.send("refusal", x) }

// appliedAbove is asked only by an in-process guaranteed pause; a worker
// process's is the run's process's (procRun.guaranteedStop).
func (c childRecorder) appliedAbove(string, fence.Token) bool { return false }
