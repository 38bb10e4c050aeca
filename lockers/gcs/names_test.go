package gcs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

func TestKeysOutsideObjectNameRules(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l := newLocker(t, bucket, nil, &Options{Prefix: "locks/"})
	if got, want := driver.InfoOf(l.Locker).MaxKeyLen, MaxObjectNameLen-len("locks/"); got != want {
		t.Fatalf("MaxKeyLen = %d; want %d", got, want)
	}
	atRoot := newLocker(t, bucket, nil, nil)
	tests := []struct {
		name string
		l    *testLocker
		key  string
	}{
		{"empty", l, ""},
		{"name over 1024 bytes with the prefix", l, strings.Repeat("k", MaxObjectNameLen-len("locks/")+1)},
		{"name over 1024 bytes of two-byte runes", atRoot, strings.Repeat("é", MaxObjectNameLen/2) + "k"},
		{"carriage return", l, "a\rb"},
		{"line feed", l, "a\nb"},
		{"NUL", l, "a\x00b"},
		{"invalid UTF-8", l, "a\xffb"},
		{"dot", atRoot, "."},
		{"dot dot", atRoot, ".."},
		{"ACME challenge", atRoot, ".well-known/acme-challenge/token"},
	}
	lease := fence.Lease{Owner: fence.NewOwnerID(), Token: 1, TTL: MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.l.Acquire(t.Context(), tc.key, MinTTL, nil)
			wantInvalid(t, err, "Acquire")
			_, err = tc.l.Inspect(t.Context(), tc.key)
			wantInvalid(t, err, "Inspect")
			wantInvalid(t, tc.l.Break(t.Context(), tc.key), "Break")
			bad := lease
			bad.Key = tc.key
			_, err = tc.l.Renew(t.Context(), bad)
			wantInvalid(t, err, "Renew")
			wantInvalid(t, tc.l.Release(t.Context(), bad), "Release")
		})
	}
}

func TestUnusualKeysRoundTrip(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l := newLocker(t, bucket, nil, &Options{Prefix: "p/"})
	atRoot := newLocker(t, bucket, nil, nil)
	keys := []struct {
		l   *testLocker
		key string
	}{
		{l, "a#b?c[d]*e%20f g+h"},
		{l, "/leading/and//double/slashes/"},
		{l, "é名🔒"},
		{l, "."}, // p/. is a valid object name
		{l, strings.Repeat("é", (MaxObjectNameLen-len("p/"))/2)},
		{atRoot, "...."},
		{atRoot, ".well-known/other"},
	}
	for _, k := range keys {
		lease := acquire(t, k.l, k.key, MinTTL)
		if info := inspect(t, k.l, k.key); !info.Held || info.Token != lease.Token {
			t.Errorf("Inspect(%q) = %+v; want held with token %d", k.key, info, lease.Token)
		}
		if g := generation(t, bucket, k.l.object(k.key)); g == 0 {
			t.Errorf("no object %q for key %q", k.l.object(k.key), k.key)
		}
		if err := k.l.Release(t.Context(), lease); err != nil {
			t.Errorf("Release(%q): %v", k.key, err)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	b := newClient(t, nil).Bucket("unused")
	tests := []struct {
		name string
		opts Options
	}{
		{"prefix as long as a name", Options{Prefix: strings.Repeat("p", MaxObjectNameLen)}},
		{"prefix with a line feed", Options{Prefix: "locks\n"}},
		{"prefix not UTF-8", Options{Prefix: "\xff/"}},
		{"negative skew", Options{TrustedClock: true, MaxClockSkew: -time.Second}},
		{"skew over the limit", Options{TrustedClock: true, MaxClockSkew: clockfree.MaxClockSkew + 1}},
		{"skew without a trusted clock", Options{MaxClockSkew: time.Second}},
		{"negative attempts", Options{MaxAttempts: -1}},
		{"negative backoff", Options{Backoff: -time.Second}},
		{"backoff over the cap", Options{Backoff: time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(b, &tc.opts)
			wantInvalid(t, err, "New")
		})
	}
	_, err := New(nil, nil)
	wantInvalid(t, err, "New(nil)")
	if _, err := New(b, &Options{Clock: clocktest.New(time.Now()), TrustedClock: true, MaxClockSkew: time.Second}); err != nil {
		t.Errorf("New with good options: %v", err)
	}
}

func TestBadTTLsAndOwners(t *testing.T) {
	t.Parallel()
	l := newLocker(t, newBucket(t), nil, nil)
	for _, ttl := range []time.Duration{0, -time.Second, MinTTL - 1, MaxTTL + 1} {
		_, err := l.Acquire(t.Context(), "k", ttl, nil)
		wantInvalid(t, err, "Acquire with TTL "+ttl.String())
	}
	for _, owner := range []string{strings.Repeat("o", MaxOwnerLen+1), "o\xff"} {
		_, err := l.Acquire(t.Context(), "k", MinTTL, &fence.AcquireOptions{Owner: owner})
		wantInvalid(t, err, "Acquire with a bad owner")
	}
	if info := inspect(t, l, "k"); info.Token != 0 {
		t.Errorf("after refused Acquires, Inspect = %+v; want the key never acquired", info)
	}
}

// wantInvalid fails unless err is a *fence.InvalidError.
func wantInvalid(t *testing.T, err error, call string) {
	t.Helper()
	if _, ok := errors.AsType[*fence.InvalidError](err); !ok || !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s returned %v; want a *fence.InvalidError", call, err)
	}
}
