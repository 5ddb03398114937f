#!/usr/bin/env python3
"""The report of bench/profile: reads the outputs of one run (its folder) and prints, per request,
the instructions (callgrind runs) or CPU seconds (cpu runs). See bench/profile's header.

    bench/profile_report.py OUT            the report of a run, again
    bench/profile_report.py --layers       the layers and the function names that define them
    bench/profile_report.py --functions OUT [REGEX]   the functions inside the layers matching REGEX
    bench/profile_report.py --compare OUT OUT...       runs of one mode side by side, with their spread

Layers: every function callgrind names is classified by LAYERS below (first match wins, on the
name without its return type and recursion mark). A function's own instructions go to the
innermost layer on its call path. "major" layers (a part of the work: authentication, a write
unit's steps, a background poll) stay on the path below them, and the "minor" layer met below
(SQL, JSON...) is shown after a slash: "authentication / SQL". malloc/free is counted under the
layer that called it, marked "[malloc/free]". EDGE_LAYERS name a layer by
caller and callee (the writer's SAVEPOINTs and COMMIT both call Connection::run). Paths are
followed through callgrind's caller->callee edges, each with its exact inclusive cost; a function
reached from several layers passes its callees' cost on in proportion to the cost of the calls
from each layer.
"""
import collections
import glob
import os
import re
import signal
import sys

# (kind, label, regex on the function name). Order matters: first match wins.
LAYERS = [
    ("leaf", "malloc/free", r"^(malloc|free|calloc|realloc|cfree|_int_malloc|_int_free|_int_realloc|"
     r"malloc_consolidate|unlink_chunk.*|tcache_\w+|sysmalloc|systrim|_int_memalign|"
     r"__libc_(malloc|free|calloc|realloc)|operator new|operator delete|aligned_alloc|"
     r"posix_memalign|__default_morecore|__brk|sbrk|__mmap|__munmap)\b"),
    # Major layers: parts of the work, which keep what they call (SQL, JSON...) as sub-rows.
    ("major", "authentication (credential lookup, its SQL)", r"^tesoro::app::App::authenticate(_console)?\("),
    ("major", "idempotency lookup before the handler", r"^tesoro::idempotency::find\("),
    ("major", "write unit: create_account_holder", r"^tesoro::ledger::create_account_holder\b"),
    ("major", "write unit: create_qr (the plan's reads, the row's insert)", r"^tesoro::collections::create_qr\b"),
    ("major", "QR image after the commit (symbol, mask, PNG, base64)", r"^tesoro::collections::render_image\b"),
    ("major", "write unit: events::emit", r"^tesoro::events::emit\b"),
    ("major", "write unit: idempotency::record", r"^tesoro::idempotency::(record|store|save)\w*\("),
    ("major", "sequencer: events::assign_positions", r"^tesoro::events::assign_positions\b"),
    ("major", "job poll: jobs::claim", r"^tesoro::jobs::claim\w*\("),
    ("major", "webhooks::fan_out", r"^tesoro::webhooks::fan_out\b"),
    ("major", "webhook delivery pass", r"^tesoro::webhooks::deliver_pass\b"),
    ("major", "sweeper and expiry polls", r"^tesoro::(idempotency::sweep_expired|auth::sweep_expired_tokens|"
     r"console::sweep|cards::expire_due|collections::expire_due|transfers::process_due)\b"),
    ("major", "checkpointer (wal_checkpoint)", r"^tesoro::store::\(anonymous namespace\)::SqliteStore::checkpoint_loop\("),
    ("minor", "logging/metrics", r"^tesoro::(log|metrics)::"),
    ("minor", "crypto (hashes, MACs, random: libcrypto)",
     r"^(tesoro::crypto::|0x\w+@libcrypto\.so.*$|(SHA\d*|sha\d+|EVP|HMAC|RAND|CRYPTO|OPENSSL|ossl|evp)_?\w*$)"),
    ("minor", "SQL: libpq", r"^(PQ\w+|pq\w+|0x\w+@libpq\.so.*)$"),
    ("minor", "SQL: store glue (transaction, connection pool)",
     r"^tesoro::store::(\(anonymous namespace\)::)?(SqliteStore|PostgresStore|Store)::"
     r"(run_read|run_read_single|run_write|read|write|read_single|with_reader|with_connection|"
     r"acquire\w*|release\w*)\b"),
    # Most of SQLite's internals are static (no name in libsqlite3's symbols): COMMIT and SAVEPOINT
    # work is told apart by the writer's call sites instead (EDGE_LAYERS, split_writer_statements).
    ("minor", "SQL: SQLite", r"^(sqlite3\w*|0x\w+@libsqlite3\.so.*)$"),
    ("minor", "SQL: statement run, bind, rows", r"^tesoro::store::"),
    ("minor", "JSON serialize (boost::json::serialize)", r"^boost::json::(serialize|serializer|detail::write|detail::format)"),
    ("minor", "JSON free (boost::json destructors)", r"^boost::json::(value|object|array|string|detail::string_impl)::~"),
    ("minor", "JSON build (boost::json values, Tesoro's *_json; *_text writers)", r"^(boost::json::|"
     r"tesoro::api::(\(anonymous namespace\)::)?\w*(json\w*|_text)\(|"
     r"tesoro::\w+::(\(anonymous namespace\)::)?\w+_text(\[abi:cxx11\])?\(|tesoro::json::|tesoro::json_text::)"),
    ("minor", "HTTP read/parse (Beast, Request)",
     r"^(boost::beast::http::(detail::read|detail::parse|detail::basic_parser|basic_parser|parser|"
     r"detail::read_some|async_read)|boost::beast::basic_stream<.*>::ops::transfer_op<true|"
     r"tesoro::http::\(anonymous namespace\)::Session::(read|on_header|read_body|on_read|to_request|lower)\(|"
     r"tesoro::http::\(anonymous namespace\)::lower\(|\(anonymous namespace\)::Session::read\(|"
     r"boost::asio::detail::reactive_socket_recv_op|__libc_recv|recv|recvmsg|readv)"),
    ("minor", "HTTP response write (head, send)",
     r"^(tesoro::http::\(anonymous namespace\)::Session::(write|append_field)\(|"
     r"\(anonymous namespace\)::Session::write\(|boost::beast::http::(detail::write|serializer|"
     r"async_write|response|message)|boost::asio::detail::write_op|boost::beast::basic_stream<.*>::ops::transfer_op<false|"
     r"boost::asio::detail::reactive_socket_send_op|__libc_send|send|sendmsg|writev|__send)"),
    ("minor", "routing", r"^(tesoro::http::Router::|tesoro::app::App::runs_inline\(|tesoro::api::(is_console|console_proxied)\w*\()"),
    ("minor", "request envelope (App::handle: request id, path, Context, headers)",
     r"^(tesoro::app::App::(handle|dispatch|run_idempotent)\(|tesoro::app::\(anonymous namespace\)::|"
     r"tesoro::ids::|tesoro::api::Context::|tesoro::http::Response::|tesoro::http::Request::|"
     r"tesoro::api::render_error|std::_Function_handler<tesoro::http::Response \(tesoro::http::Request&\), tesoro::app::command_serve)"),
    ("minor", "request body decode and validation (ObjectReader)",
     r"^tesoro::api::(\(anonymous namespace\)::)?(ObjectReader|Problems|read_\w+|required_\w+|optional_\w+|decode_\w+)"),
    ("minor", "handler and domain code", r"^tesoro::(api|ledger|domain|cards|collections|transfers|events|webhooks|"
     r"idempotency|jobs|payouts|auth|console|workers|clock|tenant_clock|network|spending_controls|money|time|crypto)::"),
    ("minor", "thread hand-off (pool queue, futures, mutexes, condition variables)",
     r"^(pthread_\w+|__pthread\w*|___pthread\w*|std::condition_variable|std::__future_base|std::promise|"
     r"std::future|std::__basic_future|__lll_\w+|futex\w*|__futex\w*|std::mutex|__GI___lll\w*|"
     r"boost::asio::detail::(thread_pool|posix_thread|posix_event|conditionally_enabled_mutex|"
     r"conditionally_enabled_event)|boost::asio::thread_pool|syscall)\b"),
    ("minor", "asio scheduler, reactor, strands, timers",
     r"^boost::asio::(detail::(scheduler|epoll_reactor|strand_executor_service|strand_service|executor_op|"
     r"executor_function|reactive_socket_service|socket_ops|timer_queue|deadline_timer|"
     r"reactor_op|scheduler_operation|epoll_wait|thread_info|handler_work|work_dispatcher|"
     r"binder\d|recycling_allocator|thread_context|call_stack)|io_context)|^epoll_wait|^epoll_ctl"),
]

# (caller regex, callee regex, kind, label): the layer of a call, by who calls what.
EDGE_LAYERS = [
    # SqliteStore's writer_loop, commit_batch and run_unit are inlined into the writer thread's
    # lambda: its calls of Connection::run are BEGIN IMMEDIATE, SAVEPOINT, RELEASE and COMMIT.
    (r"SqliteStore::SqliteStore\(tesoro::store::Options const&\)::\{lambda\(\)#1\}|SqliteStore::(writer_loop|commit_batch|run_unit)\(",
     r"Connection::(run|exec_plain)\(", "major", "writer: BEGIN IMMEDIATE, SAVEPOINT, RELEASE, COMMIT statements"),
    (r"SqliteStore::SqliteStore\(tesoro::store::Options const&\)::\{lambda\(\)#1\}|SqliteStore::(writer_loop|commit_batch|run_unit)\(",
     r"^std::_Function_handler<bool \(tesoro::store::Tx&\)", "major", "write unit: glue (Store::write, Context::write, response)"),
    # Context::write runs the handler's function in a nested savepoint (Tx::nested): its
    # SAVEPOINT and RELEASE statements.
    (r"(ConnectionTx<.*>|Tx)::nested<", r"ConnectionTx<.*>::exec\(|Connection::(run|exec_plain)\(", "major",
     "write unit: nested SAVEPOINT statements"),
    (r"GroupCommitWriter::exec\(|GroupCommitWriter::run\(", r"sqlite3_exec", "major", "writer: BEGIN + COMMIT statements"),
]

# Write units that background workers queue (polls): these names, as majors, are left out of the
# request path (see callgrind_report).
BACKGROUND_MAJORS = ("job poll: jobs::claim", "sweeper and expiry polls", "webhook delivery pass")
BACKGROUND_ROLES = ("background workers",)
# The checkpointer wakes on a timer but copies what the requests wrote: its idle cost per second
# (empty checkpoints) is taken out, scaled to the load window's length; the rest is the requests'.
TIME_SCALED_ROLES = ("SQLite checkpointer",)
# Write units per request of each mode (the rest of the writer's units in the load window are
# polls of the background workers).
REQUEST_UNITS = {"post": 1, "qr": 1}

ROLES = [
    ("SQLite writer", r"SqliteStore::writer_loop|SqliteStore::SqliteStore\(tesoro::store::Options const&\)::\{lambda\(\)#1\}|GroupCommitWriter::run"),
    ("SQLite checkpointer", r"SqliteStore::checkpoint_loop"),
    ("background workers", r"tesoro::workers::Runner::loop"),
    ("handler pool", r"boost::asio::thread_pool::thread_function|posix_thread::func<boost::asio::thread_pool"),
    ("I/O threads", r"boost::asio::detail::scheduler::run"),
]

RETURN_TYPE = re.compile(r"^(?:void|bool|int|long|unsigned \w+|char|double|auto|std::\S+|boost::\S+|tesoro::\S+) (?=[\w:(])")
RECURSION = re.compile(r"'\d+(?=@|$)")


def strip(name):
    name = RECURSION.sub("", name)
    # "void boost::asio::...<...>(...)": drop a leading return type when one comes before a name
    # with template arguments; keep plain names as they are.
    m = RETURN_TYPE.match(name)
    if m and "(" in name and name.index("(") > m.end() and "<" not in name[:m.end()]:
        return name[m.end():]
    return name


def core_name(name):
    """The qualified name alone: template arguments, parameters and a return type dropped
    ("char const* boost::json::basic_parser<X>::parse<true>(char const*)" gives
    "boost::json::basic_parser<>::parse<>")."""
    text = RECURSION.sub("", name).replace("(anonymous namespace)", "{anonymous}")
    if text.startswith("operator "):
        return text.split("(")[0]
    out, depth = [], 0
    for c in text:
        if c == "<":
            depth += 1
            if depth == 1:
                out.append("<")
            continue
        if c == ">" and depth:
            depth -= 1
            if depth == 0:
                out.append(">")
            continue
        if depth == 0:
            out.append(c)
    text = re.sub(r"\{lambda\([^)]*\)#\d+\}", "{lambda}", "".join(out))
    head = text.split("(")[0].strip()
    return head.split(" ")[-1] if " " in head else head


COMPILED = [(k, l, re.compile(r)) for k, l, r in LAYERS]
COMPILED_EDGES = [(re.compile(a), re.compile(b), k, l) for a, b, k, l in EDGE_LAYERS]
_class_cache = {}


def classify(name):
    if name not in _class_cache:
        plain, core = strip(name), core_name(name)
        found = None
        for kind, label, regex in COMPILED:
            if regex.search(plain) or regex.search(core.replace("{anonymous}", "(anonymous namespace)")):
                found = (kind, label)
                break
        _class_cache[name] = found
    return _class_cache[name]


def parse(path, names):
    """One callgrind file: total, self cost per function, edges {(caller, callee): [calls, cost]},
    the same per call site {(caller, callee): {address: [calls, cost]}} when callgrind ran with
    --dump-instr=yes, the object of each function, and the thread number."""
    total, thread = 0, 0
    self_cost = collections.Counter()
    edges = {}
    sites = {}
    objects = {}
    current_ob = callee_ob = ""
    fn = callee = None
    pending = None
    positions = 1      # "positions: line" (1 column) or "positions: instr line" (2)
    instr = False      # the first position column is an instruction address
    address = 0        # the last absolute instruction address (relative ones build on it)

    def resolve(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, "?" + m.group(1))

    def qualify(name, ob):
        return name + "@" + ob.rsplit("/", 1)[-1] if name.startswith("0x") else name

    with open(path, errors="replace") as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if len(parts) <= positions:
                    continue
                if instr:
                    first = parts[0]
                    if first.startswith("0x"):
                        address = int(first, 16)
                    elif first[:1] in "+-":
                        address += int(first)
                    elif first != "*":
                        address = int(first)
                value = int(parts[positions])
                if pending is not None:
                    edge = edges.setdefault((fn, callee), [0, 0])
                    edge[0] += pending
                    edge[1] += value
                    if instr:
                        site = sites.setdefault((fn, callee), {}).setdefault(address, [0, 0])
                        site[0] += pending
                        site[1] += value
                    pending = None
                    callee_ob = current_ob  # cob= names the object of one call only
                else:
                    self_cost[fn] += value
            elif line.startswith("fn="):
                fn = qualify(resolve("fn", line[3:].rstrip("\n")), current_ob)
                objects[fn] = current_ob
                callee_ob = current_ob
            elif line.startswith("cfn="):
                callee = qualify(resolve("fn", line[4:].rstrip("\n")), callee_ob)
                objects.setdefault(callee, callee_ob)
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line.startswith("ob="):
                current_ob = callee_ob = resolve("ob", line[3:].rstrip("\n"))
            elif line.startswith("cob="):
                callee_ob = resolve("ob", line[4:].rstrip("\n"))
            elif line.startswith("positions:"):
                columns = line.split()[1:]
                positions, instr = len(columns), columns[0] == "instr"
            elif line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
            elif line.startswith("thread:"):
                thread = int(line.split()[1])
    return {"total": total, "self": self_cost, "edges": edges, "sites": sites, "objects": objects,
            "thread": thread}


def role_of(data):
    if data["thread"] == 1:
        return "main thread (I/O)"
    text = "\n".join(list(data["self"].keys()) + [b for _, b in data["edges"]])
    for role, regex in ROLES:
        if re.search(regex, text):
            return role
    return "other threads"


MALLOC = " [malloc/free]"


def apply(layer, context):
    """The layer context below a call of a function of `layer` made in `context`."""
    if layer is None:
        return context
    kind, label = layer
    if kind == "leaf":  # malloc/free: counted under the layer that called it, marked
        return context if context[1].endswith(MALLOC) else (context[0], context[1] + MALLOC)
    return (label, "") if kind == "major" else (context[0], label)


WRITER_STATEMENTS = "writer: BEGIN IMMEDIATE, SAVEPOINT, RELEASE, COMMIT statements"


def split_writer_statements(layer, sites, counts):
    """The writer's statements by call site (callgrind --dump-instr=yes): a site called once per
    commit is BEGIN IMMEDIATE or COMMIT, one called once per write unit is SAVEPOINT or RELEASE,
    one called far less is ROLLBACK TO (units that failed). `counts` = (units, commits) of the
    window, from /metrics. None when the sites or counts are not known, or cannot tell apart."""
    if not layer or layer[1] != WRITER_STATEMENTS or not sites or not counts:
        return None
    units, commits = counts
    if commits <= 0 or units < 1.3 * commits:
        return None  # about one unit per commit: the sites cannot be told apart by their counts
    out = []
    for address, (calls, cost) in sites.items():
        if cost <= 0:
            continue
        if calls < 0.5 * commits:
            label = "writer: ROLLBACK TO SAVEPOINT (units that failed)"
        elif abs(calls - commits) <= abs(calls - units):
            label = "writer: BEGIN IMMEDIATE + COMMIT (WAL write)"
        else:
            label = "writer: SAVEPOINT + RELEASE per unit"
        out.append((cost, ("major", label), calls))
    return out


def attribute(data, per_function=None):
    """Cost per (major, minor) layer of one thread; sums to the thread's total. With `functions`
    (a Counter), also adds each function's own cost per (layer, function) to it."""
    self_cost, edges = data["self"], data["edges"]
    edge_layer = {}
    for (a, b) in edges:
        pa, pb = strip(a), strip(b)
        for ra, rb, kind, label in COMPILED_EDGES:
            if ra.search(pa) and rb.search(pb):
                edge_layer[(a, b)] = (kind, label)
                break
    incoming = collections.defaultdict(list)  # callee -> [(caller, cost, layer of the call)]
    functions = set(self_cost)
    for (a, b), (calls, cost) in edges.items():
        functions.add(a)
        functions.add(b)
        if a == b or cost <= 0:
            continue
        layer = edge_layer.get((a, b), classify(b))
        split = split_writer_statements(layer, data.get("sites", {}).get((a, b)), data.get("writer_counts"))
        if split:
            incoming[b].extend((a, site_cost, site_layer) for site_cost, site_layer, _ in split)
        else:
            incoming[b].append((a, cost, layer))
    inclusive = {f: self_cost.get(f, 0) for f in functions}
    for (a, b), (calls, cost) in edges.items():
        if a != b:
            inclusive[a] = inclusive.get(a, 0) + cost
    order = sorted(functions, key=lambda f: -inclusive.get(f, 0))
    context = {}
    root = {("", ""): 1.0}
    for f in order:
        context[f] = {apply(classify(f), ("", "")): 1.0}
    # A function entered by a jump (a tail call) has no caller in callgrind's data. It takes the
    # layers of the other functions of its object (library) in this thread, weighted by their
    # own cost, so a static SQLite function lands where the thread's SQLite work does.
    objects = data.get("objects", {})
    orphans = [f for f in order if not incoming[f] and self_cost.get(f, 0) > 0 and
               not re.match(r"^(start_thread|clone|\(below main\)|_start|0x\w+@ld-linux)", strip(f))]

    def propagate():
        for _ in range(40):
            changed = 0.0
            for f in order:
                if not incoming[f]:
                    continue
                mass = collections.Counter()
                for caller, cost, layer in incoming[f]:
                    for ctx, w in context[caller].items():
                        mass[apply(layer, ctx)] += cost * w
                whole = sum(mass.values())
                if whole <= 0:
                    continue
                new = {ctx: w / whole for ctx, w in mass.items() if w > 0}
                old = context[f]
                changed = max(changed, max(abs(new.get(k, 0) - old.get(k, 0)) for k in set(new) | set(old)))
                context[f] = new
            if changed < 1e-6:
                break

    propagate()
    if orphans:
        for f in orphans:
            mass = collections.Counter()
            for g in order:
                if g != f and incoming[g] and objects.get(g) == objects.get(f) and self_cost.get(g, 0) > 0:
                    for ctx, w in context[g].items():
                        mass[apply(classify(f), ctx)] += self_cost[g] * w
            whole = sum(mass.values())
            if whole > 0:
                context[f] = {ctx: w / whole for ctx, w in mass.items()}
        propagate()
    result = collections.Counter()
    for f, cost in self_cost.items():
        for ctx, w in context.get(f, root).items():
            result[ctx] += cost * w
            if per_function is not None:
                per_function[(label_of(ctx), f)] += cost * w
    return result


def label_of(ctx):
    major, minor = ctx
    if minor == MALLOC:
        minor = "other (no named layer)" + MALLOC
    if major and minor:
        return major + " / " + minor
    return major or minor or "other (no named layer)"


def read_kv(path):
    values = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.split(None, 1)
            if len(parts) == 2:
                values[parts[0]] = parts[1].strip()
    return values


def metric_sum(path, prefix, route):
    total = 0.0
    if not os.path.exists(path):
        return None
    for line in open(path):
        if line.startswith(prefix + "{") and ('route="%s"' % route) in line:
            total += float(line.rsplit(None, 1)[1])
    return total


def metric(path, name):
    if not os.path.exists(path):
        return 0.0
    for line in open(path):
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


ROUTE = {"accounts": "/v1/accounts", "pg-accounts": "/v1/accounts", "post": "/v1/ledger/account_holders",
         "qr": "/api/v1/collections/{collection_id}/qr"}


def requests_handled(out, run):
    mode = run["mode"]
    if mode in ROUTE:
        before = metric_sum(os.path.join(out, "metrics-before.txt"), "tesoro_http_requests_total", ROUTE[mode])
        after = metric_sum(os.path.join(out, "metrics-after.txt"), "tesoro_http_requests_total", ROUTE[mode])
        if before is not None and after is not None:
            return after - before, "server's tesoro_http_requests_total delta"
    wrk = os.path.join(out, "wrk-load.txt")
    if run["kind"] == "cpu" and os.path.exists(wrk):
        m = re.search(r"(\d+) requests in", open(wrk).read())
        if m:
            return float(m.group(1)), "completed requests counted by wrk"
    return float(run["n"]), "N (each wrk thread stopped after all its responses)"


def major_of(layer):
    """The outer layer of a row: its major, or the row itself without its malloc/free mark."""
    layer = layer[:-len(MALLOC)] if layer.endswith(MALLOC) else layer
    return layer.split(" / ")[0]


def count_calls(data, calls):
    """Calls into each major layer (a call from outside it), and of each caller -> callee layer."""
    for (a, b), (n, cost) in data["edges"].items():
        layer = None
        pa, pb = strip(a), strip(b)
        for ra, rb, kind, label in COMPILED_EDGES:
            if ra.search(pa) and rb.search(pb):
                layer = label
                split = split_writer_statements((kind, label), data.get("sites", {}).get((a, b)),
                                                data.get("writer_counts"))
                if split:
                    for _, (_, site_label), site_calls in split:
                        calls[site_label] += site_calls
                    layer = "split"
                break
        if layer == "split":
            continue
        if layer is None:
            cb, ca = classify(b), classify(a)
            if cb and cb[0] == "major" and cb != ca:
                layer = cb[1]
        if layer:
            calls[layer] += n


def table(title, rows, total, columns, column_values, calls=None):
    """rows: [(label, value, {column: value})], printed largest first; small rows grouped. With
    `calls` ({label: calls per request}), a column of calls per request."""
    print(title)
    print("| layer | instructions/request | share |" + (" calls/request |" if calls else "") +
          "".join(" %s |" % c for c in columns))
    print("|---|---:|---:|" + ("---:|" if calls else "") + "---:|" * len(columns))
    small = 0.0
    for label, value, cells in sorted(rows, key=lambda r: -r[1]):
        if abs(value) < 0.002 * abs(total):
            small += value
            continue
        print("| %s | %s | %.1f%% |" % (label, fmt(value), 100 * value / total if total else 0) +
              ((" %.2f |" % calls[label] if calls.get(label, 0) >= 0.005 else " |") if calls else "") +
              "".join(" %s |" % fmt(cells.get(c, 0)) for c in columns))
    if small:
        print("| (rows under 0.2%% each, together) | %s | %.1f%% |" % (fmt(small), 100 * small / total if total else 0) +
              (" |" if calls else "") + " |" * len(columns))
    print("| total | %s | 100%% |" % fmt(total) + (" |" if calls else "") +
          "".join(" %s |" % fmt(column_values.get(c, 0)) for c in columns))
    print()


def callgrind_report(out, run):
    windows = read_kv(os.path.join(out, "windows.txt"))
    seconds = {k: float(v) for k, v in read_kv(os.path.join(out, "seconds.txt")).items()}
    requests, source = requests_handled(out, run)
    mode = run["mode"]
    per = {}
    libpq = collections.Counter()
    calls = collections.Counter()
    names = {}

    def units(path, name="tesoro_store_commit_batch_units_sum"):
        return metric(os.path.join(out, path), name)
    count = "tesoro_store_commit_batch_units_count"
    writer_counts = {
        "idle": (units("metrics-before.txt") - units("metrics-idle-before.txt"),
                 units("metrics-before.txt", count) - units("metrics-idle-before.txt", count))
        if os.path.exists(os.path.join(out, "metrics-idle-before.txt")) else None,
        "load": (units("metrics-after.txt") - units("metrics-before.txt"),
                 units("metrics-after.txt", count) - units("metrics-before.txt", count))}
    for window in ("idle", "load"):
        by_role = collections.Counter()
        cells = collections.Counter()
        files = sorted(glob.glob(os.path.join(out, "callgrind.*.%s-*" % windows[window])))
        for path in files:
            data = parse(path, names)
            role = role_of(data)
            data["writer_counts"] = writer_counts[window]
            by_role[role] += data["total"]
            for ctx, cost in attribute(data).items():
                cells[(label_of(ctx), role)] += cost
            if window == "load":
                count_calls(data, calls)
                group = "background" if role in BACKGROUND_ROLES else "request path"
                for (a, b), (n, cost) in data["edges"].items():
                    plain = RECURSION.sub("", b).split("@")[0]
                    in_libpq = "libpq" in data["objects"].get(a, "")
                    if in_libpq and "libpq" not in data["objects"].get(b, ""):
                        if plain in ("send", "__send", "__libc_send", "poll", "__poll", "recv", "__libc_recv"):
                            libpq[(group, plain.replace("__libc_", "").lstrip("_") + "()")] += n
                    elif not in_libpq and plain in ("PQexec", "PQexecParams", "PQexecPrepared", "PQprepare",
                                                    "PQsendQuery", "PQsendQueryParams", "PQsendQueryPrepared"):
                        libpq[(group, plain)] += n
        per[window] = (by_role, cells, len(files))
    idle_roles, idle_cells, _ = per["idle"]
    load_roles, load_cells, thread_count = per["load"]

    # The writer's units: requests' own (REQUEST_UNITS per request) and the background workers'
    # polls. Polls in the load window are taken out at the idle window's cost per unit, layer by
    # layer: what a poll did because of the requests (events to sequence) stays.
    idle_units = units("metrics-before.txt") - units("metrics-idle-before.txt")
    load_units = units("metrics-after.txt") - units("metrics-before.txt")
    load_commits = units("metrics-after.txt", "tesoro_store_commit_batch_units_count") - \
        units("metrics-before.txt", "tesoro_store_commit_batch_units_count")
    request_units = REQUEST_UNITS.get(mode, 0) * requests
    poll_units = max(load_units - request_units, 0.0)
    if idle_units > 0 and os.path.exists(os.path.join(out, "metrics-idle-before.txt")):
        writer_scale, scale_text = poll_units / idle_units, "%.0f poll units in the load window / %.0f in the idle window" % (poll_units, idle_units)
    else:
        writer_scale = seconds["load"] / seconds["idle"] if seconds.get("idle") else 0.0
        scale_text = "load / idle seconds (no unit counts)"

    # The idle window has about one unit per commit, so its writer statements stay one row; spread
    # it over the load window's BEGIN/COMMIT and SAVEPOINT/RELEASE rows in proportion to them.
    split_labels = [l for l in ("writer: BEGIN IMMEDIATE + COMMIT (WAL write)", "writer: SAVEPOINT + RELEASE per unit",
                                "writer: ROLLBACK TO SAVEPOINT (units that failed)")]
    for (layer, role) in list(idle_cells):
        if major_of(layer) != WRITER_STATEMENTS or (layer, role) in load_cells:
            continue
        suffix = layer[len(WRITER_STATEMENTS):]
        targets = {(l + suffix, role): load_cells.get((l + suffix, role), 0) for l in split_labels}
        weight = sum(v for v in targets.values() if v > 0)
        if weight <= 0:
            continue
        cost = idle_cells.pop((layer, role))
        for key, v in targets.items():
            if v > 0:
                idle_cells[key] += cost * v / weight
    request_path = collections.Counter()   # (layer, role) -> instructions in the load window
    background = collections.Counter()
    for key in set(load_cells) | set(idle_cells):
        layer, role = key
        load = load_cells.get(key, 0)
        if role in BACKGROUND_ROLES or major_of(layer) in BACKGROUND_MAJORS:
            background[key] += load
        elif role in TIME_SCALED_ROLES:
            polls = idle_cells.get(key, 0) * seconds["load"] / seconds["idle"]
            request_path[key] += load - polls
            background[key] += polls
        elif role == "SQLite writer" and mode not in ("hello", "group-commit"):
            polls = idle_cells.get(key, 0) * writer_scale
            request_path[key] += load - polls
            background[key] += polls
        else:
            request_path[key] += load
    roles = sorted(set(load_roles) | set(idle_roles), key=lambda r: -load_roles[r])
    role_request = {r: sum(v for (l, ro), v in request_path.items() if ro == r) / requests for r in roles}
    role_background = {r: sum(v for (l, ro), v in background.items() if ro == r) / requests for r in roles}
    total = sum(role_request.values())
    total_background = sum(role_background.values())

    print("bench/profile %s: callgrind, %d requests handled (%s), wrk -t%s -c%s" %
          (mode, requests, source, run["threads"], run["connections"]))
    print("windows: idle %.1f s, load %.1f s (the requests, then a few seconds to settle); %d threads; "
          "startup, seeding and warm-up are outside both windows" % (seconds["idle"], seconds["load"], thread_count))
    print()
    print("Request path: %s instructions per request" % fmt(total))
    print("Background polls in the load window: %s per request (timer-driven: under callgrind a request "
          "lasts some 50 times longer, so this is far above what they cost per request natively; "
          "idle rate %s instructions/s)" % (fmt(total_background), fmt(sum(idle_roles.values()) / seconds["idle"])))
    print()
    print("| thread role | request path, instructions/request | share | background polls, /request (this run) | idle window, instructions/s |")
    print("|---|---:|---:|---:|---:|")
    for r in roles:
        print("| %s | %s | %.1f%% | %s | %s |" % (r, fmt(role_request[r]), 100 * role_request[r] / total if total else 0,
                                                 fmt(role_background[r]), fmt(idle_roles[r] / seconds["idle"])))
    print("| total | %s | 100%% | %s | %s |" % (fmt(total), fmt(total_background), fmt(sum(idle_roles.values()) / seconds["idle"])))
    print()
    shown = [r for r in roles if abs(role_request[r]) >= 0.005 * max(abs(total), 1)]
    layers = collections.defaultdict(dict)
    for (layer, role), v in request_path.items():
        layers[layer][role] = v / requests
    rows = [(layer, sum(c.values()), c) for layer, c in layers.items()]
    table("Request path by layer (innermost named layer; \"major / minor\" = a minor layer inside a major one):",
          rows, total, shown, role_request)
    merged = collections.defaultdict(dict)
    for layer, value, c in rows:
        key = layer[:-len(MALLOC)] if layer.endswith(MALLOC) else layer
        for r, v in c.items():
            merged[key][r] = merged[key].get(r, 0) + v
    table("Request path by layer, each with the malloc/free it called:",
          [(m, sum(c.values()), c) for m, c in merged.items()], total, shown, role_request)
    majors = collections.defaultdict(dict)
    for layer, value, c in rows:
        for r, v in c.items():
            majors[major_of(layer)][r] = majors[major_of(layer)].get(r, 0) + v
    table("Request path by outer layer (a major layer with everything below it; calls/request: calls into "
          "the layer in the load window, background polls included):",
          [(m, sum(c.values()), c) for m, c in majors.items()], total, shown, role_request,
          {k: v / requests for k, v in calls.items()})
    bg = collections.defaultdict(dict)
    for (layer, role), v in background.items():
        bg[major_of(layer)][role] = bg[major_of(layer)].get(role, 0) + v / requests
    bg_roles = [r for r in roles if abs(role_background[r]) >= 0.005 * max(abs(total_background), 1)]
    if total_background:
        table("Background polls in the load window, per request (left out of the request path):",
              [(m, sum(c.values()), c) for m, c in bg.items()], total_background, bg_roles, role_background)
    if load_commits or idle_units:
        print("SQLite writer: idle window %.0f units (%.1f/s); load window %.0f units in %.0f commits "
              "(%.1f units per commit), %.0f of them the requests' (%.2f per request), %.0f polls; "
              "polls subtracted at the idle cost per unit, scaled by %s"
              % (idle_units, idle_units / seconds["idle"], load_units, load_commits,
                 load_units / load_commits if load_commits else 0, request_units,
                 REQUEST_UNITS.get(mode, 0), poll_units, scale_text))
        print()
    result = {"total": total, "roles": role_request, "background": total_background,
              "majors": {m: sum(c.values()) for m, c in majors.items()}, "requests": requests}
    if libpq:
        result["libpq"] = {"%s: %s" % k: v / requests for k, v in libpq.items()}
        for group in ("request path", "background"):
            mine = {name: v for (g, name), v in libpq.items() if g == group}
            if not mine:
                continue
            statements = sum(v for name, v in mine.items() if name.startswith("PQ") and name != "PQprepare")
            print("libpq, %s threads, per request (load window): statements sent %.2f (%s); kernel calls %s. "
                  "A poll() is libpq waiting for the server's answer: a round trip."
                  % (group, statements / requests,
                     ", ".join("%s %.2f" % (k, v / requests) for k, v in sorted(mine.items()) if k.startswith("PQ")),
                     ", ".join("%s %.2f" % (k, v / requests) for k, v in sorted(mine.items()) if not k.startswith("PQ"))))
            if group == "request path":
                result["round trips"] = mine.get("poll()", 0) / requests
                result["statements sent"] = statements / requests
    statements = os.path.join(out, "pg-statements.tsv")
    if os.path.exists(statements):
        lines = [l.rstrip("\n").split("\t") for l in open(statements) if l.strip()]
        body = [l for l in lines[1:] if len(l) >= 3 and l[0].isdigit()]
        calls = sum(int(l[0]) for l in body)
        print("PostgreSQL statements per request (pg_stat_statements over the load window, every database user): %.2f" % (calls / requests))
        for l in body[:12]:
            print("  %.2f  %s" % (int(l[0]) / requests, l[2][:160]))
        result["statements"] = calls / requests
    return result


def cpu_ticks(path):
    if not os.path.exists(path):
        return None
    u, s = open(path).read().split()[:2]
    return int(u), int(s)


def postgres_ticks(path):
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.split(None, 3)
            if len(parts) >= 3:
                rows[parts[0]] = (int(parts[1]), int(parts[2]), parts[3].strip() if len(parts) > 3 else "")
    return rows


def cpu_report(out, run):
    hz = os.sysconf("SC_CLK_TCK")
    seconds = {k: float(v) for k, v in read_kv(os.path.join(out, "seconds.txt")).items()}
    mode = run["mode"]
    if mode == "pgbench-S":
        requests, source = float(run["n"]), "pgbench transactions (-t per client)"
    else:
        requests, source = requests_handled(out, run)
    print("bench/profile cpu %s: %d requests (%s)" % (mode, requests, source))
    print()
    print("| process | user ms/request | system ms/request | CPU ms/request |")
    print("|---|---:|---:|---:|")
    rows = []
    scale = seconds.get("load", 0) / seconds["idle"] if seconds.get("idle") else 0.0
    if mode != "pgbench-S":
        lb, la = cpu_ticks(os.path.join(out, "cpu-load-before.txt")), cpu_ticks(os.path.join(out, "cpu-load-after.txt"))
        ib, ia = cpu_ticks(os.path.join(out, "cpu-idle-before.txt")), cpu_ticks(os.path.join(out, "cpu-idle-after.txt"))
        user = (la[0] - lb[0]) - (ia[0] - ib[0]) * scale
        system = (la[1] - lb[1]) - (ia[1] - ib[1]) * scale
        name = "tesoro (all threads; idle subtracted, scaled x%.2f)" % scale if mode in ROUTE else \
            "bench_reference (all threads; idle subtracted)"
        rows.append((name, user / hz, system / hz))
        wrk_time = os.path.join(out, "wrk-load.time")
        if os.path.exists(wrk_time):
            u, s = [float(x) for x in open(wrk_time).read().split()[:2]]
            rows.append(("wrk -t%s -c%s" % (run["threads"], run["connections"]), u, s))
    else:
        u, s = [float(x) for x in open(os.path.join(out, "pgbench.time")).read().split()[:2]]
        rows.append(("pgbench -S (client)", u, s))
    before = postgres_ticks(os.path.join(out, "postgres-cpu-load-before.txt"))
    after = postgres_ticks(os.path.join(out, "postgres-cpu-load-after.txt"))
    if after:
        backends, others = [0, 0], [0, 0]
        for pid, (u, s, title) in after.items():
            bu, bs, _ = before.get(pid, (0, 0, ""))
            client = re.search(r"postgres:_\w+_\w+_127\.0\.0\.1|postgres:_\w+_\w+_\[local\]|^exited_backends", title)
            target = backends if client else others
            target[0] += u - bu
            target[1] += s - bs
        rows.append(("PostgreSQL backends (client connections; those that exited, from the postmaster's cutime)",
                     backends[0] / hz, backends[1] / hz))
        rows.append(("PostgreSQL other processes (postmaster, WAL writer, checkpointer...)", others[0] / hz, others[1] / hz))
    total = [0.0, 0.0]
    for name, u, s in rows:
        print("| %s | %.4f | %.4f | %.4f |" % (name, 1000 * u / requests, 1000 * s / requests, 1000 * (u + s) / requests))
        total[0] += u
        total[1] += s
    print("| all | %.4f | %.4f | %.4f |" % (1000 * total[0] / requests, 1000 * total[1] / requests,
                                           1000 * sum(total) / requests))
    before, after = os.path.join(out, "metrics-before.txt"), os.path.join(out, "metrics-after.txt")
    units = metric(after, "tesoro_store_commit_batch_units_sum") - metric(before, "tesoro_store_commit_batch_units_sum")
    commits = metric(after, "tesoro_store_commit_batch_units_count") - metric(before, "tesoro_store_commit_batch_units_count")
    if commits:
        print("| (SQLite group commit in the load window: %.0f write units in %.0f commits, %.1f units per commit) | | | |"
              % (units, commits, units / commits))
    cores = int(run.get("nproc", "2"))
    if sum(total):
        print()
        print("Bound on %d cores: %.0f requests/s (cores / all CPU per request); wall time of the load window %.2f s"
              % (cores, cores * requests / sum(total), seconds.get("load", 0)))


def fmt(value):
    return "{:,.0f}".format(value)


def print_layers():
    print("Layers (first match wins; regular expressions on callgrind's function names):")
    for kind, label, regex in LAYERS:
        print("- %s [%s]: %s" % (label, kind, regex))
    print("By caller -> callee:")
    for a, b, kind, label in EDGE_LAYERS:
        print("- %s [%s]: %s -> %s" % (label, kind, a, b))
    print("Thread roles (thread 1 is the main thread, which runs the I/O loop too):")
    for role, regex in ROLES:
        print("- %s: %s" % (role, regex))


def print_functions(out, pattern):
    """The functions whose own instructions make the layers matching `pattern`, per request, in the
    load window (the idle window not subtracted)."""
    run = read_kv(os.path.join(out, "run.txt"))
    windows = read_kv(os.path.join(out, "windows.txt"))
    requests, _ = requests_handled(out, run)
    functions = collections.Counter()
    names = {}
    for path in sorted(glob.glob(os.path.join(out, "callgrind.*.%s-*" % windows["load"]))):
        attribute(parse(path, names), functions)
    regex = re.compile(pattern)
    rows = [(v, layer, f) for (layer, f), v in functions.items() if regex.search(layer)]
    print("Own instructions per request, load window, layers matching %r:" % pattern)
    for v, layer, f in sorted(rows, reverse=True)[:40]:
        print("%10s  %-40.40s  %s" % (fmt(v / requests), layer, f[:150]))


def compare(outs):
    """Request-path instructions per request of several runs of one mode, side by side."""
    import contextlib
    import io
    results = []
    for out in outs:
        run = read_kv(os.path.join(out, "run.txt"))
        with contextlib.redirect_stdout(io.StringIO()):
            result = callgrind_report(out, run)
        results.append((out, result or {}))

    def spread(values):
        values = [v for v in values if v is not None]
        if not values or max(abs(v) for v in values) < 1000:
            return ""  # a spread of next to nothing says nothing
        mean = sum(values) / len(values)
        return "%.1f%%" % (100 * (max(values) - min(values)) / abs(mean)) if mean else ""

    print("| | " + " | ".join(os.path.basename(o.rstrip("/")) for o, _ in results) + " | spread (max-min)/mean |")
    print("|---|" + "---:|" * len(results) + "---:|")
    rows = [("request path, instructions/request", [r.get("total") for _, r in results])]
    roles = sorted({k for _, r in results for k in r.get("roles", {})})
    rows += [("  role: " + k, [r.get("roles", {}).get(k) for _, r in results]) for k in roles]
    majors = collections.Counter()
    for _, r in results:
        for k, v in r.get("majors", {}).items():
            majors[k] += v
    rows += [("  layer: " + k, [r.get("majors", {}).get(k) for _, r in results]) for k, _ in majors.most_common(8)]
    if any("statements" in r for _, r in results):
        rows.append(("PostgreSQL statements/request", [r.get("statements") for _, r in results]))
    for label, values in rows:
        print("| %s | %s | %s |" % (label, " | ".join(fmt(v) if v is not None and abs(v) >= 100 else
                                                     ("%.2f" % v if v is not None else "") for v in values), spread(values)))


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    if len(sys.argv) > 1 and sys.argv[1] == "--layers":
        print_layers()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--compare":
        compare(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--functions":
        print_functions(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ".")
        return
    out = sys.argv[1]
    run = read_kv(os.path.join(out, "run.txt"))
    if run["kind"] == "cpu":
        cpu_report(out, run)
    else:
        callgrind_report(out, run)


if __name__ == "__main__":
    main()
