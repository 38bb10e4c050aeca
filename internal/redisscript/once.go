package redisscript

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// Script is a Lua script with its source, which EVAL needs when the
// server has not cached the script.
type Script struct {
	*goredis.Script
	src string
}

// NewScript returns the Script of src.
func NewScript(src string) Script { return Script{goredis.NewScript(src), src} }

// Processor is what RunOnce sends commands through: every go-redis client
// (*goredis.Client, *goredis.ClusterClient, *goredis.Ring and
// goredis.UniversalClient) is one.
type Processor interface {
	Process(ctx context.Context, cmd goredis.Cmder) error
}

// RunOnce runs s on keys with EVALSHA, and with EVAL when the server has
// not cached it, each sent once: on a lost connection or a timeout after
// the script was sent, go-redis reports the error instead of resending,
// so that a write whose answer was lost is never run a second time
// unseen (and answered as if it had not run the first). The caller
// settles such an answer.
func (s Script) RunOnce(ctx context.Context, c Processor, keys []string, args ...any) (any, error) {
	run := func(cmd, body string) (any, error) {
		a := make([]any, 0, 3+len(keys)+len(args))
		a = append(a, cmd, body, len(keys))
		for _, k := range keys {
			a = append(a, k)
		}
		a = append(a, args...)
		cmd1 := onceCmd{goredis.NewCmd(ctx, a...)}
		_ = c.Process(ctx, cmd1)
		return cmd1.Result()
	}
	v, err := run("evalsha", s.Hash())
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		v, err = run("eval", s.src)
	}
	return v, err
}

// onceCmd is a command that go-redis sends once.
type onceCmd struct{ *goredis.Cmd }

// NoRetry tells go-redis not to resend the command.
func (onceCmd) NoRetry() bool { return true }
