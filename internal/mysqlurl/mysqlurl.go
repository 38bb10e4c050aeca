// Package mysqlurl reads mysql:// URLs, the one parser behind
// fence.OpenLocker and fence.OpenResource for that scheme, so that a URL
// names the same server, user, password, database and driver settings
// for both, and is refused with the same errors.
//
// The form is Form. HOST is required, PORT is 1 to 65535 (default 3306),
// DB is one database name without a NUL byte or backquote, and USER has
// no colon or NUL byte. The password is only ever the URL's: a password
// parameter is refused. The caller's own parameters (the names it passes
// to Parse) are taken out; every other parameter is a
// github.com/go-sql-driver/mysql DSN parameter, checked by the driver (a
// name it does not know sets that session variable, as in its DSNs).
// Errors are *fence.InvalidError for field "url" and never show the
// password.
package mysqlurl

import (
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
)

// Form is the URL form both openers quote in their URLForm.
const Form = "mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?...]"

// DefaultPort is the port of a URL that names none.
const DefaultPort = "3306"

// Parsed is what a mysql:// URL says.
type Parsed struct {
	// Config is the driver's configuration: TCP to HOST:PORT, the user,
	// the password in Config.Passwd, the database and the driver
	// parameters. No DSN string ever holds the password.
	Config *mysql.Config
	// Own holds the values of the caller's own parameters that the URL
	// gives; none of them reaches the driver.
	Own map[string]string
	// Passwords are the URL's passwords, to keep out of every error
	// (redact.Passwords).
	Passwords []string

	where string
}

// Scrub returns text without the URL's passwords (redact.Scrub).
func (p *Parsed) Scrub(text string) string { return redact.Scrub(text, p.Passwords...) }

// Invalid returns the *fence.InvalidError for field "url" that refuses the
// URL for reason, named as Parse names it, without its passwords. Callers
// use it for their own parameters' checks.
func (p *Parsed) Invalid(reason string) error {
	return &fence.InvalidError{Field: "url", Reason: p.Scrub(p.where + ": " + reason)}
}

// Parse reads a mysql:// URL, taking out the parameters named in own. It
// contacts nothing.
func Parse(u *url.URL, own ...string) (*Parsed, error) {
	p := &Parsed{
		Own:       map[string]string{},
		Passwords: redact.Passwords(u),
		// The URL is named without its user information and query,
		// either of which may carry a password.
		where: u.Scheme + "://" + u.Host + u.EscapedPath(),
	}
	if u.Opaque != "" {
		p.where = u.Scheme + ":"
		return nil, p.Invalid("want " + Form)
	}
	if u.Fragment != "" {
		return nil, p.Invalid("unexpected fragment; want " + Form)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, p.Invalid("the query cannot be parsed (a bad %-escape, or ';' between parameters)")
	}
	for _, k := range slices.Sorted(maps.Keys(query)) {
		vs := query[k]
		switch {
		case len(vs) > 1:
			return nil, p.Invalid(k + " given more than once")
		case k == "password":
			return nil, p.Invalid("no password parameter; put the password in the URL (mysql://USER:PASSWORD@HOST/DB)")
		case slices.Contains(own, k):
			if vs[0] == "" {
				return nil, p.Invalid(k + " is empty")
			}
			p.Own[k] = vs[0]
			delete(query, k)
		}
	}

	host, port, db := u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/")
	switch {
	case host == "":
		return nil, p.Invalid("no host after mysql:// (mysql://HOST/DB)")
	case strings.ContainsAny(host, "()[]"):
		// The driver's DSN holds the address in parentheses, and an
		// IPv6 address comes in brackets that Hostname has taken off.
		return nil, p.Invalid("a parenthesis or stray bracket in the host")
	case strings.HasSuffix(u.Host, ":"):
		return nil, p.Invalid("an empty port")
	case u.User != nil && strings.ContainsAny(u.User.Username(), ":\x00"):
		return nil, p.Invalid("a colon or NUL byte in the user name")
	case db == "":
		return nil, p.Invalid("no database after the host (mysql://HOST/DB)")
	case strings.Contains(db, "/"):
		return nil, p.Invalid("the path is one database name (mysql://HOST/DB), not " + strconv.Quote(u.Path))
	case strings.ContainsAny(db, "\x00`"):
		return nil, p.Invalid("a NUL byte or backquote in the database name")
	}
	if port == "" {
		port = DefaultPort
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, p.Invalid("port " + strconv.Quote(port) + " is not a number from 1 to 65535")
	}

	// The driver reads its parameters from a DSN only. This one holds the
	// address, so that what the driver derives from it (the TLS server
	// name) is the URL's host, and the parameters; never a user or a
	// password.
	dsn := "tcp(" + net.JoinHostPort(host, port) + ")/"
	if len(query) > 0 {
		dsn += "?" + query.Encode()
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, p.Invalid(badParam(query) + err.Error())
	}
	cfg.DBName = db
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	p.Config = cfg
	return p, nil
}

// badParam names the first parameter of query, in sorted order, that the
// driver refuses on its own: "parameter NAME: ".
func badParam(query url.Values) string {
	for _, k := range slices.Sorted(maps.Keys(query)) {
		if _, err := mysql.ParseDSN("/?" + url.Values{k: query[k]}.Encode()); err != nil {
			return "parameter " + k + ": "
		}
	}
	return "driver parameters: "
}
