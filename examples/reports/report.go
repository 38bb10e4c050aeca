package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fencekit/fence"
)

// report counts what happened and checks the invariants at the end.
type report struct {
	envName string
	prefix  string

	mu             sync.Mutex
	tokens         map[string][]fence.Token // issued, per lock key
	accepted       map[string][]upload      // per object name, in the order the uploads returned
	tried          map[string]fence.Token   // per object name, the highest token of an upload accepted or refused
	busy, already  int
	stale          int
	pausedRejected bool
	errs           []string
	objects        []object
	invariants     []invariant
}

// upload is one upload the store accepted.
type upload struct {
	token  fence.Token
	csv    []byte
	worker string
}

// object is a report as read back from the store at the end.
type object struct {
	name  string
	token fence.Token // with which the store says it was written
	size  int
	err   error
	// The write the body names (see stamp); stampErr when it names none.
	stampToken  fence.Token
	stampWorker string
	stampErr    error
}

type invariant struct {
	what string
	ok   bool
	info string
}

func newReport(envName, prefix string) *report {
	return &report{envName: envName, prefix: prefix,
		tokens: map[string][]fence.Token{}, accepted: map[string][]upload{}, tried: map[string]fence.Token{}}
}

func (r *report) issued(key string, t fence.Token) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens[key] = append(r.tokens[key], t)
}

func (r *report) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// highestAccepted returns the highest token of an accepted upload of name.
func (r *report) highestAccepted(name string) fence.Token {
	r.mu.Lock()
	defer r.mu.Unlock()
	var h fence.Token
	for _, u := range r.accepted[name] {
		h = max(h, u.token)
	}
	return h
}

// outcome records and prints the result of a worker's job.
func (r *report) outcome(lg *logger, worker string, j job, name string, token fence.Token, csv []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var done *errAlreadyUploaded
	var stale *fence.StaleTokenError
	what := j.String()
	if j.redelivered {
		what += " (redelivered)"
	}
	if err == nil || errors.Is(err, fence.ErrStaleToken) {
		r.tried[name] = max(r.tried[name], token)
	}
	switch {
	case err == nil:
		r.accepted[name] = append(r.accepted[name], upload{token: token, csv: csv, worker: worker})
		lg.printf("%s: rendered %s and uploaded it with token %d (%d bytes)", worker, what, token, len(csv))
	case errors.Is(err, fence.ErrHeld):
		r.busy++
		lg.printf("%s: %s skipped: %s is busy, its holder renders it", worker, what, j.lockKey())
	case errors.As(err, &done):
		r.already++
		lg.printf("%s: %s skipped under token %d: %v", worker, what, token, err)
	case errors.As(err, &stale):
		r.stale++
		lg.printf("%s: upload of %s REJECTED: %v", worker, what, err)
	default:
		r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", worker, what, err))
		lg.printf("%s: %s FAILED: %v", worker, what, err)
	}
}

// pausedOutcome records and prints the paused worker's late upload.
func (r *report) pausedOutcome(lg *logger, worker string, j job, name string, token fence.Token, csv []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil || errors.Is(err, fence.ErrStaleToken) {
		r.tried[name] = max(r.tried[name], token)
	}
	switch {
	case err == nil:
		r.accepted[name] = append(r.accepted[name], upload{token: token, csv: csv, worker: worker})
		lg.printf("%s: stale upload of %s with token %d ACCEPTED", worker, j, token)
	case errors.Is(err, fence.ErrStaleToken):
		r.stale++
		r.pausedRejected = true
		lg.printf("%s: upload of %s REJECTED: %v", worker, j, err)
	default:
		r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", worker, j, err))
		lg.printf("%s: %s FAILED: %v", worker, j, err)
	}
}

// check reads every report back and evaluates the invariants.
func (r *report) check(ctx context.Context, st objectStore, ord *orders) error {
	var distinct []job
	for _, j := range jobs {
		if !slices.Contains(distinct, j) {
			distinct = append(distinct, j)
		}
	}
	submissions := len(jobs) + 1 // the redelivery of the paused worker's job

	r.mu.Lock()
	defer r.mu.Unlock()
	var finalOK, latestOK, onceOK, stampOK int
	var wrong, unstamped, decreasing []string
	for _, j := range distinct {
		name := j.objectName(r.prefix)
		body, tok, err := st.read(ctx, name)
		if err != nil && !errors.Is(err, fence.ErrNotFound) {
			return fmt.Errorf("read %s back: %w", name, err)
		}
		o := object{name: name, token: tok, size: len(body), err: err}
		if err == nil {
			o.stampToken, o.stampWorker, o.stampErr = stamp(body)
		}
		r.objects = append(r.objects, o)
		ups := r.accepted[name]
		// The figures are the final orders' when the body is what
		// rendering them now, under the write it names, gives.
		if err == nil && o.stampErr == nil && bytes.Equal(body, ord.render(j, o.stampToken, o.stampWorker)) {
			finalOK++
		} else {
			wrong = append(wrong, j.String())
		}
		if len(ups) > 0 {
			latest := slices.MaxFunc(ups, func(a, b upload) int { return cmp.Compare(a.token, b.token) })
			if err == nil && tok == latest.token && bytes.Equal(body, latest.csv) {
				latestOK++
			}
			// The body names the write that stored it: the token the
			// store recorded, the highest that tried to write the report,
			// and the worker whose upload that was.
			if err == nil && o.stampErr == nil && o.stampToken == tok && tok == r.tried[name] &&
				o.stampWorker == latest.worker && latest.token == tok {
				stampOK++
			} else {
				unstamped = append(unstamped, j.String())
			}
		} else {
			unstamped = append(unstamped, j.String())
		}
		if len(ups) == 1 {
			onceOK++
		}
		for i := 1; i < len(ups); i++ {
			if ups[i].token < ups[i-1].token {
				decreasing = append(decreasing, fmt.Sprintf("%s: token %d accepted after %d", j, ups[i].token, ups[i-1].token))
			}
		}
	}
	unique := true
	for key, toks := range r.tokens {
		sorted := slices.Clone(toks)
		slices.Sort(sorted)
		for i := 1; i < len(sorted); i++ {
			if sorted[i] == sorted[i-1] {
				unique = false
				r.errs = append(r.errs, fmt.Sprintf("token %d issued twice for %s", sorted[i], key))
			}
		}
	}
	// Each report uploaded once: the lease and the existence check make
	// duplicates skip, and the fence refuses the one stale upload. This
	// holds for this scenario, with one pause. Two holders pausing one after
	// the other between the existence check and the upload could both be
	// accepted, in token order; the fence then still leaves the later
	// holder's report, which the first two invariants check.
	skipped := r.busy + r.already + r.stale
	n := len(distinct)
	r.invariants = []invariant{
		{"every report is in the store, rendered from the final orders", finalOK == n,
			fmt.Sprintf("%d of %d", finalOK, n)},
		{"every report carries the token and content of its latest accepted upload", latestOK == n,
			fmt.Sprintf("%d of %d", latestOK, n)},
		{"every report's body names the write that stored it: its token, the highest tried, and worker",
			stampOK == n, fmt.Sprintf("%d of %d", stampOK, n)},
		{"tokens of accepted uploads never decrease per report", len(decreasing) == 0, strings.Join(decreasing, "; ")},
		{"each report was uploaded once, every other submission skipped or refused", onceOK == n && skipped == submissions-n,
			fmt.Sprintf("%d of %d uploaded once; %d submissions: %d busy, %d already uploaded, %d stale refused",
				onceOK, n, submissions, r.busy, r.already, r.stale)},
		{"the paused worker's stale upload was rejected with fence.ErrStaleToken", r.pausedRejected, ""},
		{"no token was issued twice for a key", unique, ""},
		{"no unexpected errors", len(r.errs) == 0, strings.Join(r.errs, "; ")},
	}
	if len(wrong) > 0 {
		r.invariants[0].info += "; not: " + strings.Join(wrong, ", ")
	}
	if len(unstamped) > 0 {
		r.invariants[2].info += "; not: " + strings.Join(unstamped, ", ")
	}
	return nil
}

// print writes the summary and returns the number of failed invariants.
func (r *report) print(w io.Writer) (failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(w, "\nsummary (%s)\n", r.envName)
	keys := make([]string, 0, len(r.tokens))
	for k := range r.tokens {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		toks := slices.Clone(r.tokens[k])
		slices.Sort(toks)
		fmt.Fprintf(w, "  tokens issued for %-28s %v\n", k, toks)
	}
	for _, o := range r.objects {
		short := strings.TrimPrefix(o.name, r.prefix)
		if o.err != nil {
			fmt.Fprintf(w, "  object %-24s MISSING: %v\n", short, o.err)
			continue
		}
		by := "names no write: " + fmt.Sprint(o.stampErr)
		if o.stampErr == nil {
			by = fmt.Sprintf("body: token %d by %s", o.stampToken, o.stampWorker)
		}
		fmt.Fprintf(w, "  object %-24s token %d (%s), %d bytes, %d upload(s) accepted\n",
			short, o.token, by, o.size, len(r.accepted[o.name]))
	}
	fmt.Fprintf(w, "  skipped as busy: %d, skipped as already uploaded: %d, stale uploads rejected: %d\n",
		r.busy, r.already, r.stale)
	fmt.Fprintln(w, "invariants")
	for _, inv := range r.invariants {
		mark := "ok  "
		if !inv.ok {
			mark = "FAIL"
			failed++
		}
		line := fmt.Sprintf("  %s %s", mark, inv.what)
		if inv.info != "" {
			line += " (" + inv.info + ")"
		}
		fmt.Fprintln(w, line)
	}
	return failed
}
