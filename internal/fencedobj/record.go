package fencedobj

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fencekit/fence"
)

// The metadata keys of the fence record: the names every fence backend
// gives these fields, without a dash, which Azure's metadata cannot hold.
// Stores hand keys back in another case (S3 in lower case, Azure
// capitalised), so they are matched without regard to case.
const (
	// KeyToken holds the token of the write, in decimal.
	KeyToken = "fencetoken"
	// KeyWriteID holds the random id of the write, by which a write whose
	// answer was lost is recognised when read back.
	KeyWriteID = "fencewriteid"
	// KeyTombstone is "true" on the tombstone a Delete leaves.
	KeyTombstone = "fencetombstone"
)

// Record is the fence record of an object. A store may keep more keys of
// its own beside it (resources/s3 marks a claimed value).
type Record struct {
	Token     fence.Token // 0: an object written without fencing
	WriteID   string
	Tombstone bool
}

// IsKey reports whether k is one of the record's keys, in any case.
func IsKey(k string) bool {
	return strings.EqualFold(k, KeyToken) || strings.EqualFold(k, KeyWriteID) || strings.EqualFold(k, KeyTombstone)
}

// Lookup returns the value of k in md, matching keys without regard to
// case. Two spellings of k with different values are an error.
func Lookup(md map[string]string, k string) (string, bool, error) {
	v, found := md[k]
	for mk, mv := range md {
		if mk == k || !strings.EqualFold(mk, k) {
			continue
		}
		if found && mv != v {
			return "", false, fmt.Errorf("metadata %q appears twice with different values", k)
		}
		v, found = mv, true
	}
	return v, found, nil
}

// Parse reads the fence record of the object of key from its metadata md.
// An object with none of the record's keys is an unfenced object (token
// 0). A token that does not parse or is 0, a tombstone marker other than
// "true", a key spelt twice with different values, or a write id or
// marker without a token is a *fence.CorruptError. The form of the write
// id is the caller's to check.
func Parse(key string, md map[string]string) (Record, error) {
	corrupt := func(reason string, err error) (Record, error) {
		return Record{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	tok, hasTok, err := Lookup(md, KeyToken)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	id, hasID, err := Lookup(md, KeyWriteID)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	tomb, hasTomb, err := Lookup(md, KeyTombstone)
	if err != nil {
		return corrupt("bad fence metadata", err)
	}
	if !hasTok {
		if hasID || hasTomb {
			return corrupt("fence metadata without "+KeyToken, nil)
		}
		return Record{}, nil
	}
	t, err := fence.ParseToken(tok)
	if err != nil {
		// The stored record is corrupt, not the caller's input: keep the
		// parser's reason, not its *fence.InvalidError.
		if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
			err = errors.New(ie.Reason)
		}
		return corrupt(fmt.Sprintf("metadata %s is %q", KeyToken, tok), err)
	}
	if hasTomb && tomb != "true" {
		return corrupt(fmt.Sprintf("metadata %s is %q, not \"true\"", KeyTombstone, tomb), nil)
	}
	return Record{Token: t, WriteID: id, Tombstone: hasTomb}, nil
}

// Format returns the metadata of a write: user's, which the store has
// checked for its own rules and holds none of the record's keys, and the
// record's. An empty write id and a false tombstone marker are left out.
func (r Record) Format(user map[string]string) map[string]string {
	md := make(map[string]string, len(user)+3)
	for k, v := range user {
		md[k] = v
	}
	md[KeyToken] = r.Token.String()
	if r.WriteID != "" {
		md[KeyWriteID] = r.WriteID
	}
	if r.Tombstone {
		md[KeyTombstone] = "true"
	}
	return md
}

// UserMeta returns md without the record's keys, nor the keys for which
// also, when not nil, reports true.
func UserMeta(md map[string]string, also func(string) bool) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		if !IsKey(k) && (also == nil || !also(k)) {
			out[k] = v
		}
	}
	return out
}
