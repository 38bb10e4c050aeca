package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/lockers/postgres"
)

// runMainEnv makes the test binary run main instead of the tests, so that
// a test can run the program as a user does and see its exit code.
const runMainEnv = "QUICKSTART_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// program runs main in a process of its own with the environment env
// added, and returns its exit code, stdout and stderr.
func program(t *testing.T, env ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{runMainEnv + "=1"}, env...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatalf("running the program: %v", err)
	}
	return 0, out.String(), errOut.String()
}

// schemaURL returns the test server's URL with a fresh schema of its own
// first in search_path, so that the program's tables (fence_locks,
// fence_tokens, accounts) meet no other test's; the schema is dropped when
// the test ends.
func schemaURL(t *testing.T) string {
	t.Helper()
	base := testenv.PostgresURL(t)
	schema := "quickstart_" + strings.ToLower(rand.Text()[:10])
	conn, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	// A server setting goes in options, as in libpq; a space is %20.
	return base + sep + "options=-c%20search_path%3D" + schema
}

// balance reads alice's balance through pool.
func balance(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var b int64
	if err := pool.QueryRow(t.Context(), "SELECT balance FROM accounts WHERE id = 'alice'").Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProgram runs the program as a user does: it creates its tables,
// credits alice, credits her again on a second run, and skips its turn
// while another replica holds the key.
func TestProgram(t *testing.T) {
	url := schemaURL(t)
	for run, want := range []int64{25, 50} {
		code, stdout, stderr := program(t, "DATABASE_URL="+url)
		if code != 0 || !strings.Contains(stdout, "credited alice with 25") {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q; want exit 0 and a credit", run+1, code, stdout, stderr)
		}
		pool, err := pgxpool.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		got := balance(t, pool)
		pool.Close()
		if got != want {
			t.Fatalf("after run %d: balance %d; want %d", run+1, got, want)
		}
	}

	// Another replica holds the key: the program runs nothing.
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	locker, err := postgres.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	holder, err := sess.Lock(t.Context(), "account:alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := program(t, "DATABASE_URL="+url)
	if code != 0 || !strings.Contains(stdout, "another replica holds account:alice") {
		t.Fatalf("busy key: exit %d, stdout %q, stderr %q; want exit 0 and a skip", code, stdout, stderr)
	}
	if got := balance(t, pool); got != 50 {
		t.Fatalf("after a run on a busy key: balance %d; want 50", got)
	}
	// The program's fence row holds the token of its last lease; the
	// holder's is higher, so the holder could write, and the program's
	// tokens never again.
	var fenced int64
	if err := pool.QueryRow(t.Context(), "SELECT token FROM fence_tokens WHERE key = 'account:alice'").Scan(&fenced); err != nil {
		t.Fatal(err)
	}
	if fence.Token(fenced) >= holder.Token() {
		t.Fatalf("fence row token %d; want it below the current holder's %d", fenced, holder.Token())
	}
}

// TestReplicasStartTogether: three replicas of the program started at
// once on a fresh schema, five times, all create their tables at once
// and end with exit 0, each crediting alice or skipping its turn.
func TestReplicasStartTogether(t *testing.T) {
	const replicas = 3
	for round := range 5 {
		url := schemaURL(t)
		type result struct {
			code           int
			stdout, stderr string
		}
		results := make([]result, replicas)
		var wg sync.WaitGroup
		for i := range results {
			results[i].code = -1 // if program fails the test
			wg.Go(func() {
				r := &results[i]
				r.code, r.stdout, r.stderr = program(t, "DATABASE_URL="+url)
			})
		}
		wg.Wait()
		for _, r := range results {
			if r.code != 0 {
				t.Errorf("round %d: a replica exited %d, stdout %q, stderr %q; want exit 0", round+1, r.code, r.stdout, r.stderr)
			}
		}
	}
}

// TestProgramWithoutURL: without a database URL the program says what to
// set and exits with status 2.
func TestProgramWithoutURL(t *testing.T) {
	code, stdout, stderr := program(t, "DATABASE_URL=", "FENCE_POSTGRES_URL=")
	if code != 2 || !strings.Contains(stderr, "set DATABASE_URL") || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and a message naming DATABASE_URL", code, stdout, stderr)
	}
}

// TestProgramReportsErrors: a database that cannot be reached ends the
// program with status 1 and the error.
func TestProgramReportsErrors(t *testing.T) {
	code, _, stderr := program(t, "DATABASE_URL=postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if code != 1 || !strings.HasPrefix(stderr, "quickstart: ") {
		t.Fatalf("exit %d, stderr %q; want exit 1 and the error", code, stderr)
	}
}
