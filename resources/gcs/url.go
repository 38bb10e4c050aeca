package gcs

import (
	"context"
	"net/http"
	"net/url"
	"os"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/internal/urlparam"
)

// Environment variables the opener reads, besides those of the SDK's
// Application Default Credentials.
const (
	// EnvGoogleProject names the project in which Create makes the bucket
	// when the URL has no project parameter.
	EnvGoogleProject = "GOOGLE_CLOUD_PROJECT"
	// EnvEmulatorHost points the SDK at an emulator, without credentials
	// (the SDK reads it; Create then needs no project).
	EnvEmulatorHost = "STORAGE_EMULATOR_HOST"
)

func init() { driver.RegisterResource("gs", URLOpener{}) }

// URLOpener opens resources from URLs of the form
//
//	gs://BUCKET[?prefix=P&project=ID&endpoint=URL]
//
// with a client built by storage.NewClient, which takes credentials from
// Application Default Credentials, or none when STORAGE_EMULATOR_HOST
// points at an emulator. prefix is Options.Prefix; endpoint is the base
// URL of a Cloud Storage server other than Google's (the JSON API is
// ENDPOINT/storage/v1/); project names the project the Opened's Create
// makes the bucket in (default: GOOGLE_CLOUD_PROJECT; any on an emulator).
// Create succeeds when the bucket exists already. OpenOptions.HTTPClient,
// when set, carries the SDK's requests, with the SDK's credentials added
// to them (none on an emulator). The Opened's Close closes the client.
type URLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (URLOpener) URLForm() string { return "gs://BUCKET[?prefix=P&project=ID&endpoint=URL]" }

// urlConfig is what a gs:// URL says.
type urlConfig struct {
	bucket, prefix, project, endpoint string
}

// parseURL reads a gs:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	var c urlConfig
	c.bucket = p.Name("bucket")
	c.prefix = p.Optional("prefix")
	c.project = p.String("project")
	c.endpoint = p.Endpoint()
	return c, p.Done()
}

// OpenResourceURL implements driver.ResourceOpener.
func (URLOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	client, err := c.client(ctx, urlparam.HTTPClient(opts))
	if err != nil {
		return none, &fence.OpError{Backend: backendName, Op: "open", Err: err}
	}
	handle := client.Bucket(c.bucket)
	r, err := New(handle, &Options{Prefix: c.prefix})
	if err != nil {
		_ = client.Close()
		return none, err
	}
	create := func(ctx context.Context) error { return c.createBucket(ctx, handle) }
	return fence.Opened[*fence.Resource]{Value: r.PortableResource, Create: create, Close: client.Close}, nil
}

// client builds the Cloud Storage client of c. With hc, the SDK's requests
// go through hc's transport, under the credentials the SDK would use
// (option.WithHTTPClient alone would send them without any).
func (c urlConfig) client(ctx context.Context, hc *http.Client) (*storage.Client, error) {
	var opts []option.ClientOption
	if c.endpoint != "" {
		opts = append(opts, option.WithEndpoint(c.endpoint+"/storage/v1/"))
	}
	if hc != nil {
		if os.Getenv(EnvEmulatorHost) == "" {
			base := hc.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			rt, err := htransport.NewTransport(ctx, base, option.WithScopes(storage.ScopeFullControl))
			if err != nil {
				return nil, err
			}
			cp := *hc
			cp.Transport = rt
			hc = &cp
		}
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return storage.NewClient(ctx, opts...)
}

// createBucket makes the bucket in c's project; one that exists already
// is not an error. Its errors are bare, as a driver's: the portable type
// wraps them (as PortableLocker.Create does).
func (c urlConfig) createBucket(ctx context.Context, handle *storage.BucketHandle) error {
	project := c.project
	if project == "" {
		project = os.Getenv(EnvGoogleProject)
	}
	if project == "" {
		if os.Getenv(EnvEmulatorHost) == "" && c.endpoint == "" {
			return &fence.InvalidError{Field: "project", Reason: "creating a bucket needs a project: add ?project=ID to the URL or set " + EnvGoogleProject}
		}
		project = "emulator" // emulators take any
	}
	return gcsbucket.Create(ctx, handle, project, nil)
}
