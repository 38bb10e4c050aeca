package redlock

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fencekit/fence"
)

// maxToken is the highest token issued: 2^63-1, so that every fenced
// resource (a PostgreSQL bigint, for one) can store it.
const maxToken = fence.Token(1<<63 - 1)

// record is what a lock key or a counter key holds: "TOKEN OWNER", the
// token in canonical decimal (no sign, no leading zero, 1 to maxToken),
// one space, and the owner id (anything non-empty).
type record struct {
	token fence.Token
	owner string
}

// String returns the stored form.
func (r record) String() string { return r.token.String() + " " + r.owner }

// parseRecord reads the stored form, as the scripts check it.
func parseRecord(s string) (record, error) {
	t, owner, ok := strings.Cut(s, " ")
	if !ok || owner == "" {
		return record{}, fmt.Errorf("%q is not \"TOKEN OWNER\"", clip(s))
	}
	if t == "" || t[0] < '1' || t[0] > '9' || len(t) > 19 {
		return record{}, fmt.Errorf("token %q is not a canonical decimal from 1 to %d", clip(t), maxToken)
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil || fence.Token(v) > maxToken {
		return record{}, fmt.Errorf("token %q is not a canonical decimal from 1 to %d", clip(t), maxToken)
	}
	return record{token: fence.Token(v), owner: owner}, nil
}

// clip shortens a stored value for an error message.
func clip(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// reply is one master's answer to a script, decoded.
type reply struct {
	kind  string // "ok", "held", "stale", "not"; "" when err is set
	lock  string // the lock record ("held", inspect), "" if none
	pttl  int64  // the lock's remaining milliseconds ("held", inspect)
	ctr   string // the counter record ("held", "stale", inspect), "" if none
	val   string // the value record (inspect of a held key), "" if none
	err   error  // the call failed (a *fence.CorruptError for a corrupt record)
	taken bool   // for an Acquire round: this master answered "ok"
}

// decode reads a script's answer. key names the lock in a CorruptError.
func decode(key string, v any, err error) reply {
	if err != nil {
		if strings.HasPrefix(err.Error(), "WRONGTYPE") {
			return reply{err: &fence.CorruptError{Key: key, Reason: "a key of the lock holds another type than a string", Err: err}}
		}
		return reply{err: err}
	}
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return reply{err: fmt.Errorf("unexpected script answer %v", v)}
	}
	str := func(i int) string {
		if i < len(a) {
			s, _ := a[i].(string)
			return s
		}
		return ""
	}
	num := func(i int) int64 {
		if i < len(a) {
			n, _ := a[i].(int64)
			return n
		}
		return 0
	}
	switch kind := str(0); kind {
	case "ok":
		if len(a) == 5 { // inspect
			return reply{kind: kind, lock: str(1), pttl: num(2), ctr: str(3), val: str(4)}
		}
		return reply{kind: kind}
	case "held":
		return reply{kind: kind, lock: str(1), pttl: num(2), ctr: str(3)}
	case "stale":
		return reply{kind: kind, ctr: str(1)}
	case "not":
		return reply{kind: kind}
	case "corrupt":
		return reply{err: &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the %s record holds %q", str(1), clip(str(2)))}}
	default:
		return reply{err: fmt.Errorf("unexpected script answer %v", v)}
	}
}

// parseValue reads a value record, "TOKEN VALUE": the token as in a
// record, one space, and the value's bytes (possibly none).
func parseValue(s string) (fence.Token, string, error) {
	t, value, ok := strings.Cut(s, " ")
	if !ok {
		return 0, "", fmt.Errorf("%q is not \"TOKEN VALUE\"", clip(s))
	}
	r, err := parseRecord(t + " -")
	if err != nil {
		return 0, "", err
	}
	if len(value) > fence.MaxValueLen {
		return 0, "", fmt.Errorf("the value record holds %d bytes, more than %d", len(value), fence.MaxValueLen)
	}
	return r.token, value, nil
}
