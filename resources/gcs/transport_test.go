package gcs

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// isUpload reports whether req writes an object (a media or multipart
// upload of the JSON API).
func isUpload(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/upload/storage/v1/b/")
}

// faultTransport forwards requests to the emulator through a real
// transport and lets a test intercept uploads: onUpload gets the upload's
// number (from 1) and decides what happens to it.
type faultTransport struct {
	next     http.RoundTripper
	requests atomic.Int64 // every request
	uploads  atomic.Int64 // uploads only

	mu       sync.Mutex
	onUpload func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error)
}

// newFaultTransport returns a faultTransport over a fresh http.Transport.
func newFaultTransport(t testing.TB) *faultTransport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &faultTransport{next: tr}
}

func (f *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f.requests.Add(1)
	if !isUpload(req) {
		return f.next.RoundTrip(req)
	}
	n := f.uploads.Add(1)
	f.mu.Lock()
	hook := f.onUpload
	f.mu.Unlock()
	if hook == nil {
		return f.next.RoundTrip(req)
	}
	return hook(n, req, f.next)
}

// intercept sets the upload hook.
func (f *faultTransport) intercept(hook func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error)) {
	f.mu.Lock()
	f.onUpload = hook
	f.mu.Unlock()
}

// generationOf reads the generation from the JSON answer to an upload and
// closes it.
func generationOf(t testing.TB, resp *http.Response) int64 {
	t.Helper()
	defer resp.Body.Close()
	var obj struct {
		Generation int64 `json:"generation,string"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		t.Errorf("decoding the upload's answer (status %d): %v", resp.StatusCode, err)
	}
	return obj.Generation
}

// answer returns a JSON error answer with code, as the service sends, after
// reading the request's body as a server would.
func answer(req *http.Request, code int) *http.Response {
	_, _ = io.Copy(io.Discard, req.Body)
	_ = req.Body.Close()
	body := `{"error":{"code":` + strconv.Itoa(code) + `,"message":"injected by the test"}}`
	return &http.Response{
		StatusCode: code,
		Status:     strconv.Itoa(code) + " " + http.StatusText(code),
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
