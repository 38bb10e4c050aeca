// Package urlparam reads the URLs of the backends' URL openers.
package urlparam

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
)

// Params reads a URL for an opener. Each getter records the first
// problem it meets and returns a zero value after it; Done returns that
// problem, or one naming the parameters nobody read, so that a misspelt
// parameter is an error rather than ignored. Every error is a
// *InvalidError for field "url" that shows the URL with its password
// redacted.
type Params struct {
	u    *url.URL
	q    url.Values
	used map[string]bool
	err  error
}

// New returns the parameters of u. A query that url.ParseQuery
// rejects (a bad %-escape) is a problem that Done returns: the registry
// refuses it before any opener runs, and New again for an opener called
// directly.
func New(u *url.URL) *Params {
	p := &Params{u: u, q: u.Query(), used: map[string]bool{}}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		p.Fail("the query cannot be parsed (a bad %%-escape, or ';' between parameters)")
	}
	return p
}

// Name returns the URL's host as the name of what it names ("table",
// "bucket", "container"), refusing user information, ports and paths.
func (p *Params) Name(what string) string {
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
func (p *Params) Optional(name string) string {
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
func (p *Params) String(name string) string {
	if vs := p.q[name]; len(vs) == 1 && vs[0] == "" {
		p.used[name] = true
		p.Fail("%s is empty", name)
		return ""
	}
	return p.Optional(name)
}

// Bool returns parameter name, false when absent.
func (p *Params) Bool(name string) bool {
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
func (p *Params) Duration(name string) time.Duration {
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
func (p *Params) Endpoint() string {
	v := p.String("endpoint")
	if v == "" {
		return ""
	}
	e, err := url.Parse(v)
	switch {
	case err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "":
		p.Fail("endpoint %q is not an http:// or https:// URL", redact.URL(v))
	case e.User != nil:
		p.Fail("the endpoint carries user information; credentials come from the environment")
	default:
		return strings.TrimSuffix(v, "/")
	}
	return ""
}

// Fail records a problem, unless one is recorded already.
func (p *Params) Fail(format string, args ...any) {
	if p.err == nil {
		// The URL is named without its user information and query, either
		// of which may carry a password, escaped or not, and with anything
		// in its path shaped like a password redacted: a mistyped URL
		// (":///://:PASSWORD@") puts its user information in the path.
		where := redact.URL(p.u.Scheme + "://" + p.u.Host + p.u.EscapedPath())
		p.err = &fence.InvalidError{Field: "url", Reason: where + ": " + fmt.Sprintf(format, args...)}
	}
}

// Done returns the first problem met, or one naming the parameters that
// were never read.
func (p *Params) Done() error {
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

// Clock returns the Clock of opts, or fence.SystemClock when opts or its
// Clock is nil.
func Clock(opts *fence.OpenOptions) fence.Clock {
	if opts == nil || opts.Clock == nil {
		return fence.SystemClock{}
	}
	return opts.Clock
}

// HTTPClient returns the HTTP client of opts, or nil when opts is nil.
func HTTPClient(opts *fence.OpenOptions) *http.Client {
	if opts == nil {
		return nil
	}
	return opts.HTTPClient
}
