package s3

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// TestNewValidates checks that New refuses impossible settings.
func TestNewValidates(t *testing.T) {
	t.Parallel()
	var api API = newClientNoEnv()
	for _, tc := range []struct {
		desc   string
		client API
		bucket string
		opts   *Options
	}{
		{"nil client", nil, "b", nil},
		{"empty bucket", api, "", nil},
		{"negative MaxBufferedBody", api, "b", &Options{MaxBufferedBody: -1}},
		{"negative backoff", api, "b", &Options{MinBackoff: -1}},
		{"MinBackoff above MaxBackoff", api, "b", &Options{MinBackoff: 2e9, MaxBackoff: 1e9}},
		{"negative MaxKeySegmentLen", api, "b", &Options{MaxKeySegmentLen: -1}},
		{"prefix leaving no room", api, "b", &Options{Prefix: strings.Repeat("p", MaxKeyLen)}},
		{"prefix not UTF-8", api, "b", &Options{Prefix: "\xff/"}},
	} {
		if _, err := New(tc.client, tc.bucket, tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New with %s: %v; want ErrInvalid", tc.desc, err)
		}
	}
	if _, err := New(api, "b", &Options{Prefix: strings.Repeat("p", MaxKeyLen-1), MaxBufferedBody: 1, MinBackoff: 1, MaxBackoff: 1, MaxKeySegmentLen: 255}); err != nil {
		t.Errorf("New with valid options: %v", err)
	}
}

// TestKeyLimits checks S3's key limit of 1024 bytes of UTF-8 on MinIO with
// keys made of segments MinIO can store, and that bad keys never reach the
// server.
func TestKeyLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// keyOf returns a key of n bytes: segments of 200 bytes between
	// slashes, in two-byte runes when wide.
	keyOf := func(n int, wide bool) string {
		var b strings.Builder
		b.WriteString(emulators.UniqueName("limit-"))
		for b.Len() < n {
			switch {
			case b.Len()%200 == 0:
				b.WriteByte('/')
			case wide && n-b.Len() >= 2 && b.Len()%200 != 199:
				b.WriteString("é")
			default:
				b.WriteByte('k')
			}
		}
		return b.String()
	}
	for _, wide := range []bool{false, true} {
		key := keyOf(MaxKeyLen, wide)
		if len(key) != MaxKeyLen {
			t.Fatalf("test key of %d bytes, want %d", len(key), MaxKeyLen)
		}
		if err := e.b.Put(t.Context(), key, 1, []byte("longest")); err != nil {
			t.Errorf("Put of a %d-byte key (wide %v): %v", len(key), wide, err)
		}
		if got, tok, err := e.b.Get(t.Context(), key); err != nil || string(got) != "longest" || tok != 1 {
			t.Errorf("Get of a %d-byte key = %q, %d, %v", len(key), got, tok, err)
		}
		long := keyOf(MaxKeyLen+1, wide)
		_, errPut := PutObject(t.Context(), e.b, long, 1, strings.NewReader("x"), nil)
		_, errGet := GetObject(t.Context(), e.b, long)
		errDel := e.b.Delete(t.Context(), long, 1)
		_, errHi := e.b.Highest(t.Context(), long)
		for _, err := range []error{errPut, errGet, errDel, errHi} {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("a %d-byte key: %v; want ErrInvalid", len(long), err)
			}
		}
	}
	// MinIO's own limit, set in minioOptions: a segment over 255 bytes.
	seg := emulators.UniqueName("seg-") + "/" + strings.Repeat("s", 256)
	if err := e.b.Put(t.Context(), seg, 1, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("Put of a key with a 256-byte segment under MaxKeySegmentLen 255: %v; want ErrInvalid", err)
	}
}

// TestUserMetadataIsChecked: reserved keys, in any case, and metadata over
// S3's 2 KB are refused before anything is sent.
func TestUserMetadataIsChecked(t *testing.T) {
	t.Parallel()
	b, err := New(newClientNoEnv(), "no-such-bucket", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range []map[string]string{
		{MetaToken: "5"},
		{"FENCETOKEN": "5"},
		{"FenceWriteID": "w"},
		{MetaTombstone: "true"},
		{"": "empty key"},
		{"big": strings.Repeat("v", 2000)},
	} {
		_, err := PutObject(t.Context(), b, "k", 1, strings.NewReader("x"), &PutOptions{Metadata: md})
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("PutObject with metadata %.40v: %v; want ErrInvalid", md, err)
		}
	}
}

// TestPrefix: keys name objects under Options.Prefix, errors name the key,
// and the prefix's length comes off the key limit.
func TestPrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := minioOptions
	o.Prefix = "tenant/a/"
	r := testResource(t, e.client, e.bucket, &o)
	if err := r.Put(t.Context(), "k", 5, []byte("five")); err != nil {
		t.Fatal(err)
	}
	if got := e.rawGet(t, "tenant/a/k"); string(got.body) != "five" || got.md[MetaToken] != "5" {
		t.Errorf("object tenant/a/k = %q, %v; want the value with token 5", got.body, got.md)
	}
	if h, err := e.b.Highest(t.Context(), "tenant/a/k"); err != nil || h != 5 {
		t.Errorf("Highest of the full key without the prefix = %d, %v; want 5", h, err)
	}
	err := r.Put(t.Context(), "k", 4, []byte("four"))
	var se *fence.StaleTokenError
	if !errors.As(err, &se) || se.Key != "k" || se.Highest != 5 {
		t.Errorf("stale Put = %v; want a *fence.StaleTokenError for key k, highest 5", err)
	}
	if want := `fence/s3: put "k": stale token 4`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("stale Put = %v; want it to start %s", err, want)
	}
	if n := driver.ResourceOf(r).ResourceInfo().MaxKeyLen; n != MaxKeyLen-len(o.Prefix) {
		t.Errorf("Info().MaxKeyLen = %d; want %d", n, MaxKeyLen-len(o.Prefix))
	}
	long := strings.Repeat("k/", MaxKeyLen)[:MaxKeyLen-len(o.Prefix)+1]
	if _, err := PutObject(t.Context(), r, long, 1, strings.NewReader("x"), nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("PutObject of a key that is too long with the prefix: %v; want ErrInvalid", err)
	}
}

// TestNativeErrorsAreOpErrors: the native methods wrap their errors as
// the portable ones do.
func TestNativeErrorsAreOpErrors(t *testing.T) {
	t.Parallel()
	r := testResource(t, newClientNoEnv(), "b", nil)
	ctx := t.Context()
	_, errPut := PutObject(ctx, r, "", 1, nil, nil)
	_, errGet := GetObject(ctx, r, "a\x00b")
	errDel := r.Delete(ctx, "k", 0)
	for op, err := range map[string]error{"put": errPut, "get": errGet, "delete": errDel} {
		var oe *fence.OpError
		var ie *fence.InvalidError
		if !errors.As(err, &oe) || oe.Backend != "s3" || oe.Op != op || !errors.As(err, &ie) {
			t.Errorf("%s: %v; want a *fence.OpError of s3 %s around a *fence.InvalidError", op, err, op)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GetObject(cancelled, r, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetObject on a cancelled context: %v; want context.Canceled", err)
	}
}

// TestLargestMetadataIsStored: the most user metadata the package lets
// through is stored by the server, and one byte more is refused before
// anything is sent. The limit counts each key's x-amz-meta- prefix, as
// MinIO does; without it, MinIO refused writes the package accepted.
func TestLargestMetadataIsStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := testResource(t, e.client, e.bucket, &minioOptions)
	fenceKeys := 4*len(metaHeaderPrefix) + len(MetaToken) + 20 + len(MetaWriteID) + fencedobj.WriteIDLen +
		len(MetaTombstone) + len("true") + len(MetaClaimed) + len("true")
	most := maxMetadataLen - fenceKeys - len(metaHeaderPrefix) - len("big")
	md := map[string]string{"big": strings.Repeat("v", most)}
	if _, err := PutObject(t.Context(), r, "k", 1, strings.NewReader("x"), &PutOptions{Metadata: md}); err != nil {
		t.Fatalf("PutObject with %d bytes of metadata: %v", most, err)
	}
	md["big"] += "v"
	if _, err := PutObject(t.Context(), r, "k", 2, strings.NewReader("x"), &PutOptions{Metadata: md}); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("PutObject with %d bytes of metadata: %v; want ErrInvalid", most+1, err)
	}
}
