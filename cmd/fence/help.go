package main

import (
	"slices"
	"strings"

	"github.com/fencekit/fence/driver"
)

const usageLine = `usage: fence run [--wait D | --no-wait] [--ttl D] [--grace D] [-v | --verbose] [--timeout D] [--store URL] KEY -- COMMAND [ARGS...]
       fence inspect [--json] [--show-owner] [--timeout D] [--store URL] KEY
       fence break [--json] [--show-owner] [--timeout D] [--store URL] KEY
       fence init [--timeout D] [--store URL]
       fence help [SUBCOMMAND]
`

// manual is the text of fence help. Its store URL forms are those of the
// registered backends.
var manual = `fence: run a command under a distributed lock with a fencing token.

Like flock(1), but the lock can live in a shared store, so it holds
across machines: a cron job on three hosts runs on one of them at a
time. Without --store or $FENCE_STORE the lock lives in a file on this
host, which needs no server and no fence init, and holds between the
processes of this host.

` + usageLine + `
SUBCOMMANDS

  run      Take the lease on KEY, run COMMAND with it, renew it in the
           background, release it when COMMAND exits. COMMAND gets
             FENCE_TOKEN  the fencing token of this lease (a number)
             FENCE_KEY    the key
             FENCE_OWNER  the owner id of this lease: a secret, since on
                          most stores it lets its reader release or renew
                          the lease; do not print it
           in its environment, and runs in a process group of its own (so
           signals reach the processes it starts; a command that reads the
           terminal is stopped by job control: give it </dev/null or a file).
           SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to fence are passed on to
           that group; fence waits for COMMAND and then releases the lease.
           If the lease is lost while COMMAND runs (a renewal is refused,
           someone ran fence break, the store stayed unreachable until the
           lease ran out), fence sends SIGTERM to the group, then SIGKILL
           to what is left of the group after --grace (processes COMMAND
           started included), and exits with status 79 once the group is
           gone.
  inspect  Describe KEY without taking it: free or held, the holder, the
           last token issued and the expiry where the store reports it.
  break    Free KEY whoever holds it (an operator action). The holder's
           next renewal fails, so a fence run holding it stops its command;
           the next lease gets a higher token.
  init     Create the store's table, container or bucket if missing. Run
           it once before the first use of a store.

OPTIONS OF RUN (before KEY)

  --ttl D      lease duration (default 30s). Renewed every D/3; the lease is
               lost if no renewal succeeds within D minus a margin. Each
               store bounds it; a TTL out of its range is bad usage, and the
               error gives the range.
  --no-wait    when KEY is held, exit at once with status 75 (the default).
  --wait D     when KEY is held, wait up to D for it, then exit 75. fence
               tries again as soon as the key is released, where the store
               announces releases (PostgreSQL; the SQLite file is read
               every 50 ms while fence waits), at the holder's expiry,
               where the store tells it, and at least every second.
  --grace D    time between SIGTERM and SIGKILL after a lost lease
               (default 10s; 0 sends SIGKILL at once).
  -v, --verbose
               report acquisition, busy attempts, renewal failures and the
               release on stderr.
  --store URL  the store (default: $FENCE_STORE, else the SQLite file
               locks.db in $XDG_STATE_HOME/fence or $HOME/.local/state/fence,
               made when missing). Also on inspect, break, init.
  --timeout D  the bound on each store call (default 10s; also on inspect,
               break, init): opening the store, each read, break or
               create, and run's release. run's acquisition attempts and
               renewals are bounded by the shorter of D and TTL/3 (at most
               5s). When a call does not answer in time or the store
               cannot be reached, fence exits 69 naming the store's
               address and the bound.
  --json       (inspect, break) print the state as one JSON object:
               {"key", "held", "owner", "token", "valid_until",
               "remaining_seconds"}; the last two only where known.
  --show-owner (inspect, break) also print the raw owner id ("owner id:",
               JSON "owner_id"). Without it the holder is shown as the
               fingerprint of its owner id ("owner:" and 12 hex digits),
               the same in every output. Warning: on most stores whoever
               reads the owner id can release or renew the lease (on Azure
               it gives the lease id); keep it out of logs and tickets.

DURATIONS are Go durations: 500ms, 30s, 5m, 1h30m.

STORE URLS

  The scheme of the store URL picks the backend. This fence knows:

` + storeForms() + `
  Without --store or $FENCE_STORE, fence uses the SQLite file
  ` + defaultStoreHelp + `
  (its directory is made, mode 0700). It holds between the processes of
  this host only, never across machines, and must not be on a network
  file system (NFS). A lease of a crashed holder runs out one TTL after
  its last renewal, on this host's clock.

  Each backend's Go package documents its URL's parameters, where its
  credentials come from and how it times leases; go doc
  github.com/fencekit/fence/backends names the package of each scheme.
  A parameter the backend does not know is an error, never ignored.

  Stores without a clock of their own to time leases are clock-free by
  default: a lease that was not released is taken over only after a
  contender has watched it unchanged for a full TTL, so after a holder
  crashes a new fence run needs --wait longer than the TTL: with
  --no-wait every later run exits 75, however long after the crash. A
  cron job should therefore run with --wait longer than the TTL (and
  shorter than its period), on every store. Their trusted-clock=true
  takes over at the stored expiry instead, trusting every machine's wall
  clock to within max-clock-skew.

CREDENTIALS come from each backend's SDK and its usual environment
(variables, credential files, instance roles), never from flags. A URL
carrying a password, where its backend accepts one, works but is visible
to other users in ps: fence warns about it; put the URL in $FENCE_STORE.
fence never prints a password: URLs are shown with it masked.

EXIT STATUS

  0       run: the command succeeded; other subcommands: done.
  1-125   run: the command's own exit status.
  64      bad usage: unknown option, missing KEY or COMMAND, bad store URL,
          a TTL or key the store does not accept. Nothing was run.
  69      the store failed, could not be reached or did not answer within
          --timeout, or holds a corrupted record. Nothing was run (or, after the command: see stderr).
  75      run: KEY is held by another owner (with --wait: still held when
          the wait ended). The command did not run. Try again later.
  79      run: the lease was lost while the command ran. fence stopped the
          command (SIGTERM, then SIGKILL after --grace), or the command had
          finished but the release found the lease already gone.
  126     run: the command was found but could not be started.
  127     run: the command was not found.
  128+N   run: the command was killed by signal N (143 for SIGTERM, 130
          for SIGINT); or fence got signal N while waiting for the lock.
When fence itself chooses the status it says why on stderr, in lines
starting with "fence:"; a command's own status passes through silently.

THE FENCING CAVEAT

Holding the lock is NOT a safety guarantee. A command can pause (a GC
pause, a stopped VM, a network partition) after its last check and wake
up after its lease expired and another host took the key; fence stops it
as soon as it notices, but cannot take back a write already on the wire.
Only the token closes that gap: pass $FENCE_TOKEN with every write to the
protected resource, and have the resource refuse tokens lower than the
highest it has seen (for example a "token <= $FENCE_TOKEN" condition on
the row you update; see the fence Go library's resources). A lost lease
then costs a refused write, never corrupted data.

  fence run --store "$STORE" --ttl 30s reports -- \
      sh -c 'psql -c "UPDATE reports SET body = ..., token = $FENCE_TOKEN
                      WHERE id = 1 AND token <= $FENCE_TOKEN"'
`

// subHelp is the help of each subcommand (fence help SUB, fence SUB -h).
var subHelp = map[string]string{
	"run": `usage: fence run [--wait D | --no-wait] [--ttl D] [--grace D] [-v | --verbose] [--timeout D] [--store URL] KEY -- COMMAND [ARGS...]

Runs COMMAND under a lease on KEY with FENCE_TOKEN, FENCE_KEY and
FENCE_OWNER in its environment; renews the lease every TTL/3; on loss sends
SIGTERM to the command's process group, then SIGKILL to what is left of
the group after --grace, and exits 79 once the group is gone. Exits 75 when KEY is busy, 64 on bad usage, 69 on store errors,
otherwise with the command's status.

  --ttl D      lease duration (default 30s)
  --no-wait    exit 75 at once when KEY is held (the default)
  --wait D     wait up to D for KEY when it is held. A cron job should
               give a D longer than the TTL and shorter than its period: on
               a clock-free store a holder that crashed is taken over only
               by a run that waits longer than the TTL
  --grace D    SIGTERM to SIGKILL delay after a lost lease (default 10s)
  -v, --verbose
               report the lease's events on stderr
  --timeout D  bound on each store call (default 10s; attempts and
               renewals: the shorter of D and TTL/3); exit 69 when passed
  --store URL  the store (default $FENCE_STORE, else the SQLite file
               locks.db in $XDG_STATE_HOME/fence or $HOME/.local/state/fence)

Pass $FENCE_TOKEN to the resource you write: holding the lock alone is
not a safety guarantee. See ` + "`fence help`" + ` for store URLs and exit codes.
`,
	"inspect": `usage: fence inspect [--json] [--show-owner] [--timeout D] [--store URL] KEY

Describes KEY without taking it: free or held, the holder (or last
holder), the last token issued and the expiry where the store reports it.
The holder is the fingerprint of its owner id ("owner:" and 12 hex
digits), not the id itself.

  --json       print {"key", "held", "owner", "token", "valid_until",
               "remaining_seconds"} (the last two only where known)
  --show-owner also print the raw owner id ("owner id:", JSON "owner_id").
               Warning: on most stores whoever reads it can release or
               renew the lease; keep it out of logs and tickets
  --timeout D  bound on each store call (default 10s); exit 69 when passed
  --store URL  the store (default $FENCE_STORE, else the SQLite file
               locks.db in $XDG_STATE_HOME/fence or $HOME/.local/state/fence)
`,
	"break": `usage: fence break [--json] [--show-owner] [--timeout D] [--store URL] KEY

Frees KEY whoever holds it and prints its state afterwards. The holder's
next renewal fails (a fence run holding it stops its command and exits
79), and the next lease gets a token above the broken one, so fenced
resources refuse the old holder's writes once the new token reached them.

  --json       print the state after the break as JSON (see inspect)
  --show-owner also print the raw owner id of the last holder (see inspect)
  --timeout D  bound on each store call (default 10s); exit 69 when passed
  --store URL  the store (default $FENCE_STORE, else the SQLite file
               locks.db in $XDG_STATE_HOME/fence or $HOME/.local/state/fence)
`,
	"init": `usage: fence init [--timeout D] [--store URL]

Creates the table, container or bucket the store keeps its leases in, if
it does not exist. A store with nothing to create (a key space) is read
once, to see that it answers.

  --timeout D  bound on each store call (default 10s); exit 69 when passed
  --store URL  the store (default $FENCE_STORE, else the SQLite file
               locks.db in $XDG_STATE_HOME/fence or $HOME/.local/state/fence)
`,
}

// storeForms lists the URL form of every registered locker backend, one a
// line, indented for the manual.
func storeForms() string {
	var b strings.Builder
	for _, form := range lockerForms() {
		b.WriteString("    " + form + "\n")
	}
	return b.String()
}

// lockerForms returns the URL form of every registered locker scheme
// whose store the command can use: not those that live in one process.
func lockerForms() []string {
	_, forms := driver.LockerSchemes()
	return slices.DeleteFunc(forms, inProcess)
}
