package azblob

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fencekit/fence"
)

// Metadata names on a lock blob. Azure metadata names are
// case-insensitive; the SDK returns them capitalised, so they are looked
// up without regard to case.
const (
	// metaToken holds the last token issued, in decimal; "0" until the
	// first acquisition.
	metaToken = "fencetoken"
	// metaOwner holds the owner of the last lease.
	metaOwner = "fenceowner"
	// metaTTL holds the duration of the last lease in whole seconds.
	metaTTL = "fencettl"
	// metaValue holds the value published with a lease (Publish), in
	// standard base64 (metadata values are HTTP header text), and
	// metaValueToken the token of the lease it was published with: a
	// value of another token belongs to an earlier lease and is not
	// shown. Both are absent until the first Publish, removed by a
	// Publish of "", and dropped by the next Acquire's token write.
	metaValue      = "fencevalue"
	metaValueToken = "fencevaluetoken"
)

// record is what a lock blob says: the last token issued, its owner and
// lease duration, the lease state, and the ETag and metadata it was read
// with.
type record struct {
	token  fence.Token
	owner  string
	ttl    time.Duration // 0 when token is 0
	leased bool          // a lease is active (leased or breaking)
	state  string        // the lease state as read ("" when not read)
	etag   azcore.ETag
	meta   map[string]*string // all metadata, kept on rewrite
}

// parseRecord parses the metadata of the lock blob of key. A missing or
// malformed field, or fields that contradict each other, give a
// *fence.CorruptError.
func parseRecord(key string, meta map[string]*string) (record, error) {
	r := record{meta: meta}
	corrupt := func(reason string, err error) (record, error) {
		return record{}, &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	tok, ok := lookup(meta, metaToken)
	if !ok {
		return corrupt("the blob has no "+metaToken+" metadata", nil)
	}
	if tok != "0" {
		t, err := fence.ParseToken(tok)
		if err != nil {
			return corrupt(metaToken+" is not a token: "+tokenReason(err), nil)
		}
		r.token = t
	}
	r.owner, _ = lookup(meta, metaOwner)
	ttl, hasTTL := lookup(meta, metaTTL)
	switch {
	case r.token == 0 && (r.owner != "" || hasTTL):
		return corrupt("token 0 with an owner or a TTL", nil)
	case r.token == 0:
		return r, nil
	case r.owner == "":
		return corrupt(fmt.Sprintf("token %d without an owner", r.token), nil)
	case !hasTTL:
		return corrupt(fmt.Sprintf("token %d without a TTL", r.token), nil)
	}
	secs, err := strconv.ParseUint(ttl, 10, 8)
	if err != nil || len(ttl) > 2 || ttl[0] == '0' {
		return corrupt(fmt.Sprintf("%s %q is not a number of seconds", metaTTL, ttl), err)
	}
	r.ttl = time.Duration(secs) * time.Second
	if r.ttl < MinTTL || r.ttl > MaxTTL {
		return corrupt(fmt.Sprintf("%s %q is out of range", metaTTL, ttl), nil)
	}
	if len(r.owner) > MaxOwnerLen || ownerChars(r.owner) != nil {
		return corrupt(fmt.Sprintf("%s %q is not a valid owner id", metaOwner, r.owner), nil)
	}
	return r, nil
}

// next returns the metadata that issues the next token to owner for ttl:
// every other entry of r.meta is kept (SetMetadata replaces all of it).
// It fails when the counter cannot grow.
func (r record) next(key, owner string, ttl time.Duration) (fence.Token, map[string]*string, error) {
	if r.token == math.MaxUint64 {
		return 0, nil, &fence.CorruptError{Key: key, Reason: "the token counter is at its maximum"}
	}
	t := r.token + 1
	meta := make(map[string]*string, len(r.meta)+3)
	for k, v := range r.meta {
		switch strings.ToLower(k) {
		case metaToken, metaOwner, metaTTL, metaValue, metaValueToken:
		default:
			meta[k] = v
		}
	}
	meta[metaToken] = ptr(t.String())
	meta[metaOwner] = ptr(owner)
	meta[metaTTL] = ptr(strconv.Itoa(int(ttl / time.Second)))
	return t, meta, nil
}

// withValue returns the metadata of r with value published for the
// lease of token: every other entry is kept (SetMetadata replaces all of
// it); "" removes the value.
func (r record) withValue(token fence.Token, value string) map[string]*string {
	meta := make(map[string]*string, len(r.meta)+2)
	for k, v := range r.meta {
		switch strings.ToLower(k) {
		case metaValue, metaValueToken:
		default:
			meta[k] = v
		}
	}
	if value != "" {
		meta[metaValue] = ptr(base64.StdEncoding.EncodeToString([]byte(value)))
		meta[metaValueToken] = ptr(token.String())
	}
	return meta
}

// published returns the value published with the lease of r's token, ""
// if none (or one of an earlier lease). A value token that is not a
// token, or a value of this lease that is missing, not base64 or longer
// than fence.MaxValueLen, gets a *fence.CorruptError naming key. Only
// Inspect and the probes read it: a broken value never stops an Acquire,
// whose token write drops it.
func (r record) published(key string) (string, error) {
	vt, ok := lookup(r.meta, metaValueToken)
	if !ok {
		return "", nil
	}
	corrupt := func(reason string, err error) (string, error) {
		return "", &fence.CorruptError{Key: key, Reason: reason, Err: err}
	}
	t, err := fence.ParseToken(vt)
	if err != nil {
		return corrupt(metaValueToken+" is not a token: "+tokenReason(err), nil)
	}
	if t != r.token {
		return "", nil
	}
	enc, ok := lookup(r.meta, metaValue)
	if !ok {
		return corrupt(fmt.Sprintf("%s %d without a %s", metaValueToken, t, metaValue), nil)
	}
	v, err := base64.StdEncoding.DecodeString(enc)
	switch {
	case err != nil:
		return corrupt(metaValue+" is not base64", err)
	case len(v) > fence.MaxValueLen:
		return corrupt(fmt.Sprintf("%s has %d bytes, more than %d", metaValue, len(v), fence.MaxValueLen), nil)
	}
	return string(v), nil
}

// info describes r as LockInfo. A leased blob whose token is 0 is being
// taken for the first time and shows as never acquired until the token is
// written.
func (r record) info(key string) fence.LockInfo {
	if r.token == 0 {
		return fence.LockInfo{Key: key}
	}
	return fence.LockInfo{Key: key, Held: r.leased, Owner: r.owner, Token: r.token}
}

// lookup finds the metadata value named name, ignoring case.
func lookup(meta map[string]*string, name string) (string, bool) {
	for k, v := range meta {
		if strings.EqualFold(k, name) && v != nil {
			return *v, true
		}
	}
	return "", false
}

func ptr[T any](v T) *T { return &v }

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
