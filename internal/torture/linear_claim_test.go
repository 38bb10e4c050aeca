package torture

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestLinearClaimRaisesTheRegister: a put refused as stale because of a
// claim is legal only when the model knows the claim, and a put below an
// applied claim that is acknowledged is illegal.
func TestLinearClaimRaisesTheRegister(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	put := func(worker, seq, token int, start, end int, o Outcome) Attempt {
		return Attempt{Worker: worker, Seq: seq, Name: "n", Token: fence.Token(token), ReadStart: at(start), Start: at(start), End: at(end), Outcome: o}
	}
	claim := Read{Worker: 2, Name: "n", Start: at(10), End: at(20), Claim: 5, Claimed: Applied}
	for _, tt := range []struct {
		desc    string
		puts    []Attempt
		reads   []Read
		illegal int
	}{
		{"stale put after a claim the model knows", []Attempt{put(1, 1, 4, 30, 40, Stale)}, []Read{claim}, 0},
		{"the same put without the claim", []Attempt{put(1, 1, 4, 30, 40, Stale)}, nil, 1},
		{"a put below the claim applied after it", []Attempt{put(1, 1, 4, 30, 40, Applied)}, []Read{claim}, 1},
		{"a put at the claim's token", []Attempt{put(2, 1, 5, 30, 40, Applied)}, []Read{claim}, 0},
		{"a stale claim changes nothing", []Attempt{put(1, 1, 4, 30, 40, Applied)}, []Read{{Worker: 2, Name: "n", Start: at(10), End: at(20), Claim: 3, Claimed: Stale}, {Worker: 3, Name: "n", Start: at(0), End: at(5), Claim: 4, Claimed: Applied}}, 0},
	} {
		l := CheckLinearizable(tt.puts, tt.reads, time.Second)
		if l.Illegal != tt.illegal {
			t.Errorf("%s: %d illegal histories, want %d", tt.desc, l.Illegal, tt.illegal)
		}
	}
}
