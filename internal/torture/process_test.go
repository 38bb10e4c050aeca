package torture

import (
	"bytes"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// newTestProcRun returns a procRun with nothing to spawn, for feeding it
// messages.
func newTestProcRun(t *testing.T) *procRun {
	return &procRun{
		cfg: &Config{OpTimeout: time.Second}, stage: &Stage{ID: "t", Counts: &Counts{}}, rec: &Recorder{},
		logf: t.Logf, kind: LockerKind{TTL: time.Second}, procs: map[int]*proc{},
	}
}

// TestForwardedRecords: every record a worker process sends (write
// attempts, reads, leases, losses, long jobs, refusals, fault counts)
// reaches the run's Recorder and Counts as it was.
func TestForwardedRecords(t *testing.T) {
	t.Parallel()
	at := func(ms int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(ms)).UTC() }
	var lines bytes.Buffer
	link := newChildLink(&lines)
	var c recorder = childRecorder{link}
	counts := &Counts{onAdd: func(kind string) { link.send(msgFault, kind) }}

	a1 := Attempt{Worker: 3, Seq: 1, Key: "k", Name: "n", Token: 7, Parent: "w2.4", ReadStart: at(1), Start: at(2), End: at(3), Outcome: Applied}
	a2 := Attempt{Worker: 3, Seq: 2, Key: "k", Name: "n", Token: 7, ReadStart: at(4), Start: at(5), End: at(6), Outcome: Stale, Paused: true, Err: "stale"}
	rd := Read{Worker: 3, Name: "n", Last: "w3.1", Start: at(7), End: at(8)}
	job := LongJob{Worker: 3, Key: "long", Token: 9, Clean: true, Renewals: 5, Released: true}
	ref := Refusal{Worker: 3, Key: "k", Token: 7, Renewals: 2, Long: true, Err: "not held"}
	c.begin(a1)
	c.attempt(a1)
	c.begin(a2)
	c.attempt(a2)
	c.read(rd)
	l1 := LeaseTaken{Worker: 3, Key: "k", Owner: "o1", Token: 7, Sent: at(0), At: at(1)}
	l2 := LeaseTaken{Worker: 3, Key: "k", Owner: "o2", Token: 8, Sent: at(9), At: at(10)}
	c.leaseTaken(l1)
	c.leaseTaken(l2)
	c.leaseLost()
	c.longJob(job)
	c.refusal(ref)
	counts.Add(FaultDelay)
	counts.Add(FaultDelay)
	counts.Add(FaultDropResponse)

	r := newTestProcRun(t)
	p := &proc{id: 3, pending: map[int]Attempt{}}
	for _, line := range bytes.Split(bytes.TrimSpace(lines.Bytes()), []byte("\n")) {
		if err := r.handle(p, line); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := r.rec.Attempts(), []Attempt{a1, a2}; !reflect.DeepEqual(got, want) {
		t.Errorf("attempts\n%+v\nwant\n%+v", got, want)
	}
	if len(p.pending) != 0 {
		t.Errorf("completed writes still open: %+v", p.pending)
	}
	if got, want := r.rec.Reads(), []Read{rd}; !reflect.DeepEqual(got, want) {
		t.Errorf("reads %+v; want %+v", got, want)
	}
	if got, want := r.rec.LeasesTaken(), []LeaseTaken{l1, l2}; !reflect.DeepEqual(got, want) {
		t.Errorf("leases taken %+v; want %+v", got, want)
	}
	if r.rec.Leases() != 2 || r.rec.LeasesLost() != 1 {
		t.Errorf("leases %d, lost %d; want 2, 1", r.rec.Leases(), r.rec.LeasesLost())
	}
	if got := r.rec.LongJobs(); !reflect.DeepEqual(got, []LongJob{job}) {
		t.Errorf("long jobs %+v; want %+v", got, job)
	}
	if got := r.rec.Refused(); !reflect.DeepEqual(got, []Refusal{ref}) {
		t.Errorf("refusals %+v; want %+v", got, ref)
	}
	if got, want := r.stage.Counts.Snapshot(), map[string]int{FaultDelay: 2, FaultDropResponse: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("counts %v; want %v", got, want)
	}
}

// TestBadMessages: a line that is not a message, an unknown method and a
// bad argument are errors, not records.
func TestBadMessages(t *testing.T) {
	t.Parallel()
	r := newTestProcRun(t)
	p := &proc{id: 1, pending: map[int]Attempt{}}
	for _, line := range []string{`not json`, `{"m":"nosuch"}`, `{"m":"attempt","v":"x"}`, `{"m":"read","v":[1]}`} {
		if err := r.handle(p, []byte(line)); err == nil {
			t.Errorf("handle(%s): no error", line)
		}
	}
	if n := len(r.rec.Attempts()) + len(r.rec.Reads()); n != 0 {
		t.Errorf("%d records from bad lines", n)
	}
	if err := newChildLink(&bytes.Buffer{}).handle([]byte(`{"m":"answer","v":5}`)); err == nil {
		t.Error("an answer to no request: no error")
	}
}

// envTestChild makes the test binary a fake worker process (see
// TestFakeWorker): "kill" sends an applied write and announces a second,
// "tick" sends a read every 10 ms; both then wait to be killed.
const envTestChild = "FENCE_TORTURE_TEST_CHILD"

// TestFakeWorker is the fake worker process of the tests below; it skips
// when not started as one.
func TestFakeWorker(t *testing.T) {
	mode := os.Getenv(envTestChild)
	if mode == "" {
		t.Skip("run as a worker process by the tests of process.go")
	}
	c := childRecorder{newChildLink(os.NewFile(3, "events"))}
	switch mode {
	case "kill":
		c.begin(Attempt{Worker: 5, Seq: 1, Name: "n", Token: 1})
		c.attempt(Attempt{Worker: 5, Seq: 1, Name: "n", Token: 1, Outcome: Applied})
		c.begin(Attempt{Worker: 5, Seq: 2, Name: "n", Token: 1})
	case "kill-claim":
		c.beginClaim(Read{Worker: 5, Name: "n", Claim: 3, Start: time.Now()})
		c.read(Read{Worker: 5, Name: "n", Claim: 3, Claimed: Applied, Start: time.Now(), End: time.Now()})
		c.beginClaim(Read{Worker: 5, Name: "m", Claim: 4, Start: time.Now()})
	case "tick":
		for {
			c.read(Read{Worker: 5, Name: "n", Start: time.Now(), End: time.Now()})
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(time.Minute)
}

// startFake starts the fake worker process in mode as worker 5 of r.
func startFake(t *testing.T, r *procRun, mode string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestFakeWorker$")
	cmd.Env = append(os.Environ(), envTestChild+"="+mode)
	p, err := r.launch(5, cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.kill(p)
		r.wg.Wait()
	})
	return p
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKilledWorkerWriteUnknown: a worker process killed after announcing
// a write and before completing it leaves that write recorded as Unknown
// (it may have been applied), and its completed write as it was.
func TestKilledWorkerWriteUnknown(t *testing.T) {
	t.Parallel()
	r := newTestProcRun(t)
	p := startFake(t, r, "kill")
	waitFor(t, "the announced write", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		_, ok := p.pending[2]
		return ok
	})
	before := time.Now()
	r.kill(p)
	got := r.rec.Attempts()
	if len(got) != 2 || got[0].Seq != 1 || got[0].Outcome != Applied || got[1].Seq != 2 || got[1].Outcome != Unknown {
		t.Fatalf("attempts %+v; want w5.1 applied, w5.2 unknown", got)
	}
	if got[1].End.Before(before) || !strings.Contains(got[1].Err, "ended") {
		t.Errorf("the killed write ends at %v (kill at %v) with %q", got[1].End, before, got[1].Err)
	}
	if len(r.live()) != 0 {
		t.Errorf("a killed worker is still live")
	}
}

// TestKilledWorkerClaimUnknown: a claim announced by a worker process
// that is killed before its outcome comes is recorded as of unknown
// outcome (it may have raised the name's mark), one completed as it was.
func TestKilledWorkerClaimUnknown(t *testing.T) {
	t.Parallel()
	r := newTestProcRun(t)
	p := startFake(t, r, "kill-claim")
	waitFor(t, "the announced claim", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.claim != nil && p.claim.Name == "m"
	})
	before := time.Now()
	r.kill(p)
	got := r.rec.Reads()
	if len(got) != 2 || got[0].Name != "n" || got[0].Claimed != Applied || got[1].Name != "m" || got[1].Claim != 4 || got[1].Claimed != Unknown {
		t.Fatalf("reads %+v; want the claim of n applied, that of m unknown", got)
	}
	if got[1].End.Before(before) {
		t.Errorf("the killed claim ends at %v, before the kill at %v", got[1].End, before)
	}
}

// TestStoppedWorkerSendsNothing: a worker process stopped by stopFor
// sends nothing while stopped, all its goroutines with it, and goes on
// afterwards.
func TestStoppedWorkerSendsNothing(t *testing.T) {
	t.Parallel()
	r := newTestProcRun(t)
	p := startFake(t, r, "tick")
	waitFor(t, "a first read", func() bool { return len(r.rec.Reads()) > 0 })
	const stop = 500 * time.Millisecond
	p.stopped.Lock()
	r.stopFor(p, stop)
	n := len(r.rec.Reads())
	waitFor(t, "reads after the stop", func() bool { return len(r.rec.Reads()) > n+5 })
	if r.stage.Counts.Get(FaultSigstop) != 1 {
		t.Errorf("sigstop counted %d times; want 1", r.stage.Counts.Get(FaultSigstop))
	}
	reads := r.rec.Reads()
	slices.SortFunc(reads, func(a, b Read) int { return a.Start.Compare(b.Start) })
	var gap time.Duration
	for i := 1; i < len(reads); i++ {
		gap = max(gap, reads[i].Start.Sub(reads[i-1].Start))
	}
	if gap < stop*9/10 {
		t.Errorf("longest gap between reads %v; a stop of %v should leave one as long", gap, stop)
	}
}
