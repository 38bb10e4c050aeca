package sql_test

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// errAnswerLost is what a client sees in place of the answer to a COMMIT
// the database applied.
var errAnswerLost = errors.New("fence test: connection cut after the COMMIT was answered")

// loseOnce loses the answer to one COMMIT, the first one sent through any
// connection that shares it, and calls after once the database has
// applied it.
type loseOnce struct {
	t       testing.TB
	after   func()
	claimed atomic.Bool
}

// claim reports whether the caller's COMMIT is the one to lose.
func (l *loseOnce) claim() bool { return l.claimed.CompareAndSwap(false, true) }

// lossyDial returns a pgx DialFunc whose connections lose the answer to
// the first COMMIT sent through any of them: the server receives and
// applies it, the connection reads the answer, calls after and is cut
// before the client sees the answer.
func lossyDial(t testing.TB, after func()) pgconn.DialFunc {
	l := &loseOnce{t: t, after: after}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: c, lose: l, out: frontend{startup: true}}, nil
	}
}

// cutConn is a connection to PostgreSQL that loses the answer to a COMMIT
// when its loseOnce says so.
type cutConn struct {
	net.Conn
	lose *loseOnce

	mu      sync.Mutex
	out     frontend // the client's messages, for spotting a COMMIT
	pending bool     // a COMMIT to lose was sent; its answer is not read yet
}

func (c *cutConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.out.scan(p) && c.lose.claim() {
		c.pending = true
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *cutConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	pending := c.pending
	c.pending = false
	c.mu.Unlock()
	if !pending {
		return c.Conn.Read(p)
	}
	// Read the server's whole answer to the COMMIT, up to ReadyForQuery,
	// and keep it from the client.
	tag, err := readAnswer(c.Conn)
	if err != nil {
		c.lose.t.Errorf("reading the answer to the COMMIT to lose: %v", err)
	} else if tag != "COMMIT" {
		c.lose.t.Errorf("the server answered the COMMIT to lose with %q; want COMMIT (the write was not applied)", tag)
	}
	c.lose.after()
	_ = c.Conn.Close()
	return 0, errAnswerLost
}

// frontend follows the messages a PostgreSQL client sends, across writes.
type frontend struct {
	startup bool   // the next message is a startup-phase one, untyped
	buf     []byte // the start of a message not yet complete
}

// scan consumes p and reports whether it completed a simple-query COMMIT.
func (f *frontend) scan(p []byte) bool {
	f.buf = append(f.buf, p...)
	found := false
	for {
		head := 5
		if f.startup {
			head = 4
		}
		if len(f.buf) < head {
			return found
		}
		n := int(binary.BigEndian.Uint32(f.buf[head-4 : head])) // counts itself
		end := head - 4 + n
		if n < 4 || len(f.buf) < end {
			return found
		}
		msg := f.buf[:end]
		switch {
		case f.startup:
			// SSLRequest and GSSENCRequest are followed by another
			// startup-phase message; anything else ends the phase.
			if code := binary.BigEndian.Uint32(msg[4:8]); n != 8 || (code != 80877103 && code != 80877104) {
				f.startup = false
			}
		case msg[0] == 'Q':
			q := strings.TrimSpace(string(bytes.TrimRight(msg[5:], "\x00")))
			found = found || strings.EqualFold(strings.TrimSuffix(q, ";"), "commit")
		}
		f.buf = append(f.buf[:0], f.buf[end:]...)
	}
}

// readAnswer reads backend messages from r up to ReadyForQuery and returns
// the last CommandComplete tag.
func readAnswer(r io.Reader) (tag string, err error) {
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			return tag, err
		}
		body := make([]byte, int(binary.BigEndian.Uint32(head[1:]))-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return tag, err
		}
		switch head[0] {
		case 'C':
			tag = string(bytes.TrimRight(body, "\x00"))
		case 'Z':
			return tag, nil
		}
	}
}

// lostSQLiteDB opens the SQLite database dsn through a driver that loses
// the answer to the first COMMIT: SQLite is embedded, so no network can
// lose it; the nearest is a driver that reports a failure after the
// database has committed, which is what this one does.
func lostSQLiteDB(t testing.TB, dsn string, after func()) *sql.DB {
	t.Helper()
	plain, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	drv := plain.Driver()
	_ = plain.Close()
	db := sql.OpenDB(&lossyConnector{drv: drv, dsn: dsn, lose: &loseOnce{t: t, after: after}})
	t.Cleanup(func() { _ = db.Close() })
	return db
}

type lossyConnector struct {
	drv  driver.Driver
	dsn  string
	lose *loseOnce
}

func (c *lossyConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &lossyConn{Conn: conn, lose: c.lose}, nil
}

func (c *lossyConnector) Driver() driver.Driver { return c.drv }

// lossyConn passes everything through to SQLite's connection, wrapping
// its transactions.
type lossyConn struct {
	driver.Conn
	lose *loseOnce
}

func (c *lossyConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, fmt.Errorf("fence test: %T has no BeginTx", c.Conn)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &lossyTx{Tx: tx, lose: c.lose}, nil
}

func (c *lossyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *lossyConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *lossyConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

type lossyTx struct {
	driver.Tx
	lose *loseOnce
}

func (tx *lossyTx) Commit() error {
	if err := tx.Tx.Commit(); err != nil {
		return err
	}
	if !tx.lose.claim() {
		return nil
	}
	tx.lose.after()
	return errAnswerLost
}

// withLostResource gives b a constructor of Resources whose first COMMIT
// loses its answer; dsn is the SQLite database's, unused elsewhere.
func withLostResource(b *backend, dsn string) *backend {
	b.lostResource = func(t *testing.T, tb fencesql.Options, after func()) *fence.Resource {
		t.Helper()
		var f fences
		var err error
		switch b.name {
		case "sqlite":
			f, err = stdFences(lostSQLiteDB(t, dsn, after), fencesql.SQLite)(&tb)
		case "postgres-stdlib":
			cfg, perr := pgx.ParseConfig(testenv.PostgresURL(t))
			if perr != nil {
				t.Fatal(perr)
			}
			cfg.DialFunc = lossyDial(t, after)
			db := stdlib.OpenDB(*cfg)
			t.Cleanup(func() { _ = db.Close() })
			f, err = stdFences(db, fencesql.PostgreSQL)(&tb)
		case "postgres-pgx":
			cfg, perr := pgxpool.ParseConfig(testenv.PostgresURL(t))
			if perr != nil {
				t.Fatal(perr)
			}
			cfg.ConnConfig.DialFunc = lossyDial(t, after)
			pool, perr := pgxpool.NewWithConfig(context.Background(), cfg)
			if perr != nil {
				t.Fatal(perr)
			}
			t.Cleanup(pool.Close)
			f, err = pgxFences(pool)(&tb)
		case "mysql":
			return mysqlLostResource(t, tb, after)
		default:
			t.Fatalf("no lost-answer resource for backend %s", b.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		return f.Resource()
	}
	return b
}
