"""The servers the load harness knows: how each one starts, on which protocols, and where its parts come from.

A server is one entry of SERVERS. Adding one (a new Falconet transport, another peer) is one call to `add` with its
command line; a server whose parts are missing is skipped with the reason `unavailable` returns, so a section keeps
running without it. Every command is built for a `Launch`: the ports it listens on, how many cores it gets (pinned to
one, or every core), how many event loops or workers it should run, and the connection limit it must allow.
"""
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll"
KESTREL_APP = ROOT / "benchmarks/Peers/KestrelApp/bin/Release/net10.0/KestrelApp.dll"
ASPNETCORE_SAMPLE = ROOT / "samples/AspNetCore/bin/Release/net10.0/Falconet.Samples.AspNetCore.dll"
ASPNETCORE_KESTREL = ROOT / "benchmarks/Peers/AspNetCoreKestrel/bin/Release/net10.0/AspNetCoreKestrel.dll"
PAYLOAD = ROOT / "benchmarks/PayloadServer/bin/Release/net10.0/Falconet.Benchmarks.PayloadServer.dll"
C_EPOLL = ROOT / "artifacts/load/c-epoll"
C_URING = ROOT / "artifacts/load/c-uring"
INLINE = {"DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS": "1"}
# Runs a peer's every thread under SCHED_BATCH from its start, as Falconet's BatchScheduling does for its own threads
# where completions change threads (docs/runtime-io.md, "Threads that wake each other").
BATCH = ["chrt", "-b", "0"]

# TechEmpower's Kestrel entry is not part of this repository: the harness takes a build of it from here.
PLATFORM_VARIABLE = "FALCONET_PLATFORM_BENCHMARKS"
PLATFORM_DEFAULT = ROOT / "artifacts/peers/PlatformBenchmarks/PlatformBenchmarks.dll"


def platform_benchmarks():
    return Path(os.environ.get(PLATFORM_VARIABLE) or PLATFORM_DEFAULT)


@dataclass
class Launch:
    """What a section asks of a server start."""
    port: int                    # plain HTTP/1.1
    cores: int                   # the CPUs it may use: 1 when pinned
    loops: int | None = None     # event loops, workers or I/O queues; None: the server's default for `cores`
    https_port: int | None = None
    h2c_port: int | None = None
    certificate: Path | None = None
    key: Path | None = None
    max_connections: int = 4096  # the most connections one client run opens

    descriptors: int = 1 << 20  # the descriptor limit the server inherits

    @property
    def connection_limit(self):
        """What a server must allow: two runs' worth (a client's connections may still be closing on the server when
        the next client opens its own) and a margin, within what its descriptor limit can hold."""
        return max(self.max_connections + 64, min(2 * self.max_connections + 1024, self.descriptors - 64))
    work: Path = Path("/tmp")    # a directory for the server's own files (nginx's config)
    payload_directory: Path | None = None  # nginx: files served under /bytes/ (the TLS throughput part)
    environment: dict = field(default_factory=dict)  # added to the server's environment


@dataclass
class Server:
    name: str
    label: str             # how tables name it
    family: str            # falconet, kestrel-platform, kestrel-app, nginx, c, aspnetcore-falconet, aspnetcore-kestrel
    description: str
    protocols: frozenset   # http1, https, h2c
    command: object        # Launch -> (argv, environment additions, working directory)
    needs: object = None   # () -> None, or the reason the server cannot run here
    ready_ports: object = None  # Launch -> ports to wait for (default: every port the launch names)
    stats: bool = False    # prints Falconet's --stats lines when stopped
    mode: str = ""         # the scheduling mode, for "best mode" choices: default, inline

    def unavailable(self):
        return self.needs() if self.needs else None


SERVERS = {}


def add(name, label, family, description, protocols, command, needs=None, stats=False, mode="default"):
    SERVERS[name] = Server(name, label, family, description, frozenset(protocols), command, needs, stats=stats, mode=mode)


def _exists(path, how):
    return lambda: None if Path(path).exists() else f"{path} is missing ({how})"


def _sample_supports(word):
    """The Plaintext sample's usage line names each transport it supports; a transport still being written is absent."""
    def check():
        if not SAMPLE.exists():
            return f"{SAMPLE} is missing (dotnet build samples/Plaintext -c Release)"
        usage = subprocess.run(["dotnet", str(SAMPLE), "--help"], capture_output=True, text=True, timeout=60)
        return None if word in usage.stdout + usage.stderr else f"the Plaintext sample has no {word} yet"
    return check


# ---- Falconet: samples/Plaintext --------------------------------------------------------------------------------

def falconet(*arguments, environment=None):
    def command(launch):
        argv = ["dotnet", str(SAMPLE), "--port", str(launch.port), "--stats", *arguments,
                "--max-connections", str(launch.connection_limit)]
        if launch.loops:
            argv += ["--io-threads", str(launch.loops)]
        if launch.https_port:
            argv += ["--https-port", str(launch.https_port), "--https-cert", str(launch.certificate), "--https-key", str(launch.key)]
        if launch.h2c_port:
            argv += ["--h2c-port", str(launch.h2c_port)]
        return argv, dict(environment or {}), ROOT
    return command


SAMPLE_NEEDS = _exists(SAMPLE, "dotnet build samples/Plaintext -c Release")
for name, label, arguments, environment, description, mode in [
    ("falconet-libuv", "Falconet (libuv)", ["--transport", "libuv"], None,
     "samples/Plaintext with the libuv transport, handlers inline on the loop (the defaults where io_uring cannot run and libuv1 is installed)", "inline"),
    ("falconet-sockets", "Falconet (sockets)", ["--transport", "sockets"], None,
     "samples/Plaintext with the sockets transport (System.Net.Sockets, the thread pool)", "default"),
    ("falconet-libuv-handoff", "Falconet (libuv, hand-off)", ["--libuv-distribution", "handoff"], None,
     "libuv, loop 0 accepting and handing connections round robin instead of a SO_REUSEPORT listener per loop", "inline"),
    ("falconet-libuv-threadpool", "Falconet (libuv, thread pool)", ["--transport", "libuv", "--scheduling", "threadpool"], None,
     "libuv with handlers on the thread pool instead of inline on the loop", "default"),
    ("falconet-sockets-nobatch", "Falconet (sockets, no batch scheduling)", ["--transport", "sockets", "--batch-scheduling", "off"], None,
     "sockets with BatchScheduling.Off: the thread-pool threads preempt each other as before", "default"),
    ("falconet-sockets-iothreads", "Falconet (sockets, I/O threads)", ["--transport", "sockets", "--scheduling", "iothreads"], None,
     "sockets with completions handed to Falconet's I/O threads", "default"),
    ("falconet-sockets-inline", "Falconet (sockets, inline)", ["--transport", "sockets"], INLINE,
     "sockets with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1", "inline"),
    ("falconet-sockets-inline-iothreads", "Falconet (sockets, inline, I/O threads)", ["--transport", "sockets", "--scheduling", "iothreads"], INLINE,
     "both of the above", "inline"),
]:
    add(name, label, "falconet", description, {"http1", "https", "h2c"}, falconet(*arguments, environment=environment),
        SAMPLE_NEEDS, stats=True, mode=mode)

# The io_uring transport (the default where the kernel allows it), alone and with submission polling (SQPOLL); skipped where the sample lacks it.
add("falconet-iouring", "Falconet (io_uring)", "falconet", "samples/Plaintext with the io_uring transport, handlers inline on the loop (the defaults where the kernel allows io_uring)",
    {"http1", "https", "h2c"}, falconet("--transport", "iouring"), _sample_supports("iouring"), stats=True, mode="inline")
add("falconet-iouring-sqpoll", "Falconet (io_uring, SQPOLL)", "falconet",
    "samples/Plaintext with the io_uring transport and submission polling (a kernel thread per ring takes submissions)",
    {"http1", "https", "h2c"}, falconet("--iouring-sqpoll"), _sample_supports("iouring"), stats=True, mode="inline")
add("falconet-iouring-batch", "Falconet (io_uring, batched turns)", "falconet",
    "samples/Plaintext with the io_uring transport and batched turns: while the loop's thread is busy, a turn of more than one completion makes the next wait for as many, or 100 µs once one is ready (IoUringTransportOptions.BatchedTurnWait)",
    {"http1", "https", "h2c"}, falconet("--iouring-batch-wait", "100"), _sample_supports("iouring"), stats=True, mode="inline")


# ---- Kestrel: TechEmpower's entry (PlatformBenchmarks) and the app-level peer ------------------------------------

def kestrel_platform(environment=None, prefix=()):
    def command(launch):
        dll = platform_benchmarks()
        argv = [*prefix, "dotnet", str(dll), "--urls", f"http://127.0.0.1:{launch.port}"]
        if launch.loops:
            argv += ["--threadCount", str(launch.loops)]
        return argv, dict(environment or {}), dll.parent  # it reads appsettings.json from its own folder
    return command


def platform_needs():
    dll = platform_benchmarks()
    if dll.exists():
        return None
    return (f"TechEmpower's Kestrel entry is not built here: set {PLATFORM_VARIABLE} to a built PlatformBenchmarks.dll "
            f"or put the build in {PLATFORM_DEFAULT.parent} (docs/benchmarks.md, 'Kestrel: the TechEmpower entry')")


add("kestrel-platform", "Kestrel, TechEmpower entry", "kestrel-platform",
    "TechEmpower's Kestrel entry (aspnet/Benchmarks PlatformBenchmarks): a raw connection handler with Kestrel's HttpParser<T>, one flush per read batch; thread-pool scheduling",
    {"http1"}, kestrel_platform(), platform_needs, mode="default")
add("kestrel-platform-inline", "Kestrel, TechEmpower entry (inline)", "kestrel-platform",
    "the same with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, which the entry turns into UnsafePreferInlineScheduling (its tuned mode)",
    {"http1"}, kestrel_platform(INLINE), platform_needs, mode="inline")
add("kestrel-platform-batch", "Kestrel, TechEmpower entry (batch)", "kestrel-platform",
    "the entry in its thread-pool mode with every thread under SCHED_BATCH (chrt -b 0)",
    {"http1"}, kestrel_platform(prefix=BATCH), platform_needs, mode="batch")
add("kestrel-platform-inline-batch", "Kestrel, TechEmpower entry (inline, batch)", "kestrel-platform",
    "the entry inline, with every thread under SCHED_BATCH (chrt -b 0)",
    {"http1"}, kestrel_platform(INLINE, prefix=BATCH), platform_needs, mode="inline, batch")


def kestrel_app(environment=None, prefix=()):
    def command(launch):
        argv = [*prefix, "dotnet", str(KESTREL_APP), "--port", str(launch.port)]
        if launch.https_port:
            argv += ["--https-port", str(launch.https_port), "--https-cert", str(launch.certificate), "--https-key", str(launch.key)]
        if launch.h2c_port:
            argv += ["--h2c-port", str(launch.h2c_port)]
        return argv, dict(environment or {}), ROOT
    return command


KESTREL_APP_NEEDS = _exists(KESTREL_APP, "dotnet build benchmarks/Peers/KestrelApp -c Release")
add("kestrel-app", "Kestrel, app-level", "kestrel-app",
    "benchmarks/Peers/KestrelApp: one HttpContext handler on WebApplication.CreateSlimBuilder, no logging or routing, sockets tuned as the entry; thread-pool scheduling",
    {"http1", "https", "h2c"}, kestrel_app(), KESTREL_APP_NEEDS, mode="default")
add("kestrel-app-inline", "Kestrel, app-level (inline)", "kestrel-app",
    "the same with inline completions and UnsafePreferInlineScheduling",
    {"http1", "https", "h2c"}, kestrel_app(INLINE), KESTREL_APP_NEEDS, mode="inline")
add("kestrel-app-batch", "Kestrel, app-level (batch)", "kestrel-app",
    "the same in its thread-pool mode with every thread under SCHED_BATCH (chrt -b 0)",
    {"http1", "https", "h2c"}, kestrel_app(prefix=BATCH), KESTREL_APP_NEEDS, mode="batch")


# ---- nginx and the minimal C server ------------------------------------------------------------------------------

def nginx_binary():
    for path in ("/usr/sbin/nginx", "/usr/bin/nginx"):
        if Path(path).exists():
            return path
    return "nginx"


def nginx_version():
    try:
        text = subprocess.run([nginx_binary(), "-v"], capture_output=True, text=True).stderr
        match = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", text)
        return tuple(int(x) for x in match.groups()) if match else (0, 0, 0)
    except OSError:
        return (0, 0, 0)


def nginx_config(launch, payload_directory=None):
    """A config answering /plaintext and /json as the sample does, tuned as TechEmpower's nginx entry (clock read once a
    second, no version in the Server header, a reuseport listener per worker); HTTPS and HTTP/2 ports when asked."""
    workers = launch.loops or launch.cores
    work = launch.work / "nginx"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    connections = launch.connection_limit
    h2_directive = "http2 on;" if nginx_version() >= (1, 25, 1) else ""
    listen_h2 = "" if h2_directive else " http2"
    locations = """
    location = /plaintext { default_type text/plain; return 200 'Hello, World!'; }
    location = /json { default_type application/json; return 200 '{"message":"Hello, World!"}'; }"""
    if payload_directory:
        # The payload files never change during a run: nginx keeps them open (open_file_cache) instead of an open, fstat
        # and close per request, its fastest mode for static bytes.
        locations += (f"\n    location /bytes/ {{ alias {payload_directory}/; default_type application/octet-stream;"
                      " open_file_cache max=64 inactive=3600s; open_file_cache_valid 3600s; }")
    servers = f"""
  server {{
    listen 127.0.0.1:{launch.port} reuseport backlog=65535;{locations}
  }}"""
    if launch.https_port:
        servers += f"""
  server {{
    listen 127.0.0.1:{launch.https_port} ssl reuseport backlog=65535;
    ssl_certificate {launch.certificate};
    ssl_certificate_key {launch.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:10m;{locations}
  }}"""
    if launch.h2c_port:
        servers += f"""
  server {{
    listen 127.0.0.1:{launch.h2c_port}{listen_h2} reuseport backlog=65535;
    {h2_directive}{locations}
  }}"""
    (work / "nginx.conf").write_text(f"""worker_processes {workers};
worker_rlimit_nofile {launch.descriptors};
timer_resolution 1000ms;
daemon off;
error_log {work}/logs/error.log error;
pid {work}/nginx.pid;
events {{ worker_connections {connections}; }}
http {{
  access_log off;
  server_tokens off;
  sendfile off;
  keepalive_requests 1000000000;
  keepalive_timeout 130s;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi;
  uwsgi_temp_path {work}/uwsgi;
  scgi_temp_path {work}/scgi;{servers}
}}
""")
    return work


def nginx(launch):
    work = nginx_config(launch, launch.payload_directory)
    return [nginx_binary(), "-p", str(work), "-c", str(work / "nginx.conf")], {}, ROOT


add("nginx", "nginx", "nginx",
    "Debian's nginx: return 200 with the same bodies, keep-alive without a request limit, no access log; as TechEmpower's nginx entry, timer_resolution 1000ms, server_tokens off, a reuseport listener per worker",
    {"http1", "https", "h2c"}, nginx, lambda: None if Path(nginx_binary()).exists() else "nginx is not installed")


def c_epoll(launch):
    return [str(C_EPOLL), str(launch.port), str(launch.loops or launch.cores)], {}, ROOT


add("c-epoll", "C epoll", "c",
    "benchmarks/Peers/CEpoll: canned responses from an epoll loop per thread, no parsing (the cost of the system calls and the loopback path)",
    {"http1"}, c_epoll, _exists(C_EPOLL, "built by run.sh with gcc"))


def c_uring(launch):
    return [str(C_URING), str(launch.port), str(launch.loops or launch.cores)], {}, ROOT


add("c-uring", "C io_uring", "c",
    "benchmarks/Peers/CUring: canned responses from an io_uring loop per thread (multishot accept into the registered file table, multishot receive into provided buffers, one io_uring_enter per turn), no parsing (the cost of the loopback path under io_uring)",
    {"http1"}, c_uring, _exists(C_URING, "built by run.sh with gcc and liburing"))


def c_uring_batch(launch):
    return [str(C_URING), str(launch.port), str(launch.loops or launch.cores), "200", "64"], {}, ROOT


add("c-uring-batch", "C io_uring, batched turns", "c",
    "c-uring whose turns wait for 64 completions, or 200 µs once one is ready (io_uring_enter's min_wait_usec): fewer, fuller turns for a longer wait per request",
    {"http1"}, c_uring_batch, _exists(C_URING, "built by run.sh with gcc and liburing"))


# ---- ASP.NET Core: the same minimal-API application on Falconet and on Kestrel -----------------------------------

def aspnetcore(dll, environment=None, extra=(), section="Falconet", prefix=()):
    def command(launch):
        # The endpoints from the server's configuration section (they replace --urls), the same keys under "Falconet"
        # and "Kestrel": HTTP/1.1, HTTPS with the run's certificate, and HTTP/2 with prior knowledge (h2load's default
        # for http:// addresses, and gRPC's h2c) on an address of its own.
        argv = [*prefix, "dotnet", str(dll), *extra, f"--{section}:Endpoints:Http:Url", f"http://127.0.0.1:{launch.port}"]
        if launch.https_port:
            argv += [f"--{section}:Endpoints:Https:Url", f"https://127.0.0.1:{launch.https_port}",
                     f"--{section}:Endpoints:Https:Certificate:Path", str(launch.certificate),
                     f"--{section}:Endpoints:Https:Certificate:KeyPath", str(launch.key)]
        if launch.h2c_port:
            argv += [f"--{section}:Endpoints:H2c:Url", f"http://127.0.0.1:{launch.h2c_port}", f"--{section}:Endpoints:H2c:Protocols", "Http2"]
        return argv, dict(environment or {}), ROOT
    return command


ASPNETCORE_NEEDS = _exists(ASPNETCORE_SAMPLE, "dotnet build samples/AspNetCore -c Release")
ASPNETCORE_KESTREL_NEEDS = _exists(ASPNETCORE_KESTREL, "dotnet build benchmarks/Peers/AspNetCoreKestrel -c Release")
add("aspnetcore-falconet", "ASP.NET Core on Falconet", "aspnetcore-falconet",
    "samples/AspNetCore with --server falconet (Falconet's defaults: io_uring where the kernel allows it, else libuv; handlers inline on the loop)",
    {"http1", "https", "h2c"}, aspnetcore(ASPNETCORE_SAMPLE, extra=("--server", "falconet")), ASPNETCORE_NEEDS, mode="inline")
add("aspnetcore-kestrel", "ASP.NET Core on Kestrel", "aspnetcore-kestrel",
    "benchmarks/Peers/AspNetCoreKestrel: the same application on Kestrel, sockets tuned as TechEmpower's entry; thread-pool scheduling",
    {"http1", "https", "h2c"}, aspnetcore(ASPNETCORE_KESTREL, section="Kestrel"), ASPNETCORE_KESTREL_NEEDS, mode="default")
add("aspnetcore-kestrel-inline", "ASP.NET Core on Kestrel (inline)", "aspnetcore-kestrel",
    "the same with inline completions and UnsafePreferInlineScheduling",
    {"http1", "https", "h2c"}, aspnetcore(ASPNETCORE_KESTREL, INLINE, section="Kestrel"), ASPNETCORE_KESTREL_NEEDS, mode="inline")
add("aspnetcore-kestrel-batch", "ASP.NET Core on Kestrel (batch)", "aspnetcore-kestrel",
    "the same in its thread-pool mode with every thread under SCHED_BATCH (chrt -b 0)",
    {"http1", "https", "h2c"}, aspnetcore(ASPNETCORE_KESTREL, section="Kestrel", prefix=BATCH), ASPNETCORE_KESTREL_NEEDS, mode="batch")


# ---- the payload server (TLS throughput) -------------------------------------------------------------------------

def payload(transport, environment=None, extra=(), engine="sslstream"):
    # The engine is named on every command line: the server's default (auto) would pick OpenSSL where it can run, and the
    # servers below without "-openssl" in their names measure SslStream, as they always have.
    def command(launch):
        return (["dotnet", str(PAYLOAD), "--port", str(launch.port), "--https-port", str(launch.https_port),
                 "--https-cert", str(launch.certificate), "--https-key", str(launch.key), "--transport", transport,
                 "--tls-engine", engine, *extra],
                dict(environment or {}), ROOT)
    return command


PAYLOAD_NEEDS = _exists(PAYLOAD, "dotnet build benchmarks/PayloadServer -c Release")
add("payload-libuv", "Falconet payload server (libuv)", "falconet", "benchmarks/PayloadServer: GET /bytes/N, libuv, --tls-engine sslstream",
    {"http1", "https"}, payload("libuv"), PAYLOAD_NEEDS)
add("payload-sockets", "Falconet payload server (sockets)", "falconet", "benchmarks/PayloadServer: GET /bytes/N, sockets, --tls-engine sslstream",
    {"http1", "https"}, payload("sockets"), PAYLOAD_NEEDS)
add("payload-sockets-nobatch", "Falconet payload server (sockets, no batch scheduling)", "falconet",
    "benchmarks/PayloadServer: GET /bytes/N, sockets with BatchScheduling.Off, --tls-engine sslstream",
    {"http1", "https"}, payload("sockets", extra=("--batch-scheduling", "off")), PAYLOAD_NEEDS)
add("payload-sockets-inline", "Falconet payload server (sockets, inline)", "falconet",
    "benchmarks/PayloadServer: GET /bytes/N, sockets with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, --tls-engine sslstream",
    {"http1", "https"}, payload("sockets", INLINE), PAYLOAD_NEEDS, mode="inline")
add("payload-iouring", "Falconet payload server (io_uring)", "falconet", "benchmarks/PayloadServer: GET /bytes/N, io_uring, --tls-engine sslstream",
    {"http1", "https"}, payload("iouring"), PAYLOAD_NEEDS)

# The same servers with TLS run by the OpenSSL engine (TlsServerOptions.Engine = OpenSsl) instead of SslStream.
add("payload-libuv-openssl", "Falconet payload server (libuv, OpenSSL engine)", "falconet",
    "benchmarks/PayloadServer: GET /bytes/N, libuv, --tls-engine openssl",
    {"http1", "https"}, payload("libuv", engine="openssl"), PAYLOAD_NEEDS)
add("payload-iouring-openssl", "Falconet payload server (io_uring, OpenSSL engine)", "falconet",
    "benchmarks/PayloadServer: GET /bytes/N, io_uring, --tls-engine openssl",
    {"http1", "https"}, payload("iouring", engine="openssl"), PAYLOAD_NEEDS)
add("payload-sockets-openssl", "Falconet payload server (sockets, OpenSSL engine)", "falconet",
    "benchmarks/PayloadServer: GET /bytes/N, sockets, --tls-engine openssl",
    {"http1", "https"}, payload("sockets", engine="openssl"), PAYLOAD_NEEDS)


def family_members(family):
    return [s for s in SERVERS.values() if s.family == family]
