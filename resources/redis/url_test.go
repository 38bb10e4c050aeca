package redis

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw, prefix, addr string
		db                int
	}{
		{"redis://h", DefaultPrefix, "h:6379", 0},
		{"rediss://u:pw@h:7000/2?prefix=cache:&dial_timeout=1s", "cache:", "h:7000", 2},
	} {
		u, err := url.Parse(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		o, ro, err := parseURL(u)
		if err != nil {
			t.Fatalf("parseURL(%q): %v", tt.raw, err)
		}
		if o.Prefix != tt.prefix || ro.Addr != tt.addr || ro.DB != tt.db {
			t.Errorf("parseURL(%q) = prefix %q, addr %s, db %d; want %q, %s, %d", tt.raw, o.Prefix, ro.Addr, ro.DB, tt.prefix, tt.addr, tt.db)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"redis://u:pw@h?prefix=", "prefix is empty"},
		{"redis://u:pw@h?prefix={x}", "brace"},
		{"redis://u:pw@h?bogus=1", "bogus"},
		{"redis://u:pw@h/x", "database"},
		{"redis://u:pw@h?a=%zz", "cannot be parsed"},
	} {
		_, err := fence.OpenResource(t.Context(), tt.raw, nil)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenResource(%q): %v; want an invalid URL error saying %q", tt.raw, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("OpenResource(%q): %v shows the password", tt.raw, err)
		}
	}
}

// TestOpenResource opens the shared server by URL and writes through it.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix("url")
	r, err := fence.OpenResource(t.Context(), testenv.RedisURL(t)+"?prefix="+url.QueryEscape(prefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Put(t.Context(), "n", 3, []byte("three")); err != nil {
		t.Fatal(err)
	}
	v, err := newClient(t, nil).HGet(t.Context(), prefix+"n", "value").Result()
	if err != nil || v != "three" {
		t.Fatalf("%sn value = %q, %v", prefix, v, err)
	}
}

// FuzzParseURL: parseURL never panics, and its errors match ErrInvalid
// and never show a password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://u:pw@h:1/0?prefix=p:&dial_timeout=1s", "rediss://h?prefix={", "redis://:pw@h?password=pw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			return
		}
		o, ro, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q): %v does not match ErrInvalid", raw, err)
			}
			for _, pw := range redact.Passwords(u) {
				if len(pw) >= 4 && strings.Contains(err.Error(), pw) {
					t.Fatalf("parseURL(%q): %v shows the password", raw, err)
				}
			}
			return
		}
		if ro == nil || o.Prefix == "" || strings.ContainsAny(o.Prefix, "{}") {
			t.Fatalf("parseURL(%q) accepted %+v", raw, o)
		}
	})
}
