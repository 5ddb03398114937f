#!/usr/bin/env python3
"""A webhook receiver for bench/run: answers every POST 204 on HTTP/1.1 keep-alive and counts.

    webhook_receiver.py PORT STATS-FILE

Each request is counted with the time it arrived (time.time(), the clock of the machine); every
100 ms STATS-FILE gets one JSON object {"count", "first", "last", "ids"} (ids: distinct
webhook-id values), written whole and renamed, so a reader never sees half of it (never per
request: a rename costs more than a delivery). Runs until killed.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, stats_path = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
stats = {"count": 0, "first": None, "last": None}
ids = set()


def save():
    snapshot = dict(stats, ids=len(ids))
    temporary = stats_path + ".tmp"
    with open(temporary, "w") as out:
        json.dump(snapshot, out)
    os.replace(temporary, stats_path)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the dispatcher reuses its connection

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        now = time.time()
        with lock:
            stats["count"] += 1
            stats["first"] = stats["first"] or now
            stats["last"] = now
            ids.add(self.headers.get("webhook-id", ""))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def save_every_100_ms():
    while True:
        with lock:
            save()
        time.sleep(0.1)


threading.Thread(target=save_every_100_ms, daemon=True).start()
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
