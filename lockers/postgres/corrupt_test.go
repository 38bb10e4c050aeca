package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestCorruptRow edits rows by hand into states the locker never writes.
// Acquire and Inspect report them with ErrCorrupt, never ErrInvalid (the
// row is at fault, not the caller's input), and Acquire writes nothing
// over them, through each way into the locker.
func TestCorruptRow(t *testing.T) {
	t.Parallel()
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			testCorruptRow(t, w)
		})
	}
}

func testCorruptRow(t *testing.T, w way) {
	pool := newPool(t, 2, nil)
	table := newTable(t, pool)
	l := w.locker(t, table.tableName(), 2)
	quoted := table.quotedTable()
	// Allow the NULLs someone could store after altering the table.
	mustExec(t, pool, "ALTER TABLE "+quoted+" ALTER COLUMN token DROP NOT NULL, ALTER COLUMN owner DROP NOT NULL")
	tests := []struct {
		name, set string
	}{
		{"token zero", "token = 0"},
		{"negative token", "token = -7"},
		{"NULL token", "token = NULL"},
		{"NULL owner", "owner = NULL"},
		{"infinite expiry", "expires_at = 'infinity'"},
		{"minus infinite expiry", "expires_at = '-infinity'"},
		{"free with token zero", "token = 0, expires_at = NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			key := tt.name
			if _, err := l.Acquire(ctx, key, shortTTL, nil); err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			mustExec(t, pool, "UPDATE "+quoted+" SET "+tt.set+" WHERE key = $1", key)
			var before string
			rowText := "SELECT " + quoted + "::text FROM " + quoted + " WHERE key = $1"
			if err := pool.QueryRow(ctx, rowText, key).Scan(&before); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Inspect(ctx, key); !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Inspect: %v, want ErrCorrupt and not ErrInvalid", err)
			}
			time.Sleep(shortTTL) // a well-formed row would now be expired and taken
			_, err := l.Acquire(ctx, key, time.Minute, nil)
			var ce *fence.CorruptError
			if !errors.As(err, &ce) || ce.Key != key || errors.Is(err, fence.ErrInvalid) {
				t.Errorf("Acquire: %v, want a *fence.CorruptError for %q that does not match ErrInvalid", err, key)
			}
			var after string
			if err := pool.QueryRow(ctx, rowText, key).Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after != before {
				t.Errorf("Acquire changed the corrupted row from %s to %s", before, after)
			}
		})
	}
}
