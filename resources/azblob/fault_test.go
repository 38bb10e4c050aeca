package azblob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// A write whose answer is lost after Azurite applied it is reconciled by
// reading the blob back: one write sent, success, Reconciled set. The
// same holds for a staged commit and for Claim's Set Blob Metadata.
func TestLostAnswerIsReconciled(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	for _, tc := range []struct {
		name string
		opts Options
		call func(r *fence.Resource, k string) (*PutResult, error)
	}{
		{"PutBlob", fastOptions, func(r *fence.Resource, k string) (*PutResult, error) {
			return PutBlob(t.Context(), r, k, 4, strings.NewReader("four"), nil)
		}},
		{"staged", Options{MaxSinglePut: 10, BlockSize: 4}, func(r *fence.Resource, k string) (*PutResult, error) {
			return PutBlob(t.Context(), r, k, 4, strings.NewReader("four, staged in blocks"), nil)
		}},
		{"Claim", fastOptions, func(r *fence.Resource, k string) (*PutResult, error) {
			return &PutResult{Reconciled: true, Attempts: 1}, r.Claim(t.Context(), k, 4)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := key(t)
			if err := testResource(t, c, fastOptions).Put(t.Context(), k, 3, []byte("three")); err != nil {
				t.Fatal(err)
			}
			var writes atomic.Int64
			f := dropFirstWrite(nil)
			inner := f.fn
			f.intercept(func(n int64, req *http.Request, next policy.Transporter) (*http.Response, error) {
				if isWrite(req) {
					writes.Add(1)
				}
				return inner(n, req, next)
			})
			r := testResource(t, sameContainer(t, c, f), tc.opts)
			res, err := tc.call(r, k)
			if err != nil {
				t.Fatalf("a write whose answer was lost: %v; want success after reading the blob back", err)
			}
			if !res.Reconciled || writes.Load() != 1 {
				t.Fatalf("Reconciled %v after %d writes; want true after 1", res.Reconciled, writes.Load())
			}
			if tok, err := r.Highest(t.Context(), k); err != nil || tok != 4 {
				t.Fatalf("Highest = %d, %v; want 4", tok, err)
			}
		})
	}
}

// A 500 answer (Azure's OperationTimedOut: may or may not have been
// applied) to a write that was not applied is settled by reading back
// and writing again.
func TestServerErrorIsRetried(t *testing.T) {
	t.Parallel()
	f := &faults{}
	var failed atomic.Bool
	f.intercept(func(_ int64, req *http.Request, next policy.Transporter) (*http.Response, error) {
		if isWrite(req) && !failed.Swap(true) {
			return &http.Response{StatusCode: 500, Status: "500 Operation could not be completed within the specified time.",
				Header: http.Header{"X-Ms-Error-Code": {"OperationTimedOut"}}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
		}
		return next.Do(req)
	})
	r := testResource(t, newContainer(t, f), fastOptions)
	k := key(t)
	res, err := PutBlob(t.Context(), r, k, 1, strings.NewReader("v"), nil)
	if err != nil || res.Attempts != 2 || res.Reconciled {
		t.Fatalf("PutBlob after a 500 = %+v, %v; want applied by a second attempt", res, err)
	}
	if v, tok, err := r.Get(t.Context(), k); err != nil || string(v) != "v" || tok != 1 {
		t.Fatalf("Get = %q, %d, %v", v, tok, err)
	}
}

// When a higher token replaced the blob before a write whose answer was
// lost could be read back, the outcome is unknown, never a stale token.
func TestLostAnswerOvertakenIsUnknown(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	other := testResource(t, c, fastOptions)
	k := key(t)
	f := dropFirstWrite(func() {
		if err := other.Put(context.Background(), k, 9, []byte("nine")); err != nil {
			t.Errorf("the overtaking Put: %v", err)
		}
	})
	r := testResource(t, sameContainer(t, c, f), fastOptions)
	err := r.Put(t.Context(), k, 5, []byte("five"))
	if !errors.Is(err, fence.ErrUnknownOutcome) || errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("Put overtaken after a lost answer: %v; want fence.ErrUnknownOutcome only", err)
	}
}

// Every call returns once its ctx ends, also against a store that
// accepts and never answers, with an error wrapping ctx.Err().
func TestHungStoreReturnsWithCtx(t *testing.T) {
	t.Parallel()
	c, err := containerClientAt("http://" + netfault.Hung(t).Addr + "/devstoreaccount1/hung")
	if err != nil {
		t.Fatal(err)
	}
	r := testResource(t, c, fastOptions)
	calls := map[string]func(ctx context.Context) error{
		"Put":     func(ctx context.Context) error { return r.Put(ctx, "k", 1, []byte("v")) },
		"Get":     func(ctx context.Context) error { _, _, err := r.Get(ctx, "k"); return err },
		"Delete":  func(ctx context.Context) error { return r.Delete(ctx, "k", 1) },
		"Highest": func(ctx context.Context) error { _, err := r.Highest(ctx, "k"); return err },
		"Claim":   func(ctx context.Context) error { return r.Claim(ctx, "k", 1) },
		"PutBlob": func(ctx context.Context) error {
			_, err := PutBlob(ctx, r, "k", 1, bytes.NewReader(make([]byte, 100)), nil)
			return err
		},
		"GetBlob": func(ctx context.Context) error { _, err := GetBlob(ctx, r, "k"); return err },
	}
	netfault.ReturnWithContext(t, 300*time.Millisecond, calls)
}

// Azurite's well-known account; the key is its published one.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// containerClientAt returns a client of the container at url, with
// Azurite's account key and no retries.
func containerClientAt(url string) (*container.Client, error) {
	cred, err := container.NewSharedKeyCredential(azuriteAccount, azuriteKey)
	if err != nil {
		return nil, err
	}
	return container.NewClientWithSharedKeyCredential(url, cred, &container.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
}

// A staged block that fails without an answer changes no blob: the write
// stages again and commits once.
func TestStagedBlockFailureIsRetried(t *testing.T) {
	t.Parallel()
	f := &faults{}
	var failed atomic.Bool
	f.intercept(func(_ int64, req *http.Request, next policy.Transporter) (*http.Response, error) {
		if req.URL.Query().Get("comp") == "block" && !failed.Swap(true) {
			return nil, errDropped
		}
		return next.Do(req)
	})
	r := testResource(t, newContainer(t, f), Options{MaxSinglePut: 10, BlockSize: 4, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	k := key(t)
	res, err := PutBlob(t.Context(), r, k, 1, strings.NewReader("staged in four-byte blocks"), nil)
	if err != nil || res.Attempts != 1 || res.Reconciled || res.Blocks != 7 {
		t.Fatalf("PutBlob after a failed Put Block = %+v, %v; want one commit of 7 blocks", res, err)
	}
	if v, _, err := r.Get(t.Context(), k); err != nil || string(v) != "staged in four-byte blocks" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}
