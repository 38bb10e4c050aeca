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
// mode, the run's length, leases taken and lost, long jobs (released of
// those held, the guaranteed one marked), releases refused after renewals,
// write attempts (applied, refused as stale, of unknown outcome), the
// faults injected by kind, the violations found (a fenced run must have
// 0, a control run more), the acknowledged writes lost (must be 0), the
// lost updates of unfenced reads (Overwritten), porcupine's verdict, and
// the violations the locker's documented guarantees allow (see Expected),
// counted apart from the others and labelled.
func WriteTable(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tmode\tsecs\tleases\tlost\tlong-jobs\trel-refused\twrites\tapplied\tstale-rejected\tunknown\tviolations\tacked-lost\toverwritten\tporcupine\texpected\tfaults")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n",
			r.Pair, r.Mode(), r.Elapsed.Round(time.Second).Seconds(), r.Leases, r.LeasesLost, longJobCell(r), refusedCell(r),
			r.Writes, r.Applied, r.Stale, r.Unknown,
			violationCell(r), len(r.Verdict.Lost), r.Verdict.Overwritten, r.Linear, expectedCell(r), FormatCounts(r.Faults))
	}
	return tw.Flush()
}

// longJobCell is "released/held" for the long jobs, with "(guaranteed
// released)" or "(guaranteed NOT released)" when the run had one.
func longJobCell(r *Result) string {
	released, clean, cleanReleased := 0, false, false
	for _, j := range r.LongJobs {
		if j.Released {
			released++
		}
		if j.Clean {
			clean = true
			cleanReleased = cleanReleased || j.Released
		}
	}
	s := fmt.Sprintf("%d/%d", released, len(r.LongJobs))
	switch {
	case clean && cleanReleased:
		s += " (guaranteed released)"
	case clean:
		s += " (guaranteed NOT released)"
	}
	return s
}

// refusedCell is the number of refused releases, those of long jobs
// counted apart.
func refusedCell(r *Result) string {
	long := 0
	for _, x := range r.Refused {
		if x.Long {
			long++
		}
	}
	if long == 0 {
		return strconv.Itoa(len(r.Refused))
	}
	return fmt.Sprintf("%d (%d long)", len(r.Refused), long)
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
	for _, k := range []string{KindTokenReissued, KindTokenRegressed, KindDecrease, KindStaleAccepted, KindRejectedPresent, KindPhantom,
		KindNotConserved, KindNegative, KindLedger, "porcupine"} {
		if kinds[k] > 0 {
			parts = append(parts, k+"="+strconv.Itoa(kinds[k]))
		}
	}
	return strconv.Itoa(n) + " (" + strings.Join(parts, " ") + ")"
}

// expectedCell is "-" for a locker without expected violations, else
// "expected: KIND=N ... (SHORT)", or "expected: NONE SHOWN (SHORT)" when
// the run did not show them.
func expectedCell(r *Result) string {
	if r.Allowed == nil {
		return "-"
	}
	found := CountKinds(r.Expected)
	if found == "" {
		found = "NONE SHOWN"
	}
	return "expected: " + found + " (" + r.Allowed.Short + ")"
}

// WriteSummary writes the totals of results under WriteTable's table:
// for the fenced runs and for the controls apart, the runs, writes,
// applied writes, violations, acknowledged writes lost, overwritten
// writes and illegal histories, the fenced runs' expected violations
// (see Expected), and the faults of all runs by kind.
func WriteSummary(w io.Writer, results []*Result) error {
	type totals struct{ runs, writes, applied, violations, lost, overwritten, illegal, expected, quiet int }
	var fenced, control totals
	faults := map[string]int{}
	for _, r := range results {
		t := &fenced
		if r.Control {
			t = &control
		}
		t.runs++
		t.writes += r.Writes
		t.applied += r.Applied
		t.violations += r.Violations()
		t.lost += len(r.Verdict.Lost)
		t.overwritten += r.Verdict.Overwritten
		t.illegal += r.Linear.Illegal
		t.expected += len(r.Expected)
		if r.Violations() == 0 {
			t.quiet++
		}
		for k, v := range r.Faults {
			faults[k] += v
		}
	}
	_, err := fmt.Fprintf(w, "fenced:  %d runs, %d writes (%d applied), %d violations, %d acked-lost, %d overwritten, %d illegal histories; %d expected violations, labelled\n"+
		"control: %d runs, %d writes (%d applied), %d violations, %d acked-lost, %d overwritten, %d illegal histories; %d runs without a violation\n"+
		"faults:  %s\n",
		fenced.runs, fenced.writes, fenced.applied, fenced.violations, fenced.lost, fenced.overwritten, fenced.illegal, fenced.expected,
		control.runs, control.writes, control.applied, control.violations, control.lost, control.overwritten, control.illegal, control.quiet,
		FormatCounts(faults))
	return err
}
