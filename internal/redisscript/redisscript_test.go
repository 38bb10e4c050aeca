package redisscript

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestParseReply(t *testing.T) {
	for _, v := range []any{nil, "ok", int64(1), []any{}, []any{int64(1), "ok"}, []any{nil}} {
		if _, err := ParseReply("k", v); err == nil || errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("ParseReply(%#v) = %v; want a plain error", v, err)
		}
	}
	_, err := ParseReply("k", []any{"corrupt", "the hash has no decimal token"})
	var ce *fence.CorruptError
	if !errors.As(err, &ce) || ce.Key != "k" || ce.Reason != "the hash has no decimal token" {
		t.Errorf("corrupt answer: %v; want a *fence.CorruptError for k with the script's reason", err)
	}
	r, err := ParseReply("k", []any{"held", "7", nil, int64(30)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "held" || len(r.Vals) != 3 {
		t.Fatalf("ParseReply = %+v", r)
	}
	if s, ok := r.Str(0); !ok || s != "7" {
		t.Errorf("Str(0) = %q, %v", s, ok)
	}
	for _, i := range []int{-1, 1, 2, 3} { // nil, int64, missing
		if s, ok := r.Str(i); ok {
			t.Errorf("Str(%d) = %q, true; want false", i, s)
		}
	}
	if tok, err := r.Token("k", 0); err != nil || tok != 7 {
		t.Errorf("Token(0) = %d, %v; want 7", tok, err)
	}
	for _, i := range []int{1, 2, 3} {
		if tok, err := r.Token("k", i); !errors.Is(err, fence.ErrCorrupt) {
			t.Errorf("Token(%d) = %d, %v; want a corrupt answer", i, tok, err)
		}
	}
	if err := r.Unexpected("k"); err == nil || !strings.Contains(err.Error(), `"held"`) {
		t.Errorf("Unexpected = %v; want the status named", err)
	}
}

func TestParseToken(t *testing.T) {
	for s, want := range map[string]fence.Token{"1": 1, "42": 42, "9223372036854775808": 1 << 63, "18446744073709551615": 1<<64 - 1} {
		if got, err := ParseToken(s); err != nil || got != want {
			t.Errorf("ParseToken(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "00", "01", "-1", "+1", " 1", "1 ", "1e3", "0x1", "18446744073709551616", "99999999999999999999"} {
		if got, err := ParseToken(s); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("ParseToken(%q) = %d, %v; want an invalid token", s, got, err)
		}
	}
}

func TestPrefix(t *testing.T) {
	if p, err := Prefix("", "fence:"); err != nil || p != "fence:" {
		t.Errorf(`Prefix("") = %q, %v; want the default`, p, err)
	}
	if p, err := Prefix("app:", "fence:"); err != nil || p != "app:" {
		t.Errorf(`Prefix("app:") = %q, %v`, p, err)
	}
	for _, p := range []string{"a{b", "a}b", "{x}:"} {
		var ie *fence.InvalidError
		if _, err := Prefix(p, "fence:"); !errors.As(err, &ie) || ie.Field != "Prefix" {
			t.Errorf("Prefix(%q) = %v; want an invalid Prefix", p, err)
		}
	}
	if _, err := Prefix("", "{bad}"); err == nil {
		t.Error("a default with a brace was accepted")
	}
}

func TestSplitQuery(t *testing.T) {
	names := []string{"prefix", "min-replicas"}
	for _, c := range []struct{ raw, named, others string }{
		{"", "", ""},
		{"prefix=a", "prefix=a", ""},
		{"dial_timeout=1s", "", "dial_timeout=1s"},
		{"pre%66ix=a%26b&db=2&&min-replicas=1&prefix", "pre%66ix=a%26b&min-replicas=1&prefix", "db=2"},
		{"%zz=1&prefix=x", "prefix=x", "%zz=1"},
		{"prefixes=1&Prefix=2", "", "prefixes=1&Prefix=2"},
	} {
		named, others := SplitQuery(c.raw, names)
		if named != c.named || others != c.others {
			t.Errorf("SplitQuery(%q) = %q, %q; want %q, %q", c.raw, named, others, c.named, c.others)
		}
	}
}

// FuzzParseToken: ParseToken accepts exactly the decimals without sign
// or leading zero of 1 to 2^64-1, and returns their value.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"1", "07", "0", "18446744073709551615", "18446744073709551616", "-1", "+1", " 1", "", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseToken(s)
		v, perr := strconv.ParseUint(s, 10, 64)
		want := perr == nil && v > 0 && s[0] != '0' && s[0] != '+'
		switch {
		case want && (err != nil || uint64(got) != v):
			t.Fatalf("ParseToken(%q) = %d, %v; want %d", s, got, err, v)
		case !want && err == nil:
			t.Fatalf("ParseToken(%q) = %d; want an error", s, got)
		}
		if err == nil && got.String() != s {
			t.Fatalf("ParseToken(%q) = %d, which is written %q", s, got, got.String())
		}
	})
}

// FuzzParseReply: ParseReply never panics, a corrupt status is always a
// *fence.CorruptError, and every token Token returns is valid and written
// as the answer wrote it.
func FuzzParseReply(f *testing.F) {
	f.Add("ok", "1", "o", int64(5))
	f.Add("stale", "x", "", int64(-1))
	f.Add("corrupt", "why", "", int64(0))
	f.Fuzz(func(t *testing.T, status, a, b string, n int64) {
		for _, vals := range [][]any{{status, a, b, n}, {status, nil, b}, {status}, {status, a}, {n, a}} {
			r, err := ParseReply("k", vals)
			if status == "corrupt" && vals[0] == status && !errors.Is(err, fence.ErrCorrupt) {
				t.Fatalf("ParseReply(%v) = %v; want a corrupt answer", vals, err)
			}
			if err != nil {
				continue
			}
			for i := range 4 {
				tok, err := r.Token("k", i)
				if err != nil {
					if !errors.Is(err, fence.ErrCorrupt) {
						t.Fatalf("Token(%d) of %v: %v; want a corrupt answer", i, vals, err)
					}
					continue
				}
				if s, _ := r.Str(i); !tok.Valid() || tok.String() != s {
					t.Fatalf("Token(%d) of %v = %d", i, vals, tok)
				}
			}
		}
	})
}
