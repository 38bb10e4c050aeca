package dynamo

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

const (
	testSet    = "#fencekit_f = :fencekit_t"
	testRemove = "#fencekit_d"
)

func TestAddToUpdate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "SET " + testSet + " REMOVE " + testRemove},
		{"   ", "SET " + testSet + " REMOVE " + testRemove},
		{"SET a = :v", "SET a = :v, " + testSet + " REMOVE " + testRemove},
		{"  set a=:v  ", "SET a=:v, " + testSet + " REMOVE " + testRemove},
		{"REMOVE x SET a = :v", "REMOVE x, " + testRemove + " SET a = :v, " + testSet},
		{"ADD #set :v", "ADD #set :v SET " + testSet + " REMOVE " + testRemove},
		{"SET a.remove = :v", "SET a.remove = :v, " + testSet + " REMOVE " + testRemove},
		{"SET a = :remove", "SET a = :remove, " + testSet + " REMOVE " + testRemove},
		{"DELETE s :x ADD n :one", "DELETE s :x ADD n :one SET " + testSet + " REMOVE " + testRemove},
		{"SET #a = list_append(#a, :l)\nDELETE s :x", "SET #a = list_append(#a, :l), " + testSet + " DELETE s :x REMOVE " + testRemove},
		{"SET a_set = :v, set_b = :w", "SET a_set = :v, set_b = :w, " + testSet + " REMOVE " + testRemove},
	} {
		got, err := addToUpdate(tc.in, testSet, testRemove)
		if err != nil || got != tc.want {
			t.Errorf("addToUpdate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"a = :v", "SET a = :v SET b = :w", "SET", "REMOVE SET a = :v", "DELETE", "x SET a = :v", "set a = :v Set b = :w"} {
		if got, err := addToUpdate(in, testSet, testRemove); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("addToUpdate(%q) = %q, %v; want an error matching fence.ErrInvalid", in, got, err)
		}
	}
}

// FuzzAddToUpdate: never a panic; a result parses again into the input's
// clauses, in order, with the fence's actions added to SET and REMOVE.
func FuzzAddToUpdate(f *testing.F) {
	for _, s := range []string{"", "SET a = :v", "REMOVE x SET a = :v", "ADD #set :v DELETE s :x", "set a.remove = :v", "SET a = :v SET b = :w",
		"SET #a = list_append(#a, :l) REMOVE b[0], c.d", "x", "SET\tREMOVE", "sEt a=:b,c=:d aDd e :f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := addToUpdate(s, testSet, testRemove)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("addToUpdate(%q) = %v; want nil or ErrInvalid", s, err)
			}
			return
		}
		before, err := parseUpdate(s)
		if err != nil {
			t.Fatalf("addToUpdate(%q) succeeded but parseUpdate fails: %v", s, err)
		}
		after, err := parseUpdate(out)
		if err != nil {
			t.Fatalf("addToUpdate(%q) = %q, which does not parse: %v", s, out, err)
		}
		bodies := map[string]string{}
		for _, c := range after {
			bodies[c.keyword] = c.body
		}
		for i, c := range before {
			want := c.body
			switch c.keyword {
			case "SET":
				want += ", " + testSet
			case "REMOVE":
				want += ", " + testRemove
			}
			if after[i].keyword != c.keyword || after[i].body != want {
				t.Fatalf("addToUpdate(%q) = %q: clause %d is %s %q, want %s %q", s, out, i, after[i].keyword, after[i].body, c.keyword, want)
			}
		}
		if !strings.HasSuffix(bodies["SET"], testSet) {
			t.Fatalf("addToUpdate(%q) = %q: SET does not end with the fence", s, out)
		}
		if !strings.HasSuffix(bodies["REMOVE"], testRemove) {
			t.Fatalf("addToUpdate(%q) = %q: REMOVE does not end with the tombstone", s, out)
		}
	})
}

// FuzzParseFence: never a panic; a number is a token exactly when it is a
// positive 64-bit integer in canonical form, anything else ErrCorrupt.
func FuzzParseFence(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "1.5", "18446744073709551615", "18446744073709551616", "1e3", "", " 7", "+7", "abc", "007"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, number bool) {
		var av types.AttributeValue = &types.AttributeValueMemberS{Value: s}
		if number {
			av = &types.AttributeValueMemberN{Value: s}
		}
		tok, err := parseFence("r", "fence", av)
		if err != nil {
			if !errors.Is(err, fence.ErrCorrupt) || tok != 0 {
				t.Fatalf("parseFence(%q) = %d, %v; want 0 and ErrCorrupt", s, tok, err)
			}
			return
		}
		if !number || tok == 0 {
			t.Fatalf("parseFence(%q, number=%v) = %d; want ErrCorrupt", s, number, tok)
		}
		if back, err := fence.ParseToken(tok.String()); err != nil || back != tok {
			t.Fatalf("parseFence(%q) = %d, which does not round-trip", s, tok)
		}
	})
}
