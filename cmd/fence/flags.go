package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fencekit/fence/cmd/fence/internal/storeurl"
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
// store was never initialised.
func (c *cli) fail(err error, spec *storeurl.Spec) int {
	if errors.Is(err, errHelp) {
		return 0
	}
	c.errorf("%v", err)
	if storeurl.Missing(err) && spec != nil {
		c.errorf("hint: create the store's table, container or bucket with: fence init --store '%s'", spec.Redacted)
	}
	code := statusOf(err)
	if code == exitUsage {
		c.errorf("run `fence help` for usage")
	}
	return code
}
