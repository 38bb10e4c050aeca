package dynamo_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
)

// errLost is the error the faulty transport returns in place of a
// response.
var errLost = errors.New("test: response lost")

// faulty is an http.RoundTripper in front of the real transport to
// dynalite. For requests of one operation (X-Amz-Target ending in op), it
// fails the first unsent requests without sending them, then forwards the
// next lost requests and drops their responses, running after (if set)
// between the two.
type faulty struct {
	next http.RoundTripper
	op   string

	mu     sync.Mutex
	unsent int
	lost   int
	after  func()
	sent   int // requests of op forwarded
}

func (f *faulty) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+f.op) {
		return f.next.RoundTrip(req)
	}
	f.mu.Lock()
	unsent := f.unsent > 0
	if unsent {
		f.unsent--
	}
	lose := !unsent && f.lost > 0
	if lose {
		f.lost--
	}
	if !unsent {
		f.sent++
	}
	f.mu.Unlock()
	if unsent {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errLost
	}
	resp, err := f.next.RoundTrip(req)
	if err != nil || !lose {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if f.after != nil {
		f.after()
	}
	return nil, errLost
}

// faultyTable returns a Table on a fresh table whose requests of op go
// through a faulty transport, and a Table on the same table with a clean
// client. With retries set, the SDK retries errLost (3 attempts);
// otherwise it makes one attempt.
func faultyTable(t *testing.T, op string, retries bool) (*fence.Resource, *fence.Resource, *faulty, *dynamodb.Client) {
	t.Helper()
	clean := emulators.DynamoClient(t, nil)
	good := itemTable(t, clean)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	f := &faulty{next: tr, op: op}
	c := emulators.DynamoClient(t, f, func(o *dynamodb.Options) {
		if !retries {
			o.RetryMaxAttempts = 1
			return
		}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
				if errors.Is(err, errLost) {
					return aws.TrueTernary
				}
				return aws.UnknownTernary
			})}, so.Retryables...)
		})
	})
	opts := dynamo.OptionsOf(good)
	bad, err := dynamo.New(c, dynamo.TableOf(good), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return bad, good, f, clean
}

// newerHolderWrites returns a function that writes item x with token 5
// through good, as a newer holder would between a lost answer and what
// follows it.
func newerHolderWrites(t *testing.T, good *fence.Resource) func() {
	return func() {
		if _, err := dynamo.PutItem(t.Context(), good, 5, &dynamodb.PutItemInput{Item: withKey("x", map[string]types.AttributeValue{"v": s("newer")})}); err != nil {
			t.Errorf("the newer holder's PutItem: %v", err)
		}
	}
}

// fencedWrite is one of the three fenced writes on item id, with a
// create-only condition for the put, so that a retry of an applied put
// fails the caller's condition.
type fencedWrite struct {
	name string
	op   string // the DynamoDB operation it sends
	do   func(t *testing.T, tb *fence.Resource, tok fence.Token, id string) error
	// check verifies on a clean read that the write was applied.
	check func(item map[string]types.AttributeValue) bool
}

var fencedWrites = []fencedWrite{
	{"PutItem", "PutItem", func(t *testing.T, tb *fence.Resource, tok fence.Token, id string) error {
		_, err := dynamo.PutItem(t.Context(), tb, tok, &dynamodb.PutItemInput{
			Item:                withKey(id, map[string]types.AttributeValue{"v": s("mine")}),
			ConditionExpression: aws.String("attribute_not_exists(v)"),
		})
		return err
	}, func(item map[string]types.AttributeValue) bool { return attr(item, "v") == "mine" }},
	{"UpdateItem", "UpdateItem", func(t *testing.T, tb *fence.Resource, tok fence.Token, id string) error {
		_, err := dynamo.UpdateItem(t.Context(), tb, tok, &dynamodb.UpdateItemInput{
			Key: key(id), UpdateExpression: aws.String("ADD #n :one"), ConditionExpression: aws.String("attribute_not_exists(#n)"),
			ExpressionAttributeNames: map[string]string{"#n": "n"}, ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")},
		})
		return err
	}, func(item map[string]types.AttributeValue) bool { return attr(item, "n") == "1" }},
	{"DeleteItem", "PutItem", func(t *testing.T, tb *fence.Resource, tok fence.Token, id string) error {
		_, err := dynamo.DeleteItem(t.Context(), tb, tok, &dynamodb.DeleteItemInput{Key: key(id)})
		return err
	}, func(item map[string]types.AttributeValue) bool {
		return attr(item, dynamo.DefaultTombstoneAttribute) == "true"
	}},
}

// TestLostResponseIsReconciled: the write is applied but its response is
// lost; reading back shows it applied, so the call succeeds.
func TestLostResponseIsReconciled(t *testing.T) {
	t.Parallel()
	for _, w := range fencedWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			bad, good, f, clean := faultyTable(t, w.op, false)
			f.lost = 1
			if err := w.do(t, bad, 4, "x"); err != nil {
				t.Fatalf("%s with its response lost = %v; want success after reading back", w.name, err)
			}
			item := raw(t, clean, good, key("x"))
			if !w.check(item) || attr(item, dynamo.DefaultFenceAttribute) != "4" {
				t.Errorf("item = %v; want the write applied with fence 4", item)
			}
			if f.sent != 1 {
				t.Errorf("%d requests sent, want 1", f.sent)
			}
		})
	}
}

// TestRetryOfAppliedWriteIsReconciled: the first attempt is applied, its
// response lost; the SDK's retry then fails the caller's condition (the
// first attempt made it false). Reading back shows this call's write id,
// so the call succeeds instead of reporting ConditionFailedError.
func TestRetryOfAppliedWriteIsReconciled(t *testing.T) {
	t.Parallel()
	for _, w := range fencedWrites[:2] { // the delete has no caller's condition
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			bad, good, f, clean := faultyTable(t, w.op, true)
			f.lost = 1
			if err := w.do(t, bad, 4, "x"); err != nil {
				t.Fatalf("%s retried after a lost response = %v; want success", w.name, err)
			}
			if f.sent != 2 {
				t.Errorf("%d requests sent, want 2 (one retry)", f.sent)
			}
			if item := raw(t, clean, good, key("x")); !w.check(item) {
				t.Errorf("item = %v; want the write applied once", item)
			}
			// A second call, with a write id of its own, does fail the
			// caller's condition: reconciliation only recognises its own
			// write.
			err := w.do(t, good, 4, "x")
			wantKind(t, w.name+" again", err, "cond", 0)
		})
	}
}

// TestLostResponseOverwrittenIsNotClaimed: the write is applied, its
// response lost, and a newer holder writes before the read-back. The call
// neither claims success nor reports a stale token: the outcome is
// unknown, replaced by the newer token, and the error wraps the
// transport's.
func TestLostResponseOverwrittenIsNotClaimed(t *testing.T) {
	t.Parallel()
	for _, w := range fencedWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			bad, good, f, _ := faultyTable(t, w.op, false)
			f.lost = 1
			f.after = newerHolderWrites(t, good)
			err := w.do(t, bad, 4, "x")
			var ue *fence.UnknownOutcomeError
			if !errors.As(err, &ue) || ue.Token != 4 || ue.Highest != 5 || !errors.Is(err, errLost) ||
				errors.Is(err, fence.ErrStaleToken) || errors.Is(err, dynamo.ErrConditionFailed) {
				t.Fatalf("%s = %v; want an unknown outcome for token 4, replaced by 5, wrapping the transport's error", w.name, err)
			}
			if h, err := dynamo.HighestItem(t.Context(), good, key("x")); err != nil || h != 5 {
				t.Errorf("Highest = %d, %v; want 5", h, err)
			}
		})
	}
}

// TestUnsentWriteIsNotClaimed: a request that never reached the store is
// not mistaken for an applied one, and nothing is written.
func TestUnsentWriteIsNotClaimed(t *testing.T) {
	t.Parallel()
	for _, w := range fencedWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			bad, good, f, clean := faultyTable(t, w.op, false)
			f.unsent = 1
			err := w.do(t, bad, 4, "x")
			// The client cannot know the request was never sent: the
			// outcome is unknown, never a refusal.
			if !errors.Is(err, errLost) || !errors.Is(err, fence.ErrUnknownOutcome) || errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("%s = %v; want an unknown outcome wrapping the transport's error", w.name, err)
			}
			if item := raw(t, clean, good, key("x")); item != nil {
				t.Errorf("an unsent write left %v", item)
			}
			// The same write again goes through.
			if err := w.do(t, bad, 4, "x"); err != nil {
				t.Fatalf("%s retried by the caller = %v", w.name, err)
			}
		})
	}
}

// TestRetryOvertakenIsUnknown: the first attempt is applied and its
// response lost, a newer holder writes a higher token, and the SDK's retry
// is then refused by the fence. The first attempt did land, so a stale
// token (which claims the write was refused) would be false: the outcome
// is unknown.
func TestRetryOvertakenIsUnknown(t *testing.T) {
	t.Parallel()
	for _, w := range fencedWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			bad, good, f, _ := faultyTable(t, w.op, true)
			f.lost = 1
			f.after = newerHolderWrites(t, good)
			err := w.do(t, bad, 4, "x")
			var ue *fence.UnknownOutcomeError
			if !errors.As(err, &ue) || ue.Token != 4 || ue.Highest != 5 || errors.Is(err, fence.ErrStaleToken) || errors.Is(err, dynamo.ErrConditionFailed) {
				t.Fatalf("%s = %v; want an unknown outcome for token 4, replaced by 5", w.name, err)
			}
			if f.sent != 2 {
				t.Errorf("%d requests sent, want 2 (one retry)", f.sent)
			}
		})
	}
}
