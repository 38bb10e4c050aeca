package torture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Environment variables read for MySQL (MariaDB). scripts/sqlzk.sh exports
// them all; with FENCE_MARIADB_SERVER and FENCE_MARIADB_INSTALL_DB the run
// starts a private server that it may crash and restart without
// disturbing other users of the shared one.
const (
	EnvMySQLURL         = "FENCE_MYSQL_URL"
	EnvMariaDBServer    = "FENCE_MARIADB_SERVER"
	EnvMariaDBInstallDB = "FENCE_MARIADB_INSTALL_DB"
)

// mysqlPath is the run's way to MySQL: a server (private when possible)
// and a fault-injecting proxy in front of it.
type mysqlPath struct {
	faultURL, cleanURL string // mysql://USER@HOST:PORT/DB
}

// MySQL returns mysql:// URLs of a MariaDB server for the run: faulty goes
// through the run's fault-injecting proxy, clean directly. When
// FENCE_MARIADB_SERVER and FENCE_MARIADB_INSTALL_DB are set, the server is
// a private one started for the run, and killing it (SIGKILL: InnoDB
// recovers committed transactions from its log) and starting it again is
// one of the run's disruptions; otherwise it is the server of
// FENCE_MYSQL_URL, and cutting every proxied connection stands in.
func (s *Stage) MySQL(ctx context.Context) (faulty, clean string, err error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if p := s.mysql; p != nil {
		return p.faultURL, p.cleanURL, nil
	}
	p := &mysqlPath{}
	server, installDB := os.Getenv(EnvMariaDBServer), os.Getenv(EnvMariaDBInstallDB)
	var srv *mariaDB
	if server != "" && installDB != "" {
		if srv, err = startMariaDB(ctx, server, installDB, filepath.Join(s.Dir, "mariadb")); err != nil {
			return "", "", err
		}
		s.Defer(srv.stop)
		p.cleanURL = fmt.Sprintf("mysql://fence@127.0.0.1:%d/fence", srv.port)
	} else if p.cleanURL = os.Getenv(EnvMySQLURL); p.cleanURL == "" {
		return "", "", unavailable(EnvMySQLURL)
	}
	cu, err := url.Parse(p.cleanURL)
	if err != nil {
		return "", "", fmt.Errorf("torture: MySQL URL: %w", err)
	}
	addr, err := s.proxied(cu.Host) // cutting its connections is a disruption too
	if err != nil {
		return "", "", err
	}
	fu := *cu
	fu.Host = addr
	p.faultURL = fu.String()
	if srv != nil {
		s.addDisruptor("mariadb-restart", func(ctx context.Context) error {
			s.Counts.Add(FaultRestart)
			return srv.restart(ctx)
		})
	}
	s.mysql = p
	return p.faultURL, p.cleanURL, nil
}

// mysqlURL returns the URLs of a store on the run's MySQL server with the
// query parameters of params (name, value pairs) and the driver's dial,
// read and write timeouts.
func mysqlURL(params func(s *Stage) []string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		faulty, clean, err := s.MySQL(ctx)
		if err != nil {
			return "", "", err
		}
		add := func(raw string) string {
			u, _ := url.Parse(raw) // built by MySQL
			q := withParams(u.Query(), params(s)...)
			q.Set("timeout", "3s")
			q.Set("readTimeout", "5s")
			q.Set("writeTimeout", "5s")
			u.RawQuery = q.Encode()
			return u.String()
		}
		return add(faulty), add(clean), nil
	}
}

// mariaDB is a private MariaDB server in a directory of the run, with the
// user fence (no password, every privilege) and the database fence.
type mariaDB struct {
	server, dir, sock, user string
	port                    int
	proc                    *serverProc // nil while killed
}

// startMariaDB initialises a data directory under dir and starts a server
// on it.
func startMariaDB(ctx context.Context, server, installDB, dir string) (*mariaDB, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	m := &mariaDB{server: server, dir: dir, sock: filepath.Join(dir, "mariadb.sock"), user: u.Username}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Each instance has a directory of temporary files of its own:
	// instances sharing /tmp remove each other's (a bootstrap fails with
	// "Unknown table 'mysql.tmp_user_sys'" when two install at once).
	out, err := exec.CommandContext(ctx, installDB, "--no-defaults", "--datadir="+filepath.Join(dir, "data"), "--tmpdir="+dir,
		"--user="+m.user, "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("torture: %s: %w: %s", installDB, err, out)
	}
	if m.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	db, err := m.rootDB()
	if err != nil {
		m.stop()
		return nil, err
	}
	defer db.Close()
	for _, stmt := range []string{"CREATE USER 'fence'@'%'", "GRANT ALL ON *.* TO 'fence'@'%'", "CREATE DATABASE fence"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			m.stop()
			return nil, fmt.Errorf("torture: MariaDB: %s: %w", stmt, err)
		}
	}
	return m, nil
}

// rootDB connects as root through the server's socket.
func (m *mariaDB) rootDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", m.sock
	cfg.Logger = &mysql.NopLogger{} // the faults cut connections on purpose
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// start starts the server and returns once it answers.
func (m *mariaDB) start(ctx context.Context) error {
	proc, err := startServerProc(filepath.Join(m.dir, "server.log"), m.server, "--no-defaults", "--datadir="+filepath.Join(m.dir, "data"), "--tmpdir="+m.dir, "--user="+m.user,
		fmt.Sprintf("--port=%d", m.port), "--bind-address=127.0.0.1", "--socket="+m.sock, "--skip-name-resolve",
		"--innodb-buffer-pool-size=32M", "--max-connections=200")
	if err != nil {
		return err
	}
	m.proc = proc
	db, err := m.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-proc.exited:
			return fmt.Errorf("%w: mariadbd (its log: %s)", errServerExited, filepath.Join(m.dir, "server.log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("torture: mariadbd did not answer within 60 s: %w", err)
		}
	}
}

// restart kills the server as a crash would and starts it again.
// The start is not cut short when ctx ends (start has a deadline of its
// own): a run that ends mid-restart reads its resources back from the
// server, which must be answering again by then.
func (m *mariaDB) restart(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	m.kill()
	err := m.start(ctx)
	for i := 0; err != nil && i < 3 && errors.Is(err, errServerExited); i++ {
		// InnoDB can find its files still locked for a moment after a kill.
		time.Sleep(500 * time.Millisecond)
		err = m.start(ctx)
	}
	return err
}

func (m *mariaDB) kill() {
	m.proc.kill()
	m.proc = nil
}

func (m *mariaDB) stop() { m.kill() }

// The MySQL backends, on the run's MariaDB server (see Stage.MySQL).
var (
	// MySQLLocker is lockers/mysql, its lease table named for the run.
	MySQLLocker = LockerKind{
		Name: "mysql", Env: []string{EnvMySQLURL}, TTL: time.Second, Wave: 1,
		URL: mysqlURL(func(s *Stage) []string { return []string{"table", s.ID + "_locks"} }),
	}

	// SQLMySQLResource is resources/sql in its MySQL dialect.
	SQLMySQLResource = ResourceKind{
		Name: "sql-mysql", Env: []string{EnvMySQLURL},
		URL: mysqlURL(sqlTables),
	}
)
