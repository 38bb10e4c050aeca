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
// A value that is not such a record is reported as {"corrupt", WHICH,
// RAW}; a key of another type fails the script with WRONGTYPE. Either
// way nothing is written.

// prelude is shared by the scripts: checking records and reading both.
const prelude = `
local function tok(s)
  if not string.find(s, '^[1-9]%d*$') then return nil end
  if #s > 19 or (#s == 19 and s > '9223372036854775807') then return nil end
  return s
end
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local function rec(v)
  local sp = string.find(v, ' ', 1, true)
  if not sp or sp == #v then return nil end
  local t = tok(string.sub(v, 1, sp - 1))
  if not t then return nil end
  return t, string.sub(v, sp + 1)
end
-- read returns the lock record (false if none), its token and owner, and
-- the counter record (false if none) and its token; or nil and the
-- corrupt reply. A key of another type fails GET with WRONGTYPE, which
-- the store reports as corrupt. A lock needs a counter at least as
-- high, and an expiry.
local function read()
  local lock = redis.call('GET', KEYS[1])
  local ctr = redis.call('GET', KEYS[2])
  local ct
  if ctr then
    ct = rec(ctr)
    if not ct then return nil, {'corrupt', 'counter', ctr} end
  end
  if not lock then return false, nil, nil, ctr, ct end
  local lt, lo = rec(lock)
  if not lt then return nil, {'corrupt', 'lock', lock} end
  if not ct or less(ct, lt) then
    return nil, {'corrupt', 'lock', 'token ' .. lt .. ' above the counter ' .. (ctr or '(none)')}
  end
  return lock, lt, lo, ctr, ct
end
-- live is read, and then the lock's remaining milliseconds (-2 when
-- there is no lock), or nil and the corrupt reply for a lock without
-- expiry.
local function live()
  local lock, lt, lo, ctr, ct = read()
  if lock == nil then return nil, lt end
  local ms = -2
  if lock then
    ms = redis.call('PTTL', KEYS[1])
    if ms < 0 then return nil, {'corrupt', 'lock', lock .. ' (no expiry)'} end
  end
  return lock, lt, lo, ctr, ct, ms
end
`

// lockScript takes the lock with a proposed token. ARGV: owner, TTL in
// milliseconds, the proposed token, and the token this attempt proposed
// to this master in a previous round ("" if none), whose lock it may
// take over. Replies:
//
//	{"ok"}                          taken: lock and counter are "TOKEN OWNER"
//	{"held", LOCK, PTTL, COUNTER}   another lock is there (or ours, not of this attempt)
//	{"stale", COUNTER}              free, but the counter is not below the proposal
//	{"corrupt", WHICH, RAW}
var lockScript = goredis.NewScript(prelude + `
local lock, lt, lo, ctr, ct, ms = live()
if lock == nil then return lt end
if lock and not (ARGV[4] ~= '' and lt == ARGV[4] and lo == ARGV[1]) then
  return {'held', lock, ms, ctr}
end
if ct and not less(ct, ARGV[3]) then return {'stale', ctr} end
local v = ARGV[3] .. ' ' .. ARGV[1]
redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
redis.call('SET', KEYS[2], v)
return {'ok'}
`)

// renewScript extends the lock if it is the lease's. ARGV: "TOKEN OWNER",
// TTL in milliseconds. Replies {"ok"}, {"not"} or {"corrupt", ...}.
var renewScript = goredis.NewScript(prelude + `
local lock, lt = live()
if lock == nil then return lt end
if lock ~= ARGV[1] then return {'not'} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'ok'}
`)

// releaseScript deletes the lock if it is the lease's (compare and
// delete) and publishes the key on the release channel. ARGV: "TOKEN
// OWNER", the channel, the key. Replies {"ok"}, {"not"} or {"corrupt", ...}.
var releaseScript = goredis.NewScript(prelude + `
local lock, lt = live()
if lock == nil then return lt end
if lock ~= ARGV[1] then return {'not'} end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return {'ok'}
`)

// breakScript deletes the lock whoever holds it, keeping the counter, and
// publishes the key, held or not: a Break that ran on a quorum then
// published on a quorum, which every waiter's quorum of subscriptions
// meets. ARGV: the channel, the key. Replies {"ok"} or {"corrupt", ...}.
var breakScript = goredis.NewScript(prelude + `
local lock, lt = live()
if lock == nil then return lt end
if lock then redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {'ok'}
`)

// inspectScript reads both records, and the value record KEYS[3] when
// the key is held. Replies {"ok", LOCK or "", PTTL, COUNTER or "", VALUE
// or ""} or {"corrupt", ...}.
var inspectScript = goredis.NewScript(prelude + `
local lock, lt, lo, ctr, ct, ms = live()
if lock == nil then return lt end
local val = false
if lock then val = redis.call('GET', KEYS[3]) end
return {'ok', lock or '', ms, ctr or '', val or ''}
`)

// publishScript sets the value record KEYS[3] to "TOKEN VALUE" if the
// lock is the lease's, and publishes the key on the release channel, as
// a release does, so that waiters look again. ARGV: "TOKEN OWNER", the
// token, the value, the channel, the key. Replies {"ok"}, {"not"} or
// {"corrupt", ...}.
var publishScript = goredis.NewScript(prelude + `
local lock, lt = live()
if lock == nil then return lt end
if lock ~= ARGV[1] then return {'not'} end
redis.call('SET', KEYS[3], ARGV[2] .. ' ' .. ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {'ok'}
`)
