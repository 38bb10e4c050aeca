package gcs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// errDropped stands for a connection lost after the request was sent.
var errDropped = errors.New("connection reset by peer (response dropped by the test)")

func TestLostAnswerIsReconciled(t *testing.T) {
	t.Parallel()
	ft := newFaultTransport(t)
	bucket := newBucket(t, newClient(t, ft))
	r := testResource(t, bucket, fastOptions)
	key := "lost-answer"
	mustPut(t, r, key, 3, []byte("three"))

	// The next upload reaches the emulator and is applied, but its answer
	// never comes back: Upload must read the object back, find its own
	// write id and token, and report success without writing again.
	var applied int64
	ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
		if applied != 0 {
			return next.RoundTrip(req)
		}
		resp, err := next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		applied = generationOf(t, resp)
		return nil, errDropped
	})
	before := ft.uploads.Load()
	attrs, err := Upload(t.Context(), r, key, 4, strings.NewReader("four"), nil)
	if err != nil {
		t.Fatalf("Upload whose answer was lost: %v; want success after reading the object back", err)
	}
	if got := ft.uploads.Load() - before; got != 1 {
		t.Errorf("Upload sent %d uploads; want 1 (the lost one was applied, a second would duplicate it)", got)
	}
	if applied == 0 || attrs.Generation != applied {
		t.Errorf("Upload returned generation %d; want %d, the generation of the upload whose answer was lost", attrs.Generation, applied)
	}
	wantValue(t, r, key, "four", 4)
}

func TestLostAnswerThenHigherTokenIsUnknown(t *testing.T) {
	// The answer to our upload is lost, and by the time Upload reads the
	// object back a write with a higher token has replaced it. Whether our
	// write was applied first (then replaced) or refused, the read cannot
	// tell: Upload must report an unknown outcome, never a stale token
	// (which would claim the write was refused) and never success.
	t.Parallel()
	for _, tc := range []struct {
		desc         string
		otherIsFirst bool // the competing write lands before ours (ours gets 412)
	}{
		{"ours refused", true},
		{"ours applied, then replaced", false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			ft := newFaultTransport(t)
			bucket := newBucket(t, newClient(t, ft))
			r := testResource(t, bucket, fastOptions)
			other := testResource(t, newClient(t, nil).Bucket(bucket.BucketName()), nil)
			key := "lost-overtaken"
			mustPut(t, r, key, 3, []byte("three"))
			ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
				if n != 2 {
					return next.RoundTrip(req)
				}
				if tc.otherIsFirst {
					mustPut(t, other, key, 5, []byte("five by another"))
				}
				resp, err := next.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				if !tc.otherIsFirst {
					mustPut(t, other, key, 5, []byte("five by another"))
				}
				return nil, errDropped
			})
			err := r.Put(t.Context(), key, 4, []byte("four"))
			var ue *fence.UnknownOutcomeError
			if !errors.As(err, &ue) || ue.Token != 4 || ue.Highest != 5 || errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("Put(4) after a lost answer and a write of 5 = %v; want an unknown outcome 4, replaced by 5", err)
			}
			wantValue(t, r, key, "five by another", 5)
		})
	}
}

func TestRetriedPutDoesNotWriteAgain(t *testing.T) {
	// A caller whose Put failed ambiguously (ctx done after sending) calls
	// again with the same token and value: the write id derived from them
	// shows the write was applied, so nothing is written twice.
	t.Parallel()
	ft := newFaultTransport(t)
	r := testResource(t, newBucket(t, newClient(t, ft)), fastOptions)
	key := "retried-put"
	ctx, cancel := context.WithCancel(t.Context())
	ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		cancel() // the caller gives up once the request was applied
		if err == nil {
			resp.Body.Close()
		}
		return nil, context.Canceled
	})
	err := r.Put(ctx, key, 7, []byte("seven"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with ctx cancelled in flight = %v; want an error matching context.Canceled", err)
	}
	ft.intercept(nil)
	before := ft.uploads.Load()
	mustPut(t, r, key, 7, []byte("seven"))
	if got := ft.uploads.Load() - before; got != 0 {
		t.Errorf("retried Put sent %d uploads; want 0 (its first attempt was applied)", got)
	}
	wantValue(t, r, key, "seven", 7)
	// A different value under the same token is a new write.
	mustPut(t, r, key, 7, []byte("seven again"))
	if got := ft.uploads.Load() - before; got != 1 {
		t.Errorf("Put of a new value sent %d uploads; want 1", got)
	}
	wantValue(t, r, key, "seven again", 7)
}

func TestThrottledWritesBackOffAndSucceed(t *testing.T) {
	// fake-gcs-server never answers 429 (Cloud Storage does above about
	// one write per second per object), so the test injects the answers.
	t.Parallel()
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusRequestTimeout} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			ft := newFaultTransport(t)
			r := testResource(t, newBucket(t, newClient(t, ft)), fastOptions)
			ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
				if n <= 2 {
					return answer(req, code), nil
				}
				return next.RoundTrip(req)
			})
			mustPut(t, r, "throttled", 2, []byte("two"))
			if got := ft.uploads.Load(); got != 3 {
				t.Errorf("%d uploads; want 3 (two answered %d, then one applied)", got, code)
			}
			wantValue(t, r, "throttled", "two", 2)
		})
	}
}

func TestPermanentErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	ft := newFaultTransport(t)
	r := testResource(t, newBucket(t, newClient(t, ft)), fastOptions)
	ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
		return answer(req, http.StatusForbidden), nil
	})
	err := r.Put(t.Context(), "forbidden", 2, []byte("two"))
	if err == nil || errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("Put answered 403 = %v; want the 403 error", err)
	}
	if got := ft.uploads.Load(); got != 1 {
		t.Errorf("%d uploads; want 1 (403 is not retried)", got)
	}
}

func TestMaxAttemptsBoundsRetries(t *testing.T) {
	t.Parallel()
	ft := newFaultTransport(t)
	opts := *fastOptions
	opts.MaxAttempts = 3
	r := testResource(t, newBucket(t, newClient(t, ft)), &opts)
	ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
		return answer(req, http.StatusTooManyRequests), nil
	})
	err := r.Put(t.Context(), "always-busy", 2, []byte("two"))
	if err == nil {
		t.Fatal("Put always answered 429 succeeded")
	}
	if got := ft.uploads.Load(); got != 3 {
		t.Errorf("%d uploads; want MaxAttempts = 3", got)
	}
	wantNotFound(t, r, "always-busy")
}

// raceFirstUpload makes another writer write key with token just before
// the first upload through ft is forwarded, so that upload meets 412.
func raceFirstUpload(t *testing.T, ft *faultTransport, other *fence.Resource, key string, token fence.Token, value string) {
	ft.intercept(func(n int64, req *http.Request, next http.RoundTripper) (*http.Response, error) {
		if n == 1 {
			mustPut(t, other, key, token, []byte(value))
		}
		return next.RoundTrip(req)
	})
}

func TestConflictRetrySeeksBack(t *testing.T) {
	t.Parallel()
	ft := newFaultTransport(t)
	bucket := newBucket(t, newClient(t, ft))
	r := testResource(t, bucket, fastOptions)
	other := testResource(t, newClient(t, nil).Bucket(bucket.BucketName()), nil)
	raceFirstUpload(t, ft, other, "seek", 4, "four by another")

	// The body starts at offset 6 of the reader: the retry must seek back
	// there, not to 0 and not leave it at the end.
	body := bytes.NewReader([]byte("skip: the body, sent twice"))
	if _, err := body.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := Upload(t.Context(), r, "seek", 4, body, nil); err != nil {
		t.Fatalf("Upload racing an equal token: %v", err)
	}
	if got := ft.uploads.Load(); got != 2 {
		t.Errorf("%d uploads; want 2 (412, then the retry)", got)
	}
	wantValue(t, r, "seek", "the body, sent twice", 4)
}

func TestConflictWithPlainReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc       string
		otherToken fence.Token
		want       error
	}{
		{"equal token: body consumed", 4, ErrBodyConsumed},
		{"higher token: stale", 5, fence.ErrStaleToken},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			ft := newFaultTransport(t)
			bucket := newBucket(t, newClient(t, ft))
			r := testResource(t, bucket, fastOptions)
			other := testResource(t, newClient(t, nil).Bucket(bucket.BucketName()), nil)
			raceFirstUpload(t, ft, other, "plain", tc.otherToken, "by another")
			body := io.MultiReader(strings.NewReader("plain body")) // not a Seeker
			_, err := Upload(t.Context(), r, "plain", 4, body, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Upload of a plain reader racing token %d = %v; want %v", tc.otherToken, err, tc.want)
			}
			if got := ft.uploads.Load(); got != 1 {
				t.Errorf("%d uploads; want 1 (a plain body is never sent twice)", got)
			}
			wantValue(t, r, "plain", "by another", tc.otherToken)
		})
	}
}
