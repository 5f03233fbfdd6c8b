#!/usr/bin/env bash
# Instructions per operation of one HPACK benchmark variant, counted by valgrind's callgrind: a figure the load of a
# shared machine does not move. The variant runs 50,000 operations uncounted (so it runs tier-1 code), then OPERATIONS
# with callgrind's instrumentation on (benchmarks/load/callgrind-marked.sh; valgrind does not emulate AVX-512, so
# compare counts with counts).
#
#   benchmarks/hpack-callgrind.sh VARIANT REQUEST [OPERATIONS]
#
#   VARIANT: falconet | kestrel | storing (HPackDecoderComparison), huffman-window | huffman-fourbit | huffman-kestrel
#            (HuffmanDecodeComparison), encode-huffman | encode-raw (HPackEncoderBenchmarks)
#   REQUEST: First | Repeated for the decoders; Warm | First for the encoder; anything for the Huffman decoders
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/load/callgrind-marked.sh
variant=$1 request=$2 operations=${3:-20000}
bench=benchmarks/Falconet.Benchmarks.Parsing/bin/Release/net10.0
out=artifacts/callgrind/hpack-$variant-$request-$(date -u +%Y%m%d-%H%M%SZ)
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
callgrind_marked "$out" dotnet "$bench/Falconet.Benchmarks.Parsing.dll" --hpack-count "$variant" "$request" "$operations"
dump=$(ls "$out"/callgrind.out.* | head -1)
echo "$variant $request:"
python3 benchmarks/load/callgrind-report.py "$dump" "$out/perf.map" "$operations" 15 | tee "$out/report.txt"
if grep -q 'InstrumentedTier\]' "$out/report.txt"; then
  # On a loaded machine the background JIT can still be recompiling when the warm-up ends.
  echo "methods were still being tiered up during the counted run (this count is not the production code's; run again)" >&2
  exit 3
fi
if grep 'MinOpts' "$out/jit.txt" | grep -q 'Falconet\|System.Net.Http.HPack'; then
  echo "methods compiled with MinOpts under valgrind (this count is not the production code's; run again)" >&2
  exit 3
fi
