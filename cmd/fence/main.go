// Command fence runs commands under distributed leases with fencing
// tokens, and inspects and breaks those leases: flock(1) across machines.
//
//	fence init    [--timeout D] [--store URL]
//	fence run     [--wait D | --no-wait] [--ttl D] [--grace D] [-v | --verbose] [--timeout D] [--store URL] KEY [--] COMMAND [ARGS...]
//	fence inspect [--json] [--show-owner] [--timeout D] [--store URL] KEY
//	fence break   [--json] [--show-owner] [--timeout D] [--store URL] KEY
//	fence help    [SUBCOMMAND]
//
// Flags go before KEY, with one dash or two:
//
//	--store URL    init, run, inspect, break: the store (default $FENCE_STORE, else the default store)
//	--timeout D    init, run, inspect, break: the bound on each store call (default 10s); exit 69 naming the store when it passes
//	--ttl D        run: the lease duration (default 30s), renewed every D/3
//	--no-wait      run: exit 75 at once when KEY is held (the default)
//	--wait D       run: when KEY is held, wait up to D for its release
//	--grace D      run: the delay from SIGTERM to SIGKILL after a lost lease (default 10s)
//	-v, --verbose  run: report acquisition, busy attempts, renewal failures and the release on stderr
//	--json         inspect, break: print the state as one JSON object
//	--show-owner   inspect, break: also print the raw owner id, which lets its reader release or renew the lease
//
// The holder is printed as a fingerprint of its owner id
// (fence.OwnerFingerprint: "owner:" and 12 hex digits), never the id
// itself: on most stores the owner id with the token is what a release or
// renewal checks, and on Azure it gives the lease id.
//
// Without --store or $FENCE_STORE, the store is the SQLite file
// $XDG_STATE_HOME/fence/locks.db, else $HOME/.local/state/fence/locks.db
// (lockers/sqlite; the directory is made with mode 0700): it needs no
// server and no fence init, and holds between the processes of this host,
// as flock(1) does. `fence run nightly -- ./job.sh` works on a fresh
// machine, with $FENCE_TOKEN as on every store. Stores that live inside
// one process (the memory locker) are refused: another fence command
// could not see their leases.
//
// The store URL's scheme picks the backend: every backend that package
// github.com/fencekit/fence/backends registers is built in, and the
// command opens it with fence.OpenLocker, knowing no backend itself.
// Credentials come from each SDK's standard environment. Run `fence help`
// for the store URL forms, the exit codes and the fencing caveat: holding
// the lock is not a safety guarantee, only the token passed to the
// protected resource is.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	_ "github.com/fencekit/fence/backends" // registers every backend's URL schemes
)

func main() {
	c := &cli{stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(c.main(context.Background(), os.Args[1:]))
}

// cli is one invocation of the command: where it writes, the subcommand,
// the secrets it must never print and the store URL as it prints it.
type cli struct {
	stdout, stderr io.Writer
	sub            string
	secrets        []string
	// store is the store URL with its passwords masked, once parsed.
	store string
	// timeout bounds each store call (--timeout).
	timeout time.Duration
}

// main dispatches to a subcommand and returns the exit status.
func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usageLine)
		c.errorf("no subcommand given; try `fence help`")
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	c.sub = sub
	switch sub {
	case "help", "-h", "-help", "--help":
		return c.help(rest)
	case "run":
		return c.run(ctx, rest)
	case "inspect":
		return c.inspect(ctx, rest)
	case "break":
		return c.breakKey(ctx, rest)
	case "init":
		return c.initStore(ctx, rest)
	}
	fmt.Fprint(c.stderr, usageLine)
	c.errorf("unknown subcommand %q; try `fence help`", sub)
	return exitUsage
}

// help prints the manual, or a subcommand's help.
func (c *cli) help(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stdout, manual)
		return 0
	}
	if text, ok := subHelp[args[0]]; ok {
		fmt.Fprint(c.stdout, text)
		return 0
	}
	c.errorf("no help on %q; subcommands: run, inspect, break, init", args[0])
	return exitUsage
}

// errorf prints a message from fence itself on stderr, with every known
// secret and anything shaped like a URL password removed.
func (c *cli) errorf(format string, args ...any) {
	msg := c.scrub(fmt.Sprintf(format, args...))
	msg = strings.TrimPrefix(strings.TrimRight(msg, "\n"), "fence: ")
	fmt.Fprintln(c.stderr, "fence: "+msg)
}
