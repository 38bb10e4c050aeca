package gcs

import (
	"net/http"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestConformance runs the resource suite on fake-gcs-server, every
// Resource on its own client to one bucket of this run. The emulator never
// rate-limits, so the concurrency case runs its default load on one
// object; on real Cloud Storage (about one write per second per object)
// lower Writers and WritesPerWriter.
func TestConformance(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) *fence.Resource {
			return testResource(t, newClient(t, nil).Bucket(bucket.BucketName()), fastOptions)
		},
		MaxKeyLen: MaxKeyLen,
		// fake-gcs-server applies the first upload; the transport drops
		// its answer.
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			ft := newFaultTransport(t)
			ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
				if n != 1 {
					return next.RoundTrip(req)
				}
				resp, err := next.RoundTrip(req)
				if err != nil {
					return nil, err
				}
				_ = resp.Body.Close()
				after()
				return nil, errDropped
			})
			return testResource(t, newClient(t, ft).Bucket(bucket.BucketName()), fastOptions)
		},
	})
}
