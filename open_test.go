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
	if got, _ := driver.LockerSchemes(); !strings.Contains(strings.Join(got, ","), "mem") {
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
func (stubOpener) OpenLockerURL(context.Context, *url.URL, *fence.OpenOptions) (*fence.Locker, error) {
	return nil, nil
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
