#!/usr/bin/env bash
# Every micro benchmark in one command: the generated matchers and header collections, the memory pool, the parser
# (against Kestrel's HttpParser<T>) and the scans, with BenchmarkDotNet, plus the interleaved in-process comparisons
# that hold their ratio on a busy machine. Results land in artifacts/benchmarks/ (Markdown tables per class).
#
#   benchmarks/micro.sh            short job: a few minutes in all, for a first look
#   benchmarks/micro.sh --record   medium job, three launches: the figures of record for docs/benchmarks.md
#   benchmarks/micro.sh --filter '*Kestrel*'   any further arguments go to BenchmarkDotNet
set -euo pipefail
cd "$(dirname "$0")/.."

job=(--job short)
if [ "${1:-}" = --record ]; then job=(--job medium --launchCount 3); shift; fi
filter=(--filter '*')
if [ "$#" -gt 0 ]; then filter=("$@"); fi
out=artifacts/benchmarks

dotnet build benchmarks/Falconet.Benchmarks -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Falconet.Benchmarks.Parsing -c Release -v q -nologo >/dev/null

for project in Falconet.Benchmarks Falconet.Benchmarks.Parsing; do
  echo "== $project (BenchmarkDotNet ${job[*]})"
  dotnet "benchmarks/$project/bin/Release/net10.0/$project.dll" "${filter[@]}" "${job[@]}" \
    --exporters github --artifacts "$out/$project" | grep -E '^\||^// \* Summary|^Run time|Exception' || true
done

echo "== interleaved in-process comparisons (min and median of alternating rounds)"
dotnet benchmarks/Falconet.Benchmarks/bin/Release/net10.0/Falconet.Benchmarks.dll --interleaved
dotnet benchmarks/Falconet.Benchmarks.Parsing/bin/Release/net10.0/Falconet.Benchmarks.Parsing.dll --interleaved
echo "Markdown tables: $out/*/results/*-report-github.md"
