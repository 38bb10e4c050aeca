package fence

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fencekit/fence/internal/redact"
)

// Opening from URLs. A backend package registers the URL schemes it serves
// when it is imported, as database/sql drivers do: import it for its side
// effect and open by URL,
//
//	import _ "github.com/fencekit/fence/lockers/postgres"
//
//	locker, err := fence.OpenLocker(ctx, "postgres://app@db/app?table=fence_locks", nil)
//	defer locker.Close()
//
// Credentials never come from the URL (a PostgreSQL password is accepted
// but discouraged): each backend takes them from its SDK's usual
// environment. Each backend's package documents its URL form; OpenOptions
// pass what a URL cannot say (an HTTP client, a Clock).

// OpenOptions is what a URL cannot say: the clients and clock the opened
// locker or resource uses. A nil *OpenOptions means all defaults.
type OpenOptions struct {
	// Clock is the locker's Clock (see Locker), given to the driver too
	// where it reads one. Default: SystemClock.
	Clock Clock
	// HTTPClient carries the requests of backends that speak HTTP
	// (DynamoDB, S3, Azure, Cloud Storage). Default: the SDK's.
	HTTPClient *http.Client
}

// lockerOpener and resourceOpener are driver.LockerOpener and
// driver.ResourceOpener.
type lockerOpener interface {
	OpenLockerURL(ctx context.Context, u *url.URL, opts *OpenOptions) (*Locker, error)
	URLForm() string
}

type resourceOpener interface {
	OpenResourceURL(ctx context.Context, u *url.URL, opts *OpenOptions) (*Resource, error)
	URLForm() string
}

type registry[O any] struct {
	mu      sync.RWMutex
	openers map[string]O
}

var (
	lockerURLs   registry[lockerOpener]
	resourceURLs registry[resourceOpener]
)

var schemeSyntax = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

func (r *registry[O]) register(kind, scheme string, o O) {
	if !schemeSyntax.MatchString(scheme) {
		panic(fmt.Sprintf("fence: driver.Register%s: %q is not a lower-case URL scheme", kind, scheme))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.openers[scheme]; dup {
		panic(fmt.Sprintf("fence: driver.Register%s called twice for scheme %q", kind, scheme))
	}
	if r.openers == nil {
		r.openers = make(map[string]O)
	}
	r.openers[scheme] = o
}

func (r *registry[O]) lookup(raw string) (O, *url.URL, error) {
	var zero O
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("%q has no scheme:// (schemes: %s)", redact.URL(raw), strings.Join(r.schemes(), ", "))}
	}
	r.mu.RLock()
	o, found := r.openers[strings.ToLower(scheme)]
	r.mu.RUnlock()
	if !found {
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("unknown scheme %q (registered: %s; import the backend's package to register it)", scheme, strings.Join(r.schemes(), ", "))}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("%q: %v", redact.URL(raw), redact.URL(err.Error()))}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if err := checkQuery(u); err != nil {
		return zero, nil, err
	}
	return o, u, nil
}

// checkQuery refuses a query that url.ParseQuery rejects: net/url's
// Query drops such a pair without a word, so an opener would fall back
// to a default (a prefix, a table) the URL meant to change. The URL is
// shown without its query and fragment, either of which may carry a
// password, and with its password redacted.
func checkQuery(u *url.URL) error {
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		bare := *u
		bare.RawQuery, bare.ForceQuery, bare.Fragment, bare.RawFragment = "", false, "", ""
		return &InvalidError{Field: "url", Reason: redact.URL(bare.Redacted()) + ": the query cannot be parsed (a bad %-escape, or ';' between parameters)"}
	}
	return nil
}

func (r *registry[O]) schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := make([]string, 0, len(r.openers))
	for k := range r.openers {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

func (r *registry[O]) forms(form func(O) string) []string {
	var out []string
	for _, s := range r.schemes() {
		r.mu.RLock()
		o := r.openers[s]
		r.mu.RUnlock()
		out = append(out, form(o))
	}
	return slices.Compact(out)
}

// OpenLocker opens the locker rawURL names, with the opener registered for
// its scheme (import the backend's package, or
// github.com/fencekit/fence/backends for all of them), and opts, which
// may be nil. Close it when done: that closes the clients the opener
// made. An unknown scheme or a malformed URL (a query url.ParseQuery
// rejects among them) gets an error matching ErrInvalid, with any
// password in the URL redacted, before the opener runs.
func OpenLocker(ctx context.Context, rawURL string, opts *OpenOptions) (*Locker, error) {
	o, u, err := lockerURLs.lookup(rawURL)
	if err != nil {
		return nil, err
	}
	l, err := o.OpenLockerURL(ctx, u, opts)
	if err == nil && l == nil {
		err = fmt.Errorf("fence: the opener of %q returned no locker", u.Scheme)
	}
	return l, err
}

// OpenResource opens the resource rawURL names, with the opener registered
// for its scheme, and opts, which may be nil. Close it when done. It
// refuses a URL as OpenLocker does.
func OpenResource(ctx context.Context, rawURL string, opts *OpenOptions) (*Resource, error) {
	o, u, err := resourceURLs.lookup(rawURL)
	if err != nil {
		return nil, err
	}
	r, err := o.OpenResourceURL(ctx, u, opts)
	if err == nil && r == nil {
		err = fmt.Errorf("fence: the opener of %q returned no resource", u.Scheme)
	}
	return r, err
}
