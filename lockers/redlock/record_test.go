package redlock

import (
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
)

// recordCases are stored values and whether they are records.
var recordCases = []struct {
	s  string
	ok bool
}{
	{"1 o", true},
	{"42 owner with spaces", true},
	{"9223372036854775807 o", true},
	{"1 é名\nline", true},
	{"9223372036854775808 o", false},
	{"18446744073709551616 o", false},
	{"99999999999999999999 o", false},
	{"0 o", false},
	{"01 o", false},
	{"+1 o", false},
	{"-1 o", false},
	{"1", false},
	{"1 ", false},
	{" 1 o", false},
	{"1x o", false},
	{"", false},
	{"owner", false},
}

func TestParseRecord(t *testing.T) {
	t.Parallel()
	for _, tt := range recordCases {
		r, err := parseRecord(tt.s)
		if (err == nil) != tt.ok {
			t.Errorf("parseRecord(%q) = %+v, %v; want ok %v", tt.s, r, err, tt.ok)
			continue
		}
		if err == nil && r.String() != tt.s {
			t.Errorf("parseRecord(%q).String() = %q", tt.s, r.String())
		}
	}
}

// TestScriptsCheckRecordsAsGoDoes runs the scripts' record check on a
// real master for every case, and for token comparisons around 2^53,
// where Lua's numbers would be wrong.
func TestScriptsCheckRecordsAsGoDoes(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 1, volatile)
	check := goredis.NewScript(prelude + `
local t = rec(ARGV[1])
if t then return 1 end
return 0
`)
	for _, tt := range recordCases {
		n, err := check.Run(t.Context(), ms[0].client, []string{"a", "b"}, tt.s).Int()
		if err != nil {
			t.Fatal(err)
		}
		if (n == 1) != tt.ok {
			t.Errorf("the scripts' rec(%q) = %d; parseRecord says ok %v", tt.s, n, tt.ok)
		}
	}
	less := goredis.NewScript(prelude + `
if less(ARGV[1], ARGV[2]) then return 1 end
return 0
`)
	const big = 1<<53 + 1
	for _, p := range [][2]fence.Token{{big - 1, big}, {big, big + 1}, {9, 10}, {maxToken - 1, maxToken}, {1, 2}} {
		for _, swap := range []bool{false, true} {
			a, b := p[0], p[1]
			if swap {
				a, b = b, a
			}
			n, err := less.Run(t.Context(), ms[0].client, []string{"a", "b"}, a.String(), b.String()).Int()
			if err != nil {
				t.Fatal(err)
			}
			if (n == 1) != (a < b) {
				t.Errorf("the scripts' less(%d, %d) = %d", a, b, n)
			}
		}
	}
}

// FuzzParseRecord: parseRecord never panics, accepts exactly the
// canonical "TOKEN OWNER" with a token from 1 to maxToken, and what it
// accepts prints back as given.
func FuzzParseRecord(f *testing.F) {
	for _, c := range recordCases {
		f.Add(c.s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRecord(s)
		tok, owner, cut := strings.Cut(s, " ")
		v, perr := strconv.ParseUint(tok, 10, 64)
		want := cut && owner != "" && perr == nil && v >= 1 && fence.Token(v) <= maxToken && strconv.FormatUint(v, 10) == tok
		if (err == nil) != want {
			t.Fatalf("parseRecord(%q) = %+v, %v; want ok %v", s, r, err, want)
		}
		if err == nil && (r.String() != s || r.token != fence.Token(v) || r.owner != owner) {
			t.Fatalf("parseRecord(%q) = %+v", s, r)
		}
	})
}

// FuzzParseValue: parsing a value record never panics; a record it
// accepts is exactly "TOKEN VALUE" of what it returns.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"", "7 v", "7 ", "7", "0 v", "07 v", "9223372036854775808 v", "1 a b\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		token, value, err := parseValue(s)
		if err != nil {
			return
		}
		if got := token.String() + " " + value; got != s {
			t.Fatalf("parseValue(%q) = %d, %q, which is stored as %q", s, token, value, got)
		}
	})
}
