package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/resources/dynamo"
	"github.com/fencekit/fence/resources/resourcetest"
)

// dropEvery forwards every request and drops the response of every n-th
// PutItem, after dynalite has applied it.
type dropEvery struct {
	next http.RoundTripper
	n    int64
	seen atomic.Int64
}

func (d *dropEvery) RoundTrip(req *http.Request) (*http.Response, error) {
	put := strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".PutItem")
	resp, err := d.next.RoundTrip(req)
	if err != nil || !put || d.seen.Add(1)%d.n != 0 {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errLost
}

// TestHistoryWithLostResponses: concurrent writers whose clients lose
// every third PutItem response (the SDK retries them) write one name; the
// History checker finds no accepted token lower than one accepted before.
// The same workload without the fence (unconditional PutItem) must show
// violations, or the checker proves nothing.
func TestHistoryWithLostResponses(t *testing.T) {
	t.Parallel()
	clean := emulators.DynamoClient(t, nil)
	table := createTable(t, clean, nil)
	const writers, writes = 4, 15
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	newClient := func(t *testing.T) *dynamodb.Client {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		return emulators.DynamoClient(t, &dropEvery{next: tr, n: 3}, func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
				so.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
					if errors.Is(err, errLost) {
						return aws.TrueTernary
					}
					return aws.UnknownTernary
				})}, so.Retryables...)
			})
		})
	}
	type putFunc func(ctx context.Context, name string, tok fence.Token, v []byte) error
	run := func(t *testing.T, name string, put func(c *dynamodb.Client) putFunc) *resourcetest.History {
		var hist resourcetest.History
		var wg sync.WaitGroup
		for w := range writers {
			p := put(newClient(t))
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			wg.Go(func() {
				tok := fence.Token(2)
				for i := range writes {
					tok += fence.Token(rng.IntN(3))
					write := tok
					if i%5 == 4 {
						write = 1 // stale once anything was accepted
					}
					err := hist.Write(name, write, func() error {
						return p(t.Context(), name, write, fmt.Appendf(nil, "w%d-%d", w, i))
					})
					// An SDK retry refused after an attempt whose answer was
					// lost is an unknown outcome, which History counts as
					// possibly applied.
					if err != nil && !errors.Is(err, fence.ErrStaleToken) && !errors.Is(err, fence.ErrUnknownOutcome) {
						t.Errorf("writer %d, write %d (token %d): %v", w, i, write, err)
					}
				}
			})
		}
		wg.Wait()
		return &hist
	}

	t.Run("fenced", func(t *testing.T) {
		hist := run(t, "fenced", func(c *dynamodb.Client) putFunc {
			r, err := dynamo.New(c, table, nil)
			if err != nil {
				t.Fatal(err)
			}
			return r.Put
		})
		if err := hist.Check(); err != nil {
			t.Fatal(err)
		}
		r, _ := dynamo.New(clean, table, nil)
		if h, err := r.Highest(t.Context(), "fenced"); err != nil || h != hist.MaxAccepted("fenced") {
			t.Errorf("Highest = %d, %v; want the highest accepted token %d", h, err, hist.MaxAccepted("fenced"))
		}
	})
	t.Run("unfenced control", func(t *testing.T) {
		hist := run(t, "unfenced", func(c *dynamodb.Client) putFunc {
			return func(ctx context.Context, name string, tok fence.Token, v []byte) error {
				_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
					dynamo.DefaultKeyAttribute: s(name), dynamo.DefaultValueAttribute: &types.AttributeValueMemberB{Value: v}, dynamo.DefaultFenceAttribute: n(tok.String()),
				}})
				return err
			}
		})
		if err := hist.Check(); err == nil {
			t.Fatal("the unfenced run passed the checker; it should show accepted stale tokens")
		}
	})
}
