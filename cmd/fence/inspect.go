package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fencekit/fence"
)

// inspect prints the state of a key without taking it.
func (c *cli) inspect(ctx context.Context, args []string) int {
	cmd, flags := keyCommand("inspect")
	key, err := cmd.parseKey(c, args)
	if err != nil {
		return c.fail(err)
	}
	locker, err := cmd.open(ctx, c)
	if err != nil {
		return c.fail(err)
	}
	defer c.closeLocker(locker)
	var info fence.LockInfo
	err = c.call(ctx, func(ctx context.Context) (err error) {
		info, err = locker.Inspect(ctx, key)
		return err
	})
	if err != nil {
		return c.fail(err)
	}
	s := c.stateOf(info, time.Now(), flags.showOwner)
	if flags.json {
		return c.printJSON(s)
	}
	printState(c.stdout, s)
	return 0
}

// breakKey frees a key whoever holds it, and prints the state after.
func (c *cli) breakKey(ctx context.Context, args []string) int {
	cmd, flags := keyCommand("break")
	key, err := cmd.parseKey(c, args)
	if err != nil {
		return c.fail(err)
	}
	locker, err := cmd.open(ctx, c)
	if err != nil {
		return c.fail(err)
	}
	defer c.closeLocker(locker)
	if err := c.call(ctx, func(ctx context.Context) error { return locker.Break(ctx, key) }); err != nil {
		return c.fail(err)
	}
	var info fence.LockInfo
	err = c.call(ctx, func(ctx context.Context) (err error) {
		info, err = locker.Inspect(ctx, key)
		return err
	})
	if err != nil {
		return c.fail(fmt.Errorf("broke %q, but could not read it back: %w", key, err))
	}
	s := c.stateOf(info, time.Now(), flags.showOwner)
	if flags.json {
		return c.printJSON(s)
	}
	fmt.Fprintf(c.stdout, "broke %q\n", key)
	printState(c.stdout, s)
	if info.Token.Valid() {
		fmt.Fprintf(c.stdout, "The next lease gets a token above %d. Fenced resources refuse\n"+
			"writes carrying %d or lower once a write with a newer token reached them.\n", info.Token, info.Token)
	}
	return 0
}

// initStore creates the table, container or bucket of the store.
func (c *cli) initStore(ctx context.Context, args []string) int {
	cmd := initCommand()
	rest, err := cmd.parse(c, args)
	if err == nil && len(rest) > 0 {
		err = usagef("init takes no arguments, only --store URL (got %q)", rest[0])
	}
	if err != nil {
		return c.fail(err)
	}
	locker, err := cmd.open(ctx, c)
	if err != nil {
		return c.fail(err)
	}
	defer c.closeLocker(locker)
	switch err := c.call(ctx, locker.Create); {
	case errors.Is(err, errors.ErrUnsupported):
		// etcd and Redis keep leases in a key space that needs no
		// table, container or bucket: the store is ready once it
		// answers, which a read of a key shows.
		err = c.call(ctx, func(ctx context.Context) error {
			_, err := locker.Inspect(ctx, initProbe)
			return err
		})
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(c.stdout, "store ready (nothing to create): %s\n", c.store)
		return 0
	case err != nil:
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "store ready: %s\n", c.store)
	return 0
}

// initProbe is the key fence init reads on a store with nothing to
// create, to see that the store answers.
const initProbe = "fence-init"

// parseKey parses the flags and the single KEY argument.
func (cmd *command) parseKey(c *cli, args []string) (string, error) {
	rest, err := cmd.parse(c, args)
	if err != nil {
		return "", err
	}
	switch {
	case len(rest) == 0:
		return "", usagef("%s needs a KEY: fence %s --store URL KEY", cmd.name, cmd.name)
	case len(rest) > 1:
		return "", usagef("%s takes one KEY, got %q (options go before KEY)", cmd.name, rest)
	}
	return rest[0], nil
}

// state is what inspect and break print; its JSON form is documented in
// the manual.
type state struct {
	Key  string `json:"key"`
	Held bool   `json:"held"`
	// Owner is the fingerprint (fence.OwnerFingerprint) of the holder, or
	// of the last holder when free: never the owner id, which on most
	// stores lets whoever reads it release or renew the lease.
	Owner string `json:"owner,omitempty"`
	// OwnerID is the raw owner id, only with --show-owner.
	OwnerID string      `json:"owner_id,omitempty"`
	Token   fence.Token `json:"token"`
	// ValidUntil is the expiry where the backend knows it.
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	// Remaining is ValidUntil minus now, in seconds.
	Remaining *float64 `json:"remaining_seconds,omitempty"`
	// Value is the public value the holder published (an election's
	// leader, its address), while held.
	Value string `json:"value,omitempty"`
}

// stateOf returns the state to print of info; with showOwner it holds the
// raw owner id too, and a warning goes to stderr.
func (c *cli) stateOf(info fence.LockInfo, now time.Time, showOwner bool) state {
	s := state{Key: info.Key, Held: info.Held, Owner: fence.OwnerFingerprint(info.Owner), Token: info.Token, Value: info.Value}
	if showOwner && info.Owner != "" {
		s.OwnerID = info.Owner
		c.errorf("warning: --show-owner prints the owner id; on most stores whoever reads it can release or renew the lease: keep it out of logs and tickets")
	}
	if !info.ValidUntil.IsZero() {
		t := info.ValidUntil.UTC()
		r := info.ValidUntil.Sub(now).Seconds()
		s.ValidUntil, s.Remaining = &t, &r
	}
	return s
}

func printState(w io.Writer, s state) {
	switch {
	case s.Held:
		fmt.Fprintf(w, "key:     %s\nstate:   held\nholder:  %s\ntoken:   %d\n", s.Key, s.Owner, s.Token)
		if s.ValidUntil != nil {
			fmt.Fprintf(w, "expires: %s (in %s)\n", s.ValidUntil.Format(time.RFC3339Nano),
				time.Duration(*s.Remaining*float64(time.Second)).Round(time.Millisecond))
		} else {
			fmt.Fprintf(w, "expires: unknown (this store does not report it)\n")
		}
		if s.Value != "" {
			fmt.Fprintf(w, "value:   %q\n", s.Value)
		}
	case s.Token.Valid():
		fmt.Fprintf(w, "key:     %s\nstate:   free\nlast holder: %s\ntoken:   %d (last issued)\n", s.Key, s.Owner, s.Token)
	default:
		fmt.Fprintf(w, "key:     %s\nstate:   free\ntoken:   0 (never acquired)\n", s.Key)
	}
	if s.OwnerID != "" {
		fmt.Fprintf(w, "owner id: %s\n", s.OwnerID)
	}
}

func (c *cli) printJSON(v any) int {
	enc := json.NewEncoder(c.stdout)
	if err := enc.Encode(v); err != nil {
		c.errorf("write JSON: %v", err)
		return exitStore
	}
	return 0
}
