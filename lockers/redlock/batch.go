package redlock

import (
	"context"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.BatchRenewer = (*store)(nil)

// pipeliner is a Client that sends many commands in one request: every
// go-redis client (a *goredis.ClusterClient or Ring sends one pipeline
// per node).
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
}

// RenewBatch implements driver.BatchRenewer: every master gets the
// renew scripts of all leases in one pipeline, all masters at once, so a
// round is one request per master whatever the number of leases; each
// lease then counts its masters' answers as Renew does. One script over
// many keys would fail on a master that is a cluster (keys in several
// slots) and hold the server for the whole batch. A Client that is not a
// go-redis client, without Pipelined, gets one script per lease.
func (d *store) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	start := d.o.Clock.Now()
	replies := make([][]reply, len(d.masters)) // per master, per lease
	var wg sync.WaitGroup
	for i, c := range d.masters {
		wg.Go(func() { replies[i] = d.renewOn(ctx, c, leases) })
	}
	wg.Wait()
	errs := make([]error, len(leases))
	per := make([]reply, len(d.masters))
	for j, lease := range leases {
		for i := range d.masters {
			per[i] = replies[i][j]
		}
		errs[j] = d.renewed(lease, start, per)
	}
	return errs
}

// renewOn runs the renew script of every lease on master c, in one
// pipeline when c has one; scripts the master had not cached are sent
// again with EVAL, in a second pipeline.
func (d *store) renewOn(ctx context.Context, c Client, leases []fence.Lease) []reply {
	out := make([]reply, len(leases))
	args := func(lease fence.Lease) ([]string, string, int64) {
		return d.keys(lease.Key), record{token: lease.Token, owner: lease.Owner}.String(), millis(lease.TTL)
	}
	p, ok := c.(pipeliner)
	if !ok {
		for j, lease := range leases {
			keys, value, ms := args(lease)
			v, err := renewScript.Run(ctx, c, keys, value, ms).Result()
			out[j] = decode(lease.Key, v, err)
		}
		return out
	}
	todo := make([]int, len(leases))
	for j := range todo {
		todo[j] = j
	}
	for _, eval := range []bool{false, true} {
		cmds := make([]*goredis.Cmd, len(todo))
		_, _ = p.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			for k, j := range todo {
				keys, value, ms := args(leases[j])
				if eval {
					cmds[k] = renewScript.Eval(ctx, pl, keys, value, ms)
				} else {
					cmds[k] = renewScript.EvalSha(ctx, pl, keys, value, ms)
				}
			}
			return nil
		})
		var again []int
		for k, j := range todo {
			v, err := cmds[k].Result()
			if err != nil && !eval && goredis.HasErrorPrefix(err, "NOSCRIPT") {
				again = append(again, j)
				continue
			}
			out[j] = decode(leases[j].Key, v, err)
		}
		if len(again) == 0 {
			break
		}
		todo = again
	}
	return out
}
