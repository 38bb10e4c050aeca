package redis

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence/internal/redisscript"
)

// The Lua scripts, one per operation. Each takes KEYS[1], the lock key, and
// KEYS[2], the counter key (see the package doc, "Records"), which share a
// hash tag so that a cluster keeps them in one slot. Each answers a table
// whose first element says what happened:
//
//	{"ok", ...}       done (what follows depends on the script)
//	{"held", TOKEN, OWNER, PTTL}  acquire: the key is held
//	{"notheld"}       renew, release: the lease is not the key's holder
//	{"corrupt", WHY}  a record is not one the scripts write; nothing written
//
// Tokens stay decimal strings inside the scripts: Lua numbers are doubles,
// which cannot hold every 64-bit integer, so a token is read back with HGET
// after HINCRBY rather than taken from HINCRBY's answer, and compared as a
// string by length first.

// prelude holds the checks every script shares. lockrec reads the lock
// key: nil when absent, or its token, owner and PTTL, or a string saying
// why it is corrupt (as the second result). counterrec reads the counter
// hash the same way: nil when absent, or its n, token and owner. Each
// reads with one command (GET, HMGET) through redis.pcall, so that a key
// of another type is an answer to report, not a failed script; TYPE runs
// only then, to name the type. A counter whose three fields are all
// missing is absent unless EXISTS finds it (the first acquisition of a
// key pays that command). mine answers whether the lock key holds the
// lease TOKEN:OWNER with an expiry, comparing the value whole before
// parsing anything, and why when the record is corrupt. incr adds one
// to a decimal string below maxn.
const prelude = `
local function dec(s, max)
	if type(s) ~= 'string' or #s > #max or not string.match(s, '^[1-9][0-9]*$') then return false end
	return #s < #max or s <= max
end
local function le(a, b)
	if #a ~= #b then return #a < #b end
	return a <= b
end
local maxn = '9223372036854775807'
local function incr(s)
	local i = #s
	while i > 0 and string.byte(s, i) == 57 do i = i - 1 end
	if i == 0 then return '1' .. string.rep('0', #s) end
	return string.sub(s, 1, i - 1) .. string.char(string.byte(s, i) + 1) .. string.rep('0', #s - i)
end
local function parselock(k, v)
	if not v then return nil end
	if type(v) ~= 'string' then return nil, 'the lock key holds a ' .. redis.call('TYPE', k).ok .. ', not a string' end
	local t, o = string.match(v, '^([^:]*):(.*)$')
	if not t or not dec(t, maxn) or o == '' then
		return nil, 'the lock key holds ' .. string.format('%q', string.sub(v, 1, 64)) .. ', not TOKEN:OWNER'
	end
	local pttl = redis.call('PTTL', k)
	if pttl < 0 then return nil, 'the lock key has no expiry' end
	return {t, o, pttl}
end
local function lockrec(k) return parselock(k, redis.pcall('GET', k)) end
local function mine(k, lease)
	local v = redis.pcall('GET', k)
	if v ~= lease then
		local _, why = parselock(k, v)
		return false, why
	end
	if redis.call('PTTL', k) < 0 then return false, 'the lock key has no expiry' end
	return true
end
local function counterrec(k)
	local f = redis.pcall('HMGET', k, 'n', 'token', 'owner')
	if f.err then return nil, 'the token counter holds a ' .. redis.call('TYPE', k).ok .. ', not a hash' end
	local n, t, o = f[1], f[2], f[3]
	if not n and not t and not o and redis.call('EXISTS', k) == 0 then return nil end
	if not dec(n, maxn) then return nil, 'the token counter has no decimal n' end
	if (t == false) ~= (o == false) then return nil, 'the token counter has a token without an owner or an owner without a token' end
	if t ~= false and (not dec(t, maxn) or not le(t, n) or o == '') then
		return nil, 'the token counter has a last token that is not a decimal up to n, or an empty owner'
	end
	return {n, t, o}
end
`

// acquireScript: ARGV[1] owner, ARGV[2] TTL in ms. Answers {"ok", TOKEN}
// or {"held", ...}. On a free key it sends three commands (HMGET, SET NX,
// HSET), four the first time: the lock key is read only when SET NX finds
// it there, held or corrupt, and then nothing is written.
var acquireScript = goredis.NewScript(prelude + `
local c, why = counterrec(KEYS[2])
if why then return {'corrupt', why} end
local n = '0'
if c then n = c[1] end
if n ~= maxn then
	local t = incr(n)
	if redis.call('SET', KEYS[1], t .. ':' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
		redis.call('HSET', KEYS[2], 'n', t, 'token', t, 'owner', ARGV[1])
		return {'ok', t}
	end
end
local l, lwhy = lockrec(KEYS[1])
if lwhy then return {'corrupt', lwhy} end
if l then return {'held', l[1], l[2], l[3]} end
if n == maxn then return {'corrupt', 'the token counter is at its limit'} end
return {'corrupt', 'the lock key was neither set nor found'}
`)

// renewScript: ARGV[1] TOKEN:OWNER of the lease, ARGV[2] TTL in ms.
var renewScript = goredis.NewScript(prelude + `
local held, why = mine(KEYS[1], ARGV[1])
if why then return {'corrupt', why} end
if not held then return {'notheld'} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'ok'}
`)

// releaseScript: ARGV[1] TOKEN:OWNER of the lease, ARGV[2] the release
// channel, ARGV[3] the key (the message).
var releaseScript = redisscript.NewScript(prelude + `
local held, why = mine(KEYS[1], ARGV[1])
if why then return {'corrupt', why} end
if not held then return {'notheld'} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return {'ok'}
`)

// breakScript: ARGV[1] the release channel, ARGV[2] the key. It raises n
// to at least the lock key's token and then adds one, and deletes the lock
// key. Answers {"ok"}.
var breakScript = goredis.NewScript(prelude + `
local c, why = counterrec(KEYS[2])
if why then return {'corrupt', why} end
local l, lwhy = lockrec(KEYS[1])
if lwhy then return {'corrupt', lwhy} end
if not l and not c then return {'ok'} end
local n = '0'
if c then n = c[1] end
if l and not le(l[1], n) then n = l[1] end
if n == maxn then return {'corrupt', 'the token counter is at its limit'} end
redis.call('HSET', KEYS[2], 'n', n)
redis.call('HINCRBY', KEYS[2], 'n', 1)
if l then
	redis.call('DEL', KEYS[1])
	redis.call('PUBLISH', ARGV[1], ARGV[2])
end
return {'ok'}
`)

// inspectScript answers {"ok", TOKEN|false, OWNER|false, PTTL|false,
// LASTTOKEN|false, LASTOWNER|false, VALUE|false}: the holder, if any,
// the last token issued with its owner, if any, and the value the holder
// published, if any: the counter's value field when its vtoken field is
// the holder's token. It sends one command more than for a free key
// (HMGET of the value) when the key is held.
var inspectScript = goredis.NewScript(prelude + inspectBody + "return r\n")

const inspectBody = `
local c, why = counterrec(KEYS[2])
if why then return {'corrupt', why} end
local l, lwhy = lockrec(KEYS[1])
if lwhy then return {'corrupt', lwhy} end
local r = {'ok', false, false, false, false, false, false}
if l then r[2], r[3], r[4] = l[1], l[2], l[3] end
if c then r[5], r[6] = c[2], c[3] end
if l and c then
	local v = redis.call('HMGET', KEYS[2], 'vtoken', 'value')
	if v[1] and (not dec(v[1], maxn) or not v[2]) then return {'corrupt', 'the token counter has a vtoken that is not a decimal, or no value with it'} end
	if not v[1] and v[2] then return {'corrupt', 'the token counter has a value without a vtoken'} end
	if v[1] == l[1] then r[7] = v[2] end
end
`

// inspectWrittenScript answers as inspectScript does, after writing the
// counter's n back unchanged (HSET counts as a write even then): a write that a WAIT after it on the same
// connection counts, so that the replicas that acknowledge it have
// every write before it too, the record read included (Inspect with
// MinReplicas).
var inspectWrittenScript = goredis.NewScript(prelude + inspectBody + `
if c then redis.call('HSET', KEYS[2], 'n', c[1]) end
return r
`)

// publishScript: ARGV[1] TOKEN:OWNER of the lease, ARGV[2] the value,
// ARGV[3] the release channel, ARGV[4] the key (the message). If the
// lock key holds the lease, it sets the counter's fields value and
// vtoken (the lease's token) and announces it as a release is announced.
// Answers {"ok"} or {"notheld"}.
var publishScript = goredis.NewScript(prelude + `
local held, why = mine(KEYS[1], ARGV[1])
if why then return {'corrupt', why} end
if not held then return {'notheld'} end
redis.call('HSET', KEYS[2], 'vtoken', string.match(ARGV[1], '^[^:]*'), 'value', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {'ok'}
`)

// acquireAllScript takes every key of a set or none. KEYS are the lock
// key and counter key of each key in turn; ARGV[1] is the TTL in ms and
// ARGV[1+i] the owner of the i-th key. It first reads every key's
// records (HMGET, GET); when all are free it sets each lock key and
// counter as acquireScript does and answers {"ok", TOKEN...}; otherwise
// it writes nothing and answers {"held", I, TOKEN, OWNER, PTTL} for the
// first busy key, or {"corruptat", I, WHY}.
var acquireAllScript = goredis.NewScript(prelude + `
local ns = {}
for i = 1, #KEYS / 2 do
	local c, why = counterrec(KEYS[2*i])
	if why then return {'corruptat', i, why} end
	local l, lwhy = lockrec(KEYS[2*i-1])
	if lwhy then return {'corruptat', i, lwhy} end
	if l then return {'held', i, l[1], l[2], l[3]} end
	local n = '0'
	if c then n = c[1] end
	if n == maxn then return {'corruptat', i, 'the token counter is at its limit'} end
	ns[i] = incr(n)
end
local out = {'ok'}
for i = 1, #KEYS / 2 do
	redis.call('SET', KEYS[2*i-1], ns[i] .. ':' .. ARGV[i+1], 'PX', ARGV[1])
	redis.call('HSET', KEYS[2*i], 'n', ns[i], 'token', ns[i], 'owner', ARGV[i+1])
	out[i+1] = ns[i]
end
return out
`)
