#!/usr/bin/env bash
# Side-by-side load run on loopback of several servers answering the same /plaintext and /json, interleaved:
# every round starts each server in turn, warms it up and measures the three TechEmpower shapes, so drift on a
# shared machine hits every server alike. Prints one Markdown table per placement for docs/benchmarks.md.
#
#   benchmarks/load/compare.sh [duration_seconds=10] [connections=64] [rounds=2] [placements="pinned unpinned"] [servers=...]
#
# Servers (default: all of them):
#   falconet-libuv    the sample with --transport libuv, default options (no environment variable)
#   falconet-libuv-handoff     libuv with loop 0 accepting and handing connections round robin (instead of SO_REUSEPORT)
#   falconet-libuv-threadpool  libuv with handlers on the thread pool (instead of inline on the loop)
#   falconet-sockets  the sample with --transport sockets, default options (no environment variable)
#   kestrel           the Kestrel peer as it comes
#   kestrel-inline    the Kestrel peer with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 and inline scheduling (its best)
#   nginx             Debian's nginx answering the same bodies from its config, keep-alive unlimited, no access log
# Placements: "pinned" puts the server on CPU 0 (one loop, one nginx worker) and wrk on CPU 1; "unpinned" lets the
# server use every core (one loop per core, nginx workers = cores) and wrk floats too.
# Requires wrk and nginx (apt-get install wrk nginx).
set -euo pipefail
cd "$(dirname "$0")/../.."

duration="${1:-10}"
connections="${2:-64}"
rounds="${3:-2}"
placements="${4:-pinned unpinned}"
servers="${5:-falconet-libuv falconet-sockets kestrel kestrel-inline nginx}"
port=18090
source benchmarks/load/common.sh
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx is required: apt-get install nginx" >&2; exit 1; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# nginx_config WORKERS: a config answering /plaintext and /json like the sample does.
nginx_config() {
  mkdir -p "$work/nginx/logs"
  cat >"$work/nginx/nginx.conf" <<EOF
worker_processes $1;
daemon off;
error_log $work/nginx/logs/error.log error;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000000;
  keepalive_timeout 130s;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$port;
    location = /plaintext { default_type text/plain; return 200 'Hello, World!'; }
    location = /json { default_type application/json; return 200 '{"message":"Hello, World!"}'; }
  }
}
EOF
}

# start SERVER PLACEMENT: starts the server in the background and prints its PID.
start() {
  local cpu=()
  if [ "$2" = pinned ]; then cpu=("${server_cpu[@]}"); fi
  case $1 in
    falconet-libuv)
      "${cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$port" --transport libuv --stats >"$work/stats" 2>&1 & ;;
    falconet-libuv-handoff)
      "${cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$port" --libuv-distribution handoff --stats >"$work/stats" 2>&1 & ;;
    falconet-libuv-threadpool)
      "${cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$port" --transport libuv --scheduling threadpool --stats >"$work/stats" 2>&1 & ;;
    falconet-sockets)
      "${cpu[@]}" dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$port" --transport sockets --stats >"$work/stats" 2>&1 & ;;
    kestrel)
      "${cpu[@]}" dotnet benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll --port "$port" >/dev/null 2>&1 & ;;
    kestrel-inline)
      DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 "${cpu[@]}" dotnet benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll --port "$port" >/dev/null 2>&1 & ;;
    nginx)
      if [ "$2" = pinned ]; then nginx_config 1; else nginx_config "$(nproc)"; fi
      "${cpu[@]}" "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" >/dev/null 2>&1 & ;;
    *) echo "unknown server $1" >&2; exit 2 ;;
  esac
  echo $!
}

# cpu_ticks PID: user+system clock ticks of the process and its direct children (nginx's workers), reaped threads included.
cpu_ticks() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

# measure_wrk URL DEPTH PLACEMENT SERVER_PID -> "requests_per_second p50 p99 server_cpu_us_per_request"
# The CPU time the server spent per request does not depend on how much of the machine it got, so it compares
# servers even when other work shares the machine; requests/s does not.
measure_wrk() {
  local out before after
  before=$(cpu_ticks "$4")
  if [ "$3" = pinned ]; then
    out=$(run_wrk "$connections" "$duration" "$1" "$2" --latency)
  else
    out=$(wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$load_dir/pipeline.lua" "$1" -- "$2")
  fi
  if printf '%s\n' "$out" | grep -q 'Non-2xx\|Socket errors'; then
    printf '%s\n' "$out" | grep 'Non-2xx\|Socket errors' >&2
  fi
  after=$(cpu_ticks "$4")
  printf '%s\n' "$out" | awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    '/Requests\/sec/ {rps=$2} $1 == "50%" {p50=$2} $1 == "99%" {p99=$2} / requests in / {n=$1}
     END {printf "%s %s %s %.2f\n", rps, p50, p99, (n > 0 ? ticks / hz * 1000000 / n : 0)}'
}

declare -A results
declare -A stats
scenarios="plaintext16 plaintext1 json1"
for placement in $placements; do
  for round in $(seq 1 "$rounds"); do
    for server in $servers; do
      pid=$(start "$server" "$placement")
      wait_for_port "$port"
      # Warm-up: tiered JIT, pools and connection set-up.
      measure_wrk "http://127.0.0.1:$port/plaintext" 16 "$placement" "$pid" >/dev/null
      results[$placement,$round,$server,plaintext16]=$(measure_wrk "http://127.0.0.1:$port/plaintext" 16 "$placement" "$pid")
      results[$placement,$round,$server,plaintext1]=$(measure_wrk "http://127.0.0.1:$port/plaintext" 1 "$placement" "$pid")
      results[$placement,$round,$server,json1]=$(measure_wrk "http://127.0.0.1:$port/json" 1 "$placement" "$pid")
      # Started in a command substitution, so not this shell's child: poll until it is gone (at most 20 s).
      kill -TERM "$pid"
      for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if [[ $server == falconet-* ]]; then
        stats[$placement,$round,$server]=$(grep '^requests=' "$work/stats" || echo "no stats line")
      fi
      sleep 1
    done
  done
done

# median_ratio: two lines of numbers in, the ratio of their medians out.
median_ratio() {
  awk 'function median(s,   n, v, i, j, t) { n = split(s, v, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }; return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 } NR == 1 { x = median($0) } NR == 2 { y = median($0) } END { if (y > 0) printf "%.2f", x / y; else print "n/a" }'
}

label() {
  case $1 in
    plaintext16) echo "/plaintext, 16 pipelined";;
    plaintext1) echo "/plaintext, no pipelining";;
    json1) echo "/json, no pipelining";;
  esac
}

for placement in $placements; do
  echo
  echo "Placement $placement: wrk -t1 -c$connections -d${duration}s, $rounds interleaved rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
  echo
  header="| Scenario | Round |"; rule="| --- | ---: |"
  for server in $servers; do header="$header $server req/s (p50 / p99; server CPU µs/req) |"; rule="$rule ---: |"; done
  echo "$header"; echo "$rule"
  for scenario in $scenarios; do
    for round in $(seq 1 "$rounds"); do
      row="| $(label "$scenario") | $round |"
      for server in $servers; do
        read -r rps p50 p99 cpu <<<"${results[$placement,$round,$server,$scenario]}"
        row="$row $rps ($p50 / $p99; $cpu) |"
      done
      echo "$row"
    done
  done
  echo
  # Ratios of the median over rounds (round-to-round pairs are interleaved, so medians compare like with like).
  for subject in falconet-libuv falconet-libuv-handoff falconet-libuv-threadpool falconet-sockets; do
    [[ " $servers " == *" $subject "* ]] || continue
    for peer in falconet-libuv nginx kestrel kestrel-inline; do
      [ "$peer" != "$subject" ] || continue
      [[ " $servers " == *" $peer "* ]] || continue
      line="$subject / $peer ($placement):"
      for scenario in $scenarios; do
        a=""; b=""
        for round in $(seq 1 "$rounds"); do
          read -r ra _ _ <<<"${results[$placement,$round,$subject,$scenario]}"; a="$a $ra"
          read -r rb _ _ <<<"${results[$placement,$round,$peer,$scenario]}"; b="$b $rb"
        done
        ratio=$(printf '%s\n%s\n' "$a" "$b" | median_ratio)
        line="$line $(label "$scenario") $ratio;"
      done
      echo "$line"
      line="$subject / $peer ($placement), server CPU per request, lower is better:"
      for scenario in $scenarios; do
        a=""; b=""
        for round in $(seq 1 "$rounds"); do
          read -r _ _ _ ca <<<"${results[$placement,$round,$subject,$scenario]}"; a="$a $ca"
          read -r _ _ _ cb <<<"${results[$placement,$round,$peer,$scenario]}"; b="$b $cb"
        done
        line="$line $(label "$scenario") $(printf '%s\n%s\n' "$a" "$b" | median_ratio);"
      done
      echo "$line"
    done
  done
  echo
  for round in $(seq 1 "$rounds"); do
    for server in $servers; do
      [[ $server == falconet-* ]] || continue
      [ -n "${stats[$placement,$round,$server]:-}" ] && echo "$server --stats, round $round (whole run incl. warm-up): ${stats[$placement,$round,$server]}"
    done
  done
done
