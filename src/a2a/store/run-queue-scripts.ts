/**
 * The Lua scripts of the Redis run queue (see RedisRunQueue): each is one atomic step, so two
 * instances can never both become a task's writer. Times are Redis's clock (TIME), not any
 * instance's, so clock skew between hosts cannot expire a lease early.
 */

/** The `lease` field of a task whose run is queued: no instance writes it yet. */
export const QUEUED_LEASE = 'queued';

/**
 * Creates a queued task and queues its run, unless the queue is full (returns 0, creates nothing).
 * KEYS: task hash, event stream, owner index, conversation list, run stream.
 * ARGV: id, contextId, owner, userText, state, statusTime, snapshot, first event json, ttl while
 * running, max queued runs, run json, the message claim's key ('' = none: whoever expires the task
 * expires its claim too).
 */
export const CREATE_QUEUED_SCRIPT = `
if redis.call('XLEN', KEYS[5]) >= tonumber(ARGV[10]) then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'contextId', ARGV[2], 'owner', ARGV[3], 'userText', ARGV[4], 'lease', '${QUEUED_LEASE}',
  'state', ARGV[5], 'statusTime', ARGV[6], 'lastSeq', '1', 'snapshot', ARGV[7])
if ARGV[12] ~= '' then redis.call('HSET', KEYS[1], 'claim', ARGV[12]) end
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('XADD', KEYS[2], '1-1', 'f', '-', 'j', ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[1])
redis.call('XADD', KEYS[5], '*', 'r', ARGV[11])
return 1
`;

/**
 * Takes a task's writer lease: from 'queued' only while no one took it; from 'expired' only once
 * its run lease is past due. With a lease time, the new run lease goes in the leases set; without,
 * the task leaves it. Returns the task hash (HGETALL) and the task's cancel flag (see
 * RedisRunQueue.flagCancel: read in the same step, where a GET after the take-over was one more
 * round trip per run), or nil.
 * With a run stream (a worker taking the run it read from the queue), the run's entry leaves the
 * queue in the same step, whatever the outcome (as RUN_DONE_SCRIPT, which was one more call per
 * run): a take-over that fails to reach Redis leaves it pending, to be claimed again.
 * KEYS: task hash, leases set, cancel flag[, run stream]. ARGV: id, from, new lease, lease ms,
 * runner (host:pid, for operators)[, group, entry id].
 */
export const TAKE_OVER_SCRIPT = `
if KEYS[4] then
  redis.call('XACK', KEYS[4], ARGV[6], ARGV[7])
  redis.call('XDEL', KEYS[4], ARGV[7])
end
local lease = redis.call('HGET', KEYS[1], 'lease')
if not lease then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return nil
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == 'queued' then
  if lease ~= '${QUEUED_LEASE}' then return nil end
else
  local due = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if not due or tonumber(due) > now then return nil end
end
redis.call('HSET', KEYS[1], 'lease', ARGV[3])
if tonumber(ARGV[4]) > 0 then
  redis.call('HSET', KEYS[1], 'runner', ARGV[5])
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[3])}
`;

/**
 * Extends each run lease still held; returns the ids whose lease is held by another writer now.
 * KEYS: leases set, then one task hash per task. ARGV: lease ms, then (id, lease) per task.
 */
export const RENEW_LEASES_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lost = {}
for i = 2, #KEYS do
  local id = ARGV[2 * (i - 1)]
  if redis.call('HGET', KEYS[i], 'lease') == ARGV[2 * (i - 1) + 1] then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
  else
    lost[#lost + 1] = id
  end
end
return lost
`;

/**
 * Runs queued longer than a time (by Redis's clock: a stream entry's id is the ms it was added),
 * oldest first. KEYS: run stream. ARGV: time ms, count.
 */
export const QUEUED_BEFORE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('XRANGE', KEYS[1], '-', string.format('%d', now - tonumber(ARGV[1])), 'COUNT', tonumber(ARGV[2]))
`;

/** Ids whose run lease is past due, oldest first. KEYS: leases set. ARGV: count. */
export const EXPIRED_LEASES_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
`;

/**
 * A run entry leaves the queue once its task is decided: acknowledged in the workers' group and
 * deleted from the stream (which counts toward maxQueuedRuns), both or neither, in one command
 * where MULTI/XACK/XDEL/EXEC were four. KEYS: run stream. ARGV: group, entry id.
 */
export const RUN_DONE_SCRIPT = `
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return redis.call('XDEL', KEYS[1], ARGV[2])
`;
