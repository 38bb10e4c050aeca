package gcs

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("gs", urlOpener{}) }

// Environment variables the opener reads, besides those of the SDK's
// Application Default Credentials.
const (
	// envProject names the project in which Create makes a bucket when
	// the URL has no project parameter.
	envProject = "GOOGLE_CLOUD_PROJECT"
	// envEmulator points storage.NewClient at an emulator, without
	// credentials.
	envEmulator = "STORAGE_EMULATOR_HOST"
)

// urlOpener opens Cloud Storage lockers from URLs of the form of URLForm
// (see the package doc, "Opening from a URL").
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "gs://BUCKET[?prefix=P&project=ID&endpoint=URL&backoff=D&" + clockfree.URLForm + "&" + probe.URLForm + "]"
}

// config is what a gs:// URL says.
type config struct {
	bucket   string
	prefix   string
	project  string
	endpoint string        // without a trailing slash
	backoff  time.Duration // Options.Backoff; 0 for DefaultBackoff
	mode     clockfree.Mode
	probe    time.Duration // Options.ProbeInterval
	url      string        // the URL, for errors
}

// parseURL reads u, a gs:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (config, error) {
	p := urlparam.New(u)
	c := config{bucket: p.Name("bucket"), url: u.Redacted()}
	if c.bucket != "" {
		if why := badBucketName(c.bucket); why != "" {
			p.Fail("bucket name %q %s", c.bucket, why)
		}
	}
	c.prefix = p.Optional("prefix")
	if ie, ok := checkPrefix(c.prefix).(*fence.InvalidError); ok {
		p.Fail("prefix: %s", ie.Reason)
	}
	c.project = p.String("project")
	c.endpoint = p.Endpoint()
	c.backoff, c.mode, c.probe = objlock.ParseURLParams(p, maxBackoff)
	if err := p.Done(); err != nil {
		return config{}, err
	}
	return c, nil
}

// badBucketName says what is wrong with a bucket name, after Cloud
// Storage's rules: 3 to 222 bytes of lower-case letters, digits, dashes,
// underscores and dots, starting and ending with a letter or digit. ""
// when nothing is.
func badBucketName(name string) string {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	if len(name) < 3 || len(name) > 222 {
		return "is not 3 to 222 characters long"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return "may hold only lower-case letters, digits, dashes, underscores and dots"
		}
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return "must start and end with a letter or digit"
	}
	return ""
}

// clientOptions returns the options of the client c needs, over hc when
// it is not nil.
func (c config) clientOptions(hc *http.Client) []option.ClientOption {
	var opts []option.ClientOption
	if c.endpoint != "" {
		opts = append(opts, option.WithEndpoint(c.endpoint+"/storage/v1/"))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return opts
}

// createProject returns the project in which to create the bucket: the
// URL's, else $GOOGLE_CLOUD_PROJECT; on an emulator (an endpoint, or
// STORAGE_EMULATOR_HOST), any name does.
func (c config) createProject(getenv func(string) string) (string, error) {
	switch {
	case c.project != "":
		return c.project, nil
	case getenv(envProject) != "":
		return getenv(envProject), nil
	case c.endpoint != "" || getenv(envEmulator) != "":
		return "emulator", nil
	}
	return "", &fence.InvalidError{Field: "url", Reason: fmt.Sprintf("%s: creating a bucket needs a project: add ?project=ID or set %s", c.url, envProject)}
}

// OpenLockerURL implements driver.LockerOpener. It makes a client but
// does not call Cloud Storage. The Locker's Create makes the bucket, and
// its Close closes the client.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := storage.NewClient(ctx, c.clientOptions(urlparam.HTTPClient(opts))...)
	if err != nil {
		return nil, &fence.OpError{Backend: "gcs", Op: "open", Err: fmt.Errorf("Cloud Storage client: %w", err)}
	}
	bucket := client.Bucket(c.bucket)
	d, err := newStore(bucket, &Options{
		Prefix:        c.prefix,
		Clock:         urlparam.Clock(opts),
		TrustedClock:  c.mode.TrustedClock,
		MaxClockSkew:  c.mode.MaxClockSkew,
		Backoff:       c.backoff,
		ProbeInterval: c.probe,
	}, nil)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	create := func(ctx context.Context) error {
		project, err := c.createProject(os.Getenv)
		if err != nil {
			return err
		}
		return createBucket(ctx, bucket, project)
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: d.Clock(), Create: create, Close: client.Close})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return l, nil
}
