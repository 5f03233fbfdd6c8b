#!/usr/bin/env bash
# Requests/s of the sample's /plaintext direct, and through HAProxy (HTTP mode, keep-alive on both sides) to one and to two
# sample processes, without and with PROXY protocol v2 to the backends: what the proxy costs on the same machine. The
# samples are pinned to the first core, HAProxy and wrk to the second, so the server's CPU per request is comparable between
# rows. Prints one line per setup: requests/s, the samples' CPU time per request (user + system, from /proc), and the TCP
# connections accepted per request (PassiveOpens of /proc/net/snmp: machine-wide, so other programs' connects count too).
# Needs haproxy and wrk; builds nothing (run `dotnet build samples/Plaintext -c Release` first).
# Usage: benchmarks/load/behind-haproxy.sh [seconds=5] [connections=64]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-5}
connections=${2:-64}
server_cpu=0
client_cpu=1
sample=samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_sample() { # $1: port, $2...: extra arguments; sets $started to the process id
  local port=$1; shift
  taskset -c "$server_cpu" dotnet "$sample" --port "$port" "$@" >"$work/sample-$port.log" 2>&1 &
  started=$!
  pids+=("$started")
  for _ in $(seq 200); do
    curl -s -o /dev/null "http://127.0.0.1:$port/plaintext" 2>/dev/null && return
    grep -q "listening" "$work/sample-$port.log" && return
    sleep 0.1
  done
  echo "sample on port $port did not start" >&2
  exit 1
}

passive_opens() { awk '/^Tcp:/ { if (header) { print $7; exit } header = 1 }' /proc/net/snmp; }

cpu_ticks() { # the summed user + system clock ticks of the given processes
  local total=0 pid
  for pid in "$@"; do total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat"))); done
  echo "$total"
}

measure() { # $1: label, $2: URL, $3...: the sample processes that serve it
  local label=$1 url=$2; shift 2
  # Warm-up: the JIT's tiers and HAProxy's connection pool, outside the measured window.
  taskset -c "$client_cpu" wrk -t 1 -c "$connections" -d 2s "$url" >/dev/null
  local before after opens_before opens_after ticks_per_second
  ticks_per_second=$(getconf CLK_TCK)
  before=$(cpu_ticks "$@")
  opens_before=$(passive_opens)
  taskset -c "$client_cpu" wrk -t 1 -c "$connections" -d "${seconds}s" "$url" >"$work/wrk.txt"
  opens_after=$(passive_opens)
  after=$(cpu_ticks "$@")
  awk -v label="$label" -v ticks=$((after - before)) -v hz="$ticks_per_second" -v opens=$((opens_after - opens_before)) '
    / requests in / { requests = $1 }
    /Requests\/sec/ { rate = $2 }
    /Non-2xx|Socket errors/ { errors = errors " " $0 }
    END { printf "%-40s %8.0f requests/s %7.2f us server CPU/request %6.3f connections/request%s\n", label, rate, ticks * 1e6 / hz / requests, opens / requests, errors }' "$work/wrk.txt"
}

start_haproxy() { # $1: a label for the files, $2...: "server" lines; sets $front
  local name=$1; shift
  front=$(free_port)
  {
    printf 'global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n'
    printf 'frontend front\n    bind 127.0.0.1:%s\n    default_backend samples\nbackend samples\n    balance roundrobin\n' "$front"
    printf '    %s\n' "$@"
  } >"$work/haproxy-$name.cfg"
  taskset -c "$client_cpu" haproxy -db -f "$work/haproxy-$name.cfg" >"$work/haproxy-$name.log" 2>&1 &
  haproxy_pid=$!
  pids+=("$haproxy_pid")
  sleep 0.5
}

plain_a_port=$(free_port); start_sample "$plain_a_port"; plain_a=$started
plain_b_port=$(free_port); start_sample "$plain_b_port"; plain_b=$started
proxy_a_port=$(free_port); start_sample "$proxy_a_port" --proxy-protocol --trusted-proxy 127.0.0.0/8; proxy_a=$started
proxy_b_port=$(free_port); start_sample "$proxy_b_port" --proxy-protocol --trusted-proxy 127.0.0.0/8; proxy_b=$started

measure "direct, 1 process" "http://127.0.0.1:$plain_a_port/plaintext" "$plain_a"

for backends in 1 2; do
  for proxy in no yes; do
    if [ "$proxy" = yes ]; then
      lines=("server a 127.0.0.1:$proxy_a_port send-proxy-v2"); serving=("$proxy_a")
      [ "$backends" = 2 ] && { lines+=("server b 127.0.0.1:$proxy_b_port send-proxy-v2"); serving+=("$proxy_b"); }
      label="HAProxy, $backends process(es), PROXY v2"
    else
      lines=("server a 127.0.0.1:$plain_a_port"); serving=("$plain_a")
      [ "$backends" = 2 ] && { lines+=("server b 127.0.0.1:$plain_b_port"); serving+=("$plain_b"); }
      label="HAProxy, $backends process(es)"
    fi
    start_haproxy "$backends-$proxy" "${lines[@]}"
    measure "$label" "http://127.0.0.1:$front/plaintext" "${serving[@]}"
    kill -TERM "$haproxy_pid"
    wait "$haproxy_pid" 2>/dev/null || true
  done
done
