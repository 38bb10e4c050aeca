// Package sqlitefile reads the sqlite:// URLs of the SQLite locker and
// resource openers, which name a file the same way, and tells SQLite's
// busy answers apart.
package sqlitefile

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fencekit/fence/internal/urlparam"
)

// DefaultBusyTimeout is how long a database opened from a URL waits for
// another writer's lock when the URL gives no busy-timeout.
const DefaultBusyTimeout = 10 * time.Second

// BusyTimeoutParam is the URL parameter of the busy timeout.
const BusyTimeoutParam = "busy-timeout"

// DSN reads the file and the busy-timeout parameter of a sqlite:// URL,
// sqlite:///abs/path (no host) or sqlite://rel/path (the host is the
// path's first part), with p, and returns the modernc.org/sqlite DSN that
// opens it: in WAL mode, with write transactions that take the lock when
// they begin, waiting up to the busy timeout for another writer's. The
// file is made when missing. A bad URL is recorded in p; DSN contacts
// nothing.
func DSN(p *urlparam.Params, u *url.URL) string {
	timeout := p.Duration(BusyTimeoutParam)
	if timeout == 0 {
		timeout = DefaultBusyTimeout
	}
	path := u.Host + u.Path
	switch {
	case u.User != nil:
		p.Fail("no user or password in an SQLite URL")
	case u.Port() != "" || strings.HasSuffix(u.Host, ":"):
		p.Fail("no port in an SQLite URL; the path follows sqlite://")
	case path == "" || path == "/" || strings.HasSuffix(path, "/"):
		p.Fail("no file after sqlite:// (sqlite:///abs/path.db or sqlite://rel/path.db)")
	case strings.IndexByte(path, 0) >= 0:
		p.Fail("a NUL byte in the path")
	}
	return "file:" + escape.Replace(path) +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.FormatInt(timeout.Milliseconds(), 10) + ")&_txlock=immediate"
}

// escape escapes what SQLite's URI filenames and the driver's DSN
// parsing would read in a path.
var escape = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// Busy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED, with
// any extended code: another connection held a lock the statement needed,
// and nothing was written; running it again can succeed.
func Busy(err error) bool {
	var code interface{ Code() int }
	if errors.As(err, &code) {
		c := code.Code() & 0xff
		return c == 5 || c == 6
	}
	return false
}
