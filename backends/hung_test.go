package backends_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// callTimeout is the context of each call; margin is how much later than
// its deadline a call may return on a loaded machine.
const (
	callTimeout = time.Second
	margin      = 1500 * time.Millisecond
)

// TestHungServerHonoursContext: every locker and every resource, opened by
// URL at a server that accepts connections and never answers, returns
// from each call soon after the call's context ends, with an error
// matching context.DeadlineExceeded, and not when its client's own
// timeout runs out.
func TestHungServerHonoursContext(t *testing.T) {
	t.Parallel()
	addrs := func(t *testing.T) []string {
		return []string{netfault.Hung(t).Addr, netfault.Hung(t).Addr, netfault.Hung(t).Addr}
	}
	forEveryScheme(t, addrs, func(t *testing.T, _ time.Duration, err error) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not match context.DeadlineExceeded", err)
		}
	})
}

// TestStoppedServerHonoursContext: the same with servers stopped (closed
// ports): each call fails, and no later than soon after its context ends.
// An error that comes before the deadline may be the refused connection.
func TestStoppedServerHonoursContext(t *testing.T) {
	t.Parallel()
	addrs := func(t *testing.T) []string {
		return []string{netfault.Closed(t), netfault.Closed(t), netfault.Closed(t)}
	}
	forEveryScheme(t, addrs, func(t *testing.T, elapsed time.Duration, err error) {
		if elapsed >= callTimeout && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error after the deadline %v does not match context.DeadlineExceeded", err)
		}
	})
}

// forEveryScheme opens every locker and resource scheme at the servers of
// addrs, in parallel subtests, and calls its main entry points, each with
// a context of callTimeout: a locker's Acquire, Inspect and Break, a
// resource's Put and Get. Each call must fail within callTimeout and
// margin; check judges its error. An opener that contacts the store
// (ZooKeeper waits for a session) is held to the same.
func forEveryScheme(t *testing.T, addrs func(t *testing.T) []string, check func(t *testing.T, elapsed time.Duration, err error)) {
	judge := func(t *testing.T, what string, elapsed time.Duration, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s succeeded against a server that never answers", what)
			return
		}
		if elapsed > callTimeout+margin {
			t.Errorf("%s returned %v after it started, its context allowed %v: %v", what, elapsed.Round(time.Millisecond), callTimeout, err)
		}
		check(t, elapsed, err)
	}
	call := func(t *testing.T, what string, f func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		start := time.Now()
		err := f(ctx)
		judge(t, what, time.Since(start), err)
	}
	for _, s := range lockerSchemes {
		t.Run("locker/"+s.name, func(t *testing.T) {
			t.Parallel()
			if s.url == nil {
				t.Skip(s.inProcess)
			}
			var l *fence.Locker
			var openErr error
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			start := time.Now()
			l, openErr = fence.OpenLocker(ctx, s.url(addrs(t)), nil)
			if openErr != nil {
				// The opener waited for the store (ZooKeeper's session).
				judge(t, "open", time.Since(start), openErr)
				return
			}
			t.Cleanup(func() { _ = l.Close() })
			ttl := max(driver.InfoOf(l).MinTTL, 2*time.Second)
			call(t, "Acquire", func(ctx context.Context) error { _, err := l.Acquire(ctx, "hung", ttl, nil); return err })
			call(t, "Inspect", func(ctx context.Context) error { _, err := l.Inspect(ctx, "hung"); return err })
			call(t, "Break", func(ctx context.Context) error { return l.Break(ctx, "hung") })
		})
	}
	for _, s := range resourceSchemes {
		t.Run("resource/"+s.name, func(t *testing.T) {
			t.Parallel()
			if s.url == nil {
				t.Skip(s.inProcess)
			}
			r, err := fence.OpenResource(t.Context(), s.url(addrs(t)), nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() { _ = r.Close() })
			call(t, "Put", func(ctx context.Context) error { return r.Put(ctx, "hung", 7, []byte("v")) })
			call(t, "Get", func(ctx context.Context) error { _, _, err := r.Get(ctx, "hung"); return err })
		})
	}
}

// TestAWSOutageKeepsTheStoreError: with the store down, calls of the
// DynamoDB and S3 backends fail with the store's error, however many
// failed before: the AWS SDK's standard retryer would otherwise run out
// of its client-side retry quota and answer "failed to get rate limit
// token, retry quota exceeded" in place of the refused connection.
func TestAWSOutageKeepsTheStoreError(t *testing.T) {
	t.Parallel()
	dead := []string{netfault.Closed(t)}
	open := map[string]func(ctx context.Context) (func(ctx context.Context) error, error){
		"locker/dynamodb": func(ctx context.Context) (func(ctx context.Context) error, error) {
			l, err := fence.OpenLocker(ctx, lockerURL(t, "dynamodb", dead), nil)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { _ = l.Close() })
			return func(ctx context.Context) error { _, err := l.Inspect(ctx, "down"); return err }, nil
		},
		"resource/dynamodb": func(ctx context.Context) (func(ctx context.Context) error, error) {
			return openGet(t, ctx, resourceURL(t, "dynamodb", dead))
		},
		"resource/s3": func(ctx context.Context) (func(ctx context.Context) error, error) {
			return openGet(t, ctx, resourceURL(t, "s3", dead))
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			call, err := open(t.Context())
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			// The standard retryer's quota (500, 5 a retry) runs out after
			// 100 retries: 120 calls of 3 attempts each pass it.
			const calls = 120
			errs := make(chan error, calls)
			for range calls {
				go func() {
					ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
					defer cancel()
					errs <- call(ctx)
				}()
			}
			for range calls {
				err := <-errs
				if err == nil {
					t.Fatal("a call succeeded with the store down")
				}
				if strings.Contains(err.Error(), "retry quota") || strings.Contains(err.Error(), "rate limit") {
					t.Fatalf("the store's error is hidden by the SDK's retry quota: %v", err)
				}
			}
		})
	}
}

func openGet(t *testing.T, ctx context.Context, u string) (func(ctx context.Context) error, error) {
	r, err := fence.OpenResource(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = r.Close() })
	return func(ctx context.Context) error { _, _, err := r.Get(ctx, "down"); return err }, nil
}
