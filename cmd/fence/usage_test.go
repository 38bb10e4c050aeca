package main

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// TestUsage: bad usage exits 64 with a message saying what is wrong,
// before any store is contacted (the store URLs point nowhere).
func TestUsage(t *testing.T) {
	t.Parallel()
	const pg = "postgres://nobody@127.0.0.1:1/none"
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no subcommand", nil, "no subcommand"},
		{"unknown subcommand", []string{"lock"}, `unknown subcommand "lock"`},
		{"unknown flag", []string{"run", "--frobnicate", "--store", pg, "k", "--", "true"}, "frobnicate"},
		{"unparsable", []string{"inspect", "--store", "postgres://nobody@127.0.0.1:port/none", "k"}, "cannot be parsed"},
		{"in-process store", []string{"inspect", "--store", "mem://x", "k"}, "lives inside one process"},
		{"in-process store names the file store", []string{"run", "--store", "mem://", "k", "--", "true"}, "sqlite:///PATH"},
		{"no key", []string{"inspect", "--store", pg}, "needs a KEY"},
		{"two keys", []string{"break", "--store", pg, "a", "b"}, "one KEY"},
		{"init with a key", []string{"init", "--store", pg, "k"}, "no arguments"},
		{"run without key", []string{"run", "--store", pg}, "needs a KEY and a COMMAND"},
		{"run without command", []string{"run", "--store", pg, "k"}, "needs a COMMAND"},
		{"run with only dashes", []string{"run", "--store", pg, "k", "--"}, "needs a COMMAND"},
		{"option after key", []string{"run", "--store", pg, "k", "--ttl", "5s", "--", "true"}, "options go before KEY"},
		{"wait and no-wait", []string{"run", "--wait", "5s", "--no-wait", "--store", pg, "k", "--", "true"}, "exclude each other"},
		{"negative wait", []string{"run", "--wait", "-1s", "--store", pg, "k", "--", "true"}, "negative"},
		{"zero ttl", []string{"run", "--ttl", "0s", "--store", pg, "k", "--", "true"}, "not positive"},
		{"zero timeout", []string{"inspect", "--timeout", "0s", "--store", pg, "k"}, "--timeout 0s is not positive"},
		{"negative grace", []string{"run", "--grace", "-1s", "--store", pg, "k", "--", "true"}, "negative"},
		{"bad duration", []string{"run", "--ttl", "soon", "--store", pg, "k", "--", "true"}, "soon"},
		{"duration without unit", []string{"run", "--ttl", "5", "--store", pg, "k", "--", "true"}, `fence: --ttl "5" needs a unit: 5s`},
		{"flag spelt with one dash", []string{"run", "-ttl", "5", "--store", pg, "k", "--", "true"}, `fence: -ttl "5" needs a unit`},
		{"flag spelt with one dash and =", []string{"run", "-grace=soon", "--store", pg, "k", "--", "true"}, `fence: -grace "soon" is not a duration`},
		{"wait without a value", []string{"run", "--wait", "--ttl", "5s", "k", "--", "true"}, `fence: --wait needs a value`},
		{"wait without a value before -v", []string{"run", "--wait", "-v", "--store", pg, "k", "--", "true"}, `fence: --wait needs a value`},
		{"wait last", []string{"run", "--store", pg, "--wait"}, "fence: --wait needs a value"},
		{"unknown flag as typed", []string{"inspect", "--frobnicate", "k"}, "unknown option --frobnicate"},
		{"no scheme", []string{"inspect", "--store", "localhost:5432", "k"}, "no scheme"},
		{"unknown scheme", []string{"inspect", "--store", "consul://localhost/0", "k"}, `unknown scheme "consul"`},
		{"dynamodb without table", []string{"inspect", "--store", "dynamodb://", "k"}, "no table name"},
		{"dynamodb bad parameter", []string{"inspect", "--store", "dynamodb://locks?regoin=x", "k"}, `unknown parameter "regoin"`},
		{"dynamodb bad table", []string{"inspect", "--store", "dynamodb://a?endpoint=http://127.0.0.1:1", "k"}, "not a DynamoDB table name"},
		{"skew without trusted clock", []string{"inspect", "--store", "gs://ops-locks?max-clock-skew=1s", "k"}, "trusted-clock"},
		{"bad endpoint", []string{"inspect", "--store", "gs://ops-locks?endpoint=localhost", "k"}, "endpoint"},
		{"bad table name", []string{"inspect", "--store", pg + "?table=a.b.c", "k"}, "table"},
		{"help on nothing", []string{"help", "lock"}, "no help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := fenceRun(t, nil, tt.args...)
			wantCode(t, r, exitUsage)
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr lacks %q: %v", tt.want, r)
			}
			if !strings.HasPrefix(r.stderr, "fence: ") && !strings.HasPrefix(r.stderr, "usage: ") {
				t.Errorf("stderr does not start with fence: or usage: %v", r)
			}
		})
	}
}

// TestUsageFromStore: input only the store can judge (a TTL out of its
// range, an empty key) is bad usage too.
func TestUsageFromStore(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		tests := []struct {
			name string
			args []string
		}{
			{"ttl too long", []string{"run", "--ttl", "100h", "--store", store, "k", "--", "true"}},
			{"empty key", []string{"run", "--ttl", b.ttl, "--store", store, "", "--", "true"}},
			{"empty key inspect", []string{"inspect", "--store", store, ""}},
		}
		for _, tt := range tests {
			r := fenceRun(t, nil, tt.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "invalid") {
				t.Errorf("%s: want exit %d saying invalid, got %v", tt.name, exitUsage, r)
			}
		}
	})
}

// TestHelp: the manual teaches the URL form of every registered backend,
// the exit codes and the fencing caveat; each subcommand has help; none of it is an error.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := fenceRun(t, nil, "help")
	wantCode(t, r, 0)
	forms := lockerForms()
	if len(forms) < 2 {
		t.Fatalf("the locker URL forms = %q; the backends import registers more", forms)
	}
	for _, want := range append([]string{
		"FENCE_TOKEN", "FENCE_KEY", "FENCE_OWNER", "FENCE_STORE", "in ps",
		"$XDG_STATE_HOME/fence/locks.db", "$HOME/.local/state/fence/locks.db", "this host only", "NFS",
		"64 ", "69 ", "75 ", "79 ", "126 ", "127 ", "128+N",
		"NOT a safety guarantee", "$FENCE_TOKEN",
	}, forms...) {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fence help lacks %q", want)
		}
	}
	for _, s := range inProcessSchemes {
		if strings.Contains(r.stdout, s+"://") {
			t.Errorf("fence help offers %s://, a store inside one process", s)
		}
	}
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"inspect", "-h"}, {"help", "break"}, {"init", "--help"}} {
		r := fenceRun(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: fence") {
			t.Errorf("fence %q: %v", args, r)
		}
		if !strings.Contains(r.stdout, "$HOME/.local/state/fence") {
			t.Errorf("fence %q does not say where the default store is: %v", args, r)
		}
	}
}

// TestStoreMissing: a store never initialised is a store error (69) with a
// hint naming fence init, for inspect, break and run alike (a key in a
// missing Cloud Storage bucket is not reported free). A key space (etcd,
// Redis) is never missing: fence init says there is nothing to create,
// and a key of a fresh prefix is free. Nor is an SQLite file, which
// opening makes.
func TestStoreMissing(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			store := b.missingStore(t)
			if b.file {
				// Opening the store makes it: a key of a fresh one is
				// free, and fence init finds it ready.
				if s := inspectJSON(t, store, "k"); s.Held || s.Token != 0 {
					t.Errorf("a key of a fresh store is %+v, want free and never acquired", s)
				}
				r := fenceRun(t, nil, "init", "--store", store)
				wantCode(t, r, 0)
				return
			}
			if b.keyspace {
				if s := inspectJSON(t, store, "k"); s.Held || s.Token != 0 {
					t.Errorf("a key of a fresh prefix is %+v, want free and never acquired", s)
				}
				r := fenceRun(t, nil, "init", "--store", store)
				wantCode(t, r, 0)
				if !strings.Contains(r.stdout, "nothing to create") {
					t.Errorf("fence init on a key space does not say there is nothing to create: %v", r)
				}
				return
			}
			for _, args := range [][]string{{"inspect", "--store", store, "k"}, {"break", "--store", store, "k"}, {"run", "--ttl", b.ttl, "--store", store, "k", "--", "true"}} {
				r := fenceRun(t, nil, args...)
				wantCode(t, r, exitStore)
				if !strings.Contains(r.stderr, "fence init --store") {
					t.Errorf("fence %s: no hint to run fence init: %v", args[0], r)
				}
			}
		})
	}
}

// TestInitMissingSchema: fence init on table=schema.table whose schema
// does not exist says to create the schema, not to run fence init; once
// the schema exists, init and the other subcommands work.
func TestInitMissingSchema(t *testing.T) {
	t.Parallel()
	base := testenv.PostgresURL(t)
	schema := uniqueName("fence_cli_schema_")
	store := testlockers.WithQuery(base, "table="+schema+".locks")
	r := fenceRun(t, nil, "init", "--store", store)
	wantCode(t, r, exitStore)
	// The schema's hint comes from the locker's Create, the command's hint
	// from the error matching fence.ErrStoreMissing.
	for _, want := range []string{`schema "` + schema + `" does not exist`, `CREATE SCHEMA "` + schema + `"`, "hint: fence init creates the store's table, container or bucket, not what that lives in"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %v", want, r)
		}
	}
	if strings.Contains(r.stderr, "fence init --store") {
		t.Errorf("the hint sends the user back to the init that failed: %v", r)
	}

	ctx := t.Context()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	testlockers.ExecOnCleanup(t, base, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	wantCode(t, fenceRun(t, nil, "init", "--store", store), 0)
	wantCode(t, fenceRun(t, nil, "run", "--ttl", "1s", "--store", store, "k", "--", "true"), 0)
	if s := inspectJSON(t, store, "k"); s.Held || !s.Token.Valid() {
		t.Errorf("after a run in the new schema inspect shows %+v; want a released lease", s)
	}
}

// TestStoreDownSaysItOnce: a store that refuses connections is a store
// error (69), reported by fence alone: no client library's own log lines
// (go-redis logs its dial failures unless told not to).
func TestStoreDownSaysItOnce(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"redis://127.0.0.1:1/0", "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/"} {
		r := fenceRun(t, nil, "inspect", "--store", store, "k")
		wantCode(t, r, exitStore)
		if !strings.HasPrefix(r.stderr, "fence: ") {
			t.Errorf("%s: stderr does not start with fence's error: %v", store, r)
		}
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(line, "redis: ") {
				t.Errorf("%s: go-redis's own log line: %q", store, line)
			}
		}
	}
}
