package azblob

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	lockazblob "github.com/fencekit/fence/lockers/azblob"
)

// getAll reads key with GetBlob, whole.
func getAll(t *testing.T, r *fence.Resource, key string) (*Blob, []byte) {
	t.Helper()
	b, err := GetBlob(t.Context(), r, key)
	if err != nil {
		t.Fatalf("GetBlob(%q): %v", key, err)
	}
	defer b.Body.Close()
	data, err := io.ReadAll(b.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b, data
}

// PutBlob streams a seekable body from its current offset, keeps the
// caller's content type and metadata, and GetBlob returns them with the
// token.
func TestPutBlobStreamsAndGetBlobReads(t *testing.T) {
	t.Parallel()
	r := testResource(t, newContainer(t, nil), fastOptions)
	k := key(t)
	body := strings.NewReader("skip:the value")
	if _, err := body.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	res, err := PutBlob(t.Context(), r, k, 3, body, &PutOptions{ContentType: "text/csv", Metadata: map[string]string{"owner": "acme"}})
	if err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if res.Attempts != 1 || res.Reconciled || len(res.WriteID) != fencedobj.WriteIDLen || res.ETag == "" {
		t.Fatalf("PutResult = %+v", res)
	}
	b, data := getAll(t, r, k)
	if string(data) != "the value" || b.Token != 3 || b.ContentType != "text/csv" || b.ContentLength != 9 || b.WriteID != res.WriteID || b.ETag != res.ETag {
		t.Fatalf("GetBlob = %q, %+v", data, b)
	}
	if len(b.Metadata) != 1 || !strings.EqualFold(firstKey(b.Metadata), "owner") || b.Metadata[firstKey(b.Metadata)] != "acme" {
		t.Fatalf("Metadata = %v; want owner=acme alone", b.Metadata)
	}
	_, err = PutBlob(t.Context(), r, k, 2, strings.NewReader("old"), nil)
	if _, ok := errors.AsType[*fence.StaleTokenError](err); !ok {
		t.Fatalf("PutBlob with a lower token: %v; want a *fence.StaleTokenError", err)
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// A body longer than MaxSinglePut goes in staged blocks and one
// conditional Put Block List; a lower token is still refused.
func TestStagedBlocks(t *testing.T) {
	t.Parallel()
	r := testResource(t, newContainer(t, nil), Options{MaxSinglePut: 1000, BlockSize: 300, MinBackoff: fastOptions.MinBackoff, MaxBackoff: fastOptions.MaxBackoff})
	k := key(t)
	value := bytes.Repeat([]byte("0123456789"), 250) // 2500 bytes: 9 blocks
	res, err := PutBlob(t.Context(), r, k, 5, bytes.NewReader(value), nil)
	if err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if res.Blocks != 9 {
		t.Fatalf("Blocks = %d; want 9", res.Blocks)
	}
	got, tok, err := r.Get(t.Context(), k)
	if err != nil || !bytes.Equal(got, value) || tok != 5 {
		t.Fatalf("Get = %d bytes, %d, %v; want the %d bytes, 5", len(got), tok, err, len(value))
	}
	_, err = PutBlob(t.Context(), r, k, 4, bytes.NewReader(value), nil)
	if !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("staged PutBlob with a lower token: %v; want fence.ErrStaleToken", err)
	}
	// A non-seekable body is buffered, then staged the same way.
	if _, err := PutBlob(t.Context(), r, k, 6, io.MultiReader(bytes.NewReader(value[:1200])), nil); err != nil {
		t.Fatalf("buffered staged PutBlob: %v", err)
	}
	if got, _, _ := r.Get(t.Context(), k); !bytes.Equal(got, value[:1200]) {
		t.Fatalf("Get after the buffered write = %d bytes; want 1200", len(got))
	}
}

// Claim raises the token and keeps the content, content type and user
// metadata; a write that read the blob before the claim is refused.
func TestClaimKeepsContentAndMetadata(t *testing.T) {
	t.Parallel()
	r := testResource(t, newContainer(t, nil), fastOptions)
	k := key(t)
	if _, err := PutBlob(t.Context(), r, k, 2, strings.NewReader("kept"), &PutOptions{ContentType: "text/plain", Metadata: map[string]string{"team": "ops"}}); err != nil {
		t.Fatal(err)
	}
	before, _ := getAll(t, r, k)
	if err := r.Claim(t.Context(), k, 7); err != nil {
		t.Fatalf("Claim: %v", err)
	}
	b, data := getAll(t, r, k)
	if string(data) != "kept" || b.Token != 7 || b.ContentType != "text/plain" || b.Metadata[firstKey(b.Metadata)] != "ops" || len(b.Metadata) != 1 {
		t.Fatalf("after Claim: %q, %+v", data, b)
	}
	if b.ETag == before.ETag || b.WriteID == before.WriteID {
		t.Fatalf("Claim kept ETag %s or write id %s", b.ETag, b.WriteID)
	}
	// A write conditioned on the ETag read before the claim fails, as a
	// slower writer's would.
	s, _ := fencedobj.DriverOf[*store](r, "azblob.New")
	_, _, err := s.putOnce(t.Context(), &write{key: k, name: k, token: 2, body: fencedobj.BytesBody(nil)}, fencedobj.NewWriteID(), state{exists: true, etag: before.ETag})
	if !lostRace(err) {
		t.Fatalf("a write on the ETag read before the claim: %v; want a lost race", err)
	}
	if err := r.Claim(t.Context(), k, 6); !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("Claim with a lower token: %v; want fence.ErrStaleToken", err)
	}
}

// Blobs written with the plain SDK count as token 0: GetBlob returns
// them, Get calls them corrupt, and a fenced write replaces them.
func TestUnfencedBlob(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	r := testResource(t, c, fastOptions)
	k := key(t)
	if _, err := upload(t, c.NewBlockBlobClient(k), "plain", nil, nil); err != nil {
		t.Fatal(err)
	}
	b, data := getAll(t, r, k)
	if string(data) != "plain" || b.Token != 0 {
		t.Fatalf("GetBlob = %q, %+v; want plain, token 0", data, b)
	}
	if _, _, err := r.Get(t.Context(), k); !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("Get of an unfenced blob: %v; want fence.ErrCorrupt", err)
	}
	if tok, err := r.Highest(t.Context(), k); err != nil || tok != 0 {
		t.Fatalf("Highest = %d, %v; want 0", tok, err)
	}
	if err := r.Put(t.Context(), k, 1, []byte("fenced")); err != nil {
		t.Fatalf("Put over an unfenced blob: %v", err)
	}
}

// Keys that Azure would change get escaped blob names, and each still
// names a blob of its own.
func TestEscapedNames(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	r := testResource(t, c, fastOptions)
	base := key(t)
	keys := []string{base, base + ".", base + "..", "/" + base, base + "/", base + "//x", base + "~2E", base + "\\x", base + "/x", base + "/./x", base + "\x01"}
	for i, k := range keys {
		if err := r.Put(t.Context(), k, fence.Token(i+1), []byte(k)); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	for i, k := range keys {
		v, tok, err := r.Get(t.Context(), k)
		if err != nil || string(v) != k || tok != fence.Token(i+1) {
			t.Fatalf("Get(%q) = %q, %d, %v; want its own value and token %d", k, v, tok, err, i+1)
		}
	}
	// The escaped name is the blob's.
	if _, err := c.NewBlobClient(base+"~2E").GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("the blob of %q: %v", base+".", err)
	}
}

// A key that names a lock blob of lockers/azblob in the same container is
// refused, and the lock is left as it was.
func TestLockBlobIsRefused(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	l, err := lockazblob.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := key(t)
	lease, err := l.Acquire(t.Context(), k, lockazblob.MinTTL, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	r := testResource(t, c, fastOptions)
	for name, call := range map[string]func() error{
		"Put":     func() error { return r.Put(t.Context(), k, lease.Token+1, []byte("v")) },
		"Delete":  func() error { return r.Delete(t.Context(), k, lease.Token+1) },
		"Claim":   func() error { return r.Claim(t.Context(), k, lease.Token+1) },
		"Highest": func() error { _, err := r.Highest(t.Context(), k); return err },
		"Get":     func() error { _, _, err := r.Get(t.Context(), k); return err },
	} {
		if err := call(); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s on a lock blob: %v; want fence.ErrInvalid", name, err)
		}
	}
	again, err := l.Acquire(t.Context(), k, lockazblob.MinTTL, nil)
	if err != nil || again.Token != lease.Token+1 {
		t.Fatalf("Acquire after the refused writes = %+v, %v; want token %d", again, err, lease.Token+1)
	}
	_ = l.Release(t.Context(), again)
}
