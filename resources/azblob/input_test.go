package azblob

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/memory"
)

// New refuses impossible options with fence.ErrInvalid.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	c, err := containerClientAt("http://127.0.0.1:1/devstoreaccount1/c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil): %v; want fence.ErrInvalid", err)
	}
	for name, o := range map[string]Options{
		"long prefix":         {Prefix: strings.Repeat("p", MaxKeyLen)},
		"prefix not UTF-8":    {Prefix: "\xff"},
		"negative buffer":     {MaxBufferedBody: -1},
		"single put too big":  {MaxSinglePut: MaxPutBlobSize + 1},
		"negative block":      {BlockSize: -1},
		"block too big":       {BlockSize: MaxBlockSize + 1},
		"negative backoff":    {MinBackoff: -1},
		"min above max":       {MinBackoff: 2e9, MaxBackoff: 1e9},
		"negative single put": {MaxSinglePut: -1},
	} {
		if _, err := New(c, &o); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New with %s: %v; want fence.ErrInvalid", name, err)
		}
	}
	if _, err := New(c, nil); err != nil {
		t.Errorf("New(c, nil): %v", err)
	}
}

// Bad input to PutBlob and GetBlob gets fence.ErrInvalid before any
// request; so does a resource of another backend.
func TestNativeRefusesBadInput(t *testing.T) {
	t.Parallel()
	c, err := containerClientAt("http://127.0.0.1:1/devstoreaccount1/c") // never reached
	if err != nil {
		t.Fatal(err)
	}
	r := testResource(t, c, Options{Prefix: "p/", MaxBufferedBody: 10})
	long := strings.Repeat("k", MaxKeyLen-1)
	for name, call := range map[string]func() error{
		"empty key":      func() error { _, err := PutBlob(t.Context(), r, "", 1, nil, nil); return err },
		"key too long":   func() error { _, err := PutBlob(t.Context(), r, long, 1, nil, nil); return err },
		"NUL":            func() error { _, err := GetBlob(t.Context(), r, "a\x00b"); return err },
		"not UTF-8":      func() error { _, err := GetBlob(t.Context(), r, "\xff"); return err },
		"token 0":        func() error { _, err := PutBlob(t.Context(), r, "k", 0, nil, nil); return err },
		"reserved meta":  func() error { return putMeta(t, r, map[string]string{"FenceToken": "9"}) },
		"meta name":      func() error { return putMeta(t, r, map[string]string{"a-b": "x"}) },
		"meta digit":     func() error { return putMeta(t, r, map[string]string{"1a": "x"}) },
		"meta value":     func() error { return putMeta(t, r, map[string]string{"a": "é"}) },
		"meta space":     func() error { return putMeta(t, r, map[string]string{"a": " x"}) },
		"meta too large": func() error { return putMeta(t, r, map[string]string{"a": strings.Repeat("x", 8<<10)}) },
		"body over buffer": func() error {
			_, err := PutBlob(t.Context(), r, "k", 1, io.MultiReader(bytes.NewReader(make([]byte, 11))), nil)
			return err
		},
		"many segments":    func() error { return r.Put(t.Context(), strings.Repeat("a/", 254)+"a", 1, nil) },
		"escapes too long": func() error { return r.Put(t.Context(), strings.Repeat("~", 400), 1, nil) },
		"nil resource":     func() error { _, err := GetBlob(t.Context(), nil, "k"); return err },
		"other backend":    func() error { _, err := GetBlob(t.Context(), memory.New(nil), "k"); return err },
	} {
		if err := call(); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v; want fence.ErrInvalid", name, err)
		}
	}
}

func putMeta(t *testing.T, r *fence.Resource, md map[string]string) error {
	_, err := PutBlob(t.Context(), r, "k", 1, nil, &PutOptions{Metadata: md})
	return err
}

// blobName escapes exactly what Azure would change.
func TestBlobName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/name.csv": "plain/name.csv",
		"a.":             "a~2E",
		"a..":            "a.~2E",
		"a./b":           "a~2E/b",
		"./a":            "~2E/a",
		"/a":             "~2Fa",
		"a/":             "a~2F",
		"a//b":           "a/~2Fb",
		"x~y":            "x~7Ey",
		`a\b`:            "a~5Cb",
		"a\tb":           "a~09b",
		"a\u0085":        "a~C2~85",
		"a\uFFFE":        "a~EF~BF~BE",
		" spaced ":       " spaced ",
		"名前":             "名前",
	} {
		got, err := blobName("key", in)
		if err != nil || got != want {
			t.Errorf("blobName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// As gives the container client New was given, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	c, err := containerClientAt("http://127.0.0.1:1/devstoreaccount1/c")
	if err != nil {
		t.Fatal(err)
	}
	r := testResource(t, c, Options{})
	var got *container.Client
	if !r.As(&got) || got != c {
		t.Fatalf("As(**container.Client) = %v, %p; want true, %p", r.As(&got), got, c)
	}
	var other *int
	if r.As(&other) {
		t.Fatal("As(**int) = true")
	}
}
