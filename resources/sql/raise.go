package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
)

// The fence of Run on pgx is a statement that raises an error when the
// token is refused, so that the server skips the rest of the batch that
// began the transaction.
const (
	// raiseTag starts the statement, naming it in the server's logs.
	raiseTag = "/* fencesql check */ "
	// raiseMarker starts the text that the fence statement fails to cast to
	// bigint when the token is refused; the stored token follows it. The
	// server quotes that text in its error message in every locale.
	raiseMarker = "fencesql:"
	// invalidTextRepresentation is the SQLSTATE of a failed cast.
	invalidTextRepresentation = "22P02"
)

// raised returns the outcome of the raising fence statement, unwrapped.
func (f *fenceRow) raised(row pgx.Row, key string, token fence.Token) error {
	var stored int64
	err := row.Scan(&stored)
	if err == nil {
		return judge(key, token, stored)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == invalidTextRepresentation {
		if i := strings.Index(pgErr.Message, raiseMarker); i >= 0 {
			if v, ok := parseRaised(pgErr.Message[i+len(raiseMarker):]); ok {
				if err := judge(key, token, v); err != nil {
					return err
				}
				// The statement raised, so nothing was admitted,
				// whatever the message says.
			}
		}
	}
	return fmt.Errorf("fence table %s: %w", f.table, storeMissing(err))
}

// parseRaised parses the stored token that follows raiseMarker in the
// error message of a refused fence: "null" (returned as nil) or a decimal
// int64, ending at a double quote or at the end of s. ok is false for
// anything else.
func parseRaised(s string) (stored any, ok bool) {
	if i := strings.IndexByte(s, '"'); i >= 0 {
		s = s[:i]
	}
	if s == "null" {
		return nil, true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 19 {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, false
	}
	return v, true
}
