package s3

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// body is a PUT body that every attempt can send again from its start.
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

// rewind seeks the body back to its start before an attempt.
func (b *body) rewind() error {
	if _, err := b.r.Seek(b.start, io.SeekStart); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}
