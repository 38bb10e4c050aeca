package s3

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// faultEnv is a bucket reached two ways: e.b directly, and fb through a
// fault-injecting transport f.
type faultEnv struct {
	*env
	f  *faulty
	fb *fence.Resource
}

func newFaultEnv(t *testing.T, optFns ...func(*s3.Options)) *faultEnv {
	t.Helper()
	e := newEnv(t)
	f := newFaulty(t)
	o := minioOptions
	o.MinBackoff, o.MaxBackoff = 1, 1 // the tests need no pause
	return &faultEnv{env: e, f: f, fb: testResource(t, newClient(t, f, optFns...), e.bucket, &o)}
}

// TestLostAnswerIsReconciled drops the answer to a PUT that MinIO applied:
// the write must report success, not a failure or a stale token, and must
// not apply twice.
func TestLostAnswerIsReconciled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc     string
		opts     []func(*s3.Options)
		existing bool
		wantPUTs int
	}{
		// The package turns the SDK's retries off for its PUTs, whatever
		// the client's settings: it sees the lost answer itself and reads
		// back.
		{"SDK retries on, new object", nil, false, 1},
		{"SDK retries on, existing object", nil, true, 1},
		{"no SDK retries, new object", []func(*s3.Options){noRetries}, false, 1},
		{"no SDK retries, existing object", []func(*s3.Options){noRetries}, true, 1},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t, tc.opts...)
			key := emulators.UniqueName("lost-")
			if tc.existing {
				if err := e.b.Put(t.Context(), key, 4, []byte("old")); err != nil {
					t.Fatal(err)
				}
			}
			e.f.add(rule{method: "PUT", path: key, n: 1, fault: drop})
			before := e.f.count("PUT")
			res, err := PutObject(t.Context(), e.fb, key, 4, strings.NewReader("new"), nil)
			if err != nil {
				t.Fatalf("PutObject with a lost answer: %v; want success", err)
			}
			if !res.Reconciled || res.Attempts != 1 {
				t.Errorf("PutResult = %+v; want Reconciled after 1 attempt", res)
			}
			if n := e.f.count("PUT") - before; n != tc.wantPUTs {
				t.Errorf("%d PUT requests, want %d", n, tc.wantPUTs)
			}
			e.wantStored(t, key, []byte("new"), 4)
			obj := e.rawGet(t, key)
			if obj.md[MetaWriteID] != res.WriteID {
				t.Errorf("stored write id %q, want the write's %q", obj.md[MetaWriteID], res.WriteID)
			}
		})
	}
}

// TestLostAnswerOfDeleteIsReconciled drops the answer to a tombstone PUT.
func TestLostAnswerOfDeleteIsReconciled(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, noRetries)
	key := emulators.UniqueName("lost-del-")
	if err := e.b.Put(t.Context(), key, 2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	e.f.add(rule{method: "PUT", path: key, n: 1, fault: drop})
	res, err := deleteObject(t, e.fb, key, 3)
	if err != nil || !res.Reconciled {
		t.Fatalf("deleteObject with a lost answer = %+v, %v; want a reconciled success", res, err)
	}
	var nf *fence.NotFoundError
	if _, _, err := e.b.Get(t.Context(), key); !errors.As(err, &nf) || !nf.Tombstone {
		t.Errorf("Get after the delete: %v; want a tombstone", err)
	}
	if h, err := e.b.Highest(t.Context(), key); err != nil || h != 3 {
		t.Errorf("Highest = %d, %v; want 3", h, err)
	}
}

// TestUnsentRequestIsSentAgain fails PUTs before they reach MinIO: reading
// back shows them not applied, so the write sends them again.
func TestUnsentRequestIsSentAgain(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, noRetries)
	key := emulators.UniqueName("unsent-")
	e.f.add(rule{method: "PUT", path: key, n: 2, fault: unsent})
	res, err := PutObject(t.Context(), e.fb, key, 6, strings.NewReader("six"), nil)
	if err != nil {
		t.Fatalf("PutObject after 2 unsent PUTs: %v", err)
	}
	if res.Reconciled || res.Attempts != 3 {
		t.Errorf("PutResult = %+v; want 3 attempts, not reconciled", res)
	}
	e.wantStored(t, key, []byte("six"), 6)
}

// TestPersistentLossGivesUp: when every PUT loses its answer and none was
// applied, the write stops after fencedobj.MaxLost attempts with an error that is
// neither success nor a stale token, and says the outcome is unknown.
func TestPersistentLossGivesUp(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, noRetries)
	key := emulators.UniqueName("down-")
	e.f.add(rule{method: "PUT", path: key, n: 1000, fault: unsent})
	_, err := PutObject(t.Context(), e.fb, key, 1, strings.NewReader("x"), nil)
	var ue *fence.UnknownOutcomeError
	if !errors.As(err, &ue) || errors.Is(err, fence.ErrStaleToken) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Fatalf("PutObject with every answer lost: %v; want an error saying the outcome is unknown", err)
	}
	if n := e.f.count("PUT"); n != fencedobj.MaxLost {
		t.Errorf("%d PUTs sent, want %d", n, fencedobj.MaxLost)
	}
}

// TestServerAnswersAreRetried injects the answers a real S3 gives and MinIO
// does not: 409 ConditionalRequestConflict to racing conditional writes,
// and 500/503 errors, after which the write may or may not have been
// applied. The canned answers are given without forwarding the request.
func TestServerAnswersAreRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
	}{
		{409, "ConditionalRequestConflict"},
		{500, "InternalError"},
		{503, "SlowDown"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t, noRetries)
			key := emulators.UniqueName("answer-")
			if err := e.b.Put(t.Context(), key, 1, []byte("one")); err != nil {
				t.Fatal(err)
			}
			e.f.add(rule{method: "PUT", path: key, n: 1, fault: respond, status: tc.status, code: tc.code})
			res, err := PutObject(t.Context(), e.fb, key, 2, strings.NewReader("two"), nil)
			if err != nil || res.Attempts != 2 {
				t.Fatalf("PutObject after a %d %s = %+v, %v; want success on the 2nd attempt", tc.status, tc.code, res, err)
			}
			e.wantStored(t, key, []byte("two"), 2)
		})
	}
	t.Run("other 409 is not retried", func(t *testing.T) {
		t.Parallel()
		e := newFaultEnv(t, noRetries)
		key := emulators.UniqueName("answer-")
		e.f.add(rule{method: "PUT", path: key, n: 1, fault: respond, status: 409, code: "OperationAborted"})
		if _, err := PutObject(t.Context(), e.fb, key, 2, strings.NewReader("two"), nil); err == nil || s3conn.StatusOf(err) != 409 {
			t.Fatalf("PutObject after a 409 OperationAborted: %v; want that error", err)
		}
	})
}

// TestCancelAfterSendingIsUnknown cancels the context while MinIO applies
// the PUT: the error matches context.Canceled, says the outcome is
// unknown, and a retry with the same token and value is harmless.
func TestCancelAfterSendingIsUnknown(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, noRetries)
	key := emulators.UniqueName("cancel-")
	ctx, cancel := context.WithCancel(t.Context())
	e.f.add(rule{method: "PUT", path: key, n: 1, fault: drop, after: cancel})
	_, err := PutObject(ctx, e.fb, key, 3, strings.NewReader("three"), nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Fatalf("PutObject cancelled after sending: %v; want context.Canceled and an unknown outcome", err)
	}
	e.wantStored(t, key, []byte("three"), 3) // it was applied
	if err := e.fb.Put(t.Context(), key, 3, []byte("three")); err != nil {
		t.Fatalf("retry with the same token: %v", err)
	}
	e.wantStored(t, key, []byte("three"), 3)
}

// TestLostAnswerThenOvertaken: the answer is lost and, before the write
// reads back, a writer with a higher token replaces the object. The write
// cannot tell whether it was applied: it must not claim a stale token (a
// false refusal), but report an unknown outcome naming the higher token.
// This is the limit of reconciling by reading back, named here.
func TestLostAnswerThenOvertaken(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t, noRetries)
	key := emulators.UniqueName("overtaken-")
	e.f.add(rule{method: "PUT", path: key, n: 1, fault: drop, after: func() {
		if err := e.b.Put(t.Context(), key, 9, []byte("nine")); err != nil {
			t.Errorf("overtaking Put: %v", err)
		}
	}})
	err := e.fb.Put(t.Context(), key, 5, []byte("five"))
	var ue *fence.UnknownOutcomeError
	if !errors.As(err, &ue) || ue.Highest != 9 || ue.Token != 5 || errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("Put overtaken after a lost answer: %v; want an *fence.UnknownOutcomeError with highest 9, not a stale token", err)
	}
	e.wantStored(t, key, []byte("nine"), 9)
}
