package emulators_test

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
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
