#!/usr/bin/env bash
# Side-by-side load run on loopback: Falconet's sample and the Kestrel peer, same endpoints, same machine, same wrk
# settings, one after the other, in each process mode. Prints Markdown tables for docs/benchmarks.md.
#
#   benchmarks/load/run.sh [duration_seconds=10] [connections=64] [modes="default inline"] [rounds=1]
#
# Modes: "default" runs both servers as they come; "inline" runs both with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1
# (socket completions continue on the socket engine's thread; the Kestrel peer then also sets
# UnsafePreferInlineScheduling, as tuned TechEmpower entries do). Each round measures Falconet, then Kestrel.
#
# The server is pinned to CPU 0 and wrk to CPU 1 (when the machine has two or more cores), so the two processes do not
# fight over one core. Servers are stopped with SIGTERM: a background job of a non-interactive shell starts with SIGINT
# ignored, and .NET keeps that disposition. Requires wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
modes="${3:-default inline}"
rounds="${4:-1}"
falconet_port=18080
kestrel_port=18081
here=benchmarks/load

command -v wrk >/dev/null || { echo "wrk is required: apt-get install wrk" >&2; exit 1; }
if [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); else server_cpu=(); client_cpu=(); fi

dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null

wait_for_port() {
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2; return 1
}

# run_wrk URL DEPTH -> "requests_per_second p99_latency"
run_wrk() {
  local out rps p99
  out=$("${client_cpu[@]}" wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$here/pipeline.lua" "$1" -- "$2")
  rps=$(printf '%s\n' "$out" | awk '/Requests\/sec/ {print $2}')
  p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
  if printf '%s\n' "$out" | grep -q 'Non-2xx\|Socket errors'; then
    printf '%s\n' "$out" | grep 'Non-2xx\|Socket errors' >&2
  fi
  echo "$rps $p99"
}

declare -A results
declare -A stats
measure() { # KEY PORT
  local key=$1 port=$2
  wait_for_port "$port"
  # Warm-up: tiered JIT, pools, connection setup.
  "${client_cpu[@]}" wrk -t1 -c"$connections" -d3s -s "$here/pipeline.lua" "http://127.0.0.1:$port/plaintext" -- 16 >/dev/null
  results[$key,plaintext16]=$(run_wrk "http://127.0.0.1:$port/plaintext" 16)
  results[$key,plaintext1]=$(run_wrk "http://127.0.0.1:$port/plaintext" 1)
  results[$key,json1]=$(run_wrk "http://127.0.0.1:$port/json" 1)
}

for mode in $modes; do
  case $mode in
    default) mode_env=(env) ;;
    inline) mode_env=(env DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1) ;;
    *) echo "unknown mode $mode (default, inline)" >&2; exit 2 ;;
  esac

  for round in $(seq 1 "$rounds"); do
    stats_file=$(mktemp)
    "${mode_env[@]}" "${server_cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll \
      --port "$falconet_port" --stats >"$stats_file" 2>&1 &
    falconet_pid=$!
    measure "$mode,$round,Falconet" "$falconet_port"
    kill -TERM "$falconet_pid"; wait "$falconet_pid" || true
    stats[$mode,$round]=$(grep '^requests=' "$stats_file" || echo "no stats line")
    rm -f "$stats_file"

    "${mode_env[@]}" "${server_cpu[@]}" dotnet benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll \
      --port "$kestrel_port" >/dev/null 2>&1 &
    kestrel_pid=$!
    measure "$mode,$round,Kestrel" "$kestrel_port"
    kill -TERM "$kestrel_pid"; wait "$kestrel_pid" || true
  done
done

for mode in $modes; do
  echo
  echo "Mode $mode: wrk -t1 -c$connections -d${duration}s, server on CPU 0, wrk on CPU 1, $(date -u +%Y-%m-%d)"
  echo
  echo "| Scenario | Round | Falconet req/s | Kestrel req/s | Falconet / Kestrel | Falconet p99 | Kestrel p99 |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  for scenario in plaintext16 plaintext1 json1; do
    case $scenario in
      plaintext16) label="/plaintext, 16 pipelined";;
      plaintext1) label="/plaintext, no pipelining";;
      json1) label="/json, no pipelining";;
    esac
    for round in $(seq 1 "$rounds"); do
      read -r f_rps f_p99 <<<"${results[$mode,$round,Falconet,$scenario]}"
      read -r k_rps k_p99 <<<"${results[$mode,$round,Kestrel,$scenario]}"
      ratio=$(awk -v a="$f_rps" -v b="$k_rps" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
      echo "| $label | $round | $f_rps | $k_rps | $ratio | $f_p99 | $k_p99 |"
    done
  done
  echo
  for round in $(seq 1 "$rounds"); do
    echo "Falconet sample --stats, mode $mode round $round (whole run): ${stats[$mode,$round]}"
  done
done
