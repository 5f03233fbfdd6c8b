#!/usr/bin/env bash
# Requests/s of the sample's /plaintext direct, and through HAProxy (HTTP mode, keep-alive both sides, PROXY protocol v2
# to the backends) to one and to two sample processes: what the proxy costs on the same machine. Prints one line per
# setup. Needs haproxy and wrk; builds nothing (run `dotnet build samples/Plaintext -c Release` first).
# Usage: benchmarks/load/behind-haproxy.sh [seconds=5] [connections=64]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-5}
connections=${2:-64}
sample=samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_sample() { # $1: port, $2...: extra arguments
  local port=$1; shift
  dotnet "$sample" --port "$port" "$@" >"$work/sample-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/plaintext" 2>/dev/null && return; \
    grep -q "listening" "$work/sample-$port.log" && break; sleep 0.1; done
}

measure() { # $1: label, $2: URL
  wrk -t 2 -c "$connections" -d "${seconds}s" "$2" | awk -v label="$1" '/Requests\/sec/ { printf "%-28s %s requests/s\n", label, $2 }'
}

direct=$(free_port)
start_sample "$direct"
sleep 1
measure "direct, 1 process" "http://127.0.0.1:$direct/plaintext"

a=$(free_port); b=$(free_port)
start_sample "$a" --proxy-protocol --trusted-proxy 127.0.0.0/8
start_sample "$b" --proxy-protocol --trusted-proxy 127.0.0.0/8
sleep 1
for backends in 1 2; do
  front=$(free_port)
  servers="    server a 127.0.0.1:$a send-proxy-v2"
  [ "$backends" = 2 ] && servers="$servers"$'\n'"    server b 127.0.0.1:$b send-proxy-v2"
  cat >"$work/haproxy-$backends.cfg" <<CONFIG
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
frontend front
    bind 127.0.0.1:$front
    default_backend samples
backend samples
    balance roundrobin
$servers
CONFIG
  haproxy -db -f "$work/haproxy-$backends.cfg" >"$work/haproxy-$backends.log" 2>&1 &
  haproxy_pid=$!
  pids+=($haproxy_pid)
  sleep 0.5
  measure "HAProxy, $backends process(es)" "http://127.0.0.1:$front/plaintext"
  kill -TERM "$haproxy_pid"
done
