#!/usr/bin/env bash
# Instructions per request of the HTTP/1.1 request path in memory (ConnectionLoopBenchmarks), counted by valgrind's
# callgrind: a count that does not move with the load on the machine. The benchmark runs WARMUP connections uncounted
# (so the path runs tier-1 code), then MEASURED connections with callgrind's instrumentation on.
#
#   benchmarks/load/callgrind-loop.sh [--depth N] [--path P] [--cookie] [--warmup N] [--measured N] [--bench DIR] [--out DIR]
#
#   --depth N      requests per read batch [16]
#   --path P       the request target [/plaintext]
#   --cookie       each request of a batch carries a Cookie of its own: no two consecutive header sections are the same
#   --warmup N     uncounted connections of 1000 batches first [60]
#   --measured N   counted connections [4]
#   --bench DIR    a built Falconet.Benchmarks output folder [benchmarks/Falconet.Benchmarks/bin/Release/net10.0]
#   --out DIR      where the callgrind file, the perf map and the JIT summary go [artifacts/callgrind/<UTC time>]
#   --disasm "M.." also count per instruction and print the JIT's code of these methods into jit.txt (DOTNET_JitDisasm
#                  syntax), to read a method's hot blocks against its code
#
# It prints the instructions per request and the top functions (JIT frames named from the runtime's perf map), and fails
# when a method of the path was compiled with MinOpts. Valgrind places the program's memory below 4 GiB unless told
# otherwise (--aspace-minaddr); the JIT then emits addresses as 32-bit absolutes, trips an assertion of its own and
# compiles every method again with MinOpts (no inlining: a count several times the real one). valgrind 3.19 does not
# emulate AVX-512, so the vector code differs from a machine that has it: compare counts with counts, not with times.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/load/callgrind-marked.sh
depth=16 path=/plaintext warmup=60 measured=4 bench=benchmarks/Falconet.Benchmarks/bin/Release/net10.0 out="" disasm="" variant=()
while [ "$#" -gt 0 ]; do
  case $1 in
    --depth) depth=$2; shift ;;
    --path) path=$2; shift ;;
    --cookie) variant=(cookie) ;;
    --warmup) warmup=$2; shift ;;
    --measured) measured=$2; shift ;;
    --bench) bench=$2; shift ;;
    --out) out=$2; shift ;;
    --disasm) disasm=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
out=${out:-artifacts/callgrind/$(date -u +%Y%m%d-%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
counting=()
if [ -n "$disasm" ]; then export DOTNET_JitDisasm="$disasm"; counting=(--dump-instr=yes); fi
callgrind_marked "$out" "${counting[@]}" -- \
  dotnet "$bench/Falconet.Benchmarks.dll" --connection-loop-count "$depth" "$path" "$warmup" "$measured" "${variant[@]}"
requests=$(sed -n 's/^done requests=\([0-9]*\).*/\1/p' "$out/bench.txt")
dump=$(ls "$out"/callgrind.out.* | head -1)
minopts=$(grep 'MinOpts' "$out/jit.txt" | grep 'Falconet' || true)
python3 benchmarks/load/callgrind-report.py "$dump" "$out/perf.map" "$requests" | tee "$out/report.txt"
if [ -n "$minopts" ]; then
  echo "methods compiled with MinOpts under valgrind (this count is not the production code's; run again):" >&2
  echo "$minopts" >&2
  exit 3
fi
