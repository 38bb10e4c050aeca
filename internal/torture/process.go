package torture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// procRun runs a run's workers as processes (Config.Processes): it
// spawns them, answers their requests, records what they send in the
// run's Recorder, and stops and kills them.
type procRun struct {
	cfg   *Config
	stage *Stage
	rec   *Recorder
	logf  func(string, ...any)
	kind  LockerKind
	spec  childSpec // the template of every worker's

	mu         sync.Mutex
	procs      map[int]*proc // the live ones, by worker number
	nextID     int
	pauseEnded bool // worker 1's guaranteed pause ended
	httpOnce   sync.Once
	wg         sync.WaitGroup // the process handlers
}

// proc is one worker process.
type proc struct {
	id  int
	cmd *exec.Cmd

	inMu sync.Mutex
	in   io.WriteCloser

	// stopped is held while the process is stopped.
	stopped sync.Mutex

	mu      sync.Mutex
	key     string          // of the lease it holds, "" for none
	calm    bool            // it holds Stage.calm for reading
	pending map[int]Attempt // writes announced and not completed, by Seq
	claim   *Read           // the claim announced and not completed, if any
	killed  bool            // by the run
	done    chan struct{}   // closed once it ended and its writes were recorded
	ready   chan struct{}   // closed when it opened its stores (msgReady)
	stderr  tail
}

// newProcRun returns how to run pair's workers as processes, or nil when
// a store of the pair lives in this process (a mem:// URL).
func newProcRun(ctx context.Context, pair Pair, cfg *Config, s *Stage, keys []string, rec *Recorder, logf func(string, ...any)) (*procRun, error) {
	lockerURL, _, err := pair.Locker.URL(ctx, s)
	if err != nil {
		return nil, err
	}
	resURL, cleanURL, err := pair.Resource.URL(ctx, s)
	if err != nil {
		return nil, err
	}
	if inProcess(lockerURL) || inProcess(resURL) {
		return nil, nil
	}
	c := *cfg
	c.Processes = false
	return &procRun{
		cfg: cfg, stage: s, rec: rec, logf: logf, kind: pair.Locker, procs: map[int]*proc{}, nextID: 1,
		spec: childSpec{
			Pair: pair.Name(), StageID: s.ID, Keys: keys,
			LockerURL: lockerURL, ResourceURL: resURL, CleanURL: cleanURL,
			TTL: pair.Locker.TTL, MaxSkew: pair.Locker.MaxSkew, Config: c, Logs: cfg.Logf != nil,
		},
	}, nil
}

// inProcess tells whether a store URL names a store in this process.
func inProcess(rawURL string) bool { return strings.HasPrefix(rawURL, "mem:") }

// endMargin is how long after the run's deadline its workers may take to
// end: a pause that began in time ends by the deadline, and then its
// read, write and release follow.
func (r *procRun) endMargin() time.Duration { return 2*r.cfg.OpTimeout + 2*r.kind.TTL }

// prepare starts the workers, the last with the guaranteed long job on
// longKey, and waits until they opened their stores: a process's start
// takes CPU, which would starve the runs going. A worker that fails to
// start is started again, twice at the most (it wrote nothing yet, so
// its number is free).
func (r *procRun) prepare(ctx context.Context, longKey string) error {
	var wg sync.WaitGroup
	errs := make([]error, r.cfg.Workers)
	for i := range r.cfg.Workers {
		lk := ""
		if i == r.cfg.Workers-1 && r.cfg.Workers >= 2 {
			lk = longKey
		}
		r.mu.Lock()
		id := r.nextID
		r.nextID++
		r.mu.Unlock()
		wg.Go(func() {
			for range 3 {
				var p *proc
				if p, errs[i] = r.spawnAs(id, lk); errs[i] != nil {
					continue
				}
				select {
				case <-p.ready:
					errs[i] = nil
					return
				case <-p.done:
					errs[i] = fmt.Errorf("worker %d's process ended before it was ready: %s", id, p.stderr.String())
				case <-ctx.Done():
					errs[i] = ctx.Err()
					return
				case <-time.After(startTimeout):
					r.kill(p)
					errs[i] = fmt.Errorf("worker %d's process was not ready after %v: %s", id, startTimeout, p.stderr.String())
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startTimeout bounds a worker process's start, its stores opened.
const startTimeout = time.Minute

// run starts the prepared workers' run, to ctx's deadline, injects
// process faults until ctx ends, then waits for the workers to end
// (killing those still there after endMargin).
func (r *procRun) run(ctx context.Context, longKey string) {
	deadline, _ := ctx.Deadline()
	r.mu.Lock()
	r.spec.Deadline = deadline
	r.mu.Unlock()
	r.broadcast(msgStart, deadline)
	r.faults(ctx, longKey)
	end := time.NewTimer(time.Until(deadline.Add(r.endMargin())))
	defer end.Stop()
	for _, p := range r.live() {
		select {
		case <-p.done:
		case <-end.C:
			end.Reset(0)
			r.kill(p)
		}
	}
	r.wg.Wait()
}

func (r *procRun) live() []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ps []*proc
	for _, p := range r.procs {
		ps = append(ps, p)
	}
	return ps
}

// spawn starts a worker process with the next worker number, during the
// run: it starts at once.
func (r *procRun) spawn(longKey string) {
	r.mu.Lock()
	id := r.nextID
	r.nextID++
	r.mu.Unlock()
	if _, err := r.spawnAs(id, longKey); err != nil {
		r.logf("%s: worker %d: %v", r.stage.ID, id, err)
	}
}

// spawnAs starts worker id's process.
func (r *procRun) spawnAs(id int, longKey string) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	spec := r.spec
	r.mu.Unlock()
	spec.ID, spec.LongKey, spec.Offset = id, longKey, skewFor(r.kind, r.stage)
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envWorker+"="+string(raw))
	return r.launch(id, cmd)
}

// launch starts cmd as worker id, its messages on fd 3, and serves it.
func (r *procRun) launch(id int, cmd *exec.Cmd) (*proc, error) {
	p := &proc{id: id, cmd: cmd, pending: map[int]Attempt{}, done: make(chan struct{}), ready: make(chan struct{})}
	events, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = &p.stderr
	if p.in, err = cmd.StdinPipe(); err != nil {
		_ = events.Close()
		_ = w.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = events.Close()
		_ = w.Close()
		return nil, err
	}
	_ = w.Close()
	r.mu.Lock()
	r.procs[p.id] = p
	r.mu.Unlock()
	r.wg.Go(func() { r.serve(p, events) })
	return p, nil
}

// serve handles p's messages until it ends, then records its writes in
// flight as of unknown outcome: it may have sent them.
func (r *procRun) serve(p *proc, events *os.File) {
	defer events.Close()
	sc := bufio.NewScanner(events)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := r.handle(p, sc.Bytes()); err != nil {
			r.logf("%s: worker %d: %v", r.stage.ID, p.id, err)
		}
	}
	err := p.cmd.Wait()
	_ = p.in.Close()
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	if err != nil && !killed {
		r.logf("%s: worker %d's process failed: %v: %s", r.stage.ID, p.id, err, p.stderr.String())
	}
	r.ended(p, time.Now())
}

// ended records p's open attempts as Unknown, ended at end, and gives
// back what it held.
func (r *procRun) ended(p *proc, end time.Time) {
	p.mu.Lock()
	for _, a := range p.pending {
		a.End, a.Outcome, a.Err = end, Unknown, "the worker's process ended during the write"
		r.rec.attempt(a)
	}
	p.pending = nil
	if p.claim != nil {
		c := *p.claim
		c.End, c.Claimed = end, Unknown
		r.rec.read(c)
		p.claim = nil
	}
	if p.calm {
		p.calm = false
		r.stage.calm.RUnlock()
	}
	p.mu.Unlock()
	r.mu.Lock()
	delete(r.procs, p.id)
	r.mu.Unlock()
	close(p.done)
}

// handle handles one message of p.
func (r *procRun) handle(p *proc, line []byte) error {
	m, err := decodeMessage(line)
	if err != nil {
		return err
	}
	switch m.M {
	case msgBegin, msgAttempt:
		a, err := arg[Attempt](m)
		if err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if m.M == msgBegin {
			p.pending[a.Seq] = a
			return nil
		}
		delete(p.pending, a.Seq)
		r.rec.attempt(a)
	case msgClaim:
		c, err := arg[Read](m)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.claim = &c
		p.mu.Unlock()
	case msgRead:
		rd, err := arg[Read](m)
		if err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if rd.Claim != 0 {
			p.claim = nil
		}
		r.rec.read(rd)
	case msgReady:
		close(p.ready)
	case msgFault:
		kind, err := arg[string](m)
		if err != nil {
			return err
		}
		r.stage.Counts.Add(kind)
	case msgLog:
		s, err := arg[string](m)
		if err != nil {
			return err
		}
		r.logf("%s", s)
	case msgHold:
		key, err := arg[string](m)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.key = key
		p.mu.Unlock()
	case msgHTTP:
		r.httpOnce.Do(func() {
			r.stage.addDisruptor("http-outage", func(context.Context) error {
				r.broadcast(msgOutage, randDuration(200*time.Millisecond, time.Second))
				return nil
			})
		})
	case msgRequest:
		req, err := arg[request](m)
		if err != nil {
			return err
		}
		go r.answer(p, req)
	default:
		f := forwarded[m.M]
		if f == nil {
			return errors.New("unknown message " + m.M)
		}
		return f(r.rec, m)
	}
	return nil
}

// answer serves req and answers it.
func (r *procRun) answer(p *proc, req request) {
	switch req.Op {
	case opStop:
		r.guaranteedStop(p, req)
	case opCalm:
		r.stage.calm.RLock()
		p.mu.Lock()
		if p.pending == nil || p.calm { // ended meanwhile, or a bad request
			r.stage.calm.RUnlock()
		} else {
			p.calm = true
		}
		p.mu.Unlock()
	case opUncalm:
		p.mu.Lock()
		if p.calm {
			p.calm = false
			r.stage.calm.RUnlock()
		}
		p.mu.Unlock()
	default:
		r.logf("%s: worker %d: unknown request %q", r.stage.ID, p.id, req.Op)
	}
	p.send(msgAnswer, req.ID)
}

// guaranteedStop is worker 1's guaranteed pause, after its read: it stops
// the process for 1.5 to 2.5 TTLs, then, up to the run's end, until a
// write on the name read with a higher token has been applied (see
// worker.pauseFor), while the other workers take its key.
func (r *procRun) guaranteedStop(p *proc, req request) {
	p.stopped.Lock()
	defer p.stopped.Unlock()
	r.mu.Lock()
	r.spec.PauseBegun = true
	r.mu.Unlock()
	r.broadcast(msgBegun, nil)
	if !r.signal(p, syscall.SIGSTOP) {
		return
	}
	r.stage.Counts.Add(FaultSigstop)
	deadline := r.spec.Deadline
	time.Sleep(randDuration(r.kind.TTL*3/2, maxPause(r.kind.TTL)))
	r.setAwaited(req.Key)
	for time.Now().Before(deadline) && !r.rec.appliedAbove(req.Name, req.Token) {
		time.Sleep(50 * time.Millisecond)
	}
	r.setAwaited("")
	r.signal(p, syscall.SIGCONT)
	r.mu.Lock()
	r.pauseEnded = true
	r.mu.Unlock()
	r.logf("%s: worker %d's guaranteed stop on %s (token %d) ended %v before the run's end, a newer write applied: %v",
		r.stage.ID, p.id, req.Name, req.Token, time.Until(deadline).Round(time.Millisecond), r.rec.appliedAbove(req.Name, req.Token))
}

func (r *procRun) setAwaited(key string) {
	r.mu.Lock()
	r.spec.Awaited = key
	r.mu.Unlock()
	r.broadcast(msgAwaited, key)
}

// signal sends sig to p, unless it ended; it reports whether it did.
func (r *procRun) signal(p *proc, sig syscall.Signal) bool {
	select {
	case <-p.done:
		return false
	default:
	}
	return p.cmd.Process.Signal(sig) == nil
}

// broadcast sends a message to every live worker.
func (r *procRun) broadcast(m string, v any) {
	for _, p := range r.live() {
		p.send(m, v)
	}
}

// send writes a message to p's stdin; one that ended does not read it.
func (p *proc) send(m string, v any) {
	b := mustEncode(m, v)
	p.inMu.Lock()
	defer p.inMu.Unlock()
	_, _ = p.in.Write(b)
}

// faults injects process faults until ctx ends, in turn: a stop of a
// random worker for 1.5 to 2.5 TTLs (never one stopped already, nor one
// past the run's end), and a kill of a worker holding a lease, a fresh
// one taking its place. Neither hits worker 1 before its guaranteed
// pause ended, a worker holding Stage.calm, or the guaranteed long job.
func (r *procRun) faults(ctx context.Context, longKey string) {
	ttl := r.kind.TTL
	every := min(2*ttl, r.cfg.Duration/4)
	var stops sync.WaitGroup
	defer stops.Wait()
	for i := 0; ; i++ {
		if backoff.Sleep(ctx, randDuration(every/2, every*3/2)) != nil {
			return
		}
		if i%2 == 0 {
			d := randDuration(ttl*3/2, maxPause(ttl))
			if time.Until(r.spec.Deadline) < d {
				continue
			}
			if p := r.pick(longKey, false); p != nil {
				stops.Go(func() { r.stopFor(p, d) })
			}
			continue
		}
		// A holder: look for one for a while.
		var p *proc
		for range 20 {
			if p = r.pick(longKey, true); p != nil || backoff.Sleep(ctx, every/40) != nil {
				break
			}
		}
		if p == nil || ctx.Err() != nil {
			if p != nil {
				p.stopped.Unlock()
			}
			continue
		}
		r.stage.Counts.Add(FaultSigkill)
		r.kill(p)
		p.stopped.Unlock()
		if time.Until(r.spec.Deadline) > ttl {
			r.spawn("")
		}
	}
}

// pick returns a random worker that a process fault may hit, with its
// stopped lock held; a lease holder when holder is set.
func (r *procRun) pick(longKey string, holder bool) *proc {
	r.mu.Lock()
	pauseEnded := r.pauseEnded
	r.mu.Unlock()
	ps := r.live()
	rand.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	for _, p := range ps {
		if p.id == 1 && !pauseEnded {
			continue
		}
		p.mu.Lock()
		ok := !p.calm && p.key != longKey && (!holder || p.key != "")
		p.mu.Unlock()
		if ok && p.stopped.TryLock() {
			return p
		}
	}
	return nil
}

// stopFor stops p for d, then continues it; p.stopped is held.
func (r *procRun) stopFor(p *proc, d time.Duration) {
	defer p.stopped.Unlock()
	if !r.signal(p, syscall.SIGSTOP) {
		return
	}
	r.stage.Counts.Add(FaultSigstop)
	select {
	case <-time.After(d):
	case <-p.done:
	}
	r.signal(p, syscall.SIGCONT)
}

// kill kills p and waits until its writes in flight are recorded.
func (r *procRun) kill(p *proc) {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	r.signal(p, syscall.SIGKILL)
	<-p.done
}

// tail keeps the last few KiB written to it: a worker's stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Sprintf("%q", t.buf)
}
