package fencedobj

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// Body is a write's body that every attempt can send again from its
// start.
type Body struct {
	R     io.ReadSeeker
	Start int64 // offset in R of the first byte to send
	Size  int64 // bytes from Start to the end
}

// NewBody prepares r: a seekable r is used in place, from its current
// offset to its end; any other reader is read into memory, up to max
// bytes (more is refused with a *fence.InvalidError naming
// MaxBufferedBody, the option of each store that sets max). A nil r is
// an empty body.
func NewBody(r io.Reader, max int64) (*Body, error) {
	if r == nil {
		return BytesBody(nil), nil
	}
	if rs, ok := r.(io.ReadSeeker); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		end, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		if end < start {
			return nil, errors.New("body: end before the current offset")
		}
		return &Body{R: rs, Start: start, Size: end - start}, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	if int64(len(data)) > max {
		return nil, &fence.InvalidError{Field: "body", Reason: fmt.Sprintf(
			"not an io.ReadSeeker and longer than MaxBufferedBody (%d bytes); pass a seekable body to stream it", max)}
	}
	return BytesBody(data), nil
}

// BytesBody returns the body of data.
func BytesBody(data []byte) *Body {
	return &Body{R: bytes.NewReader(data), Size: int64(len(data))}
}

// Rewind seeks the body back to its start before an attempt.
func (b *Body) Rewind() error {
	if _, err := b.R.Seek(b.Start, io.SeekStart); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

// Section returns n bytes of the body from off (relative to its start)
// as a stream whose offsets start at 0, as Azure's SDK wants its bodies.
// Reading it seeks the body, so one section is read at a time. Its Close
// does nothing: the caller's body stays open for the next attempt.
func (b *Body) Section(off, n int64) io.ReadSeekCloser {
	return &section{r: b.R, base: b.Start + off, size: n}
}

// section is a window of a seekable body, seen as a whole stream.
type section struct {
	r    io.ReadSeeker
	base int64 // offset in r of the section's first byte
	size int64
	pos  int64 // offset within the section
	// sought is false until the first read positions r at base+pos.
	sought bool
}

func (s *section) Read(p []byte) (int, error) {
	if s.pos >= s.size {
		return 0, io.EOF
	}
	if !s.sought {
		if _, err := s.r.Seek(s.base+s.pos, io.SeekStart); err != nil {
			return 0, err
		}
		s.sought = true
	}
	if rest := s.size - s.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := s.r.Read(p)
	s.pos += int64(n)
	if err == io.EOF && s.pos < s.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *section) Seek(offset int64, whence int) (int64, error) {
	var pos int64
	switch whence {
	case io.SeekStart:
		pos = offset
	case io.SeekCurrent:
		pos = s.pos + offset
	case io.SeekEnd:
		pos = s.size + offset
	default:
		return 0, errors.New("body: bad whence")
	}
	if pos < 0 {
		return 0, errors.New("body: seek before the start")
	}
	s.pos, s.sought = pos, false
	return pos, nil
}

func (s *section) Close() error { return nil }
