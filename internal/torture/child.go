package torture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
)

// WorkerMain runs a worker process of a run with Config.Processes when
// the program was started as one (the run re-executes the program with
// the worker's description in its environment), and then exits the
// program: status 0, or 1 after writing its error to stderr. It returns
// false, at once, when the program is not a worker. A program that runs
// Run with Config.Processes calls it first in main; a test package,
// first in TestMain.
func WorkerMain() bool {
	raw := os.Getenv(envWorker)
	if raw == "" {
		return false
	}
	events := os.NewFile(3, "events")
	if err := runChild(raw, events, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "torture worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// runChild runs the worker spec describes, sending its messages on out
// and reading the run's on in, until the run's deadline.
func runChild(raw string, out io.Writer, in io.Reader) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("bad %s: %w", envWorker, err)
	}
	link := newChildLink(out)
	cfg := spec.Config
	if spec.Logs {
		cfg.Logf = link.logf
	}
	stage, err := newStage(cfg.Net, link.logf)
	if err != nil {
		return err
	}
	defer stage.close()
	stage.ID = spec.StageID
	stage.Counts.onAdd = func(kind string) { link.send(msgFault, kind) }
	link.outage = stage.transport.Outage
	go link.listen(in)

	// Some clients keep the context they were opened with for their
	// connections: it must last the run. The run's process bounds the
	// opening (procRun.prepare); the run's deadline comes once all its
	// workers are ready (msgStart).
	ctx := context.Background()
	kind := LockerKind{TTL: spec.TTL, MaxSkew: spec.MaxSkew}
	clock := clockAt(kind, spec.Offset)
	l, err := forRun(stage, fence.OpenLocker)(ctx, spec.LockerURL, &fence.OpenOptions{Clock: clock, HTTPClient: stage.HTTPClient()})
	if err != nil {
		return err
	}
	var work, clean resource
	var led *ledger
	if cfg.Transfer {
		led, err = openLedger(ctx, stage, spec.ResourceURL, !cfg.Control)
	} else {
		work, clean, err = openChildResource(ctx, stage, spec)
	}
	if err != nil {
		return err
	}
	w, err := buildWorker(spec.ID, &cfg, spec.TTL, clock, l, stage, spec.Keys, work, clean, childRecorder{link})
	if err != nil {
		return err
	}
	w.ledger = led
	w.proc, w.calmly = link, link.calmly
	w.pauseBegun, w.awaited = link.begun, link.awaited
	link.begun.Store(spec.PauseBegun)
	if spec.Awaited != "" {
		link.awaited.Store(&spec.Awaited)
	}
	deadline := spec.Deadline
	if deadline.IsZero() {
		link.send(msgReady, nil)
		deadline = <-link.start
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	w.longKey, w.deadline = spec.LongKey, deadline
	go link.noteHTTP(ctx, stage)
	w.loop(ctx)
	return nil
}

// openChildResource opens the worker's resource through the stage's
// faults and without, as ResourceKind.open does for a run in one process.
func openChildResource(ctx context.Context, s *Stage, spec childSpec) (work, clean resource, err error) {
	if spec.Config.Control {
		for _, p := range Pairs() {
			if p.Name() == spec.Pair && p.Resource.Unfenced != nil {
				return p.Resource.Unfenced(ctx, s, spec.ResourceURL, spec.CleanURL)
			}
		}
	}
	open := forRun(s, fence.OpenResource)
	w, err := open(ctx, spec.ResourceURL, &fence.OpenOptions{HTTPClient: s.HTTPClient()})
	if err != nil {
		return nil, nil, err
	}
	c, err := open(ctx, spec.CleanURL, &fence.OpenOptions{HTTPClient: s.CleanHTTPClient()})
	if err != nil {
		return nil, nil, err
	}
	return control(w, !spec.Config.Control), control(c, !spec.Config.Control), nil
}

// childLink is a worker process's side of the protocol.
type childLink struct {
	mu  sync.Mutex
	out io.Writer

	reqMu   sync.Mutex
	nextReq int
	waiting map[int]chan struct{}

	begun   *atomic.Bool
	awaited *atomic.Pointer[string]
	outage  func(time.Duration)
	start   chan time.Time // the run's deadline, by msgStart
}

func newChildLink(out io.Writer) *childLink {
	return &childLink{out: out, waiting: map[int]chan struct{}{}, begun: &atomic.Bool{}, awaited: &atomic.Pointer[string]{}, start: make(chan time.Time, 1)}
}

// send writes one message, at once; a worker whose run is gone exits.
func (c *childLink) send(m string, v any) {
	b := mustEncode(m, v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.out.Write(b); err != nil {
		fmt.Fprintln(os.Stderr, "torture worker: the run is gone:", err)
		os.Exit(2)
	}
}

func (c *childLink) logf(format string, args ...any) { c.send(msgLog, fmt.Sprintf(format, args...)) }

// holding tells the run which key's lease the worker holds ("" for none);
// nothing in the run's own process (c nil).
func (c *childLink) holding(key string) {
	if c != nil {
		c.send(msgHold, key)
	}
}

// request sends r and waits for its answer.
func (c *childLink) request(r request) {
	ch := make(chan struct{})
	c.reqMu.Lock()
	c.nextReq++
	r.ID = c.nextReq
	c.waiting[r.ID] = ch
	c.reqMu.Unlock()
	c.send(msgRequest, r)
	<-ch
}

// stop is worker 1's guaranteed pause: the run stops the process and
// answers once it continued it.
func (c *childLink) stop(h *fence.Handle, name string) {
	c.request(request{Op: opStop, Key: h.Key(), Name: name, Token: h.Token()})
}

// calmly runs f while no disruption of the run runs.
func (c *childLink) calmly(f func()) {
	c.request(request{Op: opCalm})
	defer c.request(request{Op: opUncalm})
	f()
}

// listen reads the run's messages until in ends, and then ends the
// process: a worker does not outlive its run.
func (c *childLink) listen(in io.Reader) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if err := c.handle(sc.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, "torture worker:", err)
		}
	}
	os.Exit(0)
}

func (c *childLink) handle(line []byte) error {
	m, err := decodeMessage(line)
	if err != nil {
		return err
	}
	switch m.M {
	case msgAwaited:
		key, err := arg[string](m)
		if err != nil {
			return err
		}
		if key == "" {
			c.awaited.Store(nil)
		} else {
			c.awaited.Store(&key)
		}
	case msgBegun:
		c.begun.Store(true)
	case msgAnswer:
		id, err := arg[int](m)
		if err != nil {
			return err
		}
		c.reqMu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.reqMu.Unlock()
		if ch == nil {
			return fmt.Errorf("answer to no request %d", id)
		}
		close(ch)
	case msgStart:
		t, err := arg[time.Time](m)
		if err != nil {
			return err
		}
		select {
		case c.start <- t:
		default:
			return errors.New("started twice")
		}
	case msgOutage:
		d, err := arg[time.Duration](m)
		if err != nil {
			return err
		}
		if c.outage != nil {
			c.outage(d)
		}
	default:
		return errors.New("unknown message " + m.M)
	}
	return nil
}

// noteHTTP tells the run of the worker's first HTTP request (which makes
// the stage register its outage disruptor), so that the run's outages
// reach the process.
func (c *childLink) noteHTTP(ctx context.Context, s *Stage) {
	for ctx.Err() == nil {
		if len(s.disruptors()) > 0 {
			c.send(msgHTTP, nil)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
