package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisscript"
)

// store is the driver.Resource on Redis: one script per call.
type store struct {
	c      goredis.UniversalClient
	prefix string
}

var _ driver.Resource = (*store)(nil)

// ResourceInfo implements driver.Resource. Tokens are stored as
// decimal strings, so every token fits.
func (d *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: "redis", MaxKeyLen: MaxKeyLen}
}

func (d *store) key(name string) string { return d.prefix + name }

// As implements driver.Aser: a *goredis.UniversalClient target gets the
// client the resource was made with.
func (d *store) As(target any) bool {
	if p, ok := target.(*goredis.UniversalClient); ok {
		*p = d.c
		return true
	}
	return false
}

// Put implements driver.Resource.
func (d *store) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	return d.write(ctx, key, token, "put", value)
}

// Delete implements driver.Resource: it leaves a tombstone, the hash
// without its value, which keeps the token.
func (d *store) Delete(ctx context.Context, key string, token fence.Token) error {
	return d.write(ctx, key, token, "delete", nil)
}

// Claim implements driver.Resource: the write script raises the
// hash's token and write id and keeps its value, or its absence.
func (d *store) Claim(ctx context.Context, key string, token fence.Token) error {
	return d.write(ctx, key, token, "claim", nil)
}

// write runs the write script once (go-redis does not resend it: see
// redisscript.Script.RunOnce), and settles an answer lost after the script was sent by reading
// the hash back: the write was applied if the hash carries its write id.
func (d *store) write(ctx context.Context, key string, token fence.Token, op string, value []byte) error {
	id := rand.Text()
	args := []any{token.String(), id, op}
	if op == "put" {
		args = append(args, value)
	}
	v, err := writeScript.RunOnce(ctx, d.c, []string{d.key(key)}, args...)
	if err != nil {
		if !ambiguous(err) {
			return err
		}
		return d.settle(ctx, key, token, id, err)
	}
	r, err := redisscript.ParseReply(key, v)
	if err != nil {
		return err
	}
	switch r.Status {
	case "ok":
		return nil
	case "stale":
		highest, err := r.Token(key, 0)
		if err != nil {
			return err
		}
		return &fence.StaleTokenError{Key: key, Token: token, Highest: highest}
	}
	return r.Unexpected(key)
}

// settle reads key back after a write whose answer was lost (err): nil
// if the hash carries the write's id, and a *fence.UnknownOutcomeError
// otherwise, because the write may still land, or have landed and been
// replaced by a higher token.
func (d *store) settle(ctx context.Context, key string, token fence.Token, id string, err error) error {
	ue := &fence.UnknownOutcomeError{Key: key, Token: token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return ue
	}
	rec, rerr := d.read(ctx, key)
	if rerr != nil {
		ue.Err = errors.Join(err, fmt.Errorf("reading the value back: %w", rerr))
		return ue
	}
	if rec.write == id {
		return nil
	}
	if rec.token > token {
		ue.Highest = rec.token
	}
	return ue
}

// ambiguous reports whether err, from a script call, leaves open whether
// the server ran it: not an answer of the server, nor a connection that
// was never made.
func ambiguous(err error) bool {
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		return false // the server answered
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return false
	}
	if errors.Is(err, goredis.ErrClosed) || errors.Is(err, goredis.ErrPoolTimeout) {
		return false
	}
	return true
}

// Get implements driver.Resource.
func (d *store) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	rec, err := d.read(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	if !rec.exists || !rec.hasValue {
		return nil, 0, &fence.NotFoundError{Key: key, Tombstone: rec.exists}
	}
	return []byte(rec.value), rec.token, nil
}

// Highest implements driver.Resource.
func (d *store) Highest(ctx context.Context, key string) (fence.Token, error) {
	rec, err := d.read(ctx, key)
	if err != nil {
		return 0, err
	}
	return rec.token, nil
}

// record is a value's hash as read.
type record struct {
	exists   bool
	token    fence.Token
	value    string
	hasValue bool // false for a tombstone
	write    string
}

// read reads key's hash with the read script.
func (d *store) read(ctx context.Context, key string) (record, error) {
	v, err := readScript.Run(ctx, d.c, []string{d.key(key)}).Result()
	if err != nil {
		return record{}, err
	}
	r, err := redisscript.ParseReply(key, v)
	if err != nil {
		return record{}, err
	}
	if r.Status != "ok" {
		return record{}, r.Unexpected(key)
	}
	return readRecord(r, key)
}
