-- wrk script of bench/profile: sends exactly PROFILE_N requests per wrk thread, then stops.
-- PROFILE_SCRIPT (optional): a wrk script whose request() builds each request (for instance
-- bench/post_account_holder.lua); without it, wrk's plain request from the command line.
-- PROFILE_EXACT=yes: the thread stops once all its responses are in (a response() callback
-- counts them), so the server handled exactly PROFILE_N requests per thread (the callgrind
-- runs divide by that). Otherwise the thread stops after sending its last request (no
-- response() callback, which would cost wrk CPU of its own): requests still in flight then are
-- dropped, and the CPU runs divide by what wrk reports as completed. Tesoro's runs divide by the
-- server's own count of the route's requests either way.
local script = os.getenv("PROFILE_SCRIPT")
if script and script ~= "" then dofile(script) end
local build = request or function() return wrk.format() end
local limit = tonumber(os.getenv("PROFILE_N") or "2000")
local sent, received, finished = 0, 0, 0
-- Connections of this thread: a connection that asks for a request after the last one has none
-- left in flight. Once every connection has (a connection the server closed and wrk reopened
-- asks twice), the thread stops even if a response was lost with a closed connection.
local connections = tonumber(os.getenv("PROFILE_CONNECTIONS") or "1")
local stopped = false

-- wrk's main thread waits out -d even when every thread has stopped: each thread notes its stop
-- in PROFILE_DONE, and bench/profile interrupts wrk (SIGINT: it prints its report) once all have.
local function stop()
  if stopped then return end
  stopped = true
  local done = os.getenv("PROFILE_DONE")
  if done and done ~= "" then
    local file = io.open(done, "a")
    if file then file:write("stopped\n"); file:close() end
  end
  wrk.thread:stop()
end

request = function()
  sent = sent + 1
  if sent > limit then
    -- Nothing more to send: an empty write leaves this connection waiting, and the thread
    -- stops (exact mode: once the last response is in).
    finished = finished + 1
    if os.getenv("PROFILE_EXACT") ~= "yes" or finished >= connections then stop() end
    return ""
  end
  return build()
end

if os.getenv("PROFILE_EXACT") == "yes" then
  response = function(status, headers, body)
    received = received + 1
    if received >= limit then stop() end
  end
end
