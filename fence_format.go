package fence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OwnerFingerprint returns what this module prints in place of an owner
// id: "owner:" and the first 12 hex digits of the SHA-256 of owner, or ""
// for an empty owner. The same owner always has the same fingerprint, so
// an operator can match a holder in `fence inspect` with a lease in a log,
// but the fingerprint does not give the owner back.
//
// Owner ids are printed this way because on several stores an owner id,
// with the token anyone may see, is what Release and Renew check: on Azure
// blob leases it is all that is needed to compute the lease id, elsewhere
// it is what a compare-and-delete compares. Whoever read the raw id in a
// log could release or renew the holder's lease. An owner id chosen by the
// caller that is easy to guess ("worker-7") is no secret whatever is
// printed: its fingerprint confirms a guess.
func OwnerFingerprint(owner string) string {
	if owner == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(owner))
	return "owner:" + hex.EncodeToString(sum[:6])
}

// String describes the lease with the owner as its OwnerFingerprint:
// lease "KEY" token N owner:0123456789ab ttl 30s until 2026-12-01T20:00:00Z.
func (l Lease) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lease %q token %d", l.Key, l.Token)
	if l.Owner != "" {
		b.WriteString(" " + OwnerFingerprint(l.Owner))
	}
	if l.TTL != 0 {
		b.WriteString(" ttl " + l.TTL.String())
	}
	if !l.ValidUntil.IsZero() {
		b.WriteString(" until " + l.ValidUntil.UTC().Format(time.RFC3339Nano))
	}
	return b.String()
}

// GoString is the %#v form of the lease, with the owner as its
// OwnerFingerprint.
func (l Lease) GoString() string {
	return fmt.Sprintf("fence.Lease{Key:%q, Owner:%q, Token:%d, TTL:%d, ValidUntil:%#v}",
		l.Key, OwnerFingerprint(l.Owner), l.Token, int64(l.TTL), l.ValidUntil)
}

// Format prints the lease for every verb without its owner id: %v and %s
// as String, %+v with field names, %#v as GoString, %q as String quoted.
// The fields keep the raw owner id for callers that need it.
func (l Lease) Format(f fmt.State, verb rune) {
	plus := fmt.Sprintf("{Key:%s Owner:%s Token:%d TTL:%v ValidUntil:%v}",
		l.Key, OwnerFingerprint(l.Owner), l.Token, l.TTL, l.ValidUntil)
	format(f, verb, "fence.Lease", l.String(), plus, l.GoString())
}

// String describes the lock with the owner as its OwnerFingerprint:
// lock "KEY" held by owner:0123456789ab token N until ..., lock "KEY" free
// (last owner:0123456789ab token N), or lock "KEY" free (never acquired).
func (i LockInfo) String() string {
	switch {
	case i.Held:
		s := fmt.Sprintf("lock %q held by %s token %d", i.Key, orNobody(OwnerFingerprint(i.Owner)), i.Token)
		if !i.ValidUntil.IsZero() {
			s += " until " + i.ValidUntil.UTC().Format(time.RFC3339Nano)
		}
		return s
	case i.Token.Valid() || i.Owner != "":
		return fmt.Sprintf("lock %q free (last %s token %d)", i.Key, orNobody(OwnerFingerprint(i.Owner)), i.Token)
	default:
		return fmt.Sprintf("lock %q free (never acquired)", i.Key)
	}
}

func orNobody(fp string) string {
	if fp == "" {
		return "owner unknown"
	}
	return fp
}

// GoString is the %#v form of the lock's state, with the owner as its
// OwnerFingerprint.
func (i LockInfo) GoString() string {
	return fmt.Sprintf("fence.LockInfo{Key:%q, Held:%t, Owner:%q, Token:%d, ValidUntil:%#v}",
		i.Key, i.Held, OwnerFingerprint(i.Owner), i.Token, i.ValidUntil)
}

// Format prints the lock's state for every verb without its owner id, as
// Lease.Format does.
func (i LockInfo) Format(f fmt.State, verb rune) {
	plus := fmt.Sprintf("{Key:%s Held:%t Owner:%s Token:%d ValidUntil:%v}",
		i.Key, i.Held, OwnerFingerprint(i.Owner), i.Token, i.ValidUntil)
	format(f, verb, "fence.LockInfo", i.String(), plus, i.GoString())
}

// format writes the form of a value holding an owner id that verb asks
// for. Verbs other than v, s and q print as fmt prints a bad verb, with the
// String form: never fmt's own rendering of the fields, which would show
// the owner id (%x hex-encodes it).
func format(f fmt.State, verb rune, typ, str, plus, gostr string) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, gostr)
	case verb == 'v' && f.Flag('+'):
		fmt.Fprint(f, plus)
	case verb == 'v' || verb == 's':
		fmt.Fprintf(f, fmt.FormatString(f, 's'), str) // keeps width and the - flag
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(str))
	default:
		fmt.Fprintf(f, "%%!%c(%s=%s)", verb, typ, str)
	}
}

// GoString is the %#v form of the error, with the owner as its
// OwnerFingerprint. Error never names the owner.
func (e HeldError) GoString() string {
	return fmt.Sprintf("&fence.HeldError{Key:%q, Owner:%q, Token:%d, ValidUntil:%#v}",
		e.Key, OwnerFingerprint(e.Owner), e.Token, e.ValidUntil)
}

// Format prints the error for every verb without the owner id: %v, %+v
// and %s as Error, %#v as GoString, %q as Error quoted. It has a value
// receiver so that a HeldError printed by value, not only *HeldError, is
// covered.
func (e HeldError) Format(f fmt.State, verb rune) {
	format(f, verb, "fence.HeldError", e.Error(), e.Error(), e.GoString())
}

// String describes the handle with its owner as its OwnerFingerprint:
// handle "KEY" token N owner:0123456789ab.
func (h *Handle) String() string {
	if h == nil {
		return "<nil>"
	}
	return fmt.Sprintf("handle %q token %d %s", h.key, h.token, OwnerFingerprint(h.owner))
}

// Format prints the handle for every verb without its owner id (fmt's own
// rendering of a *Handle would show its fields): %#v as a Go comment of
// String, other verbs as Lease.Format does.
func (h *Handle) Format(f fmt.State, verb rune) {
	s := h.String()
	format(f, verb, "*fence.Handle", s, s, "&fence.Handle{ /* "+s+" */ }")
}
