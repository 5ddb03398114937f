-- wrk script: one dynamic QR code with a 400 px PNG per request (POST
-- /api/v1/collections/{id}/qr), spread over the collections listed (one id per line) in the file
-- named by COLLECTIONS_FILE. No idempotency key: every request is a first execution (a QR row and
-- its PNG).
--
--   COLLECTIONS_FILE=collections.txt wrk -t2 -c64 -d10s -s bench/create_qr.lua \
--       -H "Authorization: Bearer $ACCESS_TOKEN" http://127.0.0.1:PORT

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local collections = {}
local counter = 0

function init(args)
  thread_number = thread_number or 0
  for line in io.lines(os.getenv("COLLECTIONS_FILE")) do
    if #line > 0 then collections[#collections + 1] = line end
  end
  counter = thread_number * 7
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local body = '{"usage_mode":"single_use","amount":{"amount":1500000,"currency":"COP"},' ..
  '"expiration_seconds":3600,"image_width":400}'

function request()
  counter = counter + 1
  local collection = collections[(counter % #collections) + 1]
  return wrk.format(nil, "/api/v1/collections/" .. collection .. "/qr", nil, body)
end
