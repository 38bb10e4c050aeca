package torture

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes results as a table, one row per run: the pair, the
// mode, the run's length, leases taken, write attempts (applied, refused
// as stale, of unknown outcome), the faults injected by kind, the
// violations found (a fenced run must have 0, a control run more), the
// acknowledged writes lost (must be 0), the lost updates of unfenced reads
// (Overwritten) and porcupine's verdict.
func WriteTable(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tmode\tsecs\tleases\twrites\tapplied\tstale-rejected\tunknown\tviolations\tacked-lost\toverwritten\tporcupine\tfaults")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%s\t%s\n",
			r.Pair, r.Mode(), r.Elapsed.Round(time.Second).Seconds(), r.Leases, r.Writes, r.Applied, r.Stale, r.Unknown,
			violationCell(r), len(r.Verdict.Lost), r.Verdict.Overwritten, r.Linear, FormatCounts(r.Faults))
	}
	return tw.Flush()
}

// violationCell is the number of violations, with their kinds when any.
func violationCell(r *Result) string {
	n := r.Violations()
	if n == 0 {
		return "0"
	}
	kinds := map[string]int{}
	for _, v := range r.Verdict.Violations {
		kinds[v.Kind]++
	}
	if r.Linear.Illegal > 0 {
		kinds["porcupine"] = r.Linear.Illegal
	}
	var parts []string
	for _, k := range []string{KindDecrease, KindStaleAccepted, KindRejectedPresent, KindPhantom, "porcupine"} {
		if kinds[k] > 0 {
			parts = append(parts, k+"="+strconv.Itoa(kinds[k]))
		}
	}
	return strconv.Itoa(n) + " (" + strings.Join(parts, " ") + ")"
}
