package redis

import (
	"github.com/fencekit/fence/internal/redisscript"
)

// The Lua scripts. KEYS[1] is the value's hash (see the package doc,
// "Records"). Tokens stay decimal strings inside the scripts (Lua numbers
// are doubles, which cannot hold every 64-bit token) and are compared by
// length first, then as strings. Each answers a table whose first element
// says what happened: {"ok", ...}, {"stale", HIGHEST}, or {"corrupt",
// WHY} for a record the scripts did not write, which they leave alone.

// prelude reads the hash: rec returns nil when absent, or its token,
// value and write id (value and write id false when missing), or a string
// saying why it is corrupt as its second result.
const prelude = `
local maxt = '18446744073709551615'
local function dec(s)
	if type(s) ~= 'string' or #s > #maxt or not string.match(s, '^[1-9][0-9]*$') then return false end
	return #s < #maxt or s <= maxt
end
local function le(a, b)
	if #a ~= #b then return #a < #b end
	return a <= b
end
local function rec(k)
	local ty = redis.call('TYPE', k).ok
	if ty == 'none' then return nil end
	if ty ~= 'hash' then return nil, 'the key holds a ' .. ty .. ', not a hash' end
	local f = redis.call('HMGET', k, 'token', 'value', 'write')
	if not dec(f[1]) then return nil, 'the hash has no decimal token' end
	return f
end
`

// writeScript: ARGV[1] token, ARGV[2] write id, ARGV[3] "put", "delete"
// or "claim", ARGV[4] the value (put). It writes if the stored token is
// at most ARGV[1], raising it to ARGV[1]; a delete keeps the hash without
// its value (a tombstone); a claim keeps the value, or its absence (an
// absent key becomes a tombstone). Answers {"ok"} or {"stale", HIGHEST}.
var writeScript = redisscript.NewScript(prelude + `
local r, why = rec(KEYS[1])
if why then return {'corrupt', why} end
if r and not le(r[1], ARGV[1]) then return {'stale', r[1]} end
if ARGV[3] == 'delete' then
	redis.call('HDEL', KEYS[1], 'value')
	redis.call('HSET', KEYS[1], 'token', ARGV[1], 'write', ARGV[2])
elseif ARGV[3] == 'claim' then
	redis.call('HSET', KEYS[1], 'token', ARGV[1], 'write', ARGV[2])
else
	redis.call('HSET', KEYS[1], 'token', ARGV[1], 'value', ARGV[4], 'write', ARGV[2])
end
return {'ok'}
`)

// readScript answers {"ok"} for an absent key, or {"ok", TOKEN,
// VALUE|false, WRITE|false}.
var readScript = redisscript.NewScript(prelude + `
local r, why = rec(KEYS[1])
if why then return {'corrupt', why} end
if not r then return {'ok'} end
return {'ok', r[1], r[2], r[3]}
`)
