package redis

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redisscript"
)

// TestCorruptRecords: a key the scripts did not write gets a
// *fence.CorruptError from every method, and no write changes it.
func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	r := newResource(t, c, uniquePrefix("corrupt"))
	for _, tt := range []struct {
		name string
		set  func(t *testing.T, key string) error
	}{
		{"a string", func(t *testing.T, key string) error { return c.Set(t.Context(), key, "v", 0).Err() }},
		{"a list", func(t *testing.T, key string) error { return c.RPush(t.Context(), key, "v").Err() }},
		{"a hash without token", func(t *testing.T, key string) error { return c.HSet(t.Context(), key, "value", "v").Err() }},
		{"a token not decimal", func(t *testing.T, key string) error {
			return c.HSet(t.Context(), key, "token", "seven", "value", "v").Err()
		}},
		{"a token with a leading zero", func(t *testing.T, key string) error {
			return c.HSet(t.Context(), key, "token", "07", "value", "v").Err()
		}},
		{"a token over 2^64-1", func(t *testing.T, key string) error {
			return c.HSet(t.Context(), key, "token", "18446744073709551616", "value", "v").Err()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := tt.name
			key := keyOf(r, name)
			if err := tt.set(t, key); err != nil {
				t.Fatal(err)
			}
			before, err := c.Dump(t.Context(), key).Result()
			if err != nil {
				t.Fatal(err)
			}
			want := func(op string, err error) {
				t.Helper()
				if _, ok := errors.AsType[*fence.CorruptError](err); !ok || !errors.Is(err, fence.ErrCorrupt) {
					t.Errorf("%s: %v; want a *fence.CorruptError", op, err)
				}
			}
			want("Put", r.Put(t.Context(), name, 1<<60, []byte("new")))
			want("Delete", r.Delete(t.Context(), name, 1<<60))
			_, _, err = r.Get(t.Context(), name)
			want("Get", err)
			_, err = r.Highest(t.Context(), name)
			want("Highest", err)
			after, err := c.Dump(t.Context(), key).Result()
			if err != nil || after != before {
				t.Fatalf("the record changed (%v)", err)
			}
		})
	}
}

// FuzzRecord writes arbitrary token fields into a value's hash on the
// shared server and checks that the scripts and the Go decoding agree:
// Highest reports the token exactly when redisscript.ParseToken accepts it, and a
// *fence.CorruptError otherwise; a Put with a lower token is stale and a
// Put over a corrupt record changes nothing.
func FuzzRecord(f *testing.F) {
	for _, s := range []string{"1", "07", "0", "18446744073709551615", "18446744073709551616", "-1", "+1", " 1", "1 ", "", "1e3", "99999999999999999999"} {
		f.Add(s)
	}
	c := newClient(f, nil)
	r := newResource(f, c, uniquePrefix("fuzz"))
	f.Fuzz(func(t *testing.T, token string) {
		const name = "v"
		if err := c.Del(t.Context(), keyOf(r, name)).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(t.Context(), keyOf(r, name), "token", token, "value", "x").Err(); err != nil {
			t.Fatal(err)
		}
		want, perr := redisscript.ParseToken(token)
		got, err := r.Highest(t.Context(), name)
		switch {
		case perr == nil && (err != nil || got != want):
			t.Fatalf("Highest with token %q = %d, %v; Go reads %d", token, got, err, want)
		case perr != nil && !errors.Is(err, fence.ErrCorrupt):
			t.Fatalf("Highest with token %q = %d, %v; Go refuses it (%v), want a corrupt record", token, got, err, perr)
		}
		if perr == nil && want > 1 {
			if err := r.Put(t.Context(), name, want-1, []byte("old")); !errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("Put with token %d under %d: %v; want stale", want-1, want, err)
			}
		}
		if perr != nil {
			_ = r.Put(t.Context(), name, 1<<63, []byte("new"))
			if v, err := c.HGet(t.Context(), keyOf(r, name), "token").Result(); err != nil || v != token {
				t.Fatalf("a Put over the corrupt record changed the token to %q (%v)", v, err)
			}
		}
	})
}
