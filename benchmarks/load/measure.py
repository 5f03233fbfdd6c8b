"""What one figure of the load harness measures, and how: server processes and their CPU time (user and kernel apart)
and memory, the client's own CPU time (from wait4, so it is the client process's, whole), the machine's per-CPU busy
time and steal (/proc/stat), system calls (perf's raw_syscalls tracepoint, else strace), and the clients: wrk,
h2load, openssl s_time, benchmarks/load/loadgen.c and benchmarks/GrpcLoad (gRPC unary calls with Grpc.Net.Client).
"""
import json
import os
import re
import resource
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")
ROOT = Path(__file__).resolve().parents[2]
LOADGEN = ROOT / "artifacts/load/loadgen"
GRPC_LOAD = ROOT / "benchmarks/GrpcLoad/bin/Release/net10.0/Falconet.Benchmarks.GrpcLoad.dll"
# The request body of h2load's gRPC calls: one length-prefixed message (not compressed, 6 bytes), the sample's
# HelloRequest { name = "load" } as GrpcLoad sends it (field 1, length-delimited).
GRPC_HELLO = ROOT / "artifacts/load/grpc-hello.bin"
GRPC_HELLO_BYTES = bytes([0, 0, 0, 0, 6, 0x0A, 4]) + b"load"

# The request TechEmpower's wrk command sends (its Host is its server's name, so the request bytes are the same).
TECHEMPOWER_HEADERS = [
    "Host: tfb-server",
    "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7",
    "Connection: keep-alive",
]


class Unavailable(Exception):
    """A server or tool that cannot run here; the message says why."""


# ---- descriptors -----------------------------------------------------------------------------------------------

def raise_descriptor_limit(wanted=1 << 20):
    """Raises this process's descriptor limit (children inherit it): the hard limit too where allowed (root). Returns
    the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        cap = int(Path("/proc/sys/fs/nr_open").read_text())
    except OSError:
        cap = hard
    target = min(wanted, cap)
    for limit in ((target, target), (min(target, hard), hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limit)
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---- processes -------------------------------------------------------------------------------------------------

def children_of(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def process_tree(pid):
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo += children_of(p)
    return pids


def cpu_ticks(pids):
    """(user, system) clock ticks of the processes: every thread, ended ones included."""
    user = system = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        user += int(fields[11])
        system += int(fields[12])
    return user, system


def resident_bytes(pids):
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class Cpus:
    """A /proc/stat snapshot: per CPU (busy, total) ticks, and the machine's steal and total."""

    def __init__(self):
        self.cpus = {}
        for line in Path("/proc/stat").read_text().splitlines():
            if not line.startswith("cpu"):
                break
            name, *values = line.split()
            v = [int(x) for x in values[:8]] + [0] * max(0, 8 - len(values))
            user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
            total = user + nice + system + idle + iowait + irq + softirq + steal
            self.cpus[name] = (total - idle - iowait - steal, total, steal)

    def since(self, earlier):
        """Per CPU busy fraction and the machine's steal share over the interval."""
        busy = {}
        for name, (b, t, _) in self.cpus.items():
            b0, t0, _ = earlier.cpus.get(name, (0, 0, 0))
            busy[name] = (b - b0) / (t - t0) if t > t0 else 0.0
        _, t, s = self.cpus["cpu"]
        _, t0, s0 = earlier.cpus["cpu"]
        return busy, ((s - s0) / (t - t0) if t > t0 else 0.0)


@dataclass
class Placement:
    name: str                 # pinned, unpinned
    server_cpus: list         # [] for every CPU
    client_cpus: list

    def prefix(self, cpus):
        return ["taskset", "-c", ",".join(str(c) for c in cpus)] if cpus else []

    @property
    def server_prefix(self):
        return self.prefix(self.server_cpus)

    @property
    def client_prefix(self):
        return self.prefix(self.client_cpus)

    @property
    def server_cores(self):
        return len(self.server_cpus) or os.cpu_count()


def placement(name):
    cpus = sorted(os.sched_getaffinity(0))
    if name == "pinned" and len(cpus) >= 2:
        return Placement("pinned", [cpus[0]], [cpus[1]])
    return Placement("unpinned", [], [])


def port_open(port, host="127.0.0.1"):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


class Running:
    """A started server: its processes, CPU time, memory, and its graceful stop."""

    def __init__(self, server, launch, place, log_path):
        self.server, self.launch, self.place, self.log_path = server, launch, place, log_path
        argv, environment, cwd = server.command(launch)
        env = dict(os.environ, **environment, **launch.environment)
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(place.server_prefix + argv, env=env, cwd=cwd, stdout=self.log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.process.pid
        ports = [p for p in (launch.port, launch.https_port, launch.h2c_port) if p]
        deadline = time.monotonic() + 30
        while not all(port_open(p) for p in ports):
            if self.process.poll() is not None:
                self.log.close()
                tail = Path(log_path).read_text().strip().splitlines()[-3:]
                raise Unavailable(f"{server.name} exited at start: " + " / ".join(tail))
            if time.monotonic() > deadline:
                self.stop()
                raise Unavailable(f"{server.name} did not listen on {ports} within 30 s")
            time.sleep(0.1)

    def pids(self):
        return process_tree(self.pid)

    def alive(self):
        return self.process.poll() is None

    def cpu(self):
        return cpu_ticks(self.pids())

    def resident(self):
        return resident_bytes(self.pids())

    def stop(self):
        """SIGTERM, up to 20 s for the graceful stop (Falconet prints its --stats lines then), SIGKILL after that."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                print(f"  {self.server.name} did not stop within 20 s of SIGTERM: killed", flush=True)
                os.killpg(self.pid, signal.SIGKILL)
                self.process.wait()
        if not self.log.closed:
            self.log.close()
        return Path(self.log_path).read_text(errors="replace")


def falconet_stats(output):
    """The sample's --stats line: requests, allocated bytes per request, collections, connections per loop."""
    for line in output.splitlines():
        if line.startswith("requests="):
            return dict(part.split("=", 1) for part in line.split() if "=" in part)
    return {}


# ---- clients ---------------------------------------------------------------------------------------------------

def run_client(argv, timeout):
    """Runs a client to its end; returns its output (stdout and stderr) and the wall seconds it took."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    output = b""
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    wall = time.monotonic() - started
    return output.decode(errors="replace"), wall


class ChildTimes:
    """CPU time of the harness's ended children (RUSAGE_CHILDREN), around a client run: the clients are the only
    children that end between two readings, servers are stopped outside them."""

    def __init__(self):
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.user, self.system = r.ru_utime, r.ru_stime

    def since(self, earlier):
        return self.user - earlier.user, self.system - earlier.system


def microseconds(text):
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        return 0.0
    value, unit = float(match.group(1)), match.group(2)
    return value * {"us": 1, "ms": 1e3, "s": 1e6, "m": 6e7}[unit]


def negotiated_cipher(port):
    """The TLS version and cipher suite a server on 127.0.0.1:`port` negotiates with OpenSSL's default client offer (wrk's)."""
    try:
        done = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-brief"], input="", capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = done.stdout + done.stderr
    version = re.search(r"Protocol version: (\S+)", text)
    cipher = re.search(r"Ciphersuite: (\S+)", text)
    return f"{version.group(1)} {cipher.group(1)}" if version and cipher else "?"


def wrk(place, connections, seconds, url, depth=1, latency=True, headers=TECHEMPOWER_HEADERS, timeout_seconds=8):
    """One wrk run (one thread). Returns the figure's client-side fields."""
    argv = place.client_prefix + ["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", f"--timeout", f"{timeout_seconds}"]
    if latency:
        argv.append("--latency")
    for h in headers:
        argv += ["-H", h]
    if depth > 1:
        argv += ["-s", str(ROOT / "benchmarks/load/pipeline.lua"), url, "--", str(depth)]
    else:
        argv.append(url)
    before = ChildTimes()
    output, wall = run_client(argv, seconds + 60)
    user, system = ChildTimes().since(before)
    result = {"output": output, "client_user": user, "client_system": system, "wall": wall}
    result["requests_per_second"] = float(_search(r"Requests/sec:\s+([\d.]+)", output) or 0)
    result["requests"] = int(_search(r"(\d+) requests in", output) or 0)
    errors = 0
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    if socket_errors:
        errors += sum(int(x) for x in socket_errors.groups())
    errors += int(_search(r"Non-2xx or 3xx responses: (\d+)", output) or 0)
    result["errors"] = errors
    result["connect_errors"] = int(socket_errors.group(1)) if socket_errors else 0
    for name, key in (("50%", "p50_us"), ("99%", "p99_us")):
        value = _search(rf"^\s+{re.escape(name)}\s+(\S+)", output, re.M)
        result[key] = microseconds(value) if value and depth == 1 else None
    transfer = _search(r"Transfer/sec:\s+(\S+)", output)
    result["bytes_per_second"] = _bytes(transfer) if transfer else 0
    return result


def h2load(place, connections, streams, seconds, url, warmup=1, grpc=False):
    """h2load's GETs, or with `grpc` unary gRPC calls: POSTs of GRPC_HELLO with gRPC's headers. h2load counts a 2xx as a
    success; a gRPC error is a 200 with a non-zero grpc-status trailer, so check a call of the same shape with nghttp
    (its trailers) before trusting the figure."""
    argv = place.client_prefix + ["h2load", "-t1", f"-c{connections}", f"-m{streams}", f"-D{int(seconds)}", f"--warm-up-time={int(warmup)}"]
    if grpc:
        GRPC_HELLO.parent.mkdir(parents=True, exist_ok=True)
        GRPC_HELLO.write_bytes(GRPC_HELLO_BYTES)
        argv += ["-d", str(GRPC_HELLO), "-H", "content-type: application/grpc", "-H", "te: trailers", url]
    else:
        argv += ["-H", "Accept: text/plain,application/json", url]
    before = ChildTimes()
    output, wall = run_client(argv, seconds + warmup + 60)
    user, system = ChildTimes().since(before)
    result = {"output": output, "client_user": user, "client_system": system, "wall": wall}
    result["requests_per_second"] = float(_search(r"finished in [\d.]+\w*, ([\d.]+) req/s", output) or 0)
    done = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", output)
    result["requests"] = int(done.group(4)) if done else 0
    result["errors"] = int(done.group(5)) + int(done.group(6)) if done else 0
    status = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", output)
    if status:
        result["errors"] += int(status.group(3)) + int(status.group(4))
    # h2load's request-time line: min, max, mean, sd (microseconds or milliseconds).
    line = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", output)
    result["max_us"] = microseconds(line.group(2)) if line else None
    result["p50_us"] = result["p99_us"] = None
    return result


def loadgen(place, mode, port, seconds, warmup=0, connections=64, rate=None, path="/plaintext", sources=1, histogram=None, depth=1):
    argv = place.client_prefix + [str(LOADGEN), mode, "--port", str(port), "--path", path, "--connections", str(connections),
                                  "--duration", str(seconds), "--warmup", str(warmup), "--sources", str(sources), "--depth", str(depth)]
    if rate:
        argv += ["--rate", f"{rate:.0f}"]
    if histogram:
        argv += ["--histogram", str(histogram)]
    before = ChildTimes()
    output, wall = run_client(argv, seconds + warmup + 120)
    user, system = ChildTimes().since(before)
    result = {"output": output, "client_user": user, "client_system": system, "wall": wall}
    line = next((l for l in output.splitlines() if l.startswith("mode=")), "")
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    result["requests"] = int(fields.get("requests", 0))
    result["requests_per_second"] = float(fields.get("rate", 0))
    for key in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us"):
        result[key] = float(fields[key]) if key in fields else None
    result["errors"] = int(fields.get("errors", 0)) + int(fields.get("non2xx", 0)) + int(fields.get("connect_errors", 0))
    result["unfinished"] = int(fields.get("unfinished", 0))
    if not line:
        result["errors"] = result["errors"] or 1
    return result


def grpc(place, connections, streams, seconds, url, running=None, warmup=2):
    """gRPC unary calls per second (benchmarks/GrpcLoad, Grpc.Net.Client): `connections` HTTP/2 connections with `streams`
    calls in flight on each, over h2c or TLS as `url` says. The client warms up, then announces the edges of its
    measured window on its own lines; with `running`, the server's CPU time and /proc/stat are read at those edges
    (result["window"], which figure() uses), so the figure covers exactly the calls counted and none of the client's
    start-up or warm-up. The client's CPU time is its own over the same window."""
    argv = place.client_prefix + ["dotnet", str(GRPC_LOAD), "--url", url, "--connections", str(connections),
                                  "--streams", str(streams), "--duration", str(int(seconds)), "--warmup", str(int(warmup))]
    if url.startswith("https:"):
        argv.append("--insecure")  # the run's self-signed certificate
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    killer = threading.Timer(seconds + warmup + 60, process.kill)
    killer.start()
    lines, edges = [], {}
    try:
        for line in process.stdout:
            lines.append(line)
            if running is not None and line.strip() in ("measuring", "measured"):
                edges[line.strip()] = (running.cpu(), Cpus())
        process.wait()
    finally:
        killer.cancel()
    output = "".join(lines)
    last = next((l for l in reversed(lines) if l.startswith("calls=")), "")
    fields = dict(part.split("=", 1) for part in last.split() if "=" in part)
    result = {"output": output, "client_user": float(fields.get("client_user", 0)), "client_system": float(fields.get("client_system", 0)),
              "wall": float(fields.get("seconds", 0)) or seconds, "requests": int(fields.get("calls", 0)),
              "requests_per_second": float(fields.get("calls_per_second", 0)),
              "errors": int(fields.get("errors", 0)) if last else 1, "p50_us": None, "p99_us": None}
    if "measuring" in edges and "measured" in edges:
        result["window"] = (edges["measuring"], edges["measured"])
    return result


def _search(pattern, text, flags=0):
    match = re.search(pattern, text, flags)
    return match.group(1) if match else None


def _bytes(text):
    match = re.fullmatch(r"([\d.]+)(B|KB|MB|GB)?", text)
    if not match:
        return 0.0
    return float(match.group(1)) * {None: 1, "B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}[match.group(2)]


# ---- system calls ----------------------------------------------------------------------------------------------

class SyscallCounter:
    """Counts the system calls of processes while a client runs: perf stat on the raw_syscalls:sys_enter tracepoint
    where it works, else strace -c -f (which slows the server: its count is right, the run's speed is not)."""

    def __init__(self):
        self.method = None
        try:
            probe = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "true"],
                                   capture_output=True, text=True, timeout=30)
            if probe.returncode == 0 and re.search(r"^\d+,", probe.stderr, re.M):
                self.method = "perf stat -e raw_syscalls:sys_enter"
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.method is None:
            try:
                subprocess.run(["strace", "-V"], capture_output=True, timeout=10, check=True)
                self.method = "strace -c -f"
            except (OSError, subprocess.SubprocessError):
                self.method = None

    def start(self, pids, output):
        if self.method is None:
            return None
        if self.method.startswith("perf"):
            argv = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", str(output), "-p", ",".join(map(str, pids))]
        else:
            argv = ["strace", "-c", "-f", "-o", str(output)] + sum((["-p", str(p)] for p in pids), [])
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # attached before the client starts
        return process

    def stop(self, process, output):
        """The number of system calls counted, or None."""
        if process is None:
            return None
        process.send_signal(signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            return None
        try:
            text = Path(output).read_text()
        except OSError:
            return None
        if self.method.startswith("perf"):
            match = re.search(r"^(\d+),", text, re.M)
            return int(match.group(1)) if match else None
        match = re.search(r"^\s*100\.00\s+\S+\s+\S+\s+(\d+)", text, re.M) or re.search(r"-+\n\s*\S+\s+\S+\s+\S+\s+(\d+)\s+\d*\s*total", text)
        return int(match.group(1)) if match else None


# ---- one figure ------------------------------------------------------------------------------------------------

def figure(running, place, client, syscalls=None, syscall_client=None, syscall_file=None):
    """Runs `client` (a callable returning a client result) against `running`, and adds the server's and the machine's
    side: CPU per request (user, system), the server's cores busy, the client's CPU per request and its core's busy
    share, steal. With `syscalls`, a second, separate client run (syscall_client) is counted for system calls, so
    the counting does not slow the measured run."""
    cpu_before = running.cpu()
    stat_before = Cpus()
    result = client()
    stat_after = Cpus()
    cpu_after = running.cpu()
    window = result.pop("window", None)
    if window:  # the client announced its measured window (grpc): the server's side is read at its edges
        (cpu_before, stat_before), (cpu_after, stat_after) = window
    n = result.get("requests") or 0
    wall = result.get("wall") or 1
    user = (cpu_after[0] - cpu_before[0]) / HZ
    system = (cpu_after[1] - cpu_before[1]) / HZ
    busy, steal = stat_after.since(stat_before)
    result["server_user_us"] = user * 1e6 / n if n else None
    result["server_system_us"] = system * 1e6 / n if n else None
    result["server_busy"] = (user + system) / wall
    client_cpu = result["client_user"] + result["client_system"]
    result["client_us"] = client_cpu * 1e6 / n if n else None
    cores = len(place.client_cpus) or 1  # the clients run one thread
    result["client_busy"] = client_cpu / wall / cores
    result["steal_percent"] = steal * 100
    result["cpu_busy"] = " ".join(f"{name}={value * 100:.0f}%" for name, value in sorted(busy.items()) if name != "cpu")
    result["server_alive"] = running.alive()
    if syscalls is not None and syscalls.method and syscall_client is not None and running.alive():
        process = syscalls.start(running.pids(), syscall_file)
        counted = syscall_client()
        calls = syscalls.stop(process, syscall_file)
        m = counted.get("requests") or 0
        result["syscalls_per_request"] = calls / m if calls and m else None
    return result
