package gcs

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

func TestUploadKeepsCallerAttributes(t *testing.T) {
	t.Parallel()
	r := newResource(t, newBucket(t, newClient(t, nil)), fastOptions)
	attrs, err := r.Upload(t.Context(), "report.csv", 5, strings.NewReader("a,b\n"), &UploadOptions{
		ContentType:  "text/csv",
		CacheControl: "no-store",
		Metadata:     map[string]string{"customer": "acme"},
		WriteID:      "job-17",
	})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	rd, err := r.Open(t.Context(), "report.csv")
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
	again, err := r.Upload(t.Context(), "report.csv", 5, strings.NewReader("a,b\n"), &UploadOptions{WriteID: "job-17"})
	if err != nil || again.Generation != attrs.Generation {
		t.Errorf("Upload with the same write id = generation %v, %v; want %d, nil", again.Generation, err, attrs.Generation)
	}
}

func TestNotFoundTellsTombstones(t *testing.T) {
	t.Parallel()
	r := newResource(t, newBucket(t, newClient(t, nil)), fastOptions)
	mustPut(t, r, "deleted", 2, []byte("two"))
	if err := r.Delete(t.Context(), "deleted", 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		tombstone bool
	}{{"never-written", false}, {"deleted", true}} {
		_, _, err := r.Get(t.Context(), tc.name)
		var nf *fence.NotFoundError
		if !errors.As(err, &nf) || nf.Tombstone != tc.tombstone || nf.Key != tc.name {
			t.Errorf("Get(%q) = %v; want a *fence.NotFoundError with Tombstone %v", tc.name, err, tc.tombstone)
		}
		_, err = r.Open(t.Context(), tc.name)
		if !errors.As(err, &nf) || nf.Tombstone != tc.tombstone {
			t.Errorf("Open(%q) = %v; want a *fence.NotFoundError with Tombstone %v", tc.name, err, tc.tombstone)
		}
	}
}
