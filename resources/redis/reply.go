package redis

import (
	"fmt"

	"github.com/fencekit/fence"
)

// reply is a script's answer: its status and the values after it.
type reply struct {
	status string
	vals   []any // strings or nil
}

// parseReply reads the answer v of a script run for key. A corrupt
// status becomes a *fence.CorruptError.
func parseReply(key string, v any) (reply, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return reply{}, fmt.Errorf("unexpected script answer %v", v)
	}
	status, ok := a[0].(string)
	if !ok {
		return reply{}, fmt.Errorf("unexpected script answer %v", v)
	}
	r := reply{status: status, vals: a[1:]}
	if status == "corrupt" {
		why, _ := r.str(0)
		return reply{}, &fence.CorruptError{Key: key, Reason: why}
	}
	return r, nil
}

func (r reply) unexpected(key string) error {
	return fmt.Errorf("unexpected script answer %q for %q", r.status, key)
}

// str returns value i as a string; ok is false when it is nil (Lua false)
// or missing.
func (r reply) str(i int) (string, bool) {
	if i >= len(r.vals) {
		return "", false
	}
	s, ok := r.vals[i].(string)
	return s, ok
}

// token returns value i as a token; a missing or malformed one is a
// *fence.CorruptError.
func (r reply) token(key string, i int) (fence.Token, error) {
	s, _ := r.str(i)
	t, err := parseToken(s)
	if err != nil {
		return 0, &fence.CorruptError{Key: key, Reason: "the record's token is malformed", Err: err}
	}
	return t, nil
}

// parseToken parses a token as the scripts store it: a decimal of 1 to
// 2^64-1 without sign or leading zero.
func parseToken(s string) (fence.Token, error) {
	t, err := fence.ParseToken(s)
	if err != nil {
		return 0, err
	}
	if s[0] == '0' {
		return 0, &fence.InvalidError{Field: "token", Reason: fmt.Sprintf("%q has a leading zero", s)}
	}
	return t, nil
}

// record reads the answer of the read script.
func (r reply) record(key string) (record, error) {
	if len(r.vals) == 0 {
		return record{}, nil
	}
	t, err := r.token(key, 0)
	if err != nil {
		return record{}, err
	}
	rec := record{exists: true, token: t}
	rec.value, rec.hasValue = r.str(1)
	rec.write, _ = r.str(2)
	return rec, nil
}
