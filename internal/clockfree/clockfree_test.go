package clockfree

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

var t0 = time.Unix(1_000_000, 0)

func TestClockFreeTakesOverOnlyAfterOneVersionStaysAFullLease(t *testing.T) {
	t.Parallel()
	o := NewObservations()
	var m Mode
	v1 := Sighting{Version: "a", Held: true, TTL: 10 * time.Second}
	since := o.Note("t", "k", v1, t0)
	if held, until := m.Holding(v1, since, t0.Add(9*time.Second)); !held || !until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("Holding 9s after the first sighting = %v, %v; want held until t0+10s", held, until)
	}
	// Seeing it again later keeps the first sighting.
	if got := o.Note("t", "k", v1, t0.Add(5*time.Second)); !got.Equal(t0) {
		t.Fatalf("since after a second sighting = %v; want the first, %v", got, t0)
	}
	if _, ok := o.Expired("t", "k", t0.Add(9*time.Second)); ok {
		t.Fatal("Expired before a full lease")
	}
	if s, ok := o.Expired("t", "k", t0.Add(10*time.Second)); !ok || s.Version != "a" {
		t.Fatalf("Expired after a full lease = %v, %v; want version a", s, ok)
	}
	// A renewal writes a new version: the wait starts again.
	v2 := v1
	v2.Version = "b"
	since = o.Note("t", "k", v2, t0.Add(9*time.Second))
	if held, _ := m.Holding(v2, since, t0.Add(12*time.Second)); !held {
		t.Fatal("a renewed version counted from the old sighting")
	}
	if _, ok := o.Expired("t", "other", t0.Add(time.Hour)); ok {
		t.Fatal("a key never seen is Expired")
	}
}

func TestOrderedVersionsIgnoreSlowReads(t *testing.T) {
	t.Parallel()
	o := NewObservations()
	o.Note("b", "k", Sighting{Version: "5", Seq: 5, Held: true, TTL: time.Second}, t0)
	o.Note("b", "k", Sighting{Version: "4", Seq: 4, Held: true, TTL: time.Second}, t0.Add(time.Second))
	if s, since, _ := o.Last("b", "k"); s.Seq != 5 || !since.Equal(t0) {
		t.Fatalf("Last after a slow read of an older version = %v since %v; want version 5 since t0", s.Version, since)
	}
	o.Forget("b", "k")
	if o.Len() != 0 {
		t.Fatalf("Len after Forget = %d", o.Len())
	}
}

func TestTrustedClockJudgesTheStoredExpiry(t *testing.T) {
	t.Parallel()
	m := Mode{TrustedClock: true, MaxClockSkew: 2 * time.Second}
	s := Sighting{Version: "a", Held: true, TTL: 10 * time.Second, Expires: t0.Add(10 * time.Second)}
	if held, _ := m.Holding(s, t0.Add(11*time.Second), t0.Add(11*time.Second)); !held {
		t.Fatal("taken over within the skew allowance")
	}
	if held, _ := m.Holding(s, t0, t0.Add(12*time.Second)); held {
		t.Fatal("still held at expiry plus skew")
	}
	if _, until := m.Holding(s, t0, t0.Add(-time.Hour)); !until.Equal(t0.Add(-time.Hour + 10*time.Second)) {
		t.Fatalf("until for an expiry far ahead = %v; want capped at one TTL from now", until)
	}
	noExpiry := s
	noExpiry.Expires = time.Time{}
	if held, _ := m.Holding(noExpiry, t0, t0.Add(11*time.Second)); held {
		t.Fatal("a version without a stored expiry was not judged clock-free")
	}
}

func TestModeChecks(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{{MaxClockSkew: time.Second}, {TrustedClock: true, MaxClockSkew: -1}, {TrustedClock: true, MaxClockSkew: 2 * MaxClockSkew}} {
		if err := m.Check(); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%+v.Check() = %v; want ErrInvalid", m, err)
		}
	}
	if err := (Mode{TrustedClock: true, MaxClockSkew: time.Minute}).Check(); err != nil {
		t.Errorf("a valid mode: %v", err)
	}
}

func TestFromURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]error{
		"x://t?trusted-clock=true&max-clock-skew=2s": nil,
		"x://t?max-clock-skew=2s":                    fence.ErrInvalid,
		"x://t?trusted-clock=maybe":                  fence.ErrInvalid,
	} {
		u, _ := url.Parse(raw)
		p := urlparam.New(u)
		FromURL(p)
		if err := p.Done(); !errors.Is(err, want) {
			t.Errorf("%s: Done() = %v; want %v", raw, err, want)
		}
	}
}

// TestEndsAgreesWithHolding: a lease is held just before the time Ends
// gives and not from then on, in both modes.
func TestEndsAgreesWithHolding(t *testing.T) {
	t.Parallel()
	s := Sighting{Version: "a", Held: true, TTL: 10 * time.Second, Expires: t0.Add(4 * time.Second)}
	for _, m := range []Mode{{}, {TrustedClock: true}, {TrustedClock: true, MaxClockSkew: 3 * time.Second}} {
		since := t0.Add(time.Second)
		end := m.Ends(s, since)
		if held, _ := m.Holding(s, since, end.Add(-time.Nanosecond)); !held {
			t.Errorf("%+v: not held just before Ends %v", m, end)
		}
		if held, _ := m.Holding(s, since, end); held {
			t.Errorf("%+v: still held at Ends %v", m, end)
		}
	}
	if end := (Mode{}).Ends(Sighting{Version: "a", TTL: time.Second}, t0); !end.IsZero() {
		t.Errorf("Ends of a free record = %v; want zero", end)
	}
}
