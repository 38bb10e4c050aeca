package fencedobj

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// onlyReader hides every method of a reader but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestBody checks that a seekable body is sent from its offset at the
// time of the write, again after Rewind, and that a plain reader is kept
// in memory up to the limit only.
func TestBody(t *testing.T) {
	t.Parallel()
	r := strings.NewReader("skip:value")
	if _, err := r.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := NewBody(r, 1)
	if err != nil || b.Size != 5 {
		t.Fatalf("NewBody(seekable at 5) = %+v, %v; want 5 bytes", b, err)
	}
	for range 2 {
		if err := b.Rewind(); err != nil {
			t.Fatalf("Rewind: %v", err)
		}
		if got, _ := io.ReadAll(io.LimitReader(b.R, b.Size)); string(got) != "value" {
			t.Fatalf("body after Rewind = %q; want value", got)
		}
	}
	if b, err := NewBody(onlyReader{strings.NewReader("abc")}, 3); err != nil || b.Size != 3 {
		t.Errorf("NewBody(3 plain bytes, limit 3) = %+v, %v", b, err)
	}
	if _, err := NewBody(onlyReader{strings.NewReader("abcd")}, 3); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("NewBody(4 plain bytes, limit 3) = %v; want fence.ErrInvalid", err)
	}
	if b, err := NewBody(nil, 0); err != nil || b.Size != 0 {
		t.Errorf("NewBody(nil) = %+v, %v; want an empty body", b, err)
	}
}

// TestSection checks that sections read their window of the body, each
// from its own start, and seek within it.
func TestSection(t *testing.T) {
	t.Parallel()
	r := strings.NewReader("xx0123456789")
	if _, err := r.Seek(2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := NewBody(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		off, n int64
		want   string
	}{{0, 4, "0123"}, {4, 4, "4567"}, {8, 2, "89"}, {0, 10, "0123456789"}} {
		s := b.Section(tc.off, tc.n)
		if got, err := io.ReadAll(s); err != nil || string(got) != tc.want {
			t.Errorf("Section(%d, %d) = %q, %v; want %q", tc.off, tc.n, got, err, tc.want)
		}
		if end, err := s.Seek(0, io.SeekEnd); err != nil || end != tc.n {
			t.Errorf("Section(%d, %d).Seek(0, end) = %d, %v", tc.off, tc.n, end, err)
		}
		if _, err := s.Seek(1, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(s); string(got) != tc.want[1:] {
			t.Errorf("Section(%d, %d) from 1 = %q; want %q", tc.off, tc.n, got, tc.want[1:])
		}
		if _, err := s.Seek(-1, io.SeekStart); err == nil {
			t.Errorf("Section(%d, %d).Seek(-1) succeeded", tc.off, tc.n)
		}
	}
	short := &Body{R: strings.NewReader("abc"), Size: 5}
	if _, err := io.ReadAll(short.Section(0, 5)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a section past the end of its reader: %v; want io.ErrUnexpectedEOF", err)
	}
}
