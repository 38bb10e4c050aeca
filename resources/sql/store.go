package sql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// Store is the portable form of this package: a fence.Resource keeping
// named values in a value table, fenced by a fence table (see Tables), one
// transaction per call. Create it with NewStore (database/sql: PostgreSQL
// or SQLite) or NewPgxStore (native pgx) after creating the tables. It is
// safe for concurrent use.
//
// Nothing a write does is applied before its COMMIT. When the COMMIT was
// sent and its answer lost because the connection broke, Put and Delete
// read the name back on a fresh connection: the write succeeds if it is
// found (its token in the fence row and its value stored, or no value for
// a Delete), and otherwise the error is a *fence.UnknownOutcomeError,
// carrying in Highest the token that has replaced the write since, if one
// has. When ctx ended while the COMMIT was in flight, nothing more is
// sent: the error is a *fence.UnknownOutcomeError that also wraps ctx's
// error, as for the other resources. A retry with the same token and
// value is harmless.
type Store struct {
	fences *Fences
	run    func(ctx context.Context, fn func(ctx context.Context, q querier) error) error
	put    string // upsert of a value
	del    string // delete of a value
	get    string // value, its token and the highest, of one name
}

var _ fence.Resource = (*Store)(nil)

// NewStore returns a Store on db, a PostgreSQL (pgx stdlib) or SQLite
// database holding the tables named by t. Each call runs in a transaction
// through RunTx, so conflicts are retried.
func NewStore(db *sql.DB, t Tables) (*Store, error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	s, err := newStore(t)
	if err != nil {
		return nil, err
	}
	s.run = func(ctx context.Context, fn func(context.Context, querier) error) error {
		return RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, sqlTx{tx}) })
	}
	return s, nil
}

// NewPgxStore returns a Store on db, a *pgxpool.Pool (or a *pgx.Conn used
// by one goroutine at a time) on a PostgreSQL database holding the tables
// named by t. Each call runs in a transaction through RunPgxTx.
func NewPgxStore(db PgxBeginner, t Tables) (*Store, error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	s, err := newStore(t)
	if err != nil {
		return nil, err
	}
	s.run = func(ctx context.Context, fn func(context.Context, querier) error) error {
		return RunPgxTx(ctx, db, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error { return fn(ctx, pgxTx{tx}) })
	}
	return s, nil
}

func newStore(t Tables) (*Store, error) {
	ft, vt, err := t.quoted()
	if err != nil {
		return nil, err
	}
	f, err := NewFences(t.Fence)
	if err != nil {
		return nil, err
	}
	return &Store{
		fences: f,
		put: `INSERT INTO ` + vt + ` (name, value, token) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET value = excluded.value, token = excluded.token`,
		del: `DELETE FROM ` + vt + ` WHERE name = $1`,
		get: `SELECT f.token, v.value, v.token FROM ` + ft + ` f LEFT JOIN ` + vt + ` v ON v.name = f.name WHERE f.name = $1`,
	}, nil
}

// Put implements fence.Resource: in one transaction, it checks and
// advances token in the fence table, then stores value. When the COMMIT
// may have been applied but its answer was lost (see Store), it reads name
// back.
func (s *Store) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	if err := validWrite(name, token); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // a value, not a NULL
	}
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.fences.check(ctx, q, name, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.put, name, value, int64(token)); err != nil {
			return fmt.Errorf("fencesql: put %q: %w", name, err)
		}
		return nil
	})
	return s.settle(ctx, name, token, err, func(r record) bool {
		return r.value != nil && r.token == token && bytes.Equal(r.value, value)
	})
}

// Delete implements fence.Resource: in one transaction, it checks and
// advances token in the fence table, then deletes the value. The fence row
// is the tombstone. A lost answer is reconciled as for Put.
func (s *Store) Delete(ctx context.Context, name string, token fence.Token) error {
	if err := validWrite(name, token); err != nil {
		return err
	}
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.fences.check(ctx, q, name, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.del, name); err != nil {
			return fmt.Errorf("fencesql: delete %q: %w", name, err)
		}
		return nil
	})
	return s.settle(ctx, name, token, err, func(r record) bool { return r.value == nil })
}

// Get implements fence.Resource. The error for an absent name is a
// *fence.NotFoundError telling a tombstone from a name never written.
func (s *Store) Get(ctx context.Context, name string) (value []byte, token fence.Token, err error) {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return nil, 0, err
	}
	r, err := s.read(ctx, name)
	switch {
	case err != nil:
		return nil, 0, err
	case r.highest == 0:
		return nil, 0, &fence.NotFoundError{Key: name}
	case r.value == nil:
		return nil, 0, &fence.NotFoundError{Key: name, Tombstone: true}
	}
	return r.value, r.token, nil
}

// record is what the tables hold for one name.
type record struct {
	highest fence.Token // the fence row's token; 0 when there is none
	value   []byte      // nil when there is no value row (a tombstone)
	token   fence.Token // the value row's token
}

// read returns the record of name, checked: a *fence.CorruptError when a
// token is not positive or the value's is above the fence's.
func (s *Store) read(ctx context.Context, name string) (record, error) {
	var r record
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		var highest, stored any
		var v []byte
		err := q.queryRow(ctx, s.get, name).Scan(&highest, &v, &stored)
		if isNoRows(err) {
			r = record{}
			return nil
		}
		if err != nil {
			return fmt.Errorf("fencesql: get %q: %w", name, err)
		}
		h, ok := asInt64(highest)
		if !ok || h <= 0 {
			return &fence.CorruptError{Key: name, Reason: "fence token is " + describe(highest) + ", not a positive integer"}
		}
		r = record{highest: fence.Token(h)}
		if stored == nil {
			return nil
		}
		t, ok := asInt64(stored)
		if !ok || t <= 0 || t > h {
			return &fence.CorruptError{Key: name, Reason: fmt.Sprintf("value token is %s, not a positive integer at most the fence token %d", describe(stored), h)}
		}
		if v == nil {
			v = []byte{}
		}
		r.value, r.token = v, fence.Token(t)
		return nil
	})
	return r, err
}

// settle returns the outcome of a write of token on name that ended with
// err, reconciling a lost COMMIT answer as the Store doc says: applied
// reports whether the record read back is the write's. For such a COMMIT
// it never returns the raw error, nor a stale token.
func (s *Store) settle(ctx context.Context, name string, token fence.Token, err error, applied func(record) bool) error {
	ce, ok := errors.AsType[*commitError](err)
	if !ok || !ce.maybeApplied() {
		return err
	}
	ue := &fence.UnknownOutcomeError{Key: name, Token: token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		// ctx is done: honour it, as every Resource does, and send
		// nothing more.
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return ue
	}
	r, rerr := s.read(ctx, name)
	switch {
	case rerr != nil:
		ue.Err = errors.Join(ue.Err, fmt.Errorf("fencesql: reading %q back: %w", name, rerr))
	case r.highest == token && applied(r):
		return nil
	case r.highest > token:
		ue.Highest = r.highest
	}
	return ue
}

// Highest implements fence.Resource.
func (s *Store) Highest(ctx context.Context, name string) (fence.Token, error) {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return 0, err
	}
	var h fence.Token
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		var err error
		h, err = s.fences.highest(ctx, q, name)
		return err
	})
	return h, err
}
