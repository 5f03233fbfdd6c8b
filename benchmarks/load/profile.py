#!/usr/bin/env python3
"""Reads three perf reports of one server and prints, in Markdown, where its CPU time went: kernel, the .NET runtime,
libraries, the server's own code; the kernel's share per system call; the threads; the top shared objects and
symbols.

    benchmarks/load/profile.py SELF_REPORT CHILDREN_REPORT THREADS_REPORT SERVER

SELF_REPORT is `perf report --no-children --sort dso,sym -n -g none`: self time (a frame's samples are its own, not
its callees'), so the parts add up to 100 %. CHILDREN_REPORT is `perf report --children --sort sym -n -g none`:
inclusive time, which attributes the kernel's work to the system call that caused it. THREADS_REPORT is `perf report
--no-children --sort comm -n -g none`: the share of each thread name. JIT-compiled frames are named
from the runtime's perf map (DOTNET_PerfMapEnabled=1) as "[Assembly] Namespace.Type::Method(...)[Tier]".
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+(.*?)\s+\[([.kgu])\]\s+(.*?)\s*$")
THREAD_LINE = re.compile(r"^\s*([\d.]+)%\s+\d+\s+(\S.*?)\s*$")
INCLUSIVE_LINE = re.compile(r"^\s*([\d.]+)%\s+[\d.]+%\s+\d+\s+\[k\]\s+(\S+)\s*$")
# Kernel functions that sit under exactly one system call (the __x64_sys_ entry points are often skipped in frame-
# pointer call chains); the names are Linux's, stable across recent kernels.
SYSTEM_CALLS = [
    ("ksys_write", "write"), ("do_writev", "writev"), ("__sys_sendmsg", "sendmsg"), ("__sys_sendto", "send, sendto"),
    ("ksys_read", "read"), ("do_readv", "readv"), ("__sys_recvmsg", "recvmsg"), ("__sys_recvfrom", "recv, recvfrom"),
    ("do_epoll_wait", "epoll_wait"), ("do_epoll_ctl", "epoll_ctl"), ("__sys_accept4", "accept4"),
    ("do_futex", "futex"), ("__x64_sys_sched_yield", "sched_yield"), ("__x64_sys_shutdown", "shutdown"),
]
ASSEMBLY = re.compile(r"\[([A-Za-z0-9_.]+)\] [A-Za-z_]")
TIER = re.compile(r"\[([A-Za-z0-9]+)\]$")
# Code the runtime has not optimized yet: a profile with much of it was taken before the hot path tiered up.
UNOPTIMIZED_TIERS = {"QuickJitted", "InstrumentedTier", "Tier0", "Instrumented"}
NATIVE_RUNTIME = ("libcoreclr.so", "libclrjit.so", "libSystem.Native.so", "libhostpolicy.so", "libhostfxr.so",
                  "libSystem.Security.Cryptography.Native.OpenSsl.so", "libSystem.Net.Security.Native.so")

PARTS = [
    "kernel (system calls, loopback TCP/IP, scheduling)",
    ".NET runtime, native (libcoreclr, libclrjit, System.Native, stubs)",
    ".NET libraries (System.*, Microsoft.*: JIT-compiled and ReadyToRun)",
    "native libraries (libc, loader, libuv, OpenSSL)",
    "the server's own code",
    "unresolved",
]


def server_code(server):
    """How to recognise the server's own frames: by assembly for .NET servers, by binary for native ones."""
    if server.startswith("falconet"):
        return lambda dso, assembly: assembly is not None and assembly.startswith("Falconet")
    if server.startswith("kestrel"):
        return lambda dso, assembly: assembly is not None and (assembly.startswith("Microsoft.AspNetCore") or assembly == "KestrelPlaintext")
    return lambda dso, assembly: dso.split("/")[-1] == server


def part_of(dso, symbol, is_server):
    jit = dso.startswith("[JIT]") or dso.startswith("perf-")
    match = ASSEMBLY.search(symbol) if jit else None
    assembly = match.group(1) if match else None
    if dso in ("[kernel.kallsyms]", "[kernel.vmlinux]", "[vdso]") or dso.startswith("[kernel"):
        return PARTS[0]
    if is_server(dso, assembly):
        return PARTS[4]
    if jit:
        return PARTS[2] if assembly else PARTS[1]  # JIT stubs and helpers carry no assembly
    if dso in NATIVE_RUNTIME:
        return PARTS[1]
    if dso.endswith(".dll"):
        return PARTS[2]
    if dso in ("[unknown]", ""):
        return PARTS[5]
    return PARTS[3]


def kernel_entries(path):
    """Inclusive share per system call, and of packet processing in softirq (nested inside them)."""
    inclusive = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        match = INCLUSIVE_LINE.match(line)
        if match:
            inclusive.setdefault(match.group(2), float(match.group(1)))
    lines = ["## Kernel time by system call (inclusive)", "",
             "Each call's share includes everything the kernel did inside it; on loopback a send also runs the receiving "
             "socket's TCP processing (softirq) on the sender's CPU, so the server pays for part of the client's receive.", "",
             "| System call | Share |", "| --- | ---: |"]
    rows = sorted(((inclusive[f], name) for f, name in SYSTEM_CALLS if inclusive.get(f, 0) >= 0.1), reverse=True)
    lines += [f"| {name} | {share:.1f} % |" for share, name in rows]
    if "handle_softirqs" in inclusive:
        lines.append(f"| of which packet delivery in softirq | {inclusive['handle_softirqs']:.1f} % |")
    return lines + [""]


def threads(path):
    """Share per thread name: the event loop or I/O threads against the thread pool, the JIT's and the GC's."""
    lines = ["## Threads", "", "| Thread | Share |", "| --- | ---: |"]
    compiling = 0.0
    for line in open(path, encoding="utf-8", errors="replace"):
        match = THREAD_LINE.match(line)
        if match and float(match.group(1)) >= 0.1:
            lines.append(f"| {match.group(2)} | {float(match.group(1)):.1f} % |")
            if match.group(2).startswith(".NET Tiered"):
                compiling = float(match.group(1))
    if compiling >= 1:
        lines += ["", f"The JIT's background compiler still took {compiling:.1f} %: a longer --warmup lets it finish first."]
    return lines + [""]


def main(path, children_path, threads_path, server):
    is_server = server_code(server)
    rows = []
    for line in open(path, encoding="utf-8", errors="replace"):
        match = LINE.match(line)
        if match:
            share, samples, dso, _, symbol = match.groups()
            rows.append((float(share), int(samples), dso, symbol))
    if not rows:
        sys.exit(f"no samples in {path}")
    total = sum(samples for _, samples, _, _ in rows)
    parts, dsos = defaultdict(int), defaultdict(int)
    unoptimized = jitted = 0
    for _, samples, dso, symbol in rows:
        parts[part_of(dso, symbol, is_server)] += samples
        dsos["[JIT] (all threads)" if dso.startswith("[JIT]") else dso] += samples
        tier = TIER.search(symbol)
        if dso.startswith("[JIT]") and tier:
            jitted += samples
            unoptimized += samples if tier.group(1) in UNOPTIMIZED_TIERS else 0

    def percent(samples):
        return f"{100 * samples / total:.1f} %"

    out = [f"# Where {server}'s CPU time goes: /plaintext without pipelining", "",
           f"{total:,} samples of the server's processes (perf record -F 4000 -g, cpu-clock), self time.", ""]
    if jitted:
        out += [f"Code not optimized yet (Tier0, instrumented): {percent(unoptimized)} of all samples, "
                f"{100 * unoptimized / jitted:.0f} % of the JIT-compiled ones"
                + (". A longer --warmup lets the hot path tier up before the profile." if unoptimized > 0.1 * jitted else "."), ""]
    out += ["| Part | Share |", "| --- | ---: |"]
    out += [f"| {p} | {percent(parts[p])} |" for p in PARTS if parts[p]]
    out += [""] + kernel_entries(children_path) + threads(threads_path)
    out += ["## Top shared objects", "", "| Shared object | Share |", "| --- | ---: |"]
    out += [f"| {dso} | {percent(n)} |" for dso, n in sorted(dsos.items(), key=lambda kv: -kv[1])[:12]]
    out += ["", "## Top symbols", "", "| Share | Part | Symbol |", "| ---: | --- | --- |"]
    for _, samples, dso, symbol in sorted(rows, key=lambda r: -r[1])[:40]:
        name = symbol if len(symbol) <= 160 else symbol[:157] + "..."
        name = name.replace("|", "\\|")
        out.append(f"| {percent(samples)} | {part_of(dso, symbol, is_server).split(' (')[0]} | `{name}` |")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: profile.py SELF_REPORT CHILDREN_REPORT THREADS_REPORT SERVER")
    main(*sys.argv[1:])
