#!/usr/bin/env bash
# HTTPS load runs on loopback, printed as Markdown tables for docs/benchmarks.md ("HTTPS"):
#
#   throughput  response bodies of 256 B, 4 KiB, 64 KiB and 1 MiB, TLS against plain TCP on the same transport and
#               server (benchmarks/PayloadServer), in GB/s of response bytes (wrk's Transfer/sec)
#   requests    requests/s of /plaintext over keep-alive TLS connections, without and with pipelining (depth 1 and 16):
#               the Falconet sample, the Kestrel peer and nginx, all with the same certificate, plus the sample's
#               allocated bytes per request over the whole run
#
#   benchmarks/load/tls.sh [duration_seconds=10] [connections=64] [transports="sockets libuv"] [parts="throughput requests"] [port=19400]
#
# Smoke run (proves the script works, figures mean nothing): benchmarks/load/tls.sh 1 8 sockets
# Installs wrk, openssl and nginx from Debian when missing. Ports: the given one to 30 above it. run.sh --https runs
# this after the plain comparison. Pinning, the TechEmpower request and stopping: see common.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
transports="${3:-sockets libuv}"
parts="${4:-throughput requests}"
port="${5:-19400}"
source benchmarks/load/common.sh
need_tools wrk:wrk openssl:openssl nginx:nginx

sample_port=$port sample_https_port=$((port + 1))
payload_port=$((port + 10)) payload_https_port=$((port + 11))
kestrel_port=$((port + 20)) kestrel_https_port=$((port + 21))
nginx_https_port=$((port + 30))
sizes="256 4096 65536 1048576"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# make_certificate: one self-signed P-256 certificate for localhost, shared by every server (the docs' command).
make_certificate() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 1 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
}

# start NAME COMMAND...: runs a server pinned to the server CPU, output in $work/NAME.log; sets $started_pid.
start() {
  local name=$1; shift
  "${server_cpu[@]}" "$@" >"$work/$name.log" 2>&1 &
  started_pid=$!
  pids+=("$started_pid")
}

# stop PID: SIGTERM, then wait for the graceful stop (the Falconet processes print their stats then).
stop() {
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# gigabytes_per_second WRK_OUTPUT: wrk's Transfer/sec (binary units) in GB/s (10^9 bytes).
gigabytes_per_second() {
  printf '%s\n' "$1" | awk '/Transfer\/sec/ {
    v = $2; unit = substr(v, length(v) - 1); n = substr(v, 1, length(v) - 2) + 0
    if (unit == "GB") n *= 1024 * 1024 * 1024; else if (unit == "MB") n *= 1024 * 1024; else if (unit == "KB") n *= 1024
    else n = v + 0
    printf "%.3f", n / 1e9 }'
}

requests_per_second() { printf '%s\n' "$1" | awk '/Requests\/sec/ {print $2}'; }

# report_errors WRK_OUTPUT: wrk's socket errors or non-2xx answers go to stderr, so a broken run is not silent.
report_errors() { printf '%s\n' "$1" | grep 'Non-2xx\|Socket errors' >&2 || true; }

# throughput TRANSPORT: one payload server, each size over plain HTTP then HTTPS.
throughput() {
  local transport=$1 out plain tls
  start payload-"$transport" dotnet benchmarks/PayloadServer/bin/Release/net10.0/Falconet.Benchmarks.PayloadServer.dll \
    --port "$payload_port" --https-port "$payload_https_port" --https-cert "$work/cert.pem" --https-key "$work/key.pem" --transport "$transport"
  local pid=$started_pid
  wait_for_port "$payload_https_port"
  run_wrk "$connections" "$duration" "https://127.0.0.1:$payload_https_port/bytes/4096" 1 >/dev/null
  echo
  echo "Throughput on $transport: wrk -t1 -c$connections -d${duration}s, response bodies, GB/s of response bytes"
  echo
  echo "| Body | Plain GB/s | TLS GB/s | TLS / plain |"
  echo "| ---: | ---: | ---: | ---: |"
  for size in $sizes; do
    out=$(run_wrk "$connections" "$duration" "http://127.0.0.1:$payload_port/bytes/$size" 1); report_errors "$out"
    plain=$(gigabytes_per_second "$out")
    out=$(run_wrk "$connections" "$duration" "https://127.0.0.1:$payload_https_port/bytes/$size" 1); report_errors "$out"
    tls=$(gigabytes_per_second "$out")
    echo "| $size B | $plain | $tls | $(awk -v t="$tls" -v p="$plain" 'BEGIN { if (p > 0) printf "%.2f", t / p; else print "-" }') |"
  done
  stop "$pid"
  echo
  echo "Payload server: $(grep '^requests=' "$work/payload-$transport.log" || echo 'no stats line')"
}

# nginx_config: one worker (one CPU, as the other servers), TLS 1.2/1.3, keep-alive without a request limit.
nginx_config() {
  cat >"$work/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:$nginx_https_port ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    location /plaintext { default_type text/plain; return 200 "Hello, World!"; }
  }
}
EOF
}

# measure_requests NAME PORT: /plaintext over HTTPS at depth 1 and 16, after a warm-up.
declare -A rps
measure_requests() {
  local name=$1 port=$2 out
  wait_for_port "$port"
  run_wrk "$connections" 3 "https://127.0.0.1:$port/plaintext" 16 >/dev/null
  for depth in 1 16; do
    out=$(run_wrk "$connections" "$duration" "https://127.0.0.1:$port/plaintext" "$depth"); report_errors "$out"
    rps[$name,$depth]=$(requests_per_second "$out")
  done
}

# requests TRANSPORT: the sample on TRANSPORT, then Kestrel, then nginx (the peers do not depend on the transport).
requests() {
  local transport=$1
  start sample-"$transport" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$sample_port" \
    --https-port "$sample_https_port" --https-cert "$work/cert.pem" --https-key "$work/key.pem" --transport "$transport" --stats
  local pid=$started_pid
  measure_requests "Falconet ($transport)" "$sample_https_port"
  stop "$pid"
  allocation="$(grep '^requests=' "$work/sample-$transport.log" || echo 'no stats line')"

  if [ -z "${rps[Kestrel,1]:-}" ]; then
    start kestrel dotnet benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll --port "$kestrel_port" \
      --https-port "$kestrel_https_port" --https-cert "$work/cert.pem" --https-key "$work/key.pem"
    pid=$started_pid
    measure_requests Kestrel "$kestrel_https_port"
    stop "$pid"

    nginx_config
    start nginx "$(tool_path nginx)" -c "$work/nginx.conf" -e "$work/nginx-error.log"
    pid=$started_pid
    measure_requests nginx "$nginx_https_port"
    stop "$pid"
  fi

  echo
  echo "Requests over keep-alive TLS on $transport: /plaintext, wrk -t1 -c$connections -d${duration}s, same certificate"
  echo
  echo "| Server | Depth 1 req/s | Depth 16 req/s | Falconet / server, depth 1 | Falconet / server, depth 16 |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  for name in "Falconet ($transport)" Kestrel nginx; do
    echo "| $name | ${rps[$name,1]} | ${rps[$name,16]} | $(ratio "${rps[Falconet ($transport),1]}" "${rps[$name,1]}") | $(ratio "${rps[Falconet ($transport),16]}" "${rps[$name,16]}") |"
  done
  echo
  echo "Falconet sample over the whole run: $allocation"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
dotnet build benchmarks/PayloadServer -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null
make_certificate
echo "HTTPS load run, $(date -u +%Y-%m-%d), $(nproc) CPUs, server on CPU 0 and wrk on CPU 1 when there are two, $(openssl version)"
for transport in $transports; do
  for part in $parts; do
    case $part in
      throughput) throughput "$transport" ;;
      requests) requests "$transport" ;;
      *) echo "unknown part $part (throughput, requests)" >&2; exit 2 ;;
    esac
  done
done
