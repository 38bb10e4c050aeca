package fence_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/urlparam"
	_ "github.com/fencekit/fence/lockers/memory" // registers mem://
)

func TestOpenLockerByURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := fence.OpenLocker(ctx, "mem://shared-by-name", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := fence.OpenLocker(ctx, "MEM://shared-by-name", nil)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := a.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
		t.Errorf("Acquire through a second open of the same name = %v; want ErrHeld", err)
	}
	fresh, err := fence.OpenLocker(ctx, "mem://", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Acquire(ctx, "k", time.Minute, nil); err != nil {
		t.Errorf("mem:// shares leases with mem://shared-by-name: %v", err)
	}
	if err := a.Release(ctx, lease); err != nil {
		t.Error(err)
	}
	if got := fence.LockerSchemes(); !strings.Contains(strings.Join(got, ","), "mem") {
		t.Errorf("LockerSchemes() = %v; want mem among them", got)
	}
}

func TestOpenLockerRefusesBadURLs(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"",
		"no-scheme",
		"nosuch://x",
		"mem://a?x=1",
		"mem://a/path",
		"nosuch://user:s3cret@host/db",
		"mem://user:s3cret@a",
		// A query url.ParseQuery rejects: net/url's Query would drop the
		// pair and the opener would see no parameter at all.
		"mem://a?prefix=billing%zz:",
		"mem://a?x=%",
		"mem://user:s3cret@a?password=s3cret&x=%zz",
	} {
		l, err := fence.OpenLocker(context.Background(), raw, nil)
		if !errors.Is(err, fence.ErrInvalid) || l != nil {
			t.Errorf("OpenLocker(%q) = %v, %v; want ErrInvalid", raw, l, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("OpenLocker(%q) error shows the password: %v", raw, err)
		}
	}
}

type stubOpener struct{}

func (stubOpener) URLForm() string { return "x://" }
func (stubOpener) OpenLockerURL(context.Context, *url.URL, *fence.OpenOptions) (fence.Opened[*fence.Locker], error) {
	return fence.Opened[*fence.Locker]{}, nil
}

func TestRegisterLockerPanicsOnDuplicateOrBadScheme(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"mem", "Bad", "1x", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterLocker(%q) did not panic", scheme)
				}
			}()
			driver.RegisterLocker(scheme, stubOpener{})
		}()
	}
}

func TestURLParams(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"x://t?a=1&b=true&d=2s&e=http://h:1/": "",
		"x://t?a=1&a=2":                       "a given more than once",
		"x://t?a=":                            "a is empty",
		"x://t?b=yes":                         `b="yes" is not true or false`,
		"x://t?d=-1s":                         "not a duration",
		"x://t?e=ftp://h":                     "not an http:// or https:// URL",
		"x://t?e=http://u:pw@h":               "user information",
		"x://t?zz=1":                          `unknown parameter "zz"`,
		"x://u:pw@t":                          "no user or password",
		"x://t:80":                            "has no port",
		"x://t/p":                             "unexpected path",
		"x://":                                "no table name",
		"x://t?a=billing%zz:":                 "query cannot be parsed",
		"x://t?a=1;b=true":                    "query cannot be parsed",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := urlparam.New(u)
		p.Name("table")
		p.String("a")
		p.Bool("b")
		p.Duration("d")
		if e := p.String("e"); e != "" {
			// Endpoint reads "endpoint"; check it through a renamed URL.
			q := u.Query()
			q.Set("endpoint", e)
			q.Del("e")
			u.RawQuery = q.Encode()
			p = urlparam.New(u)
			p.Name("table")
			p.String("a")
			p.Bool("b")
			p.Duration("d")
			p.Endpoint()
		}
		err = p.Done()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (!errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: Done() = %v; want ErrInvalid saying %q", raw, err, want)
		case err != nil && strings.Contains(err.Error(), "pw"):
			t.Errorf("%s: error shows the password: %v", raw, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://app:s3cret@db/app":             "postgres://app:xxxxx@db/app",
		"postgres://db/app?password=s3cret&x=1":    "postgres://db/app?password=xxxxx&x=1",
		"dial postgres://a:b@h failed: x://c:d@e/": "dial postgres://a:xxxxx@h failed: x://c:xxxxx@e/",
		"postgres://app@db/app":                    "postgres://app@db/app",
		"postgres://u:p@ss@db:5432/app":            "postgres://u:xxxxx@db:5432/app",
		"postgres://db/app?PASSWORD=s3cret":        "postgres://db/app?PASSWORD=xxxxx",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("RedactURL(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestScrubAndURLPasswords(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("postgres://app:p%40ss%20w@db/app?password=two%26x&password=")
	if err != nil {
		t.Fatal(err)
	}
	pws := redact.Passwords(u)
	if strings.Join(pws, "|") != "p@ss w|two&x" {
		t.Fatalf("URLPasswords = %q; want the user information's and the non-empty parameter's", pws)
	}
	text := `dial "postgres://app:p%40ss%20w@db/app": p@ss w, p%40ss+w, two%26x, two&x, ://u:other@h`
	got := redact.Scrub(text, append(pws, "")...)
	for _, leak := range []string{"p@ss", "p%40ss", "two", "other"} {
		if strings.Contains(got, leak) {
			t.Errorf("Scrub(%q) = %q; %q shows", text, got, leak)
		}
	}
}

func FuzzOpenLockerURL(f *testing.F) {
	for _, s := range []string{"mem://", "mem://a", "mem://u:p@a?x=y", "nosuch://a:b@c", "mem://a?password=zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		l, err := fence.OpenLocker(context.Background(), raw, nil)
		if err != nil {
			if l != nil {
				t.Fatalf("OpenLocker(%q) returned a locker and %v", raw, err)
			}
			if u, perr := url.Parse(raw); perr == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && len(pw) > 3 && strings.Contains(err.Error(), pw) {
					t.Fatalf("OpenLocker(%q) error shows the password: %v", raw, err)
				}
			}
			return
		}
		l.Close()
	})
}
