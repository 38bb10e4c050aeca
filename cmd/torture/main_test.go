package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/fencekit/fence/torture"
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
		list    string
		want    []string
		wantErr bool
	}{
		{list: "memory/memory", want: []string{"memory/memory"}},
		{list: "postgres", want: []string{"postgres/sql-postgres", "postgres/sql-sqlite"}},
		{list: "postgres, postgres/sql-sqlite", want: []string{"postgres/sql-postgres", "postgres/sql-sqlite"}},
		{list: "nosuch", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			t.Parallel()
			got, err := selectPairs(tt.list)
			if (err != nil) != tt.wantErr {
				t.Fatalf("selectPairs(%q) error %v; want error %v", tt.list, err, tt.wantErr)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name())
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("selectPairs(%q) = %v; want %v", tt.list, names, tt.want)
			}
		})
	}
}

// TestRunMemory runs the in-memory pair briefly through the command: the
// table has a fenced and a control row and the status is 0.
func TestRunMemory(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if status := run([]string{"-duration", "3s", "-pairs", "memory/memory"}, &out); status != 0 {
		t.Fatalf("status %d; table:\n%s", status, out.String())
	}
	if !strings.Contains(out.String(), "memory/memory  fenced") || !strings.Contains(out.String(), "memory/memory  control") {
		t.Errorf("table lacks a fenced or a control row:\n%s", out.String())
	}
}

func TestRunBadFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if status := run([]string{"-pairs", "nosuch"}, &out); status != 2 {
		t.Errorf("status %d for an unknown pair; want 2", status)
	}
}
