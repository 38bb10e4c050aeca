package azblob

import (
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// fastOptions are the Options of most tests: short pauses after a lost
// race, so that contention resolves quickly.
var fastOptions = Options{MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}

// newContainer creates a container of a unique name on Azurite, deleted
// when t ends, and returns a client for it that sends its requests through
// transport (http.DefaultClient when nil). The SDK's retries are off, so
// that a test sees each answer.
func newContainer(t testing.TB, transport policy.Transporter) *container.Client {
	t.Helper()
	return azuritetest.NewContainer(t, transport, false)
}

// containerClient returns a client of the container name on Azurite,
// without retries, whose requests go through transport when not nil.
func containerClient(t testing.TB, name string, transport policy.Transporter) *container.Client {
	t.Helper()
	return azuritetest.Client(t, name, transport, false)
}

// sameContainer returns a new client of c's container, through
// transport.
func sameContainer(t testing.TB, c *container.Client, transport policy.Transporter) *container.Client {
	t.Helper()
	u := c.URL()
	return containerClient(t, u[strings.LastIndex(u, "/")+1:], transport)
}

// testResource returns a resource on c, failing t on error.
func testResource(t testing.TB, c *container.Client, opts Options) *fence.Resource {
	t.Helper()
	r, err := New(c, &opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// key returns a key unique to the call.
func key(t testing.TB) string {
	t.Helper()
	return "k-" + strings.ToLower(rand.Text()[:12])
}

// errDropped is the error of a request whose answer the fault transport
// dropped, as a cut connection would.
var errDropped = errors.New("test: answer dropped")

// faults is an http transport for the SDK that passes requests to
// Azurite and lets a test intercept them: fn sees the number of the
// request (from 1), the request, and the next transport.
type faults struct {
	mu sync.Mutex
	fn func(n int64, req *http.Request, next policy.Transporter) (*http.Response, error)
	n  atomic.Int64
}

func (f *faults) Do(req *http.Request) (*http.Response, error) {
	n := f.n.Add(1)
	f.mu.Lock()
	fn := f.fn
	f.mu.Unlock()
	if fn == nil {
		return http.DefaultClient.Do(req)
	}
	return fn(n, req, http.DefaultClient)
}

// intercept sets the function that sees every request.
func (f *faults) intercept(fn func(n int64, req *http.Request, next policy.Transporter) (*http.Response, error)) {
	f.mu.Lock()
	f.fn = fn
	f.mu.Unlock()
}

// isWrite reports whether req writes a blob: Put Blob, Put Block List or
// Set Blob Metadata (Put Block stages, and changes no blob; Create
// Container is no blob's).
func isWrite(req *http.Request) bool {
	if req.Method != http.MethodPut || req.URL.Query().Get("restype") != "" {
		return false
	}
	comp := req.URL.Query().Get("comp")
	return comp == "" || comp == "blocklist" || comp == "metadata"
}

// dropFirstWrite returns a transport that lets the first blob write
// through to Azurite, calls after once it was applied, and drops its
// answer.
func dropFirstWrite(after func()) *faults {
	f := &faults{}
	var done atomic.Bool
	f.intercept(func(_ int64, req *http.Request, next policy.Transporter) (*http.Response, error) {
		if !isWrite(req) || done.Swap(true) {
			return next.Do(req)
		}
		resp, err := next.Do(req)
		if err != nil {
			return nil, err
		}
		_ = resp.Body.Close()
		if after != nil {
			after()
		}
		return nil, errDropped
	})
	return f
}

// counter counts the requests it forwards, by method and comp.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) Do(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[req.Method+" "+req.URL.Query().Get("comp")]++
	c.mu.Unlock()
	return http.DefaultClient.Do(req)
}

// take returns the counts since the last take and resets them.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	return n
}

// total returns the number of requests in counts.
func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}
