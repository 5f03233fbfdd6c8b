#!/usr/bin/env bash
# HTTP/2 load runs on loopback with h2load (Debian's nghttp2-client), printed as a Markdown table for docs/benchmarks.md
# ("HTTP/2"): /plaintext and /json over h2c (prior knowledge), CONNECTIONS connections with 1 and with 16 streams in
# flight each, against the Falconet sample (libuv and sockets), the Kestrel peer (HTTP/2, in its default and its
# inline-completion process modes: the faster is its figure) and nginx (http2, one worker). Beside requests/s, the
# server's CPU time per request (user + system from /proc/PID/stat over the measured run).
#
#   benchmarks/load/h2.sh [duration_seconds=10] [connections=64] [servers="falconet-libuv falconet-sockets kestrel kestrel-inline nginx"] [port=19500]
#
# Smoke run (proves the script works, figures mean nothing): benchmarks/load/h2.sh 1 8 "falconet-libuv nginx"
# Installs h2load (nghttp2-client) and nginx from Debian when missing. Ports: the given one and the next. The server runs
# on CPU 0 (one loop, one nginx worker) and h2load on CPU 1 when the machine has two cores; see common.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
servers="${3:-falconet-libuv falconet-sockets kestrel kestrel-inline nginx}"
port="${4:-19500}"
warmup=2
source benchmarks/load/common.sh
need_tools h2load:nghttp2-client nginx:nginx

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null
sample=samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll
kestrel=benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll

# nginx answering /plaintext and /json from its config over h2c, tuned as TechEmpower's nginx entry.
nginx_config() {
  mkdir -p "$work/nginx/logs"
  cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
timer_resolution 1000ms;
daemon off;
error_log $work/nginx/logs/error.log error;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  keepalive_requests 1000000000;
  http2_max_requests 1000000000;
  http2_max_concurrent_streams 128;
  keepalive_timeout 130s;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$port http2;
    location = /plaintext { default_type text/plain; return 200 'Hello, World!'; }
    location = /json { default_type application/json; return 200 '{"message":"Hello, World!"}'; }
  }
}
CONF
}

# start NAME: the server on $port, pinned to the server CPU; sets $server_pid (every command execs, so it is the server's own).
start() {
  local command environment=(env)
  case $1 in
    falconet-libuv) command=(dotnet "$sample" --port "$port" --transport libuv --protocols http2) ;;
    falconet-sockets) command=(dotnet "$sample" --port "$port" --transport sockets --protocols http2) ;;
    kestrel) command=(dotnet "$kestrel" --port "$port" --http2) ;;
    kestrel-inline) command=(dotnet "$kestrel" --port "$port" --http2); environment+=(DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1) ;;
    nginx) nginx_config; command=("$(tool_path nginx)" -p "$work/nginx" -c "$work/nginx/nginx.conf") ;;
    *) echo "unknown server $1" >&2; exit 2 ;;
  esac
  "${environment[@]}" "${server_cpu[@]}" "${command[@]}" >"$work/$1.log" 2>&1 &
  server_pid=$!
  wait_for_port "$port"
}

stop() {
  kill -TERM "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# cpu_ticks PID: user + system time in clock ticks of the process and its children (nginx's worker).
cpu_ticks() {
  local pid total=0
  for pid in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}

# measure PATH STREAMS: one warm-up run, then the measured one; prints "requests/s µs-per-request".
measure() {
  local url="http://127.0.0.1:$port$1" output before after requests
  "${client_cpu[@]}" h2load -c "$connections" -m "$2" -t 1 -D "$warmup" "$url" >/dev/null
  before=$(cpu_ticks "$server_pid")
  output=$("${client_cpu[@]}" h2load -c "$connections" -m "$2" -t 1 -D "$duration" "$url")
  after=$(cpu_ticks "$server_pid")
  if ! printf '%s\n' "$output" | grep -q "0 failed, 0 errored, 0 timeout"; then
    printf '%s\n' "$output" | grep -E "requests:|status codes:" >&2
  fi
  requests=$(printf '%s\n' "$output" | awk '/^requests:/ {print $8}')
  awk -v r="$requests" -v d="$duration" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.0f %.2f\n", r / d, (r > 0 ? t / hz * 1e6 / r : 0) }'
}

echo "| Server | Path | Streams per connection | Requests/s | Server CPU µs/request |"
echo "| --- | --- | ---: | ---: | ---: |"
for server in $servers; do
  start "$server"
  for path in /plaintext /json; do
    for streams in 1 16; do
      read -r rps cpu < <(measure "$path" "$streams")
      echo "| $server | $path | $streams | $rps | $cpu |"
    done
  done
  stop
done
