package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence/cmd/fence/internal/storeurl"
	"github.com/fencekit/fence/guard"
)

// EnvStore is the environment variable holding the default store URL, a
// way to keep a URL with a password off the command line.
const EnvStore = "FENCE_STORE"

// command is the flag set of a subcommand and its --store flag.
type command struct {
	name  string
	fs    *flag.FlagSet
	store *string
}

func newCommand(name string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by fence, help by subHelp
	c := &command{name: name, fs: fs}
	c.store = fs.String("store", os.Getenv(EnvStore), "store URL (default $"+EnvStore+")")
	return c
}

// parse parses args and returns the positional arguments. --help prints
// the subcommand's help and returns errHelp.
func (cmd *command) parse(c *cli, args []string) ([]string, error) {
	err := cmd.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.stdout, subHelp[cmd.name])
		return nil, errHelp
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cmd.fs.Args(), nil
}

var errHelp = errors.New("help shown")

// The flag sets of the subcommands, each built by one function that both
// the subcommand and the test of the documentation (doc_test.go) use.

// runCommand is the flag set of fence run, filling f.
func runCommand(f *runFlags) *command {
	cmd := newCommand("run")
	cmd.fs.DurationVar(&f.ttl, "ttl", guard.DefaultTTL, "lease duration")
	cmd.fs.DurationVar(&f.wait, "wait", 0, "wait up to this long for the lock")
	cmd.fs.BoolVar(&f.noWait, "no-wait", false, "fail at once when the lock is held (the default)")
	cmd.fs.DurationVar(&f.grace, "grace", DefaultGrace, "time between SIGTERM and SIGKILL after a lost lease")
	cmd.fs.BoolVar(&f.verbose, "v", false, "report acquisition, renewals and release on stderr")
	cmd.fs.BoolVar(&f.verbose, "verbose", false, "same as -v")
	return cmd
}

// keyCommand is the flag set of fence inspect or fence break (name), with
// its --json flag.
func keyCommand(name string) (*command, *bool) {
	cmd := newCommand(name)
	return cmd, cmd.fs.Bool("json", false, "print JSON")
}

// initCommand is the flag set of fence init.
func initCommand() *command { return newCommand("init") }

// open parses the store URL and opens its locker. It warns when the URL
// carries a password and remembers the password so that nothing printed
// afterwards contains it.
func (cmd *command) open(ctx context.Context, c *cli) (*storeurl.Store, *storeurl.Spec, error) {
	if *cmd.store == "" {
		return nil, nil, usagef("no store: give --store URL or set %s (forms: %s)", EnvStore, storeurl.Forms)
	}
	spec, err := storeurl.Parse(*cmd.store)
	if err != nil {
		return nil, nil, err
	}
	c.secrets = append(c.secrets, spec.Password)
	if spec.HasPassword() && storeFromFlag(cmd.fs) {
		c.errorf("warning: the store URL on the command line carries a password, which other users can read in ps; set PGPASSWORD, use ~/.pgpass, or put the URL in $%s", EnvStore)
	}
	st, err := storeurl.Open(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	return st, spec, nil
}

// storeFromFlag reports whether --store was given on the command line.
func storeFromFlag(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "store" {
			set = true
		}
	})
	return set
}

// fail reports err and returns its exit status, adding a hint when the
// store, or the schema of its table, does not exist.
func (c *cli) fail(err error, spec *storeurl.Spec) int {
	if errors.Is(err, errHelp) {
		return 0
	}
	c.errorf("%v", err)
	if h := c.hint(err, spec); h != "" {
		c.errorf("hint: %s", h)
	}
	code := statusOf(err)
	if code == exitUsage {
		c.errorf("run `fence help` for usage")
	}
	return code
}

// hint says how to create what err found missing, or returns "". It never
// sends the user to the subcommand that just failed: fence init creates a
// table, container or bucket, but not a PostgreSQL schema.
func (c *cli) hint(err error, spec *storeurl.Spec) string {
	if spec == nil {
		return ""
	}
	initCmd := fmt.Sprintf("fence init --store '%s'", spec.Redacted)
	if storeurl.MissingSchema(err) {
		schema := spec.Schema()
		if schema == "" {
			return "no schema on the connection's search_path exists to hold the lease table: give table=SCHEMA.TABLE in the store URL, or fix search_path"
		}
		create := "CREATE SCHEMA " + pgx.Identifier{schema}.Sanitize()
		if c.sub == "init" {
			return fmt.Sprintf("fence init creates the lease table but not its schema: run %s first (as a role allowed to), then init again", create)
		}
		return fmt.Sprintf("run %s, then %s", create, initCmd)
	}
	if storeurl.Missing(err) && c.sub != "init" {
		return "create the store's table, container or bucket with: " + initCmd
	}
	return ""
}
