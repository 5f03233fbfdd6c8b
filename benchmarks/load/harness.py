#!/usr/bin/env python3
"""The load harness: every section of docs/benchmarks.md's load part, measured in one run into one directory.

Run through benchmarks/load/run.sh (it installs the tools, builds, then calls this); `run.sh --help` lists the options.
Each section writes rows to SECTION.tsv in the results directory (one row per figure: the client's result, the
server's CPU time per request split into user and kernel time, the client's CPU time per request and how busy its
core was, system calls per request, steal); report.py turns the directory into Markdown and charts, and with
--publish splices them into docs/benchmarks.md.
"""
import argparse
import csv
import json
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure  # noqa: E402
import servers as registry  # noqa: E402
from measure import Unavailable  # noqa: E402
from servers import Launch, SERVERS  # noqa: E402

ROOT = registry.ROOT

COLUMNS = ["section", "round", "placement", "server", "loops", "scenario", "connections", "client", "load_percent", "target_rate",
           "requests_per_second", "p50_us", "p99_us", "p999_us", "max_us", "requests", "errors", "seconds",
           "server_user_us", "server_system_us", "server_busy", "client_us", "client_busy", "syscalls_per_request",
           "steal_percent", "cpu_busy", "bytes_per_second", "allocated_bytes_per_request", "resident_before",
           "resident_after", "resident_per_connection", "opened", "reused_percent", "cipher", "note"]


GRPC_SAY_HELLO = "/falconet.samples.Greeter/SayHello"  # the sample's unary gRPC method (samples/AspNetCore)


@dataclass(frozen=True)
class Shape:
    name: str
    label: str
    path: str
    depth: int = 1              # requests per write (wrk) or concurrent streams per connection (h2load)
    protocol: str = "http1"     # http1, https, h2c
    client: str = "wrk"         # wrk, h2load, grpc (connections are HTTP/2 connections, depth the calls in flight on each)
    grpc: bool = False          # h2load: POST the sample's gRPC HelloRequest (measure.GRPC_HELLO) instead of a GET


SHAPES = {s.name: s for s in [
    Shape("plaintext16", "/plaintext, 16 pipelined", "/plaintext", 16),
    Shape("plaintext1", "/plaintext, no pipelining", "/plaintext"),
    Shape("json1", "/json, no pipelining", "/json"),
    Shape("json16", "/json, 16 pipelined", "/json", 16),
    Shape("https-plaintext1", "HTTPS /plaintext, no pipelining", "/plaintext", 1, "https"),
    Shape("https-plaintext16", "HTTPS /plaintext, 16 pipelined", "/plaintext", 16, "https"),
    Shape("https-json1", "HTTPS /json, no pipelining", "/json", 1, "https"),
    Shape("https-json16", "HTTPS /json, 16 pipelined", "/json", 16, "https"),
    Shape("h2-plaintext-m1", "HTTP/2 /plaintext, 1 stream per connection", "/plaintext", 1, "h2c", "h2load"),
    Shape("h2-plaintext-m16", "HTTP/2 /plaintext, 16 streams per connection", "/plaintext", 16, "h2c", "h2load"),
    Shape("h2-json-m1", "HTTP/2 /json, 1 stream per connection", "/json", 1, "h2c", "h2load"),
    Shape("h2-json-m16", "HTTP/2 /json, 16 streams per connection", "/json", 16, "h2c", "h2load"),
    # The sample's greeter, SayHello, with Grpc.Net.Client (benchmarks/GrpcLoad); requests are calls.
    Shape("grpc-unary-m16", "gRPC unary calls (h2c), 16 in flight per connection", "", 16, "h2c", "grpc"),
    Shape("grpc-unary-tls-m16", "gRPC unary calls (TLS), 16 in flight per connection", "", 16, "https", "grpc"),
    # The same calls from h2load (a gRPC-framed HelloRequest POSTed to SayHello), whose cost per call is a small fraction
    # of the .NET client's, so the server, not the client, is the limit.
    Shape("grpc-h2load-m16", "gRPC unary calls (h2c, h2load), 16 in flight per connection", GRPC_SAY_HELLO, 16, "h2c", "h2load", True),
    Shape("grpc-h2load-tls-m16", "gRPC unary calls (TLS, h2load), 16 in flight per connection", GRPC_SAY_HELLO, 16, "https", "h2load", True),
]}

# The sections in the order a full run measures them, with what each runs by default (record) and in a smoke run.
RECORD = {
    "throughput": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-platform", "kestrel-platform-inline",
                                "kestrel-app", "kestrel-app-inline", "nginx", "c-epoll", "c-uring", "falconet-iouring"],
                       cells=[("plaintext16", [256, 1024, 4096, 16384]), ("plaintext1", [256]), ("json1", [16, 64, 256, 512])]),
    "latency": dict(servers=["falconet-libuv", "nginx", "kestrel-platform-inline", "kestrel-platform", "falconet-iouring"],
                    shape="plaintext1", connections=256, loads=[25, 50, 75, 90]),
    "scaling": dict(servers=["falconet-libuv", "nginx", "kestrel-platform", "kestrel-platform-inline", "falconet-iouring"],
                    cells=[("plaintext16", [1024]), ("json1", [256])]),
    "churn": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-platform", "kestrel-platform-inline",
                           "kestrel-app-inline", "nginx", "c-epoll", "falconet-iouring"], connections=64),
    "handshakes": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-app", "kestrel-app-inline", "nginx", "falconet-iouring"],
                       clients=4),
    "idle": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-platform", "kestrel-app", "nginx", "c-epoll", "falconet-iouring"],
                 levels=[10000, 50000], sources=4),
    "tls": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-app", "kestrel-app-inline", "kestrel-app-batch", "nginx",
                         "falconet-iouring"],
                cells=[("https-plaintext1", [64, 256]), ("https-plaintext16", [256])],
                payload_servers=["payload-iouring", "payload-libuv", "payload-sockets", "nginx"], sizes=[1024, 16384, 65536, 1048576]),
    # HTTP/1.1, HTTPS, HTTP/2 (h2load) and gRPC unary calls (a .NET client, 4 connections of 16 calls in flight: 64 calls,
    # as the other rows' 64 connections).
    "aspnetcore": dict(servers=["aspnetcore-falconet", "aspnetcore-kestrel", "aspnetcore-kestrel-inline", "aspnetcore-kestrel-batch"],
                       cells=[("plaintext1", [64]), ("plaintext16", [64]), ("json1", [64]), ("json16", [64]),
                              ("https-plaintext1", [64]), ("https-json16", [64]),
                              ("h2-plaintext-m1", [64]), ("h2-json-m16", [64]),
                              ("grpc-unary-m16", [4]), ("grpc-unary-tls-m16", [4]),
                              ("grpc-h2load-m16", [4]), ("grpc-h2load-tls-m16", [4])]),
    "h2": dict(servers=["falconet-libuv", "falconet-sockets", "kestrel-app", "kestrel-app-inline", "kestrel-app-batch", "nginx",
                        "falconet-iouring"],
               cells=[("h2-plaintext-m1", [64]), ("h2-plaintext-m16", [64]), ("h2-json-m1", [64]), ("h2-json-m16", [64])]),
}
# Measured on request (--sections variants), not in a publish run by default: Falconet's transport and scheduling
# choices against each other, pinned and unpinned.
OPTIONAL = {
    # The TLS section's response-size part alone (its settings are the tls section's).
    "tlsbytes": dict(servers=RECORD["tls"]["payload_servers"]),
    "variants": dict(servers=["falconet-libuv", "falconet-libuv-handoff", "falconet-libuv-threadpool", "falconet-sockets",
                              "falconet-sockets-nobatch", "falconet-sockets-iothreads", "falconet-sockets-inline",
                              "falconet-sockets-inline-iothreads"],
                     cells=[("plaintext16", [256]), ("plaintext1", [256])]),
}
SECTIONS = list(RECORD)
ALL_SECTIONS = SECTIONS + list(OPTIONAL)
QUICK = {
    "throughput": dict(cells=[("plaintext16", [256, 4096]), ("plaintext1", [64]), ("json1", [64])]),
    "latency": dict(connections=64, loads=[50, 90]),
    "scaling": dict(cells=[("plaintext16", [256]), ("json1", [64])]),
    "idle": dict(levels=[2000], sources=2),
    "tls": dict(cells=[("https-plaintext1", [64]), ("https-plaintext16", [64])], sizes=[16384, 1048576]),
    "aspnetcore": dict(cells=[("plaintext1", [64]), ("json16", [64]), ("https-plaintext1", [64]), ("h2-plaintext-m16", [64]),
                              ("grpc-unary-m16", [4])]),
    "h2": dict(cells=[("h2-plaintext-m1", [64]), ("h2-json-m16", [64])]),
}
# Rounds of each section in a record run; where Falconet and a peer come within CLOSE of each other, rounds are added
# for those two until there are CLOSE_ROUNDS.
RECORD_ROUNDS = {"throughput": 3, "latency": 3, "scaling": 3, "churn": 3, "handshakes": 3, "idle": 1, "tls": 3,
                 "aspnetcore": 3, "h2": 3, "variants": 2,
                 "tlsbytes": 2}
PAYLOAD_ROUNDS = 2  # the TLS section's response-size part
CLOSE, CLOSE_ROUNDS = 0.10, 5
WRK_CONNECTIONS = 1024  # the most connections a wrk run opens; loadgen's closed loop measures above
SUBJECTS = ("falconet-libuv", "aspnetcore-falconet")  # the defaults whose ratios the pages report


class Harness:
    def __init__(self, args):
        self.args = args
        self.out = Path(args.out).resolve()
        (self.out / "logs").mkdir(parents=True, exist_ok=True)
        self.port = args.port
        self.quick = args.quick
        self.duration = args.duration or (1 if args.quick else 5)
        self.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 10)
        self.descriptors = measure.raise_descriptor_limit()
        self.syscalls = measure.SyscallCounter()
        self.skipped = {}
        self.certificate = None
        self.files = {}

    # ---- settings ---------------------------------------------------------------------------------------------

    def settings(self, section):
        s = dict(RECORD.get(section) or OPTIONAL[section])
        if self.quick:
            s.update(QUICK.get(section, {}))
        if self.args.servers:
            s["servers"] = self.args.servers
        if getattr(self.args, "sizes", None) and "sizes" in s:
            s["sizes"] = self.args.sizes
        if self.args.shapes and "cells" in s:
            s["cells"] = [(shape, counts) for shape, counts in s["cells"] if shape in self.args.shapes]
        if self.args.connections and "cells" in s:
            s["cells"] = [(shape, self.args.connections) for shape, _ in s["cells"]]
        return s

    def rounds(self, section):
        if self.args.rounds:
            return self.args.rounds
        return 1 if self.quick else RECORD_ROUNDS[section]

    def close_rounds(self, section):
        return 0 if self.quick or self.args.rounds else CLOSE_ROUNDS

    def available(self, names, protocols=("http1",)):
        chosen = []
        for name in names:
            server = SERVERS.get(name)
            if server is None:
                raise SystemExit(f"unknown server {name} (known: {', '.join(SERVERS)})")
            reason = server.unavailable()
            if reason is None and not set(protocols) & server.protocols:
                reason = f"serves none of {', '.join(protocols)}"
            if reason:
                if name not in self.skipped:
                    print(f"  skipping {name}: {reason}", flush=True)
                self.skipped[name] = reason
                continue
            chosen.append(server)
        return chosen

    # ---- records ----------------------------------------------------------------------------------------------

    def record(self, section, row):
        path = self.out / f"{section}.tsv"
        new = not path.exists()
        with path.open("a", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS, delimiter="\t", extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerow({k: _cell(row.get(k)) for k in COLUMNS})

    def note(self, section, text):
        with (self.out / "notes.tsv").open("a") as f:
            f.write(f"{section}\t{text}\n")

    def log_path(self, *parts):
        return self.out / "logs" / ("-".join(str(p) for p in parts if p not in (None, "")) + ".txt")

    def make_certificate(self):
        if self.certificate is None:
            directory = self.out / "tls"
            directory.mkdir(exist_ok=True)
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-keyout", str(directory / "key.pem"), "-out", str(directory / "cert.pem"), "-days", "2",
                            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                           check=True, capture_output=True)
            self.certificate = (directory / "cert.pem", directory / "key.pem")
        return self.certificate

    def launch(self, place, loops=None, https=False, h2c=False, max_connections=4096, payload_directory=None):
        certificate, key = self.make_certificate() if https else (None, None)
        return Launch(port=self.port, cores=place.server_cores, loops=loops,
                      https_port=self.port + 1 if https else None, h2c_port=self.port + 2 if h2c else None,
                      certificate=certificate, key=key, max_connections=max_connections, work=self.out, descriptors=self.descriptors,
                      payload_directory=payload_directory)

    def start(self, server, launch, place, tag):
        for port in (launch.port, launch.https_port, launch.h2c_port):
            # The previous server may still be going away (the kernel tears an io_uring ring down after its process).
            deadline = time.monotonic() + 5
            while port and measure.port_open(port) and time.monotonic() < deadline:
                time.sleep(0.1)
            if port and measure.port_open(port):
                raise SystemExit(f"something already listens on port {port}: stop it or pick another --port")
        return measure.Running(server, launch, place, self.log_path(tag, server.name, "server"))

    def url(self, shape, launch):
        if shape.protocol == "https":
            return f"https://127.0.0.1:{launch.https_port}{shape.path}"
        if shape.protocol == "h2c":
            return f"http://127.0.0.1:{launch.h2c_port}{shape.path}"
        return f"http://127.0.0.1:{launch.port}{shape.path}"

    def client_name(self, shape, connections):
        """wrk up to WRK_CONNECTIONS; above, loadgen's closed loop, which opens its connections before the clock starts
        (wrk opens them all at once inside its measured time, and a burst past the server's accept queue costs SYN
        retransmissions of a second and more)."""
        if shape.client == "wrk" and connections > WRK_CONNECTIONS and shape.protocol == "http1":
            return "loadgen"
        return shape.client

    def client(self, shape, place, connections, seconds, launch, running=None):
        url = self.url(shape, launch)
        name = self.client_name(shape, connections)
        if name == "grpc":
            # A window with warm-up for the figure; none for the short system-call count (its calls are all counted).
            return lambda: measure.grpc(place, connections, shape.depth, seconds, url, running, warmup=2 if running else 0)
        if name == "h2load":
            return lambda: measure.h2load(place, connections, shape.depth, seconds, url, warmup=1, grpc=shape.grpc)
        if name == "loadgen":
            # No warm-up inside the figure (the server is warm): its CPU time then covers only the requests counted, and
            # the accepts of the connections opened first, a few per cent at 16,384.
            return lambda: measure.loadgen(place, "closed", launch.port, seconds, warmup=0, connections=connections,
                                           path=shape.path, sources=(connections - 1) // 20000 + 2, depth=shape.depth)
        return lambda: measure.wrk(place, connections, seconds, url, shape.depth)

    # ---- the common loop: start a server, warm it, measure cells, stop it ----------------------------------------

    def measure_cells(self, section, server, place, round_number, cells, loops=None, count_syscalls=False):
        shapes = [SHAPES[s] for s, _ in cells]
        protocols = {s.protocol for s in shapes}
        cells = [(SHAPES[s], c) for s, counts in cells for c in counts]
        usable = [(shape, c) for shape, c in cells if shape.protocol in server.protocols]
        for shape, c in cells:
            if (shape, c) not in usable:
                self.record(section, dict(section=section, round=round_number, placement=place.name, server=server.name,
                                          loops=loops, scenario=shape.name, connections=c,
                                          note=f"not measured: {server.label} serves no {shape.protocol}"))
        if not usable:
            return
        most = max(c for _, c in usable)
        launch = self.launch(place, loops, https="https" in protocols and "https" in server.protocols,
                             h2c="h2c" in protocols and "h2c" in server.protocols, max_connections=most)
        tag = f"{section}-{round_number}-{place.name}" + (f"-x{loops}" if loops else "")
        try:
            running = self.start(server, launch, place, tag)
        except Unavailable as reason:
            print(f"  {reason}", flush=True)
            for shape, c in usable:
                self.record(section, dict(section=section, round=round_number, placement=place.name, server=server.name,
                                          loops=loops, scenario=shape.name, connections=c, note=f"did not start: {reason}"))
            return
        try:
            self.warm(running, place, usable, launch)
            for shape, c in usable:
                row = dict(section=section, round=round_number, placement=place.name, server=server.name, loops=loops,
                           scenario=shape.name, connections=c, client=self.client_name(shape, c))
                if c + 256 > self.descriptors:
                    row["note"] = f"not reached: the descriptor limit is {self.descriptors} (ulimit -n)"
                    self.record(section, row)
                    continue
                if not running.alive():
                    row["note"] = "not measured: the server had exited"
                    self.record(section, row)
                    continue
                before = self.aspnetcore_stats(server, launch)
                window = 1 if self.quick else 2
                result = measure.figure(
                    running, place, self.client(shape, place, c, self.duration, launch, running),
                    self.syscalls if count_syscalls else None,
                    self.client(shape, place, c, window, launch),
                    self.log_path(tag, server.name, shape.name, f"c{c}", "syscalls"))
                after = self.aspnetcore_stats(server, launch)
                if before and after and after[0] > before[0]:
                    row["allocated_bytes_per_request"] = (after[1] - before[1]) / (after[0] - before[0])
                self.log_path(tag, server.name, shape.name, f"c{c}").write_text(result.pop("output", ""))
                row.update(result, seconds=self.duration)
                if result.get("connect_errors") and result["connect_errors"] >= c // 2:
                    row["note"] = f"not reached: {result['connect_errors']} connects failed"
                elif not result.get("server_alive", True):
                    row["note"] = "the server exited during the run"
                self.record(section, row)
                self.progress(section, round_number, place, server, shape, c, row, loops)
                if c > WRK_CONNECTIONS:
                    settle(running)
        finally:
            output = running.stop()
        stats = measure.falconet_stats(output)
        if stats:
            self.record(section + "-stats", dict(section=section, round=round_number, placement=place.name,
                                                 server=server.name, loops=loops, note=" ".join(f"{k}={v}" for k, v in stats.items())))

    def warm(self, running, place, cells, launch):
        """Warm-up per server start, split over its shapes, so JIT-compiled servers run tier-1 code when measured."""
        shapes = list(dict.fromkeys(shape for shape, _ in cells))
        each = max(1, round(self.warmup / len(shapes)))
        for shape in shapes:
            counts = sorted(c for s, c in cells if s == shape)
            self.client(shape, place, min(counts[len(counts) // 2], 1024), each, launch)()

    def aspnetcore_stats(self, server, launch):
        """(requests, allocated bytes) from the ASP.NET Core sample's /stats endpoint, or None."""
        if not server.family.startswith("aspnetcore"):
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{launch.port}/stats", timeout=5) as response:
                fields = dict(p.split("=") for p in response.read().decode().split())
            return int(fields["requests"]), int(fields["allocated_bytes"])
        except (OSError, ValueError, KeyError):
            return None

    def progress(self, section, round_number, place, server, shape, connections, row, loops=None):
        def f(key, digits=1):
            value = row.get(key)
            return "-" if value is None else f"{value:,.{digits}f}"
        saturated = " CLIENT SATURATED" if (row.get("client_busy") or 0) >= 0.95 else ""
        print(f"  {section} r{round_number} {place.name:8} {server.name + (f' x{loops}' if loops else ''):28} "
              f"{shape.name:18} c{connections:<6} {f('requests_per_second', 0):>12} req/s  server "
              f"{f('server_user_us', 2)}+{f('server_system_us', 2)} us/req  client {f('client_us', 2)} us/req "
              f"({(row.get('client_busy') or 0) * 100:.0f}%)  syscalls {f('syscalls_per_request', 2)}"
              f"{'  ' + str(row.get('errors')) + ' errors' if row.get('errors') else ''}{saturated}", flush=True)

    # ---- sections ---------------------------------------------------------------------------------------------

    def rotated(self, items, round_number):
        k = (round_number - 1) % max(1, len(items))
        return items[k:] + items[:k]

    def grid(self, section, place, loops_of=None):
        s = self.settings(section)
        protocols = {SHAPES[name].protocol for name, _ in s["cells"]}
        chosen = self.available(s["servers"], protocols)
        rounds = self.rounds(section)
        for r in range(1, rounds + 1):
            for server in self.rotated(chosen, r):
                for loops in (loops_of(server) if loops_of else [None]):
                    self.measure_cells(section, server, place, r, s["cells"], loops, count_syscalls=r == 1)
        if loops_of is None:  # the scaling runs compare a server with itself; no rounds are added there
            self.top_up(section, place, chosen, s["cells"], rounds)

    def top_up(self, section, place, chosen, cells, rounds):
        """Adds rounds, up to CLOSE_ROUNDS, for each cell where a Falconet default and a peer are within CLOSE."""
        extra = self.close_rounds(section) - rounds
        if extra <= 0:
            return
        rows = read_rows(self.out / f"{section}.tsv")
        medians = {}
        for row in rows:
            if row["placement"] == place.name and row["requests_per_second"] and not row["note"]:
                medians.setdefault((row["scenario"], row["connections"], row["server"]), []).append(float(row["requests_per_second"]))
        close = {}
        for (scenario, connections, name), values in medians.items():
            if name not in SUBJECTS:
                continue
            subject = statistics.median(values)
            for (s2, c2, peer), peer_values in medians.items():
                if (s2, c2) != (scenario, connections) or peer == name or peer.startswith("falconet"):
                    continue
                if abs(subject / statistics.median(peer_values) - 1) <= CLOSE:
                    close.setdefault(name, set()).add((scenario, int(connections)))
                    close.setdefault(peer, set()).add((scenario, int(connections)))
        if not close:
            return
        print(f"  {section}: {extra} more round(s) where Falconet and a peer are within {CLOSE:.0%}: "
              + "; ".join(f"{n} {sorted(c)}" for n, c in close.items()), flush=True)
        by_name = {s.name: s for s in chosen}
        for r in range(rounds + 1, rounds + extra + 1):
            for name in self.rotated(sorted(close), r):
                cells_of = {}
                for scenario, connections in sorted(close[name]):
                    cells_of.setdefault(scenario, []).append(connections)
                self.measure_cells(section, by_name[name], place, r, list(cells_of.items()))

    def throughput(self):
        self.grid("throughput", measure.placement("pinned"))

    def variants(self):
        for name in ("pinned", "unpinned"):
            self.grid("variants", measure.placement(name))

    def scaling(self):
        cores = len(os.sched_getaffinity(0))
        counts = sorted({1, cores})
        self.grid("scaling", measure.placement("unpinned"), lambda server: counts)

    def h2(self):
        self.grid("h2", measure.placement("pinned"))

    def aspnetcore(self):
        """The sample on both servers, gRPC unary calls (the grpc shapes: benchmarks/GrpcLoad) among its cells."""
        self.grid("aspnetcore", measure.placement("pinned"))

    def starts(self, section, chosen, place, launch_of, rounds=None, tag=""):
        """Each round, each server in turn (the order rotated each round): started with launch_of(server), handed to
        the caller, stopped when the caller moves on. A server that does not start is said and skipped."""
        for r in range(1, (rounds or self.rounds(section)) + 1):
            for server in self.rotated(chosen, r):
                launch = launch_of(server)
                try:
                    running = self.start(server, launch, place, f"{section}{tag}-{r}")
                except Unavailable as reason:
                    print(f"  {reason}", flush=True)
                    continue
                try:
                    yield r, server, launch, running
                finally:
                    running.stop()

    def tls(self):
        self.grid("tls", measure.placement("pinned"))
        self.tlsbytes()

    def tlsbytes(self):
        """The TLS section's response-size part (run alone with --sections tlsbytes): bodies of each size over HTTP and
        HTTPS, server pinned to one core, wrk on the other, the cipher suite each server negotiated with the client noted."""
        place = measure.placement("pinned")
        s = self.settings("tls")
        names = [n for n in (self.args.servers or []) if n.startswith("payload-") or n == "nginx"] or s["payload_servers"]
        chosen = self.available(names, ("https",))
        payload = self.out / "payload"
        payload.mkdir(exist_ok=True)
        for size in s["sizes"]:
            (payload / str(size)).write_bytes(os.urandom(size))
        rounds = self.args.rounds or min(self.rounds("tls"), PAYLOAD_ROUNDS)
        for r, server, launch, running in self.starts("tls", chosen, place, lambda _: self.launch(place, https=True, payload_directory=payload),
                                                       rounds, "-bytes"):
            # Every size over both schemes, so that each body path (copied behind the head, or encrypted from the
            # handler's memory) is compiled at its final tier before it is measured; one core warms up slowly.
            each = max(1, round(self.warmup / (2 * len(s["sizes"]))))
            for size in s["sizes"]:
                for scheme, port in (("https", launch.https_port), ("http", launch.port)):
                    measure.wrk(place, 64, each, f"{scheme}://127.0.0.1:{port}/bytes/{size}", latency=False)
            cipher = measure.negotiated_cipher(launch.https_port)
            for size in s["sizes"]:
                for scheme, port in (("http", launch.port), ("https", launch.https_port)):
                    url = f"{scheme}://127.0.0.1:{port}/bytes/{size}"
                    result = measure.figure(running, place, lambda: measure.wrk(place, 64, self.duration, url, latency=False))
                    result.pop("output", None)
                    self.record("tls-bytes", dict(section="tls-bytes", round=r, placement=place.name, server=server.name,
                                                  scenario=f"{scheme}-{size}", connections=64, client="wrk", seconds=self.duration,
                                                  cipher=cipher if scheme == "https" else "", **result))
                    print(f"  tls-bytes r{r} {server.name:20} {scheme:5} {size:>8} B  "
                          f"{result['bytes_per_second'] / 1e9:.3f} GB/s  {result['requests_per_second']:.0f} req/s  "
                          f"server {(result['server_user_us'] or 0) + (result['server_system_us'] or 0):.1f} µs/req  "
                          f"client {result['client_busy'] * 100:.0f}%  {cipher if scheme == 'https' else ''}", flush=True)

    def latency(self):
        place = measure.placement("pinned")
        s = self.settings("latency")
        shape, connections = SHAPES[s["shape"]], s["connections"]
        chosen = self.available(s["servers"])
        maxima = self.known_maxima(place, shape.name, connections)
        for r, server, launch, running in self.starts("latency", chosen, place, lambda _: self.launch(place, max_connections=connections)):
            self.warm(running, place, [(shape, connections)], launch)
            base = dict(section="latency", round=r, placement=place.name, server=server.name, scenario=shape.name,
                        connections=connections, seconds=self.duration)
            if server.name not in maxima:
                result = measure.figure(running, place, self.client(shape, place, connections, self.duration, launch))
                result.pop("output", None)
                maxima[server.name] = result["requests_per_second"]
                self.record("latency", dict(base, load_percent=100, client="wrk", note="closed loop (wrk): the maximum", **result))
            for load in s["loads"]:
                rate = maxima[server.name] * load / 100
                histogram = self.log_path("latency", r, server.name, f"{load}pct", "histogram")
                result = measure.figure(running, place, lambda: measure.loadgen(
                    place, "rate", launch.port, self.duration, warmup=1 if self.quick else 2,
                    connections=connections, rate=rate, path=shape.path, histogram=histogram))
                self.log_path("latency", r, server.name, f"{load}pct").write_text(result.pop("output", ""))
                row = dict(base, load_percent=load, target_rate=rate, client="loadgen", **result)
                if result.get("unfinished"):
                    row["note"] = f"{result['unfinished']} requests unanswered or unsent at the end (counted with their wait)"
                self.record("latency", row)
                print(f"  latency r{r} {server.name:26} {load:3}% of {maxima[server.name]:,.0f} = {rate:,.0f}/s: "
                      f"p50 {result['p50_us']} p99 {result['p99_us']} p99.9 {result['p999_us']} max {result['max_us']} us, "
                      f"client {result['client_busy'] * 100:.0f}%", flush=True)

    def known_maxima(self, place, scenario, connections):
        """The throughput section's median requests/s for the same shape, placement and connection count, if it ran."""
        values = {}
        for row in read_rows(self.out / "throughput.tsv"):
            if (row["placement"], row["scenario"], row["connections"]) == (place.name, scenario, str(connections)) \
                    and row["requests_per_second"] and not row["note"]:
                values.setdefault(row["server"], []).append(float(row["requests_per_second"]))
        return {name: statistics.median(v) for name, v in values.items()}

    def churn(self):
        place = measure.placement("pinned")
        s = self.settings("churn")
        chosen = self.available(s["servers"])
        slots = s["connections"]
        for r, server, launch, running in self.starts("churn", chosen, place, lambda _: self.launch(place, max_connections=slots * 4)):
            measure.loadgen(place, "churn", launch.port, max(1, self.warmup // 2), connections=slots)
            result = measure.figure(running, place, lambda: measure.loadgen(
                place, "churn", launch.port, self.duration, warmup=0, connections=slots, sources=4),
                self.syscalls if r == 1 else None,
                lambda: measure.loadgen(place, "churn", launch.port, 1 if self.quick else 2, connections=slots, sources=4),
                self.log_path("churn", r, server.name, "syscalls"))
            self.log_path("churn", r, server.name).write_text(result.pop("output", ""))
            row = dict(section="churn", round=r, placement=place.name, server=server.name, scenario="churn",
                       connections=slots, client="loadgen", seconds=self.duration, **result)
            stats = measure.falconet_stats(running.stop())
            if stats:
                row["allocated_bytes_per_request"] = stats.get("allocated_bytes_per_request")
            self.record("churn", row)
            print(f"  churn r{r} {server.name:26} {result['requests_per_second']:,.0f} connections/s  "
                  f"server {row.get('server_user_us') or 0:.1f}+{row.get('server_system_us') or 0:.1f} us/conn  "
                  f"client {result['client_busy'] * 100:.0f}%  syscalls/conn {row.get('syscalls_per_request')}  "
                  f"alloc/conn {row.get('allocated_bytes_per_request', '-')}", flush=True)

    def handshakes(self):
        place = measure.placement("pinned")
        s = self.settings("handshakes")
        chosen = self.available(s["servers"], ("https",))
        for r, server, launch, running in self.starts("handshakes", chosen, place, lambda _: self.launch(place, https=True)):
            for _, arguments in HANDSHAKES:  # warm-up: every handshake path once
                s_time(place, launch.https_port, 1, arguments, s["clients"])
            for kind, arguments in HANDSHAKES:
                result = measure.figure(running, place, lambda: s_time(place, launch.https_port, self.duration, arguments, s["clients"]))
                self.log_path("handshakes", r, server.name, kind).write_text(result.pop("output", ""))
                row = dict(section="handshakes", round=r, placement=place.name, server=server.name, scenario=kind,
                           connections=s["clients"], client="openssl s_time", seconds=self.duration, **result)
                if "-reuse" in arguments and (result.get("reused_percent") or 0) < 90:
                    row["note"] = f"only {result.get('reused_percent', 0):.0f} % of the handshakes resumed a session"
                self.record("handshakes", row)
                print(f"  handshakes r{r} {server.name:24} {kind:14} {result['requests_per_second']:,.0f}/s  "
                      f"server {(row.get('server_user_us') or 0) + (row.get('server_system_us') or 0):.0f} us each  "
                      f"client {result['client_busy'] * 100:.0f}%  resumed {result.get('reused_percent', 0):.0f}%", flush=True)

    def idle(self):
        place = measure.placement("pinned")
        s = self.settings("idle")
        chosen = self.available(s["servers"])
        for level in s["levels"]:
            if level + 1024 > self.descriptors:
                for server in chosen:
                    self.record("idle", dict(section="idle", round=1, placement=place.name, server=server.name, scenario="idle",
                                             connections=level, note=f"not reached: the descriptor limit is {self.descriptors} (ulimit -n)"))
                continue
            for r, server, launch, running in self.starts("idle", chosen, place, lambda _: self.launch(place, max_connections=level + 64),
                                                           tag=f"-{level}"):
                row = dict(section="idle", round=r, placement=place.name, server=server.name, scenario="idle",
                           connections=level, client="loadgen")
                row.update(self.hold_idle(running, place, launch, level, s["sources"]))
                self.record("idle", row)
                print(f"  idle r{r} {server.name:26} {row.get('opened')}/{level} connections: resident "
                      f"{row.get('resident_before', 0) / 2**20:.1f} -> {row.get('resident_after', 0) / 2**20:.1f} MiB, "
                      f"{row.get('resident_per_connection') or 0:,.0f} B per connection {row.get('note', '')}", flush=True)

    def hold_idle(self, running, place, launch, level, sources):
        measure.wrk(place, 64, max(1, self.warmup // 2), f"http://127.0.0.1:{launch.port}/plaintext", latency=False)
        time.sleep(1)
        before = running.resident()
        argv = place.client_prefix + [str(measure.LOADGEN), "idle", "--port", str(launch.port), "--connections", str(level),
                                      "--sources", str(sources)]
        errors = self.log_path("idle", running.server.name, level, "loadgen")
        client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(errors, "w"), text=True)
        # Opening is bounded: each connect and first answer waits at most 8 s in loadgen, the whole at most 10 minutes.
        ready = client.stdout.readline() if select.select([client.stdout], [], [], 600)[0] else "no ready line within 600 s"
        fields = dict(p.split("=", 1) for p in ready.split() if "=" in p)
        opened = int(fields.get("connections", 0))
        time.sleep(2)  # the server finishes its work on the last connections
        after = running.resident()
        client.terminate()
        held, _ = client.communicate(timeout=60)
        closed = dict(p.split("=", 1) for p in held.split() if "=" in p).get("closed_by_server", "?")
        row = dict(opened=opened, resident_before=before, resident_after=after,
                   resident_per_connection=(after - before) / opened if opened else None,
                   seconds=fields.get("seconds_to_open"))
        notes = []
        if opened < level:
            why = errors.read_text().strip().splitlines() or [ready.strip() or "no output"]
            notes.append(f"not reached: {opened} of {level} opened ({why[-1]})")
        if closed not in ("0", "?"):
            notes.append(f"{closed} closed by the server while held")
        if notes:
            row["note"] = "; ".join(notes)
        return row


HANDSHAKES = [
    # (scenario, s_time arguments). openssl s_time resumes TLS 1.2 sessions; with TLS 1.3 it never reads the session
    # ticket the server sends after the handshake, so it cannot resume, and only full TLS 1.3 handshakes are measured.
    ("full-tls13", ["-new"]),
    ("full-tls12", ["-new", "-tls1_2"]),
    ("resumed-tls12", ["-reuse", "-tls1_2"]),
]


def profile(h, name):
    """A perf profile of one server, pinned, answering /plaintext (--depth requests per write, 1 unless given): perf record
    on the cpu-clock software event (hardware counters are not available in every VM) of the server's processes while wrk
    runs, then profile.py's split of the time (kernel, runtime, libraries, the server's own code)."""
    place = measure.placement("pinned")
    server = h.available([name])
    if not server:
        raise SystemExit(f"{name} cannot run here")
    connections = (h.args.connections or [64])[0]
    seconds = h.args.duration or 20
    depth = h.args.depth
    launch = h.launch(place, max_connections=connections)
    # The runtime writes perf map files so that perf names JIT-compiled frames.
    launch.environment = {"DOTNET_PerfMapEnabled": "1", "DOTNET_EnableWriteXorExecute": "0"}
    server = server[0]
    running = h.start(server, launch, place, "profile")
    try:
        url = f"http://127.0.0.1:{launch.port}/plaintext"
        measure.wrk(place, connections, h.warmup, url, depth, latency=False)
        data = h.out / "perf.data"
        recorder = subprocess.Popen(["perf", "record", "-F", "4000", "-g", "-e", "cpu-clock", "-p", ",".join(map(str, running.pids())),
                                     "-o", str(data), "--", "sleep", str(seconds)],
                                    stdout=subprocess.DEVNULL, stderr=open(h.log_path("perf-record"), "w"))
        result = measure.wrk(place, connections, seconds, url, depth)
        recorder.wait()
    finally:
        running.stop()
    reports = []
    for kind, options in (("self", ["--no-children", "--sort", "dso,sym"]), ("children", ["--children", "--sort", "sym"]),
                          ("threads", ["--no-children", "--sort", "comm"])):
        path = h.out / f"perf-{kind}.txt"
        with path.open("w") as f:
            subprocess.run(["perf", "report", "-i", str(data), *options, "-n", "--stdio", "-g", "none", "--percent-limit", "0"],
                           stdout=f, stderr=subprocess.DEVNULL)
        reports.append(str(path))
    text = subprocess.run([sys.executable, str(ROOT / "benchmarks/load/profile.py"), *reports, name], capture_output=True, text=True).stdout
    text += (f"\nwrk during the profile: {result['requests']:,} requests ({result['requests_per_second']:,.0f}/s), {connections} connections, "
             f"{depth} per write, {seconds} s; a frame's ns per request is its samples × 250,000 over the requests. "
             f"Command: `{h.args.command}`\n")
    (h.out / "profile.md").write_text(text)
    print(text)
    print(f"Profile: {h.out / 'profile.md'} (perf report -i {data} for the call graphs)")


def s_time(place, port, seconds, arguments, clients):
    """`clients` openssl s_time processes in parallel for `seconds`: handshakes per second, the clients' CPU time, and
    the share of handshakes that resumed a session."""
    argv = place.client_prefix + ["openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-time", str(int(seconds)), *arguments]
    before = measure.ChildTimes()
    started = time.monotonic()
    processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL) for _ in range(clients)]
    outputs = [p.communicate(timeout=seconds + 60)[0].decode(errors="replace") for p in processes]
    wall = time.monotonic() - started
    user, system = measure.ChildTimes().since(before)
    count = reused = 0
    for output in outputs:
        for line in output.splitlines():
            match = re.match(r"(\d+) connections in [\d.]+s;", line)
            if match:
                count += int(match.group(1))
            elif re.fullmatch(r"[*rt]+", line.strip() or "-"):
                reused += line.count("r")  # s_time prints one mark per connection: 'r' when it resumed a session
    return {"output": "\n----\n".join(outputs), "requests": count, "requests_per_second": count / seconds if seconds else 0,
            "wall": wall, "client_user": user, "client_system": system,
            "reused_percent": 100 * reused / count if count else 0, "errors": 0 if count else 1}


def settle(running, idle=0.05, limit=15.0):
    """Waits until the server is idle again (under `idle` of a core over half a second, at most `limit` seconds): after
    thousands of connections close, a server may still be tearing them down when the next figure starts."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and running.alive():
        before = sum(running.cpu())
        time.sleep(0.5)
        if (sum(running.cpu()) - before) / measure.HZ / 0.5 < idle:
            return


def read_rows(path):
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:.0f}"
    return str(value)


def git(*args):
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine(command):
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), "?")

    def version(argv, pattern=None):
        try:
            text = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            text = (text.stdout + text.stderr).strip()
        except (OSError, subprocess.TimeoutExpired):
            return "none"
        match = re.search(pattern, text) if pattern else None
        return match.group(1) if match else text.splitlines()[0] if text else "?"

    commit = git("rev-parse", "--short=10", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    platform = registry.platform_benchmarks()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "commit": commit + ("+dirty" if dirty else ""),
        "cpu": cpu,
        "cores": str(len(os.sched_getaffinity(0))),
        "kernel": " ".join(os.uname()[2:3]),
        "os": version(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "dotnet": version(["dotnet", "--version"]),
        "wrk": version(["wrk", "-v"], r"wrk (\S+)"),
        "nginx": version([registry.nginx_binary(), "-v"], r"nginx/(\S+)"),
        "h2load": version(["h2load", "--version"], r"nghttp2/(\S+)"),
        "openssl": version(["openssl", "version"], r"OpenSSL (\S+)"),
        "gcc": version(["gcc", "-dumpfullversion"]),
        "platform_benchmarks": str(platform) if platform.exists() else "absent",
        "load_before": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
        "somaxconn": Path("/proc/sys/net/core/somaxconn").read_text().strip(),
    }


def estimate(h, sections):
    """Minutes a run of these sections takes, from the settings (server start and stop about 4 s each)."""
    total = 0.0
    d, w = h.duration, h.warmup
    for section in sections:
        s = h.settings(section)
        n = len([x for x in s.get("servers", []) if x in SERVERS])
        rounds = h.rounds(section)
        if "cells" in s:
            figures = sum(len(counts) for _, counts in s["cells"])
            loops = 2 if section == "scaling" else 1
            per_start = figures * (d + 1.5) + w + 4 + (figures * 3 if rounds else 0) / rounds
            total += n * loops * rounds * per_start
            if h.close_rounds(section) > rounds:
                total += (h.close_rounds(section) - rounds) * 3 * (figures / 2 * (d + 1.5) + w + 4)
        if section == "variants":
            total += n * rounds * per_start
        if section in ("tls", "tlsbytes"):
            s = h.settings("tls")
            total += len(s["payload_servers"]) * (h.args.rounds or min(rounds, PAYLOAD_ROUNDS)) * (len(s["sizes"]) * 2 * (d + 1.5) + w / 2 + 4)
        if section == "latency":
            total += n * rounds * (len(s["loads"]) * (d + 3) + w + 4) + n * (d + 1.5)
        if section == "churn":
            total += n * rounds * (d + w / 2 + 8)
        if section == "handshakes":
            total += n * rounds * (len(HANDSHAKES) * (d + 2) + 4)
        if section == "idle":
            total += n * rounds * len(s["levels"]) * (w / 2 + 12)
    return total / 60


def main():
    # A stopped run stops its server too: SystemExit unwinds through the finally blocks that stop it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(prog="benchmarks/load/run.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", nargs="+", default=None,
                        help=f"sections to run, in order [{' '.join(SECTIONS)}; also: {' '.join(OPTIONAL)}]")
    parser.add_argument("--servers", nargs="+", default=None, help="servers instead of each section's own list")
    parser.add_argument("--shapes", nargs="+", default=None, choices=sorted(SHAPES),
                        help="only these of a grid section's cells (e.g. grpc-h2load-m16)")
    parser.add_argument("--connections", type=int, nargs="+", default=None, help="connection counts for every shape")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="response sizes in bytes of the TLS section's response-size part")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per section (no rounds added where servers are close)")
    parser.add_argument("--duration", type=int, default=None, help="seconds per figure [5; 1 with --quick]")
    parser.add_argument("--warmup", type=int, default=None, help="warm-up seconds per server start [10; 1 with --quick]")
    parser.add_argument("--port", type=int, default=18090, help="first of the three ports servers listen on [18090]")
    parser.add_argument("--out", default=None, help="results directory [artifacts/load/<UTC time>]")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 s figures, 1 round, fewer cells (figures mean nothing)")
    parser.add_argument("--profile", default=None, metavar="SERVER", help="instead of the sections: a perf profile of SERVER")
    parser.add_argument("--depth", type=int, default=1, help="with --profile: requests per write (pipelining) [1]")
    parser.add_argument("--plan", action="store_true", help="print the sections, servers and the estimated duration, run nothing")
    parser.add_argument("--command", default="benchmarks/load/run.sh", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for name in args.sections or []:
        if name not in ALL_SECTIONS:
            parser.error(f"unknown section {name} (sections: {' '.join(ALL_SECTIONS)})")
    sections = args.sections or SECTIONS
    if args.out is None:
        args.out = str(ROOT / "artifacts/load" / (datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%SZ") + ("-quick" if args.quick else "")))
    h = Harness(args)
    if args.profile:
        profile(h, args.profile)
        return
    minutes = estimate(h, sections)
    print(f"sections: {' '.join(sections)}; about {minutes:.0f} minutes; results in {h.out}", flush=True)
    if args.plan:
        for section in sections:
            s = h.settings(section)
            print(f"  {section}: {h.rounds(section)} round(s); servers {' '.join(s.get('servers', []))}; "
                  + "; ".join(f"{k} {v}" for k, v in s.items() if k != "servers"))
        shutil.rmtree(h.out, ignore_errors=True)
        return
    meta = machine(args.command)
    meta.update(duration=str(h.duration), warmup=str(h.warmup), quick=str(h.quick).lower(), sections=" ".join(sections),
                descriptors=str(h.descriptors), syscalls=h.syscalls.method or "none", estimate_minutes=f"{minutes:.0f}")
    before = measure.Cpus()
    started = time.monotonic()
    for section in sections:
        print(f"== {section}", flush=True)
        section_started = time.monotonic()
        getattr(h, section)()
        h.note(section, f"took {(time.monotonic() - section_started) / 60:.1f} minutes")
    _, steal = measure.Cpus().since(before)
    meta.update(load_after=" ".join(Path("/proc/loadavg").read_text().split()[:3]), steal_percent=f"{steal * 100:.2f}",
                minutes=f"{(time.monotonic() - started) / 60:.1f}",
                skipped=json.dumps(h.skipped))
    (h.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"done in {(time.monotonic() - started) / 60:.1f} minutes: {h.out}", flush=True)


if __name__ == "__main__":
    main()
