#!/usr/bin/env bash
# The same ASP.NET Core minimal-API application (samples/AspNetCore) on Falconet and on Kestrel, one after the other,
# same machine, same wrk settings: /plaintext and /json through routing, without pipelining and 16 deep. Prints a
# Markdown table with requests/s, the server process's CPU time per request (user + system, from /proc/PID/stat: it
# compares the servers even when other work shares the machine) and the bytes the server process allocated per
# request (read from the app's /stats endpoint before and after each run, so start-up and warm-up are not counted).
#
#   benchmarks/load/aspnetcore.sh [duration_seconds=10] [connections=64] [rounds=1] [port=19520] [warmup_seconds=5]
#
# Servers: "falconet" is the sample with --server falconet and Falconet's defaults (libuv where installed); "kestrel" is
# the same sample with --server kestrel and Kestrel's defaults. Pinning and stopping: see common.sh. Requires wrk.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
rounds="${3:-1}"
port="${4:-19520}"
warmup="${5:-5}"
source benchmarks/load/common.sh
need_tools wrk:wrk curl:curl

dotnet build samples/AspNetCore -c Release -v q -nologo >/dev/null
sample=samples/AspNetCore/bin/Release/net10.0/Falconet.Samples.AspNetCore.dll

# stats -> "requests allocated_bytes" from the running sample.
stats() {
  curl -s "http://127.0.0.1:$port/stats" | sed -E 's/requests=([0-9]+) allocated_bytes=([0-9]+)/\1 \2/'
}

# cpu_ticks PID: user + system clock ticks of the process so far (all its threads).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# warm_up: waits for the server, then runs both endpoints for the warm-up time, so the JIT has settled.
warm_up() {
  wait_for_port "$port"
  run_wrk "$connections" "$warmup" "http://127.0.0.1:$port/plaintext" 16 >/dev/null
  run_wrk "$connections" "$warmup" "http://127.0.0.1:$port/json" 1 >/dev/null
}

# measure URL DEPTH -> "requests_per_second bytes_per_request cpu_us_per_request"
measure() {
  local out rps before after ticks0 ticks1 requests
  before=$(stats)
  ticks0=$(cpu_ticks "$pid")
  out=$(run_wrk "$connections" "$duration" "$1" "$2")
  ticks1=$(cpu_ticks "$pid")
  after=$(stats)
  if printf '%s\n' "$out" | grep -q 'Non-2xx\|Socket errors'; then
    printf '%s\n' "$out" | grep 'Non-2xx\|Socket errors' >&2
  fi
  rps=$(printf '%s\n' "$out" | awk '/Requests\/sec/ {print $2}')
  # The /stats request itself is one of the counted requests; with thousands per run it does not move the figure.
  read -r r0 a0 <<<"$before"; read -r r1 a1 <<<"$after"
  requests=$(printf '%s\n' "$out" | awk '/ requests in / { print $1 }')
  awk -v rps="$rps" -v r="$((r1 - r0))" -v a="$((a1 - a0))" -v ticks="$((ticks1 - ticks0))" -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    'BEGIN { printf "%s %.0f %.1f\n", rps, (r > 0 ? a / r : 0), (n > 0 ? ticks / hz * 1000000 / n : 0) }'
}

declare -A results
pid=""
trap '[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true' EXIT
scenarios="plaintext1 plaintext16 json1 json16"
for round in $(seq 1 "$rounds"); do
  for server in falconet kestrel; do
    "${server_cpu[@]}" dotnet "$sample" --server "$server" --urls "http://127.0.0.1:$port" >/dev/null 2>&1 &
    pid=$!
    warm_up
    for scenario in $scenarios; do
      path=${scenario%%[0-9]*}
      depth=${scenario#"$path"}
      results[$round,$server,$scenario]=$(measure "http://127.0.0.1:$port/$path" "$depth")
    done
    kill -TERM "$pid"; wait "$pid" || true
    pid=""
    sleep 1
  done
done

label() {
  case $1 in
    plaintext1) echo "/plaintext, no pipelining";;
    plaintext16) echo "/plaintext, 16 pipelined";;
    json1) echo "/json, no pipelining";;
    json16) echo "/json, 16 pipelined";;
  esac
}

echo
echo "ASP.NET Core minimal APIs (samples/AspNetCore): wrk -t1 -c$connections -d${duration}s, server on CPU 0, wrk on CPU 1, $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| Scenario | Round | Falconet req/s | Kestrel req/s | Falconet / Kestrel | Falconet CPU µs/req | Kestrel CPU µs/req | Falconet B/req | Kestrel B/req |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for scenario in $scenarios; do
  for round in $(seq 1 "$rounds"); do
    read -r frps fbytes fcpu <<<"${results[$round,falconet,$scenario]}"
    read -r krps kbytes kcpu <<<"${results[$round,kestrel,$scenario]}"
    ratio=$(awk -v f="$frps" -v k="$krps" 'BEGIN { if (k > 0) printf "%.2f", f / k; else print "n/a" }')
    echo "| $(label "$scenario") | $round | $frps | $krps | $ratio | $fcpu | $kcpu | $fbytes | $kbytes |"
  done
done
