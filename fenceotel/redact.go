package fenceotel

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fencekit/fence"
)

const redacted = "[redacted]"

var (
	// uuidPattern matches owner ids made by fence.NewOwnerID and Azure
	// lease ids, wherever an error text carries one.
	uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// urlPassword matches the password of a URL: scheme://user:password@.
	urlPassword = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
	// dsnPassword matches password=... in a key/value connection string.
	dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)
)

// safeError returns the text of err fit for logs and spans: no owner ids
// (the given ones, and anything shaped like a UUID), no passwords.
// Errors of package fence whose text names another owner are described
// from their fields instead, in the words of their own Error methods.
func safeError(err error, owners ...string) string {
	if err == nil {
		return ""
	}
	if lost, ok := errors.AsType[*fence.LeaseLostError](err); ok && lost.Err != nil {
		return fmt.Sprintf("fence: lease on %q (token %d) lost: %s", lost.Key, lost.Token, safeError(lost.Err, owners...))
	}
	if rec, ok := errors.AsType[*fence.ReconcileError](err); ok {
		state := "free"
		if rec.Found.Held {
			state = fmt.Sprintf("held by another owner with token %d", rec.Found.Token)
		}
		return fmt.Sprintf("fence: after an ambiguous renewal (%s) the lock %q is %s, not ours (token %d)",
			safeError(rec.RenewErr, owners...), rec.Lease.Key, state, rec.Lease.Token)
	}
	s := err.Error()
	for _, o := range owners {
		if o != "" {
			s = strings.ReplaceAll(s, o, redacted)
		}
	}
	if held, ok := errors.AsType[*fence.HeldError](err); ok && held.Owner != "" {
		s = strings.ReplaceAll(s, held.Owner, redacted)
	}
	s = uuidPattern.ReplaceAllString(s, redacted)
	s = urlPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	s = dsnPassword.ReplaceAllString(s, "${1}"+redacted)
	return s
}

// tokenAttr returns a token attribute: an int64, or its decimal string
// for tokens above the int64 range.
func tokenAttr(key string, t fence.Token) attribute.KeyValue {
	if uint64(t) > 1<<63-1 {
		return attribute.String(key, t.String())
	}
	return attribute.Int64(key, int64(t))
}
