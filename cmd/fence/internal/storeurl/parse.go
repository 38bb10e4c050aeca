// Package storeurl parses the store URLs of the fence command and opens the
// lockers they name: PostgreSQL, DynamoDB, Azure Blob Storage and Google
// Cloud Storage.
//
// A store URL says where the leases live and how the locker behaves; it
// never carries credentials other than a PostgreSQL password, which is
// accepted but discouraged (command lines are visible to other users in
// ps). Credentials come from each SDK's standard environment.
package storeurl

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencekit/fence"
)

// Kind names a backend.
type Kind string

// The backends a store URL can name.
const (
	Postgres  Kind = "postgres"
	DynamoDB  Kind = "dynamodb"
	AzureBlob Kind = "azblob"
	GCS       Kind = "gs"
)

// Spec is a parsed store URL.
type Spec struct {
	// Kind is the backend.
	Kind Kind
	// Redacted is the URL fit for printing: any password replaced by
	// "xxxxx".
	Redacted string
	// Password is the password the URL carries (in its user information
	// or a password query parameter), or "". Callers scrub it from
	// anything they print.
	Password string

	// ConnString is the PostgreSQL connection URL without fence's own
	// parameters, as pgx takes it.
	ConnString string
	// Table is the PostgreSQL lease table ("table" or "schema.table";
	// "" for the locker's default) or the DynamoDB table.
	Table string
	// KeyAttribute is the DynamoDB partition key attribute ("" for the
	// locker's default).
	KeyAttribute string
	// Region is the AWS region ("" for the SDK's default chain).
	Region string
	// Container is the Azure blob container.
	Container string
	// Account is the Azure storage account ("" to take it from the
	// environment).
	Account string
	// Bucket is the Cloud Storage bucket.
	Bucket string
	// Prefix is put before every key to name its Cloud Storage object.
	Prefix string
	// Project is the Google Cloud project in which `fence init` creates
	// the bucket ("" to take it from the environment).
	Project string
	// Endpoint overrides the service endpoint (DynamoDB, Azure, Cloud
	// Storage), for emulators and private endpoints.
	Endpoint string
	// TrustedClock selects trusted-clock expiry (DynamoDB, Cloud
	// Storage); MaxClockSkew goes with it.
	TrustedClock bool
	MaxClockSkew time.Duration
}

// Forms lists the accepted URL forms, for help texts and errors.
const Forms = "postgres://[USER@]HOST[:PORT]/DB[?table=T&sslmode=...], " +
	"dynamodb://TABLE[?region=R&endpoint=URL&trusted-clock=true&max-clock-skew=D&key-attribute=A], " +
	"azblob://CONTAINER[?account=A&endpoint=URL], " +
	"gs://BUCKET[?prefix=P&project=ID&endpoint=URL&trusted-clock=true&max-clock-skew=D]"

func invalid(format string, args ...any) error {
	return &fence.InvalidError{Field: "store URL", Reason: fmt.Sprintf(format, args...)}
}

// Parse parses a store URL. Bad URLs get an error matching fence.ErrInvalid
// whose text never contains the URL's password.
func Parse(raw string) (*Spec, error) {
	if raw == "" {
		return nil, invalid("empty; give --store or set FENCE_STORE (forms: %s)", Forms)
	}
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return nil, invalid("%q has no scheme:// (forms: %s)", redactUnparsed(raw), Forms)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, invalid("%q cannot be parsed: %v", redactUnparsed(raw), err)
	}
	s := &Spec{Redacted: redactUnparsed(raw)}
	if pw, ok := u.User.Password(); ok {
		s.Password = pw
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, invalid("%s: bad query: %v", s.Redacted, err)
	}
	if pw := q.Get("password"); pw != "" && s.Password == "" {
		s.Password = pw
	}
	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		err = s.postgres(raw, q)
	case "dynamodb":
		err = s.dynamo(u, q)
	case "azblob":
		err = s.azblob(u, q)
	case "gs":
		err = s.gcs(u, q)
	default:
		err = invalid("unknown scheme %q (forms: %s)", u.Scheme, Forms)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// HasPassword reports whether the URL carries a password.
func (s *Spec) HasPassword() bool { return s.Password != "" }

func (s *Spec) postgres(raw string, q url.Values) error {
	s.Kind = Postgres
	if len(q["table"]) > 1 {
		return invalid("%s: table given more than once", s.Redacted)
	}
	s.Table = q.Get("table")
	if _, ok := q["table"]; ok && s.Table == "" {
		return invalid("%s: table is empty", s.Redacted)
	}
	s.ConnString = withoutParam(raw, "table")
	return nil
}

// withoutParam returns raw without the query parameter name, the rest as
// written (net/url would rewrite "postgres://" as "postgres:", which pgx
// does not take).
func withoutParam(raw, name string) string {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	var kept []string
	for _, part := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(part, "=")
		if key, err := url.QueryUnescape(k); err == nil && key == name {
			continue
		}
		kept = append(kept, part)
	}
	if len(kept) == 0 {
		return base
	}
	return base + "?" + strings.Join(kept, "&")
}

// name returns the host part of u as the name of a table, container or
// bucket, refusing paths, ports and user information.
func (s *Spec) name(u *url.URL, what string) (string, error) {
	if u.User != nil {
		return "", invalid("%s: no user or password here; credentials come from the environment", s.Redacted)
	}
	if u.Host == "" {
		return "", invalid("%s: no %s name after %s://", s.Redacted, what, u.Scheme)
	}
	if u.Port() != "" || strings.HasSuffix(u.Host, ":") {
		return "", invalid("%s: a %s name has no port; use ?endpoint= for a server", s.Redacted, what)
	}
	if u.Path != "" && u.Path != "/" {
		return "", invalid("%s: unexpected path %q after the %s name", s.Redacted, u.Path, what)
	}
	return u.Host, nil
}

// params reads the query parameters of a cloud URL, refusing unknown ones
// and repeated ones.
type params struct {
	s     *Spec
	q     url.Values
	known map[string]bool
}

func (p *params) str(name string) (string, error) {
	p.known[name] = true
	v := p.q[name]
	switch {
	case len(v) > 1:
		return "", invalid("%s: %s given more than once", p.s.Redacted, name)
	case len(v) == 1 && v[0] == "":
		return "", invalid("%s: %s is empty", p.s.Redacted, name)
	case len(v) == 1:
		return v[0], nil
	}
	return "", nil
}

func (p *params) boolean(name string) (bool, error) {
	v, err := p.str(name)
	if err != nil || v == "" {
		return false, err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalid("%s: %s=%q is not true or false", p.s.Redacted, name, v)
	}
	return b, nil
}

func (p *params) duration(name string) (time.Duration, error) {
	v, err := p.str(name)
	if err != nil || v == "" {
		return 0, err
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, invalid("%s: %s=%q is not a duration such as 500ms or 2s", p.s.Redacted, name, v)
	}
	return d, nil
}

func (p *params) endpoint() (string, error) {
	v, err := p.str("endpoint")
	if err != nil || v == "" {
		return v, err
	}
	e, perr := url.Parse(v)
	if perr != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
		return "", invalid("%s: endpoint %q is not an http:// or https:// URL", p.s.Redacted, redactUnparsed(v))
	}
	if e.User != nil {
		// Not naming the URL: its query may carry the escaped password.
		return "", invalid("the endpoint carries user information; credentials come from the environment")
	}
	return strings.TrimSuffix(v, "/"), nil
}

// done refuses the parameters nobody asked for.
func (p *params) done() error {
	for k := range p.q {
		if !p.known[k] {
			names := make([]string, 0, len(p.known))
			for n := range p.known {
				names = append(names, n)
			}
			return invalid("%s: unknown parameter %q (known: %s)", p.s.Redacted, k, strings.Join(slices.Sorted(slices.Values(names)), ", "))
		}
	}
	return nil
}

// clock reads trusted-clock and max-clock-skew.
func (p *params) clock() error {
	var err error
	if p.s.TrustedClock, err = p.boolean("trusted-clock"); err != nil {
		return err
	}
	if p.s.MaxClockSkew, err = p.duration("max-clock-skew"); err != nil {
		return err
	}
	if p.s.MaxClockSkew != 0 && !p.s.TrustedClock {
		return invalid("%s: max-clock-skew needs trusted-clock=true", p.s.Redacted)
	}
	return nil
}

func (s *Spec) dynamo(u *url.URL, q url.Values) error {
	s.Kind = DynamoDB
	var err error
	if s.Table, err = s.name(u, "table"); err != nil {
		return err
	}
	p := &params{s: s, q: q, known: map[string]bool{}}
	if s.Region, err = p.str("region"); err != nil {
		return err
	}
	if s.Endpoint, err = p.endpoint(); err != nil {
		return err
	}
	if s.KeyAttribute, err = p.str("key-attribute"); err != nil {
		return err
	}
	if err = p.clock(); err != nil {
		return err
	}
	return p.done()
}

func (s *Spec) azblob(u *url.URL, q url.Values) error {
	s.Kind = AzureBlob
	var err error
	if s.Container, err = s.name(u, "container"); err != nil {
		return err
	}
	p := &params{s: s, q: q, known: map[string]bool{}}
	if s.Account, err = p.str("account"); err != nil {
		return err
	}
	if s.Endpoint, err = p.endpoint(); err != nil {
		return err
	}
	return p.done()
}

func (s *Spec) gcs(u *url.URL, q url.Values) error {
	s.Kind = GCS
	var err error
	if s.Bucket, err = s.name(u, "bucket"); err != nil {
		return err
	}
	p := &params{s: s, q: q, known: map[string]bool{}}
	p.known["prefix"] = true
	if v := q["prefix"]; len(v) > 1 {
		return invalid("%s: prefix given more than once", s.Redacted)
	}
	s.Prefix = q.Get("prefix") // may be empty
	if s.Project, err = p.str("project"); err != nil {
		return err
	}
	if s.Endpoint, err = p.endpoint(); err != nil {
		return err
	}
	if err = p.clock(); err != nil {
		return err
	}
	return p.done()
}
