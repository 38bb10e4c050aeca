package pgurl

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

// startup are the connection parameters that pgx sends to the server at
// start-up, as libpq does; pgx reads every other one itself.
var startup = []string{"application_name", "client_encoding", "options"}

// TestConnParamsArePgx's: each parameter of the list is one pgxpool reads
// itself (it does not reach the server as a setting), or one of libpq's
// start-up parameters; and libpq parameters that pgx does not read, left
// out, would reach the server as settings. When a pgx upgrade reads more,
// this test says which to add.
func TestConnParamsArePgx(t *testing.T) {
	t.Parallel()
	// Values pgx accepts, for the parameters whose empty value it does
	// not; a missing passfile is not an error.
	values := map[string]string{
		"port": "5432", "connect_timeout": "5", "sslmode": "disable", "ssl": "true", "sslsni": "0",
		"sslnegotiation": "postgres", "sslcertmode": "disable", "target_session_attrs": "any",
		"min_protocol_version": "3.0", "max_protocol_version": "3.0", "channel_binding": "prefer",
		"require_auth": "password", "statement_cache_capacity": "1", "description_cache_capacity": "1",
		"default_query_exec_mode": "exec", "pool_max_conns": "2", "pool_min_conns": "1", "pool_min_idle_conns": "1",
		"pool_max_conn_lifetime": "1h", "pool_max_conn_lifetime_jitter": "1s", "pool_max_conn_idle_time": "1m",
		"pool_health_check_period": "1m", "pool_ping_timeout": "1s", "host": "db", "dbname": "app", "user": "app",
		"password": "pw", "application_name": "a", "client_encoding": "UTF8", "options": "-c search_path=app",
		"passfile": "/nonexistent/pgpass", "krbsrvname": "postgres", "krbspn": "x",
	}
	// Parameters that need files to parse: TLS files, a service file.
	files := []string{"sslcert", "sslkey", "sslrootcert", "sslpassword", "service", "servicefile"}
	for k := range connParams {
		if slices.Contains(files, k) {
			continue
		}
		v, ok := values[k]
		if !ok {
			t.Errorf("no sample value for %q", k)
			continue
		}
		cfg, err := pgxpool.ParseConfig("postgres://db/app?" + url.Values{k: {v}}.Encode())
		if err != nil {
			t.Errorf("%s=%s: pgxpool.ParseConfig: %v", k, v, err)
			continue
		}
		_, sent := cfg.ConnConfig.RuntimeParams[k]
		if want := slices.Contains(startup, k); sent != want {
			t.Errorf("%s: sent to the server as a setting: %v; want %v", k, sent, want)
		}
	}
	for _, k := range []string{"gssencmode", "keepalives", "hostaddr", "tcp_user_timeout", "search_path", "tabel"} {
		if IsConnParam(k) {
			t.Errorf("IsConnParam(%q) = true", k)
		}
		cfg, err := pgxpool.ParseConfig("postgres://db/app?" + k + "=1")
		if err != nil {
			t.Fatal(err)
		}
		if _, sent := cfg.ConnConfig.RuntimeParams[k]; !sent {
			t.Errorf("%s: pgx reads it now; add it to connParams", k)
		}
	}
}

func TestReadConnParams(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"postgres://db/app?table=t&sslmode=disable&options=-c%20search_path%3Dx&pool_max_conns=2": "",
		"postgres://db/app?tabel=x":                       `unknown parameter "tabel"`,
		"postgres://db/app?search_path=x":                 "options=-c NAME=VALUE",
		"postgres://db/app?sslmode=disable&sslmode=allow": "more than once",
		"postgres://db/app?sslmode=%zz":                   "cannot be parsed",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p := urlparam.New(u)
		p.String("table")
		ReadConnParams(p, u, "table")
		err = p.Done()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (!errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v; want ErrInvalid saying %q", raw, err, want)
		}
	}
}

func TestConnString(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"postgres://app@db/app?table=t&sslmode=disable": "postgres://app@db/app?sslmode=disable",
		"postgres://db/app?%74able=t&a=1":               "postgres://db/app?a=1",
		"postgres://?table=t":                           "postgres://",
		"postgresql:///app?table=t":                     "postgresql:///app",
		"postgres://u:p%40ss@db/app?password=x&table=t": "postgres://u:p%40ss@db/app?password=x",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ConnString(u, "table"); got != want {
			t.Errorf("ConnString(%q) = %q; want %q", raw, got, want)
		}
	}
}
