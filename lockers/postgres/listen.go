package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/notify"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier: it subscribes to the
// notifications of key's releases and breaks through the Locker's
// listening connection, opened on first use, and returns once that
// connection is listening. A connection that has died without the
// listener noticing yet is no exception: when the listener notices, it
// wakes every subscriber, so no release goes unsignalled. While the
// connection is down (after a failed attempt, until the next one is
// due, or while it reconnects), NotifyRelease returns an error at once
// and the caller polls. On a DB that is not a *pgxpool.Pool, or a
// *sql.DB whose driver is not pgx's, it returns an error matching
// errors.ErrUnsupported.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return d.ln.subscribe(ctx, key)
}

// Timing of the listener.
const (
	// listenIdle is how long the listening connection stays open after
	// its last subscriber left, for the next wait.
	listenIdle = time.Minute
	// listenQuiet is how long the listener waits for a notification
	// before it pings the connection, to notice one that died silently.
	listenQuiet = 30 * time.Second
	// listenTimeout bounds connecting and listening, and each ping.
	listenTimeout = 10 * time.Second
)

// listenBackoff spaces the attempts to reconnect.
var listenBackoff = backoff.Policy{First: 100 * time.Millisecond, Max: 5 * time.Second}

// errLockerClosed is the error of NotifyRelease after Close.
var errLockerClosed = errors.New("the locker is closed: no release notifications")

// listener is a Locker's listening connection and its subscribers. At most
// one run (a goroutine with its connection) is current; it lives while
// anyone subscribes, and listenIdle after, and reconnects with backoff
// when the connection is lost while anyone subscribes.
type listener struct {
	names notifyNames
	hub   notify.Hub
	idle  time.Duration

	cfgMu sync.Mutex
	// cfg configures the listening connections; nil until find found
	// it, or for good when there is nothing to listen through.
	cfg *pgx.ConnConfig
	// find returns cfg on the first wait, or an error matching
	// errors.ErrUnsupported when there is none; nil once cfg is known,
	// or when nothing can find it.
	find func(context.Context) (*pgx.ConnConfig, error)
	// cannot is why the listener cannot listen (matching
	// errors.ErrUnsupported), once cfg and find are both nil.
	cannot error

	mu       sync.Mutex
	subs     int
	cur      *listenRun // nil: no connection open or being opened
	idleT    *time.Timer
	closed   bool
	failures int       // failed connections since the last one that listened
	retryAt  time.Time // no new connection before
	lastErr  error     // why the last connection failed or was lost
}

// listenRun is one run of the listener.
type listenRun struct {
	ctx    context.Context
	cancel context.CancelFunc
	ready  chan struct{} // closed when the run's first connection listens, or failed
	err    error         // of the first connection; set before ready is closed
	tried  bool          // ready is closed (under listener.mu)
	conn   *pgx.Conn     // listening now; nil while reconnecting (under listener.mu)
	exited chan struct{}
}

// newListener returns a listener that cannot listen until it is given
// a configuration (setConfig) or a way to find one (find).
func newListener(names notifyNames) *listener {
	return &listener{names: names, idle: listenIdle}
}

// listener returns the listener of a Locker on a DB of pgx: one that
// listens through connections made from the pool's configuration when
// the DB is a *pgxpool.Pool (pgx connects them itself; they are not
// taken from the pool), and one that cannot otherwise.
func (r pgxRunner) listener(names notifyNames) *listener {
	l := newListener(names)
	if p, ok := r.db.(interface{ Config() *pgxpool.Config }); ok {
		l.setConfig(p.Config().ConnConfig) // a copy
	} else {
		l.cannot = fmt.Errorf("release notifications need a *pgxpool.Pool to open a listening connection from: %w", errors.ErrUnsupported)
	}
	return l
}

// setConfig makes cfg, a copy of a connection's configuration, that of
// the listening connections.
func (l *listener) setConfig(cfg *pgx.ConnConfig) {
	// Notifications go straight to the subscribers, whatever the pool
	// does with its own connections' notifications.
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { l.hub.Signal(n.Payload) }
	// A quiet wait ends on a deadline, which leaves the connection
	// usable, rather than a cancel request.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "fence listener"
	}
	l.cfg = cfg
}

// configure returns nil once the listener has its configuration, finding
// it on the first call that can; otherwise the error of finding it, which
// matches errors.ErrUnsupported when the listener cannot listen.
func (l *listener) configure(ctx context.Context) error {
	l.cfgMu.Lock()
	defer l.cfgMu.Unlock()
	switch {
	case l.cfg != nil:
		return nil
	case l.find == nil:
		return l.cannot
	}
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	cfg, err := l.find(ctx)
	if errors.Is(err, errors.ErrUnsupported) {
		l.find, l.cannot = nil, err
	}
	if err != nil {
		return err
	}
	l.find = nil
	l.setConfig(cfg)
	return nil
}

// subscribe implements NotifyRelease.
func (l *listener) subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := l.configure(ctx); err != nil {
		return nil, nil, err
	}
	payload, _ := keyNotice(key)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, nil, errLockerClosed
	}
	r := l.cur
	switch {
	case r == nil && time.Now().Before(l.retryAt):
		err := l.downErr()
		l.mu.Unlock()
		return nil, nil, err
	case r == nil:
		r = l.start()
	case r.tried && r.conn == nil:
		// Reconnecting: the caller polls meanwhile.
		err := l.downErr()
		l.mu.Unlock()
		return nil, nil, err
	}
	c, stopSub := l.hub.Subscribe(payload)
	l.subs++
	if l.idleT != nil {
		l.idleT.Stop()
		l.idleT = nil
	}
	l.mu.Unlock()
	stop := sync.OnceFunc(func() {
		stopSub()
		l.unsubscribed()
	})
	select {
	case <-r.ready:
		if r.err != nil {
			stop()
			return nil, nil, r.err
		}
	case <-ctx.Done():
		stop()
		return nil, nil, ctx.Err()
	}
	return c, stop, nil
}

// downErr is the error of a subscription while the listener is down.
func (l *listener) downErr() error {
	return fmt.Errorf("the listening connection is down, next attempt in %v: %w", time.Until(l.retryAt).Round(time.Millisecond), l.lastErr)
}

// start begins a run (l.mu held).
func (l *listener) start() *listenRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &listenRun{ctx: ctx, cancel: cancel, ready: make(chan struct{}), exited: make(chan struct{})}
	l.cur = r
	go l.run(r)
	return r
}

// stopRun ends r (l.mu held); its goroutine closes its connection.
func (l *listener) stopRun(r *listenRun) {
	if l.cur == r {
		l.cur = nil
	}
	r.cancel()
}

// unsubscribed counts a subscriber out; after the last, the run ends
// when no one subscribes for l.idle.
func (l *listener) unsubscribed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs--
	r := l.cur
	if l.subs > 0 || r == nil || l.idleT != nil {
		return
	}
	l.idleT = time.AfterFunc(l.idle, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.subs == 0 && l.cur == r {
			l.idleT = nil
			l.stopRun(r)
		}
	})
}

// close ends the run and waits for its goroutine; later subscriptions
// fail. The subscribers that remain are woken to ask the store again.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	r := l.cur
	if r != nil {
		l.stopRun(r)
	}
	if l.idleT != nil {
		l.idleT.Stop()
		l.idleT = nil
	}
	l.mu.Unlock()
	if r != nil {
		<-r.exited
	}
	l.hub.SignalAll()
}

// run connects and listens until r is stopped; while anyone subscribes,
// it reconnects after a lost or failed connection, with backoff.
func (l *listener) run(r *listenRun) {
	defer close(r.exited)
	for listened := false; ; {
		conn, err := l.listen(r.ctx)
		l.mu.Lock()
		if l.cur != r { // stopped meanwhile
			l.ready(r, errLockerClosed)
			l.mu.Unlock()
			closeConn(conn)
			return
		}
		if err != nil {
			l.failures++
			l.lastErr, l.retryAt = err, time.Now().Add(listenBackoff.Delay(l.failures))
			l.ready(r, err)
			if !listened || l.subs == 0 {
				// A first connection that fails ends the run (its
				// callers poll); so does one nobody waits for.
				l.cur = nil
				l.mu.Unlock()
				return
			}
			wait := time.Until(l.retryAt)
			l.mu.Unlock()
			if backoff.Sleep(r.ctx, wait) != nil {
				return
			}
			continue
		}
		l.failures, l.lastErr = 0, nil
		r.conn = conn
		l.ready(r, nil)
		l.mu.Unlock()
		if listened {
			// Releases while the connection was down were not heard.
			l.hub.SignalAll()
		}
		listened = true
		err = l.serve(r.ctx, conn)
		closeConn(conn)
		l.mu.Lock()
		r.conn = nil
		if l.cur != r {
			l.mu.Unlock()
			return
		}
		l.failures = 1
		l.lastErr = fmt.Errorf("the listening connection was lost: %w", err)
		l.retryAt = time.Now().Add(listenBackoff.Delay(l.failures))
		wait, stay := time.Until(l.retryAt), l.subs > 0
		if !stay {
			l.cur = nil
		}
		l.mu.Unlock()
		// Releases from now until the next connection listens are not
		// heard: every subscriber asks the store again.
		l.hub.SignalAll()
		if !stay || backoff.Sleep(r.ctx, wait) != nil {
			return
		}
	}
}

// ready ends the wait of r's first subscribers with err (l.mu held).
func (l *listener) ready(r *listenRun, err error) {
	if !r.tried {
		r.tried, r.err = true, err
		close(r.ready)
	}
}

// listen opens a connection and makes it listen.
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	for _, sql := range l.names.listenSQL() {
		if _, err := conn.Exec(ctx, sql); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("%s: %w", sql, err)
		}
	}
	return conn, nil
}

// serve dispatches the notifications conn receives (OnNotification does)
// until ctx ends or the connection fails; a connection quiet for
// listenQuiet is pinged.
func (l *listener) serve(ctx context.Context, conn *pgx.Conn) error {
	for {
		wait, cancel := context.WithTimeout(ctx, listenQuiet)
		err := conn.PgConn().WaitForNotification(wait)
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			ping, cancel := context.WithTimeout(ctx, listenTimeout)
			err = conn.Ping(ping)
			cancel()
			if err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// closeConn closes a listening connection, if any, within listenTimeout.
func closeConn(conn *pgx.Conn) {
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listenTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}
