package torture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// Environment variables read for PostgreSQL. scripts/services.sh exports
// them all; with FENCE_PG_BIN the run starts a private server that it may
// restart without disturbing other users of the shared one.
const (
	EnvPostgresURL = "FENCE_POSTGRES_URL"
	EnvPgBin       = "FENCE_PG_BIN"
	EnvPgUser      = "FENCE_PG_USER"
)

// pgPath is the run's way to PostgreSQL: a server (private when possible)
// and a fault-injecting proxy in front of it.
type pgPath struct {
	proxy    *Proxy
	cleanURL string
	faultURL string
}

// Postgres returns connection strings of a PostgreSQL server for the run:
// faulty goes through the run's fault-injecting proxy, clean directly. When
// FENCE_PG_BIN (and FENCE_PG_USER) are set, the server is a private one
// started for the run, and restarting it is one of the run's disruptions;
// otherwise it is the server of FENCE_POSTGRES_URL and a disruption cuts
// every proxied connection instead.
func (s *Stage) Postgres(ctx context.Context) (faulty, clean string, err error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if pg := s.pg; pg != nil {
		return pg.faultURL, pg.cleanURL, nil
	}
	pg := &pgPath{}
	var restart func(context.Context) error
	if bin := os.Getenv(EnvPgBin); bin != "" {
		srv, err := startPostgres(ctx, bin, os.Getenv(EnvPgUser), s.Dir)
		if err != nil {
			return "", "", err
		}
		s.Defer(srv.stop)
		pg.cleanURL = srv.url()
		restart = srv.restart
	} else if u := os.Getenv(EnvPostgresURL); u != "" {
		pg.cleanURL = u
	} else {
		return "", "", unavailable(EnvPostgresURL)
	}
	cu, err := url.Parse(pg.cleanURL)
	if err != nil {
		return "", "", fmt.Errorf("torture: PostgreSQL URL: %w", err)
	}
	if pg.proxy, err = NewProxy(cu.Host, s.net, s.Counts); err != nil {
		return "", "", err
	}
	s.Defer(func() { _ = pg.proxy.Close() })
	fu := *cu
	fu.Host = pg.proxy.Addr()
	pg.faultURL = fu.String()
	if restart != nil {
		s.addDisruptor("postgres-restart", func(ctx context.Context) error {
			s.Counts.Add(FaultRestart)
			return restart(ctx)
		})
	} else {
		s.addDisruptor("postgres-cut-all", func(context.Context) error {
			s.Counts.Add(FaultOutage)
			pg.proxy.CutAll()
			return nil
		})
	}
	s.pg = pg
	return pg.faultURL, pg.cleanURL, nil
}

// pgServer is a private PostgreSQL server in a directory of the run.
type pgServer struct {
	bin, user, data, sock string
	port                  int
}

func (p *pgServer) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// command runs a PostgreSQL program as p.user (through runuser when this
// process is root, as PostgreSQL refuses to run as root).
func (p *pgServer) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, prog)
	if os.Geteuid() == 0 {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", p.user, "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

func (p *pgServer) run(ctx context.Context, prog string, args ...string) error {
	out, err := p.command(ctx, prog, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("torture: %s %v: %w: %s", prog, args, err, out)
	}
	return nil
}

// startPostgres creates and starts a server under dir, as user.
func startPostgres(ctx context.Context, bin, userName, dir string) (*pgServer, error) {
	if os.Geteuid() == 0 && userName == "" {
		userName = "postgres"
	}
	p := &pgServer{bin: bin, user: userName, data: filepath.Join(dir, "pg", "data"), sock: filepath.Join(dir, "pg")}
	if err := os.MkdirAll(p.sock, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(userName)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(p.sock, uid, gid); err != nil {
			return nil, err
		}
	}
	if err := p.run(ctx, "initdb", "-D", p.data, "-U", "postgres", "-A", "trust", "--no-sync"); err != nil {
		return nil, err
	}
	// A port found free can be taken by another server before this one
	// binds it (a clean-clone CI's short run failed to set up with
	// "pg_ctl: could not start server"): start again on another port, a
	// few times.
	var errs []error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p.port = port
		err = p.pgctl(ctx, "start")
		if err == nil {
			return p, nil
		}
		log, _ := os.ReadFile(filepath.Join(p.sock, "server.log"))
		errs = append(errs, fmt.Errorf("%w (server log: %s)", err, lastLines(string(log), 3)))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

func (p *pgServer) pgctl(ctx context.Context, action string, extra ...string) error {
	args := append([]string{"-D", p.data, "-l", filepath.Join(p.sock, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off", p.port, p.sock)}, extra...)
	return p.run(ctx, "pg_ctl", append(args, action)...)
}

// restart stops the server abruptly (as a crash would: committed
// transactions are recovered from the log) and starts it again.
func (p *pgServer) restart(ctx context.Context) error {
	return p.pgctl(ctx, "restart", "-m", "immediate")
}

func (p *pgServer) stop() {
	ctx, cancel := cleanupContext()
	defer cancel()
	_ = p.pgctl(ctx, "stop", "-m", "immediate")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
