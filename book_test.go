package fence

import (
	"fmt"
	"testing"
	"time"
)

func TestValidUntilIsTheLatestOfAnyCopy(t *testing.T) {
	t.Parallel()
	var b book
	t0 := time.Unix(1000, 0)
	acquired := Lease{Key: "k", Owner: "o", Token: 7, TTL: time.Second, ValidUntil: t0.Add(time.Second)}
	b.record(acquired, t0)
	renewed := acquired
	renewed.ValidUntil = t0.Add(3 * time.Second)
	b.record(renewed, t0.Add(2*time.Second))
	if got := b.validUntil(acquired); !got.Equal(renewed.ValidUntil) {
		t.Errorf("ValidUntil(acquisition copy) = %v; want the renewal's %v", got, renewed.ValidUntil)
	}
	b.record(acquired, t0.Add(2*time.Second)) // an older copy recorded late does not move it back
	if got := b.validUntil(renewed); !got.Equal(renewed.ValidUntil) {
		t.Errorf("ValidUntil after recording an older copy = %v; want %v", got, renewed.ValidUntil)
	}
	for _, other := range []Lease{
		{Key: "k", Owner: "o", Token: 8, ValidUntil: t0},
		{Key: "k", Owner: "p", Token: 7, ValidUntil: t0},
		{Key: "j", Owner: "o", Token: 7, ValidUntil: t0},
	} {
		if got := b.validUntil(other); !got.Equal(t0) {
			t.Errorf("ValidUntil(%+v) = %v; want its own %v: another lease's renewal must not count", other, got, t0)
		}
	}
	b.forget(renewed)
	if got := b.validUntil(acquired); !got.Equal(acquired.ValidUntil) {
		t.Errorf("ValidUntil after Forget = %v; want the copy's own %v", got, acquired.ValidUntil)
	}
}

func TestSweepsLeasesThatRanOut(t *testing.T) {
	t.Parallel()
	var b book
	t0 := time.Unix(1000, 0)
	live := Lease{Key: "live", Owner: "o", Token: 1, ValidUntil: t0.Add(time.Hour)}
	b.record(live, t0)
	for i := range 10 * minSweep {
		now := t0.Add(time.Duration(i) * time.Second)
		b.record(Lease{Key: fmt.Sprint(i), Owner: "o", Token: 1, ValidUntil: now.Add(time.Second)}, now)
	}
	if n := b.len(); n > 2*minSweep+1 {
		t.Errorf("book holds %d leases after 10x%d short ones ran out; want them swept", n, minSweep)
	}
	if got := b.validUntil(Lease{Key: "live", Owner: "o", Token: 1}); !got.Equal(live.ValidUntil) {
		t.Errorf("the unexpired lease was swept: ValidUntil = %v", got)
	}
}

func TestLeasesOfOneKeyKeepTheirOwnExpiry(t *testing.T) {
	t.Parallel()
	var b book
	t0 := time.Unix(1000, 0)
	// A lease that ran out unreleased, the next one on the same key, and
	// a third: each keeps its own renewals, and forgetting one leaves
	// the others.
	leases := []Lease{
		{Key: "k", Owner: "o", Token: 1, ValidUntil: t0.Add(time.Second)},
		{Key: "k", Owner: "p", Token: 2, ValidUntil: t0.Add(2 * time.Second)},
		{Key: "k", Owner: "q", Token: 3, ValidUntil: t0.Add(3 * time.Second)},
	}
	for _, l := range leases {
		b.record(l, t0)
	}
	for i, l := range leases {
		renewed := l
		renewed.ValidUntil = l.ValidUntil.Add(time.Minute)
		b.record(renewed, t0)
		l.ValidUntil = time.Time{}
		if got := b.validUntil(l); !got.Equal(renewed.ValidUntil) {
			t.Errorf("lease %d: ValidUntil = %v; want its renewal's %v", i, got, renewed.ValidUntil)
		}
	}
	for i := range leases {
		b.forget(leases[i])
		if n := b.len(); n != len(leases)-i-1 {
			t.Fatalf("after forgetting %d leases the book holds %d", i+1, n)
		}
		for j := i + 1; j < len(leases); j++ {
			l := leases[j]
			l.ValidUntil = time.Time{}
			if got, want := b.validUntil(l), leases[j].ValidUntil.Add(time.Minute); !got.Equal(want) {
				t.Errorf("after forgetting lease %d: ValidUntil(lease %d) = %v; want %v", i, j, got, want)
			}
		}
	}
}
