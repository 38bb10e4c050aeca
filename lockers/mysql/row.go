package mysql

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// rowCols are the columns of rowColumns as scanned.
type rowCols struct {
	owner    sql.NullString
	token    sql.NullInt64
	isFree   sql.NullBool
	leftUS   sql.NullInt64 // microseconds left on the server's clock
	outRange sql.NullBool  // the expiry lies outside 1970..9998
}

func (c *rowCols) dest() []any {
	return []any{&c.owner, &c.token, &c.isFree, &c.leftUS, &c.outRange}
}

// row is a well-formed row of the lease table.
type row struct {
	owner string
	token fence.Token
	left  time.Duration // time left on the server; <= 0 when free or expired
}

func (r row) held() bool { return r.left > 0 }

// check turns the columns into a row, or a *fence.CorruptError when they
// break the table's invariants (someone edited the row by hand).
func (c rowCols) check(key string) (row, error) {
	corrupt := func(reason string) (row, error) {
		return row{}, &fence.CorruptError{Key: key, Reason: reason}
	}
	switch {
	case !c.owner.Valid:
		return corrupt("owner is NULL")
	case c.owner.String == "":
		return corrupt("owner is empty")
	case !c.token.Valid:
		return corrupt("token is NULL")
	case c.token.Int64 <= 0:
		return corrupt(fmt.Sprintf("token %d is not positive", c.token.Int64))
	case !c.isFree.Valid:
		return corrupt("the expiry cannot be read")
	}
	r := row{owner: c.owner.String, token: fence.Token(c.token.Int64)}
	if c.isFree.Bool {
		return r, nil
	}
	if !c.leftUS.Valid || (c.outRange.Valid && c.outRange.Bool) {
		return corrupt("expires_at is not a time between 1970 and 9998")
	}
	if c.leftUS.Int64 > maxLeftUS {
		return corrupt(fmt.Sprintf("expires_at lies %d days ahead, beyond any lease", c.leftUS.Int64/(86400*1e6)))
	}
	r.left = time.Duration(c.leftUS.Int64) * time.Microsecond
	return r, nil
}

// maxLeftUS is the most microseconds a row's lease may have left: far
// beyond MaxTTL, so that only a row written by hand exceeds it, and
// within a time.Duration.
const maxLeftUS = 100 * 365 * 86400 * 1e6

// micros returns d in whole microseconds, rounded up, so that the server's
// lease is never shorter than d.
func micros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}
