package gcs

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/objlock"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// The Locker rests on two preconditions of uploads: ifGenerationMatch=G
// (refused with 412 unless the object is at generation G) and
// ifGenerationMatch=0 (refused unless the object does not exist). This
// checks that the emulator enforces both, so the other tests can trust a
// 412 and a success.
//
// What fake-gcs-server cannot verify: it ignores metageneration
// preconditions and preconditions on deletes (the Locker uses neither:
// it never patches metadata and never deletes), and it never throttles,
// so Cloud Storage's 429 answers to more than about one write per second
// per object are injected by a transport in the tests (faults_test.go),
// not produced by the store. Its generations are distinct per write of a
// name, as Cloud Storage's are.
func TestEmulatorHonoursTheWritePreconditions(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	s := &objects{bucket: newClient(t, nil).Bucket(bucket)}
	ctx := t.Context()
	g1, err := s.Write(ctx, "o", "", []byte("one"))
	if err != nil {
		t.Fatalf("write to a new object: %v", err)
	}
	if _, err := s.Write(ctx, "o", "", []byte("two")); !errors.Is(err, objlock.ErrConflict) {
		t.Fatalf("write with does-not-exist over an existing object returned %v; want a 412", err)
	}
	g2, err := s.Write(ctx, "o", g1, []byte("three"))
	if err != nil || g2 == g1 {
		t.Fatalf("write on the current generation %s returned generation %s, %v; want a new one", g1, g2, err)
	}
	if _, err := s.Write(ctx, "o", g1, []byte("four")); !errors.Is(err, objlock.ErrConflict) {
		t.Fatalf("write on the stale generation %s returned %v; want a 412", g1, err)
	}
	data, gen, found, err := s.Read(ctx, "o")
	if err != nil || !found || gen != g2 || string(data) != "three" {
		t.Fatalf("read = %q, generation %s, found %v, %v; want %q at generation %s", data, gen, found, err, "three", g2)
	}
	// The refused writes left nothing behind, not even a noncurrent
	// generation the SDK could list.
	it := newClient(t, nil).Bucket(bucket).Objects(ctx, &storage.Query{Versions: true})
	n := 0
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("listing: %v", err)
		}
		if attrs.Name == "o" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("listing with versions shows %d generations of the object; want 1 (versioning is off)", n)
	}
}

// A client built with defaults finds the emulator through
// STORAGE_EMULATOR_HOST (as scripts/emulators.sh exports it) and reads
// objects through the XML API's GET /BUCKET/OBJECT, which fake-gcs-server
// serves because the script starts it with -public-host set to its own
// address. Not parallel: it sets the environment variable itself.
func TestDefaultClientReachesTheEmulator(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", testenv.GCSEndpoint(t))
	bucket := newBucket(t)
	client, err := storage.NewClient(t.Context())
	if err != nil {
		t.Fatalf("storage.NewClient: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	l, err := New(client.Bucket(bucket), nil)
	if err != nil {
		t.Fatal(err)
	}
	lease := acquire(t, l, "k", MinTTL)
	if info := inspect(t, l, "k"); !info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect = %+v; want held with token %d", info, lease.Token)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// TestMissingBucket checks that a key in a bucket that does not exist is
// reported as such, not as a free key: Cloud Storage answers 404 to a
// missing bucket and to a missing object alike. The error matches both
// the SDK's storage.ErrBucketNotExist and fence.ErrStoreMissing.
func TestMissingBucket(t *testing.T) {
	t.Parallel()
	missing := "fence-missing-" + strings.ToLower(rand.Text()[:12])
	l := newLocker(t, missing, nil, nil)
	wantMissing := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrBucketNotExist) || !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s in a missing bucket: %v; want an error matching storage.ErrBucketNotExist and fence.ErrStoreMissing", call, err)
		}
	}
	_, err := l.Inspect(t.Context(), "k")
	wantMissing("Inspect", err)
	_, err = l.Acquire(t.Context(), "k", MinTTL, nil)
	wantMissing("Acquire", err)
	wantMissing("Break", l.Break(t.Context(), "k"))
	// Once the bucket exists, a missing object is a free key again.
	c := newClient(t, nil)
	if err := CreateBucket(t.Context(), c.Bucket(missing), "fence-test"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Bucket(missing).Delete(context.Background()) })
	info, err := l.Inspect(t.Context(), "k")
	if err != nil || info.Held || info.Token != 0 {
		t.Errorf("Inspect once the bucket exists: %+v, %v; want a key never acquired", info, err)
	}
}
