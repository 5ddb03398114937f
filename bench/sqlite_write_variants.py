#!/usr/bin/env python3
"""The SQLite write unit of a durable POST /v1/ledger/account_holders, replayed on variants of
Tesoro's schema, to decide schema changes by measurement (docs/scaling.md).

    bench/sqlite_write_variants.py [BINARY] [UNITS]

It makes a fresh data folder with BINARY (default build/tesoro) `init`, copies the real
definitions of account_holders, events and idempotency_keys (tables and indexes) from it, and on
each variant writes UNITS (default 20000) units the way the writer does: a SAVEPOINT per unit,
one account holder row, one event row, one idempotency record (random UUID key, a stored
response of the usual size), 32 units per transaction. synchronous=OFF, so the figure is the CPU
cost of the unit (process time per unit, Python's own overhead included and equal in every
variant). Variants:

  sequencer        events written without a position, then positioned by the sequencer's UPDATE
                   after each commit (what Tesoro did on SQLite before positions on insert)
  current          events take their position as they are written (Tesoro today)
  holders_norowid  current + account_holders WITHOUT ROWID
  idem_norowid     current + idempotency_keys WITHOUT ROWID
  both_norowid     current + both WITHOUT ROWID

Each variant runs twice, interleaved; the report prints both figures.
"""
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid

binary = sys.argv[1] if len(sys.argv) > 1 else "build/tesoro"
units = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
work = tempfile.mkdtemp(prefix="tesoro-variants-")
subprocess.run([binary, "init", "--data", os.path.join(work, "init"), "--json"], check=True,
               stdout=subprocess.DEVNULL)
source = sqlite3.connect(os.path.join(work, "init", "tesoro.db"))
ddl = {}
for table in ("account_holders", "events", "idempotency_keys"):
    ddl[table] = [row[0] for row in source.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
        "ORDER BY type DESC", (table,))]  # the table first, then its indexes
source.close()


def schema(variant):
    statements = []
    for table, parts in ddl.items():
        for sql in parts:
            sql = re.sub(r'CREATE TABLE IF NOT EXISTS "?(\w+)"?', r"CREATE TABLE \1", sql)
            norowid = (table == "account_holders" and variant in ("holders_norowid", "both_norowid")) or \
                      (table == "idempotency_keys" and variant in ("idem_norowid", "both_norowid"))
            if sql.startswith("CREATE TABLE") and norowid:
                sql += " WITHOUT ROWID"
            statements.append(sql)
    return statements


def run(variant):
    path = os.path.join(work, variant + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    for sql in schema(variant):
        db.execute(sql)
    tenant = "ten_" + "a" * 22
    address, person, body, data = "x" * 120, "y" * 180, "z" * 627, "d" * 89
    started = time.process_time()
    for i in range(units):
        if i % 32 == 0:
            db.execute("BEGIN IMMEDIATE")
        db.execute("SAVEPOINT unit")
        at = "2026-11-25T21:%02d:%02d.%06dZ" % (i // 60000 % 60, i // 1000 % 60, i % 1000000)
        ordered = "%012d%s" % (i, os.urandom(5).hex())  # ids whose leading characters are time
        db.execute("INSERT INTO account_holders (tenant_id, id, external_id, address, person, "
                   "email, phone_number, metadata, state, state_reason, state_reason_detail, "
                   "type, inserted_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (tenant, "acch_" + ordered, "ext-%d-%s" % (i, os.urandom(4).hex()), address,
                    person, "a@b.co", None, '{"k":"v"}', "active", None, None, "individual",
                    at, at))
        if variant == "sequencer":
            db.execute("INSERT INTO events (tenant_id, id, type, data, inserted_at) "
                       "VALUES (?,?,?,?,?)", (tenant, "evt_" + ordered, "account_holder.created",
                                              data, at))
        else:
            last = db.execute("SELECT COALESCE(MAX(position), 0) FROM events").fetchone()[0]
            db.execute("INSERT INTO events (tenant_id, id, type, data, inserted_at, position) "
                       "VALUES (?,?,?,?,?,?)", (tenant, "evt_" + ordered,
                                                "account_holder.created", data, at, last + 1))
        db.execute("INSERT INTO idempotency_keys (tenant_id, idempotency_key, request_hash, "
                   "status, content_type, body, inserted_at, expires_at) VALUES (?,?,?,?,?,?,?,?)",
                   (tenant, str(uuid.uuid4()), "h" * 64, 201, "application/json", body, at, i))
        db.execute("RELEASE unit")
        if i % 32 == 31 or i == units - 1:
            db.execute("COMMIT")
            if variant == "sequencer":
                db.execute("BEGIN IMMEDIATE")
                last = db.execute("SELECT COALESCE(MAX(position), 0) FROM events").fetchone()[0]
                db.execute("UPDATE events SET position = ? + ranked.n FROM (SELECT tenant_id, id, "
                           "ROW_NUMBER() OVER (ORDER BY emitted_seq) AS n FROM events WHERE "
                           "position IS NULL ORDER BY emitted_seq LIMIT 1000) AS ranked WHERE "
                           "events.tenant_id = ranked.tenant_id AND events.id = ranked.id",
                           (last,))
                db.execute("COMMIT")
    seconds = time.process_time() - started
    size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    db.close()
    return seconds / units * 1e6, size


variants = ["sequencer", "current", "holders_norowid", "idem_norowid", "both_norowid"]
results = {v: [] for v in variants}
for _ in range(2):
    for variant in variants:
        results[variant].append(run(variant))
print("SQLite %s, %d units per variant, CPU microseconds per unit (two runs), database bytes"
      % (sqlite3.sqlite_version, units))
for variant in variants:
    (a, size), (b, _) = results[variant]
    print("%-16s %7.1f %7.1f   %d" % (variant, a, b, size))
