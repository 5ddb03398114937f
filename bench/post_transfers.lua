-- wrk script: one durable batch of outgoing transfers per request (POST
-- /api/v1/outgoing_transfers), BATCH_ITEMS transfers (default 1000) of 100 minor units each from
-- the originator tenant account named by ORIGINATOR, to plain keys of the sandbox network's
-- synthetic directory (KEYS distinct cellphone keys, default 100, taken in turn by item). Every
-- transfer has its own external_id (thread, request and item numbers, and a nonce of the run), so
-- each is accepted: its row, its hold and its event, committed before the answer. Transfers per
-- second = requests per second x BATCH_ITEMS.
--
--   ORIGINATOR=bbtacc_... wrk -t2 -c8 -d10s -s bench/post_transfers.lua \
--       -H "Authorization: Bearer $ACCESS_TOKEN" http://127.0.0.1:PORT

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local counter = 0
local items = tonumber(os.getenv("BATCH_ITEMS") or "1000")
local key_count = tonumber(os.getenv("KEYS") or "100")
local originator = os.getenv("ORIGINATOR")
local nonce = ""
local keys = {}

function init(args)
  thread_number = thread_number or 0
  math.randomseed(os.time() * 1009 + thread_number * 104729 + math.floor(os.clock() * 1e6))
  nonce = string.format("%08x", math.random(0, 0x7fffffff))
  -- 10 digits starting with 3 (a cellphone), ending in 5: never one of the documented failing
  -- endings (404, 991 to 994).
  for i = 1, key_count do keys[i] = string.format("3%08d5", 10000000 + i) end
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

-- The body's items differ between requests only in the request number inside their external ids:
-- the first request makes the pieces of the body around those numbers once, and each request
-- joins them with its number (table.concat with the number as the separator: one pass in C,
-- where a pattern substitution over the whole body was most of wrk's CPU; wrk shares the machine
-- with the server it measures).
local body_pieces = nil

local function pieces()
  local prefix = string.format('{"external_id":"b-%s-%d-', nonce, thread_number)
  local parts = {'{"tenant_account_id":"' .. originator .. '","description":"bench","transfers":[' ..
    prefix}
  for i = 1, items do
    local rest = '-' .. i ..
      '","amount":{"amount":100,"currency":"COP"},"query":{"format":"plain_key","value":"' ..
      keys[(i % key_count) + 1] .. '"}}'
    parts[#parts + 1] = rest .. (i < items and (',' .. prefix) or ']}')
  end
  return parts
end

function request()
  counter = counter + 1
  body_pieces = body_pieces or pieces()
  local body = table.concat(body_pieces, tostring(counter))
  return wrk.format(nil, "/api/v1/outgoing_transfers", nil, body)
end
