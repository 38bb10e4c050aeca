package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/fencekit/fence"
)

// DefaultTimeout bounds each store call of the command when --timeout is
// not given.
const DefaultTimeout = 10 * time.Second

// storeError is a store call that failed or did not answer within its
// bound: it names the store, so that an operator sees which address could
// not be reached.
type storeError struct {
	// where is the store URL as printed (passwords masked), with the
	// address the SDK takes from the environment where the URL has none.
	where string
	// bound is the call's time limit; timedOut says it passed.
	bound    time.Duration
	timedOut bool
	// flag is " (--timeout)" when the bound is that flag's.
	flag string
	err  error
}

func (e *storeError) Error() string {
	if e.timedOut {
		return fmt.Sprintf("the store %s did not answer within %v%s: %v", e.where, e.bound, e.flag, e.err)
	}
	return fmt.Sprintf("the store %s failed: %v", e.where, e.err)
}

func (e *storeError) Unwrap() error { return e.err }

// storeErr returns err, the error of a store call bounded by bound (its
// context is ctx), naming the store when it is a store failure (exit
// 69); other errors (bad usage, a busy key, a lost lease) are returned
// as they are.
func (c *cli) storeErr(ctx context.Context, err error, bound time.Duration) error {
	if err == nil || statusOf(err) != exitStore || errors.Is(err, fence.ErrStoreMissing) || errors.Is(err, fence.ErrCorrupt) {
		return err
	}
	if _, ok := errors.AsType[*storeError](err); ok {
		return err
	}
	timedOut := errors.Is(err, context.DeadlineExceeded) || (ctx != nil && errors.Is(ctx.Err(), context.DeadlineExceeded))
	e := &storeError{where: c.where(err), bound: bound, timedOut: timedOut, err: err}
	if bound == c.timeout {
		e.flag = " (--timeout)"
	}
	return e
}

// hostPort matches an address with a port in a URL, its colon escaped or
// not.
var hostPort = regexp.MustCompile(`[\w.\]-](:|%3[aA])\d+`)

// endpointVars are the environment variables from which SDKs take a
// store's address when its URL names none (a bucket or table URL): the
// emulator hosts and endpoint overrides of the cloud SDKs.
var endpointVars = []string{"STORAGE_EMULATOR_HOST", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"}

// where is the store as printed in err: its URL with passwords masked,
// and when neither the URL nor err names an address, the endpoints set
// in the environment (never a credential: of a connection string only
// its endpoint).
func (c *cli) where(err error) string {
	if c.store == "" || hostPort.MatchString(c.store) || hostPort.MatchString(err.Error()) {
		return c.store
	}
	var env []string
	for _, v := range endpointVars {
		if s := os.Getenv(v); s != "" {
			env = append(env, v+"="+s)
		}
	}
	for _, kv := range strings.Split(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "BlobEndpoint" {
			env = append(env, "BlobEndpoint="+v+" of AZURE_STORAGE_CONNECTION_STRING")
		}
	}
	if len(env) == 0 {
		return c.store + " (at the address its SDK takes from the environment)"
	}
	return c.store + " (address from the environment: " + c.scrub(strings.Join(env, ", ")) + ")"
}

// call runs a store call with a context bounded by the command's
// --timeout, and names the store in its error.
func (c *cli) call(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.storeErr(ctx, fn(ctx), c.timeout)
}

// closeLocker closes l, waiting at most the command's --timeout: the
// command exits afterwards, whatever a client left open.
func (c *cli) closeLocker(l *fence.Locker) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = l.Close()
	}()
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
