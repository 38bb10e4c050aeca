package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"
)

// The bells: while this Locker holds a lease, one connection of its own
// holds the server's named lock (GET_LOCK) of the lease's key, and frees
// it once the row is freed, which wakes the waiters blocked in GET_LOCK on
// that name (see waiter.go and "Waking waiters" in the package doc). The
// lease table stays the only judge of who holds a key: a bell only says
// when to look again.

// bellPrefix starts every bell's name, so that the process list and
// performance_schema show whose named locks they are.
const bellPrefix = "fence:"

// bellName returns the name of key's bell in the lease table quoted: the
// prefix and 40 hex digits of a SHA-256 of the table and the key, 46
// characters whatever the key's length (names are at most 64), of the
// table as this Locker names it.
func bellName(table, key string) string {
	sum := sha256.Sum256([]byte(table + "\x00" + key))
	return bellPrefix + hex.EncodeToString(sum[:20])
}

// Timing of the bells.
const (
	// bellTakeTries is how many times a holder tries to take its bell
	// while another session holds it (a waiter that is being woken holds
	// it for an instant, a previous holder until it frees it), the first
	// retry after bellRetryMin, each pause twice the last: about a
	// quarter of a second in all. After that the lease rings no bell.
	bellTakeTries = 8
	bellRetryMin  = time.Millisecond
	// bellConnRetry bounds the pause after the bell connection failed
	// (or could not be had), before it is asked for again.
	bellConnRetryMin = 50 * time.Millisecond
	bellConnRetryMax = 5 * time.Second
	// bellCallTimeout bounds each statement of the bells.
	bellCallTimeout = 10 * time.Second
	// bellCheckInterval is how often the connection that holds bells
	// is checked; when it died, its bells are taken again.
	bellCheckInterval = time.Second
	// bellBatch is the most names one statement takes or frees.
	bellBatch = 100
)

// bellWant is a bell this Locker's leases want rung: the token of the
// lease on its key and when that lease ends on the local clock, after
// which the bell is freed even if Release never came.
type bellWant struct {
	token   int64
	until   time.Time
	toll    bool      // free it for an instant (Publish), then take it again
	tries   int       // failed takes so far
	retryAt time.Time // when to try to take it again
}

// bells holds the named locks of the leases of one Locker, on one
// connection of db, taken when the Locker holds its first lease and given
// back to the pool once it holds none. One goroutine does all its
// statements, so a take and a free of one name reach the server in the
// order they were asked for.
type bells struct {
	db *sql.DB

	mu      sync.Mutex
	want    map[string]*bellWant // by bell name
	held    map[string]bool      // names the connection holds
	running bool                 // the goroutine runs
	closed  bool
	kick    chan struct{} // wakes the goroutine; buffer of one
	stopped chan struct{} // closed when the goroutine ends after close
	conn    *sql.Conn     // only the goroutine uses it
	connAt  time.Time     // when to ask for a connection again
	checkAt time.Time     // when to check the connection next
	pause   time.Duration // the last pause after a connection failure
}

func newBells(db *sql.DB) *bells {
	return &bells{db: db, want: map[string]*bellWant{}, held: map[string]bool{}, kick: make(chan struct{}, 1)}
}

// ring asks for name's bell for a lease of token that ends at until.
func (b *bells) ring(name string, token int64, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.want[name] = &bellWant{token: token, until: until}
	b.wakeLocked()
}

// extend moves the end of the lease of token on name's bell to until.
func (b *bells) extend(name string, token int64, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.want[name]; w != nil && w.token == token && until.After(w.until) {
		w.until = until
	}
}

// toll frees name's bell for an instant and takes it again, if the
// lease of token wants it, which wakes its waiters. A bell not taken yet
// (a take in flight, or to be retried) is tolled once it is taken.
func (b *bells) toll(name string, token int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.want[name]; w != nil && w.token == token {
		w.toll = true
		if b.held[name] {
			b.wakeLocked()
		}
	}
}

// silence frees name's bell if the lease of token wants it (token 0: any
// lease).
func (b *bells) silence(name string, token int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.want[name]
	if w == nil || (token != 0 && w.token != token) {
		return
	}
	delete(b.want, name)
	if b.held[name] {
		b.wakeLocked()
	}
}

// wakeLocked starts the goroutine, or kicks it. b.mu is held.
func (b *bells) wakeLocked() {
	if !b.running {
		b.running = true
		go b.run()
		return
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// close ends the goroutine and closes the connection, which frees every
// bell it held (the server frees a session's named locks when it ends).
func (b *bells) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.want = map[string]*bellWant{}
	running := b.running
	b.stopped = make(chan struct{})
	stopped := b.stopped
	if running {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
	if running {
		<-stopped
	}
}

// run does the statements until nothing is wanted or held, then gives
// the connection back to the pool and ends.
func (b *bells) run() {
	for {
		b.mu.Lock()
		now := time.Now()
		var free, take []string
		var next time.Time
		soonest := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		for name, w := range b.want {
			if !now.Before(w.until) {
				delete(b.want, name) // the lease ran out and was never released
				continue
			}
			soonest(w.until)
			if b.held[name] || w.tries >= bellTakeTries {
				continue
			}
			if now.Before(w.retryAt) {
				soonest(w.retryAt)
				continue
			}
			take = append(take, name)
		}
		for name := range b.held {
			if w := b.want[name]; w == nil || w.toll {
				free = append(free, name) // a tolled one is taken again next round
				if w != nil {
					w.toll, w.tries, w.retryAt = false, 0, time.Time{}
				}
			}
		}
		check := false
		if len(b.held) > 0 {
			if now.Before(b.checkAt) {
				soonest(b.checkAt)
			} else {
				check = true
			}
		}
		if len(take) > 0 && b.conn == nil && now.Before(b.connAt) {
			soonest(b.connAt)
			take = nil
		}
		if len(free) == 0 && len(take) == 0 && !check {
			if b.conn != nil && len(b.held) == 0 {
				_ = b.conn.Close() // holds no named lock: back to the pool
				b.conn = nil
			}
			if b.closed || (len(b.held) == 0 && next.IsZero()) {
				if b.conn != nil {
					discard(b.conn)
					b.conn = nil
				}
				b.held = map[string]bool{}
				b.running = false
				if b.stopped != nil {
					close(b.stopped)
				}
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			b.sleep(next)
			continue
		}
		b.mu.Unlock()

		// Free first: a waiter is waiting on those.
		if len(free) > 0 {
			b.free(free)
		}
		if len(take) > 0 {
			b.take(take)
		}
		if check {
			b.ping()
		}
	}
}

// ping checks that the connection holding the bells is alive; when it is
// not, the server has freed them (which woke their waiters), and they are
// taken again on a new connection.
func (b *bells) ping() {
	b.mu.Lock()
	conn := b.conn
	b.checkAt = time.Now().Add(bellCheckInterval)
	b.mu.Unlock()
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), bellCallTimeout)
	err := conn.PingContext(ctx)
	cancel()
	if err != nil {
		b.mu.Lock()
		b.lostLocked()
		b.mu.Unlock()
	}
}

// sleep waits until next (none: until kicked) or a kick.
func (b *bells) sleep(next time.Time) {
	if next.IsZero() {
		<-b.kick
		return
	}
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	select {
	case <-b.kick:
	case <-t.C:
	}
}

// free sends RELEASE_LOCK for names, which the connection holds.
func (b *bells) free(names []string) {
	for len(names) > 0 {
		n := min(len(names), bellBatch)
		got, err := b.call("RELEASE_LOCK(?)", names[:n])
		b.mu.Lock()
		if err != nil {
			b.lostLocked()
			b.mu.Unlock()
			return
		}
		for i, name := range names[:n] {
			if !got[i].Valid || got[i].Int64 != 1 {
				// The session did not hold it after all: what else it
				// holds is not known either.
				b.lostLocked()
				b.mu.Unlock()
				return
			}
			delete(b.held, name)
		}
		b.mu.Unlock()
		names = names[n:]
	}
}

// take sends GET_LOCK(name, 0) for names. A name another session holds
// is tried again later, up to bellTakeTries times.
func (b *bells) take(names []string) {
	if b.conn == nil {
		ctx, cancel := context.WithTimeout(context.Background(), bellCallTimeout)
		conn, err := b.db.Conn(ctx)
		cancel()
		b.mu.Lock()
		if errors.Is(err, sql.ErrConnDone) {
			b.closed, b.want = true, map[string]*bellWant{} // db was closed
		}
		if err != nil {
			b.backoffLocked()
			b.mu.Unlock()
			return
		}
		b.conn = conn
		b.checkAt = time.Now().Add(bellCheckInterval)
		b.mu.Unlock()
	}
	for len(names) > 0 {
		n := min(len(names), bellBatch)
		got, err := b.call("GET_LOCK(?, 0)", names[:n])
		b.mu.Lock()
		if err != nil {
			b.lostLocked()
			b.mu.Unlock()
			return
		}
		b.pause = 0
		now := time.Now()
		for i, name := range names[:n] {
			switch {
			case !got[i].Valid:
				b.lostLocked()
				b.mu.Unlock()
				return
			case got[i].Int64 == 1:
				b.held[name] = true
			default: // another session holds it
				if w := b.want[name]; w != nil {
					w.retryAt = now.Add(bellRetryMin << w.tries)
					w.tries++
				}
			}
		}
		b.mu.Unlock()
		names = names[n:]
	}
}

// call runs SELECT fn('name'), ... for names on the connection and
// returns the answers. The names are written into the statement (they
// are bellPrefix and hex digits, see bellName), which the driver then
// sends as it is, in one round trip, rather than preparing it first.
func (b *bells) call(fn string, names []string) ([]sql.NullInt64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bellCallTimeout)
	defer cancel()
	got := make([]sql.NullInt64, len(names))
	dest := make([]any, len(names))
	var q strings.Builder
	q.WriteString("SELECT ")
	for i, name := range names {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(strings.Replace(fn, "?", quoteName(name), 1))
		dest[i] = &got[i]
	}
	if err := b.conn.QueryRowContext(ctx, q.String()).Scan(dest...); err != nil {
		return nil, err
	}
	return got, nil
}

// quoteName returns a bell's name as an SQL string literal. A name is
// bellPrefix and hex digits: nothing in it needs escaping.
func quoteName(name string) string { return "'" + name + "'" }

// lostLocked closes the connection, which frees whatever it held, and
// asks for the wanted bells again on a new one after a pause. b.mu is
// held.
func (b *bells) lostLocked() {
	if b.conn != nil {
		discard(b.conn)
		b.conn = nil
	}
	b.held = map[string]bool{}
	for _, w := range b.want {
		w.tries, w.retryAt = 0, time.Time{}
	}
	b.backoffLocked()
}

// backoffLocked sets when to ask for a connection again. b.mu is held.
func (b *bells) backoffLocked() {
	b.pause = min(max(2*b.pause, bellConnRetryMin), bellConnRetryMax)
	b.connAt = time.Now().Add(b.pause)
}
