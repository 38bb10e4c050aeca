package sql_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPgxProgramLinksNoOtherDriver lists the packages of internal/pgxonly,
// a program that fences a write through native pgx: neither SQLite nor the
// MySQL driver is among them. Their URL openers live in the subpackages
// sqlite and mysql, which such a program does not import.
func TestPgxProgramLinksNoOtherDriver(t *testing.T) {
	t.Parallel()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gocmd, "list", "-deps", "./internal/pgxonly").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/fencekit/fence/resources/sql", "github.com/jackc/pgx/v5/pgxpool"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("the pgx program does not link %s: the test proves nothing", want)
		}
	}
	for _, dep := range deps {
		for _, banned := range []string{"modernc.org/sqlite", "github.com/go-sql-driver/mysql", "github.com/fencekit/fence/resources/sql/sqlite", "github.com/fencekit/fence/resources/sql/mysql"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("the pgx program links %s", dep)
			}
		}
	}
}
