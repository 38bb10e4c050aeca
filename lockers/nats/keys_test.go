package nats

import (
	"regexp"
	"strings"
	"testing"
)

// validKey is nats.go's rule for KV keys (jetstream's keyValid).
var validKeyRe = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)

func validKVKey(k string) bool {
	return validKeyRe.MatchString(k) && k[0] != '.' && k[len(k)-1] != '.' && !strings.Contains(k, "..")
}

func TestKeyNames(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"jobs/nightly report": "jobs/nightly_20report",
		"a_b":                 "a_5Fb",
		"a.b":                 "a.b",
		".a":                  "_2Ea",
		"a.":                  "a_2E",
		"a..b":                "a._2Eb",
		"...":                 "_2E_2E_2E",
		"a*>":                 "a_2A_3E",
		"é":                   "_C3_A9",
		"K=v-1/2":             "K=v-1/2",
	} {
		if got := keyName(key); got != want {
			t.Errorf("keyName(%q) = %q; want %q", key, got, want)
		}
		if back, ok := lockKey(want); !ok || back != key {
			t.Errorf("lockKey(%q) = %q, %v; want %q", want, back, ok, key)
		}
	}
	// Names keyName never makes: a cut escape, lower-case hex, an
	// escaped byte that keyName keeps as it is ('a').
	for _, name := range []string{"_", "_4", "_4g", "_4a", "_61"} {
		if k, ok := lockKey(name); ok {
			t.Errorf("lockKey(%q) = %q; want refused", name, k)
		}
	}
}

// FuzzKeyName: every key maps to a valid KV key, which maps back to it
// (so distinct keys never share an entry), at most three times longer.
func FuzzKeyName(f *testing.F) {
	for _, s := range []string{"a", "a.b", ".", "..", "a/b", "a_b", "a b", "\u00e9", "e\u0301", "*", ">", "a..b.", "_2E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if key == "" {
			return
		}
		name := keyName(key)
		if !validKVKey(name) {
			t.Fatalf("keyName(%q) = %q, not a valid KV key", key, name)
		}
		if len(name) > 3*len(key) {
			t.Fatalf("keyName(%q) = %q, longer than three times the key", key, name)
		}
		if back, ok := lockKey(name); !ok || back != key {
			t.Fatalf("lockKey(keyName(%q)) = %q, %v", key, back, ok)
		}
	})
}
