// Package redisscript holds what lockers/redis and resources/redis share
// around their Lua scripts: the decoding of a script's answer, the form
// of a token as the scripts write it, the check of a key prefix, and the
// split of a URL's query into fence's parameters and go-redis's.
//
// A script answers a table whose first element, a string, says what
// happened, and whose other elements are strings, integers or nil (Lua
// false). The status "corrupt", followed by why, is the answer of a
// script that found a record it does not write and changed nothing;
// ParseReply turns it into a *fence.CorruptError. The scripts check the
// records before they act; the decoding here checks the answer again, so
// that neither a record edited by hand nor a script of another version
// yields a token the scripts did not issue.
package redisscript

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/fencekit/fence"
)

// Reply is a script's answer: its status and the values after it.
type Reply struct {
	Status string
	Vals   []any // after the status: string, int64 or nil
}

// ParseReply reads the answer v of a script run for key. An answer that
// is not a table starting with a string status is an error; a corrupt
// status becomes a *fence.CorruptError.
func ParseReply(key string, v any) (Reply, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return Reply{}, fmt.Errorf("unexpected script answer %v", v)
	}
	status, ok := a[0].(string)
	if !ok {
		return Reply{}, fmt.Errorf("unexpected script answer %v", v)
	}
	r := Reply{Status: status, Vals: a[1:]}
	if status == "corrupt" {
		why, _ := r.Str(0)
		return Reply{}, &fence.CorruptError{Key: key, Reason: why}
	}
	return r, nil
}

// Unexpected is the error for a status the caller does not expect.
func (r Reply) Unexpected(key string) error {
	return fmt.Errorf("unexpected script answer %q for %q", r.Status, key)
}

// Str returns value i as a string; ok is false when it is nil (Lua false),
// not a string, or missing.
func (r Reply) Str(i int) (string, bool) {
	if i < 0 || i >= len(r.Vals) {
		return "", false
	}
	s, ok := r.Vals[i].(string)
	return s, ok
}

// Token returns value i as a token (see ParseToken); a missing or
// malformed one is a *fence.CorruptError.
func (r Reply) Token(key string, i int) (fence.Token, error) {
	s, ok := r.Str(i)
	if !ok {
		return 0, &fence.CorruptError{Key: key, Reason: "the script answered no token"}
	}
	t, err := ParseToken(s)
	if err != nil {
		return 0, &fence.CorruptError{Key: key, Reason: "the script answered a malformed token", Err: err}
	}
	return t, nil
}

// ParseToken parses a token as the scripts write it: a decimal of 1 to
// 2^64-1 without sign or leading zero. Errors are *fence.InvalidError.
func ParseToken(s string) (fence.Token, error) {
	t, err := fence.ParseToken(s)
	if err != nil {
		return 0, err
	}
	if s[0] == '0' {
		return 0, &fence.InvalidError{Field: "token", Reason: fmt.Sprintf("%q has a leading zero", s)}
	}
	return t, nil
}

// Prefix returns the key prefix p, or def when p is empty. A prefix with
// a brace is a *fence.InvalidError for field Prefix: Redis Cluster hashes
// the part of a key between its first '{' and the next '}', so a brace in
// the prefix would decide the hash slot of every key instead of the
// key's own hash tag.
func Prefix(p, def string) (string, error) {
	if p == "" {
		p = def
	}
	if strings.ContainsAny(p, "{}") {
		return "", &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%q contains a brace, which would decide the keys' hash slot", p)}
	}
	return p, nil
}

// SplitQuery splits a raw URL query into the parts whose name is in names
// and the others, each kept as written (empty parts are dropped). A part
// whose name cannot be unescaped goes with the others.
func SplitQuery(raw string, names []string) (named, others string) {
	var in, out []string
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err == nil && slices.Contains(names, key) {
			in = append(in, part)
		} else {
			out = append(out, part)
		}
	}
	return strings.Join(in, "&"), strings.Join(out, "&")
}
