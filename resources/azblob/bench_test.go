package azblob

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/fencekit/fence"
)

// requests is a transport for the SDK that counts requests.
type requests struct{ n atomic.Int64 }

func (r *requests) Do(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return http.DefaultClient.Do(req)
}

// BenchmarkPut compares a fenced Put with a plain, unconditional Put Blob
// of the same bytes on Azurite, overwriting one blob, side by side: ns/op
// gives the time ratio, requests/op the round trips per write (the fence
// adds a Get Blob Properties).
func BenchmarkPut(b *testing.B) {
	rt := &requests{}
	c := newContainer(b, rt)
	r := testResource(b, c, fastOptions)
	for _, size := range []int{1 << 10, 1 << 20} {
		body := bytes.Repeat([]byte("r"), size)
		b.Run(fmt.Sprintf("plain/%dKiB", size>>10), func(b *testing.B) {
			bb := c.NewBlockBlobClient(key(b))
			start := rt.n.Load()
			for b.Loop() {
				if _, err := bb.Upload(b.Context(), streaming.NopCloser(bytes.NewReader(body)), &blockblob.UploadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "requests/op")
			b.SetBytes(int64(size))
		})
		b.Run(fmt.Sprintf("fenced/%dKiB", size>>10), func(b *testing.B) {
			k := key(b)
			start := rt.n.Load()
			for b.Loop() {
				if err := r.Put(b.Context(), k, 1, body); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "requests/op")
			b.SetBytes(int64(size))
		})
	}
}

// BenchmarkClaim compares Claim (Get Blob Properties and a conditional
// Set Blob Metadata) with what a resource without it would do to raise a
// blob's token: read the value and Put it back with the new token. Each
// op raises the token by one on a 1 MiB blob.
func BenchmarkClaim(b *testing.B) {
	rt := &requests{}
	c := newContainer(b, rt)
	r := testResource(b, c, fastOptions)
	body := bytes.Repeat([]byte("c"), 1<<20)
	run := func(name string, raise func(b *testing.B, k string, tok fence.Token)) {
		b.Run(name, func(b *testing.B) {
			k := key(b)
			if err := r.Put(b.Context(), k, 1, body); err != nil {
				b.Fatal(err)
			}
			tok := fence.Token(1)
			start := rt.n.Load()
			for b.Loop() {
				tok++
				raise(b, k, tok)
			}
			b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "requests/op")
		})
	}
	run("claim/1024KiB", func(b *testing.B, k string, tok fence.Token) {
		if err := r.Claim(b.Context(), k, tok); err != nil {
			b.Fatal(err)
		}
	})
	run("get-put/1024KiB", func(b *testing.B, k string, tok fence.Token) {
		v, _, err := r.Get(b.Context(), k)
		if err == nil {
			err = r.Put(b.Context(), k, tok, v)
		}
		if err != nil {
			b.Fatal(err)
		}
	})
}
