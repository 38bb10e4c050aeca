package etcd

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/fencekit/fence"
)

// TestBoundsOrderAsTokens: the compare bounds admit exactly the records of
// tokens up to t, for tokens around changes in digit count and at the ends
// of the range.
func TestBoundsOrderAsTokens(t *testing.T) {
	t.Parallel()
	tokens := []fence.Token{1, 2, 9, 10, 11, 99, 100, 1 << 32, math.MaxInt64, math.MaxUint64 - 1, math.MaxUint64}
	for _, stored := range tokens {
		for _, tombstone := range []bool{false, true} {
			rec := encodeRecord(stored, tombstone, []byte("~~~\xff value"))
			if rec <= lowestRecord {
				t.Errorf("record of token %d sorts below the lowest bound", stored)
			}
			for _, w := range tokens {
				admitted := rec < upperBound(w)
				if admitted != (stored <= w) {
					t.Errorf("record of token %d (tombstone %v) admitted for a write of token %d: %v", stored, tombstone, w, admitted)
				}
			}
		}
	}
	if zero := encodeRecord(0, false, nil); zero > lowestRecord {
		t.Errorf("a record of token 0 sorts above the lowest bound")
	}
}

// TestOneTransactionPerWrite: a Put, over a value or of a new name, and a
// Delete are each one call to the server, and so is a stale write.
func TestOneTransactionPerWrite(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		calls.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	r := testResource(t, newClient(t, grpc.WithChainUnaryInterceptor(count)), uniquePrefix("calls"))
	ctx := t.Context()
	for _, step := range []struct {
		what string
		do   func() error
		err  error
	}{
		{"Put of a new name", func() error { return r.Put(ctx, "n", 5, []byte("a")) }, nil},
		{"Put over a value, equal token", func() error { return r.Put(ctx, "n", 5, []byte("b")) }, nil},
		{"Put over a value, higher token", func() error { return r.Put(ctx, "n", 6, []byte("c")) }, nil},
		{"stale Put", func() error { return r.Put(ctx, "n", 4, []byte("d")) }, fence.ErrStaleToken},
		{"Delete", func() error { return r.Delete(ctx, "n", 7) }, nil},
		{"stale Delete", func() error { return r.Delete(ctx, "n", 6) }, fence.ErrStaleToken},
		{"Delete of a new name", func() error { return r.Delete(ctx, "m", 1) }, nil},
	} {
		before := calls.Load()
		err := step.do()
		if (step.err == nil && err != nil) || (step.err != nil && !errors.Is(err, step.err)) {
			t.Fatalf("%s: %v; want %v", step.what, err, step.err)
		}
		if n := calls.Load() - before; n != 1 {
			t.Errorf("%s made %d calls; want 1", step.what, n)
		}
	}
}

// TestCorruptRecord: a key under the prefix holding a value that is not a
// record is reported by Get and Highest with a *fence.CorruptError; one
// that does not start as a record does (recordPrefix and a token that
// sorts within the bounds of the write) is reported by Put and Delete too,
// and never replaced.
func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, tt := range []struct {
		v        string
		writable bool // sorts within the bounds of some write: see the package doc
	}{
		{"", false}, {"garbage", false}, {"zzzz", false}, {"fence1 ", false},
		{"fence1 00000000000000000000 vzero", false}, {"fence1 99999999999999999999 v", false},
		{"fence1 0000000000000000000x v", true}, {"fence1 00000000000000000005 x", true},
		{"fence1 00000000000000000005 tjunk", true}, {"fence1 00000000000000000005_v", true},
	} {
		t.Run(tt.v, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			prefix := uniquePrefix("corrupt")
			r := testResource(t, c, prefix)
			if _, err := c.Put(ctx, prefix+"n", tt.v); err != nil {
				t.Fatal(err)
			}
			_, _, err := r.Get(ctx, "n")
			wantCorrupt(t, err, "Get")
			_, err = r.Highest(ctx, "n")
			wantCorrupt(t, err, "Highest")
			if tt.writable {
				return
			}
			for _, tok := range []fence.Token{1, 3, 6, math.MaxUint64} {
				wantCorrupt(t, r.Put(ctx, "n", tok, []byte("new")), "Put")
				wantCorrupt(t, r.Delete(ctx, "n", tok), "Delete")
			}
			resp, err := c.Get(ctx, prefix+"n")
			if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != tt.v {
				t.Fatalf("the corrupt record was replaced: %v, %v", resp, err)
			}
		})
	}
}

func wantCorrupt(t *testing.T, err error, call string) {
	t.Helper()
	if _, ok := errors.AsType[*fence.CorruptError](err); !ok || !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("%s of a corrupt record: %v (%T); want a *fence.CorruptError", call, err, err)
	}
}

// FuzzParseRecord: parsing never panics; a record it accepts is exactly
// the encoding of what it returns, and every write's record parses back.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{"", encodeRecord(1, false, nil), encodeRecord(7, true, nil), encodeRecord(math.MaxUint64, false, []byte("x y\x00")), "fence1 0000000000000000000a v", strings.Repeat("9", 40)} {
		f.Add([]byte(s), uint64(3), false, []byte("v"))
	}
	f.Fuzz(func(t *testing.T, stored []byte, token uint64, tombstone bool, value []byte) {
		if r, err := parseRecord("n", stored); err == nil {
			if got := encodeRecord(r.token, r.tombstone, r.value); got != string(stored) {
				t.Fatalf("parseRecord(%q) = %+v, which encodes as %q", stored, r, got)
			}
			if !r.token.Valid() {
				t.Fatalf("parseRecord(%q) accepted token 0", stored)
			}
		}
		if token == 0 {
			return
		}
		if tombstone {
			value = nil
		}
		rec := encodeRecord(fence.Token(token), tombstone, value)
		r, err := parseRecord("n", []byte(rec))
		if err != nil || r.token != fence.Token(token) || r.tombstone != tombstone || string(r.value) != string(value) {
			t.Fatalf("the record of (%d, %v, %q) parses as %+v, %v", token, tombstone, value, r, err)
		}
		if rec <= lowestRecord || rec >= upperBound(fence.Token(token)) {
			t.Fatalf("the record of token %d is outside the bounds that admit a write of its own token", token)
		}
	})
}
