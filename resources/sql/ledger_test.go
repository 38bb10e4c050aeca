package sql_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// ledger is a small ledger on PostgreSQL, reached through pgx: accounts
// with balances (and a fenced column), entries, and a fence table, all
// with names of their own.
type ledger struct {
	accounts, entries, fenceTable string
	fences                        *fencesql.Fences[pgx.Tx]
	column                        *fencesql.Column[pgx.Tx]
}

func newLedger(t testing.TB, conn *pgx.Conn) *ledger {
	t.Helper()
	ctx := context.Background()
	l := &ledger{accounts: uniqueName("accounts"), entries: uniqueName("entries"), fenceTable: uniqueName("fence")}
	tb := fencesql.Options{FenceTable: l.fenceTable, ValueTable: uniqueName("value")}
	var err error
	if l.fences, err = fencesql.NewPgx(conn, &tb); err != nil {
		t.Fatal(err)
	}
	if l.column, err = l.fences.Column(l.accounts, "id", "fence"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE TABLE %q (id bigint PRIMARY KEY, balance bigint NOT NULL, %s)`, l.accounts, l.column.Definition()),
		fmt.Sprintf(`CREATE TABLE %q (id bigserial PRIMARY KEY, account bigint NOT NULL, amount bigint NOT NULL)`, l.entries),
		fmt.Sprintf(`INSERT INTO %q (id, balance) SELECT g, 0 FROM generate_series(1, 10) g`, l.accounts),
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.fences.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tbl := range []string{l.accounts, l.entries, tb.FenceTable, tb.ValueTable} {
			_, _ = conn.Exec(context.Background(), fmt.Sprintf(`DROP TABLE IF EXISTS %q`, tbl))
		}
	})
	return l
}

// write credits account in tx: credit the account, record the entry.
func (l *ledger) write(ctx context.Context, tx pgx.Tx, account, amount int64) error {
	if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %q SET balance = balance + $1 WHERE id = $2`, l.accounts), amount, account); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %q (account, amount) VALUES ($1, $2)`, l.entries), account, amount)
	return err
}

// balance returns the balance of account and the number of its entries.
func (l *ledger) balance(t testing.TB, conn *pgx.Conn, account int64) (balance, entries int64) {
	t.Helper()
	err := conn.QueryRow(context.Background(), fmt.Sprintf(
		`SELECT balance, (SELECT count(*) FROM %q WHERE account = $1) FROM %q WHERE id = $1`, l.entries, l.accounts),
		account).Scan(&balance, &entries)
	if err != nil {
		t.Fatal(err)
	}
	return balance, entries
}

// roundTrips counts the request flights a connection sends: a write that
// follows a read (or comes first) starts one.
type roundTrips struct {
	mu      sync.Mutex
	flights int
	reading bool
}

func (r *roundTrips) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, rt: r}, nil
}

func (r *roundTrips) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flights
}

type countingConn struct {
	net.Conn
	rt *roundTrips
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.rt.mu.Lock()
	if c.rt.reading || c.rt.flights == 0 {
		c.rt.flights++
	}
	c.rt.reading = false
	c.rt.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.rt.mu.Lock()
	c.rt.reading = true
	c.rt.mu.Unlock()
	return n, err
}

// callTracer counts the calls pgx makes to the server: queries, execs
// (begin and commit among them) and batches.
type callTracer struct{ calls atomic.Int64 }

func (c *callTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.calls.Add(1)
	return ctx
}
func (c *callTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *callTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.calls.Add(1)
	return ctx
}
func (c *callTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *callTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// connect opens one pgx connection counting round trips and calls.
func connect(t testing.TB) (*pgx.Conn, *roundTrips, *callTracer) {
	t.Helper()
	cfg, err := pgx.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rt, tr := &roundTrips{}, &callTracer{}
	cfg.DialFunc = rt.dial
	cfg.Tracer = tr
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn, rt, tr
}
