package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// value is the etcd key of key's value record.
func (d *store) value(key string) string { return d.prefix + "value/" + key }

// encodeValue returns the value record of value published with token:
// "fence1:", the token in decimal, ':' and the value's bytes.
func encodeValue(token fence.Token, value string) string {
	return recordPrefix + token.String() + ":" + value
}

// parseValue checks the value record kv of key and returns the token it
// was published with and the value.
func parseValue(key string, kv *mvccpb.KeyValue) (fence.Token, string, error) {
	rest, ok := strings.CutPrefix(string(kv.Value), recordPrefix)
	if !ok {
		return 0, "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value record %s does not start with %q", quoteValue(kv.Value), recordPrefix)}
	}
	num, value, ok := strings.Cut(rest, ":")
	t, err := strconv.ParseUint(num, 10, 64)
	switch {
	case !ok || err != nil || t == 0 || strconv.FormatUint(t, 10) != num:
		return 0, "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value record %s has no token", quoteValue(kv.Value))}
	case len(value) > fence.MaxValueLen:
		return 0, "", &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the value record holds %d bytes, more than %d", len(value), fence.MaxValueLen)}
	case kv.Lease != 0:
		return 0, "", &fence.CorruptError{Key: key, Reason: "the value record is attached to a lease"}
	}
	return fence.Token(t), value, nil
}

// Publish implements driver.Publisher: one transaction that, if the lock
// record's create revision is the lease's token and its value names the
// lease's owner, writes the value record (the value with the token) and
// puts the lock record again unchanged, keeping its etcd lease, so that
// the watches of NotifyRelease see a change of it; and reads the lock
// record otherwise.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	held, rec := d.held(lease.Key), encodeRecord(lease.Owner)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(held), "=", int64(lease.Token)),
			clientv3.Compare(clientv3.Value(held), "=", rec)).
		Then(clientv3.OpPut(d.value(lease.Key), encodeValue(lease.Token, value)),
			clientv3.OpPut(held, rec, clientv3.WithIgnoreLease())).
		Else(clientv3.OpGet(held)).
		Commit()
	switch {
	case err != nil:
		return err
	case resp.Succeeded:
		return nil
	}
	if _, err := d.check(lease, resp.Responses[0].GetResponseRange().Kvs); err != nil {
		return err
	}
	// Same token and owner, yet the compare failed: cannot be.
	return errors.New("the record changed during the publish")
}

// heldValue returns the value published for the lock record r, read
// (possibly missing) in kvs: "" unless the value record names r's token.
func heldValue(key string, r lockRecord, kvs []*mvccpb.KeyValue) (string, error) {
	if len(kvs) == 0 {
		return "", nil
	}
	t, v, err := parseValue(key, kvs[0])
	if err != nil || t != r.token {
		return "", err
	}
	return v, nil
}
