package azblob

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// body is a write's body that every attempt can send again from its
// start.
type body struct {
	r     io.ReadSeeker
	start int64 // offset of the first byte to send
	size  int64 // bytes from start to the end
}

// newBody prepares r: a seekable r is used in place, from its current
// offset to its end; any other reader is read into memory, up to max
// bytes (more is refused with a *fence.InvalidError).
func newBody(r io.Reader, max int64) (*body, error) {
	if r == nil {
		return &body{r: bytes.NewReader(nil)}, nil
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
		return &body{r: rs, start: start, size: end - start}, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	if int64(len(data)) > max {
		return nil, &fence.InvalidError{Field: "body", Reason: fmt.Sprintf(
			"not an io.ReadSeeker and longer than MaxBufferedBody (%d bytes); pass a seekable body to stream it", max)}
	}
	return &body{r: bytes.NewReader(data), size: int64(len(data))}, nil
}

// section returns n bytes of the body from off (relative to its start)
// as a stream whose offsets start at 0, as the SDK wants its bodies. It
// closes nothing: the SDK closes the bodies it sends.
func (b *body) section(off, n int64) *section {
	return &section{r: b.r, base: b.start + off, size: n}
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

// Close does nothing: the caller's body stays open for the next attempt.
func (s *section) Close() error { return nil }
