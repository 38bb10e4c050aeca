package fence

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"sync"
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
	// Value is the public value the holder published with its lease
	// (Locker.Publish, Handle.Publish): an address, say, for followers of
	// an election. Unlike Owner it is no secret. It is empty when the
	// holder published nothing, and always empty when Held is false: a
	// value lives as long as the lease it was published with.
	Value string
}

// MaxValueLen is the longest public value a lease may carry, in bytes
// (Locker.Publish).
const MaxValueLen = 512

// AcquireOptions are the optional settings of Locker.Acquire.
type AcquireOptions struct {
	// Owner is the owner id recorded with the lease. Default: a fresh
	// NewOwnerID. Set it to make retries of an ambiguous Acquire
	// recognisable in Inspect; never share one owner id between
	// processes.
	Owner string
}

// NewOwnerID returns an unguessable owner id: 122 random bits in the
// textual form of a version 4 UUID (some stores, such as Azure blob
// leases, require that form). The bits come from ChaCha8 generators
// (math/rand/v2.ChaCha8, a cryptographically strong generator) seeded
// from crypto/rand, which cost less per id than crypto/rand itself.
func NewOwnerID() string {
	r := ownerRand.Get().(*mathrand.ChaCha8)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:8], r.Uint64())
	binary.LittleEndian.PutUint64(b[8:16], r.Uint64())
	ownerRand.Put(r)
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

// ownerRand holds the generators of NewOwnerID, each seeded from
// crypto/rand.
var ownerRand = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails on supported platforms
	return mathrand.NewChaCha8(seed)
}}
