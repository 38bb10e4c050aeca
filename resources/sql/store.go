package sql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// Store is the portable form of this package: a fence.Resource keeping
// named values in a value table, fenced by a fence table (see Tables), one
// transaction per call. Create it with NewStore (database/sql: PostgreSQL
// or SQLite) or NewPgxStore (native pgx) after creating the tables. It is
// safe for concurrent use.
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
// advances token in the fence table, then stores value.
func (s *Store) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	if err := validWrite(name, token); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // a value, not a NULL
	}
	return s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.fences.check(ctx, q, name, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.put, name, value, int64(token)); err != nil {
			return fmt.Errorf("fencesql: put %q: %w", name, err)
		}
		return nil
	})
}

// Delete implements fence.Resource: in one transaction, it checks and
// advances token in the fence table, then deletes the value. The fence row
// is the tombstone.
func (s *Store) Delete(ctx context.Context, name string, token fence.Token) error {
	if err := validWrite(name, token); err != nil {
		return err
	}
	return s.run(ctx, func(ctx context.Context, q querier) error {
		if err := s.fences.check(ctx, q, name, token); err != nil {
			return err
		}
		if _, err := q.exec(ctx, s.del, name); err != nil {
			return fmt.Errorf("fencesql: delete %q: %w", name, err)
		}
		return nil
	})
}

// Get implements fence.Resource. The error for an absent name is a
// *fence.NotFoundError telling a tombstone from a name never written.
func (s *Store) Get(ctx context.Context, name string) (value []byte, token fence.Token, err error) {
	if err := fence.ValidateKey("name", name, MaxNameLen); err != nil {
		return nil, 0, err
	}
	err = s.run(ctx, func(ctx context.Context, q querier) error {
		var highest, stored any
		var v []byte
		err := q.queryRow(ctx, s.get, name).Scan(&highest, &v, &stored)
		if isNoRows(err) {
			return &fence.NotFoundError{Name: name}
		}
		if err != nil {
			return fmt.Errorf("fencesql: get %q: %w", name, err)
		}
		h, ok := asInt64(highest)
		if !ok || h <= 0 {
			return &fence.CorruptError{Key: name, Reason: "fence token is " + describe(highest) + ", not a positive integer"}
		}
		if stored == nil {
			return &fence.NotFoundError{Name: name, Tombstone: true}
		}
		t, ok := asInt64(stored)
		if !ok || t <= 0 || t > h {
			return &fence.CorruptError{Key: name, Reason: fmt.Sprintf("value token is %s, not a positive integer at most the fence token %d", describe(stored), h)}
		}
		if v == nil {
			v = []byte{}
		}
		value, token = v, fence.Token(t)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return value, token, nil
}

// Highest implements fence.Resource.
func (s *Store) Highest(ctx context.Context, name string) (fence.Token, error) {
	if err := fence.ValidateKey("name", name, MaxNameLen); err != nil {
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
