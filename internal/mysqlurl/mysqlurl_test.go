package mysqlurl

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

var own = []string{"table", "fence-table", "value-table"}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, addr, user, pw, db string
		own, params             map[string]string
		check                   func(t *testing.T, p *Parsed)
	}{
		{raw: "mysql://app@db:3307/app", addr: "db:3307", user: "app", db: "app"},
		{raw: "mysql://app:pw@db/app?table=ops.locks", addr: "db:3306", user: "app", pw: "pw", db: "app", own: map[string]string{"table": "ops.locks"}},
		{raw: "mysql://db/app?fence-table=f&value-table=v&innodb_lock_wait_timeout=1", addr: "db:3306", db: "app",
			own: map[string]string{"fence-table": "f", "value-table": "v"}, params: map[string]string{"innodb_lock_wait_timeout": "1"}},
		{raw: "mysql://app:p%40ss%2Fw:rd@[::1]/app", addr: "[::1]:3306", user: "app", pw: "p@ss/w:rd", db: "app"},
		{raw: "MYSQL://db:65535/a%3Fb", addr: "db:65535", db: "a?b"},
		{raw: "mysql://db/app?parseTime=true&timeout=2s&interpolateParams=true", addr: "db:3306", db: "app", check: func(t *testing.T, p *Parsed) {
			if c := p.Config; !c.ParseTime || c.Timeout != 2*time.Second || !c.InterpolateParams {
				t.Errorf("parseTime %v timeout %v interpolateParams %v", c.ParseTime, c.Timeout, c.InterpolateParams)
			}
		}},
		// The driver names the TLS server after the address it parsed: the
		// URL's host, not its own default.
		{raw: "mysql://db.example/app?tls=true", addr: "db.example:3306", db: "app", check: func(t *testing.T, p *Parsed) {
			if p.Config.TLS == nil || p.Config.TLS.ServerName != "db.example" {
				t.Errorf("TLS = %+v, want server name db.example", p.Config.TLS)
			}
		}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			u.Scheme = strings.ToLower(u.Scheme) // as fence.OpenLocker does
			p, err := Parse(u, own...)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c := p.Config
			if c.Net != "tcp" || c.Addr != tc.addr || c.User != tc.user || c.Passwd != tc.pw || c.DBName != tc.db {
				t.Errorf("Parse = %s %s user %q pw %q db %q; want tcp %s %q %q %q", c.Net, c.Addr, c.User, c.Passwd, c.DBName, tc.addr, tc.user, tc.pw, tc.db)
			}
			if len(p.Own) != len(tc.own) {
				t.Errorf("Own = %v, want %v", p.Own, tc.own)
			}
			for k, v := range tc.own {
				if p.Own[k] != v {
					t.Errorf("Own[%s] = %q, want %q", k, p.Own[k], v)
				}
			}
			for k, v := range tc.params {
				if c.Params[k] != v {
					t.Errorf("Params[%s] = %q, want %q", k, c.Params[k], v)
				}
			}
			for _, k := range own {
				if _, ok := c.Params[k]; ok {
					t.Errorf("the driver got fence's parameter %s: %v", k, c.Params)
				}
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"mysql:app", "want mysql://"},
		{"mysql://app:secretpw@db/app#x", "unexpected fragment"},
		{"mysql://app:secretpw@db/app?x=%zz", "query cannot be parsed"},
		{"mysql://app:secretpw@db/app?tls=true&tls=false", "tls given more than once"},
		{"mysql://app:secretpw@db/app?table=a&table=b", "table given more than once"},
		{"mysql://app:secretpw@db/app?table=", "table is empty"},
		{"mysql://app:secretpw@db/app?password=secretpw", "no password parameter"},
		{"mysql://app:secretpw@/app", "no host"},
		{"mysql://app:secretpw@:3306/app", "no host"},
		{"mysql:///app", "no host"},
		{"mysql://app:secretpw@db:/app", "empty port"},
		{"mysql://]/app", "stray bracket in the host"},
		{"mysql://h(x)/app", "parenthesis"},
		{"mysql://app:secretpw@db:0/app", "not a number from 1 to 65535"},
		{"mysql://app:secretpw@db:65536/app", "not a number from 1 to 65535"},
		{"mysql://a%3Ab:secretpw@db/app", "colon or NUL byte in the user name"},
		{"mysql://a%00b:secretpw@db/app", "colon or NUL byte in the user name"},
		{"mysql://app:secretpw@db", "no database"},
		{"mysql://app:secretpw@db/", "no database"},
		{"mysql://app:secretpw@db/a/b", "one database name"},
		{"mysql://app:secretpw@db/a%60b", "backquote"},
		{"mysql://app:secretpw@db/a%00b", "NUL byte"},
		{"mysql://app:secretpw@db/app?tls=bogus", "parameter tls: "},
		{"mysql://app:secretpw@db/app?a=1&timeout=soon", "parameter timeout: "},
		{"mysql://app:secretpw@db/app?parseTime=maybe", "parameter parseTime: "},
		{"mysql://app:secretpw@db/secretpw?tls=bogus", "mysql://db/xxxxx: "},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(u, own...)
			ie, ok := errors.AsType[*fence.InvalidError](err)
			if !ok || ie.Field != "url" || !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %+v, %v; want an InvalidError for url saying %q", p, err, tc.want)
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// FuzzParse checks that Parse never panics; that it refuses only with an
// InvalidError for url that does not show the password; and that what it
// accepts reads back as the URL says (user, password, database, TCP to
// HOST:PORT) with the password in Config.Passwd only: not in the DSN of
// the configuration without it, nor in the driver's parameters, where no
// own parameter goes either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"mysql://app:pw@db:3306/app?table=t&parseTime=true", "mysql://u@[::1]/d?timeout=1s",
		"mysql://app:pw@db:3306/app?tls=true&fence-table=f", "mysql://u:p@ss@db/a", "mysql://db/a%3Fb?loc=Europe%2FParis",
		"mysql://db/app?password=secret", "mysql://u:pw@db/app?tls=bogus&value-table=a.b", "mysql:///?table=a.b",
		"mysql://u:p%zz@h/d", "mysql://h/d?tls=skip-verify&loc=Local", "mysql://h/d?table=%60", "mysql://h(x)/d", "mysql://]/0", "mysql://[::1%25eth0]:5/d",
		"mysql://u:secret@db/app?sql_mode=secret", "mysql://u:s%26c%3Dret@db:1/d?x=%27",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		u.Scheme = strings.ToLower(u.Scheme)
		pw, hasPW := u.User.Password()
		p, err := Parse(u, own...)
		if err != nil {
			ie, ok := errors.AsType[*fence.InvalidError](err)
			if !ok || ie.Field != "url" {
				t.Fatalf("Parse(%q) = %v; want an InvalidError for url", raw, err)
			}
			// A password long enough not to occur in the message by
			// chance must not be in it.
			if hasPW && len(pw) >= 6 && strings.Contains(err.Error(), pw) {
				t.Fatalf("Parse(%q) = %v shows the password", raw, err)
			}
			return
		}
		c := p.Config
		if c.Net != "tcp" || c.User != u.User.Username() || c.Passwd != pw || c.DBName != strings.TrimPrefix(u.Path, "/") || c.DBName == "" {
			t.Fatalf("Parse(%q) = net %q user %q password %q db %q", raw, c.Net, c.User, c.Passwd, c.DBName)
		}
		port := u.Port()
		if port == "" {
			port = DefaultPort
		}
		if want := net.JoinHostPort(u.Hostname(), port); c.Addr != want {
			t.Fatalf("Parse(%q) = address %q, want %q", raw, c.Addr, want)
		}
		for _, k := range own {
			if _, ok := c.Params[k]; ok {
				t.Fatalf("Parse(%q) hands the driver %s", raw, k)
			}
		}
		// The DSN of the configuration without the password holds it
		// only where the URL shows it outside its user information.
		cfg := c.Clone()
		cfg.Passwd = ""
		dsn := cfg.FormatDSN()
		visible := u.User.Username() + u.Host + u.Path + u.RawQuery
		if len(pw) >= 6 && strings.Contains(dsn, pw) && !strings.Contains(visible, pw) {
			t.Fatalf("Parse(%q): DSN %q holds the password", raw, dsn)
		}
		for _, v := range c.Params {
			if len(pw) >= 6 && strings.Contains(v, pw) && !strings.Contains(visible, pw) {
				t.Fatalf("Parse(%q): driver parameters %v hold the password", raw, c.Params)
			}
		}
		if !strings.Contains(p.Invalid("x").Error(), "x") || (len(pw) >= 6 && strings.Contains(p.Invalid(pw).Error(), pw)) {
			t.Fatalf("Parse(%q).Invalid shows the password", raw)
		}
	})
}
