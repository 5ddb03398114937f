-- wrk script: one sandbox card authorization per request, spread over the cards listed (one id
-- per line) in the file named by the environment variable CARDS_FILE, so that requests of
-- different connections rarely queue on one card's lock. No idempotency key: every request is a
-- first execution (a hold, a card transaction row, an event).
--
--   CARDS_FILE=cards.txt wrk -t2 -c64 -d10s -s bench/authorize_card.lua \
--       -H "Authorization: Bearer $API_KEY" http://127.0.0.1:PORT

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local cards = {}
local counter = 0

function init(args)
  thread_number = thread_number or 0
  for line in io.lines(os.getenv("CARDS_FILE")) do
    if #line > 0 then cards[#cards + 1] = line end
  end
  counter = thread_number * 7
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local body = '{"amount":{"amount":100,"currency":"COP"},"channel":"online_purchase",' ..
  '"merchant":{"name":"Bench Store","mcc":"5411","mid":"BENCH001","country":"CO"}}'

function request()
  counter = counter + 1
  local card = cards[(counter % #cards) + 1]
  return wrk.format(nil, "/v1/sandbox/cards/" .. card .. "/authorizations", nil, body)
end
