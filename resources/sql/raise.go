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

const (
	// raiseTag starts every statement QueueCheck queues, so that QueueCheck
	// recognises fences queued before.
	raiseTag = "/* fencesql check */ "
	// raiseMarker starts the text that the fence statement fails to cast to
	// bigint when the token is refused; the stored token follows it. The
	// server quotes that text in its error message in every locale.
	raiseMarker = "fencesql:"
	// invalidTextRepresentation is the SQLSTATE of a failed cast.
	invalidTextRepresentation = "22P02"
)

// QueueCheck queues, in b, the check of token on the resource key: the
// same check-and-advance as CheckPgx, but pipelined with the caller's own
// statements, so the fence costs no round trip of its own. Queue it before
// your statements: right after Batch.BeginTx, or first in a batch sent
// with tx.SendBatch; QueueCheck returns a *fence.InvalidError if b already
// holds a statement that is neither a BEGIN nor another fence.
//
// When the token is stale the statement raises an error, so the server
// skips every later statement of the batch and the transaction can only
// roll back: none of the caller's statements takes effect. The outcome is
// reported, in order, by BatchResults.Close (which runs the queued
// callbacks): a *fence.StaleTokenError with the highest token, a
// *fence.CorruptError, or nil, in a *fence.OpError as Check's. On any
// error from the batch, roll the transaction back. A batch sent outside a
// transaction runs in one implicit transaction, which the error also rolls
// back.
func (f *Fences) QueueCheck(b *pgx.Batch, key string, token fence.Token) error {
	if err := f.noPgx("check", key); err != nil {
		return err
	}
	if b == nil {
		return opError("check", key, &fence.InvalidError{Field: "batch", Reason: "nil"})
	}
	if err := validWrite(key, token); err != nil {
		return opError("check", key, err)
	}
	for i, qq := range b.QueuedQueries {
		if !strings.HasPrefix(qq.SQL, raiseTag) && !isBegin(qq.SQL) {
			return opError("check", key, &fence.InvalidError{Field: "batch", Reason: fmt.Sprintf("statement %d is queued before the fence; queue the fence first", i+1)})
		}
	}
	b.Queue(f.raise, key, int64(token)).QueryRow(func(row pgx.Row) error {
		return opError("check", key, f.raised(row, key, token))
	})
	return nil
}

// raised returns the outcome of the fence statement QueueCheck queued,
// unwrapped.
func (f *Fences) raised(row pgx.Row, key string, token fence.Token) error {
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

// isBegin reports whether query starts a transaction.
func isBegin(query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	return strings.HasPrefix(q, "begin") || strings.HasPrefix(q, "start transaction")
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
