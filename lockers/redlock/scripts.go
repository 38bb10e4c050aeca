package redlock

import goredis "github.com/redis/go-redis/v9"

// The Lua scripts, one per call on one master. Each runs atomically on its
// master. They keep two strings per key (see the package doc, "Records"):
//
//	KEYS[1]  PREFIX lock:KEY   "TOKEN OWNER", with an expiry (PX)
//	KEYS[2]  PREFIX token:KEY  "TOKEN OWNER", no expiry, never deleted
//
// Tokens are compared as canonical decimal strings (length, then bytes),
// never as Lua numbers, which are doubles and lose precision above 2^53.
// A value that is not such a record, or a key of another type, is
// reported as {"corrupt", WHICH, RAW} and left as it is.

// prelude is shared by the scripts: reading a key and checking records.
const prelude = `
local function get(k)
  local v = redis.pcall('GET', k)
  if type(v) == 'table' and v.err then return nil, 'not a string: ' .. v.err end
  if not v then return nil end
  return v
end
local function tok(s)
  if not string.match(s, '^[1-9][0-9]*$') then return nil end
  if #s > 19 or (#s == 19 and s > '9223372036854775807') then return nil end
  return s
end
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function rec(v)
  local t, o = string.match(v, '^([^ ]+) (.+)$')
  if not t or not tok(t) then return nil end
  return t, o
end
-- read returns lock, lock token, lock owner, counter, counter token, or
-- nil and the corrupt reply.
local function read()
  local lock, lerr = get(KEYS[1])
  if lerr then return nil, {'corrupt', 'lock', lerr} end
  local ctr, cerr = get(KEYS[2])
  if cerr then return nil, {'corrupt', 'counter', cerr} end
  local ct, co
  if ctr then
    ct, co = rec(ctr)
    if not ct then return nil, {'corrupt', 'counter', ctr} end
  end
  local lt, lo, pttl
  if lock then
    lt, lo = rec(lock)
    if not lt then return nil, {'corrupt', 'lock', lock} end
    if not ct or less(ct, lt) then
      return nil, {'corrupt', 'lock', 'token ' .. lt .. ' above the counter ' .. (ctr or '(none)')}
    end
    pttl = redis.call('PTTL', KEYS[1])
    if pttl < 0 then return nil, {'corrupt', 'lock', lock .. ' (no expiry)'} end
  end
  return {lock = lock, lt = lt, lo = lo, ctr = ctr, ct = ct, pttl = pttl}
end
`

// lockScript takes the lock with a proposed token. ARGV: owner, TTL in
// milliseconds, the proposed token, and the token this attempt proposed
// to this master in its previous round ("" if none), whose lock it may
// take over. Replies:
//
//	{"ok"}                          taken: lock and counter are "TOKEN OWNER"
//	{"held", LOCK, PTTL, COUNTER}   another lock is there (or ours, not of this attempt)
//	{"stale", COUNTER}              free, but the counter is not below the proposal
//	{"corrupt", WHICH, RAW}
var lockScript = goredis.NewScript(prelude + `
local r, bad = read()
if not r then return bad end
if r.lock and not (ARGV[4] ~= '' and r.lt == ARGV[4] and r.lo == ARGV[1]) then
  return {'held', r.lock, r.pttl, r.ctr}
end
if r.ct and not less(r.ct, ARGV[3]) then return {'stale', r.ctr} end
local v = ARGV[3] .. ' ' .. ARGV[1]
redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
redis.call('SET', KEYS[2], v)
return {'ok'}
`)

// renewScript extends the lock if it is the lease's. ARGV: "TOKEN OWNER",
// TTL in milliseconds. Replies {"ok"}, {"not"} or {"corrupt", ...}.
var renewScript = goredis.NewScript(prelude + `
local r, bad = read()
if not r then return bad end
if r.lock ~= ARGV[1] then return {'not'} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'ok'}
`)

// releaseScript deletes the lock if it is the lease's (compare and
// delete) and publishes the key on the release channel. ARGV: "TOKEN
// OWNER", the channel, the key. Replies {"ok"}, {"not"} or {"corrupt", ...}.
var releaseScript = goredis.NewScript(prelude + `
local r, bad = read()
if not r then return bad end
if r.lock ~= ARGV[1] then return {'not'} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return {'ok'}
`)

// breakScript deletes the lock whoever holds it, keeping the counter, and
// publishes the key, held or not: a Break that ran on a quorum then
// published on a quorum, which every waiter's quorum of subscriptions
// meets. ARGV: the channel, the key. Replies {"ok"} or {"corrupt", ...}.
var breakScript = goredis.NewScript(prelude + `
local r, bad = read()
if not r then return bad end
if r.lock then redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {'ok'}
`)

// inspectScript reads both records. Replies {"ok", LOCK or "", PTTL,
// COUNTER or ""} or {"corrupt", ...}.
var inspectScript = goredis.NewScript(prelude + `
local r, bad = read()
if not r then return bad end
return {'ok', r.lock or '', r.pttl or -2, r.ctr or ''}
`)
