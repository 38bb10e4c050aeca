package redis

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencekit/fence"
)

// reply is a script's answer: its status and the values after it (see
// scripts.go). The scripts check the records before they act; the
// decoding here checks the answer again, so that neither a record edited
// by hand nor a script of another version yields a token the scripts did
// not issue.
type reply struct {
	status string
	vals   []any // after the status: string, int64 or nil
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

// unexpected is the error for a status the caller does not expect.
func (r reply) unexpected(key string) error {
	return fmt.Errorf("unexpected script answer %q for %q", r.status, key)
}

// done is the error of a script that answers "ok" or "notheld".
func (r reply) done(key string) error {
	switch r.status {
	case "ok":
		return nil
	case "notheld":
		return &fence.NotHeldError{Key: key, Reason: "released, expired, broken or taken over"}
	}
	return r.unexpected(key)
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
	s, ok := r.str(i)
	if !ok {
		return 0, &fence.CorruptError{Key: key, Reason: "the script answered no token"}
	}
	t, err := parseToken(s)
	if err != nil {
		return 0, &fence.CorruptError{Key: key, Reason: "the script answered a malformed token", Err: err}
	}
	return t, nil
}

// parseToken parses a token as the scripts write it: a decimal without
// sign or leading zero, 1 to 2^63-1 (HINCRBY's range).
func parseToken(s string) (fence.Token, error) {
	t, err := fence.ParseToken(s)
	if err != nil {
		return 0, err
	}
	if s[0] == '0' || t > 1<<63-1 {
		return 0, &fence.InvalidError{Field: "token", Reason: fmt.Sprintf("%q is not a counter value of 1 to 2^63-1", s)}
	}
	return t, nil
}

// pttl returns value i as a remaining lease time; a missing or
// non-positive one is a *fence.CorruptError.
func (r reply) pttl(key string, i int) (time.Duration, error) {
	var ms int64
	if i < len(r.vals) {
		ms, _ = r.vals[i].(int64)
	}
	if ms <= 0 {
		return 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the script answered no positive expiry for the holder (%v)", r.vals)}
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// holder returns the token, owner and PTTL at values i, i+1, i+2.
func (r reply) holder(key string, i int) (fence.Token, string, time.Duration, error) {
	t, err := r.token(key, i)
	if err != nil {
		return 0, "", 0, err
	}
	o, ok := r.str(i + 1)
	if !ok || o == "" {
		return 0, "", 0, &fence.CorruptError{Key: key, Reason: "the script answered a holder without an owner"}
	}
	pttl, err := r.pttl(key, i+2)
	if err != nil {
		return 0, "", 0, err
	}
	return t, o, pttl, nil
}

// info reads the answer of the inspect script, sent at sent.
func (r reply) info(key string, sent time.Time) (fence.LockInfo, error) {
	info := fence.LockInfo{Key: key}
	if _, held := r.str(0); held {
		t, o, pttl, err := r.holder(key, 0)
		if err != nil {
			return fence.LockInfo{}, err
		}
		info.Held, info.Owner, info.Token, info.ValidUntil = true, o, t, sent.Add(pttl)
		return info, nil
	}
	if _, issued := r.str(3); !issued {
		return info, nil // never acquired
	}
	t, err := r.token(key, 3)
	if err != nil {
		return fence.LockInfo{}, err
	}
	o, ok := r.str(4)
	if !ok || o == "" {
		return fence.LockInfo{}, &fence.CorruptError{Key: key, Reason: "the script answered a last token without an owner"}
	}
	info.Owner, info.Token = o, t
	return info, nil
}

// parseLockValue splits a lock key's value, TOKEN:OWNER, as the scripts
// write it. It is what lockrec in the scripts checks, in Go, for tests
// and tools that read the records.
func parseLockValue(v string) (fence.Token, string, error) {
	ts, owner, ok := strings.Cut(v, ":")
	if !ok || owner == "" {
		return 0, "", fmt.Errorf("%q is not TOKEN:OWNER", v)
	}
	t, err := parseToken(ts)
	if err != nil {
		return 0, "", err
	}
	return t, owner, nil
}
