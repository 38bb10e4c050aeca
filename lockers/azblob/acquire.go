package azblob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
)

// maxAttempts bounds how often Acquire reads the blob again when it
// changed between the read and the lease request, and how often the token
// increment is retried when the blob's ETag changed without its token.
const maxAttempts = 3

// errChanged and errLeased are try's reasons for not taking the lease.
var (
	errChanged = errors.New("the blob changed since it was read")
	errLeased  = errors.New("another lease is active")
)

// Acquire implements driver.Locker. It reads the key's blob
// (creating it the first time), takes a lease with If-Match on the ETag
// read, and writes the next token under that lease (see the package doc).
// A key whose current lease is verifiably its last owner's loses at once,
// after two reads and no write; the HeldError then names the holder and
// its token. A key taken by someone who has not written the token yet
// loses to the service's LeaseAlreadyPresent, and the HeldError names
// nobody. Keys, owners and TTLs that Azure cannot hold as given are
// refused with a *fence.InvalidError before anything is sent.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	if err := checkInput(key, owner, ttl); err != nil {
		return fence.Lease{}, err
	}
	r, err := d.readOrCreate(ctx, key)
	if err != nil {
		return fence.Lease{}, err
	}
	for attempt := 1; ; attempt++ {
		if r.leased {
			he, err := d.held(ctx, key, r)
			if err != nil {
				return fence.Lease{}, err
			}
			if he.Owner != "" {
				return fence.Lease{}, he
			}
		}
		lease, err := d.try(ctx, key, owner, ttl, r)
		switch {
		case err == nil:
			return lease, nil
		case errors.Is(err, errLeased) || errors.Is(err, errChanged) && attempt == maxAttempts:
			return fence.Lease{}, &fence.HeldError{Key: key}
		case !errors.Is(err, errChanged):
			return fence.Lease{}, err
		}
		if r, err = d.readOrCreate(ctx, key); err != nil {
			return fence.Lease{}, err
		}
	}
}

// try takes the lease that issues the token after r's to owner for ttl,
// and writes that token. It fails with errChanged when the blob changed
// since r was read, and with errLeased when another lease is active.
func (d *store) try(ctx context.Context, key, owner string, ttl time.Duration, r record) (fence.Lease, error) {
	token, meta, err := r.next(key, owner, ttl)
	if err != nil {
		return fence.Lease{}, err
	}
	id := LeaseID(key, owner, token, ttl)
	etag, err := d.acquireLease(ctx, key, id, ttl, r.etag)
	switch {
	case err == nil:
	case bloberror.HasCode(err, bloberror.LeaseAlreadyPresent, bloberror.LeaseIsBreakingAndCannotBeAcquired):
		return fence.Lease{}, errLeased
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobNotFound):
		return fence.Lease{}, errChanged
	case answered(err):
		return fence.Lease{}, wrap("lease", err)
	default:
		// No answer: the lease may be ours. A read conditioned on its
		// id tells, while ctx lasts; otherwise undo it.
		if ctx.Err() != nil {
			d.undo(ctx, key, id)
			return fence.Lease{}, wrap("lease", err)
		}
		cur, rerr := d.read(ctx, key, id)
		switch {
		case rerr != nil && answered(rerr) && isNotHeld(rerr):
			return fence.Lease{}, wrap("lease (not taken)", err)
		case rerr != nil:
			d.undo(ctx, key, id)
			return fence.Lease{}, wrap("lease", errors.Join(err, rerr))
		case cur.token != r.token:
			d.undo(ctx, key, id)
			return fence.Lease{}, errChanged
		}
		etag = cur.etag
	}
	if err := d.bump(ctx, key, owner, id, etag, r.token, token, meta); err != nil {
		if !errors.Is(err, fence.ErrHeld) {
			d.undo(ctx, key, id)
		}
		return fence.Lease{}, err
	}
	return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl}, nil
}

// bump writes meta, which issues token to owner, under the lease id if the
// blob's ETag is still etag and its token still prev. When the write fails
// its condition (the SDK may have repeated a write that landed) or gets no
// answer, it reads the blob under the lease: the token and owner show
// whether the write landed, and a changed ETag with the token unchanged is
// written again. A lease lost before the write gives a *fence.HeldError.
func (d *store) bump(ctx context.Context, key, owner, id string, etag azcore.ETag, prev, token fence.Token, meta map[string]*string) error {
	what := fmt.Sprintf("write token %d", token)
	lost := func(err error) error {
		return fmt.Errorf("%s: the lease ended before the token was written: %w", what, errors.Join(&fence.HeldError{Key: key}, err))
	}
	for attempt := 1; ; attempt++ {
		err := d.setMeta(ctx, key, id, etag, meta)
		switch {
		case err == nil:
			return nil
		case isNotHeld(err):
			return lost(err)
		case answered(err) && !bloberror.HasCode(err, bloberror.ConditionNotMet),
			ctx.Err() != nil, attempt == maxAttempts:
			return wrap(what, err)
		}
		cur, rerr := d.read(ctx, key, id)
		switch {
		case rerr != nil && isNotHeld(rerr):
			return lost(rerr)
		case rerr != nil:
			return wrap(what, errors.Join(err, rerr))
		case cur.token == token && cur.owner == owner:
			return nil // the write landed
		case cur.token != prev:
			return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the token changed from %d to %d under a lease that issues %d", prev, cur.token, token)}
		}
		etag = cur.etag
	}
}

// held returns the HeldError of key, leased when r was read. It names r's
// owner and token as the holder if a read conditioned on the lease id of
// r's acquisition succeeds with r's token and owner: that lease is then
// the active one. Otherwise the holder is unknown (another acquirer is
// between its lease and its token write, or the lease just ended).
func (d *store) held(ctx context.Context, key string, r record) (*fence.HeldError, error) {
	he := &fence.HeldError{Key: key}
	if r.token == 0 {
		return he, nil
	}
	cur, err := d.read(ctx, key, LeaseID(key, r.owner, r.token, r.ttl))
	switch {
	case err == nil && cur.token == r.token && cur.owner == r.owner:
		he.Owner, he.Token = r.owner, r.token
	case err != nil && !answered(err) && !errors.Is(err, fence.ErrCorrupt):
		return nil, wrap("read", err)
	}
	return he, nil
}

// readOrCreate reads key's blob, creating it with token 0 the first time.
func (d *store) readOrCreate(ctx context.Context, key string) (record, error) {
	r, err := d.read(ctx, key, "")
	if err == nil {
		return r, nil
	}
	if !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return record{}, wrap("read", err)
	}
	r, err = d.create(ctx, key)
	if err == nil {
		return r, nil
	}
	if answered(err) && !bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) || ctx.Err() != nil {
		return record{}, wrap("create blob", err)
	}
	// Created meanwhile, by another acquirer or by this request.
	if r, err = d.read(ctx, key, ""); err != nil {
		return record{}, wrap("read", err)
	}
	return r, nil
}

// undo releases the lease id on key's blob, which Acquire took but could
// not finish; it is harmless when the lease is not active. It runs even
// when ctx is done, for at most the cleanup timeout, and its outcome does
// not matter: a lease it fails to release runs out after its TTL, and no
// token was handed out under it.
func (d *store) undo(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cleanup)
	defer cancel()
	_ = d.releaseLease(ctx, key, id)
}
