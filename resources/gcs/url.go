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
	// envGoogleProject names the project in which Create makes the bucket
	// when the URL has no project parameter.
	envGoogleProject = "GOOGLE_CLOUD_PROJECT"
	// envEmulatorHost points the SDK at an emulator, without credentials
	// (the SDK reads it; Create then needs no project).
	envEmulatorHost = "STORAGE_EMULATOR_HOST"
)

func init() { driver.RegisterResource("gs", urlOpener{}) }

// urlOpener opens resources from gs:// URLs (see the package doc).
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string { return "gs://BUCKET[?prefix=P&project=ID&endpoint=URL]" }

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
func (urlOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := c.client(ctx, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: backendName, Op: "open", Err: err}
	}
	handle := client.Bucket(c.bucket)
	r, err := newResource(handle, &Options{Prefix: c.prefix}, &driver.ResourceOptions{
		Create: func(ctx context.Context) error { return c.createBucket(ctx, handle) },
		Close:  client.Close,
	})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return r, nil
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
		if os.Getenv(envEmulatorHost) == "" {
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
// is not an error. Its errors are bare, as a driver's: the
// *fence.Resource's Create wraps them.
func (c urlConfig) createBucket(ctx context.Context, handle *storage.BucketHandle) error {
	project := c.project
	if project == "" {
		project = os.Getenv(envGoogleProject)
	}
	if project == "" {
		if os.Getenv(envEmulatorHost) == "" && c.endpoint == "" {
			return &fence.InvalidError{Field: "project", Reason: "creating a bucket needs a project: add ?project=ID to the URL or set " + envGoogleProject}
		}
		project = "emulator" // emulators take any
	}
	return gcsbucket.Create(ctx, handle, project, nil)
}
