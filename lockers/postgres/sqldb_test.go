package postgres

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/createtest"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// oddStrings are keys and owners that an array's text must quote: quotes,
// backslashes, braces, commas, spaces, NULL, the empty string, unicode.
var oddStrings = []string{`a"b`, `c\d`, `{e,f}`, " g ", "NULL", "", "h\ti", "ünï€", `\"}{,`}

// TestSQLArrays: the text of an array that sqlRunner sends for []string
// and []int64 reaches the server as the same elements, on both drivers,
// and a bigint[] comes back the same.
func TestSQLArrays(t *testing.T) {
	t.Parallel()
	ints := []int64{0, 1, -1, 1<<63 - 1, -1 << 63}
	for _, w := range sqlWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			r := sqlRunner{newSQLDB(t, w.sqlDriver, 1)}
			var n int
			err := r.queryRow(t.Context(), `SELECT count(*) FROM unnest($1::text[]) WITH ORDINALITY AS u (s, i)
WHERE s IS NOT DISTINCT FROM ($2::text[])[i]`, oddStrings, textArrayOf(t, oddStrings)).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			var back []string
			rows, err := r.db.QueryContext(t.Context(), `SELECT unnest($1::text[])`, textArrayOf(t, oddStrings))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				back = append(back, s)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, oddStrings) {
				t.Errorf("text[] of %q came back as %q", oddStrings, back)
			}
			var got []int64
			if err := r.queryRow(t.Context(), `SELECT $1::bigint[]`, ints).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, ints) {
				t.Errorf("bigint[] %v came back as %v", ints, got)
			}
			if err := r.queryRow(t.Context(), `SELECT '{}'::bigint[]`).Scan(&got); err != nil || len(got) != 0 {
				t.Errorf("empty bigint[] came back as %v, %v", got, err)
			}
		})
	}
}

// TestRenewBatchOddKeys renews, through each way, leases whose keys and
// owners are oddStrings (but the empty ones, which the locker refuses):
// each is renewed, and a lease of each not held is not.
func TestRenewBatchOddKeys(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1, nil)
	table := newTable(t, pool)
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			l := w.locker(t, table.tableName(), 2)
			var leases []fence.Lease
			for _, s := range oddStrings {
				if s == "" {
					continue
				}
				lease, err := l.Acquire(t.Context(), w.name+s, time.Minute, &fence.AcquireOptions{Owner: s})
				if err != nil {
					t.Fatalf("Acquire %q: %v", w.name+s, err)
				}
				stale := lease
				stale.Token++
				leases = append(leases, lease, stale)
			}
			errs := l.d.RenewBatch(t.Context(), leases)
			for i, err := range errs {
				held := i%2 == 0
				if held && err != nil || !held && !errors.Is(err, fence.ErrNotHeld) {
					t.Errorf("RenewBatch of %+v (held %v): %v", leases[i], held, err)
				}
			}
		})
	}
}

// TestSQLWokenByNotification: a release or break through a Locker on
// database/sql notifies a waiter on a pool, and a waiter on a *sql.DB
// with pgx's driver hears a release through a pool.
func TestSQLWokenByNotification(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		for _, w := range sqlWays {
			t.Run(how+"/"+w.name+" frees", func(t *testing.T) {
				t.Parallel()
				onPool := newTable(t, newPool(t, 4, nil))
				waittest.WokenByFree(t, w.locker(t, onPool.tableName(), 4).Locker, onPool.Locker, how)
			})
		}
		t.Run(how+"/stdlib waits", func(t *testing.T) {
			t.Parallel()
			onPool := newTable(t, newPool(t, 4, nil))
			waittest.WokenByFree(t, onPool.Locker, stdlibWay.locker(t, onPool.tableName(), 4).Locker, how)
		})
	}
}

// stdlibWay is NewSQL with pgx's driver.
var stdlibWay = sqlWays[0]

// TestSQLNotifyReleaseActiveOnReturn: with pgx's driver, a release right
// after NotifyRelease returned is heard.
func TestSQLNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a := newTable(t, newPool(t, 4, nil))
	b := stdlibWay.locker(t, a.tableName(), 4)
	waittest.ActiveOnReturn(t, a.Locker, b.d)
}

// TestSQLListener: with pgx's driver the listening connection is one of
// its own, not one of the *sql.DB's, and closes with the Locker; the
// *sql.DB stays open.
func TestSQLListener(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	a := newTable(t, pool)
	db := newSQLDB(t, "pgx", 1)
	l := newSQLTestLocker(t, db, &Options{Table: a.tableName()})
	if _, _, err := l.d.NotifyRelease(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	pid := listening(l.d.ln)
	if pid == 0 {
		t.Fatal("no listening connection after NotifyRelease")
	}
	var name string
	if err := pool.QueryRow(ctx, "SELECT application_name FROM pg_stat_activity WHERE pid = $1", int32(pid)).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "fence listener" {
		t.Errorf("the listening connection's application_name is %q, want fence listener", name)
	}
	var dbPID int32
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&dbPID); err != nil {
		t.Fatal(err)
	}
	if uint32(dbPID) == pid {
		t.Error("the listening connection is the *sql.DB's")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if listening(l.d.ln) != 0 {
		t.Error("still listening after Close")
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("the *sql.DB after the Locker's Close: %v", err)
	}
}

// TestSQLNotifyReleaseLibPQ: with lib/pq the Locker cannot listen, so
// NotifyRelease says so (at once, from the second call on), and Lock
// waits by polling.
func TestSQLNotifyReleaseLibPQ(t *testing.T) {
	t.Parallel()
	a := newTable(t, newPool(t, 2, nil))
	b := sqlWays[1].locker(t, a.tableName(), 2)
	for range 2 {
		_, _, err := b.d.NotifyRelease(t.Context(), "k")
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "pgx's database/sql driver") {
			t.Fatalf("NotifyRelease on lib/pq: %v, want ErrUnsupported naming pgx's driver", err)
		}
	}
	holder, err := waittest.NewSession(t, a.Locker, &fence.SessionOptions{TTL: time.Minute}).Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, b.Locker, "k", fence.SessionOptions{TTL: time.Minute, PollInterval: 200 * time.Millisecond})
	if err := holder.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := waittest.Wait(t, result, waittest.WakeBound)
	_ = r.Handle.Release(t.Context())
}

// TestSQLCreateRace: replicas on database/sql creating the lease table
// at once, each through a *sql.DB of its own, all succeed.
func TestSQLCreateRace(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1, nil)
	for _, w := range sqlWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
				table := uniqueName("fence_test_")
				t.Cleanup(func() { dropTable(t, pool, pgx.Identifier{table}.Sanitize()) })
				creates := make([]createtest.Create, n)
				for i := range creates {
					creates[i] = w.locker(t, table, 1).Create
				}
				return creates
			})
		})
	}
}

// TestSQLCreateMissingSchema: on database/sql too, Create makes tables,
// not schemas, and says so.
func TestSQLCreateMissingSchema(t *testing.T) {
	t.Parallel()
	for _, w := range sqlWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			schema := uniqueName("fence_noschema_")
			err := w.locker(t, schema+".locks", 1).Create(t.Context())
			want := `fence/postgres: create: schema "` + schema + `" does not exist; create it first`
			if !errors.Is(err, fence.ErrStoreMissing) || !reachesServerError(w, err) || !strings.Contains(err.Error(), want) {
				t.Errorf("Create in a missing schema: %v, want ErrStoreMissing saying %q", err, want)
			}
		})
	}
}

// TestSQLAs: a Locker of NewSQL gives its *sql.DB, and no pgx value; a
// Locker of New gives no *sql.DB.
func TestSQLAs(t *testing.T) {
	t.Parallel()
	db := newSQLDB(t, "pgx", 1)
	l, err := NewSQL(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got *sql.DB
	if !l.As(&got) || got != db {
		t.Errorf("As(**sql.DB) gave %p, want %p", got, db)
	}
	var d DB
	var p *pgxpool.Pool
	var c *pgx.Conn
	if l.As(&d) || l.As(&p) || l.As(&c) {
		t.Errorf("As gave a pgx value on a *sql.DB: %v %v %v", d, p, c)
	}
	onPool, err := New(newPool(t, 1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got = nil; onPool.As(&got) {
		t.Errorf("As(**sql.DB) on a pool gave %p", got)
	}
	if _, err := NewSQL(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("NewSQL(nil): %v, want ErrInvalid", err)
	}
	if _, err := NewSQL(db, &Options{Table: "a.b.c"}); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("NewSQL with table a.b.c: %v, want ErrInvalid", err)
	}
}

// TestSQLContextEndsInFlight: on database/sql too, a statement blocked on
// a row lock when ctx ends is interrupted, and the error matches ctx's.
func TestSQLContextEndsInFlight(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	table := newTable(t, pool)
	for _, w := range sqlWays {
		t.Run(w.name, func(t *testing.T) {
			// A key of its own: the statement interrupted may still
			// take it once the row is unlocked.
			key := "k-" + w.name
			lease, err := table.Acquire(t.Context(), key, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := table.Release(t.Context(), lease); err != nil { // a free row: Acquire would write it
				t.Fatal(err)
			}
			tx, err := pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			if _, err := tx.Exec(t.Context(), "SELECT FROM "+table.quotedTable()+" WHERE key = $1 FOR UPDATE", key); err != nil {
				t.Fatal(err)
			}
			l := w.locker(t, table.tableName(), 1)
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			if _, err := l.Acquire(ctx, key, time.Minute, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire blocked when ctx ended: %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

// textArrayOf returns the text sqlRunner sends for elems.
func textArrayOf(t *testing.T, elems []string) string {
	t.Helper()
	args, err := sqlArgs([]any{elems})
	if err != nil {
		t.Fatal(err)
	}
	return args[0].(string)
}
