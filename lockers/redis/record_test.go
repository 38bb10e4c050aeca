package redis

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redisscript"
)

// FuzzLockRecord writes arbitrary values into a lock key on the shared
// server and checks that the scripts and the Go decoding agree: Inspect
// reports the holder exactly when parseLockValue accepts the value (with
// the same token and owner), and a *fence.CorruptError otherwise; Acquire
// never takes the key either way.
func FuzzLockRecord(f *testing.F) {
	for _, s := range []string{"1:o", "12:owner:with:colons", "0:o", "01:o", "9223372036854775807:o",
		"9223372036854775808:o", "5:", ":o", "5", "-5:o", "+5:o", " 5:o", "5 :o", "5:\x00", "18446744073709551615:o", ""} {
		f.Add(s)
	}
	c := newClient(f)
	l, d := newStoreLocker(f, c, nil)
	f.Fuzz(func(t *testing.T, v string) {
		key := "fuzz"
		if err := c.Set(t.Context(), d.lockKey(key), v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		token, owner, perr := parseLockValue(v)
		info, err := l.Inspect(t.Context(), key)
		switch {
		case perr == nil && err != nil:
			t.Fatalf("Inspect of %q: %v; Go reads it as token %d owner %q", v, err, token, owner)
		case perr == nil && (!info.Held || info.Token != token || info.Owner != owner):
			t.Fatalf("Inspect of %q = %+v; Go reads it as token %d owner %q", v, info, token, owner)
		case perr != nil && !errors.Is(err, fence.ErrCorrupt):
			t.Fatalf("Inspect of %q = %+v, %v; Go refuses it (%v), want a corrupt record", v, info, err, perr)
		}
		if _, err := l.Acquire(t.Context(), key, time.Minute, nil); err == nil {
			t.Fatalf("Acquire took a key whose lock key holds %q", v)
		}
	})
}

// FuzzParseReply: the locker's decoding of script answers never panics,
// and every token it returns is valid and within the counter's range.
func FuzzParseReply(f *testing.F) {
	f.Add("ok", "1", "o", int64(5), "2", "p")
	f.Add("held", "9223372036854775808", "o", int64(5), "", "")
	f.Add("held", "x", "", int64(-1), "", "")
	f.Add("corrupt", "why", "", int64(0), "", "")
	f.Fuzz(func(t *testing.T, status, a, b string, n int64, d, e string) {
		for _, vals := range [][]any{{status, a, b, n, d, e}, {status, a, b, n}, {status, nil, nil, nil, d, e}, {status}, {status, a}} {
			r, err := redisscript.ParseReply("k", vals)
			if err != nil {
				continue
			}
			if tok, err := tokenAt(r, "k", 0); err == nil && (!tok.Valid() || tok > maxToken) {
				t.Fatalf("token 0 from %v", vals)
			}
			if tok, o, _, err := holderAt(r, "k", 0); err == nil && (!tok.Valid() || o == "") {
				t.Fatalf("holder %d %q from %v", tok, o, vals)
			}
			if info, err := lockInfo(r, "k", time.Now()); err == nil && (info.Token == 0) != (info.Owner == "") {
				t.Fatalf("info %+v from %v", info, vals)
			}
			_ = done(r, "k")
		}
	})
}

// TestHolderInItsLastMillisecond: a holder whose lock key has 0 ms left
// (PTTL rounds down; Redis has not expired it yet) is a holder whose
// lease ends now, not a corrupt record; a negative or missing PTTL is.
func TestHolderInItsLastMillisecond(t *testing.T) {
	t.Parallel()
	r, err := redisscript.ParseReply("k", []any{"held", "5", "o", int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	tok, owner, pttl, err := holderAt(r, "k", 0)
	if err != nil || tok != 5 || owner != "o" || pttl != 0 {
		t.Errorf("holder with PTTL 0: %d %q %v %v; want 5 \"o\" 0s, no error", tok, owner, pttl, err)
	}
	for _, vals := range [][]any{{"held", "5", "o", int64(-1)}, {"held", "5", "o"}, {"held", "5", "o", "soon"}} {
		r, err := redisscript.ParseReply("k", vals)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := holderAt(r, "k", 0); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("holder %v: %v; want ErrCorrupt", vals, err)
		}
	}
}
