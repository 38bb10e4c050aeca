package kubernetes

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	coordv1 "k8s.io/api/coordination/v1"

	"github.com/fencekit/fence"
)

// The annotations a Locker writes on a Lease.
const (
	annotationPrefix = "fence.fencekit.dev/"
	// annToken and annOwner name the last lease a Locker gave out on
	// the Lease: its token and owner id, written by the acquiring
	// update. The Lease is that lease's while spec.holderIdentity is
	// the same owner id.
	annToken = annotationPrefix + "token"
	annOwner = annotationPrefix + "owner"
	// annKey is the key of a Lease whose name is a hash of it.
	annKey = annotationPrefix + "key"
	// annValue and annValueToken are the value published with a lease
	// (base64 of its bytes) and the token of that lease.
	annValue      = annotationPrefix + "value"
	annValueToken = annotationPrefix + "value-token"
)

// record is a well-formed Lease as a Locker reads it.
type record struct {
	// rv is the Lease's resourceVersion, and seq its number.
	rv  string
	seq uint64
	// holder is spec.holderIdentity: "" when the Lease is free.
	holder string
	// lease is spec.leaseDurationSeconds; 0 when the Lease is free and
	// has none.
	lease time.Duration
	// transitions is spec.leaseTransitions.
	transitions int32
	// owner and token are the last lease a Locker gave out; "" and 0
	// when none did.
	owner string
	token fence.Token
}

// fenced reports whether the Lease is held by the last lease a Locker
// gave out (rather than free, or held by a holder that is no Locker).
func (r record) fenced() bool { return r.holder != "" && r.holder == r.owner }

// parseLease checks the Lease of key and returns what it holds. A Lease
// that breaks the rules of the package doc gets a *fence.CorruptError.
func parseLease(key string, l *coordv1.Lease) (record, error) {
	corrupt := func(format string, args ...any) (record, error) {
		return record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("Lease %s: ", l.Name) + fmt.Sprintf(format, args...)}
	}
	var r record
	seq, err := strconv.ParseUint(l.ResourceVersion, 10, 64)
	if err != nil || seq == 0 {
		return corrupt("resourceVersion %q is not a positive decimal integer (Kubernetes 1.35 or later has those)", l.ResourceVersion)
	}
	r.rv, r.seq = l.ResourceVersion, seq
	if l.Spec.HolderIdentity != nil {
		r.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseDurationSeconds != nil {
		secs := *l.Spec.LeaseDurationSeconds
		if secs <= 0 {
			return corrupt("spec.leaseDurationSeconds is %d", secs)
		}
		r.lease = time.Duration(secs) * time.Second
	}
	if r.holder != "" && r.lease == 0 {
		return corrupt("spec.holderIdentity is set without spec.leaseDurationSeconds")
	}
	if l.Spec.LeaseTransitions != nil {
		r.transitions = *l.Spec.LeaseTransitions
	}
	a := l.Annotations
	if _, hashed := leaseName(key); hashed {
		if got, ok := a[annKey]; !ok || got != key {
			return corrupt("annotation %s does not name the key", annKey)
		}
	}
	token, hasToken := a[annToken]
	owner, hasOwner := a[annOwner]
	switch {
	case !hasToken && !hasOwner:
		return r, nil
	case hasToken != hasOwner:
		return corrupt("annotations %s and %s go together", annToken, annOwner)
	case owner == "" || len(owner) > MaxOwnerLen || !utf8.ValidString(owner) || strings.IndexByte(owner, 0) >= 0:
		return corrupt("annotation %s is no owner id", annOwner)
	}
	t, err := parseToken(token)
	if err != nil {
		return corrupt("annotation %s: %v", annToken, err)
	}
	r.owner, r.token = owner, t
	return r, nil
}

// parseToken reads a token annotation: a decimal from 1 to 2^64-1,
// written as Token.String writes it.
func parseToken(s string) (fence.Token, error) {
	t, err := strconv.ParseUint(s, 10, 64)
	if err != nil || t == 0 || strconv.FormatUint(t, 10) != s {
		return 0, fmt.Errorf("%q is not a token", s)
	}
	return fence.Token(t), nil
}

// parseValue returns the value published with the lease of token on l,
// "" if none: a value of another lease (another value-token) is not
// read. A value-token that is no token, or a value of this lease that is
// missing, no base64 or longer than fence.MaxValueLen, gets a
// *fence.CorruptError.
func parseValue(key string, l *coordv1.Lease, token fence.Token) (string, error) {
	corrupt := func(format string, args ...any) (string, error) {
		return "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("Lease %s: ", l.Name) + fmt.Sprintf(format, args...)}
	}
	vt, ok := l.Annotations[annValueToken]
	if !ok {
		return "", nil
	}
	t, err := parseToken(vt)
	if err != nil {
		return corrupt("annotation %s: %v", annValueToken, err)
	}
	if t != token {
		return "", nil
	}
	enc, ok := l.Annotations[annValue]
	if !ok {
		return corrupt("annotation %s is missing", annValue)
	}
	if base64.StdEncoding.DecodedLen(len(enc)) > fence.MaxValueLen+3 {
		return corrupt("annotation %s is longer than a value", annValue)
	}
	v, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return corrupt("annotation %s is no base64: %v", annValue, err)
	}
	if len(v) > fence.MaxValueLen {
		return corrupt("annotation %s holds %d bytes, more than %d", annValue, len(v), fence.MaxValueLen)
	}
	return string(v), nil
}

// nextTransitions is leaseTransitions after an acquisition: one more,
// kept at the largest int32.
func nextTransitions(n int32) int32 {
	switch {
	case n == math.MaxInt32:
		return n
	case n < 0:
		return 1
	}
	return n + 1
}
