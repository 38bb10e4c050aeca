package gcs

import (
	"hash/crc32"
	"io"
	"runtime"
	"testing"
)

// patternReader produces n bytes of a repeating pattern without holding
// them: a plain io.Reader (no Seek), as a pipe or a socket would be.
type patternReader struct{ n, off int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// TestLargePlainBodyIsStreamed uploads 32 MiB from a plain reader and
// checks that the content arrived whole while the process allocated far
// less than the body: Upload does not buffer it. It does not run in
// parallel, so that no other test allocates meanwhile.
func TestLargePlainBodyIsStreamed(t *testing.T) {
	const size = 32 << 20
	r := testResource(t, newBucket(t, newClient(t, nil)), fastOptions)
	want := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	_, _ = io.Copy(want, &patternReader{n: size})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	attrs, err := Upload(t.Context(), r, "large", 3, &patternReader{n: size}, &UploadOptions{ContentType: "application/octet-stream"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Upload of %d bytes: %v", size, err)
	}
	if attrs.Size != size || attrs.CRC32C != want.Sum32() {
		t.Errorf("stored %d bytes with CRC32C %08x; want %d bytes with %08x", attrs.Size, attrs.CRC32C, size, want.Sum32())
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Upload of %d bytes allocated %d bytes", size, alloc)
	if alloc > size/4 {
		t.Errorf("Upload allocated %d bytes for a %d-byte body; want far less (streamed, not buffered)", alloc, size)
	}

	rd, err := NewReader(t.Context(), r, "large")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	n, err := io.Copy(got, rd)
	if err != nil || n != size || got.Sum32() != want.Sum32() {
		t.Errorf("read back %d bytes with CRC32C %08x, %v; want %d with %08x", n, got.Sum32(), err, size, want.Sum32())
	}
	if rd.Token != 3 {
		t.Errorf("Open token = %d; want 3", rd.Token)
	}
}
