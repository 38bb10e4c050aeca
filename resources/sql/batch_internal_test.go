package sql

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseRaised(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want any
		ok   bool
	}{
		{`7"`, int64(7), true},
		{`9223372036854775807"`, int64(9223372036854775807), true},
		{`-5"`, int64(-5), true},
		{`null"`, nil, true},
		{`0`, int64(0), true},
		{`"`, nil, false},
		{`-"`, nil, false},
		{`12a"`, nil, false},
		{`9223372036854775808"`, nil, false},
		{`+5"`, nil, false},
		{` 5"`, nil, false},
		{`NULL"`, nil, false},
	} {
		got, ok := parseRaised(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseRaised(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseRaised checks that parseRaised never panics and accepts only
// what the fence statement can raise: "null" or an int64 in its canonical
// decimal form, up to the closing quote.
func FuzzParseRaised(f *testing.F) {
	for _, s := range []string{`7"`, `-1"`, `null"`, `"`, `18446744073709551615"`, `00"`, "12", `é"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseRaised(s)
		if !ok {
			return
		}
		text, _, _ := strings.Cut(s, `"`)
		switch x := v.(type) {
		case nil:
			if text != "null" {
				t.Fatalf("parseRaised(%q) = NULL", s)
			}
		case int64:
			if n, err := strconv.ParseInt(text, 10, 64); err != nil || n != x {
				t.Fatalf("parseRaised(%q) = %d; text %q", s, x, text)
			}
		default:
			t.Fatalf("parseRaised(%q) returned a %T", s, v)
		}
	})
}
