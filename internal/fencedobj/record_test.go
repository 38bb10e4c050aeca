package fencedobj

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// TestParse covers the record's parser case by case, including what a
// server could not carry in a header (empty values, two spellings of one
// key).
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc    string
		md      map[string]string
		want    Record
		corrupt bool
	}{
		{"no metadata: unfenced", nil, Record{}, false},
		{"only user metadata: unfenced", map[string]string{"owner": "me"}, Record{}, false},
		{"token", map[string]string{KeyToken: "7"}, Record{Token: 7}, false},
		{"token and write id", map[string]string{KeyToken: "7", KeyWriteID: "w"}, Record{Token: 7, WriteID: "w"}, false},
		{"tombstone", map[string]string{KeyToken: "7", KeyTombstone: "true"}, Record{Token: 7, Tombstone: true}, false},
		{"keys in another case", map[string]string{"FenceToken": "7", "FENCETOMBSTONE": "true"}, Record{Token: 7, Tombstone: true}, false},
		{"keys capitalised, as Azure's SDK gives them", map[string]string{"Fencetoken": "7", "Fencewriteid": "w"}, Record{Token: 7, WriteID: "w"}, false},
		{"largest token", map[string]string{KeyToken: "18446744073709551615"}, Record{Token: 18446744073709551615}, false},
		{"two spellings agreeing", map[string]string{KeyToken: "7", "FenceToken": "7"}, Record{Token: 7}, false},
		{"two spellings disagreeing", map[string]string{KeyToken: "7", "FenceToken": "8"}, Record{}, true},
		{"empty token", map[string]string{KeyToken: ""}, Record{}, true},
		{"token with spaces", map[string]string{KeyToken: " 7"}, Record{}, true},
		{"token 0", map[string]string{KeyToken: "0"}, Record{}, true},
		{"token 00", map[string]string{KeyToken: "00"}, Record{}, true},
		{"tombstone marker empty", map[string]string{KeyToken: "7", KeyTombstone: ""}, Record{}, true},
		{"write id alone", map[string]string{KeyWriteID: "w"}, Record{}, true},
		{"tombstone alone", map[string]string{KeyTombstone: "true"}, Record{}, true},
		// The names before fencetoken are not read: such an object is
		// unfenced.
		{"the old names", map[string]string{"fence-token": "7", "fence-write": "w", "fence-tombstone": "true"}, Record{}, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			got, err := Parse("k", tc.md)
			if tc.corrupt {
				if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
					t.Fatalf("Parse(%v) = %+v, %v; want ErrCorrupt and not ErrInvalid", tc.md, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%v) = %+v, %v; want %+v", tc.md, got, err, tc.want)
			}
		})
	}
}

// TestCorruptTokenKeepsTheReason: a token that does not parse is reported
// with the parser's reason, as a corrupted record only.
func TestCorruptTokenKeepsTheReason(t *testing.T) {
	t.Parallel()
	_, err := Parse("k", map[string]string{KeyToken: "0x10"})
	if !errors.Is(err, fence.ErrCorrupt) || errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Parse of token 0x10 = %v; want ErrCorrupt and not ErrInvalid", err)
	}
	if want := `"0x10" is not a decimal token`; !strings.Contains(err.Error(), want) {
		t.Errorf("Parse of token 0x10 = %v; want the reason %s", err, want)
	}
}

// TestFormat checks what a write stores: the user's metadata kept, the
// record's keys added, empty and false fields left out.
func TestFormat(t *testing.T) {
	t.Parallel()
	user := map[string]string{"owner": "me"}
	got := Record{Token: 7}.Format(user)
	if len(got) != 2 || got["owner"] != "me" || got[KeyToken] != "7" {
		t.Errorf("Format of token 7 = %v; want owner and %s only", got, KeyToken)
	}
	got = Record{Token: 8, WriteID: "w", Tombstone: true}.Format(nil)
	if len(got) != 3 || got[KeyWriteID] != "w" || got[KeyTombstone] != "true" {
		t.Errorf("Format of a full record = %v", got)
	}
	if len(user) != 1 {
		t.Errorf("Format changed the user's map: %v", user)
	}
	if um := UserMeta(Record{Token: 9, WriteID: "w"}.Format(user), nil); len(um) != 1 || um["owner"] != "me" {
		t.Errorf("UserMeta(Format(%v)) = %v; want the user's metadata back", user, um)
	}
}

// FuzzParse feeds arbitrary metadata to the parser: it never panics,
// fails only with a *fence.CorruptError, never accepts token 0, and a
// record parsed formats back to metadata that parses to the same record.
func FuzzParse(f *testing.F) {
	f.Add("Fencetoken", "7", "fencewriteid", strings.Repeat("a1", 16), "fencetombstone", "true")
	f.Add("fencetoken", "0", "", "", "", "")
	f.Add("FENCETOKEN", "18446744073709551616", "fencetoken", "3", "x", "y")
	f.Add("fencetombstone", "true", "other", "v", "", "")
	f.Add("fencetoken", "٣", "fencewriteid", strings.Repeat("0", 32), "", "")
	f.Add("fencetoken", "-1", "FenceWriteID", "", "fenceTombstone", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		md := map[string]string{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if kv[0] != "" {
				md[kv[0]] = kv[1]
			}
		}
		r, err := Parse("k", md)
		if err != nil {
			if _, ok := errors.AsType[*fence.CorruptError](err); !ok {
				t.Fatalf("Parse(%v): %v; want a *fence.CorruptError only", md, err)
			}
			return
		}
		if r.Token == 0 {
			if r != (Record{}) {
				t.Fatalf("Parse(%v) = %+v: fields without a token", md, r)
			}
			return // unfenced: nothing of the fence's to format
		}
		back, err := Parse("k", r.Format(UserMeta(md, nil)))
		if err != nil || back != r {
			t.Fatalf("Parse(Format(%+v)) = %+v, %v", r, back, err)
		}
	})
}

// TestWriteID checks that NewWriteID makes ids ValidWriteID accepts, and
// that it refuses others.
func TestWriteID(t *testing.T) {
	t.Parallel()
	a, b := NewWriteID(), NewWriteID()
	if !ValidWriteID(a) || a == b {
		t.Errorf("NewWriteID() = %q, %q; want two different valid ids", a, b)
	}
	for _, id := range []string{"", "w", strings.Repeat("A", WriteIDLen), strings.Repeat("g", WriteIDLen), a + "0"} {
		if ValidWriteID(id) {
			t.Errorf("ValidWriteID(%q) = true", id)
		}
	}
}
