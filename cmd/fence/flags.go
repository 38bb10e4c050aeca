package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// EnvStore is the environment variable holding the default store URL, a
// way to keep a URL with a password off the command line.
const EnvStore = "FENCE_STORE"

// command is the flag set of a subcommand and its --store flag.
type command struct {
	name    string
	fs      *flag.FlagSet
	store   *string
	timeout time.Duration
	// badValue is the first flag value that did not parse, for parse to
	// report in the user's own spelling.
	badValue *flagValueError
}

func newCommand(name string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by fence, help by subHelp
	c := &command{name: name, fs: fs}
	c.store = fs.String("store", os.Getenv(EnvStore), "store URL (default $"+EnvStore+", else the SQLite file "+defaultStoreHelp+")")
	c.duration(&c.timeout, "timeout", DefaultTimeout, "bound on each store call")
	return c
}

// parse parses args and returns the positional arguments. --help prints
// the subcommand's help and returns errHelp. A bad flag is reported with
// the flag spelt as the user typed it (-ttl or --ttl).
func (cmd *command) parse(c *cli, args []string) ([]string, error) {
	err := cmd.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.stdout, subHelp[cmd.name])
		return nil, errHelp
	}
	if bad := cmd.badValue; bad != nil {
		return nil, usagef("%s %s", spelling(args, bad.name), bad.msg)
	}
	if err == nil && cmd.timeout <= 0 {
		err = usagef("%s %v is not positive", spelling(args, "timeout"), cmd.timeout)
	}
	if _, ok := err.(*usageError); ok {
		return nil, err
	}
	if err != nil {
		msg := err.Error()
		if m := needsValue.FindStringSubmatch(msg); m != nil {
			msg = spelling(args, m[1]) + " needs a value"
		} else if m := undefined.FindStringSubmatch(msg); m != nil {
			msg = "unknown option " + spelling(args, m[1])
		}
		return nil, usagef("%s", msg)
	}
	return cmd.fs.Args(), nil
}

// The flag package's errors that name a flag, as "-name".
var (
	needsValue = regexp.MustCompile(`^flag needs an argument: -(.*)$`)
	undefined  = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
)

// spelling returns flag name as args spell it, with one dash or two
// ("--" when args do not have it).
func spelling(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-"+name || strings.HasPrefix(a, "-"+name+"=") {
			return "-" + name
		}
	}
	return "--" + name
}

// flagValueError is a flag value that does not parse: msg says why.
type flagValueError struct{ name, msg string }

// durationFlag is a flag holding a Go duration. Its errors say that a
// number needs a unit, and that a value looking like the next flag means
// the flag's own value is missing.
type durationFlag struct {
	cmd  *command
	name string
	d    *time.Duration
}

func (cmd *command) duration(p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	cmd.fs.Var(&durationFlag{cmd: cmd, name: name, d: p}, name, usage)
}

func (f *durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err == nil {
		*f.d = d
		return nil
	}
	var msg string
	switch {
	case len(s) > 1 && s[0] == '-' && (s[1] == '-' || unicode.IsLetter(rune(s[1]))):
		msg = fmt.Sprintf("needs a value (a duration such as 30s), but the next argument is the option %q", s)
	case isNumber(s):
		msg = fmt.Sprintf("%q needs a unit: %ss, %sms or %sm, say", s, s, s, s)
	default:
		msg = fmt.Sprintf("%q is not a duration (such as 500ms, 30s, 5m or 1h30m)", s)
	}
	if f.cmd.badValue == nil {
		f.cmd.badValue = &flagValueError{name: f.name, msg: msg}
	}
	return errors.New(msg)
}

// isNumber reports whether s is a number without a unit.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

var errHelp = errors.New("help shown")

// The flag sets of the subcommands, each built by one function that both
// the subcommand and the test of the documentation (doc_test.go) use.

// runCommand is the flag set of fence run, filling f.
func runCommand(f *runFlags) *command {
	cmd := newCommand("run")
	cmd.duration(&f.ttl, "ttl", fence.DefaultTTL, "lease duration")
	cmd.duration(&f.wait, "wait", 0, "wait up to this long for the lock")
	cmd.fs.BoolVar(&f.noWait, "no-wait", false, "fail at once when the lock is held (the default)")
	cmd.duration(&f.grace, "grace", DefaultGrace, "time between SIGTERM and SIGKILL after a lost lease")
	cmd.fs.BoolVar(&f.verbose, "v", false, "report acquisition, renewals and release on stderr")
	cmd.fs.BoolVar(&f.verbose, "verbose", false, "same as -v")
	return cmd
}

// keyFlags are the flags of fence inspect and fence break besides --store.
type keyFlags struct {
	json bool
	// showOwner prints the raw owner id besides its fingerprint.
	showOwner bool
}

// keyCommand is the flag set of fence inspect or fence break (name), with
// its --json and --show-owner flags.
func keyCommand(name string) (*command, *keyFlags) {
	cmd := newCommand(name)
	f := new(keyFlags)
	cmd.fs.BoolVar(&f.json, "json", false, "print JSON")
	cmd.fs.BoolVar(&f.showOwner, "show-owner", false, "also print the raw owner id, which lets its reader release or renew the lease")
	return cmd, f
}

// initCommand is the flag set of fence init.
func initCommand() *command { return newCommand("init") }

// open opens the locker of the store URL, whichever registered backend
// its scheme names. It remembers the URL's passwords so that nothing
// printed afterwards contains them, and warns when one was given on the
// command line.
func (cmd *command) open(ctx context.Context, c *cli) (*fence.Locker, error) {
	raw := *cmd.store
	if raw == "" {
		var err error
		if raw, err = defaultStore(); err != nil {
			return nil, err
		}
	}
	pws, err := passwords(raw)
	if err != nil {
		return nil, err
	}
	c.secrets = append(c.secrets, pws...)
	if len(pws) > 0 && storeFromFlag(cmd.fs) {
		c.errorf("warning: the store URL on the command line carries a password, which other users can read in ps; put the URL in $%s, or the password where the store's SDK reads it from the environment", EnvStore)
	}
	c.store, c.timeout = c.scrub(raw), cmd.timeout
	var l *fence.Locker
	err = c.call(ctx, func(ctx context.Context) error {
		var err error
		l, err = fence.OpenLocker(ctx, raw, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	if driver.InfoOf(l).InProcess {
		_ = l.Close()
		return nil, usagef("the store %s lives inside one process: another fence command could not see its leases; for a store on this host use a file, %s:///PATH (the default without --store), or a shared store", c.store, defaultScheme)
	}
	return l, nil
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
// store does not exist.
func (c *cli) fail(err error) int {
	if errors.Is(err, errHelp) {
		return 0
	}
	c.errorf("%v", err)
	if ue, ok := errors.AsType[*usageError](err); ok && ue.forms != "" {
		fmt.Fprintln(c.stderr, "fence: store URL forms: "+ue.forms)
	}
	if h := c.hint(err); h != "" {
		c.errorf("hint: %s", h)
	}
	code := statusOf(err)
	if code == exitUsage {
		c.errorf("run `fence help` for usage")
	}
	return code
}

// hint says how to create the store that err found missing, or returns
// "". It never sends the user to the subcommand that just failed: a
// store's Create that finds something missing (a PostgreSQL schema, say)
// says in its error what to create first.
func (c *cli) hint(err error) string {
	if c.store == "" || !errors.Is(err, fence.ErrStoreMissing) {
		return ""
	}
	if c.sub == "init" {
		return "fence init creates the store's table, container or bucket, not what that lives in: create what the error names, then run fence init again"
	}
	return fmt.Sprintf("create the store's table, container or bucket with: fence init --store '%s'", c.store)
}
