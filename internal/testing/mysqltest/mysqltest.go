// Package mysqltest runs a private MariaDB server for a test that
// restarts or kills it: a fresh data directory made by mariadb-install-db
// and a mariadbd on a free loopback port (internal/testproc), with the
// user fence (no password, every privilege) and the database fence, as on
// the shared server of scripts/test.sh. The binaries come from
// testenv.MariaDBServer and testenv.MariaDBInstallDB, so a test without
// them is skipped (or fails under FENCE_TEST_STRICT=1).
//
// A server takes about a second to start. Its data outlives Restart and
// Kill (InnoDB recovers committed transactions after a crash) and is
// removed when the test ends.
package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the "mysql" database/sql driver

	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// Server is a private MariaDB server of a test.
type Server struct {
	proc *testproc.Proc
	port int
	sock string
}

// readyTimeout bounds a start or restart.
const readyTimeout = 60 * time.Second

// Start initialises a data directory and starts a server on it, stopped
// when the test ends. It returns once the server accepts connections for
// the user fence.
func Start(t testing.TB) *Server {
	t.Helper()
	server, installDB := testenv.MariaDBServer(t), testenv.MariaDBInstallDB(t)
	// A short directory: a Unix socket's path has at most 107 bytes, more
	// than a test's TempDir may take.
	dir, err := os.MkdirTemp("", "fence-mariadb-")
	if err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	me, err := user.Current()
	if err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	data := filepath.Join(dir, "data")
	// A directory of temporary files of its own: servers sharing /tmp
	// remove each other's (a bootstrap fails with "Unknown table
	// 'mysql.tmp_user_sys'" when two install at once).
	install := exec.Command(installDB, "--no-defaults", "--datadir="+data, "--tmpdir="+dir, "--user="+me.Username,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mysqltest: mariadb-install-db: %v\n%s", err, out)
	}
	s := &Server{port: testproc.FreePort(t), sock: filepath.Join(dir, "sock")}
	s.proc = testproc.Start(t, "mariadb", server, "--no-defaults", "--datadir="+data, "--tmpdir="+dir, "--user="+me.Username,
		fmt.Sprintf("--port=%d", s.port), "--bind-address=127.0.0.1", "--socket="+s.sock,
		"--skip-name-resolve", "--innodb-buffer-pool-size=64M", "--max-connections=200")
	root := s.wait(t, "root@unix("+s.sock+")/")
	defer root.Close()
	for _, stmt := range []string{"CREATE USER 'fence'@'%'", "GRANT ALL ON *.* TO 'fence'@'%'", "CREATE DATABASE fence"} {
		if _, err := root.Exec(stmt); err != nil {
			t.Fatalf("mysqltest: %s: %v", stmt, err)
		}
	}
	return s
}

// DSN returns the go-sql-driver/mysql data source name of the server for
// the user fence and the database fence: fence@tcp(127.0.0.1:PORT)/fence.
// It stays the same across restarts.
func (s *Server) DSN() string { return fmt.Sprintf("fence@tcp(127.0.0.1:%d)/fence", s.port) }

// Restart stops the server cleanly (after Kill or Stop, it is already
// down), starts it again on the same port and data, and waits until it
// accepts connections.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.proc.Stop()
	s.proc.Restart()
	s.wait(t, s.DSN()).Close()
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit. Restart brings it back (InnoDB recovers its data).
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.proc.Kill()
}

// Stop stops the server cleanly; Restart brings it back.
func (s *Server) Stop() { s.proc.Stop() }

// Proc returns the server's process, to pause and resume it.
func (s *Server) Proc() *testproc.Proc { return s.proc }

// wait opens dsn and pings until the server answers, failing the test
// after readyTimeout or when the process exits.
func (s *Server) wait(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		switch {
		case err == nil:
			return db
		case !s.proc.Running():
			db.Close()
			t.Fatalf("mysqltest: the server exited: %v", err)
		case time.Now().After(deadline):
			db.Close()
			t.Fatalf("mysqltest: the server does not answer after %v: %v", readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
