package redis

import "github.com/fencekit/fence/internal/redisscript"

// The scripts' answers (see scripts.go) are read with
// redisscript.ParseReply, and their tokens with redisscript.ParseToken
// (1 to 2^64-1, the range of every locker's tokens); readRecord reads
// what only the read script answers.

// readRecord reads the answer of the read script.
func readRecord(r redisscript.Reply, key string) (record, error) {
	if len(r.Vals) == 0 {
		return record{}, nil
	}
	t, err := r.Token(key, 0)
	if err != nil {
		return record{}, err
	}
	rec := record{exists: true, token: t}
	rec.value, rec.hasValue = r.Str(1)
	rec.write, _ = r.Str(2)
	return rec, nil
}
