package zookeeper

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw              string
		servers          []string
		root             string
		user, password   string
		session, connect time.Duration
	}{
		{"zk://127.0.0.1:2181", []string{"127.0.0.1:2181"}, DefaultRoot, "", "", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://c,a:1,b:2/", []string{"c:2181", "a:1", "b:2"}, DefaultRoot, "", "", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://zk1/app/locks?session-timeout=6s&connect-timeout=1s", []string{"zk1:2181"}, "/app/locks", "", "", 6 * time.Second, time.Second},
		{"zk://zk1/app/locks/", []string{"zk1:2181"}, "/app/locks", "", "", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://app:s3cret@zk1:1/x", []string{"zk1:1"}, "/x", "app", "s3cret", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://app:p%40ss@zk1:1", []string{"zk1:1"}, DefaultRoot, "app", "p@ss", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://[::1]:2181/x", []string{"[::1]:2181"}, "/x", "", "", defaultSessionTimeout, defaultConnectTimeout},
		{"zk://[::1]/x", []string{"[::1]:2181"}, "/x", "", "", defaultSessionTimeout, defaultConnectTimeout},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			c, err := parseURL(mustParse(t, tt.raw))
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			switch {
			case !slices.Equal(c.servers, tt.servers):
				t.Errorf("servers %q, want %q", c.servers, tt.servers)
			case c.root != tt.root:
				t.Errorf("root %q, want %q", c.root, tt.root)
			case c.user != tt.user || c.password != tt.password:
				t.Errorf("user %q password %q, want %q %q", c.user, c.password, tt.user, tt.password)
			case c.sessionTimeout != tt.session || c.connectTimeout != tt.connect:
				t.Errorf("session-timeout %v connect-timeout %v, want %v %v", c.sessionTimeout, c.connectTimeout, tt.session, tt.connect)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"zk://", "want zk://HOST"},
		{"zk:opaque", "want zk://HOST"},
		{"zk://app:s3cret@a:1,:2", `server ":2"`},
		{"zk://app:s3cret@a:1,b:c:1", "not HOST[:PORT]"},
		{"zk://app:s3cret@zk1?session-timeout=soon", "session-timeout"},
		{"zk://app:s3cret@zk1?session-timeout=", "session-timeout is empty"},
		{"zk://app:s3cret@zk1?session-timeout=100ms", "session-timeout"},
		{"zk://app:s3cret@zk1?session-timeout=1.5us", "session-timeout"},
		{"zk://app:s3cret@zk1?connect-timeout=-1s", "connect-timeout"},
		{"zk://app:s3cret@zk1?sesion-timeout=1s", `unknown parameter "sesion-timeout"`},
		{"zk://app:s3cret@zk1//", "ends with a slash"},
		{"zk://app:s3cret@zk1/a//b", "empty component"},
		{"zk://app:s3cret@zk1/a/../b", ". or .. component"},
		{"zk://app:s3cret@zk1/a%01b", "refuses in paths"},
		{"zk://:s3cret@zk1", "password without a user"},
		{"zk://app:s3cret@zk1?password=s3cret", "unknown parameter"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := parseURL(mustParse(t, tt.raw))
			if err == nil {
				t.Fatalf("parseURL succeeded; want an error with %q", tt.want)
			}
			if !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("error %v does not match fence.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// The URL form is what the opener is registered with.
func TestURLForm(t *testing.T) {
	t.Parallel()
	schemes, forms := driver.LockerSchemes()
	if !slices.Contains(schemes, "zk") {
		t.Fatalf("LockerSchemes() = %q; want zk among them", schemes)
	}
	if !slices.Contains(forms, urlOpener{}.URLForm()) {
		t.Errorf("LockerSchemes() lacks the URL form %q", urlOpener{}.URLForm())
	}
}

func TestOpenLocker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	root := uniqueRoot("url")
	l, err := fence.OpenLocker(ctx, "zk://"+sharedServers(t)+root+"?session-timeout=6s&connect-timeout=5s", nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	if got := driver.InfoOf(l).MaxTTL; got != 4*time.Second {
		t.Errorf("MaxTTL = %v; want two thirds of the 6 s session timeout", got)
	}
	if err := l.Create(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Create = %v; want an error matching errors.ErrUnsupported (nothing to create)", err)
	}
	lease, err := l.Acquire(ctx, "k", 3*time.Second, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// The opened locker keeps its nodes under the URL's root.
	c := connect(t, sharedServers(t), testSessionTimeout)
	children, _, err := c.Children(root + "/k")
	if err != nil || len(children) != 1 {
		t.Fatalf("Children(%q) = %q, %v; want the lease's lock node", root+"/k", children, err)
	}
	_, st, err := c.Exists(root + "/k/" + children[0])
	if err != nil || st.Czxid != int64(lease.Token) {
		t.Fatalf("the lock node's czxid is %d (%v); want the token %d", st.Czxid, err, lease.Token)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	var conn *zk.Conn
	if !l.As(&conn) || conn == nil || conn.State() != zk.StateHasSession {
		t.Fatalf("As(**zk.Conn) gave %v on the opened Locker; want its connection, with a session", conn)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, _, err := conn.Exists(root); err == nil {
		t.Errorf("Exists through the connection As gave succeeded after Close; want it closed")
	}
	if _, err := l.Inspect(ctx, "k"); err == nil {
		t.Errorf("Inspect after Close succeeded; want an error (Close closes the connection the opener made)")
	}
}

// A server that cannot be reached fails the open within connect-timeout,
// and the error does not show the password.
func TestOpenLockerErrorHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := fence.OpenLocker(t.Context(), "zk://app:s3cret@127.0.0.1:1/?connect-timeout=300ms", nil)
	if err == nil {
		t.Fatal("OpenLocker of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q shows the password", err)
	}
	t.Logf("error: %v", err)
}
