package emulators_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// The helpers of TestAzureConditions: a container of its own, and calls
// of the Azure SDK that return the answer, or fail the test where a
// probe needs the call to succeed.

// azAnswer is the answer a call of the SDK returned with err; status 0
// when no answer came.
func azAnswer(err error) answer {
	if err == nil {
		return ok
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return answer{code: "no answer: " + err.Error()}
	}
	if re.StatusCode == http.StatusNotModified {
		return blobNotModified // no body and, from some servers, no error code
	}
	return answer{status: re.StatusCode, code: re.ErrorCode}
}

// azEnv is one container of the Azure Blob server under test.
type azEnv struct {
	t   *testing.T
	c   *container.Client
	srv server
}

// newAzEnv creates a container, deleted when the test ends.
func newAzEnv(t *testing.T) *azEnv {
	t.Helper()
	c := azuritetest.NewContainer(t, nil, false) // every answer seen
	return &azEnv{t: t, c: c, srv: azServer(t, testenv.AzuriteBlobURL(t))}
}

// azServer names the server from its Server header, like
// "Azurite-Blob/3.35.0".
func azServer(t *testing.T, url string) server {
	t.Helper()
	resp, err := http.Get(url + "?comp=list")
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	name, version, _ := strings.Cut(resp.Header.Get("Server"), "/")
	name, _, _ = strings.Cut(strings.ToLower(name), "-")
	if name == "" {
		name = "unknown Azure Blob server"
	}
	return server{name: name, version: version}
}

func (e *azEnv) name() string { return "b-" + strings.ToLower(rand.Text()[:12]) }

func (e *azEnv) blob(name string) *blockblob.Client { return e.c.NewBlockBlobClient(name) }

// put uploads body to name with Put Blob under ac and returns the answer
// and the new ETag.
func (e *azEnv) put(name, body string, ac *blob.AccessConditions) (answer, azcore.ETag) {
	e.t.Helper()
	resp, err := e.blob(name).Upload(e.t.Context(), streaming.NopCloser(strings.NewReader(body)), &blockblob.UploadOptions{AccessConditions: ac})
	if err != nil {
		return azAnswer(err), ""
	}
	return ok, *resp.ETag
}

// mustPut uploads body to name unconditionally and returns its ETag.
func (e *azEnv) mustPut(name, body string) azcore.ETag {
	e.t.Helper()
	a, etag := e.put(name, body, nil)
	if a != ok {
		e.t.Fatalf("Put Blob %s: %v", name, a)
	}
	return etag
}

// props returns name's ETag and metadata.
func (e *azEnv) props(name string) (azcore.ETag, map[string]*string) {
	e.t.Helper()
	p, err := e.blob(name).GetProperties(e.t.Context(), nil)
	if err != nil {
		e.t.Fatalf("Get Blob Properties %s: %v", name, err)
	}
	return *p.ETag, p.Metadata
}

// expectBody fails the test unless name holds want (or, with exists false,
// is missing): a refused write must have changed nothing.
func (e *azEnv) expectBody(name, want string, exists bool) {
	e.t.Helper()
	resp, err := e.blob(name).DownloadStream(e.t.Context(), nil)
	if err != nil {
		if a := azAnswer(err); a.status == http.StatusNotFound {
			if exists {
				e.t.Errorf("after the request %s is missing, want %q", name, want)
			}
			return
		}
		e.t.Fatalf("Get Blob %s: %v", name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	switch {
	case !exists:
		e.t.Errorf("after the request %s exists with %q: the server applied a write it refused", name, b)
	case string(b) != want:
		e.t.Errorf("after the request %s holds %q, want %q", name, b, want)
	}
}

// lease takes a 15 s lease on name (released when the test ends) and
// returns its id.
func (e *azEnv) lease(name string) string {
	e.t.Helper()
	id := newLeaseID()
	lc, err := lease.NewBlobClient(e.c.NewBlobClient(name), &lease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := lc.AcquireLease(e.t.Context(), 15, nil); err != nil {
		e.t.Fatalf("Lease Blob (acquire) %s: %v", name, err)
	}
	releaseLater(e.t, lc)
	return id
}

// releaseLater releases lc's lease when the test ends, so that the
// container can be deleted at once.
func releaseLater(t *testing.T, lc *lease.BlobClient) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = lc.ReleaseLease(ctx, nil)
	})
}

func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexd = "0123456789abcdef"
	var s strings.Builder
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s.WriteByte('-')
		}
		s.WriteByte(hexd[c>>4])
		s.WriteByte(hexd[c&0xf])
	}
	return s.String()
}

// setMeta sets name's metadata to {"v": v} under ac.
func (e *azEnv) setMeta(name, v string, ac *blob.AccessConditions) answer {
	e.t.Helper()
	_, err := e.c.NewBlobClient(name).SetMetadata(e.t.Context(), map[string]*string{"v": &v}, &blob.SetMetadataOptions{AccessConditions: ac})
	return azAnswer(err)
}

// expectMeta fails the test unless name's metadata "v" is want.
func (e *azEnv) expectMeta(name, want string) {
	e.t.Helper()
	_, md := e.props(name)
	got := ""
	for k, v := range md {
		if strings.EqualFold(k, "v") && v != nil {
			got = *v
		}
	}
	if got != want {
		e.t.Errorf("after the request %s has metadata v=%q, want %q", name, got, want)
	}
}

func ifMatch(etag azcore.ETag) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
}

func ifNoneMatch(etag azcore.ETag) *blob.AccessConditions {
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &etag}}
}

// underLease adds the lease id to ac.
func underLease(id string, ac *blob.AccessConditions) *blob.AccessConditions {
	if ac == nil {
		ac = &blob.AccessConditions{}
	}
	ac.LeaseAccessConditions = &blob.LeaseAccessConditions{LeaseID: &id}
	return ac
}

// otherETag is a well-formed ETag that no blob here has.
const otherETag = azcore.ETag(`"0x8DD00000000000"`)

// commit replaces name with body through Put Block (one block) and Put
// Block List under ac.
func (e *azEnv) commit(name, body string, ac *blob.AccessConditions) answer {
	e.t.Helper()
	id := base64.StdEncoding.EncodeToString([]byte(rand.Text()[:16]))
	bb := e.blob(name)
	if _, err := bb.StageBlock(e.t.Context(), id, streaming.NopCloser(bytes.NewReader([]byte(body))), nil); err != nil {
		e.t.Fatalf("Put Block %s: %v", name, err)
	}
	_, err := bb.CommitBlockList(e.t.Context(), []string{id}, &blockblob.CommitBlockListOptions{AccessConditions: ac})
	return azAnswer(err)
}

// race runs put(i) for 8 values of i at once, checks that exactly one was
// applied and that name holds its body ('a'+i), and returns the answers of
// the others.
func (e *azEnv) race(name string, put func(i int) answer) []answer {
	e.t.Helper()
	winner, losers := race(e.t, e.srv, put)
	e.expectBody(name, string(rune('a'+winner)), true)
	return losers
}
