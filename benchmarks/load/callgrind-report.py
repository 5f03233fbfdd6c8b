#!/usr/bin/env python3
"""callgrind-report.py DUMP PERFMAP REQUESTS [TOP]: instructions per request from a callgrind dump, in total and by function
(self cost), with JIT-compiled frames named from the runtime's perf map (callgrind itself sees them as bare addresses)."""
import bisect
import re
import subprocess
import sys

dump, perf_map, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
top = int(sys.argv[4]) if len(sys.argv) > 4 else 40

symbols = []
for line in open(perf_map, errors="replace"):
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) == 3:
        symbols.append((int(parts[0], 16), int(parts[1], 16), parts[2]))
symbols.sort()
starts = [s[0] for s in symbols]


def name_of(address):
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and symbols[i][0] <= address < symbols[i][0] + symbols[i][1]:
        return symbols[i][2]
    return None


def short(name):
    # "instance bool [Falconet] Falconet.Http.HttpConnection::BeginRequest()[OptimizedTier1]" -> "HttpConnection::BeginRequest [OptimizedTier1]"
    m = re.search(r"\] ([\w.`+<>\[\],]+)::([\w.<>`|]+)\(.*\)\[(\w+)\]$", name)
    if m:
        return f"{m.group(1).split('.')[-1]}::{m.group(2)} [{m.group(3)}]"
    return name


text = subprocess.run(["callgrind_annotate", "--threshold=100", dump], capture_output=True, text=True, check=True).stdout
costs = {}
total = 0
for line in text.splitlines():
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
    if not m:
        continue
    instructions = int(m.group(1).replace(",", ""))
    function = m.group(2)
    if "PROGRAM TOTALS" in function:
        total = instructions
        continue
    address = re.match(r"\?\?\?:0x([0-9a-f]+) \[\?\?\?\]", function)
    name = (name_of(int(address.group(1), 16)) if address else None) or function
    costs[short(name)] = costs.get(short(name), 0) + instructions

print(f"{total / requests:.0f} instructions per request ({total:,} for {requests:,} requests)")
# Methods the runtime compiles again (a later tier) while the requests are counted add the JIT's work, and the runtime's
# and libc's around it, to the native part; the JIT-compiled part (managed frames and the runtime's stubs) compares
# builds run for run.
managed = sum(v for k, v in costs.items() if re.search(r"\[(Optimized\w*|Tier\w*|QuickJitted\w*|Instrumented\w*)\]$", k) or k.startswith("stub "))
jit = sum(v for k, v in costs.items() if "libclrjit.so" in k)
print(f"{managed / requests:.0f} in JIT-compiled code, {(total - managed) / requests:.0f} in native code (of which the JIT compiler {jit / requests:.0f})")
for name, instructions in sorted(costs.items(), key=lambda kv: -kv[1])[:top]:
    print(f"{instructions / requests:8.1f}  {100 * instructions / total:5.1f} %  {name[:150]}")
