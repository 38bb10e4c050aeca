package mysql

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. Expiry is measured by the
// server's clock, which no fake clock can move, so Expire sleeps for it;
// it is short to keep that sleep short, and long enough that a lease does
// not run out between the statements of one case on a busy machine.
const shortTTL = 300 * time.Millisecond

// contenders is the number of goroutines racing for one key in the
// suite's one-winner cases, each with a connection of its own.
const contenders = 8

// harness drives the conformance suite on one lease table of a unique
// name; noReturning makes its lockers take MySQL's path (no RETURNING).
func harness(t *testing.T, db *sql.DB, noReturning bool) lockertest.Harness {
	table := uniqueName("fence_test_")
	newLockerOn(t, db, table)
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			l := newTestLocker(t, db, &Options{Table: table})
			if noReturning {
				l.d.dia.set(dialectNoReturns)
			}
			return l.Locker
		},
		TTL:      time.Minute,
		ShortTTL: shortTTL,
		// Every short lease was taken before Expire is called, so its
		// server expiry (statement start + ShortTTL) is at most ShortTTL
		// away; the margin covers timer granularity.
		Expire:     func(*testing.T) { time.Sleep(shortTTL + 20*time.Millisecond) },
		Pass:       func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen:  MaxKeyLen,
		BadTTLs:    []time.Duration{0, -time.Second, MinTTL - time.Microsecond, MaxTTL + time.Millisecond},
		Now:        time.Now,
		Contenders: contenders,
	}
}

// TestConformance runs the suite on MariaDB with its statements
// (RETURNING).
func TestConformance(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t, newDB(t, contenders+2), false))
}

// TestConformanceWithoutReturning runs the suite on MariaDB with the
// statements the locker sends to MySQL, which has no INSERT ..
// RETURNING: what is verified of that path here (MySQL itself is not).
func TestConformanceWithoutReturning(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t, newDB(t, contenders+2), true))
}

// TestConformanceWaking runs the suite on a pool without a limit, where
// the Locker holds the bells of its leases and its waiters wait on them
// (see wake_test.go).
func TestConformanceWaking(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	h := harness(t, db, false)
	newLocker := h.New
	h.New = func(t *testing.T) *fence.Locker {
		l := newLocker(t)
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	lockertest.Run(t, h)
}

// TestLayering: New returns the portable locker over the mysql driver,
// whose As gives the *sql.DB and nothing else.
func TestLayering(t *testing.T) {
	t.Parallel()
	db := newDB(t, 1)
	if _, err := New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil db): %v, want ErrInvalid", err)
	}
	l, err := New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := driver.Info{Name: "mysql", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
	if info := driver.InfoOf(l); info != want {
		t.Errorf("Info = %+v, want %+v", info, want)
	}
	var got *sql.DB
	if !l.As(&got) || got != db {
		t.Errorf("As(**sql.DB) gave %p, want the db %p", got, db)
	}
	var s string
	if l.As(&s) || l.As(nil) || l.As(got) {
		t.Error("As gave a value for a *string, nil or a *sql.DB")
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.PingContext(t.Context()); err != nil {
		t.Errorf("the caller's db after the Locker's Close: %v", err)
	}
}
