package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// MaxLockNameLen is the longest name GetLock accepts, in characters
// (MySQL's limit for GET_LOCK since 5.7).
const MaxLockNameLen = 64

// MaxLockWait is the longest wait GetLock accepts. A wait is never
// infinite.
const MaxLockWait = time.Hour

// connCheckInterval is how often a ConnLock checks that its connection
// still holds the lock.
const connCheckInterval = time.Second

// connCheckTimeout bounds one check; a check that takes longer counts as
// a lost connection.
const connCheckTimeout = 5 * time.Second

// ConnLock is a named lock of the server (GET_LOCK) held by one
// connection taken out of a *sql.DB for as long as the lock is held.
//
// It is an efficiency lock, not a safety one: it issues no fencing token,
// and the server frees it whenever its connection ends (a network
// failure, a KILL, a server restart, wait_timeout), while the holder may
// still be working. Use it to keep two workers from doing the same work
// most of the time; to protect data, use a Locker's lease and pass its
// token to a fenced resource.
//
// The trap it avoids: GET_LOCK belongs to the server session, not to the
// *sql.Conn. Closing a *sql.Conn returns the session to the pool, still
// holding the lock, for any later query to inherit. A ConnLock returns
// its connection to the pool only after RELEASE_LOCK answered that it
// freed the lock; when the release fails, or its answer is lost, or the
// lock was lost, it closes the connection instead (the server then frees
// the lock), so a pooled connection never holds one.
//
// While held, it checks its connection every second (IS_USED_LOCK =
// CONNECTION_ID()); when that fails, or takes more than 5 s, the lock
// counts as lost: the connection is closed and Done is closed.
type ConnLock struct {
	name string
	id   int64 // the holding session's CONNECTION_ID()

	mu   sync.Mutex // serializes the connection's use
	conn *sql.Conn  // nil once released or discarded
	err  error      // why Done was closed

	done     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	watching sync.WaitGroup
}

// GetLock takes the named lock on a connection of its own out of db,
// waiting up to wait for another session to release it (0: try once).
// When the wait ends first, it returns a *fence.HeldError naming the
// holding connection. When ctx ends or the connection fails while the
// lock is asked for, it closes that connection, so that a lock granted
// after all is freed by the server, and returns the error.
//
// The wait is sent in seconds with microseconds; MySQL may round it to
// whole seconds (MariaDB does not).
func GetLock(ctx context.Context, db *sql.DB, name string, wait time.Duration) (*ConnLock, error) {
	fail := func(err error) error { return &fence.OpError{Backend: "mysql", Op: "get_lock", Key: name, Err: err} }
	switch {
	case db == nil:
		return nil, fail(&fence.InvalidError{Field: "db", Reason: "nil"})
	case name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxLockNameLen:
		return nil, fail(&fence.InvalidError{Field: "name", Reason: fmt.Sprintf("want 1 to %d characters of UTF-8", MaxLockNameLen)})
	case wait < 0 || wait > MaxLockWait:
		return nil, fail(&fence.InvalidError{Field: "wait", Reason: fmt.Sprintf("%v is not between 0 and %v", wait, MaxLockWait)})
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fail(err)
	}
	var (
		got sql.NullInt64
		id  int64
	)
	secs := strconv.FormatFloat(wait.Seconds(), 'f', 6, 64)
	err = conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, "+secs+"), CONNECTION_ID()", name).Scan(&got, &id)
	switch {
	case err != nil:
		// The lock may have been granted after all: close the session.
		discard(conn)
		return nil, fail(classify("get_lock", err))
	case !got.Valid:
		discard(conn)
		return nil, fail(errors.New("GET_LOCK returned NULL (the session was killed, or an error occurred)"))
	case got.Int64 != 1:
		held := &fence.HeldError{Key: name}
		var holder sql.NullInt64
		if conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder) == nil && holder.Valid {
			held.Owner = "connection " + strconv.FormatInt(holder.Int64, 10)
		}
		conn.Close() // GET_LOCK timed out: the session holds nothing
		return nil, fail(held)
	}
	l := &ConnLock{name: name, id: id, conn: conn, done: make(chan struct{}), stop: make(chan struct{})}
	l.watching.Add(1)
	go l.watch()
	return l, nil
}

// Name returns the lock's name.
func (l *ConnLock) Name() string { return l.name }

// ConnectionID returns the server's id of the session that holds the lock
// (CONNECTION_ID()), as IS_USED_LOCK and the process list show it.
func (l *ConnLock) ConnectionID() int64 { return l.id }

// Done is closed when the lock is lost or released.
func (l *ConnLock) Done() <-chan struct{} { return l.done }

// Err returns nil while the lock is held; after Done is closed, an error
// matching fence.ErrLeaseLost when the lock was lost (its connection
// failed), or fence.ErrReleased after Release.
func (l *ConnLock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Release frees the lock with RELEASE_LOCK and returns its connection to
// the pool. If the lock was lost, it returns that error (matching
// fence.ErrNotHeld too). If RELEASE_LOCK fails, its answer is lost or it
// does not answer that it freed the lock, Release closes the connection
// instead, which makes the server free the lock, and returns the error.
// Either way the pool gets no connection that holds the lock. It is safe
// to call more than once.
func (l *ConnLock) Release(ctx context.Context) error {
	l.stopOnce.Do(func() { close(l.stop) })
	l.watching.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	fail := func(err error) error {
		return &fence.OpError{Backend: "mysql", Op: "release_lock", Key: l.name, Err: err}
	}
	if l.conn == nil {
		if errors.Is(l.err, fence.ErrReleased) {
			return nil
		}
		return fail(&fence.NotHeldError{Key: l.name, Reason: l.err.Error()})
	}
	var freed sql.NullInt64
	err := l.conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", l.name).Scan(&freed)
	switch {
	case err == nil && freed.Valid && freed.Int64 == 1:
		l.conn.Close()
	case err == nil:
		discard(l.conn)
		err = fmt.Errorf("RELEASE_LOCK returned %v, not 1; the connection was closed, which frees any lock it held", freed)
	default:
		discard(l.conn)
		err = fmt.Errorf("the connection was closed, which frees the lock: %w", classify("release_lock", err))
	}
	l.conn = nil
	l.err = fence.ErrReleased
	close(l.done)
	if err != nil {
		return fail(err)
	}
	return nil
}

// watch checks the connection every connCheckInterval until Release.
func (l *ConnLock) watch() {
	defer l.watching.Done()
	t := time.NewTicker(connCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !l.check() {
			return
		}
	}
}

// check asks whether the lock's session still holds it, and when it does
// not (or cannot say), closes the connection and Done. It reports whether
// the lock is still held.
func (l *ConnLock) check() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), connCheckTimeout)
	defer cancel()
	var mine sql.NullBool
	err := l.conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", l.name).Scan(&mine)
	if err == nil && mine.Valid && mine.Bool {
		return true
	}
	if err == nil {
		err = errors.New("the session no longer holds it")
	}
	discard(l.conn)
	l.conn = nil
	l.err = &fence.OpError{Backend: "mysql", Op: "get_lock", Key: l.name,
		Err: fmt.Errorf("%w: the lock's connection failed (the server frees its locks then): %w", fence.ErrLeaseLost, err)}
	close(l.done)
	return false
}

// discard closes conn's session rather than returning it to the pool:
// database/sql closes a connection whose Raw callback returns
// driver.ErrBadConn.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn })
	_ = conn.Close()
}
