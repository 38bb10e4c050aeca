package gcs

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// BenchmarkWrite compares a fenced Put with the same unfenced upload (one
// request, no precondition, the same metadata) on fake-gcs-server, side by
// side, for a small and a large value. reqs/op counts the HTTP requests per
// write; the parent logs the fenced/unfenced time ratio. Each writes one
// object again and again: fine on the emulator, which never rate-limits;
// Cloud Storage allows about one write per second per object.
//
//	go test -run '^$' -bench BenchmarkWrite -benchtime 2s ./resources/gcs/
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			ft := newFaultTransport(b)
			bucket := newBucket(b, newClient(b, ft))
			r := testResource(b, bucket, nil)
			value := bytes.Repeat([]byte("v"), size)
			perOp := map[string]time.Duration{}
			var token fence.Token // rises across the runs of each sub-benchmark

			b.Run("unfenced", func(b *testing.B) {
				obj := bucket.Object("unfenced").Retryer(storage.WithPolicy(storage.RetryNever))
				start := ft.requests.Load()
				b.ResetTimer()
				for range b.N {
					w := obj.NewWriter(b.Context())
					w.ChunkSize, w.ContentType = 0, putContentType
					token++
					w.Metadata = fencedobj.Record{Token: token, WriteID: fencedobj.NewWriteID()}.Format(nil)
					if _, err := w.Write(value); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(ft.requests.Load()-start)/float64(b.N), "reqs/op")
				perOp["unfenced"] = b.Elapsed() / time.Duration(b.N)
			})
			b.Run("fenced", func(b *testing.B) {
				start := ft.requests.Load()
				b.ResetTimer()
				for range b.N {
					token++
					if err := r.Put(b.Context(), "fenced", token, value); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(ft.requests.Load()-start)/float64(b.N), "reqs/op")
				perOp["fenced"] = b.Elapsed() / time.Duration(b.N)
			})
			if perOp["unfenced"] > 0 && perOp["fenced"] > 0 {
				b.Logf("fenced/unfenced time per write: %v / %v = %.2f", perOp["fenced"], perOp["unfenced"], float64(perOp["fenced"])/float64(perOp["unfenced"]))
			}
		})
	}
}
