package objlock

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// recordVersion is the format of the records this package writes.
const recordVersion = 1

// Limits of the records.
const (
	// MaxRecordLen is the largest object read as a record; a record
	// written is a few hundred bytes.
	MaxRecordLen = 16 << 10
	// MaxOwnerLen is the longest owner a record holds, in bytes: the
	// MaxOwnerLen of lockers/gcs and lockers/s3.
	MaxOwnerLen = 1024
	// MaxTTL is the longest lease duration a record holds: the MaxTTL of
	// lockers/gcs and lockers/s3.
	MaxTTL = 24 * time.Hour
)

// Record states.
const (
	stateHeld = "held"
	stateFree = "free"
)

// record is the content of one key's object.
type record struct {
	held  bool
	owner string
	token fence.Token
	ttl   time.Duration
	// expires is the holder's wall clock at sending plus ttl, written in
	// trusted-clock mode only; zero otherwise and in free records.
	expires time.Time
	// write is a random id of the write that produced the record, which
	// tells an ambiguous write's author whether it was applied.
	write string
	// value is the value published with the held lease (Publish), any
	// bytes up to fence.MaxValueLen; "" in free records.
	value string
}

// wireRecord is the JSON form of a record. Pointers tell a missing field
// from a zero one; the token is a decimal string so that every uint64
// survives readers that parse JSON numbers as floats.
type wireRecord struct {
	Version *int    `json:"v"`
	State   *string `json:"state"`
	Owner   *string `json:"owner"`
	Token   *string `json:"token"`
	TTL     *int64  `json:"ttl_ns"`
	Expires *int64  `json:"expires_unix_ns,omitempty"`
	Write   *string `json:"write"`
	// Value is the published value, base64 in JSON (any bytes); absent
	// when there is none, so a record without one reads as before values
	// existed.
	Value []byte `json:"value,omitempty"`
}

// newWriteID returns a fresh random write id.
func newWriteID() string { return rand.Text() }

// encode returns the JSON form of r.
func (r record) encode() []byte {
	v, state, token, ttl := recordVersion, stateFree, r.token.String(), int64(r.ttl)
	if r.held {
		state = stateHeld
	}
	w := wireRecord{Version: &v, State: &state, Owner: &r.owner, Token: &token, TTL: &ttl, Write: &r.write}
	if !r.expires.IsZero() {
		ns := r.expires.UnixNano()
		w.Expires = &ns
	}
	if r.value != "" {
		w.Value = []byte(r.value)
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic("objlock: encoding a record: " + err.Error()) // only strings and integers: cannot fail
	}
	return b
}

// parseRecord parses the object of key. Anything but a record this
// package writes gets a *fence.CorruptError.
func parseRecord(key string, data []byte) (record, error) {
	corrupt := func(reason string, err error) (record, error) {
		return record{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	if len(data) > MaxRecordLen {
		return corrupt(fmt.Sprintf("%d bytes, more than a record's %d", len(data), MaxRecordLen), nil)
	}
	var w wireRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return corrupt("not a JSON record", err)
	}
	if dec.More() {
		return corrupt("data after the JSON record", nil)
	}
	switch {
	case w.Version == nil || w.State == nil || w.Owner == nil || w.Token == nil || w.TTL == nil || w.Write == nil:
		return corrupt("a field is missing (v, state, owner, token, ttl_ns and write are required)", nil)
	case *w.Version != recordVersion:
		return corrupt(fmt.Sprintf("format version %d, not %d", *w.Version, recordVersion), nil)
	case *w.State != stateHeld && *w.State != stateFree:
		return corrupt(fmt.Sprintf("state %q is neither %q nor %q", *w.State, stateHeld, stateFree), nil)
	case *w.Owner == "" || len(*w.Owner) > MaxOwnerLen || !utf8.ValidString(*w.Owner):
		return corrupt(fmt.Sprintf("owner of %d bytes is not 1 to %d bytes of UTF-8", len(*w.Owner), MaxOwnerLen), nil)
	case *w.TTL <= 0 || *w.TTL > int64(MaxTTL):
		return corrupt(fmt.Sprintf("lease duration %s is outside 0 to %v", strconv.FormatInt(*w.TTL, 10)+"ns", MaxTTL), nil)
	case *w.Write == "":
		return corrupt("empty write id", nil)
	case w.Expires != nil && *w.Expires <= 0:
		return corrupt(fmt.Sprintf("expiry %d is not a positive Unix time", *w.Expires), nil)
	case w.Expires != nil && *w.State == stateFree:
		return corrupt("a free record with an expiry", nil)
	case len(w.Value) > fence.MaxValueLen:
		return corrupt(fmt.Sprintf("a value of %d bytes, more than %d", len(w.Value), fence.MaxValueLen), nil)
	case len(w.Value) > 0 && *w.State == stateFree:
		return corrupt("a free record with a value", nil)
	}
	token, err := fence.ParseToken(*w.Token)
	if err != nil {
		return corrupt("bad token: "+tokenReason(err), nil)
	}
	r := record{held: *w.State == stateHeld, owner: *w.Owner, token: token, ttl: time.Duration(*w.TTL), write: *w.Write, value: string(w.Value)}
	if w.Expires != nil {
		r.expires = time.Unix(0, *w.Expires)
	}
	return r, nil
}

// tokenReason returns why fence.ParseToken refused a stored token, in
// words. Its *fence.InvalidError is not wrapped: a stored token is not the
// caller's input, and an error about a corrupted record must match
// fence.ErrCorrupt only, not fence.ErrInvalid.
func tokenReason(err error) string {
	if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
		return ie.Reason
	}
	return err.Error()
}
