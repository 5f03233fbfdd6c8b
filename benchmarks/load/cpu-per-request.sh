#!/usr/bin/env bash
# Server CPU per request, user and kernel apart, from /proc/PID/stat: the server pinned to core 0, wrk pinned to core 1,
# TechEmpower's plaintext requests (their headers), DEPTH per write (pipeline.lua), CONNECTIONS connections, a 3 s
# warm-up, then SECONDS measured. CPU time per request moves much less with other load on the machine than requests/s.
#
#   benchmarks/load/cpu-per-request.sh NAME PORT [--depth N] [--connections N] [--seconds N] -- SERVER COMMAND...
#
# The server must answer /plaintext on 127.0.0.1:PORT; it is stopped with SIGTERM afterwards. Prints one line:
# NAME, requests, requests/s, user and kernel µs per request. Interleave rounds of two servers to compare them, e.g.
#   benchmarks/load/cpu-per-request.sh falconet 26080 -- dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --transport libuv --port 26080
#   (cd "$PLATFORM_BENCHMARKS_DIR" && DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 \
#     "$OLDPWD"/benchmarks/load/cpu-per-request.sh kestrel 26081 -- dotnet PlatformBenchmarks.dll --urls http://127.0.0.1:26081)
set -euo pipefail
script_dir=$(cd "$(dirname "$0")" && pwd)
name=$1 port=$2; shift 2
depth=16 connections=64 seconds=5
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --depth) depth=$2; shift ;;
    --connections) connections=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "${1:-}" = "--" ] || { echo "usage: $0 NAME PORT [options] -- SERVER COMMAND..." >&2; exit 2; }
shift
log=$(mktemp)
taskset -c 0 "$@" >"$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 150); do
  curl -s -o /dev/null "http://127.0.0.1:$port/plaintext" && break
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.2
done
headers=(-H 'Host: tfb-server' -H 'Connection: keep-alive'
  -H 'Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7')
load() { taskset -c 1 wrk -t1 -c"$connections" -d"$1"s "${headers[@]}" -s "$script_dir/pipeline.lua" "http://127.0.0.1:$port/plaintext" -- "$depth"; }
load 3 >/dev/null
read -r user0 kernel0 < <(awk '{print $14, $15}' /proc/$pid/stat)
result=$(load "$seconds")
read -r user1 kernel1 < <(awk '{print $14, $15}' /proc/$pid/stat)
requests=$(awk '/requests in/{print $1}' <<<"$result")
ticks=$(getconf CLK_TCK)
awk -v n="$name" -v r="$requests" -v s="$seconds" -v u=$((user1 - user0)) -v k=$((kernel1 - kernel0)) -v t="$ticks" \
  'BEGIN { printf "%-10s requests=%d req/s=%.0f user=%.3f us/req kernel=%.3f us/req\n", n, r, r / s, u * 1e6 / t / r, k * 1e6 / t / r }'
