#!/usr/bin/env bash
# Instructions per operation of one HPACK benchmark variant, counted by valgrind's callgrind: a figure the load of a
# shared machine does not move. The variant runs 50,000 operations uncounted (so it runs tier-1 code), then OPERATIONS
# with callgrind's instrumentation on (see benchmarks/load/callgrind-loop.sh for why --aspace-minaddr: without it the JIT
# falls back to MinOpts under valgrind; and valgrind does not emulate AVX-512, so compare counts with counts).
#
#   benchmarks/hpack-callgrind.sh VARIANT REQUEST [OPERATIONS]
#
#   VARIANT: falconet | kestrel | storing (HPackDecoderComparison), huffman-window | huffman-fourbit | huffman-kestrel
#            (HuffmanDecodeComparison), encode-huffman | encode-raw (HPackEncoderBenchmarks)
#   REQUEST: First | Repeated for the decoders; Warm | First for the encoder; anything for the Huffman decoders
set -euo pipefail
cd "$(dirname "$0")/.."
variant=$1 request=$2 operations=${3:-20000}
bench=benchmarks/Falconet.Benchmarks.Parsing/bin/Release/net10.0
out=artifacts/callgrind/hpack-$variant-$request-$(date -u +%Y%m%d-%H%M%SZ)
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
fifo=$out/stdin
rm -f "$fifo"; mkfifo "$fifo"
exec 7<>"$fifo"
env DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0 DOTNET_JitStdOutFile="$out/jit.txt" DOTNET_JitDisasmSummary=1 \
  valgrind --tool=callgrind --aspace-minaddr=0x100000000 --instr-atstart=no --callgrind-out-file="$out/callgrind.out" \
  dotnet "$bench/Falconet.Benchmarks.Parsing.dll" --hpack-count "$variant" "$request" "$operations" \
  <"$fifo" >"$out/bench.txt" 2>"$out/valgrind.txt" &
pid=$!
until grep -q '^ready' "$out/bench.txt" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$out/valgrind.txt" >&2; exit 1; }
  sleep 1
done
callgrind_control -i on "$pid" >/dev/null
echo >&7
until grep -q '^done' "$out/bench.txt"; do sleep 1; done
callgrind_control -d "$pid" >/dev/null
callgrind_control -i off "$pid" >/dev/null
echo >&7
wait "$pid"
exec 7>&-
rm -f "$fifo"
cp "/tmp/perf-$pid.map" "$out/perf.map" 2>/dev/null || true
rm -f "/tmp/perf-$pid.map" "/tmp/perfinfo-$pid.map"
dump=$(ls "$out"/callgrind.out.* | head -1)
echo "$variant $request:"
python3 benchmarks/load/callgrind-report.py "$dump" "$out/perf.map" "$operations" 15 | tee "$out/report.txt"
if grep 'MinOpts' "$out/jit.txt" | grep -q 'Falconet\|System.Net.Http.HPack'; then
  echo "methods compiled with MinOpts under valgrind (this count is not the production code's; run again)" >&2
  exit 3
fi
