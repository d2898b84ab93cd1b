"""What the loopback model stand-ins (codex/fake_responses.py, copilot/fake_model.py,
gemini/fake_gemini.py) share, and how a harness starts one.

Server side: `Script`, the script and texts a stand-in answers from; `Handler`, a quiet HTTP/1.1 request handler that logs every request as one JSON
line (method, path, the headers named in LOG_HEADERS, body size, JSON body, and what the
subclass adds), reads JSON bodies and answers JSON or server-sent events; `arguments()`, the
command-line options every stand-in takes; `serve()`, which listens on a free loopback port
and writes that port to --port-file once it accepts connections.

Harness side: `FakeServer`, a stand-in in a subprocess, with its port.

Python 3 standard library only.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def new_id(prefix, n=16):
    return prefix + uuid.uuid4().hex[:n]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    LOG_HEADERS = ()           # request headers worth logging (lower case)
    LOG_TIME = False           # a "time" field in each log line
    REQUEST_ID_HEADER = None   # a response header with a fresh request id, e.g. x-request-id
    JSON_TYPE = "application/json"
    SSE_EOL = "\n"             # line ending of the event stream

    def log_message(self, fmt, *args):  # quiet: the JSONL log is the record
        pass

    def record(self, body, raw_len, **extra):
        """One log line for this request; `extra` fields that are None are left out."""
        entry = {"time": time.time()} if self.LOG_TIME else {}
        entry.update({
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()
                        if k.lower() in self.LOG_HEADERS},
            "bytes": raw_len,
        })
        entry.update((k, v) for k, v in extra.items() if v is not None)
        entry["body"] = body
        with LOCK:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def read_body(self):
        """(the JSON body or None, its size); an unreadable body as {"_unparsed": ...}."""
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding", "").lower() == "zstd":
            return {"_unparsed": "zstd body"}, len(raw)
        try:
            return (json.loads(raw) if raw else None), len(raw)
        except ValueError:
            return {"_unparsed": raw[:2000].decode("utf-8", "replace")}, len(raw)

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", self.JSON_TYPE)
        if self.REQUEST_ID_HEADER:
            self.send_header(self.REQUEST_ID_HEADER, new_id("req_e2e_"))
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        """A 200 event stream of (event name or None, JSON data) pairs; closes the connection."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        if self.REQUEST_ID_HEADER:
            self.send_header(self.REQUEST_ID_HEADER, new_id("req_e2e_"))
        self.send_header("connection", "close")
        self.end_headers()
        eol = self.SSE_EOL
        for event, data in events:
            head = f"event: {event}{eol}" if event else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}{eol}{eol}".encode())
        self.wfile.flush()
        self.close_connection = True


class Script:
    """What a stand-in answers from: the --script file ({"steps": [...], "sub_steps": [...]};
    the form of a step is the stand-in's), --main-marker and --final-text, and --sub-marker
    and --sub-text where the stand-in takes them."""

    def __init__(self, args):
        with open(args.script, encoding="utf-8") as f:
            doc = json.load(f)
        self.steps = doc["steps"]
        self.sub_steps = doc.get("sub_steps") or []
        self.main_marker = args.main_marker
        self.final_text = args.final_text
        self.sub_marker = getattr(args, "sub_marker", None)
        self.sub_text = getattr(args, "sub_text", None)


def arguments(doc):
    """An argument parser with the options every stand-in takes: --script, --log,
    --port-file, --main-marker, --final-text."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--main-marker", default="HELIX-E2E-MAIN")
    p.add_argument("--final-text", default="All done.")
    return p


def serve(handler, log_path, port_file, **attrs):
    """Serves `handler` on a free loopback port until SIGTERM/SIGINT; `attrs` become
    attributes of the server (the handler reads them as self.server.<name>)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.log_path = log_path
    for k, v in attrs.items():
        setattr(server, k, v)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


class FakeServer:
    """A stand-in (`script`, one of the fake_*.py) in a subprocess: started with --log,
    --port-file and `args`, its stderr in <log>.stderr; `port` once it listens."""

    def __init__(self, script, log, port_file, args=(), stop_wait=5):
        self.log = log
        self.stop_wait = stop_wait
        self.proc = subprocess.Popen(
            [sys.executable, script, "--log", log, "--port-file", port_file, *args],
            stdout=subprocess.DEVNULL, stderr=open(log + ".stderr", "w"))
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_wait)
            except subprocess.TimeoutExpired:
                self.proc.kill()
