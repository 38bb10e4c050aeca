package schedule_test

import (
	"testing"

	"github.com/fencekit/fence/schedule"
)

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[schedule.Outcome]string{
		schedule.Ran: "ran", schedule.Busy: "busy", schedule.Done: "done", schedule.Failed: "failed",
		schedule.Retried: "retried", schedule.Missed: "missed", 0: "unknown",
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
