#!/usr/bin/env bash
# Where connection code runs, measured: Falconet's sample with each IoScheduling, in each process mode, alternating,
# on loopback with wrk. Prints one Markdown row per run for docs/benchmarks.md ("Where connection code runs").
#
#   benchmarks/load/scheduling.sh [duration_seconds=8] [rounds=3] [connections=64]
#
# Process modes: "default" and "inline" (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1). Server on CPU 0, wrk on CPU 1.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-8}"
rounds="${2:-3}"
connections="${3:-64}"
port=18090
source benchmarks/load/common.sh
dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null

rps() { # URL DEPTH
  run_wrk "$connections" "$duration" "$1" "$2" | awk '/Requests\/sec/ {print $2}'
}

echo "wrk -t1 -c$connections -d${duration}s, server on CPU 0, wrk on CPU 1, $(date -u +%Y-%m-%d)"
echo
echo "| Round | Process mode | Scheduling | /plaintext 16 pipelined req/s | /plaintext no pipelining req/s |"
echo "| ---: | --- | --- | ---: | ---: |"
for round in $(seq 1 "$rounds"); do
  for mode in default inline; do
    for scheduling in iothreads threadpool; do
      if [ "$mode" = inline ]; then mode_env=(env DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1); else mode_env=(env); fi
      "${mode_env[@]}" "${server_cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll \
        --port "$port" --scheduling "$scheduling" >/dev/null 2>&1 &
      pid=$!
      warm_up "$connections" "$port"
      p16=$(rps "http://127.0.0.1:$port/plaintext" 16)
      p1=$(rps "http://127.0.0.1:$port/plaintext" 1)
      kill -TERM "$pid"; wait "$pid" || true
      echo "| $round | $mode | $scheduling | $p16 | $p1 |"
    done
  done
done
