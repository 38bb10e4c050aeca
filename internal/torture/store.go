package torture

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/backends" // the URL schemes of every backend
	"github.com/fencekit/fence/internal/redact"
)

// newLocker returns the locker worker uses, reading time from clock.
type newLocker func(worker int, clock fence.Clock) (*fence.Locker, error)

// open creates k's store on s and returns how to open the workers'
// lockers.
func (k LockerKind) open(ctx context.Context, s *Stage) (newLocker, error) {
	if _, err := need(k.Env...); err != nil {
		return nil, err
	}
	faulty, clean, err := k.URL(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, err := create(ctx, s, clean, k.Remove, fence.OpenLocker); err != nil {
		return nil, err
	}
	return func(_ int, clock fence.Clock) (*fence.Locker, error) {
		l, err := forRun(s, fence.OpenLocker)(ctx, faulty, &fence.OpenOptions{Clock: clock, HTTPClient: s.HTTPClient()})
		if err != nil {
			return nil, err
		}
		return l, nil
	}, nil
}

// open creates k's store on s and returns the resource the workers write
// through the stage's faults, and the same without faults. When fenced is
// false their token check is off (a control run): k.Unfenced, or Unfenced.
func (k ResourceKind) open(ctx context.Context, s *Stage, fenced bool) (work, clean resource, err error) {
	if _, err := need(k.Env...); err != nil {
		return nil, nil, err
	}
	faultyURL, cleanURL, err := k.URL(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	check, err := create(ctx, s, cleanURL, k.Remove, fence.OpenResource)
	if err != nil {
		return nil, nil, err
	}
	if !fenced && k.Unfenced != nil {
		return k.Unfenced(ctx, s, faultyURL, cleanURL)
	}
	w, err := forRun(s, fence.OpenResource)(ctx, faultyURL, &fence.OpenOptions{HTTPClient: s.HTTPClient()})
	if err != nil {
		return nil, nil, err
	}
	return control(w, fenced), control(check, fenced), nil
}

// control returns r, or r without its token check for a control run.
func control(r resource, fenced bool) resource {
	if fenced {
		return r
	}
	return Unfenced{r}
}

// store is what the run needs of a *fence.Locker or *fence.Resource
// beyond its contract.
type store interface {
	Create(ctx context.Context) error
	Close() error
}

// opener is fence.OpenLocker or fence.OpenResource.
type opener[T store] func(ctx context.Context, rawURL string, opts *fence.OpenOptions) (T, error)

// forRun returns open, whose lockers or resources are closed when the run
// ends.
func forRun[T store](s *Stage, open opener[T]) opener[T] {
	return func(ctx context.Context, rawURL string, opts *fence.OpenOptions) (T, error) {
		v, err := open(ctx, rawURL, opts)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("torture: open %s: %w", redact.URL(rawURL), err)
		}
		s.Defer(func() { _ = v.Close() })
		return v, nil
	}
}

// create opens the store at clean without faults, creates it (where the
// backend has something to create) and makes remove, if set, remove it
// when the run ends. It returns the store as opened, closed when the run
// ends.
func create[T store](ctx context.Context, s *Stage, clean string, remove Remover, open opener[T]) (T, error) {
	v, err := forRun(s, open)(ctx, clean, &fence.OpenOptions{HTTPClient: s.CleanHTTPClient()})
	if err != nil {
		return v, err
	}
	if err := v.Create(ctx); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		var zero T
		return zero, fmt.Errorf("torture: create %s: %w", redact.URL(clean), err)
	}
	if remove != nil {
		s.Defer(func() {
			ctx, cancel := cleanupContext()
			defer cancel()
			if err := remove(ctx, s, clean); err != nil {
				s.logf("torture: remove %s: %v", redact.URL(clean), err)
			}
		})
	}
	return v, nil
}

// oneURL returns the URLs of a store that one URL, which name makes for
// the stage, names on the faulty path and the clean one alike: over HTTP
// the faults are in the client; a store in this process (memory, an
// SQLite file) has none.
func oneURL(name func(s *Stage) (string, error)) URLs {
	return func(_ context.Context, s *Stage) (string, string, error) {
		u, err := name(s)
		return u, u, err
	}
}

// named returns the URLs scheme://ID-suffix of the stage, for a backend
// that finds its server (if any) in its SDK's usual environment.
func named(scheme, suffix string) URLs {
	return oneURL(func(s *Stage) (string, error) { return storeURL(scheme, s.ID+"-"+suffix), nil })
}

// storeURL returns scheme://name?query, with query's parameters given as
// name, value pairs; a value is escaped, an empty one left out.
func storeURL(scheme, name string, query ...string) string {
	u := url.URL{Scheme: scheme, Host: name, RawQuery: withParams(nil, query...).Encode()}
	return u.String()
}

// withParams returns q (a new url.Values when nil) with the parameters
// given as name, value pairs; empty values are left out.
func withParams(q url.Values, params ...string) url.Values {
	if q == nil {
		q = url.Values{}
	}
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] != "" {
			q.Set(params[i], params[i+1])
		}
	}
	return q
}

// parseStoreURL returns the name a store URL gives (its host: a table,
// bucket or container) and its parameters.
func parseStoreURL(raw string) (name string, q url.Values, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, err
	}
	return u.Host, u.Query(), nil
}
