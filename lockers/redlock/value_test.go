package redlock

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/valuetest"
)

// TestValueOfAQuorum: Inspect reports the value a quorum of masters hold
// with the holder's token. A value on a minority only (a Publish that
// reached one master of three) is not reported: the one a quorum still
// holds is, and none when no value has a quorum. A Publish with one
// master of three down reaches a quorum and succeeds; with two down it
// fails, and is not reported.
func TestValueOfAQuorum(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ms := startMasters(t, 3, volatile)
	l, d := newStoreLocker(t, ms, nil)
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	value := func() string {
		t.Helper()
		info, err := l.Inspect(ctx, "k")
		if err != nil || !info.Held {
			t.Fatalf("Inspect = %+v, %v; want held", info, err)
		}
		return info.Value
	}
	setOn := func(i int, v string) {
		t.Helper()
		if err := ms[i].client.Set(ctx, d.valueKey("k"), lease.Token.String()+" "+v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Publish(ctx, lease, "a"); err != nil {
		t.Fatal(err)
	}
	if got := value(); got != "a" {
		t.Fatalf("value after Publish on every master = %q; want a", got)
	}
	setOn(0, "b") // a Publish of b that reached master 0 only
	if got := value(); got != "a" {
		t.Fatalf("value with b on one master of three = %q; want a, still on a quorum", got)
	}
	setOn(1, "c") // and one of c that reached master 1 only
	if got := value(); got != "" {
		t.Fatalf("value with a, b, c on one master each = %q; want none", got)
	}
	setOn(2, "c")
	if got := value(); got != "c" {
		t.Fatalf("value with c on two masters of three = %q; want c", got)
	}

	ms[2].kill()
	if err := l.Publish(ctx, lease, "d"); err != nil {
		t.Fatalf("Publish with one master of three down: %v", err)
	}
	if got := value(); got != "d" {
		t.Fatalf("value after a Publish on two masters of three = %q; want d", got)
	}
	ms[1].kill()
	err = l.Publish(ctx, lease, "e")
	if err == nil || errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Publish with two masters of three down: %v; want an error other than not held", err)
	}
	if ms[0].client.Get(ctx, d.valueKey("k")).Val() != lease.Token.String()+" e" {
		t.Fatal("the Publish did not reach the master that is up")
	}
}

// TestCorruptValueRecord: a value record that does not parse, on one
// master, is reported by Inspect of the held key with a
// *fence.CorruptError; the lease goes on, and Publish writes over it.
func TestCorruptValueRecord(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ms := startMasters(t, 3, volatile)
	l, d := newStoreLocker(t, ms, nil)
	for _, v := range []string{"garbage", "0 v", "07 v", "-1 v", "9223372036854775808 v"} {
		lease, err := l.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ms[1].client.Set(ctx, d.valueKey("k"), v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		t.Run(v, func(t *testing.T) { valuetest.CorruptValue(t, l, lease) })
	}
}
