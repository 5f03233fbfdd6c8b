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
here=benchmarks/load

command -v wrk >/dev/null || { echo "wrk is required: apt-get install wrk" >&2; exit 1; }
if [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); else server_cpu=(); client_cpu=(); fi
dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null

rps() { # URL DEPTH
  "${client_cpu[@]}" wrk -t1 -c"$connections" -d"${duration}s" -s "$here/pipeline.lua" "$1" -- "$2" | awk '/Requests\/sec/ {print $2}'
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
      for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
      "${client_cpu[@]}" wrk -t1 -c"$connections" -d3s -s "$here/pipeline.lua" "http://127.0.0.1:$port/plaintext" -- 16 >/dev/null
      p16=$(rps "http://127.0.0.1:$port/plaintext" 16)
      p1=$(rps "http://127.0.0.1:$port/plaintext" 1)
      kill -TERM "$pid"; wait "$pid" || true
      echo "| $round | $mode | $scheduling | $p16 | $p1 |"
    done
  done
done
