package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisscript"
)

var _ driver.BatchRenewer = (*store)(nil)

// RenewBatch implements driver.BatchRenewer: the renew script of every
// lease, all in one pipeline, so a round of renewals is one request to
// each server that holds some of the keys, whatever their number (a
// *goredis.ClusterClient sends one pipeline to each node; a single
// server or a Sentinel primary gets one). Each lease keeps its own
// script, which extends its lock key only if it still holds the lease,
// so each answer is Renew's; one script over many keys would need them
// all in one cluster slot, and would hold the server for the whole
// batch. When the server has not cached the script, the leases that
// missed it are sent again with EVAL, in a second pipeline. With MinReplicas, WAIT follows the scripts
// on the same connection, once per server.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	if d.minReplicas == 0 {
		d.renewAll(ctx, d.c, leases, errs, false)
		return errs
	}
	// WAIT counts the writes before it on its connection: one pipeline
	// per server, ending with WAIT.
	groups := map[*goredis.Client][]int{}
	var order []*goredis.Client
	for i, lease := range leases {
		c, err := d.primaryFor(ctx, d.lockKey(lease.Key))
		if err != nil {
			errs[i] = err
			continue
		}
		if _, ok := groups[c]; !ok {
			order = append(order, c)
		}
		groups[c] = append(groups[c], i)
	}
	for _, c := range order {
		at := groups[c]
		some := make([]fence.Lease, len(at))
		for j, i := range at {
			some[j] = leases[i]
		}
		out := make([]error, len(at))
		d.renewAll(ctx, c, some, out, true)
		for j, i := range at {
			errs[i] = out[j]
		}
	}
	return errs
}

// primaryFor returns the client of the server that holds key: the
// locker's own client, or in a cluster the key's master's.
func (d *store) primaryFor(ctx context.Context, key string) (*goredis.Client, error) {
	switch c := d.c.(type) {
	case *goredis.Client:
		return c, nil
	case *goredis.ClusterClient:
		return c.MasterForKey(ctx, key)
	}
	return nil, fmt.Errorf("WAIT needs a *redis.Client or *redis.ClusterClient, not a %T", d.c) // New refuses it
}

// renewAll renews leases through c in one pipeline (followed by WAIT
// when wait is set) and sets errs, one per lease; those whose script
// was not cached are sent again with EVAL, in a second pipeline.
func (d *store) renewAll(ctx context.Context, c goredis.Cmdable, leases []fence.Lease, errs []error, wait bool) {
	todo := make([]int, len(leases))
	for i := range todo {
		todo[i] = i
	}
	for _, eval := range []bool{false, true} {
		cmds := make([]*goredis.Cmd, len(todo))
		var waitCmd *goredis.IntCmd
		_, _ = c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for j, i := range todo {
				lease := leases[i]
				keys, args := d.keys(lease.Key), []any{lockValue(lease.Token, lease.Owner), millis(lease.TTL)}
				if eval {
					cmds[j] = renewScript.Eval(ctx, p, keys, args...)
				} else {
					cmds[j] = renewScript.EvalSha(ctx, p, keys, args...)
				}
			}
			if wait {
				waitCmd = goredis.NewIntCmd(ctx, d.waitArgs()...)
				return p.Process(ctx, waitCmd)
			}
			return nil
		})
		var again []int
		for j, i := range todo {
			err := cmds[j].Err()
			switch {
			case err != nil && !eval && goredis.HasErrorPrefix(err, "NOSCRIPT"):
				again = append(again, i)
				continue
			case err != nil:
				errs[i] = err
				continue
			}
			r, err := redisscript.ParseReply(leases[i].Key, cmds[j].Val())
			if err == nil {
				err = done(r, leases[i].Key)
			}
			if err == nil && wait {
				if werr := waitCmd.Err(); werr != nil {
					err = werr // the script ran; WAIT did not answer
				} else if acked := waitCmd.Val(); acked < int64(d.minReplicas) {
					err = &ReplicationError{Op: "renew", Wanted: d.minReplicas, Acked: int(acked), Timeout: d.waitTimeout, Token: leases[i].Token}
				}
			}
			errs[i] = err
		}
		if len(again) == 0 {
			return
		}
		todo = again
	}
}
