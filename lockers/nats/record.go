package nats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// recordVersion is the format of the records this package writes.
const recordVersion = 1

// maxRecordLen is the largest entry read as a record; a record written is
// at most about two kilobytes (an owner id of MaxOwnerLen bytes and a
// value of fence.MaxValueLen in base64).
const maxRecordLen = 8 << 10

// Record states.
const (
	stateHeld = "held"
	stateFree = "free"
)

// record is the value of one key's KV entry, with the entry's revision.
type record struct {
	held  bool
	owner string
	// token is the lease's fencing token: the revision of the entry that
	// acquired it. The acquiring entry stores none (it cannot know its own
	// revision before it is written); every later entry of the lease, and
	// the free entry that ends it, stores it.
	token fence.Token
	ttl   time.Duration
	// value is the value published with the held lease; "" in a free
	// record.
	value string
	// revision is the entry's revision (its stream sequence).
	revision uint64
}

// wireRecord is the JSON form of a record. Pointers tell a missing field
// from a zero one; the token is a decimal string so that every uint64
// survives readers that parse JSON numbers as floats.
type wireRecord struct {
	Version *int    `json:"v"`
	State   *string `json:"state"`
	Owner   *string `json:"owner"`
	Token   *string `json:"token,omitempty"`
	TTL     *int64  `json:"ttl_ns"`
	Value   []byte  `json:"value,omitempty"`
}

// encode returns the JSON form of r. implicit leaves the token out: the
// record of an acquiring write, whose token is its own revision.
func (r record) encode(implicit bool) []byte {
	v, state, ttl := recordVersion, stateFree, int64(r.ttl)
	if r.held {
		state = stateHeld
	}
	w := wireRecord{Version: &v, State: &state, Owner: &r.owner, TTL: &ttl}
	if !implicit {
		token := r.token.String()
		w.Token = &token
	}
	if r.value != "" {
		w.Value = []byte(r.value)
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic("nats: encoding a record: " + err.Error()) // strings and integers only: cannot fail
	}
	return b
}

// parseRecord parses data, the value of key's entry of revision rev.
// Anything but a record this package writes gets a *fence.CorruptError.
func parseRecord(key string, data []byte, rev uint64) (record, error) {
	corrupt := func(reason string, err error) (record, error) {
		return record{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	if len(data) > maxRecordLen {
		return corrupt(fmt.Sprintf("%d bytes, more than a record's %d", len(data), maxRecordLen), nil)
	}
	if rev == 0 {
		return corrupt("the entry has revision 0", nil)
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
	case w.Version == nil || w.State == nil || w.Owner == nil || w.TTL == nil:
		return corrupt("a field is missing (v, state, owner and ttl_ns are required)", nil)
	case *w.Version != recordVersion:
		return corrupt(fmt.Sprintf("format version %d, not %d", *w.Version, recordVersion), nil)
	case *w.State != stateHeld && *w.State != stateFree:
		return corrupt(fmt.Sprintf("state %q is neither %q nor %q", *w.State, stateHeld, stateFree), nil)
	case *w.Owner == "" || len(*w.Owner) > MaxOwnerLen || !utf8.ValidString(*w.Owner) || strings.IndexByte(*w.Owner, 0) >= 0:
		return corrupt(fmt.Sprintf("owner of %d bytes is not 1 to %d bytes of UTF-8 without NUL", len(*w.Owner), MaxOwnerLen), nil)
	case *w.TTL <= 0 || *w.TTL > int64(MaxTTL):
		return corrupt(fmt.Sprintf("lease duration %dns is outside 0 to %v", *w.TTL, MaxTTL), nil)
	case len(w.Value) > fence.MaxValueLen:
		return corrupt(fmt.Sprintf("a value of %d bytes, more than %d", len(w.Value), fence.MaxValueLen), nil)
	case len(w.Value) > 0 && *w.State == stateFree:
		return corrupt("a free record with a value", nil)
	case w.Token == nil && *w.State == stateFree:
		return corrupt("a free record without a token", nil)
	}
	r := record{held: *w.State == stateHeld, owner: *w.Owner, ttl: time.Duration(*w.TTL), value: string(w.Value), revision: rev}
	if w.Token == nil {
		r.token = fence.Token(rev)
		return r, nil
	}
	token, err := fence.ParseToken(*w.Token)
	if err != nil {
		return corrupt("bad token: "+tokenReason(err), nil)
	}
	if uint64(token) >= rev {
		// The token is the revision of an earlier entry of the key.
		return corrupt(fmt.Sprintf("token %d is not below the entry's revision %d", token, rev), nil)
	}
	r.token = token
	return r, nil
}

// tokenReason returns why fence.ParseToken refused a stored token, in
// words: a stored token is not the caller's input, and an error about a
// corrupted record matches fence.ErrCorrupt only, not fence.ErrInvalid.
func tokenReason(err error) string {
	if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
		return ie.Reason
	}
	return err.Error()
}
