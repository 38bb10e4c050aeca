package fence

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Opening from URLs. A backend package registers the URL schemes it serves
// when it is imported, as database/sql drivers do: import it for its side
// effect and open by URL,
//
//	import _ "github.com/fencekit/fence/lockers/postgres"
//
//	locker, err := fence.OpenLocker(ctx, "postgres://app@db/app?table=fence_locks")
//	defer locker.Close()
//
// Credentials never come from the URL (a PostgreSQL password is accepted
// but discouraged): each backend takes them from its SDK's usual
// environment. Each backend's package documents its URL form;
// OpenLockerWith and OpenResourceWith pass what a URL cannot say (an HTTP
// client, a Clock).

// Opened is what a URL opener returns: the locker or resource, and how to
// create its store and release the clients the opener made.
type Opened[T any] struct {
	// Value is the PortableLocker or PortableResource.
	Value T
	// Create creates the table, container or bucket, if missing. Nil
	// when the backend has nothing to create, or its driver's Create
	// does it.
	Create func(ctx context.Context) error
	// Close releases the clients the opener made. Nil when there are
	// none.
	Close func() error
}

// OpenOptions is what a URL cannot say: the clients and clock the opened
// locker or resource uses. A nil *OpenOptions means all defaults.
type OpenOptions struct {
	// Clock is the locker's Clock (LockerOptions.Clock, and the driver's
	// where it reads one). Default: SystemClock.
	Clock Clock
	// HTTPClient carries the requests of backends that speak HTTP
	// (DynamoDB, S3, Azure, Cloud Storage). Default: the SDK's.
	HTTPClient *http.Client
}

// ClockOrSystem returns o.Clock, or SystemClock when o or its Clock is nil.
func (o *OpenOptions) ClockOrSystem() Clock {
	if o == nil {
		return SystemClock{}
	}
	return ClockOrSystem(o.Clock)
}

// Client returns o.HTTPClient, or nil when o is nil.
func (o *OpenOptions) Client() *http.Client {
	if o == nil {
		return nil
	}
	return o.HTTPClient
}

// LockerURLOpener opens the lockers of one URL scheme.
type LockerURLOpener interface {
	// OpenLockerURL opens the locker u names, with opts (which may be
	// nil). It checks u but need not contact the store; the first call
	// does.
	OpenLockerURL(ctx context.Context, u *url.URL, opts *OpenOptions) (Opened[*PortableLocker], error)
	// URLForm returns the URL form, for help texts and errors, for
	// example "postgres://[USER@]HOST[:PORT]/DB[?table=T]".
	URLForm() string
}

// ResourceURLOpener opens the resources of one URL scheme.
type ResourceURLOpener interface {
	OpenResourceURL(ctx context.Context, u *url.URL, opts *OpenOptions) (Opened[*PortableResource], error)
	URLForm() string
}

type registry[O any] struct {
	mu      sync.RWMutex
	openers map[string]O
}

var (
	lockerURLs   registry[LockerURLOpener]
	resourceURLs registry[ResourceURLOpener]
)

var schemeSyntax = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

func (r *registry[O]) register(kind, scheme string, o O) {
	if !schemeSyntax.MatchString(scheme) {
		panic(fmt.Sprintf("fence: Register%s: %q is not a lower-case URL scheme", kind, scheme))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.openers[scheme]; dup {
		panic(fmt.Sprintf("fence: Register%s called twice for scheme %q", kind, scheme))
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
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("%q has no scheme:// (schemes: %s)", RedactURL(raw), strings.Join(r.schemes(), ", "))}
	}
	r.mu.RLock()
	o, found := r.openers[strings.ToLower(scheme)]
	r.mu.RUnlock()
	if !found {
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("unknown scheme %q (registered: %s; import the backend's package to register it)", scheme, strings.Join(r.schemes(), ", "))}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return zero, nil, &InvalidError{Field: "url", Reason: fmt.Sprintf("%q: %v", RedactURL(raw), redactErr(err))}
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
		return &InvalidError{Field: "url", Reason: RedactURL(bare.Redacted()) + ": the query cannot be parsed (a bad %-escape, or ';' between parameters)"}
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

// RegisterLocker makes OpenLocker open URLs of scheme with o. Backends call
// it from init. It panics if scheme is registered twice or is not a
// lower-case URL scheme.
func RegisterLocker(scheme string, o LockerURLOpener) { lockerURLs.register("Locker", scheme, o) }

// RegisterResource makes OpenResource open URLs of scheme with o.
func RegisterResource(scheme string, o ResourceURLOpener) {
	resourceURLs.register("Resource", scheme, o)
}

// OpenLocker opens the locker rawURL names, with the opener registered for
// its scheme. Close it when done: that closes the clients the opener made.
// An unknown scheme or a malformed URL (a query url.ParseQuery rejects
// among them) gets an error matching ErrInvalid, with any password in the
// URL redacted, before the opener runs.
func OpenLocker(ctx context.Context, rawURL string) (*PortableLocker, error) {
	return OpenLockerWith(ctx, rawURL, nil)
}

// OpenLockerWith is OpenLocker with the clients and clock of opts.
func OpenLockerWith(ctx context.Context, rawURL string, opts *OpenOptions) (*PortableLocker, error) {
	o, u, err := lockerURLs.lookup(rawURL)
	if err != nil {
		return nil, err
	}
	opened, err := o.OpenLockerURL(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	if opened.Value == nil {
		return nil, fmt.Errorf("fence: the opener of %q returned no locker", u.Scheme)
	}
	l := *opened.Value
	l.create, l.close = opened.Create, opened.Close
	return &l, nil
}

// OpenResource opens the resource rawURL names, with the opener registered
// for its scheme. Close it when done. It refuses a URL as OpenLocker does.
func OpenResource(ctx context.Context, rawURL string) (*PortableResource, error) {
	return OpenResourceWith(ctx, rawURL, nil)
}

// OpenResourceWith is OpenResource with the clients of opts.
func OpenResourceWith(ctx context.Context, rawURL string, opts *OpenOptions) (*PortableResource, error) {
	o, u, err := resourceURLs.lookup(rawURL)
	if err != nil {
		return nil, err
	}
	opened, err := o.OpenResourceURL(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	if opened.Value == nil {
		return nil, fmt.Errorf("fence: the opener of %q returned no resource", u.Scheme)
	}
	r := *opened.Value
	r.create, r.close = opened.Create, opened.Close
	return &r, nil
}

// LockerSchemes returns the registered locker URL schemes, sorted.
func LockerSchemes() []string { return lockerURLs.schemes() }

// ResourceSchemes returns the registered resource URL schemes, sorted.
func ResourceSchemes() []string { return resourceURLs.schemes() }

// LockerURLForms returns the URL form of every registered locker scheme.
func LockerURLForms() []string {
	return lockerURLs.forms(func(o LockerURLOpener) string { return o.URLForm() })
}

// ResourceURLForms returns the URL form of every registered resource
// scheme.
func ResourceURLForms() []string {
	return resourceURLs.forms(func(o ResourceURLOpener) string { return o.URLForm() })
}

// userinfoPassword matches scheme://user:password@ in any text.
var userinfoPassword = regexp.MustCompile(`(://[^:/@?#\s]*:)[^/?#\s]*@`)

// passwordParam matches a password= query parameter in any text.
var passwordParam = regexp.MustCompile(`(?i)([?&]password\s*=\s*)('[^']*'|[^&\s]+)`)

// RedactURL returns raw, or any text holding URLs, with every password (in
// the user information or a password query parameter) replaced by
// "xxxxx", fit for printing.
func RedactURL(raw string) string {
	raw = userinfoPassword.ReplaceAllString(raw, "${1}xxxxx@")
	return passwordParam.ReplaceAllString(raw, "${1}xxxxx")
}

func redactErr(err error) string { return RedactURL(err.Error()) }

// URLPasswords returns the non-empty passwords u carries: in its user
// information and in password query parameters.
func URLPasswords(u *url.URL) []string {
	var pws []string
	if pw, ok := u.User.Password(); ok && pw != "" {
		pws = append(pws, pw)
	}
	for _, pw := range u.Query()["password"] {
		if pw != "" {
			pws = append(pws, pw)
		}
	}
	return pws
}

// Scrub returns text with every secret replaced by "xxxxx", as given and
// in the forms URLs escape it, and then with anything else shaped like a
// URL password redacted (RedactURL). Empty secrets are ignored. Openers
// pass their URL's passwords (URLPasswords) through it before quoting an
// SDK's error, which may hold the connection string.
func Scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
		if _, esc, ok := strings.Cut(url.UserPassword("", s).String(), ":"); ok {
			forms = append(forms, esc)
		}
		for _, f := range forms {
			text = strings.ReplaceAll(text, f, "xxxxx")
		}
	}
	return RedactURL(text)
}

// URLParams reads a URL for an opener. Each getter records the first
// problem it meets and returns a zero value after it; Done returns that
// problem, or one naming the parameters nobody read, so that a misspelt
// parameter is an error rather than ignored. Every error is a
// *InvalidError for field "url" that shows the URL with its password
// redacted.
type URLParams struct {
	u    *url.URL
	q    url.Values
	used map[string]bool
	err  error
}

// NewURLParams returns the parameters of u. A query that url.ParseQuery
// rejects (a bad %-escape) is a problem that Done returns: the registry
// refuses it before any opener runs, and NewURLParams again for an
// opener called directly.
func NewURLParams(u *url.URL) *URLParams {
	p := &URLParams{u: u, q: u.Query(), used: map[string]bool{}}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		p.Fail("the query cannot be parsed (a bad %%-escape, or ';' between parameters)")
	}
	return p
}

// Name returns the URL's host as the name of what it names ("table",
// "bucket", "container"), refusing user information, ports and paths.
func (p *URLParams) Name(what string) string {
	u := p.u
	switch {
	case u.User != nil:
		p.Fail("no user or password here; credentials come from the environment")
	case u.Host == "":
		p.Fail("no %s name after %s://", what, u.Scheme)
	case u.Port() != "" || strings.HasSuffix(u.Host, ":"):
		p.Fail("a %s name has no port; use ?endpoint= for a server", what)
	case u.Path != "" && u.Path != "/":
		p.Fail("unexpected path %q after the %s name", u.Path, what)
	default:
		return u.Host
	}
	return ""
}

// Optional returns parameter name, which may be given empty; "" when
// absent. Given twice, it is an error.
func (p *URLParams) Optional(name string) string {
	p.used[name] = true
	vs := p.q[name]
	if len(vs) > 1 {
		p.Fail("%s given more than once", name)
		return ""
	}
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// String returns parameter name, "" when absent. Given empty or twice,
// it is an error.
func (p *URLParams) String(name string) string {
	if vs := p.q[name]; len(vs) == 1 && vs[0] == "" {
		p.used[name] = true
		p.Fail("%s is empty", name)
		return ""
	}
	return p.Optional(name)
}

// Bool returns parameter name, false when absent.
func (p *URLParams) Bool(name string) bool {
	v := p.String(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.Fail("%s=%q is not true or false", name, v)
	}
	return b
}

// Duration returns parameter name, a non-negative duration such as
// "500ms"; 0 when absent.
func (p *URLParams) Duration(name string) time.Duration {
	v := p.String(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		p.Fail("%s=%q is not a duration such as 500ms or 2s", name, v)
		return 0
	}
	return d
}

// Endpoint returns the endpoint parameter, an http:// or https:// URL
// without user information and without a trailing slash; "" when absent.
func (p *URLParams) Endpoint() string {
	v := p.String("endpoint")
	if v == "" {
		return ""
	}
	e, err := url.Parse(v)
	switch {
	case err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "":
		p.Fail("endpoint %q is not an http:// or https:// URL", RedactURL(v))
	case e.User != nil:
		p.Fail("the endpoint carries user information; credentials come from the environment")
	default:
		return strings.TrimSuffix(v, "/")
	}
	return ""
}

// Fail records a problem, unless one is recorded already.
func (p *URLParams) Fail(format string, args ...any) {
	if p.err == nil {
		// The URL is named without its user information and query, either
		// of which may carry a password, escaped or not, and with anything
		// in its path shaped like a password redacted: a mistyped URL
		// (":///://:PASSWORD@") puts its user information in the path.
		where := RedactURL(p.u.Scheme + "://" + p.u.Host + p.u.EscapedPath())
		p.err = &InvalidError{Field: "url", Reason: where + ": " + fmt.Sprintf(format, args...)}
	}
}

// Done returns the first problem met, or one naming the parameters that
// were never read.
func (p *URLParams) Done() error {
	if p.err != nil {
		return p.err
	}
	for _, k := range slices.Sorted(maps.Keys(p.q)) {
		if !p.used[k] {
			p.Fail("unknown parameter %q (known: %s)", k, strings.Join(slices.Sorted(maps.Keys(p.used)), ", "))
			break
		}
	}
	return p.err
}
