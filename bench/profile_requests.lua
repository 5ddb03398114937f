-- wrk script of bench/profile: sends exactly PROFILE_N requests per wrk thread, then stops.
-- PROFILE_SCRIPT (optional): a wrk script whose request() builds each request (for instance
-- bench/post_account_holder.lua); without it, wrk's plain request from the command line.
-- PROFILE_EXACT=yes: the thread stops once all its responses are in (a response() callback
-- counts them), so the server handled exactly PROFILE_N requests per thread (the callgrind
-- runs divide by that). Otherwise the thread stops after sending its last request (no
-- response() callback, which would cost wrk CPU of its own): requests still in flight then are
-- dropped, and the CPU runs divide by what wrk reports as completed.
local script = os.getenv("PROFILE_SCRIPT")
if script and script ~= "" then dofile(script) end
local build = request or function() return wrk.format() end
local limit = tonumber(os.getenv("PROFILE_N") or "2000")
local sent, received = 0, 0

request = function()
  sent = sent + 1
  if sent > limit then
    -- Nothing more to send: an empty write leaves this connection waiting, and the thread
    -- stops (exact mode: once the last response is in).
    if os.getenv("PROFILE_EXACT") ~= "yes" then wrk.thread:stop() end
    return ""
  end
  return build()
end

if os.getenv("PROFILE_EXACT") == "yes" then
  response = function(status, headers, body)
    received = received + 1
    if received >= limit then wrk.thread:stop() end
  end
end
