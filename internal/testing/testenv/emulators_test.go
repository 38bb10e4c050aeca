package testenv_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestEmulatorsAnswer checks that each emulator started by
// scripts/emulators.sh answers at its exported endpoint as the service it
// stands in for, with the exported credentials where the service checks
// them.
func TestEmulatorsAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"Azurite", checkAzurite},
		{"dynalite", checkDynalite},
		{"fake-gcs-server", checkFakeGCS},
		{"MinIO", checkMinIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t)
		})
	}
}

// checkAzurite lists the account's containers with a request signed with
// the exported shared key: a wrong account or key gets 403.
func checkAzurite(t *testing.T) {
	base := testenv.AzuriteBlobURL(t)
	account, key := testenv.AzuriteAccount(t)
	if cs := testenv.AzuriteConnectionString(t); !strings.Contains(cs, "AccountKey="+key+";") || !strings.Contains(cs, "BlobEndpoint="+base+";") {
		t.Errorf("connection string %q lacks the exported key or blob URL %q", cs, base)
	}
	req := newRequest(t, http.MethodGet, base+"?comp=list", "")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2021-12-02")
	signSharedKey(t, req, account, key)
	status, body := do(t, req)
	if status != http.StatusOK || !strings.Contains(body, "<EnumerationResults") {
		t.Fatalf("list containers: status %d, body %.500q; want 200 and an EnumerationResults document", status, body)
	}
}

// signSharedKey adds a Shared Key Authorization header to a GET request
// that has no body and no conditional headers.
func signSharedKey(t *testing.T, req *http.Request, account, key string) {
	t.Helper()
	secret, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatalf("Azurite key is not base64: %v", err)
	}
	var s strings.Builder
	// Verb, then 11 standard headers that this request leaves empty.
	s.WriteString(req.Method + "\n" + strings.Repeat("\n", 11))
	s.WriteString("x-ms-date:" + req.Header.Get("x-ms-date") + "\n")
	s.WriteString("x-ms-version:" + req.Header.Get("x-ms-version") + "\n")
	s.WriteString("/" + account + req.URL.Path)
	for name, values := range req.URL.Query() { // one parameter in this test
		s.WriteString("\n" + strings.ToLower(name) + ":" + strings.Join(values, ","))
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(s.String()))
	req.Header.Set("Authorization", "SharedKey "+account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// checkDynalite calls ListTables with DynamoDB's JSON protocol. dynalite
// requires a SigV4-shaped Authorization header but checks no signature.
func checkDynalite(t *testing.T) {
	req := newRequest(t, http.MethodPost, testenv.DynamoEndpoint(t), "{}")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=fence/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00")
	status, body := do(t, req)
	var out struct{ TableNames *[]string }
	if err := json.Unmarshal([]byte(body), &out); status != http.StatusOK || err != nil || out.TableNames == nil {
		t.Fatalf("ListTables: status %d, body %.500q; want 200 and a TableNames list", status, body)
	}
}

// checkFakeGCS lists buckets with the JSON API, which needs no credentials.
func checkFakeGCS(t *testing.T) {
	req := newRequest(t, http.MethodGet, testenv.GCSEndpoint(t)+"/storage/v1/b?project=fence", "")
	status, body := do(t, req)
	var out struct{ Kind string }
	if err := json.Unmarshal([]byte(body), &out); status != http.StatusOK || err != nil || out.Kind != "storage#buckets" {
		t.Fatalf("list buckets: status %d, body %.500q; want 200 and kind storage#buckets", status, body)
	}
}

// checkMinIO asks MinIO whether it is ready, and checks that it refuses an
// unsigned S3 call the way S3 does.
func checkMinIO(t *testing.T) {
	endpoint := testenv.S3Endpoint(t)
	if access, secret := testenv.S3Credentials(t); access == "" || secret == "" {
		t.Fatal("S3 credentials are empty")
	}
	if status, body := do(t, newRequest(t, http.MethodGet, endpoint+"/minio/health/ready", "")); status != http.StatusOK {
		t.Fatalf("health check: status %d, body %.500q; want 200", status, body)
	}
	status, body := do(t, newRequest(t, http.MethodGet, endpoint+"/", ""))
	if status != http.StatusForbidden || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("unsigned ListBuckets: status %d, body %.500q; want 403 AccessDenied", status, body)
	}
}

func newRequest(t *testing.T, method, rawURL, body string) *http.Request {
	t.Helper()
	if _, err := url.Parse(rawURL); err != nil {
		t.Fatalf("exported endpoint is not a URL: %v", err)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, rawURL, strings.NewReader(body))
	if err != nil {
		t.Fatalf("build request: %v", err)
	}
	return req
}

func do(t *testing.T, req *http.Request) (status int, body string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatalf("read the response of %s %s: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b)
}

// TestEmulatorPrograms checks that each emulator program that
// scripts/emulators.sh exports is an executable file, and that dynalite's
// launcher sits in a checkout whose node_modules holds dynalite.
func TestEmulatorPrograms(t *testing.T) {
	node, js := testenv.DynaliteCommand(t)
	for _, p := range []string{node, testenv.AzuriteBin(t), testenv.FakeGCSBin(t), testenv.MinIOBin(t)} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not an executable file (%v)", p, err)
		}
	}
	repo := filepath.Dir(filepath.Dir(js))
	if _, err := os.Stat(filepath.Join(repo, "node_modules", "dynalite", "package.json")); err != nil || filepath.Base(js) != "dynalite.js" {
		t.Errorf("%s is not scripts/dynalite.js of a checkout with dynalite installed: %v", js, err)
	}
}
