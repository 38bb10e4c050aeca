package torture

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// describeOperation is one operation of the fenced-register model in
// words, for the files of WriteHistories.
func describeOperation(input, output any) string {
	switch in := input.(type) {
	case putInput:
		return fmt.Sprintf("put %s token %d: %v", in.id, in.token, output)
	case claimInput:
		return fmt.Sprintf("claim token %d: %v", in.token, output)
	case getInput:
		return fmt.Sprintf("read: last %q", output)
	}
	return fmt.Sprintf("%v: %v", input, output)
}

// WriteHistories writes, for each resource whose history porcupine found
// illegal in the run of r, two files into dir: NAME.txt lists its
// operations by call time (worker, call and return in milliseconds from
// the first operation's call, what it did and how it ended), and NAME.html is
// porcupine's drawing of the longest partial linearizations. NAME is the
// pair, the mode and the resource name, with path separators replaced.
// It returns the paths written.
func WriteHistories(dir string, r *Result) ([]string, error) {
	if len(r.Linear.illegal) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	clean := strings.NewReplacer("/", "_", string(filepath.Separator), "_")
	model := fencedRegister.ToModel()
	var paths []string
	for _, name := range slices.Sorted(maps.Keys(r.Linear.illegal)) {
		ops := slices.Clone(r.Linear.illegal[name])
		slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		base := filepath.Join(dir, clean.Replace(r.Pair+"-"+r.Mode()+"-"+name))
		var b strings.Builder
		fmt.Fprintf(&b, "# %s %s, resource %q: %d operations, no fenced register produces them\n", r.Pair, r.Mode(), name, len(ops))
		fmt.Fprintf(&b, "# worker  call_ms  return_ms  operation\n")
		for _, op := range ops {
			ret := "open"
			if op.Return != math.MaxInt64 {
				ret = fmt.Sprintf("%.1f", ms(op.Return))
			}
			fmt.Fprintf(&b, "%d  %.1f  %s  %s\n", op.ClientId, ms(op.Call), ret, describeOperation(op.Input, op.Output))
		}
		if err := os.WriteFile(base+".txt", []byte(b.String()), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, base+".txt")
		_, info := porcupine.CheckOperationsVerbose(model, ops, 30*time.Second)
		if err := porcupine.VisualizePath(model, info, base+".html"); err != nil {
			return paths, err
		}
		paths = append(paths, base+".html")
	}
	return paths, nil
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
