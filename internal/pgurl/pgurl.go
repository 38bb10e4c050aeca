// Package pgurl reads the parameters of postgres:// and postgresql://
// URLs for the PostgreSQL openers (lockers/postgres and resources/sql):
// which parameters are connection parameters of libpq or pgx, and the
// connection string pgx gets, without fence's own.
//
// pgx passes a parameter it does not know to the server as a setting, so
// a misspelt one (tabel=x) would reach the server and fail there as a
// store error ("unrecognized configuration parameter"). The openers
// refuse it at open instead, with fence.ErrInvalid; a server setting goes
// in libpq's options parameter, options=-c NAME=VALUE (escaped in a URL:
// options=-c%20search_path%3Dapp).
package pgurl

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/fencekit/fence/internal/urlparam"
)

// connParams are the connection parameters accepted in a URL: those of
// libpq that pgx reads itself (pgconn's ParseConfig, pgx v5.12) or that
// the server takes at start-up (application_name, client_encoding,
// options), pgx's own (statement_cache_capacity, ...) and pgxpool's
// (pool_*). libpq parameters pgx does not read (gssencmode, keepalives,
// hostaddr, ...) are left out: pgx would send them to the server, which
// refuses them.
var connParams = map[string]bool{
	// libpq's, read by pgconn.
	"host": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "connect_timeout": true, "service": true, "servicefile": true,
	"sslmode": true, "ssl": true, "sslcert": true, "sslkey": true, "sslcertmode": true,
	"sslrootcert": true, "sslpassword": true, "sslsni": true, "sslnegotiation": true,
	"krbsrvname": true, "krbspn": true, "target_session_attrs": true,
	"min_protocol_version": true, "max_protocol_version": true,
	"channel_binding": true, "require_auth": true,
	// libpq's, sent to the server at start-up.
	"application_name": true, "client_encoding": true, "options": true,
	// pgx's.
	"statement_cache_capacity": true, "description_cache_capacity": true,
	"default_query_exec_mode": true,
	// pgxpool's.
	"pool_max_conns": true, "pool_min_conns": true, "pool_min_idle_conns": true,
	"pool_max_conn_lifetime": true, "pool_max_conn_lifetime_jitter": true,
	"pool_max_conn_idle_time": true, "pool_health_check_period": true,
	"pool_ping_timeout": true,
}

// IsConnParam reports whether name is a connection parameter of libpq,
// pgx or pgxpool that a URL may carry.
func IsConnParam(name string) bool { return connParams[name] }

// ReadConnParams reads, through p, every parameter of u except fence's
// own (own, which the opener reads itself): a connection parameter is
// read as given once (pgx checks its value), and any other is a problem
// naming it, so that a misspelt parameter fails at open rather than at
// the server.
func ReadConnParams(p *urlparam.Params, u *url.URL, own ...string) {
	for _, k := range slices.Sorted(maps.Keys(u.Query())) {
		switch {
		case slices.Contains(own, k):
		case IsConnParam(k):
			p.Optional(k)
		default:
			p.Fail("unknown parameter %q: neither fence's (%s) nor a connection parameter of libpq or pgx; "+
				"a server setting goes in options=-c NAME=VALUE (options=-c%%20search_path%%3Dapp)", k, strings.Join(own, ", "))
		}
	}
}

// ConnString returns u as a connection string for pgx, without the query
// parameters own, the others as written. It keeps "scheme://", which
// net/url shortens to "scheme:" when no host follows and pgx needs to
// tell a URL from a keyword/value string.
func ConnString(u *url.URL, own ...string) string {
	v := *u
	var kept []string
	if v.RawQuery != "" {
		for part := range strings.SplitSeq(v.RawQuery, "&") {
			k, _, _ := strings.Cut(part, "=")
			if key, err := url.QueryUnescape(k); err != nil || !slices.Contains(own, key) {
				kept = append(kept, part)
			}
		}
	}
	v.RawQuery, v.ForceQuery = strings.Join(kept, "&"), false
	s := v.String()
	if rest, ok := strings.CutPrefix(s, v.Scheme+":"); ok && !strings.HasPrefix(rest, "//") {
		s = v.Scheme + "://" + rest
	}
	return s
}
