#!/usr/bin/env python3
"""Idle-connection bench: how many sockets that never send a request can a client hold on
helix-server (default config) before a normal request is affected?

Opens idle TCP connections in steps and, at each step, times one normal `GET /healthz`
(over a new connection). Prints the held count, the request's latency and whether it was
served. The server closes idle connections after `header_timeout_secs` (10 s) and holds at
most `max_connections` (4096, lowered to fit the open-file limit); beyond that, new
connections wait in the backlog for a slot.

Usage: python3 benches/idle-connections.py [HELIX_SERVER] (default target/release/helix-server)
"""
import os, resource, socket, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
server = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target/release/helix-server")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.Popen([server, "--listen", "127.0.0.1:0", "--data-dir", tmp],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = p.stdout.readline()
        host, port = line.strip().rsplit("//", 1)[1].split(":")
        port = int(port)

        def probe():
            t = time.perf_counter()
            try:
                s = socket.create_connection((host, port), timeout=30)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                ok = s.recv(64).startswith(b"HTTP/1.1 200")
                s.close()
            except OSError as e:
                ok = False
            return ok, (time.perf_counter() - t) * 1000

        print(f"server nofile limit raised to the hard limit ({hard}); default config")
        print(f"{'idle held':>10} {'open took ms':>13} {'served':>7} {'latency ms':>11}")
        for target in [0, 1000, 2000, 4000, 4090, 4200, 6000]:
            if target > hard - 200:
                break
            t = time.perf_counter()
            held = [socket.create_connection((host, port)) for _ in range(target)]
            took = (time.perf_counter() - t) * 1000
            ok, ms = probe()
            print(f"{len(held):>10} {took:>13.0f} {str(ok):>7} {ms:>11.1f}")
            for s in held:
                s.close()
            time.sleep(0.5)
        # The server closes idle connections itself.
        held = [socket.create_connection((host, port)) for _ in range(100)]
        t = time.perf_counter()
        closed = 0
        for s in held:
            s.settimeout(30)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except OSError:
                closed += 1
        print(f"{closed} of {len(held)} idle connections closed by the server after "
              f"{time.perf_counter() - t:.1f} s")
    finally:
        p.kill()
