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
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// The conditional requests that lockers/azblob and resources/azblob send,
// each against the answer Azure documents for it:
//
//   - "Specifying conditional headers for Blob service operations": an
//     unmet If-Match or If-None-Match fails a write (PUT, DELETE) with 412
//     ConditionNotMet, a read (GET, HEAD) with If-Match 412 and with
//     If-None-Match 304 Not Modified; If-None-Match: * writes only a blob
//     that does not exist;
//   - "Blob service error codes": Put Blob over an existing blob under
//     If-None-Match: * answers 409 BlobAlreadyExists; a write to a leased
//     blob without its lease id 412 LeaseIdMissing, with another 412
//     LeaseIdMismatchWithBlobOperation; a lease id on a blob without an
//     active lease 412 LeaseNotPresentWithBlobOperation;
//   - Set Blob Metadata: any change to a blob's metadata changes its ETag;
//   - If-Match on a blob that does not exist is unmet (412), "*" included
//     (Azurite issue 2589 compares with Azure and the legacy emulator).

var (
	conditionNotMet    = answer{http.StatusPreconditionFailed, "ConditionNotMet"}
	blobAlreadyExists  = answer{http.StatusConflict, "BlobAlreadyExists"}
	blobNotModified    = answer{http.StatusNotModified, ""}
	leaseIDMissing     = answer{http.StatusPreconditionFailed, "LeaseIdMissing"}
	leaseIDMismatch    = answer{http.StatusPreconditionFailed, "LeaseIdMismatchWithBlobOperation"}
	leaseNotPresentBlb = answer{http.StatusPreconditionFailed, "LeaseNotPresentWithBlobOperation"}
)

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
	url := testenv.AzuriteBlobURL(t)
	account, key := testenv.AzuriteAccount(t)
	cred, err := container.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatal(err)
	}
	opts := &container.ClientOptions{}
	opts.Retry = policy.RetryOptions{MaxRetries: -1} // every answer seen
	c, err := container.NewClientWithSharedKeyCredential(url+"/fence-cond-"+strings.ToLower(rand.Text()[:12]), cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(t.Context(), nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Delete(ctx, nil); err != nil {
			t.Logf("delete container: %v", err)
		}
	})
	return &azEnv{t: t, c: c, srv: azServer(t, url)}
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

func TestAzureConditions(t *testing.T) {
	t.Parallel()
	e := newAzEnv(t)
	t.Logf("Azure Blob server: %v", e.srv)
	run := func(name string, f func(t *testing.T, e *azEnv)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, &azEnv{t: t, c: e.c, srv: e.srv})
		})
	}

	run("Put Blob If-None-Match * new blob", func(t *testing.T, e *azEnv) {
		n := e.name()
		got, _ := e.put(n, "v1", ifNoneMatch(azcore.ETagAny))
		check(t, e.srv, got, "201, the blob written", ok)
		e.expectBody(n, "v1", true)
	})
	run("Put Blob If-None-Match * existing blob", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		got, _ := e.put(n, "v2", ifNoneMatch(azcore.ETagAny))
		e.expectBody(n, "v1", true)
		check(t, e.srv, got, "409 BlobAlreadyExists", blobAlreadyExists)
	})
	run("Put Blob If-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		got, etag2 := e.put(n, "v2", ifMatch(etag))
		check(t, e.srv, got, "201, the blob replaced", ok)
		e.expectBody(n, "v2", true)
		if got == ok && etag2 == etag {
			t.Errorf("the ETag did not change: %s", etag)
		}
	})
	run("Put Blob If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		got, _ := e.put(n, "v2", ifMatch(otherETag))
		e.expectBody(n, "v1", true)
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Put Blob If-Match missing blob", func(t *testing.T, e *azEnv) {
		n := e.name()
		got, _ := e.put(n, "v1", ifMatch(otherETag))
		if got.status >= 400 {
			e.expectBody(n, "", false)
		}
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Put Blob If-Match * missing blob", func(t *testing.T, e *azEnv) {
		n := e.name()
		got, _ := e.put(n, "v1", ifMatch(azcore.ETagAny))
		if got.status >= 400 {
			e.expectBody(n, "", false)
		}
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Put Block List If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		got := e.commit(n, "v2", ifMatch(otherETag))
		e.expectBody(n, "v1", true)
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Put Block List If-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		got := e.commit(n, "v2", ifMatch(etag))
		check(t, e.srv, got, "201, the blob replaced", ok)
		e.expectBody(n, "v2", true)
	})
	run("Put Block List If-None-Match * existing blob", func(t *testing.T, e *azEnv) {
		// Azure documents no error code for this operation: 409
		// BlobAlreadyExists (as Put Blob) or the generic 412.
		n := e.name()
		e.mustPut(n, "v1")
		got := e.commit(n, "v2", ifNoneMatch(azcore.ETagAny))
		e.expectBody(n, "v1", true)
		check(t, e.srv, got, "refused: 409 BlobAlreadyExists or 412 ConditionNotMet", blobAlreadyExists, conditionNotMet)
	})
	run("Set Blob Metadata If-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		check(t, e.srv, e.setMeta(n, "m1", ifMatch(etag)), "200, the metadata set", ok)
		e.expectMeta(n, "m1")
		if after, _ := e.props(n); after == etag {
			t.Errorf("%v: Set Blob Metadata left the ETag at %s; Azure changes it with any change of metadata", e.srv, etag)
		}
	})
	run("Set Blob Metadata If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		got := e.setMeta(n, "m1", ifMatch(otherETag))
		e.expectMeta(n, "")
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Delete Blob If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		_, err := e.c.NewBlobClient(n).Delete(t.Context(), &blob.DeleteOptions{AccessConditions: ifMatch(otherETag)})
		got := azAnswer(err)
		e.expectBody(n, "v1", true)
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Delete Blob If-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		_, err := e.c.NewBlobClient(n).Delete(t.Context(), &blob.DeleteOptions{AccessConditions: ifMatch(etag)})
		check(t, e.srv, azAnswer(err), "202, the blob deleted", ok)
		e.expectBody(n, "", false)
	})
	run("Get Blob Properties If-None-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		_, err := e.blob(n).GetProperties(t.Context(), &blob.GetPropertiesOptions{AccessConditions: ifNoneMatch(etag)})
		check(t, e.srv, azAnswer(err), "304 Not Modified", blobNotModified)
	})
	run("Get Blob Properties If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		_, err := e.blob(n).GetProperties(t.Context(), &blob.GetPropertiesOptions{AccessConditions: ifMatch(otherETag)})
		check(t, e.srv, azAnswer(err), "412 ConditionNotMet", conditionNotMet)
	})
	run("Get Blob If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		resp, err := e.blob(n).DownloadStream(t.Context(), &blob.DownloadStreamOptions{AccessConditions: ifMatch(otherETag)})
		if err == nil {
			resp.Body.Close()
		}
		check(t, e.srv, azAnswer(err), "412 ConditionNotMet", conditionNotMet)
	})
	run("Lease Blob acquire If-Match other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		id := newLeaseID()
		lc, err := lease.NewBlobClient(e.c.NewBlobClient(n), &lease.BlobClientOptions{LeaseID: &id})
		if err != nil {
			t.Fatal(err)
		}
		etag := otherETag
		_, err = lc.AcquireLease(t.Context(), 15, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}})
		got := azAnswer(err)
		if got == ok {
			releaseLater(t, lc)
		}
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Lease Blob acquire If-Match current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v1")
		id := newLeaseID()
		lc, err := lease.NewBlobClient(e.c.NewBlobClient(n), &lease.BlobClientOptions{LeaseID: &id})
		if err != nil {
			t.Fatal(err)
		}
		_, err = lc.AcquireLease(t.Context(), 15, &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}})
		got := azAnswer(err)
		if got == ok {
			releaseLater(t, lc)
		}
		check(t, e.srv, got, "201, the lease taken", ok)
	})
	run("Set Blob Metadata If-Match ETag of the lease answer", func(t *testing.T, e *azEnv) {
		// The ETag in Lease Blob's answer is "a value that you can use
		// to perform operations conditionally": lockers/azblob writes
		// the token under the lease, conditioned on it.
		n := e.name()
		e.mustPut(n, "v1")
		id := newLeaseID()
		lc, err := lease.NewBlobClient(e.c.NewBlobClient(n), &lease.BlobClientOptions{LeaseID: &id})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := lc.AcquireLease(t.Context(), 15, nil)
		if err != nil {
			t.Fatalf("Lease Blob (acquire): %v", err)
		}
		releaseLater(t, lc)
		if resp.ETag == nil {
			t.Fatalf("%v: Lease Blob answered no ETag", e.srv)
		}
		got := e.setMeta(n, "m1", underLease(id, ifMatch(*resp.ETag)))
		if got != ok {
			now, _ := e.props(n)
			t.Logf("%v: Lease Blob answered ETag %s; the blob's is %s", e.srv, *resp.ETag, now)
		}
		check(t, e.srv, got, "200, the metadata set", ok)
	})
	run("Set Blob Metadata lease and current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		id := e.lease(n)
		etag, _ := e.props(n)
		check(t, e.srv, e.setMeta(n, "m1", underLease(id, ifMatch(etag))), "200, the metadata set", ok)
		e.expectMeta(n, "m1")
	})
	run("Set Blob Metadata lease and other ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		id := e.lease(n)
		got := e.setMeta(n, "m1", underLease(id, ifMatch(otherETag)))
		e.expectMeta(n, "")
		check(t, e.srv, got, "412 ConditionNotMet", conditionNotMet)
	})
	run("Set Blob Metadata other lease and current ETag", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		e.lease(n)
		etag, _ := e.props(n)
		got := e.setMeta(n, "m1", underLease(newLeaseID(), ifMatch(etag)))
		e.expectMeta(n, "")
		check(t, e.srv, got, "412 LeaseIdMismatchWithBlobOperation", leaseIDMismatch)
	})
	run("Set Blob Metadata no lease id on a leased blob", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		e.lease(n)
		etag, _ := e.props(n)
		got := e.setMeta(n, "m1", ifMatch(etag))
		e.expectMeta(n, "")
		check(t, e.srv, got, "412 LeaseIdMissing", leaseIDMissing)
	})
	run("Get Blob Properties other lease id", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		e.lease(n)
		_, err := e.blob(n).GetProperties(t.Context(), &blob.GetPropertiesOptions{AccessConditions: underLease(newLeaseID(), nil)})
		check(t, e.srv, azAnswer(err), "412 LeaseIdMismatchWithBlobOperation", leaseIDMismatch)
	})
	run("Get Blob Properties lease id without a lease", func(t *testing.T, e *azEnv) {
		n := e.name()
		e.mustPut(n, "v1")
		_, err := e.blob(n).GetProperties(t.Context(), &blob.GetPropertiesOptions{AccessConditions: underLease(newLeaseID(), nil)})
		check(t, e.srv, azAnswer(err), "412 LeaseNotPresentWithBlobOperation", leaseNotPresentBlb)
	})
	run("Put Blob If-None-Match * concurrent", func(t *testing.T, e *azEnv) {
		n := e.name()
		for _, got := range e.race(n, func(i int) answer {
			a, _ := e.put(n, string(rune('a'+i)), ifNoneMatch(azcore.ETagAny))
			return a
		}) {
			check(t, e.srv, got, "one write wins; the others 409 BlobAlreadyExists or 412 ConditionNotMet", blobAlreadyExists, conditionNotMet)
		}
	})
	run("Put Blob If-Match concurrent", func(t *testing.T, e *azEnv) {
		n := e.name()
		etag := e.mustPut(n, "v0")
		for _, got := range e.race(n, func(i int) answer {
			a, _ := e.put(n, string(rune('a'+i)), ifMatch(etag))
			return a
		}) {
			check(t, e.srv, got, "one write wins; the others 412 ConditionNotMet", conditionNotMet)
		}
	})
}

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
	const n = 8
	var (
		wg      sync.WaitGroup
		answers [n]answer
		start   = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i] = put(i)
		})
	}
	close(start)
	wg.Wait()
	var winners []int
	var losers []answer
	for i, a := range answers {
		if a == ok {
			winners = append(winners, i)
		} else {
			losers = append(losers, a)
		}
	}
	if len(winners) != 1 {
		e.t.Fatalf("%v: %d of %d conditional writes succeeded (%v), want exactly 1", e.srv, len(winners), n, answers)
	}
	e.expectBody(name, string(rune('a'+winners[0])), true)
	return losers
}
