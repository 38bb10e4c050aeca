package s3

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/internal/testing/emulators"
)

// counting is an http.RoundTripper that counts requests.
type counting struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkPut compares a fenced PutObject with the same plain,
// unconditional PutObject on MinIO, overwriting one key, side by side:
// ns/op gives the time ratio and requests/op the round trips per write
// (the fence adds a HeadObject).
func BenchmarkPut(b *testing.B) {
	rt := &counting{next: newTransport(b)}
	c := newClient(b, rt)
	bucket := newS3Bucket(b, c)
	fb := testResource(b, c, bucket, &minioOptions)
	for _, size := range []int{1 << 10, 1 << 20} {
		body := bytes.Repeat([]byte("r"), size)
		b.Run(fmt.Sprintf("unfenced/%dKiB", size>>10), func(b *testing.B) {
			key := emulators.UniqueName("bench-")
			start := rt.n.Load()
			for b.Loop() {
				_, err := c.PutObject(b.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "requests/op")
			b.SetBytes(int64(size))
		})
		b.Run(fmt.Sprintf("fenced/%dKiB", size>>10), func(b *testing.B) {
			key := emulators.UniqueName("bench-")
			start := rt.n.Load()
			for b.Loop() {
				if _, err := PutObject(b.Context(), fb, key, 1, bytes.NewReader(body), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "requests/op")
			b.SetBytes(int64(size))
		})
	}
}
