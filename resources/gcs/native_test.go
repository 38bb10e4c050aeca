package gcs

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	memres "github.com/fencekit/fence/resources/memory"
)

func TestUploadKeepsCallerAttributes(t *testing.T) {
	t.Parallel()
	r := testResource(t, newBucket(t, newClient(t, nil)), fastOptions)
	attrs, err := Upload(t.Context(), r, "report.csv", 5, strings.NewReader("a,b\n"), &UploadOptions{
		ContentType:  "text/csv",
		CacheControl: "no-store",
		Metadata:     map[string]string{"customer": "acme"},
		WriteID:      "job-17",
	})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	rd, err := NewReader(t.Context(), r, "report.csv")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rd.Close()
	body, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	a := rd.Attrs
	if string(body) != "a,b\n" || rd.Token != 5 || a.Generation != attrs.Generation {
		t.Errorf("Open = %q, token %d, generation %d; want %q, 5, %d", body, rd.Token, a.Generation, "a,b\n", attrs.Generation)
	}
	if a.ContentType != "text/csv" || a.CacheControl != "no-store" || a.Metadata["customer"] != "acme" {
		t.Errorf("attributes = content type %q, cache control %q, metadata %v; want the caller's", a.ContentType, a.CacheControl, a.Metadata)
	}
	if a.Metadata[MetaToken] != "5" || a.Metadata[MetaWriteID] != "job-17" {
		t.Errorf("fence metadata = %v; want token 5 and write id job-17", a.Metadata)
	}

	// The same write id and token again: recognised as applied, not
	// written again (the generation stays).
	again, err := Upload(t.Context(), r, "report.csv", 5, strings.NewReader("a,b\n"), &UploadOptions{WriteID: "job-17"})
	if err != nil || again.Generation != attrs.Generation {
		t.Errorf("Upload with the same write id = generation %v, %v; want %d, nil", again.Generation, err, attrs.Generation)
	}
}

func TestNotFoundTellsTombstones(t *testing.T) {
	t.Parallel()
	r := testResource(t, newBucket(t, newClient(t, nil)), fastOptions)
	mustPut(t, r, "deleted", 2, []byte("two"))
	if err := r.Delete(t.Context(), "deleted", 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key       string
		tombstone bool
	}{{"never-written", false}, {"deleted", true}} {
		_, _, err := r.Get(t.Context(), tc.key)
		var nf *fence.NotFoundError
		if !errors.As(err, &nf) || nf.Tombstone != tc.tombstone || nf.Key != tc.key {
			t.Errorf("Get(%q) = %v; want a *fence.NotFoundError with Tombstone %v", tc.key, err, tc.tombstone)
		}
		_, err = NewReader(t.Context(), r, tc.key)
		if !errors.As(err, &nf) || nf.Tombstone != tc.tombstone {
			t.Errorf("Open(%q) = %v; want a *fence.NotFoundError with Tombstone %v", tc.key, err, tc.tombstone)
		}
	}
}

// TestMissingBucket: every method on a bucket that does not exist gets an
// error matching fence.ErrStoreMissing and storage.ErrBucketNotExist,
// never "not found" or token 0, although Cloud Storage answers 404 to a
// missing object and a missing bucket alike.
func TestMissingBucket(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	for _, tc := range []struct {
		method string
		call   func(ctx context.Context, r *fence.Resource) error
	}{
		{"Put", func(ctx context.Context, r *fence.Resource) error { return r.Put(ctx, "k", 1, []byte("v")) }},
		{"Get", func(ctx context.Context, r *fence.Resource) error { _, _, err := r.Get(ctx, "k"); return err }},
		{"Delete", func(ctx context.Context, r *fence.Resource) error { return r.Delete(ctx, "k", 1) }},
		{"Highest", func(ctx context.Context, r *fence.Resource) error { _, err := r.Highest(ctx, "k"); return err }},
		{"NewReader", func(ctx context.Context, r *fence.Resource) error { _, err := NewReader(ctx, r, "k"); return err }},
		{"Upload", func(ctx context.Context, r *fence.Resource) error {
			_, err := Upload(ctx, r, "k", 1, nil, nil)
			return err
		}},
	} {
		// A fresh Resource for each, which has not seen the bucket.
		r := testResource(t, c.Bucket("fence-missing-"+tc.method), fastOptions)
		err := tc.call(t.Context(), r)
		if !errors.Is(err, fence.ErrStoreMissing) || !errors.Is(err, storage.ErrBucketNotExist) || errors.Is(err, fence.ErrNotFound) {
			t.Errorf("%s on a missing bucket: %v; want ErrStoreMissing and storage.ErrBucketNotExist", tc.method, err)
		}
	}
}

// TestUploadIntoDeletedBucket: a bucket deleted after the Resource saw it
// still gets ErrStoreMissing on a write (the upload's 404).
func TestUploadIntoDeletedBucket(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	r := testResource(t, bucket, fastOptions)
	mustPut(t, r, "seen", 1, []byte("the bucket is there"))
	if err := bucket.Object("seen").Delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := bucket.Delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.Put(t.Context(), "k", 1, []byte("v")); !errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("Put into a deleted bucket: %v; want ErrStoreMissing", err)
	}
}

// TestPrefix: keys name objects under Options.Prefix, errors name the key,
// and the prefix's length comes off the key limit.
func TestPrefix(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	r := testResource(t, bucket, &Options{Prefix: "tenant/a/"})
	mustPut(t, r, "k", 5, []byte("five"))
	attrs, err := bucket.Object("tenant/a/k").Attrs(t.Context())
	if err != nil || attrs.Metadata[MetaToken] != "5" {
		t.Fatalf("object tenant/a/k = %v, %v; want it with token 5", attrs, err)
	}
	err = r.Put(t.Context(), "k", 4, []byte("four"))
	var se *fence.StaleTokenError
	if !errors.As(err, &se) || se.Key != "k" || se.Highest != 5 {
		t.Errorf("stale Put = %v; want a *fence.StaleTokenError for key k, highest 5", err)
	}
	if want := `fence/gcs: put "k": stale token 4`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("stale Put = %v; want it to start %s", err, want)
	}
	if n := driver.ResourceOf(r).ResourceInfo().MaxKeyLen; n != MaxKeyLen-len("tenant/a/") {
		t.Errorf("Info().MaxKeyLen = %d; want %d", n, MaxKeyLen-len("tenant/a/"))
	}
	rd, err := NewReader(t.Context(), r, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.Token != 5 || rd.Attrs.Name != "tenant/a/k" {
		t.Errorf("Open = token %d, object %q; want 5, tenant/a/k", rd.Token, rd.Attrs.Name)
	}
}

// TestNativeErrorsAreOpErrors: Upload and Open wrap their errors as the
// portable methods do.
func TestNativeErrorsAreOpErrors(t *testing.T) {
	t.Parallel()
	r := testResource(t, offlineBucket(t), nil)
	ctx := t.Context()
	_, errUp := Upload(ctx, r, "", 1, nil, nil)
	_, errOpen := NewReader(ctx, r, "..")
	for op, err := range map[string]error{"put": errUp, "get": errOpen} {
		var oe *fence.OpError
		var ie *fence.InvalidError
		if !errors.As(err, &oe) || oe.Backend != "gcs" || oe.Op != op || !errors.As(err, &ie) {
			t.Errorf("%s: %v; want a *fence.OpError of gcs %s around a *fence.InvalidError", op, err, op)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewReader(cancelled, r, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open on a cancelled context: %v; want context.Canceled", err)
	}
}

// TestAs: As gives the bucket handle New was given, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	h := offlineBucket(t)
	r := testResource(t, h, nil)
	var got *storage.BucketHandle
	if !r.As(&got) || got != h {
		t.Errorf("As(**storage.BucketHandle) = %p; want %p", got, h)
	}
	var c *storage.Client
	if r.As(&c) {
		t.Errorf("As(**storage.Client) = true; want false")
	}
}

// TestNativeRefusesOtherResources: Upload and NewReader take only a
// resource of New, and say so.
func TestNativeRefusesOtherResources(t *testing.T) {
	t.Parallel()
	for _, r := range []*fence.Resource{memres.New(nil), nil} {
		_, errUp := Upload(t.Context(), r, "k", 1, strings.NewReader("x"), nil)
		_, errRead := NewReader(t.Context(), r, "k")
		for op, err := range map[string]error{"put": errUp, "get": errRead} {
			ie, ok := errors.AsType[*fence.InvalidError](err)
			if !ok || ie.Field != "resource" {
				t.Errorf("%s on %v = %v; want a *fence.InvalidError for the resource", op, r, err)
			}
			if oe, ok := errors.AsType[*fence.OpError](err); !ok || oe.Backend != "gcs" || oe.Op != op {
				t.Errorf("%s on %v = %v; want a *fence.OpError of gcs, %q", op, r, err, op)
			}
		}
	}
}
