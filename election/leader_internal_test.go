package election

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestEndOf(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	live := Leader{Term: 5, Value: "a", ValidUntil: at.Add(time.Second)}
	noExpiry := Leader{Term: 5, Value: "a"}
	tests := []struct {
		name      string
		prev, now Leader
		token     uint64
		sent      time.Time
		want      End
	}{
		{"nobody before", Leader{}, Leader{Term: 6}, 6, at, NotEnded},
		{"same term", live, Leader{Term: 5, Value: "b"}, 5, at, NotEnded},
		{"free before the expiry", live, Leader{}, 5, at, Released},
		{"free after the expiry", live, Leader{}, 5, at.Add(time.Second), Expired},
		{"later term before the expiry", live, Leader{Term: 7}, 7, at, Superseded},
		{"later term after the expiry", live, Leader{Term: 7}, 7, at.Add(2 * time.Second), Expired},
		{"free, a later term came and went", live, Leader{}, 7, at, Superseded},
		{"free, expiry unknown", noExpiry, Leader{}, 5, at, Vacated},
		{"later term, expiry unknown", noExpiry, Leader{Term: 6}, 6, at, Superseded},
	}
	for _, tt := range tests {
		if got := endOf(tt.prev, tt.now, fence.Token(tt.token), tt.sent); got != tt.want {
			t.Errorf("%s: endOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	a1, a2 := Leader{Term: 1, Value: "a1"}, Leader{Term: 1, Value: "a2"}
	b := Leader{Term: 2, Value: "b"}
	none := Leader{}
	tests := []struct {
		name string
		a, b Change
		want Change
	}{
		{"value then value", Change{Previous: a1, Leader: a2}, Change{Previous: a2, Leader: a1}, Change{Previous: a1, Leader: a1}},
		{"end then start", Change{Previous: a1, Leader: none, Ended: Released}, Change{Previous: none, Leader: b}, Change{Previous: a1, Leader: b, Ended: Released}},
		{"value then superseded", Change{Previous: a1, Leader: a2}, Change{Previous: a2, Leader: b, Ended: Superseded}, Change{Previous: a1, Leader: b, Ended: Superseded}},
		{"start then end", Change{Previous: none, Leader: b}, Change{Previous: b, Leader: none, Ended: Expired}, Change{Previous: none, Leader: none}},
		{"superseded then expired", Change{Previous: a1, Leader: b, Ended: Superseded}, Change{Previous: b, Leader: none, Ended: Expired}, Change{Previous: a1, Leader: none, Ended: Superseded}},
	}
	for _, tt := range tests {
		got := merge(tt.a, tt.b)
		if got != tt.want {
			t.Errorf("%s: merge = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if !(Change{Previous: a1, Leader: a1}).empty() || (Change{Previous: a1, Leader: a2}).empty() {
		t.Error("empty is wrong")
	}
}
