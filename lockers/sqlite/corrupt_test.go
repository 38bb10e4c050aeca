package sqlite_test

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestCorruptRow: a row edited by hand out of the table's ranges is
// reported with fence.ErrCorrupt by Acquire and Inspect, and left as it
// is: nothing is lost, and an operator can see and repair it.
func TestCorruptRow(t *testing.T) {
	t.Parallel()
	l := open(t, fileURL(t), nil)
	var db *sql.DB
	l.As(&db)
	for _, tc := range []struct{ name, owner, token, expires, why string }{
		{"token zero", "'o'", "0", "NULL", "token 0 is not positive"},
		{"token negative", "'o'", "-5", "NULL", "token -5 is not positive"},
		{"owner empty", "''", "3", "NULL", "owner is empty"},
		{"expiry negative", "'o'", "3", "-1", "expires -1"},
		{"token at the maximum", "'o'", "9223372036854775807", "NULL", "2^63-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "corrupt-" + tc.name
			if _, err := db.Exec(`INSERT INTO fence_locks (key, owner, token, expires) VALUES (?, `+tc.owner+`, `+tc.token+`, `+tc.expires+`)`, key); err != nil {
				t.Fatal(err)
			}
			_, err := l.Acquire(t.Context(), key, time.Minute, nil)
			if !errors.Is(err, fence.ErrCorrupt) || !contains(err, tc.why) {
				t.Errorf("Acquire = %v; want fence.ErrCorrupt saying %q", err, tc.why)
			}
			if tc.name != "token at the maximum" {
				if _, err := l.Inspect(t.Context(), key); !errors.Is(err, fence.ErrCorrupt) {
					t.Errorf("Inspect = %v; want fence.ErrCorrupt", err)
				}
			}
			var owner string
			var token int64
			var expires sql.NullInt64
			if err := db.QueryRow(`SELECT owner, token, expires FROM fence_locks WHERE key = ?`, key).Scan(&owner, &token, &expires); err != nil {
				t.Fatal(err)
			}
			if got := rowText(owner, token, expires); got != rowText(unquote(tc.owner), parse(tc.token), parseNull(tc.expires)) {
				t.Errorf("the row is now %s; want it as written", got)
			}
		})
	}
}
