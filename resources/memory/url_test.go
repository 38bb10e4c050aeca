package memory

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, name, err string
	}{
		{"mem://", "", ""},
		{"mem:///", "", ""},
		{"mem://shared", "shared", ""},
		{"mem://shared/", "shared", ""},
		{"mem://u:secret@x", "", "mem:// or mem://NAME"},
		{"mem://x:1", "", "mem:// or mem://NAME"},
		{"mem://x/y", "", "mem:// or mem://NAME"},
		{"mem://x?unfenced=true", "", `unknown parameter "unfenced"`},
		{"mem://?a=1", "", `unknown parameter "a"`},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		name, err := parseURL(u)
		switch {
		case tc.err == "" && (err != nil || name != tc.name):
			t.Errorf("parseURL(%q) = %q, %v; want %q", tc.raw, name, err, tc.name)
		case tc.err != "" && (!errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseURL(%q) = %v; want ErrInvalid saying %q", tc.raw, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("parseURL(%q) = %v shows the password", tc.raw, err)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"mem://", "mem://a", "mem://a:b@c/d?e=f", "mem://%zz", "mem://a?unfenced=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		name, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want ErrInvalid", raw, err)
			}
			if pw, ok := u.User.Password(); ok && len(pw) > 3 && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		if name != u.Host {
			t.Fatalf("parseURL(%q) = %q; want the host %q", raw, name, u.Host)
		}
	})
}

// TestOpenResource: mem:// is new on every open, mem://NAME shared.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	open := func(raw string) *fence.Resource {
		t.Helper()
		r, err := fence.OpenResource(ctx, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	a := open("mem://open-test")
	if err := a.Put(ctx, "k", 3, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, tok, err := open("mem://open-test").Get(ctx, "k"); err != nil || string(v) != "v" || tok != 3 {
		t.Errorf("Get through a second mem://open-test = %q, %d, %v; want the first's value", v, tok, err)
	}
	if _, _, err := open("mem://").Get(ctx, "k"); !errors.Is(err, fence.ErrNotFound) {
		t.Errorf("Get through a new mem:// = %v; want ErrNotFound", err)
	}
	if _, err := fence.OpenResource(ctx, "mem://x?unfenced=true", nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("OpenResource(unfenced=true) = %v; want ErrInvalid", err)
	}
}
