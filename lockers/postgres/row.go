package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
)

// row is a well-formed row of the lease table.
type row struct {
	owner   string
	token   fence.Token
	expires time.Time // zero when free
}

// heldAt reports whether the lease is unexpired at the server time now.
func (r row) heldAt(now time.Time) bool {
	return !r.expires.IsZero() && r.expires.After(now)
}

// checkRow turns the columns of a row into a row, or a *fence.CorruptError
// when they break the table's invariants (someone edited the row by hand):
// a NULL owner or token, a token that is not positive, an infinite expiry.
func checkRow(key string, owner pgtype.Text, token pgtype.Int8, expires pgtype.Timestamptz) (row, error) {
	switch {
	case !owner.Valid:
		return row{}, &fence.CorruptError{Key: key, Reason: "owner is NULL"}
	case !token.Valid:
		return row{}, &fence.CorruptError{Key: key, Reason: "token is NULL"}
	case token.Int64 <= 0:
		return row{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("token %d is not positive", token.Int64)}
	case expires.Valid && expires.InfinityModifier != pgtype.Finite:
		return row{}, &fence.CorruptError{Key: key, Reason: "expires_at is infinite"}
	}
	r := row{owner: owner.String, token: fence.Token(token.Int64)}
	if expires.Valid {
		r.expires = expires.Time
	}
	return r, nil
}

// localTime translates the server time at into the caller's clock: the time
// left on the server (at - serverNow) added to the local send time. The
// server read serverNow after the request was sent, so the result is never
// later than the true local time of at.
func localTime(sent, at, serverNow time.Time) time.Time {
	return sent.Add(at.Sub(serverNow))
}

// micros returns d in whole microseconds, rounded up, so that the server's
// lease is never shorter than d.
func micros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
