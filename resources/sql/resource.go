package sql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Resource returns the portable form of f: a *fence.Resource keeping keyed
// values in the value table, fenced by the fence table (see Options). Each
// write is a transaction of its own and each read one statement, run
// again after a conflict. Its errors read "fence/sql:
// put "k": ...", its Create is f's Create, and its Close does nothing (f
// holds no connection of its own). Each call returns a new Resource over
// the same tables.
//
// Nothing a write does is applied before its COMMIT. When the COMMIT was
// sent and its answer lost because the connection broke, Put and Delete
// read the key back on a fresh connection: the write succeeds if it is
// found (its token in the fence row and its value stored, or no value for
// a Delete), and otherwise the error is a *fence.UnknownOutcomeError,
// carrying in Highest the token that has replaced the write since, if one
// has. When ctx ended while the COMMIT was in flight, nothing more is
// sent: the error is a *fence.UnknownOutcomeError that also wraps ctx's
// error, as for the other resources. A retry with the same token and
// value is harmless. A missing table gets an error matching
// fence.ErrStoreMissing.
//
// The Resource's As gives f (target a **Fences[Tx] of f's Tx) and the
// database it was made with: a **sql.DB for New, a *PgxDB or, for a pool,
// a **pgxpool.Pool for NewPgx.
func (f *Fences[Tx]) Resource() *fence.Resource {
	r, err := f.resource(nil)
	if err != nil {
		panic(err) // a valid driver: NewResource cannot refuse it
	}
	return r
}

// resource returns the portable Resource over f, whose Close calls
// closeDB when it is not nil (a URL opener's).
func (f *Fences[Tx]) resource(closeDB func() error) (*fence.Resource, error) {
	ft, vt, err := quotedTables(f.dialect, f.tables)
	if err != nil {
		return nil, err
	}
	s := &store{
		dialect: f.dialect,
		row:     f.row,
		run:     f.inTx,
		query:   f.conn.read,
		create:  f.create,
		db:      f.db,
		asFences: func(target any) bool {
			p, ok := target.(**Fences[Tx])
			if ok {
				*p = f
			}
			return ok
		},
		put: `INSERT INTO ` + vt + ` (key, value, token) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, token = excluded.token`,
		del:   `DELETE FROM ` + vt + ` WHERE key = $1`,
		claim: `UPDATE ` + vt + ` SET token = $2 WHERE key = $1`,
		get:   `SELECT f.token, v.value, v.token FROM ` + ft + ` f LEFT JOIN ` + vt + ` v ON v.key = f.key WHERE f.key = $1`,
	}
	if f.dialect == MySQL {
		// The fence row has admitted the write before this upsert runs,
		// so it overwrites unconditionally; both assignments take the new
		// row's values, so their order does not matter.
		s.put = `INSERT INTO ` + vt + " (`key`, `value`, `token`) VALUES (?, ?, ?)\n" +
			"ON DUPLICATE KEY UPDATE `value` = VALUES(`value`), `token` = VALUES(`token`)"
		s.del = `DELETE FROM ` + vt + " WHERE `key` = ?"
		s.claim = `UPDATE ` + vt + " SET `token` = ? WHERE `key` = ?"
		s.get = "SELECT f.`token`, v.`value`, v.`token` FROM " + ft + " f LEFT JOIN " + vt + " v ON v.`key` = f.`key` WHERE f.`key` = ?"
	}
	return driver.NewResource(s, &driver.ResourceOptions{Close: closeDB})
}

// store is the driver under Fences.Resource.
type store struct {
	dialect  Dialect
	row      *fenceRow
	run      func(ctx context.Context, fn func(ctx context.Context, q querier) error) error
	query    func(ctx context.Context, fn func(ctx context.Context, q rowQuerier) error) error // a read outside a transaction
	create   func(ctx context.Context) error
	db       any                   // the caller's *sql.DB or PgxDB
	asFences func(target any) bool // sets a **Fences[Tx]
	put      string                // upsert of a value
	del      string                // delete of a value
	claim    string                // the token of a value, raised by a claim
	get      string                // value, its token and the highest, of one key
}

var (
	_ driver.Resource = (*store)(nil)
	_ driver.Creator  = (*store)(nil)
	_ driver.Aser     = (*store)(nil)
)

// ResourceInfo implements driver.Resource.
func (s *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backendName, MaxKeyLen: MaxKeyLen, MaxToken: MaxToken}
}

// Create implements driver.Creator: Fences.Create, its errors unwrapped.
func (s *store) Create(ctx context.Context) error { return s.create(ctx) }

// As implements driver.Aser: see Fences.Resource.
func (s *store) As(target any) bool {
	switch p := target.(type) {
	case **sql.DB:
		db, ok := s.db.(*sql.DB)
		if ok {
			*p = db
		}
		return ok
	case *PgxDB:
		db, ok := s.db.(PgxDB)
		if ok {
			*p = db
		}
		return ok
	case **pgxpool.Pool:
		db, ok := s.db.(*pgxpool.Pool)
		if ok {
			*p = db
		}
		return ok
	}
	return s.asFences(target)
}

// Put implements driver.Resource: in one transaction, it checks and
// advances token in the fence table, then stores value. When the COMMIT
// may have been applied but its answer was lost (see Resource), it reads
// key back.
func (s *store) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	if value == nil {
		value = []byte{} // a value, not a NULL
	}
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.row.check(ctx, q, key, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.put, key, value, int64(token)); err != nil {
			return fmt.Errorf("value table: %w", storeMissing(err))
		}
		return nil
	})
	return s.settle(ctx, key, token, err, func(r record) bool {
		return r.value != nil && r.token == token && bytes.Equal(r.value, value)
	})
}

// Delete implements driver.Resource: in one transaction, it checks
// and advances token in the fence table, then deletes the value. The fence
// row is the tombstone. A lost answer is reconciled as for Put.
func (s *store) Delete(ctx context.Context, key string, token fence.Token) error {
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.row.check(ctx, q, key, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.del, key); err != nil {
			return fmt.Errorf("value table: %w", storeMissing(err))
		}
		return nil
	})
	return s.settle(ctx, key, token, err, func(r record) bool { return r.value == nil })
}

// Claim implements driver.Resource: in one transaction, it checks
// and advances token in the fence table, as Put does, and sets the token
// of the value row, if there is one, to token, leaving the value. A key
// never written gets a fence row and no value row, which Get reports as
// not found (a tombstone: the tables cannot tell the two apart). A lost
// answer is reconciled as for Put: the claim succeeds when the fence row,
// and the value row if there is one, hold token.
func (s *store) Claim(ctx context.Context, key string, token fence.Token) error {
	err := s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.row.check(ctx, q, key, token); err != nil {
			return err
		}
		args := []any{key, int64(token)}
		if s.dialect == MySQL {
			args = []any{int64(token), key}
		}
		if _, err := q.exec(ctx, s.claim, args...); err != nil {
			return fmt.Errorf("value table: %w", storeMissing(err))
		}
		return nil
	})
	return s.settle(ctx, key, token, err, func(r record) bool { return r.value == nil || r.token == token })
}

// Get implements driver.Resource. The error for an absent key is a
// *fence.NotFoundError telling a tombstone from a key never written.
func (s *store) Get(ctx context.Context, key string) (value []byte, token fence.Token, err error) {
	r, err := s.read(ctx, key)
	switch {
	case err != nil:
		return nil, 0, err
	case r.highest == 0:
		return nil, 0, &fence.NotFoundError{Key: key}
	case r.value == nil:
		return nil, 0, &fence.NotFoundError{Key: key, Tombstone: true}
	}
	return r.value, r.token, nil
}

// Highest implements driver.Resource.
func (s *store) Highest(ctx context.Context, key string) (fence.Token, error) {
	var h fence.Token
	err := s.query(ctx, func(ctx context.Context, q rowQuerier) error {
		var err error
		h, err = s.row.highest(ctx, q, key)
		return err
	})
	return h, err
}

// record is what the tables hold for one key.
type record struct {
	highest fence.Token // the fence row's token; 0 when there is none
	value   []byte      // nil when there is no value row (a tombstone)
	token   fence.Token // the value row's token
}

// read returns the record of key, checked: a *fence.CorruptError when a
// token is not positive or the value's is above the fence's.
func (s *store) read(ctx context.Context, key string) (record, error) {
	var r record
	err := s.query(ctx, func(ctx context.Context, q rowQuerier) error {
		var highest, stored any
		var v []byte
		err := q.queryRow(ctx, s.get, key).Scan(&highest, &v, &stored)
		if isNoRows(err) {
			r = record{}
			return nil
		}
		if err != nil {
			return storeMissing(err)
		}
		h, ok := asInt64(highest)
		if !ok || h <= 0 {
			return &fence.CorruptError{Key: key, Reason: "fence token is " + describe(highest) + ", not a positive integer"}
		}
		r = record{highest: fence.Token(h)}
		if stored == nil {
			return nil
		}
		t, ok := asInt64(stored)
		if !ok || t <= 0 || t > h {
			return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value token is %s, not a positive integer at most the fence token %d", describe(stored), h)}
		}
		if v == nil {
			v = []byte{}
		}
		r.value, r.token = v, fence.Token(t)
		return nil
	})
	return r, err
}

// settle returns the outcome of a write of token on key that ended with
// err, reconciling a lost COMMIT answer as the Resource doc says: applied
// reports whether the record read back is the write's. For such a COMMIT
// it never returns the raw error, nor a stale token.
func (s *store) settle(ctx context.Context, key string, token fence.Token, err error, applied func(record) bool) error {
	ce, ok := errors.AsType[*commitError](err)
	if !ok || !ce.maybeApplied() {
		return err
	}
	ue := &fence.UnknownOutcomeError{Key: key, Token: token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		// ctx is done: honour it, as every Resource does, and send
		// nothing more.
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return ue
	}
	r, rerr := s.read(ctx, key)
	switch {
	case rerr != nil:
		ue.Err = errors.Join(ue.Err, fmt.Errorf("reading back: %w", rerr))
	case r.highest == token && applied(r):
		return nil
	case r.highest > token:
		ue.Highest = r.highest
	}
	return ue
}
