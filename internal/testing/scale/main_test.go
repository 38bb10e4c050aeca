package scale

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestMain(m *testing.M) {
	if targets := os.Getenv(proxyEnv); targets != "" {
		os.Exit(serveProxy(targets))
	}
	code := m.Run()
	if w := theWire; w != nil {
		w.stop()
	}
	printSummary()
	os.Exit(code)
}

// row is the outcome of one sub-benchmark, for the summary.
type row struct {
	name                                                 string
	rounds, period, wire, calls, renewals, cpu, perLease float64
	hasWire                                              bool
	lost, leases                                         int
	acquire                                              float64
	note                                                 string
}

var (
	rowsMu sync.Mutex
	rows   []row
)

func addRow(r row) {
	rowsMu.Lock()
	rows = append(rows, r)
	rowsMu.Unlock()
}

// printSummary prints the rows as a markdown table.
func printSummary() {
	if len(rows) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("\n| store / TTL / N | rounds | s / round | wire round trips / interval | driver calls / interval | renewal calls / interval | client CPU ms / interval | CPU µs / lease | lost | acquire N (s) |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		wire := "–"
		if r.hasWire {
			wire = fmt.Sprintf("%.1f", r.wire)
		}
		if r.note != "" {
			fmt.Fprintf(&sb, "| %s | %s |  |  |  |  |  |  |  |  |\n", r.name, r.note)
			continue
		}
		fmt.Fprintf(&sb, "| %s | %.1f | %.2f | %s | %.1f | %.1f | %.1f | %.2f | %d of %d | %.2f |\n",
			r.name, r.rounds, r.period, wire, r.calls, r.renewals, r.cpu, r.perLease, r.lost, r.leases, r.acquire)
	}
	fmt.Print(sb.String())
}
