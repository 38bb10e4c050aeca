package azblob

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// TestRequestsPerCall counts the requests each method sends to Azurite,
// as the package doc's "Costs" states them.
func TestRequestsPerCall(t *testing.T) {
	t.Parallel()
	cnt := &counter{}
	c := newContainer(t, nil)
	r := testResource(t, sameContainer(t, c, cnt), fastOptions)
	k := key(t)
	steps := []struct {
		name string
		fn   func() error
		want map[string]int
	}{
		{"Put new", func() error { return r.Put(t.Context(), k, 1, []byte("a")) }, map[string]int{"HEAD ": 1, "PUT ": 1}},
		{"Put over", func() error { return r.Put(t.Context(), k, 2, []byte("b")) }, map[string]int{"HEAD ": 1, "PUT ": 1}},
		{"Get", func() error { _, _, err := r.Get(t.Context(), k); return err }, map[string]int{"GET ": 1}},
		{"Highest", func() error { _, err := r.Highest(t.Context(), k); return err }, map[string]int{"HEAD ": 1}},
		{"Claim", func() error { return r.Claim(t.Context(), k, 3) }, map[string]int{"HEAD ": 1, "PUT metadata": 1}},
		{"Claim absent", func() error { return r.Claim(t.Context(), k+"-none", 3) }, map[string]int{"HEAD ": 1, "PUT ": 1}},
		{"Delete", func() error { return r.Delete(t.Context(), k, 3) }, map[string]int{"HEAD ": 1, "PUT ": 1}},
		{"Delete again", func() error { return r.Delete(t.Context(), k, 3) }, map[string]int{"HEAD ": 1}},
		{"stale Put", func() error {
			if err := r.Put(t.Context(), k, 2, nil); !isStale(err) {
				return err
			}
			return nil
		}, map[string]int{"HEAD ": 1}},
	}
	for _, s := range steps {
		cnt.take()
		if err := s.fn(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := cnt.take()
		if total(got) != total(s.want) {
			t.Errorf("%s sent %v; want %v", s.name, got, s.want)
			continue
		}
		for req, n := range s.want {
			if got[req] != n {
				t.Errorf("%s sent %v; want %v", s.name, got, s.want)
			}
		}
		t.Logf("%s: %d requests %v", s.name, total(got), got)
	}
}

func isStale(err error) bool { return errors.Is(err, fence.ErrStaleToken) }
