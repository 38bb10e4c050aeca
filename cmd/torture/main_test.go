package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fencekit/fence/internal/torture"
)

// TestMain runs a worker process of a run when the test binary was
// started as one (see torture.WorkerMain).
func TestMain(m *testing.M) {
	torture.WorkerMain()
	os.Exit(m.Run())
}

func TestSelectPairs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		list      string
		transfer  bool
		want      []string
		transfers []string
		wantErr   bool
	}{
		{list: "memory/memory", want: []string{"memory/memory"}},
		{list: "memory/memory", transfer: true, want: []string{"memory/memory"}},
		{list: "postgres", want: []string{"postgres/sql-postgres", "postgres/sql-sqlite"}},
		{list: "postgres", transfer: true, want: []string{"postgres/sql-postgres", "postgres/sql-sqlite"}, transfers: []string{"postgres/sql-postgres"}},
		{list: "postgres, postgres/sql-sqlite", want: []string{"postgres/sql-postgres", "postgres/sql-sqlite"}},
		{list: "memory/sql-sqlite", transfer: true, transfers: []string{"memory/sql-sqlite"}},
		{list: "memory/sql-sqlite", wantErr: true},
		{list: "nosuch", wantErr: true},
		{list: "nosuch", transfer: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/transfer=%v", tt.list, tt.transfer), func(t *testing.T) {
			t.Parallel()
			got, transfers, err := selectPairs(tt.list, tt.transfer)
			if (err != nil) != tt.wantErr {
				t.Fatalf("selectPairs(%q) error %v; want error %v", tt.list, err, tt.wantErr)
			}
			if names := pairNames(got); names != strings.Join(tt.want, ",") {
				t.Errorf("selectPairs(%q) = %v; want %v", tt.list, names, tt.want)
			}
			if names := pairNames(transfers); names != strings.Join(tt.transfers, ",") {
				t.Errorf("selectPairs(%q) transfers = %v; want %v", tt.list, names, tt.transfers)
			}
		})
	}
}

func pairNames(ps []torture.Pair) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name())
	}
	return strings.Join(names, ",")
}

// TestRunTransfer runs the transfer workload on the in-memory locker
// briefly through the command: a fenced and a control row of the
// transfer workload, and status 0 (the control found violations).
func TestRunTransfer(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if status := run([]string{"-duration", "4s", "-pairs", "memory/sql-sqlite"}, &out); status != 0 {
		t.Fatalf("status %d; table:\n%s", status, out.String())
	}
	if !strings.Contains(out.String(), "memory/sql-sqlite  fenced/transfer") || !strings.Contains(out.String(), "memory/sql-sqlite  control/transfer") {
		t.Errorf("table lacks a fenced or a control transfer row:\n%s", out.String())
	}
}

// TestRunMemory runs the in-memory pair briefly through the command: the
// table has a fenced and a control row, the status is 0, and -histories
// wrote one file of operations per illegal history of the control, none
// of the fenced run.
func TestRunMemory(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	dir := t.TempDir()
	if status := run([]string{"-duration", "3s", "-pairs", "memory/memory", "-histories", dir}, &out); status != 0 {
		t.Fatalf("status %d; table:\n%s", status, out.String())
	}
	if !strings.Contains(out.String(), "memory/memory  fenced") || !strings.Contains(out.String(), "memory/memory  control") {
		t.Errorf("table lacks a fenced or a control row:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "fenced:  1 runs") || !strings.Contains(out.String(), "control: 1 runs") {
		t.Errorf("no totals under the table:\n%s", out.String())
	}
	illegal := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if m := regexp.MustCompile(`(\d+) illegal`).FindStringSubmatch(line); m != nil && strings.Contains(line, "memory/memory  control") {
			illegal, _ = strconv.Atoi(m[1])
		}
	}
	txt, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(txt) != illegal {
		t.Errorf("-histories wrote %q; want %d files, one per illegal history of the control:\n%s", txt, illegal, out.String())
	}
	for _, f := range txt {
		if !strings.HasPrefix(filepath.Base(f), "memory_memory-control-") {
			t.Errorf("history file %s is not the control's", f)
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if status := run([]string{"-pairs", "nosuch"}, &out); status != 2 {
		t.Errorf("status %d for an unknown pair; want 2", status)
	}
}
