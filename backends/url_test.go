package backends_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/backends"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// TestEveryOpenerRefusesAnUnparseableQuery: a URL of each registered
// scheme whose query url.ParseQuery rejects (a bad %-escape in one of the
// backend's own parameters) is refused with fence.ErrInvalid, without the
// password, and the opener contacts nothing. net/url's Query drops such a
// pair without a word: an opener that read it would fall back to its
// default (two applications kept apart by prefix= would share one), or
// dial the store and fail later with a connection error.
func TestEveryOpenerRefusesAnUnparseableQuery(t *testing.T) {
	t.Parallel()
	// Every URL points at a listener of the test's own that counts the
	// connections it accepts and never answers: an opener that dials
	// (etcd, ZooKeeper) would be seen, and could not succeed.
	hung := netfault.Hung(t)
	addr := hung.Addr
	const bad = "billing%zz:" // a bad %-escape
	sqlite := filepath.ToSlash(filepath.Join(t.TempDir(), "fence.db"))
	lockers := map[string]string{
		"azblob":         "azblob://c?account=devstoreaccount1&endpoint=http://" + addr + "/" + bad,
		"dynamodb":       "dynamodb://t?region=us-east-1&endpoint=http://" + addr + "&key-attribute=" + bad,
		"etcd":           "etcd://" + addr + "/app/?dial-timeout=2s" + bad,
		"etcds":          "etcds://" + addr + "/app/?dial-timeout=2s" + bad,
		"gs":             "gs://b?endpoint=http://" + addr + "&prefix=" + bad,
		"kubernetes":     "kubernetes://app?kubeconfig=/nonexistent&context=" + bad,
		"mem":            "mem://app?prefix=" + bad,
		"mysql":          "mysql://app:secretpw@" + addr + "/app?timeout=" + bad,
		"nats":           "nats://app:secretpw@" + addr + "?bucket=" + bad,
		"postgres":       "postgres://app:secretpw@" + addr + "/app?table=" + bad,
		"postgresql":     "postgresql://app:secretpw@" + addr + "/app?table=" + bad,
		"redis":          "redis://:secretpw@" + addr + "/0?prefix=" + bad,
		"rediss":         "rediss://:secretpw@" + addr + "/0?prefix=" + bad,
		"redis+sentinel": "redis+sentinel://:secretpw@" + addr + "/mymaster?prefix=" + bad,
		"redlock":        "redlock://:secretpw@" + addr + "," + addr + "," + addr + "/?prefix=" + bad,
		"s3":             "s3://b?region=us-east-1&path-style=true&endpoint=http://" + addr + "&prefix=" + bad,
		"sqlite":         "sqlite://" + sqlite + "?table=" + bad,
		"zk":             "zk://" + addr + "/app?session-timeout=10s" + bad,
	}
	resources := map[string]string{
		"dynamodb":   "dynamodb://t?region=us-east-1&endpoint=http://" + addr + "&key-attribute=" + bad,
		"etcd":       "etcd://" + addr + "/app/?dial-timeout=2s" + bad,
		"etcds":      "etcds://" + addr + "/app/?dial-timeout=2s" + bad,
		"azblob":     "azblob://c?account=devstoreaccount1&endpoint=http://" + addr + "/devstoreaccount1&prefix=" + bad,
		"gs":         "gs://b?endpoint=http://" + addr + "&prefix=" + bad,
		"mem":        "mem://app?prefix=" + bad,
		"mysql":      "mysql://app:secretpw@" + addr + "/app?fence-table=" + bad,
		"postgres":   "postgres://app:secretpw@" + addr + "/app?fence-table=" + bad,
		"postgresql": "postgresql://app:secretpw@" + addr + "/app?fence-table=" + bad,
		"redis":      "redis://:secretpw@" + addr + "/0?prefix=" + bad,
		"rediss":     "rediss://:secretpw@" + addr + "/0?prefix=" + bad,
		"s3":         "s3://b?region=us-east-1&path-style=true&endpoint=http://" + addr + "&prefix=" + bad,
		"sqlite":     "sqlite://" + sqlite + "?fence-table=" + bad,
	}
	check := func(t *testing.T, raw string, open func(context.Context, string) (func() error, error)) {
		t.Parallel()
		// An opener that dials the never-answering listener must not
		// hold the test up: the context ends it.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		closeIt, err := open(ctx, raw)
		if err == nil {
			_ = closeIt()
		}
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("open %s = %v; want an error matching fence.ErrInvalid", redact.URL(raw), err)
		}
		if err != nil && strings.Contains(err.Error(), "secretpw") {
			t.Errorf("open %s: the error shows the password: %v", redact.URL(raw), err)
		}
	}
	t.Run("group", func(t *testing.T) {
		for _, scheme := range registeredLockers() {
			raw, ok := lockers[scheme]
			if !ok {
				t.Errorf("locker scheme %q has no URL in this test; add one with a bad %%-escape", scheme)
				continue
			}
			t.Run("locker/"+scheme, func(t *testing.T) {
				check(t, raw, func(ctx context.Context, raw string) (func() error, error) {
					l, err := fence.OpenLocker(ctx, raw, nil)
					if err != nil {
						return nil, err
					}
					return l.Close, nil
				})
			})
		}
		for _, scheme := range registeredResources() {
			raw, ok := resources[scheme]
			if !ok {
				t.Errorf("resource scheme %q has no URL in this test; add one with a bad %%-escape", scheme)
				continue
			}
			t.Run("resource/"+scheme, func(t *testing.T) {
				check(t, raw, func(ctx context.Context, raw string) (func() error, error) {
					r, err := fence.OpenResource(ctx, raw, nil)
					if err != nil {
						return nil, err
					}
					return r.Close, nil
				})
			})
		}
	})
	for _, m := range []map[string]string{lockers, resources} {
		for scheme := range m {
			if !slices.Contains(registeredLockers(), scheme) && !slices.Contains(registeredResources(), scheme) {
				t.Errorf("scheme %q of this test is not registered", scheme)
			}
		}
	}
	if n := hung.Accepted(); n != 0 {
		t.Errorf("the openers made %d connections to the store; want none", n)
	}
}
