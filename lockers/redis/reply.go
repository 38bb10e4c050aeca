package redis

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redisscript"
)

// The scripts' answers (see scripts.go) are read with
// redisscript.ParseReply; the functions here read what only the locker's
// scripts answer. Like redisscript's, they check the answer again, so
// that neither a record edited by hand nor a script of another version
// yields a token the scripts did not issue.

// maxToken is the largest token the counter issues: HINCRBY's range.
const maxToken = 1<<63 - 1

// done is the error of a script that answers "ok" or "notheld".
func done(r redisscript.Reply, key string) error {
	switch r.Status {
	case "ok":
		return nil
	case "notheld":
		return &fence.NotHeldError{Key: key, Reason: "released, expired, broken or taken over"}
	}
	return r.Unexpected(key)
}

// tokenAt returns value i as a token the counter can have issued (see
// parseToken); a missing or malformed one is a *fence.CorruptError.
func tokenAt(r redisscript.Reply, key string, i int) (fence.Token, error) {
	t, err := r.Token(key, i)
	if err != nil {
		return 0, err
	}
	if t > maxToken {
		return 0, &fence.CorruptError{Key: key, Reason: "the script answered a malformed token", Err: rangeError(t)}
	}
	return t, nil
}

// parseToken parses a token as the scripts write it: redisscript's form
// (a decimal without sign or leading zero), 1 to 2^63-1 (HINCRBY's
// range).
func parseToken(s string) (fence.Token, error) {
	t, err := redisscript.ParseToken(s)
	if err != nil {
		return 0, err
	}
	if t > maxToken {
		return 0, rangeError(t)
	}
	return t, nil
}

// rangeError is the error for a token above maxToken.
func rangeError(t fence.Token) error {
	return &fence.InvalidError{Field: "token", Reason: fmt.Sprintf("%d is not a counter value of 1 to 2^63-1", t)}
}

// pttlAt returns value i as a remaining lease time; a missing or
// negative one is a *fence.CorruptError. 0 is a lease in its last
// millisecond, which Redis has not expired yet (PTTL counts whole
// milliseconds, rounded down).
func pttlAt(r redisscript.Reply, key string, i int) (time.Duration, error) {
	ms, ok := int64(-1), false
	if i < len(r.Vals) {
		ms, ok = r.Vals[i].(int64)
	}
	if !ok || ms < 0 {
		return 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the script answered no expiry for the holder (%v)", r.Vals)}
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// holderAt returns the token, owner and PTTL at values i, i+1, i+2.
func holderAt(r redisscript.Reply, key string, i int) (fence.Token, string, time.Duration, error) {
	t, err := tokenAt(r, key, i)
	if err != nil {
		return 0, "", 0, err
	}
	o, ok := r.Str(i + 1)
	if !ok || o == "" {
		return 0, "", 0, &fence.CorruptError{Key: key, Reason: "the script answered a holder without an owner"}
	}
	pttl, err := pttlAt(r, key, i+2)
	if err != nil {
		return 0, "", 0, err
	}
	return t, o, pttl, nil
}

// lockInfo reads the answer of the inspect script, sent at sent.
func lockInfo(r redisscript.Reply, key string, sent time.Time) (fence.LockInfo, error) {
	info := fence.LockInfo{Key: key}
	if _, held := r.Str(0); held {
		t, o, pttl, err := holderAt(r, key, 0)
		if err != nil {
			return fence.LockInfo{}, err
		}
		info.Held, info.Owner, info.Token, info.ValidUntil = true, o, t, sent.Add(pttl)
		info.Value, _ = r.Str(5)
		return info, nil
	}
	if _, issued := r.Str(3); !issued {
		return info, nil // never acquired
	}
	t, err := tokenAt(r, key, 3)
	if err != nil {
		return fence.LockInfo{}, err
	}
	o, ok := r.Str(4)
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
