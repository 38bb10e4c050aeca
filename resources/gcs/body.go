package gcs

import (
	"fmt"
	"io"
)

// body wraps an upload's body: it counts what was read, keeps the caller's
// own read error apart from upload errors, and rewinds an io.Seeker.
type body struct {
	r      io.Reader
	seeker io.Seeker // nil for a plain reader
	start  int64     // offset of the seeker when the upload began
	n      int64     // bytes read since the last rewind
	err    error     // the first read error other than io.EOF
}

// newBody wraps r; a Seeker's current offset is where each attempt starts.
func newBody(r io.Reader) (*body, error) {
	b := &body{r: r}
	if s, ok := r.(io.Seeker); ok {
		off, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("body: finding its offset: %w", err)
		}
		b.seeker, b.start = s, off
	}
	return b, nil
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// rewind makes the body readable from its start again. It reports false
// for a plain reader that has already given bytes.
func (b *body) rewind() (bool, error) {
	if b.seeker == nil {
		return b.n == 0, nil
	}
	if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
		return false, fmt.Errorf("body: seeking back to offset %d: %w", b.start, err)
	}
	b.n = 0
	return true, nil
}
