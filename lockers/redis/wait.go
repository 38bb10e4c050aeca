package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redisscript"
)

// ReplicationError reports a write that the primary made but that fewer
// replicas than Options.MinReplicas acknowledged within
// Options.WaitTimeout (WAIT's answer). A failover to a replica that lacks
// the write loses it: for an Acquire, the token could be issued again, so
// Acquire hands no lease out and releases the key (ReleaseErr says whether
// that worked); a Renew or Break stays applied on the primary. It is
// transient: a Session's keepalive retries a Renew that fails so.
type ReplicationError struct {
	// Op is "acquire", "renew", "break" or "inspect" (a holder the
	// primary shows but too few replicas acknowledged).
	Op string
	// Wanted is Options.MinReplicas; Acked is what WAIT answered.
	Wanted, Acked int
	// Timeout is Options.WaitTimeout.
	Timeout time.Duration
	// Token is the token of the lease written (acquire, renew) or read
	// (inspect).
	Token fence.Token
	// ReleaseErr is the error of releasing the unreplicated acquisition;
	// nil when it was released.
	ReleaseErr error
}

func (e *ReplicationError) Error() string {
	if e.Op == "inspect" {
		return fmt.Sprintf("the primary shows a holder with token %d, but %d of %d replicas acknowledged it within %v", e.Token, e.Acked, e.Wanted, e.Timeout)
	}
	msg := fmt.Sprintf("written on the primary, but acknowledged by %d of %d replicas within %v", e.Acked, e.Wanted, e.Timeout)
	if e.Op == "acquire" {
		msg += fmt.Sprintf("; token %d not handed out", e.Token)
		if e.ReleaseErr != nil {
			msg += fmt.Sprintf(", and releasing it failed (it expires): %v", e.ReleaseErr)
		}
	}
	return msg
}

// Unwrap returns ReleaseErr.
func (e *ReplicationError) Unwrap() error { return e.ReleaseErr }

// waited runs s and then WAIT in one pipeline on the connection of the
// server of keys[0]: WAIT counts the writes of the connection it runs on,
// so it must follow the script on that connection, which a pipeline
// guarantees. On NOSCRIPT it sends the script's body (EVAL) with WAIT.
func (d *store) waited(ctx context.Context, s *goredis.Script, key string, keys []string, args []any) (redisscript.Reply, int64, error) {
	var c *goredis.Client
	switch cl := d.c.(type) {
	case *goredis.Client:
		c = cl
	case *goredis.ClusterClient:
		var err error
		if c, err = cl.MasterForKey(ctx, keys[0]); err != nil {
			return redisscript.Reply{}, 0, err
		}
	default:
		return redisscript.Reply{}, 0, fmt.Errorf("WAIT needs a *redis.Client or *redis.ClusterClient, not a %T", d.c) // New refuses it
	}
	r, acked, err := d.pipelined(ctx, c, key, func(p goredis.Pipeliner) *goredis.Cmd { return s.EvalSha(ctx, p, keys, args...) })
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		r, acked, err = d.pipelined(ctx, c, key, func(p goredis.Pipeliner) *goredis.Cmd { return s.Eval(ctx, p, keys, args...) })
	}
	return r, acked, err
}

// pipelined sends the script call eval makes and WAIT in one pipeline.
func (d *store) pipelined(ctx context.Context, c *goredis.Client, key string, eval func(goredis.Pipeliner) *goredis.Cmd) (redisscript.Reply, int64, error) {
	var script *goredis.Cmd
	var wait *goredis.IntCmd
	_, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		script = eval(p)
		wait = goredis.NewIntCmd(ctx, d.waitArgs()...)
		return p.Process(ctx, wait)
	})
	if err := script.Err(); err != nil {
		return redisscript.Reply{}, 0, err
	}
	v := script.Val()
	if err != nil {
		return redisscript.Reply{}, 0, err
	}
	r, err := redisscript.ParseReply(key, v)
	if err != nil {
		return redisscript.Reply{}, 0, err
	}
	return r, wait.Val(), nil
}
