package azblob

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/fencekit/fence/internal/azblobconn"
)

// The tests below check, on the emulator the package is tested on
// (Azurite), each service behaviour the package relies on, as Azure's
// REST documentation states it. A difference from the documentation
// fails the test, unless it is named here and in the package doc.

// upload sends one Put Blob of data with metadata md under cond.
func upload(t *testing.T, bb *blockblob.Client, data string, md map[string]*string, cond *blob.ModifiedAccessConditions) (azcore.ETag, error) {
	t.Helper()
	resp, err := bb.Upload(t.Context(), streaming.NopCloser(strings.NewReader(data)), &blockblob.UploadOptions{
		Metadata: md, AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: cond},
	})
	return etagOf(resp.ETag), err
}

// wantStatus fails t unless err is an answer of status and code.
func wantStatus(t *testing.T, what string, err error, status int, code bloberror.Code) {
	t.Helper()
	re := responseOf(err)
	if re == nil || re.StatusCode != status || (code != "" && !bloberror.HasCode(err, code)) {
		t.Fatalf("%s: %v; want %d %s", what, err, status, code)
	}
}

func ifMatch(e azcore.ETag) *blob.ModifiedAccessConditions {
	return &blob.ModifiedAccessConditions{IfMatch: &e}
}

func ifNoneMatchAny() *blob.ModifiedAccessConditions {
	anyTag := azcore.ETagAny
	return &blob.ModifiedAccessConditions{IfNoneMatch: &anyTag}
}

// Put Blob: If-None-Match: * creates once; a second create is refused
// with 409 BlobAlreadyExists; If-Match on the current ETag writes, on an
// old one is refused with 412 ConditionNotMet; every write, even of the
// same bytes, gives a new ETag.
func TestEmulatorPutBlobConditions(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	bb := c.NewBlockBlobClient(key(t))
	e1, err := upload(t, bb, "same", nil, ifNoneMatchAny())
	if err != nil {
		t.Fatalf("create with If-None-Match: *: %v", err)
	}
	_, err = upload(t, bb, "same", nil, ifNoneMatchAny())
	wantStatus(t, "second create with If-None-Match: *", err, http.StatusConflict, bloberror.BlobAlreadyExists)
	if !lostRace(err) {
		t.Fatalf("lostRace(%v) = false", err)
	}
	e2, err := upload(t, bb, "same", nil, ifMatch(e1))
	if err != nil {
		t.Fatalf("write with If-Match on the current ETag: %v", err)
	}
	if e2 == e1 {
		t.Fatalf("a write of the same bytes kept ETag %s; the package relies on a new ETag per write", e1)
	}
	_, err = upload(t, bb, "other", nil, ifMatch(e1))
	wantStatus(t, "write with If-Match on an old ETag", err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
}

// Put Blob with If-Match on a blob that does not exist: Azure documents
// 412 ConditionNotMet; the package also takes a 404 as a lost race.
func TestEmulatorIfMatchMissingBlob(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	_, err := upload(t, c.NewBlockBlobClient(key(t)), "x", nil, ifMatch(`"0x8DC0000000000"`))
	if re := responseOf(err); re == nil || (re.StatusCode != http.StatusPreconditionFailed && re.StatusCode != http.StatusNotFound) {
		t.Fatalf("If-Match on a missing blob: %v; want 412 (or 404)", err)
	}
	t.Logf("If-Match on a missing blob: %d %s", responseOf(err).StatusCode, responseOf(err).ErrorCode)
}

// Put Block List: the commit of staged blocks honours If-Match and
// If-None-Match: * as Put Blob does; staged blocks change nothing.
func TestEmulatorPutBlockListConditions(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	bb := c.NewBlockBlobClient(key(t))
	stage := func(id, data string) string {
		t.Helper()
		bid := encodeBlockID(id)
		if _, err := bb.StageBlock(t.Context(), bid, streaming.NopCloser(strings.NewReader(data)), nil); err != nil {
			t.Fatalf("StageBlock: %v", err)
		}
		return bid
	}
	commit := func(ids []string, cond *blob.ModifiedAccessConditions) (azcore.ETag, error) {
		resp, err := bb.CommitBlockList(t.Context(), ids, &blockblob.CommitBlockListOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: cond}})
		return etagOf(resp.ETag), err
	}
	e1, err := commit([]string{stage("a", "one")}, ifNoneMatchAny())
	if err != nil {
		t.Fatalf("commit with If-None-Match: * on no blob: %v", err)
	}
	_, err = commit([]string{stage("b", "two")}, ifNoneMatchAny())
	if re := responseOf(err); re == nil || !lostRace(err) {
		t.Fatalf("commit with If-None-Match: * on a blob: %v; want 409 BlobAlreadyExists or 412 ConditionNotMet", err)
	}
	t.Logf("Put Block List with If-None-Match: * on a blob: %d %s", responseOf(err).StatusCode, responseOf(err).ErrorCode)
	props, err := bb.GetProperties(t.Context(), nil)
	if err != nil || etagOf(props.ETag) != e1 {
		t.Fatalf("after a refused commit and a staged block: ETag %v, %v; want %s unchanged", etagOf(props.ETag), err, e1)
	}
	e2, err := commit([]string{stage("c", "three")}, ifMatch(e1))
	if err != nil {
		t.Fatalf("commit with If-Match on the current ETag: %v", err)
	}
	_, err = commit([]string{stage("d", "four")}, ifMatch(e1))
	wantStatus(t, "commit with If-Match on an old ETag", err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	dl, err := bb.DownloadStream(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Body.Close()
	var got bytes.Buffer
	_, _ = got.ReadFrom(dl.Body)
	if got.String() != "three" || etagOf(dl.ETag) != e2 {
		t.Fatalf("blob = %q, ETag %s; want \"three\", %s", got.String(), etagOf(dl.ETag), e2)
	}
}

// Set Blob Metadata honours If-Match and gives the blob a new ETag, which
// Claim relies on; it keeps the content.
func TestEmulatorSetMetadataConditions(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	bb := c.NewBlockBlobClient(key(t))
	e1, err := upload(t, bb, "content", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := "1"
	resp, err := bb.SetMetadata(t.Context(), map[string]*string{"fencetoken": &v}, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: ifMatch(e1)}})
	if err != nil {
		t.Fatalf("Set Metadata with If-Match on the current ETag: %v", err)
	}
	e2 := etagOf(resp.ETag)
	if e2 == e1 || e2 == "" {
		t.Fatalf("Set Metadata kept ETag %s (got %q); Claim relies on a new ETag", e1, e2)
	}
	_, err = bb.SetMetadata(t.Context(), map[string]*string{"fencetoken": &v}, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: ifMatch(e1)}})
	wantStatus(t, "Set Metadata with If-Match on an old ETag", err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	props, err := bb.GetProperties(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if etagOf(props.ETag) != e2 || *props.ContentLength != int64(len("content")) {
		t.Fatalf("after Set Metadata: ETag %s, length %d; want %s, %d", etagOf(props.ETag), *props.ContentLength, e2, len("content"))
	}
	// Names come back capitalised by the SDK: parseMeta looks them up
	// without regard to case.
	m, err := parseMeta("k", props.Metadata)
	if err != nil || m.Token != 1 {
		t.Fatalf("parseMeta(%v) = %+v, %v; want token 1", props.Metadata, m, err)
	}
}

// Delete Blob honours If-Match (the package does not delete, but a
// repair tool may rely on it).
func TestEmulatorConditionalDelete(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	bb := c.NewBlockBlobClient(key(t))
	e1, err := upload(t, bb, "x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := upload(t, bb, "y", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err = bb.Delete(t.Context(), &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: ifMatch(e1)}})
	wantStatus(t, "Delete with If-Match on an old ETag", err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	if _, err := bb.GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("the blob after a refused delete: %v", err)
	}
}

// Get Blob with If-None-Match on the current ETag answers 304 Not
// Modified.
func TestEmulatorNotModified(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	bb := c.NewBlockBlobClient(key(t))
	e1, err := upload(t, bb, "x", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The SDK takes 304 as a success of Get Blob: the status is read from
	// the raw response.
	var raw *http.Response
	ctx := policy.WithCaptureResponse(t.Context(), &raw)
	resp, err := bb.DownloadStream(ctx, &blob.DownloadStreamOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &e1}}})
	if err == nil && resp.Body != nil {
		resp.Body.Close()
	}
	status := 0
	if raw != nil {
		status = raw.StatusCode
	} else if re := responseOf(err); re != nil {
		status = re.StatusCode
	}
	if status != http.StatusNotModified {
		t.Fatalf("Get Blob with If-None-Match on the current ETag: status %d, %v; want 304", status, err)
	}
}

// Get Blob Properties (a HEAD, without a body) of a blob in a missing
// container names ContainerNotFound in its x-ms-error-code header, which
// tells a missing container from a missing blob.
func TestEmulatorMissingContainerHead(t *testing.T) {
	t.Parallel()
	c := containerClient(t, "fence-missing-"+strings.ToLower(key(t)[2:]), nil)
	_, err := c.NewBlobClient("k").GetProperties(t.Context(), nil)
	wantStatus(t, "Get Blob Properties in a missing container", err, http.StatusNotFound, bloberror.ContainerNotFound)
	_, err = c.NewBlobClient("k").DownloadStream(t.Context(), nil)
	wantStatus(t, "Get Blob in a missing container", err, http.StatusNotFound, bloberror.ContainerNotFound)
}

// Azure's documentation asks to avoid blob names ending in '.', which its
// service and URL handling may strip; the package escapes such a '.'
// (see blobName) and does not depend on what the service does. This test
// records what the emulator does with one.
func TestEmulatorTrailingDot(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	k := key(t)
	if _, err := upload(t, c.NewBlockBlobClient(k+"."), "dot", nil, nil); err != nil {
		t.Fatalf("Put Blob of %q: %v", k+".", err)
	}
	_, errPlain := c.NewBlobClient(k).GetProperties(t.Context(), nil)
	_, errDot := c.NewBlobClient(k+".").GetProperties(t.Context(), nil)
	// Azurite 3.35 keeps the '.': the first is BlobNotFound, the second
	// found. What Azure does is not verified here.
	t.Logf("after Put Blob of %q: Get Blob Properties of %q: %v; of %q: %v", k+".", k, azblobconn.OneLine(errPlain), k+".", azblobconn.OneLine(errDot))
}
