package objlock

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/fencekit/fence/internal/backoff"
)

// ErrConflict reports a write refused by its condition: another write
// came first, or the object it was to replace is gone.
var ErrConflict = errors.New("condition failed: the object changed")

// read returns the content and version of object name; found is false
// when it does not exist. Throttled and failed reads are retried.
func (d *Store) read(ctx context.Context, name string) (data []byte, version string, found bool, err error) {
	for attempt := 1; ; attempt++ {
		data, version, found, err = d.bucket.Read(ctx, name)
		if err == nil {
			return data, version, found, nil
		}
		if err := d.wait(ctx, attempt, "read", name, err); err != nil {
			return nil, "", false, err
		}
	}
}

// write uploads data as object name on the condition that its version is
// ifVersion, or that it does not exist when ifVersion is "", and returns
// the new version. A write refused by the condition returns ErrConflict.
// A throttled write is retried; a write whose outcome is unknown is
// reconciled by reading the object back: the write id in the record tells
// whether it landed.
func (d *Store) write(ctx context.Context, name, ifVersion string, data []byte) (string, error) {
	ambiguous := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		version, err := d.bucket.Write(ctx, name, ifVersion, data)
		if err == nil {
			return version, nil
		}
		if ctx.Err() != nil {
			// The portable layer adds ctx's error.
			return "", fmt.Errorf("write %q: %w", name, err)
		}
		if errors.Is(err, ErrConflict) {
			if ambiguous {
				// Our earlier attempt may be what changed the object.
				if version, applied, rerr := d.reconcile(ctx, name, ifVersion, data); rerr != nil || applied {
					return version, rerr
				}
			}
			return "", ErrConflict
		}
		if d.bucket.Classify(err) == Unknown {
			ambiguous = true
			version, applied, rerr := d.reconcile(ctx, name, ifVersion, data)
			if rerr != nil || applied {
				return version, rerr
			}
		}
		if err := d.wait(ctx, attempt, "write", name, err); err != nil {
			return "", err
		}
	}
}

// reconcile reads object name after a write of data on the condition
// ifVersion whose outcome is unknown. applied is true (with the version)
// when the object holds data; ErrConflict comes back when another write
// changed it; neither means the write did not land and may be tried
// again.
func (d *Store) reconcile(ctx context.Context, name, ifVersion string, data []byte) (version string, applied bool, err error) {
	got, version, found, err := d.read(ctx, name)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("write of %q had no answer and reading it back failed: %w", name, err)
	case found && bytes.Equal(got, data):
		return version, true, nil
	case found != (ifVersion != "") || version != ifVersion:
		return "", false, ErrConflict
	}
	return "", false, nil
}

// wait decides what follows the failed attempt number attempt of op on
// name: nil after a jittered backoff when the request may be tried again,
// or the error to return. When ctx ends, the portable layer adds its
// error.
func (d *Store) wait(ctx context.Context, attempt int, op, name string, err error) error {
	switch {
	case ctx.Err() != nil, d.bucket.Classify(err) == Fatal:
		return fmt.Errorf("%s %q: %w", op, name, err)
	case attempt >= d.attempts:
		return fmt.Errorf("%s %q: gave up after %d attempts: %w", op, name, attempt, err)
	}
	if backoff.Sleep(ctx, d.backoff.Delay(attempt)) != nil {
		return fmt.Errorf("%s %q: %w", op, name, err)
	}
	return nil
}
