package azblob

import (
	"errors"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// metaOf builds metadata from name, value pairs.
func metaOf(kv ...string) map[string]*string {
	m := map[string]*string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = ptr(kv[i+1])
	}
	return m
}

func TestParseRecord(t *testing.T) {
	t.Parallel()
	owner := fence.NewOwnerID()
	tests := []struct {
		name  string
		meta  map[string]*string
		token fence.Token
		ok    bool
	}{
		{"new blob", metaOf("Fencetoken", "0"), 0, true},
		{"held once", metaOf("Fencetoken", "1", "Fenceowner", owner, "Fencettl", "15"), 1, true},
		{"lower-case names", metaOf("fencetoken", "7", "fenceowner", owner, "fencettl", "60"), 7, true},
		{"other metadata", metaOf("Fencetoken", "2", "Fenceowner", owner, "Fencettl", "30", "Team", "x"), 2, true},
		{"largest token", metaOf("Fencetoken", "18446744073709551615", "Fenceowner", owner, "Fencettl", "15"), math.MaxUint64, true},
		{"no metadata", nil, 0, false},
		{"no token", metaOf("Fenceowner", owner, "Fencettl", "15"), 0, false},
		{"token not a number", metaOf("Fencetoken", "x", "Fenceowner", owner, "Fencettl", "15"), 0, false},
		{"negative token", metaOf("Fencetoken", "-1", "Fenceowner", owner, "Fencettl", "15"), 0, false},
		{"token overflows", metaOf("Fencetoken", "18446744073709551616", "Fenceowner", owner, "Fencettl", "15"), 0, false},
		{"token with a space", metaOf("Fencetoken", " 1", "Fenceowner", owner, "Fencettl", "15"), 0, false},
		{"zero token with an owner", metaOf("Fencetoken", "0", "Fenceowner", owner), 0, false},
		{"token without an owner", metaOf("Fencetoken", "3", "Fencettl", "15"), 0, false},
		{"token without a TTL", metaOf("Fencetoken", "3", "Fenceowner", owner), 0, false},
		{"TTL not a number", metaOf("Fencetoken", "3", "Fenceowner", owner, "Fencettl", "x"), 0, false},
		{"TTL with a leading zero", metaOf("Fencetoken", "3", "Fenceowner", owner, "Fencettl", "015"), 0, false},
		{"TTL too short", metaOf("Fencetoken", "3", "Fenceowner", owner, "Fencettl", "14"), 0, false},
		{"TTL too long", metaOf("Fencetoken", "3", "Fenceowner", owner, "Fencettl", "61"), 0, false},
		{"owner not printable", metaOf("Fencetoken", "3", "Fenceowner", "a\x01", "Fencettl", "15"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := parseRecord("k", tt.meta)
			if !tt.ok {
				if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
					t.Fatalf("parseRecord(%v) = %+v, %v; want a *fence.CorruptError", tt.name, r, err)
				}
				if errors.Is(err, fence.ErrInvalid) {
					t.Fatalf("parseRecord(%v) = %v, which matches fence.ErrInvalid; a corrupted record is not bad input", tt.name, err)
				}
				return
			}
			if err != nil || r.token != tt.token {
				t.Fatalf("parseRecord = token %d, %v; want token %d", r.token, err, tt.token)
			}
		})
	}
}

func TestNextKeepsOtherMetadata(t *testing.T) {
	t.Parallel()
	r, err := parseRecord("k", metaOf("Fencetoken", "4", "Fenceowner", "a", "Fencettl", "15", "Team", "x"))
	if err != nil {
		t.Fatal(err)
	}
	token, meta, err := r.next("k", "b", 30*time.Second)
	if err != nil || token != 5 {
		t.Fatalf("next = %d, %v; want 5", token, err)
	}
	got, err := parseRecord("k", meta)
	if err != nil || got.token != 5 || got.owner != "b" || got.ttl != 30*time.Second {
		t.Fatalf("parseRecord(next) = %+v, %v; want token 5, owner b, ttl 30s", got, err)
	}
	if v, ok := lookup(meta, "team"); !ok || v != "x" || len(meta) != 4 {
		t.Fatalf("next dropped or duplicated metadata: %v", slices.Sorted(maps.Keys(meta)))
	}
	full := record{token: math.MaxUint64, owner: "a", ttl: MinTTL}
	if _, _, err := full.next("k", "b", MinTTL); !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("next at the largest token: %v; want an error matching fence.ErrCorrupt", err)
	}
}

// FuzzParseRecord checks that parseRecord never panics, refuses with a
// *fence.CorruptError only, and that what it accepts survives a rewrite.
func FuzzParseRecord(f *testing.F) {
	f.Add("0", "", "")
	f.Add("1", fence.NewOwnerID(), "15")
	f.Add("18446744073709551615", "o", "60")
	f.Add("x", "o", "15")
	f.Add("3", "", "015")
	f.Fuzz(func(t *testing.T, token, owner, ttl string) {
		meta := metaOf("Fencetoken", token)
		if owner != "" {
			meta["Fenceowner"] = ptr(owner)
		}
		if ttl != "" {
			meta["Fencettl"] = ptr(ttl)
		}
		r, err := parseRecord("k", meta)
		if err != nil {
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("parseRecord: %v (%T); want a *fence.CorruptError", err, err)
			}
			return
		}
		if r.token == 0 {
			return
		}
		if r.token.String() != token || r.owner != owner {
			t.Fatalf("parseRecord(%q, %q, %q) = %+v", token, owner, ttl, r)
		}
		if r.token == math.MaxUint64 {
			return
		}
		next, meta2, err := r.next("k", owner, r.ttl)
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		r2, err := parseRecord("k", meta2)
		if err != nil || r2.token != next || next != r.token+1 || r2.ttl != r.ttl {
			t.Fatalf("parseRecord(next) = %+v, %v; want token %d", r2, err, r.token+1)
		}
	})
}
