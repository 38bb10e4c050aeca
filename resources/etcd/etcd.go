package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/etcdclient"
)

// Limits and defaults of the etcd resource.
const (
	// MaxKeyLen is the longest name accepted, in bytes of UTF-8 (the etcd
	// key is longer by the prefix).
	MaxKeyLen = 1024
	// DefaultPrefix is the prefix of the etcd keys of a resource whose
	// Options.Prefix is empty.
	DefaultPrefix = "fence/values/"
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Prefix starts the etcd key of every name: name N is kept under
	// Prefix + N. Default: DefaultPrefix.
	Prefix string
}

// New returns a resource that keeps its values in etcd through client,
// under the prefix of opts; it is safe for concurrent use. It does not
// contact the server. Close the client when done; the resource's Close
// does not.
func New(client *clientv3.Client, opts *Options) (*fence.Resource, error) {
	return newResource(client, opts, nil)
}

// newResource is New, with the options of driver.NewResource.
func newResource(client *clientv3.Client, opts *Options, ropts *driver.ResourceOptions) (*fence.Resource, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.IndexByte(o.Prefix, 0) >= 0 {
		return nil, &fence.InvalidError{Field: "Prefix", Reason: "holds a NUL byte"}
	}
	return driver.NewResource(&store{c: client, prefix: o.Prefix}, ropts)
}

// store is the driver.Resource on etcd.
type store struct {
	c      *clientv3.Client
	prefix string
}

var _ driver.Resource = (*store)(nil)

// ResourceInfo implements driver.Resource.
func (d *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: "etcd", MaxKeyLen: MaxKeyLen}
}

func (d *store) key(name string) string { return d.prefix + name }

// As implements driver.Aser: a **clientv3.Client target gets the client
// the resource was made with.
func (d *store) As(target any) bool {
	if p, ok := target.(**clientv3.Client); ok {
		*p = d.c
		return true
	}
	return false
}

// Put implements driver.Resource.
func (d *store) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	return d.write(ctx, name, token, false, value)
}

// Delete implements driver.Resource: it writes a tombstone of token.
func (d *store) Delete(ctx context.Context, name string, token fence.Token) error {
	return d.write(ctx, name, token, true, nil)
}

// write stores the record of a write with token, in one transaction: if
// the stored record sorts between lowestRecord and upperBound(token) (a
// record of a token up to token), put the new one; else, if the key does
// not exist, put it; else read what is there. Both puts are the same
// write; the read tells a stale token from a corrupt record. When the
// answer is lost, the record is read back (see settle).
func (d *store) write(ctx context.Context, name string, token fence.Token, tombstone bool, value []byte) error {
	k := d.key(name)
	rec := encodeRecord(token, tombstone, value)
	resp, err := d.c.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(k), ">", lowestRecord), clientv3.Compare(clientv3.Value(k), "<", upperBound(token))).
		Then(clientv3.OpPut(k, rec)).
		Else(clientv3.OpTxn(
			[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(k), "=", 0)},
			[]clientv3.Op{clientv3.OpPut(k, rec)},
			[]clientv3.Op{clientv3.OpGet(k)})).
		Commit()
	if err != nil {
		if etcdclient.Refused(err) {
			return err
		}
		return d.settle(ctx, name, token, rec, err)
	}
	if resp.Succeeded {
		return nil
	}
	inner := resp.Responses[0].GetResponseTxn()
	if inner.Succeeded {
		return nil
	}
	kvs := inner.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return fmt.Errorf("the transaction found %q neither present nor absent", k) // cannot be
	}
	cur, err := parseRecord(name, kvs[0].Value)
	if err != nil {
		return err
	}
	if cur.token <= token {
		return &fence.CorruptError{Key: name, Reason: fmt.Sprintf("the record of token %d was not admitted for token %d", cur.token, token)}
	}
	return &fence.StaleTokenError{Key: name, Token: token, Highest: cur.token}
}

// settle decides a write whose answer was lost (err), by reading the
// record back: it is applied if the record is exactly the one written
// (same token, kind and value: a write with an equal token and the same
// value is the same write). Otherwise the outcome is unknown, with the
// token that replaced it when there is a higher one.
func (d *store) settle(ctx context.Context, name string, token fence.Token, rec string, err error) error {
	ue := &fence.UnknownOutcomeError{Key: name, Token: token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return ue
	}
	resp, rerr := d.c.Get(ctx, d.key(name))
	if rerr != nil {
		ue.Err = errors.Join(err, fmt.Errorf("reading the record back: %w", rerr))
		return ue
	}
	if len(resp.Kvs) > 0 {
		if string(resp.Kvs[0].Value) == rec {
			return nil
		}
		if cur, perr := parseRecord(name, resp.Kvs[0].Value); perr == nil && cur.token > token {
			ue.Highest = cur.token
		}
	}
	return ue
}

// read returns name's record, and ok false when the key does not exist.
func (d *store) read(ctx context.Context, name string) (record, bool, error) {
	resp, err := d.c.Get(ctx, d.key(name))
	if err != nil {
		return record{}, false, err
	}
	if len(resp.Kvs) == 0 {
		return record{}, false, nil
	}
	r, err := parseRecord(name, resp.Kvs[0].Value)
	return r, err == nil, err
}

// Get implements driver.Resource.
func (d *store) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	r, ok, err := d.read(ctx, name)
	switch {
	case err != nil:
		return nil, 0, err
	case !ok || r.tombstone:
		return nil, 0, &fence.NotFoundError{Key: name, Tombstone: ok}
	}
	return r.value, r.token, nil
}

// Highest implements driver.Resource: the token of the stored
// record, which every accepted write raises to its own.
func (d *store) Highest(ctx context.Context, name string) (fence.Token, error) {
	r, ok, err := d.read(ctx, name)
	if err != nil || !ok {
		return 0, err
	}
	return r.token, nil
}

// Claim implements driver.Resource: it reads name's record and, if
// token is at least its token, puts the same record with token, in a
// transaction that compares the key's mod revision with the one read (or,
// for a key that does not exist, its create revision with 0): every put
// makes a new revision, so nothing written in between is replaced. A key
// without a record gets a tombstone of token. A failed compare reads
// again; a lost answer is settled by reading back (a record of token is
// the claim, or the token's holder's write).
func (d *store) Claim(ctx context.Context, name string, token fence.Token) error {
	k := d.key(name)
	for {
		resp, err := d.c.Get(ctx, k)
		if err != nil {
			return err
		}
		cur, cmp := record{tombstone: true}, clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
		if len(resp.Kvs) > 0 {
			if cur, err = parseRecord(name, resp.Kvs[0].Value); err != nil {
				return err
			}
			switch {
			case cur.token == token:
				return nil // claimed already
			case cur.token > token:
				return &fence.StaleTokenError{Key: name, Token: token, Highest: cur.token}
			}
			cmp = clientv3.Compare(clientv3.ModRevision(k), "=", resp.Kvs[0].ModRevision)
		}
		tx, err := d.c.Txn(ctx).If(cmp).Then(clientv3.OpPut(k, encodeRecord(token, cur.tombstone, cur.value))).Commit()
		if err != nil {
			if etcdclient.Refused(err) {
				return err
			}
			return d.settleClaim(ctx, name, token, err)
		}
		if tx.Succeeded {
			return nil
		}
	}
}

// settleClaim decides a claim whose answer was lost, by reading the record
// back: a record of token is the claim; anything else leaves the outcome
// unknown.
func (d *store) settleClaim(ctx context.Context, name string, token fence.Token, err error) error {
	ue := &fence.UnknownOutcomeError{Key: name, Token: token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return ue
	}
	cur, ok, rerr := d.read(ctx, name)
	switch {
	case rerr != nil:
		ue.Err = errors.Join(err, fmt.Errorf("reading the record back: %w", rerr))
	case ok && cur.token == token:
		return nil
	case ok && cur.token > token:
		ue.Highest = cur.token
	}
	return ue
}
