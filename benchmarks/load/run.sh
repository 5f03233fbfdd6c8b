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
# Pinning and stopping: see common.sh. Requires wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
modes="${3:-default inline}"
rounds="${4:-1}"
falconet_port=18080
kestrel_port=18081
source benchmarks/load/common.sh

dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null

# measure_wrk URL DEPTH -> "requests_per_second p99_latency"
measure_wrk() {
  local out rps p99
  out=$(run_wrk "$connections" "$duration" "$1" "$2" --latency)
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
  warm_up "$connections" "$port"
  results[$key,plaintext16]=$(measure_wrk "http://127.0.0.1:$port/plaintext" 16)
  results[$key,plaintext1]=$(measure_wrk "http://127.0.0.1:$port/plaintext" 1)
  results[$key,json1]=$(measure_wrk "http://127.0.0.1:$port/json" 1)
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
