package dynamo

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	good := map[string]urlConfig{
		"dynamodb://locks":  {table: "locks"},
		"dynamodb://locks/": {table: "locks"},
		"dynamodb://App.locks-1_x?region=eu-west-1&endpoint=http://127.0.0.1:8000/&key-attribute=lock_id": {
			table: "App.locks-1_x", region: "eu-west-1", endpoint: "http://127.0.0.1:8000", keyAttribute: "lock_id",
		},
		"dynamodb://locks?trusted-clock=true":                     {table: "locks", mode: clockfree.Mode{TrustedClock: true}},
		"dynamodb://locks?trusted-clock=true&max-clock-skew=1.5s": {table: "locks", mode: clockfree.Mode{TrustedClock: true, MaxClockSkew: 1500 * time.Millisecond}},
		"dynamodb://locks?trusted-clock=false":                    {table: "locks"},
		"dynamodb://locks?probe-interval=250ms":                   {table: "locks", probe: 250 * time.Millisecond},
		"dynamodb://locks?probe-interval=off":                     {table: "locks", probe: probe.Off},
	}
	for raw, want := range good {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || got != want {
			t.Errorf("parseURL(%s) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	bad := []string{
		"dynamodb://",
		"dynamodb:///locks",
		"dynamodb://lk",
		"dynamodb://app!locks",
		"dynamodb://locks:8000",
		"dynamodb://locks/extra",
		"dynamodb://user:s3cr3t-pw@locks",
		"dynamodb://locks?password=s3cr3t-pw",
		"dynamodb://locks?table=other",
		"dynamodb://locks?region=",
		"dynamodb://locks?region=a&region=b",
		"dynamodb://locks?endpoint=localhost:8000",
		"dynamodb://locks?endpoint=http://me:s3cr3t-pw@localhost:8000",
		"dynamodb://locks?key-attribute=token",
		"dynamodb://locks?probe-interval=0",
		"dynamodb://locks?probe-interval=5ms",
		"dynamodb://locks?probe-interval=soon",
		"dynamodb://locks?key-attribute=" + strings.Repeat("k", 256),
		"dynamodb://locks?max-clock-skew=1s",
		"dynamodb://locks?trusted-clock=yes",
		"dynamodb://locks?trusted-clock=true&max-clock-skew=-1s",
		"dynamodb://locks?trusted-clock=true&max-clock-skew=2h",
		"dynamodb://locks?trusted-clock=true&max-clock-skew=soon",
	}
	for _, raw := range bad {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%s) = %v; want an error matching ErrInvalid", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("parseURL(%s): %v shows the password", raw, err)
		}
	}
}

// FuzzParseURL checks that parseURL never panics, accepts only what New
// accepts, refuses with ErrInvalid, and never shows a password: the same
// URL with every password (user information, a password parameter, an
// endpoint's user information) replaced by a marker gets an error without
// the marker.
func FuzzParseURL(f *testing.F) {
	f.Add("dynamodb://locks?region=eu-west-1&endpoint=http://127.0.0.1:8000&key-attribute=id&trusted-clock=true&max-clock-skew=2s")
	f.Add("dynamodb://u:pass@locks?password=secret")
	f.Add("dynamodb://locks?endpoint=http://u:secret@h&max-clock-skew=1s")
	f.Add("dynamodb://locks?region=a&password=pw&region=b")
	f.Add("dynamodb://lo%41ks/x?region=&&=")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want an error matching ErrInvalid", raw, err)
			}
		} else if _, err := New(&dynamodb.Client{}, c.table, &Options{KeyAttribute: c.keyAttribute, TrustedClock: c.mode.TrustedClock, MaxClockSkew: c.mode.MaxClockSkew}); err != nil {
			t.Fatalf("parseURL(%q) accepted %+v, which New refuses: %v", raw, c, err)
		}
		marked := userPassword.ReplaceAllString(raw, "${1}"+pwMarker+"${3}")
		if base, query, ok := strings.Cut(marked, "?"); ok {
			for _, re := range queryPasswords {
				query = re.ReplaceAllString(query, "${1}"+pwMarker+"${3}")
			}
			marked = base + "?" + query
		}
		if mu, perr := url.Parse(marked); perr == nil && marked != raw {
			if _, err := parseURL(mu); err != nil && strings.Contains(err.Error(), pwMarker) {
				t.Fatalf("parseURL(%q) = %v, which shows the password", marked, err)
			}
		}
	})
}

// pwMarker stands for a password in FuzzParseURL.
const pwMarker = "Zq9pwMARK"

// userPassword matches the password of a URL's user information, in
// group 2; queryPasswords match the passwords of a query.
var (
	userPassword   = regexp.MustCompile(`^([^:]*://[^:/@?#]*:)([^@/?#]*)(@)`)
	queryPasswords = []*regexp.Regexp{
		regexp.MustCompile(`((?:^|&)password=)([^&#]*)()`),
		regexp.MustCompile(`((?:^|&)endpoint=[a-z]+://[^:/@&#]*:)([^@/&#]*)(@)`),
	}
)

// TestOpenLocker opens a locker on the emulator by URL, with a Clock and
// an HTTP client of the test's: a missing table matches ErrStoreMissing,
// Create creates it with the URL's key attribute, and Acquire and Release
// work and go through the client.
func TestOpenLocker(t *testing.T) {
	t.Parallel()
	endpoint := testenv.DynamoEndpoint(t)
	table := uniqueName("fence-url-")
	clock := clocktest.New(time.Now())
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	requests := &counter{next: tr}
	raw := "dynamodb://" + table + "?region=us-east-1&key-attribute=lock_id&trusted-clock=true&max-clock-skew=250ms&endpoint=" + url.QueryEscape(endpoint)
	l, err := fence.OpenLocker(t.Context(), raw, &fence.OpenOptions{Clock: clock, HTTPClient: &http.Client{Transport: requests}})
	if err != nil {
		t.Fatalf("OpenLocker(%s): %v", raw, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if name := l.Name(); name != "dynamo" {
		t.Errorf("Name() = %q; want dynamo", name)
	}
	d := storeOf(t, l)
	if d.keyAttr != "lock_id" || d.mode != (clockfree.Mode{TrustedClock: true, MaxClockSkew: 250 * time.Millisecond}) || d.clock != fence.Clock(clock) {
		t.Errorf("the opened store has key attribute %q, mode %+v, clock %v; want what the URL and options say", d.keyAttr, d.mode, d.clock)
	}

	if _, err := l.Acquire(t.Context(), "job", time.Minute, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Acquire before Create: %v; want ErrStoreMissing", err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	check := emulators.DynamoClient(t, nil)
	t.Cleanup(func() { deleteTable(t, check, table) })
	desc, err := check.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTable after Create: %v", err)
	}
	if err := checkSchema(table, "lock_id", desc.Table); err != nil {
		t.Fatalf("the table Create made: %v", err)
	}

	before := requests.total.Load()
	lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if !lease.ValidUntil.Equal(clock.Now().Add(time.Minute)) {
		t.Errorf("ValidUntil %v; want the test clock's now plus TTL, %v", lease.ValidUntil, clock.Now().Add(time.Minute))
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if n := requests.total.Load() - before; n != 2 {
		t.Errorf("Acquire and Release made %d requests through the given HTTP client; want 2", n)
	}
}

// TestOpenLockerDefaults opens a locker by URL with fence.OpenLocker
// alone: the SDK's environment supplies region and credentials.
func TestOpenLockerDefaults(t *testing.T) {
	t.Parallel()
	endpoint := testenv.DynamoEndpoint(t)
	table := newTable(t, emulators.DynamoClient(t, nil), nil)
	l, err := fence.OpenLocker(t.Context(), "dynamodb://"+table+"?endpoint="+url.QueryEscape(endpoint), nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	lease, err := l.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create of an existing table: %v", err)
	}
}

func TestURLForm(t *testing.T) {
	t.Parallel()
	_, forms := driver.LockerSchemes()
	if !slices.Contains(forms, urlOpener{}.URLForm()) || !strings.HasPrefix(urlOpener{}.URLForm(), "dynamodb://TABLE") {
		t.Errorf("URL forms %q lack dynamodb's %q", forms, urlOpener{}.URLForm())
	}
}

// TestAs: As gives the client under a Locker, the caller's from New and
// the one the opener made from a URL, as a DynamoDBAPI and as a
// *dynamodb.Client where it is one, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	client := &dynamodb.Client{}
	l, err := New(client, "locks", nil)
	if err != nil {
		t.Fatal(err)
	}
	var api DynamoDBAPI
	var c *dynamodb.Client
	if !l.As(&api) || api != DynamoDBAPI(client) || !l.As(&c) || c != client {
		t.Errorf("As of New's Locker gave %v and %v; want the client given to New", api, c)
	}
	var table TableAPI
	if l.As(&table) || l.As(nil) || l.As(client) {
		t.Error("As succeeded for a target it does not give")
	}

	items, err := New(itemsOnly{client}, "locks", nil)
	if err != nil {
		t.Fatal(err)
	}
	c = nil
	if !items.As(&api) || api != DynamoDBAPI(itemsOnly{client}) || items.As(&c) || c != nil {
		t.Errorf("As of a Locker over a DynamoDBAPI that is no *dynamodb.Client gave %v and %v; want only the DynamoDBAPI", api, c)
	}

	opened, err := fence.OpenLocker(t.Context(), "dynamodb://locks?region=us-east-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if c = nil; !opened.As(&c) || c == nil {
		t.Error("As(**dynamodb.Client) of an opened Locker gave no client")
	}
}
