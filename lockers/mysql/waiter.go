package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence/driver"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// Timing of a waiter.
const (
	// waiterWait is the longest single GET_LOCK of a waiter; it asks
	// again after each. It bounds how long a stopped waiter keeps its
	// connection.
	waiterWait = time.Second
	// waiterLookMin and waiterLookMax bound the pauses between looks
	// (IS_USED_LOCK) at a bell that nobody holds: waiterLooksPerStep
	// pauses of waiterLookMin, as many of twice that, and so on up to
	// waiterLookMax. A holder's bell is taken just after its Acquire: the
	// first looks are close together, so that a short lease taken just
	// after a look is seen before it ends.
	waiterLookMin      = time.Millisecond
	waiterLookMax      = 250 * time.Millisecond
	waiterLooksPerStep = 8
)

// errNoWake is NotifyRelease's error when the Locker wakes no waiters.
var errNoWake = fmt.Errorf("waking waiters is off (Options.WakeConns, or a bounded pool); waiters poll: %w", errors.ErrUnsupported)

// waitStatement waits up to waiterWait for the bell name and frees it at
// once when it gets it, in the same statement, so that it holds it for no
// longer than the server takes to run the statement: 1 when it got the
// bell, 0 when the wait ended first, NULL on an error.
func waitStatement(name string) string {
	return fmt.Sprintf("SELECT IF(GET_LOCK(%s, %.6f) = 1, RELEASE_LOCK(%s), 0)", quoteName(name), waiterWait.Seconds(), quoteName(name))
}

// NotifyRelease implements driver.ReleaseNotifier with the key's bell: on
// a connection of its own, it looks whether a session holds the bell
// (IS_USED_LOCK); if one does, it waits for it with GET_LOCK, and each
// time it gets it (the holder freed it, or the holder's connection
// ended), frees it in the same statement and sends on the channel. When
// nobody holds the bell, the key is free, or its holder rings no bell (a
// Locker of another process with the wake-ups off, or one that found the
// bell taken), and the waiter looks again after a pause (eight of 1 ms,
// eight of 2 ms, and so on up to 250 ms); when a later look finds the
// bell held (a new lease rings it), it sends on the channel, so that a
// new lease and the value published right after it are seen. It returns
// after the first look, so a release or Publish after it returns wakes
// the waiter when the bell was held at that look.
//
// At most WakeConns-1 waiters of one Locker wait at once; beyond that,
// and when the wake-ups are off, it returns an error and the caller polls.
// When the waiter's connection fails it sends once and stops: the caller
// then polls.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.slots == nil {
		return nil, nil, errNoWake
	}
	select {
	case d.slots <- struct{}{}:
	default:
		return nil, nil, fmt.Errorf("all %d waiting connections are in use; this waiter polls", cap(d.slots))
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		<-d.slots
		return nil, nil, classify("notify", err)
	}
	w := &waiter{conn: conn, name: bellName(d.table, key), c: make(chan struct{}, 1), stop: make(chan struct{})}
	held, err := w.look(ctx)
	if err != nil {
		discard(conn)
		<-d.slots
		return nil, nil, classify("notify", err)
	}
	go func() {
		defer func() { <-d.slots }()
		w.run(held)
	}()
	unlocal := d.local.add(key, w.c)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			unlocal()
			close(w.stop)
		})
	}
	return w.c, stop, nil
}

// waiter is one NotifyRelease: a connection that waits for a bell.
type waiter struct {
	conn *sql.Conn
	name string
	c    chan struct{}
	stop chan struct{}
}

// look reports whether a session holds the bell.
func (w *waiter) look(ctx context.Context) (bool, error) {
	var holder sql.NullInt64
	if err := w.conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK("+quoteName(w.name)+")").Scan(&holder); err != nil {
		return false, err
	}
	return holder.Valid, nil
}

func (w *waiter) signal() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// run waits on the bell while someone holds it and looks again while
// nobody does, until stop. The connection goes back to the pool holding
// nothing, or is closed when it failed.
func (w *waiter) run(held bool) {
	looks := 0 // looks since the bell was last seen held
	for {
		select {
		case <-w.stop:
			_ = w.conn.Close()
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), waiterWait+bellCallTimeout)
		var err error
		if held {
			var got sql.NullInt64
			err = w.conn.QueryRowContext(ctx, waitStatement(w.name)).Scan(&got)
			switch {
			case err == nil && !got.Valid:
				err = errors.New("GET_LOCK returned NULL")
			case err == nil && got.Int64 == 1:
				w.signal() // freed: the new holder, if any, rings next
				held, looks = false, 0
			}
		} else {
			pause := min(waiterLookMin<<min(looks/waiterLooksPerStep, 16), waiterLookMax)
			t := time.NewTimer(pause)
			select {
			case <-w.stop:
			case <-t.C:
			}
			t.Stop()
			select {
			case <-w.stop:
				cancel()
				continue
			default:
			}
			held, err = w.look(ctx)
			looks++
			if held {
				// A holder took the bell since the last look: a new
				// lease, whose Publish may have come before its bell
				// was taken and tolled nothing.
				w.signal()
				looks = 0
			}
		}
		cancel()
		if err != nil {
			discard(w.conn) // the server frees whatever it held
			w.signal()      // look at the table: the caller polls from now on
			return
		}
	}
}
