package sql_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// dataTable creates a table recording, per name, the token of the last
// fenced write and the number of writes.
func dataTable(t *testing.T, b *backend) string {
	t.Helper()
	name := uniqueName("data")
	b.exec(t, fmt.Sprintf(`CREATE TABLE %q (name text PRIMARY KEY, last bigint NOT NULL, writes bigint NOT NULL)`, name))
	b.dropLater(t, name)
	return name
}

// fencedWrite checks token on name, then records it in data as the last
// write, returning the token it replaced (0 for the first).
func fencedWrite(x txn, f fences, d fencesql.Dialect, data, name string, token fence.Token) (prev int64, err error) {
	if err := x.check(f, name, token); err != nil {
		return 0, err
	}
	v, err := x.scalar(fmt.Sprintf(`SELECT coalesce((SELECT last FROM %q WHERE name = $1), 0)`, data), name)
	if err != nil {
		return 0, err
	}
	prev, _ = v.(int64)
	upsert := `INSERT INTO %q (name, last, writes) VALUES ($1, $2, 1)
ON CONFLICT (name) DO UPDATE SET last = excluded.last, writes = %[1]q.writes + 1`
	if d == fencesql.MySQL {
		upsert = `INSERT INTO %q (name, last, writes) VALUES ($1, $2, 1)
ON DUPLICATE KEY UPDATE last = VALUES(last), writes = writes + 1`
	}
	err = x.exec(fmt.Sprintf(upsert, data), name, int64(token))
	return prev, err
}

// outcome tallies concurrent fenced writes to one name.
type outcome struct {
	mu         sync.Mutex
	accepted   int64
	stale      int64
	maxToken   int64
	violations []string
	errs       []error
}

func (o *outcome) record(token fence.Token, prev int64, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case errors.Is(err, fence.ErrStaleToken):
		o.stale++
	case err != nil:
		o.errs = append(o.errs, err)
	default:
		o.accepted++
		o.maxToken = max(o.maxToken, int64(token))
		if prev > int64(token) {
			o.violations = append(o.violations, fmt.Sprintf("token %d committed after %d", token, prev))
		}
	}
}

// verify checks the tally against the final state of name.
func (o *outcome) verify(t *testing.T, b *backend, fenceTable, data, name string, total int64) {
	t.Helper()
	for _, err := range o.errs {
		t.Errorf("unexpected error: %v", err)
	}
	for _, v := range o.violations {
		t.Errorf("violation: %s", v)
	}
	if o.accepted+o.stale != total {
		t.Errorf("%d accepted + %d stale != %d writes", o.accepted, o.stale, total)
	}
	var last, writes any
	b.do(t, func(x txn) (err error) {
		if last, err = x.scalar(fmt.Sprintf(`SELECT last FROM %q WHERE name = $1`, data), name); err != nil {
			return err
		}
		writes, err = x.scalar(fmt.Sprintf(`SELECT writes FROM %q WHERE name = $1`, data), name)
		return err
	})
	if last != o.maxToken || writes != o.accepted {
		t.Errorf("data holds last %v after %v writes; want %d after %d", last, writes, o.maxToken, o.accepted)
	}
	if got := storedToken(t, b, fenceTable, name); got != o.maxToken {
		t.Errorf("fence row holds %v; want the highest accepted, %d", got, o.maxToken)
	}
	t.Logf("%d writes: %d accepted, %d stale, highest %d", total, o.accepted, o.stale, o.maxToken)
}

// TestConcurrentWritersMixedTokens runs writers with random tokens on one
// name, in READ COMMITTED and SERIALIZABLE transactions (retried on
// conflicts): every committed write saw a lower or equal token
// before it, and the final state is the highest accepted.
func TestConcurrentWritersMixedTokens(t *testing.T) {
	t.Parallel()
	const writers, writes = 6, 12
	for _, serializable := range []bool{false, true} {
		t.Run(fmt.Sprintf("serializable=%v", serializable), func(t *testing.T) {
			t.Parallel()
			onEachBackend(t, writers, func(t *testing.T, b *backend) {
				if serializable && b.dialect == fencesql.SQLite {
					t.Skip("SQLite transactions are always serializable; covered by serializable=false")
				}
				tb, data := b.tables(t), dataTable(t, b)
				f := b.mustFences(t, tb)
				name, o := "hot", &outcome{}
				var attempts atomic.Int64
				var wg sync.WaitGroup
				start := make(chan struct{})
				for w := range writers {
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					wg.Go(func() {
						<-start
						for i := range writes {
							// Tokens climb with the writes, so writers
							// overtake one another and some lag behind.
							token := fence.Token(1 + 2*i + rng.IntN(6))
							var prev int64
							err := b.inTx(t.Context(), serializable, func(x txn) (err error) {
								attempts.Add(1)
								prev, err = fencedWrite(x, f, b.dialect, data, name, token)
								return err
							})
							o.record(token, prev, err)
						}
					})
				}
				close(start)
				wg.Wait()
				o.verify(t, b, tb.FenceTable, data, name, writers*writes)
				t.Logf("%d transactions took %d attempts", writers*writes, attempts.Load())
			})
		})
	}
}

// TestConcurrentFirstInserts starts writers at once on names never seen:
// the first insert of a fence row races with the others, and none of them
// may fail for any reason but a stale token.
func TestConcurrentFirstInserts(t *testing.T) {
	t.Parallel()
	const writers, rounds = 8, 4
	onEachBackend(t, writers, func(t *testing.T, b *backend) {
		tb, data := b.tables(t), dataTable(t, b)
		f := b.mustFences(t, tb)
		for r := range rounds {
			name, o := fmt.Sprintf("fresh-%d", r), &outcome{}
			tokens := rand.Perm(writers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, tok := range tokens {
				token := fence.Token(tok + 1)
				wg.Go(func() {
					<-start
					var prev int64
					err := b.inTx(t.Context(), false, func(x txn) (err error) {
						prev, err = fencedWrite(x, f, b.dialect, data, name, token)
						return err
					})
					o.record(token, prev, err)
				})
			}
			close(start)
			wg.Wait()
			o.verify(t, b, tb.FenceTable, data, name, writers)
			if o.maxToken != writers {
				t.Errorf("round %d: highest accepted %d; want %d, which no one can refuse", r, o.maxToken, writers)
			}
		}
	})
}
