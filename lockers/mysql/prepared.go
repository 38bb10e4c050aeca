package mysql

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// prepared keeps the store's statements prepared on the server. Without
// it, go-sql-driver prepares, runs and closes a statement with arguments
// on every call (unless the DSN sets interpolateParams): two round trips.
// A *sql.Stmt is prepared on a connection the first time it runs there,
// and then each call sends only its execution: one round trip.
//
// The first call of a statement runs it unprepared, as before, and
// prepares it in the background for the next calls, so that no call
// waits for a prepare: a statement whose prepare failed (its table is
// missing, say) is prepared again on a later call.
type prepared struct {
	db       *sql.DB
	mu       sync.Mutex
	stmts    map[string]*sql.Stmt
	pending  map[string]bool // prepares under way
	closed   bool
	inFlight sync.WaitGroup
}

func newPrepared(db *sql.DB) *prepared {
	return &prepared{db: db, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// prepareTimeout bounds a background prepare.
const prepareTimeout = 10 * time.Second

// get returns query prepared, or nil when it is not (yet): the caller
// then sends it unprepared.
func (p *prepared) get(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.stmts[query]; s != nil || p.closed || p.pending[query] {
		return s
	}
	p.pending[query] = true
	p.inFlight.Add(1)
	go func() {
		defer p.inFlight.Done()
		ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
		s, err := p.db.PrepareContext(ctx, query)
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.pending, query)
		switch {
		case err != nil:
		case p.closed:
			_ = s.Close()
		default:
			p.stmts[query] = s
		}
	}()
	return nil
}

// close closes the statements: the server forgets them on every
// connection.
func (p *prepared) close() {
	p.mu.Lock()
	p.closed = true
	for q, s := range p.stmts {
		_ = s.Close()
		delete(p.stmts, q)
	}
	p.mu.Unlock()
	p.inFlight.Wait()
}

// exec runs query, prepared once it is, with args.
func (d *store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := d.prep.get(query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return d.db.ExecContext(ctx, query, args...)
}

// queryRow runs query, prepared once it is, with args, for one row.
func (d *store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if s := d.prep.get(query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return d.db.QueryRowContext(ctx, query, args...)
}
