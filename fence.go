package fence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// Token is a fencing token. For one key, every successful acquisition
// returns a token strictly greater than every token issued for that key
// before it: across release, expiry, takeover, Break and a restart of the
// store. Renewal keeps the token. The zero Token is never issued and is
// never accepted by a resource.
type Token uint64

// Valid reports whether t could have been issued by a Locker (t != 0).
func (t Token) Valid() bool { return t != 0 }

// String returns the decimal form of t, the form resources store.
func (t Token) String() string { return strconv.FormatUint(uint64(t), 10) }

// ParseToken parses the decimal form written by Token.String. It rejects
// empty strings, signs, spaces, values that overflow 64 bits and "0" with an
// error matching ErrInvalid.
func ParseToken(s string) (Token, error) {
	if s == "" || len(s) > 20 || s[0] < '0' || s[0] > '9' {
		return 0, &InvalidError{Field: "token", Reason: fmt.Sprintf("%q is not a decimal token", s)}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, &InvalidError{Field: "token", Reason: fmt.Sprintf("%q is not a decimal token", s)}
	}
	if v == 0 {
		return 0, &InvalidError{Field: "token", Reason: "token 0 is never valid"}
	}
	return Token(v), nil
}

// Lease is a lock held on one key by one owner.
//
// Holding a Lease is NOT a safety guarantee. A process can pause (garbage
// collection, VM migration, a partition) after checking its lease and wake
// up after the lease expired and another owner took the key. Only the
// Token, checked by the resource being written (see Resource), makes such a
// stale write impossible. The lease is an efficiency device: it keeps two
// workers from doing the same work most of the time.
//
// A lease is identified by its Key, Owner and Token. Every copy of it, the
// value Acquire returned as well as the value returned by any Renew since,
// names the same lease: Renew and Release accept any copy and decide from
// the store's record, and from the latest ValidUntil the Locker gave the
// lease, never from the ValidUntil of the copy alone. A job that outlives
// its TTL can therefore release with the copy it started with.
type Lease struct {
	// Key is the name of the lock.
	Key string
	// Owner identifies the holder. Lockers generate an unguessable owner
	// id with NewOwnerID unless the caller supplies one. It is the raw id,
	// and a secret: with Key and Token it is what Release and Renew need
	// on most stores (on Azure it gives the lease id). Printing a Lease
	// (String, Format) shows it as its OwnerFingerprint; do not log the
	// field itself.
	Owner string
	// Token is the fencing token issued by this acquisition.
	Token Token
	// TTL is the lease duration requested at acquisition; Renew extends the
	// lease by TTL again.
	TTL time.Duration
	// ValidUntil is the holder's conservative local estimate of the expiry:
	// the time the acquiring or renewing request was sent, on the locker's
	// clock, plus TTL. The store may consider the lease expired earlier if
	// clocks drift; treat this as an upper bound. It describes this copy
	// only: a later Renew returns a copy with a later ValidUntil.
	ValidUntil time.Time
}

// LockInfo describes the state of a key as a Locker sees it, without
// taking the lock.
type LockInfo struct {
	Key string
	// Held is true while an owner holds an unexpired lease, as far as the
	// backend can tell.
	Held bool
	// Owner is the current (or, when free, the last) holder. It is empty
	// exactly when Token is 0 (the key was never acquired). It is the raw
	// owner id, a secret as Lease.Owner is; printing a LockInfo shows it
	// as its OwnerFingerprint.
	Owner string
	// Token is the last token issued for the key; 0 if none was.
	Token Token
	// ValidUntil is when the current lease expires, on the caller's clock,
	// where the backend knows it; zero otherwise, and always zero when
	// Held is false.
	ValidUntil time.Time
}

// Locker issues leases with fencing tokens. Each backend implements it and
// passes the conformance suite in lockers/lockertest.
//
// When a method returns an error, its other results are zero values.
//
// All methods honour ctx: when ctx is done before the store answers, the
// method returns an error wrapping ctx.Err(). Such an error is ambiguous:
// the store may have applied the request. Callers reconcile with Inspect or
// an idempotent retry; they never assume the request did not happen.
type Locker interface {
	// Acquire tries once to take key for ttl and never waits for the lock.
	// When another owner holds an unexpired lease it returns an error that
	// matches ErrHeld (a *HeldError with the holder and expiry where
	// known); so does an Acquire by the owner that already holds the key.
	// An empty or over-long key, or a ttl outside the backend's
	// range, gets an error matching ErrInvalid. Acquire is one atomic
	// conditional operation in the store, never a check followed by a
	// write. opts may be nil.
	Acquire(ctx context.Context, key string, ttl time.Duration, opts *AcquireOptions) (Lease, error)

	// Renew extends lease by its TTL, keeping its token. It succeeds only
	// if the caller still holds the lease: if the lease expired, was
	// released, broken or taken over, Renew returns an error matching
	// ErrNotHeld. Renewing the same lease twice is harmless, and so is
	// renewing with an older copy of it (see Lease): the lease is expired
	// only when its latest renewal has run out. A lease whose TTL is
	// outside the backend's range gets an error matching ErrInvalid.
	Renew(ctx context.Context, lease Lease) (Lease, error)

	// Release frees lease if and only if the caller still holds it
	// (compare-and-delete on owner and token, never a blind delete), with
	// any copy of it (see Lease). It returns an error matching ErrNotHeld
	// when the lease was no longer held; the new holder's lease is then
	// left in place. The record and its counter stay in the store so the
	// next token continues the sequence.
	Release(ctx context.Context, lease Lease) error

	// Break frees key whoever holds it: an operator action. The next
	// successful Acquire returns a token greater than the broken holder's.
	// Breaking a free or unknown key is not an error.
	Break(ctx context.Context, key string) error

	// Inspect describes key without taking it.
	Inspect(ctx context.Context, key string) (LockInfo, error)
}

// AcquireOptions are the optional settings of Locker.Acquire.
type AcquireOptions struct {
	// Owner is the owner id recorded with the lease. Default: a fresh
	// NewOwnerID. Set it to make retries of an ambiguous Acquire
	// recognisable in Inspect; never share one owner id between
	// processes.
	Owner string
}

// OwnerOrNew returns o.Owner, or a fresh NewOwnerID when o is nil or its
// Owner is empty. Backends call it in Acquire.
func (o *AcquireOptions) OwnerOrNew() string {
	if o != nil && o.Owner != "" {
		return o.Owner
	}
	return NewOwnerID()
}

// NewOwnerID returns an unguessable owner id: 122 random bits from
// crypto/rand in the textual form of a version 4 UUID (some stores, such as
// Azure blob leases, require that form).
func NewOwnerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:36], b[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// Resource is the resource side of fencing in its portable form: a store of
// named values in which every write carries a token. Each resource backend
// offers this form (besides its native API) and passes the conformance
// suite in resources/resourcetest.
//
// A write carrying token t on name is applied only if t >= highest(name),
// and in the same atomic step highest(name) becomes t. Equal tokens pass (one
// holder writes many times). A lower token is refused with an error
// matching ErrStaleToken (a *StaleTokenError carrying both tokens) and
// changes nothing. The check and the write are one conditional operation or
// one transaction. The high-water mark outlives the data: Delete leaves a
// tombstone carrying its token.
//
// Names are checked with ValidateKey (non-empty, at most the backend's limit
// in bytes, valid UTF-8, no NUL); a bad name, token 0 or a token above what
// the backend can store gets an error matching ErrInvalid and changes
// nothing. An empty value is a value, not an absence. All methods honour
// ctx: when ctx is done before the store answers, the method returns an
// error wrapping ctx.Err(); such an error is ambiguous (the write may have
// been applied), and a retry with the same token and value is harmless.
// A write whose answer was lost is reconciled by reading the resource back:
// it succeeds if the write is found applied, and when that cannot be settled
// (a higher token has replaced it since) the error matches
// ErrUnknownOutcome, never ErrStaleToken.
type Resource interface {
	// Put stores value under name if token >= highest(name).
	Put(ctx context.Context, name string, token Token, value []byte) error
	// Get returns the value stored under name and the token of the write
	// that stored it. A name never written or deleted (a tombstone) gets
	// an error matching ErrNotFound.
	Get(ctx context.Context, name string) (value []byte, token Token, err error)
	// Delete removes the value under name if token >= highest(name),
	// leaving a tombstone so that highest(name) stays at least token.
	// Deleting an absent name is not an error but still records token.
	Delete(ctx context.Context, name string, token Token) error
	// Highest returns the highest token accepted for name, including by a
	// Delete or a Claim; 0 if none was.
	Highest(ctx context.Context, name string) (Token, error)
	// Claim raises highest(name) to token without changing what name
	// holds, if token >= highest(name): afterwards Highest returns at
	// least token and every write with a lower token is refused. A value
	// stays as it was, and Get then returns it with token, as if the
	// claimer had written it back (Claim changes Get's token, not the
	// value). A name never written or deleted stays so: Get still gets an
	// error matching ErrNotFound (a claimed absent name may then read as
	// a tombstone in NotFoundError). A lower token is refused like a
	// stale Put, with an error matching ErrStaleToken, and changes
	// nothing. Claiming again with the current highest token succeeds, so
	// a retry after a lost answer is harmless. A read-modify-write that
	// claims the name with its token before it reads cannot lose an
	// acknowledged write to a stale holder: a write with a lower token
	// that was not applied before the claim never will be.
	Claim(ctx context.Context, name string, token Token) error
}
