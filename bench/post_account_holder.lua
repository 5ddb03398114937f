-- wrk script: one durable POST /v1/ledger/account_holders per request, each with its own
-- x-idempotency-key and external_id, so every request is a first execution (a real insert and a
-- stored idempotency record), never a replay or a 409.
--
--   wrk -t2 -c64 -d10s -s bench/post_account_holder.lua \
--       -H "Authorization: Bearer $API_KEY" http://127.0.0.1:PORT/v1/ledger/account_holders
--
-- Every wrk thread has its own Lua state: setup() numbers the threads, init() seeds each
-- thread's generator differently. Keys and external ids also carry the thread number and a
-- per-thread counter, so they are unique within a run whatever the generator does.

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local counter = 0

function init(args)
  thread_number = thread_number or 0
  math.randomseed(os.time() * 1009 + thread_number * 104729 + math.floor(os.clock() * 1e6))
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local function hex16()
  return string.format("%04x", math.random(0, 0xffff))
end

-- UUID-shaped (version 4 layout): 8-4-4-4-12 hex digits.
local function idempotency_key()
  return hex16() .. hex16() .. "-" ..
         string.format("%04x", thread_number % 0x10000) .. "-" ..
         "4" .. string.sub(hex16(), 2) .. "-" ..
         string.format("%x", math.random(8, 11)) .. string.sub(hex16(), 2) .. "-" ..
         string.format("%012x", counter)
end

local body_format = '{"external_id":"bench-%d-%d-%s",' ..
  '"address":{"city":"Bogota","country":"CO","line_1":"Calle 100 10-20",' ..
  '"state":"Cundinamarca","zip_code":"110111"},' ..
  '"person":{"country_code":"CO","document_number":"%d","document_type":"CC",' ..
  '"first_name":"Ana","last_name":"Gomez","person_type":"natural"},' ..
  '"metadata":{"source":"bench"}}'

function request()
  counter = counter + 1
  wrk.headers["x-idempotency-key"] = idempotency_key()
  local body = string.format(body_format, thread_number, counter, hex16() .. hex16(),
                             math.random(100000000, 999999999))
  return wrk.format(nil, nil, nil, body)
end
