package mysql

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestCorruptRow edits rows by hand into states the locker never writes.
// Acquire and Inspect report them with ErrCorrupt, never ErrInvalid (the
// row is at fault, not the caller's input), and Acquire writes nothing
// over them, on both paths (with and without RETURNING).
func TestCorruptRow(t *testing.T) {
	t.Parallel()
	db := newDB(t, 4, "sql_mode=%27%27") // sql_mode='' lets the test store zero dates
	l := newTable(t, db)
	table := l.quotedTable()
	// Allow the NULLs someone could store after altering the table.
	mustExec(t, db, "ALTER TABLE "+table+" MODIFY token BIGINT NULL, MODIFY owner VARBINARY(1024) NULL")
	mysqlPath := newTestLocker(t, db, &Options{Table: table[1 : len(table)-1]})
	mysqlPath.d.dia.set(dialectNoReturns)
	tests := []struct {
		name, set string
	}{
		{"token zero", "token = 0"},
		{"negative token", "token = -7"},
		{"NULL token", "token = NULL"},
		{"NULL owner", "owner = NULL"},
		{"empty owner", "owner = ''"},
		{"zero date expiry", "expires_at = '0000-00-00 00:00:00'"},
		{"expiry before 1970", "expires_at = '1000-01-01'"},
		{"expiry in 9999", "expires_at = '9999-12-31 23:59:59'"},
		{"expiry in 5000", "expires_at = '5000-01-01'"},
		{"free with token zero", "token = 0, expires_at = NULL"},
	}
	for _, tt := range tests {
		for _, path := range []struct {
			name string
			l    testLocker
		}{{"returning", l}, {"mysql", mysqlPath}} {
			t.Run(tt.name+"/"+path.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				key := tt.name + "/" + path.name
				if _, err := path.l.Acquire(ctx, key, shortTTL, nil); err != nil {
					t.Fatalf("Acquire: %v", err)
				}
				mustExec(t, db, "UPDATE "+table+" SET "+tt.set+" WHERE `key` = ?", key)
				rowText := "SELECT CONCAT(IFNULL(HEX(owner), 'NULL'), '|', IFNULL(token, 'NULL'), '|', IFNULL(CAST(expires_at AS CHAR), 'NULL')) FROM " + table + " WHERE `key` = ?"
				var before string
				if err := db.QueryRowContext(ctx, rowText, key).Scan(&before); err != nil {
					t.Fatal(err)
				}
				if _, err := path.l.Inspect(ctx, key); !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
					t.Errorf("Inspect: %v, want ErrCorrupt and not ErrInvalid", err)
				}
				time.Sleep(shortTTL) // a well-formed row would now be expired and taken
				_, err := path.l.Acquire(ctx, key, time.Minute, nil)
				var ce *fence.CorruptError
				if !errors.As(err, &ce) || ce.Key != key || errors.Is(err, fence.ErrInvalid) {
					t.Errorf("Acquire: %v, want a *fence.CorruptError for %q that does not match ErrInvalid", err, key)
				}
				var after string
				if err := db.QueryRowContext(ctx, rowText, key).Scan(&after); err != nil {
					t.Fatal(err)
				}
				if after != before {
					t.Errorf("Acquire changed the corrupted row from %s to %s", before, after)
				}
			})
		}
	}
}
