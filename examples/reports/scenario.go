package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

type config struct {
	workers    int
	ttl        time.Duration // lease of the normal path
	pauseTTL   time.Duration // lease of the worker that pauses
	renderTime time.Duration // how long rendering a report takes
	unfenced   bool

	postgres, postgresTable            string
	dynamoTable, dynamoEndpoint        string
	s3Bucket, s3Endpoint               string
	awsAccessKey, awsSecretKey         string
	gcsBucket, gcsEndpoint, gcsProject string
	azblobContainer, azblobConnection  string
}

// jobs is the queue. The scheduler submitted some reports twice; the first
// job goes to the worker that will pause.
var jobs = []job{
	{customer: "acme", date: "2025-03-14"},
	{customer: "globex", date: "2025-03-14"}, {customer: "globex", date: "2025-03-14"},
	{customer: "acme", date: "2025-03-14"},
	{customer: "initech", date: "2025-03-14"}, {customer: "umbrella", date: "2025-03-14"},
	{customer: "acme", date: "2025-03-15"}, {customer: "initech", date: "2025-03-14"},
	{customer: "globex", date: "2025-03-15"}, {customer: "umbrella", date: "2025-03-15"},
	{customer: "initech", date: "2025-03-15"}, {customer: "acme", date: "2025-03-15"},
	{customer: "globex", date: "2025-03-14"},
}

// errAlreadyUploaded is how a job ends that finds its report in the store,
// written under an earlier lease.
type errAlreadyUploaded struct{ token fence.Token }

func (e *errAlreadyUploaded) Error() string {
	return fmt.Sprintf("report already uploaded under token %d", e.token)
}

// scenario holds what the goroutines of one run share.
type scenario struct {
	cfg    config
	env    *env
	orders *orders
	rep    *report
	lg     *logger
	prefix string // of the object names of this run
}

// run plays the scenario and returns what happened.
func run(ctx context.Context, cfg config, out io.Writer) (*report, error) {
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	s := &scenario{cfg: cfg, env: e, orders: newOrders(jobs),
		lg:     &logger{out: out, start: time.Now()},
		prefix: "reports/" + time.Now().UTC().Format("20060102-150405") + "-" + randomID()[:6] + "/"}
	s.rep = newReport(e.lockName+" + "+e.storeName, s.prefix)
	s.lg.printf("reports into %s, locks on %s; %d workers, lease TTL %v, objects under %s",
		e.storeName, e.lockName, cfg.workers, cfg.ttl, s.prefix)
	if cfg.unfenced {
		s.lg.printf("CONTROL RUN: uploads do not carry a token check")
	}

	queue := make(chan job, len(jobs)+1)
	var initial sync.WaitGroup // the jobs queued at the start
	initial.Add(len(jobs) - 1)
	initialDone := make(chan struct{})
	go func() { initial.Wait(); close(initialDone) }()

	rendered := make(chan struct{})
	var pauserDone sync.WaitGroup
	pauserDone.Go(func() { s.pauser(ctx, jobs[0], queue, rendered, initialDone) })
	select {
	case <-rendered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	late := s.orders.add(jobs[0], "GADGET", 7, 1299)
	s.lg.printf("orders: late order %s (%d x %s) arrives for %s", late.id, late.quantity, late.sku, jobs[0])

	for _, j := range jobs[1:] {
		queue <- j
	}
	var wg sync.WaitGroup
	for i := 1; i <= cfg.workers; i++ {
		// The normal path: a 60 s lease, tried once. A duplicate whose
		// key is busy skips its turn: the holder renders that report.
		// Each worker stands for a replica: a session of its own.
		sess, err := fence.NewSession(e.locker, &fence.SessionOptions{TTL: cfg.ttl})
		if err != nil {
			return nil, err
		}
		defer sess.Close(context.WithoutCancel(ctx))
		name := fmt.Sprintf("worker-%d", i)
		wg.Go(func() {
			for j := range queue {
				s.handle(ctx, name, sess, j)
				if !j.redelivered {
					initial.Done()
				}
			}
		})
	}
	pauserDone.Wait()
	close(queue)
	wg.Wait()
	return s.rep, s.rep.check(ctx, s.env.store, s.orders)
}

// handle renders and uploads the report of j under a lease on its key,
// unless the key is busy or the report is in the store already.
func (s *scenario) handle(ctx context.Context, worker string, sess *fence.Session, j job) {
	name := j.objectName(s.prefix)
	var token fence.Token
	var csv []byte
	err := guard.Run(ctx, sess, j.lockKey(), func(ctx context.Context, h *fence.Handle) error {
		token = h.Token()
		s.rep.issued(j.lockKey(), h.Token())
		// A duplicate that comes after the first finished finds the report
		// written under an earlier lease and skips it. The check is an
		// efficiency device like the lease itself: the fence on the upload
		// is what keeps a stale render out.
		if _, tok, err := s.env.store.read(ctx, name); err == nil {
			return &errAlreadyUploaded{token: tok}
		} else if !errors.Is(err, fence.ErrNotFound) {
			return err
		}
		csv = s.orders.render(j, h.Token(), worker)
		if err := sleep(ctx, s.cfg.renderTime); err != nil {
			return err
		}
		return s.env.store.upload(ctx, name, h.Token(), csv)
	}, nil) // tried once: a duplicate whose key is busy skips its turn
	s.rep.outcome(s.lg, worker, j, name, token, csv, err)
}

// pauser takes j's lease with a short TTL, renders the report, and then
// stops before uploading, as a process does in a long garbage-collection
// pause: no renewals, no checks. Its lease expires, the queue redelivers
// the unacknowledged job and another worker renders and uploads it under a
// newer token. Then the pauser wakes and uploads what it rendered before.
func (s *scenario) pauser(ctx context.Context, j job, queue chan<- job, rendered chan<- struct{}, initialDone <-chan struct{}) {
	const worker = "paused-worker"
	var once sync.Once
	signal := func() { once.Do(func() { close(rendered) }) }
	defer signal()
	name := j.objectName(s.prefix)
	lease, err := s.env.locker.Acquire(ctx, j.lockKey(), s.cfg.pauseTTL, nil)
	if err != nil {
		s.rep.fail("the paused worker could not take its lease: %v", err)
		return
	}
	s.rep.issued(j.lockKey(), lease.Token)
	csv := s.orders.render(j, lease.Token, worker)
	s.lg.printf("%s: acquired %s with token %d (lease %v), rendered %s (%d bytes), then PAUSES before uploading",
		worker, j.lockKey(), lease.Token, s.cfg.pauseTTL, j, len(csv))
	signal()

	select {
	case <-initialDone:
	case <-ctx.Done():
		s.rep.fail("the paused worker: %v", ctx.Err())
		return
	}
	if err := s.env.expire(ctx, lease); err != nil {
		s.rep.fail("the paused worker: %v", err)
		return
	}
	s.lg.printf("%s: its lease with token %d has expired", worker, lease.Token)
	s.lg.printf("queue: %s was not acknowledged within its visibility timeout: redelivered", j)
	j.redelivered = true
	queue <- j

	// Stay paused until another worker has uploaded the report under a
	// newer token.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for s.rep.highestAccepted(name) <= lease.Token {
		if err := sleep(wait, 5*time.Millisecond); err != nil {
			s.rep.fail("the paused worker never saw its report uploaded by another worker: %v", err)
			return
		}
	}
	s.lg.printf("%s: wakes up and uploads the report it rendered before the pause, with its old token %d",
		worker, lease.Token)
	err = s.env.store.upload(ctx, name, lease.Token, csv)
	s.rep.pausedOutcome(s.lg, worker, j, name, lease.Token, csv, err)
	_ = s.env.locker.Release(context.WithoutCancel(ctx), lease) // fails with ErrNotHeld: the lease is gone
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type logger struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "%7.3fs  %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}
