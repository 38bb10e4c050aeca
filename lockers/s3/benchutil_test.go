package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/probe/probetest"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/lockers/dynamo"
)

// benchCounter is an http.RoundTripper that counts the requests it
// carries, by method.
type benchCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func newBenchCounter(t testing.TB) *benchCounter {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &benchCounter{next: tr, n: map[string]int{}}
}

func (c *benchCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[r.Method]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// snapshot returns the counts so far.
func (c *benchCounter) snapshot() benchCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := benchCounts{}
	for m, n := range c.n {
		s[m] = n
	}
	return s
}

// total returns the number of requests so far.
func (c *benchCounter) total() int { return c.snapshot().total() }

// benchCounts is a number of requests by HTTP method.
type benchCounts map[string]int

func (s benchCounts) total() int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// since returns the requests counted in s but not in before.
func (s benchCounts) since(before benchCounts) benchCounts {
	d := benchCounts{}
	for m, n := range s {
		if n -= before[m]; n != 0 {
			d[m] = n
		}
	}
	return d
}

// benchS3Client returns an S3 client of MinIO whose requests go through
// rt, with the SDK's retries, as a user's client has them.
func benchS3Client(t testing.TB, rt http.RoundTripper) *s3.Client {
	t.Helper()
	return emulators.S3Client(t, rt, sdkRetries)
}

// benchBucket creates a bucket of a unique name and removes it, with its
// objects, when the benchmark ends.
func benchBucket(t testing.TB, client *s3.Client) string {
	t.Helper()
	return emulators.S3Bucket(t, client, "fence-s3bench-")
}

// benchTable creates a DynamoDB lease table (dynalite) of a unique name
// and deletes it when the benchmark ends.
func benchTable(t testing.TB) string {
	t.Helper()
	client := emulators.DynamoClient(t, nil)
	table := emulators.UniqueName("fence-s3bench-")
	if err := dynamo.CreateTable(t.Context(), client, table, nil); err != nil {
		t.Fatalf("CreateTable(%q): %v", table, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("delete table %q: %v", table, err)
		}
	})
	return table
}

// benchDynamoOn returns a DynamoDB Locker with opts on table, through a
// client of its own whose requests go through rt.
func benchDynamoOn(t testing.TB, rt http.RoundTripper, table string, opts *dynamo.Options) *fence.Locker {
	t.Helper()
	l, err := dynamo.New(emulators.DynamoClient(t, rt), table, opts)
	if err != nil {
		t.Fatalf("dynamo.New(%q): %v", table, err)
	}
	return l
}

// floorBody is the lock object the floor writes: about the size of a
// Terraform lock file, and of the locker's record.
var floorBody = []byte(`{"ID":"5f3c2a9e-8d41-4b6a-9c0e-2f7d1b3a4c5e","Operation":"OperationTypeApply","Info":"","Who":"bench@host","Version":"1.10.0","Created":"2026-12-05T09:00:00.000000000Z","Path":"bench"}`)

// errFloorHeld is what floorLock returns when the lock object exists.
var errFloorHeld = errors.New("floor: lock object exists")

// floorLock is the floor's acquire: a PutObject of the lock object with
// If-None-Match: * (create only), as a Terraform-style lock file does. It
// returns errFloorHeld when S3 answers 412 Precondition Failed.
func floorLock(ctx context.Context, client *s3.Client, bucket, key string) error {
	_, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:      aws.String(bucket),
		Key:         aws.String(key),
		Body:        bytes.NewReader(floorBody),
		IfNoneMatch: aws.String("*"),
	})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed" {
		return errFloorHeld
	}
	return err
}

// floorUnlock is the floor's release: a DeleteObject of the lock object,
// unconditional.
func floorUnlock(ctx context.Context, client *s3.Client, bucket, key string) error {
	_, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err
}

// bareWrite is the Locker's write sent bare: objects.Write, one PutObject
// of a record the size of the Locker's on the condition If-Match: etag,
// or If-None-Match: * when etag is "", without the Locker's logic around
// it. It returns the new ETag.
func bareWrite(ctx context.Context, client *s3.Client, bucket, key, etag string) (string, error) {
	return (&objects{client: client, bucket: bucket}).Write(ctx, key, etag, floorBody)
}

// contender is one side of a side-by-side benchmark: cycle runs its i-th
// cycle, and the requests of the cycle are counted on c. prep, when set,
// runs before each cycle, untimed, and its requests must go through
// another client.
type contender struct {
	name  string
	c     *benchCounter
	cycle func(i int) error
	prep  func(i int) error
}

// sideBySide runs one cycle of each contender per iteration, the first
// to run rotating, so that the machine's drift falls on all of them
// alike. It reports, for each contender, its median time per cycle
// (NAME_p50_ms), its mean time (NAME_ms) and its requests per cycle
// (NAME_req), and the ratio of the first contender's total time over
// each other's (FIRST/NAME); it logs the requests per cycle by method.
// ns/op is the time of one cycle of every contender.
func sideBySide(b *testing.B, cs ...contender) {
	b.Helper()
	times := make([][]time.Duration, len(cs))
	totals := make([]time.Duration, len(cs))
	reqs := make([]benchCounts, len(cs))
	for k := range reqs {
		reqs[k] = benchCounts{}
	}
	for i := 0; b.Loop(); i++ {
		for j := range cs {
			k := (i + j) % len(cs)
			c := cs[k]
			if c.prep != nil {
				b.StopTimer()
				if err := c.prep(i); err != nil {
					b.Fatalf("%s, before cycle %d: %v", c.name, i, err)
				}
				b.StartTimer()
			}
			before := c.c.snapshot()
			start := time.Now()
			err := c.cycle(i)
			d := time.Since(start)
			if err != nil {
				b.Fatalf("%s, cycle %d: %v", c.name, i, err)
			}
			for m, n := range c.c.snapshot().since(before) {
				reqs[k][m] += n
			}
			times[k] = append(times[k], d)
			totals[k] += d
		}
	}
	n := len(times[0])
	var lines []string
	for k, c := range cs {
		b.ReportMetric(benchMS(probetest.Percentile(times[k], 50)), c.name+"_p50_ms")
		b.ReportMetric(benchMS(totals[k])/float64(n), c.name+"_ms")
		b.ReportMetric(float64(reqs[k].total())/float64(n), c.name+"_req")
		if k > 0 {
			b.ReportMetric(float64(totals[0])/float64(totals[k]), cs[0].name+"/"+c.name)
		}
		lines = append(lines, c.name+": "+reqs[k].per(n))
	}
	b.Logf("requests per cycle by method, over %d cycles:\n%s", n, strings.Join(lines, "\n"))
}

// per formats s divided by n, by method.
func (s benchCounts) per(n int) string {
	methods := make([]string, 0, len(s))
	for m := range s {
		methods = append(methods, m)
	}
	slices.Sort(methods)
	parts := make([]string, 0, len(methods))
	for _, m := range methods {
		parts = append(parts, fmt.Sprintf("%s %.2f", m, float64(s[m])/float64(max(n, 1))))
	}
	return strings.Join(parts, ", ")
}

func benchMS(d time.Duration) float64 { return float64(d) / 1e6 }

// benchKey returns the i-th of n keys named prefix-0 to prefix-(n-1).
func benchKey(prefix string, i, n int) string { return fmt.Sprintf("%s-%d", prefix, i%n) }
