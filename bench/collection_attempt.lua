-- wrk script: one sandbox payment attempt per request (POST /api/v1/sandbox/collections/attempts),
-- spread over the collection keys listed (one alphanumeric key per line) in the file named by
-- KEYS_FILE. Each succeeds: an attempt, an incoming transfer, a ledger credit to the tenant
-- account, the collection's paid amount and their events, committed before the answer.
--
--   KEYS_FILE=keys.txt wrk -t2 -c64 -d10s -s bench/collection_attempt.lua \
--       -H "Authorization: Bearer $ACCESS_TOKEN" http://127.0.0.1:PORT

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local keys = {}
local counter = 0

function init(args)
  thread_number = thread_number or 0
  for line in io.lines(os.getenv("KEYS_FILE")) do
    if #line > 0 then keys[#keys + 1] = line end
  end
  counter = thread_number * 7
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local key = keys[(counter % #keys) + 1]
  local body = '{"amount":{"amount":100,"currency":"COP"},"creditor_key_type":"alphanumeric",' ..
    '"creditor_key_value":"' .. key .. '","payer":{"name":"Bench Payer","document_type":"CC",' ..
    '"document_number":"1020304050"}}'
  return wrk.format(nil, "/api/v1/sandbox/collections/attempts", nil, body)
end
