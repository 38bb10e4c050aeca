package etcd

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/fencekit/fence"
)

// recordPrefix starts the value of every record this package writes: the
// format's version, then the owner id.
const recordPrefix = "fence1:"

// encodeRecord returns the value of a lock record or a last record of
// owner.
func encodeRecord(owner string) string { return recordPrefix + owner }

// parseRecord returns the owner a record's value names, or a
// *fence.CorruptError for key when the value is not one this package
// writes: a wrong version prefix, or an owner that is empty, not UTF-8,
// holds a NUL or is longer than MaxOwnerLen.
func parseRecord(key string, value []byte) (string, error) {
	owner, ok := strings.CutPrefix(string(value), recordPrefix)
	switch {
	case !ok:
		return "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value %s does not start with %q", quoteValue(value), recordPrefix)}
	case owner == "":
		return "", &fence.CorruptError{Key: key, Reason: "the record names no owner"}
	case len(owner) > MaxOwnerLen:
		return "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the owner is %d bytes, more than %d", len(owner), MaxOwnerLen)}
	case !utf8.ValidString(owner) || strings.IndexByte(owner, 0) >= 0:
		return "", &fence.CorruptError{Key: key, Reason: "the owner is not UTF-8 text without NUL"}
	}
	return owner, nil
}

// quoteValue quotes the start of a stored value for an error message.
func quoteValue(v []byte) string {
	const max = 40
	if len(v) > max {
		return fmt.Sprintf("%q... (%d bytes)", v[:max], len(v))
	}
	return fmt.Sprintf("%q", v)
}

// lockRecord is a well-formed lock record: a key held under an etcd lease.
type lockRecord struct {
	owner string
	token fence.Token // the key's create revision
	lease int64       // the etcd lease the key is attached to
}

// parseLock checks the lock record kv of key.
func parseLock(key string, kv *mvccpb.KeyValue) (lockRecord, error) {
	owner, err := parseRecord(key, kv.Value)
	if err != nil {
		return lockRecord{}, err
	}
	switch {
	case kv.CreateRevision <= 0:
		return lockRecord{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("create revision %d is not positive", kv.CreateRevision)}
	case kv.Lease == 0:
		return lockRecord{}, &fence.CorruptError{Key: key, Reason: "the lock record is attached to no lease, so it would never expire"}
	}
	return lockRecord{owner: owner, token: fence.Token(kv.CreateRevision), lease: kv.Lease}, nil
}

// parseLast checks the last record kv of key and returns the owner and
// token of the key's last acquisition: the owner it names and its mod
// revision, the revision of the acquiring transaction.
func parseLast(key string, kv *mvccpb.KeyValue) (string, fence.Token, error) {
	owner, err := parseRecord(key, kv.Value)
	if err != nil {
		return "", 0, err
	}
	if kv.ModRevision <= 0 {
		return "", 0, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("mod revision %d of the last record is not positive", kv.ModRevision)}
	}
	if kv.Lease != 0 {
		return "", 0, &fence.CorruptError{Key: key, Reason: "the last record is attached to a lease, so it would vanish with it"}
	}
	return owner, fence.Token(kv.ModRevision), nil
}
