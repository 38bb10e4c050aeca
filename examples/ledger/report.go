package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/fencekit/fence"
)

// report counts what happened and checks the ledger's invariants.
type report struct {
	envName  string
	unfenced bool

	mu          sync.Mutex
	tokens      map[string][]fence.Token // issued, per lock key
	applied     int
	appliedTok  map[string]fence.Token // last token applied, per account
	stale       int
	duplicates  int
	errs        []string
	invariants  []invariant
	balances    map[string][2]int64 // account -> {want, got}
	submissions map[string]int      // adjustment id -> times submitted
}

type invariant struct {
	what string
	ok   bool
	info string
}

func newReport(envName string, unfenced bool) *report {
	r := &report{envName: envName, unfenced: unfenced, tokens: map[string][]fence.Token{},
		appliedTok: map[string]fence.Token{}, balances: map[string][2]int64{}, submissions: map[string]int{}}
	for _, j := range jobs {
		r.submissions[j.id]++
	}
	r.submissions[paused.id]++
	return r
}

func (r *report) issued(key string, t fence.Token) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens[key] = append(r.tokens[key], t)
}

func (r *report) lastApplied(account string) (fence.Token, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.appliedTok[account]
	return t, ok
}

func (r *report) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// outcome records and prints the result of one attempt to apply adj.
func (r *report) outcome(lg *logger, worker string, adj adjustment, token fence.Token, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var stale *fence.StaleTokenError
	switch {
	case err == nil:
		r.applied++
		r.appliedTok[adj.account] = max(r.appliedTok[adj.account], token)
		lg.printf("%s: applied %s %s %+d with token %d", worker, adj.id, adj.account, adj.amount, token)
	case errors.As(err, &stale):
		r.stale++
		lg.printf("%s: write of %s REJECTED: %v", worker, adj.id, err)
	case errors.Is(err, errDuplicate):
		r.duplicates++
		lg.printf("%s: %s with token %d refused: %v", worker, adj.id, token, err)
	default:
		r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", worker, adj.id, err))
		lg.printf("%s: %s FAILED: %v", worker, adj.id, err)
	}
}

// check reads the ledger back and evaluates the invariants.
func (r *report) check(ctx context.Context, led *ledger) error {
	want := map[string]int64{}
	for acct, b := range initialBalances {
		want[acct] = b
	}
	seen := map[string]bool{}
	for _, j := range append(slices.Clone(jobs), paused) {
		if !seen[j.id] {
			seen[j.id] = true
			want[j.account] += j.amount
		}
	}
	rows, err := led.db.QueryContext(ctx, "SELECT id, account, token FROM ledger_adjustments ORDER BY seq")
	if err != nil {
		return err
	}
	defer rows.Close()
	journal := map[string]int{}
	lastTok := map[string]int64{}
	var decreasing []string
	for rows.Next() {
		var id, acct string
		var tok int64
		if err := rows.Scan(&id, &acct, &tok); err != nil {
			return err
		}
		journal[id]++
		if tok < lastTok[acct] {
			decreasing = append(decreasing, fmt.Sprintf("%s: token %d after %d", acct, tok, lastTok[acct]))
		}
		lastTok[acct] = max(lastTok[acct], tok)
	}
	if err := rows.Err(); err != nil {
		return err
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	balOK := true
	for acct, w := range want {
		got, err := led.balance(ctx, led.db, acct)
		if err != nil {
			return err
		}
		r.balances[acct] = [2]int64{w, got}
		balOK = balOK && got == w
	}
	onceOK := len(journal) == len(seen)
	for _, n := range journal {
		onceOK = onceOK && n == 1
	}
	dups := 0
	for _, n := range r.submissions {
		dups += n - 1
	}
	monotonic := true
	for key, toks := range r.tokens {
		sorted := slices.Clone(toks)
		slices.Sort(sorted)
		for i := 1; i < len(sorted); i++ {
			if sorted[i] == sorted[i-1] {
				monotonic = false
				r.errs = append(r.errs, fmt.Sprintf("token %d issued twice for %s", sorted[i], key))
			}
		}
	}
	r.invariants = []invariant{
		{"every balance equals its opening balance plus each distinct adjustment once", balOK, ""},
		{"every adjustment id is in the journal exactly once", onceOK, fmt.Sprintf("%d ids", len(journal))},
		{"duplicate submissions were refused by the unique constraint", r.duplicates == dups,
			fmt.Sprintf("%d refused of %d", r.duplicates, dups)},
		{"tokens of applied writes never decrease per account", len(decreasing) == 0, fmt.Sprint(decreasing)},
		{"no token was issued twice for a key", monotonic, ""},
		{"the paused worker's stale write was rejected", r.stale >= 1, fmt.Sprintf("%d rejected", r.stale)},
		{"no unexpected errors", len(r.errs) == 0, fmt.Sprint(r.errs)},
	}
	return nil
}

// print writes the summary and returns the number of failed invariants.
func (r *report) print(w io.Writer) (failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(w, "\nsummary (%s)\n", r.envName)
	keys := make([]string, 0, len(r.tokens))
	for k := range r.tokens {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		toks := slices.Clone(r.tokens[k])
		slices.Sort(toks)
		fmt.Fprintf(w, "  tokens issued for %-14s %v\n", k, toks)
	}
	fmt.Fprintf(w, "  writes accepted: %d, stale writes rejected: %d, duplicates refused: %d\n",
		r.applied, r.stale, r.duplicates)
	accts := make([]string, 0, len(r.balances))
	for a := range r.balances {
		accts = append(accts, a)
	}
	sort.Strings(accts)
	for _, a := range accts {
		b := r.balances[a]
		fmt.Fprintf(w, "  balance %-6s want %5d  got %5d\n", a, b[0], b[1])
	}
	fmt.Fprintln(w, "invariants")
	for _, inv := range r.invariants {
		mark := "ok  "
		if !inv.ok {
			mark = "FAIL"
			failed++
		}
		line := fmt.Sprintf("  %s %s", mark, inv.what)
		if inv.info != "" && inv.info != "[]" {
			line += " (" + inv.info + ")"
		}
		fmt.Fprintln(w, line)
	}
	return failed
}
