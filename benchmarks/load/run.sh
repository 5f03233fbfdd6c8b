#!/usr/bin/env bash
# The load comparison of record in one command. It builds Release, installs what is missing from Debian (wrk, nginx,
# gnuplot), builds the ceiling server with gcc, then runs TechEmpower's shapes with TechEmpower's request headers on
# loopback against Falconet on each transport, the Kestrel peer in both process modes, nginx and the ceiling.
# Rounds interleave the servers: each round starts every server in turn (in a rotated order), warms it up and
# measures every shape at every connection count, so drift on the machine hits all of them alike. It writes the
# results (Markdown tables, a chart, the raw figures and every wrk output) into one directory and prints where.
#
#   benchmarks/load/run.sh [options]
#
#   --duration S        seconds per figure [10]
#   --rounds N          interleaved rounds [3]
#   --connections LIST  connection counts ["16 64 256"]
#   --placements LIST   "pinned" (server on CPU 0 with one loop, one nginx worker, one ceiling thread; wrk on CPU 1)
#                       and/or "unpinned" (every server on every core: one loop, worker or thread per core) ["pinned unpinned"]
#   --scenarios LIST    plaintext16 (/plaintext, 16 pipelined), plaintext1 and json1 (no pipelining) [all three]
#   --servers LIST      server names or sets, below [record]
#   --warmup S          seconds of warm-up per server start, shared by the scenarios (whole seconds each), so that JIT-compiled servers
#                       run tier-1 code when measured [10]
#   --port N            the port every server listens on in turn [18090]
#   --out DIR           results directory [artifacts/load/<UTC time>]
#   --quick             smoke run: 1 s per figure, 1 round, 16 connections, 1 s warm-up (figures mean nothing)
#   --publish           also copy the chart to docs/images/load-requests.svg, the one docs/benchmarks.md shows
#   --https             afterwards, the HTTPS scenarios (tls.sh) with the same duration and the first connection count
#   --profile [SERVER]  instead of the comparison: a perf profile of SERVER [falconet-libuv], pinned, answering
#                       /plaintext without pipelining for --duration seconds at the first connection count, split
#                       kernel / runtime / server (perf from linux-perf)
#   --no-build          use what is built
#
# Servers:
#   falconet-libuv       the sample with --transport libuv (the default where libuv1 is installed)
#   falconet-sockets     the sample with --transport sockets
#   kestrel              the Kestrel peer (benchmarks/Peers/KestrelPlaintext) as it comes
#   kestrel-inline       the Kestrel peer with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 and inline scheduling
#   nginx                Debian's nginx returning the same bodies from its config, keep-alive unlimited, no access log,
#                        tuned as TechEmpower's nginx entry
#   ceiling              benchmarks/Peers/Ceiling: canned responses, no parsing (what the client and kernel allow)
#   falconet-libuv-handoff      libuv, loop 0 accepting and handing connections round robin (instead of SO_REUSEPORT)
#   falconet-libuv-threadpool   libuv with handlers on the thread pool (instead of inline on the loop)
#   falconet-sockets-iothreads  sockets with --scheduling iothreads (instead of the thread pool)
#   falconet-sockets-inline     sockets with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1
#   falconet-sockets-inline-iothreads  both of the above
# Sets: record (the first six), transports (every falconet-*), all.
#
# Figures of record (about 70 minutes): benchmarks/load/run.sh --publish
# Smoke run (about 3 minutes):          benchmarks/load/run.sh --quick
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/load/common.sh

duration=10 rounds=3 connections="16 64 256" placements="pinned unpinned" scenarios="plaintext16 plaintext1 json1"
servers=record warmup=10 port=18090 out="" publish=false https=false profile="" build=true
command_line=benchmarks/load/run.sh
for argument in "$@"; do
  if [[ $argument == *" "* ]]; then command_line="$command_line \"$argument\""; else command_line="$command_line $argument"; fi
done
while [ "$#" -gt 0 ]; do
  case $1 in
    --duration) duration=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --connections) connections=$2; shift ;;
    --placements) placements=$2; shift ;;
    --scenarios) scenarios=$2; shift ;;
    --servers) servers=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --port) port=$2; shift ;;
    --out) out=$2; shift ;;
    --quick) duration=1 rounds=1 connections=16 warmup=1 ;;
    --publish) publish=true ;;
    --https) https=true ;;
    --profile)
      profile=falconet-libuv
      if [ "$#" -gt 1 ] && [[ $2 != --* ]]; then profile=$2; shift; fi ;;
    --no-build) build=false ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done

record_servers="falconet-libuv falconet-sockets kestrel kestrel-inline nginx ceiling"
transport_servers="falconet-libuv falconet-libuv-handoff falconet-libuv-threadpool falconet-sockets falconet-sockets-iothreads falconet-sockets-inline falconet-sockets-inline-iothreads"
expanded=""
for name in $servers; do
  case $name in
    record) expanded="$expanded $record_servers" ;;
    transports) expanded="$expanded $transport_servers" ;;
    all) expanded="$expanded $transport_servers kestrel kestrel-inline nginx ceiling" ;;
    *) [[ " $record_servers $transport_servers " == *" $name "* ]] || { echo "unknown server $name" >&2; exit 2; }
       expanded="$expanded $name" ;;
  esac
done
# Each server once, in the order given.
servers=$(tr ' ' '\n' <<<"$expanded" | awk 'NF && !seen[$0]++' | tr '\n' ' ')
if [ "$(nproc)" -lt 2 ] && [[ $placements == *pinned* ]]; then
  echo "one CPU: pinned placement needs two, running unpinned only" >&2; placements=unpinned
fi

tools=(wrk:wrk nginx:nginx gcc:gcc gnuplot:gnuplot-nox python3:python3)
if [ -n "$profile" ]; then tools+=(perf:linux-perf); fi
need_tools "${tools[@]}"
nginx_bin=$(tool_path nginx)

if [ -z "$out" ]; then out=artifacts/load/$(date -u +%Y%m%d-%H%M%SZ)${profile:+-profile}; fi
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
if $build; then
  echo "building Release" >&2
  dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
  dotnet build benchmarks/Peers/KestrelPlaintext -c Release -v q -nologo >/dev/null
fi
mkdir -p artifacts/load
gcc -O2 -Wall -Wextra -Werror -pthread -o artifacts/load/ceiling benchmarks/Peers/Ceiling/ceiling.c

sample=samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll
kestrel=benchmarks/Peers/KestrelPlaintext/bin/Release/net10.0/KestrelPlaintext.dll

# nginx_config WORKERS: a config answering /plaintext and /json like the sample does, tuned as TechEmpower's nginx
# entry is (clock read once a second, no version in the Server header, one listening socket per worker).
nginx_config() {
  mkdir -p "$out/nginx/logs"
  cat >"$out/nginx/nginx.conf" <<EOF
worker_processes $1;
timer_resolution 1000ms;
daemon off;
error_log $out/nginx/logs/error.log error;
pid $out/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  server_tokens off;
  keepalive_requests 1000000000;
  keepalive_timeout 130s;
  client_body_temp_path $out/nginx/body;
  proxy_temp_path $out/nginx/proxy;
  fastcgi_temp_path $out/nginx/fastcgi;
  uwsgi_temp_path $out/nginx/uwsgi;
  scgi_temp_path $out/nginx/scgi;
  server {
    listen 127.0.0.1:$port reuseport;
    location = /plaintext { default_type text/plain; return 200 'Hello, World!'; }
    location = /json { default_type application/json; return 200 '{"message":"Hello, World!"}'; }
  }
}
EOF
}

# place PLACEMENT: the CPU prefixes of the server and of wrk.
place() {
  if [ "$1" = pinned ]; then server_prefix=(taskset -c 0); client_cpu=(taskset -c 1); else server_prefix=(); client_cpu=(); fi
}

# free_port: refuses to start a server where one already listens (SO_REUSEPORT would let both serve the port).
free_port() {
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "something already listens on port $port: stop it or pick another --port" >&2; exit 1
  fi
}

# start SERVER LOG [NAME=VALUE...]: starts SERVER in the background on $port with the current placement, its output
# in LOG, the assignments in its environment; sets $server_pid. Every command execs (env, taskset), so the PID is
# the server's own.
server_pid=""
start() {
  local name=$1 log=$2 environment=(env "${@:3}") workers=1 inline=DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 command
  if [ "${#server_prefix[@]}" -eq 0 ]; then workers=$(nproc); fi
  free_port
  case $name in
    falconet-libuv) command=(dotnet "$sample" --transport libuv) ;;
    falconet-libuv-handoff) command=(dotnet "$sample" --libuv-distribution handoff) ;;
    falconet-libuv-threadpool) command=(dotnet "$sample" --transport libuv --scheduling threadpool) ;;
    falconet-sockets) command=(dotnet "$sample" --transport sockets) ;;
    falconet-sockets-iothreads) command=(dotnet "$sample" --transport sockets --scheduling iothreads) ;;
    falconet-sockets-inline) environment+=("$inline"); command=(dotnet "$sample" --transport sockets) ;;
    falconet-sockets-inline-iothreads) environment+=("$inline"); command=(dotnet "$sample" --transport sockets --scheduling iothreads) ;;
    kestrel) command=(dotnet "$kestrel") ;;
    kestrel-inline) environment+=("$inline"); command=(dotnet "$kestrel") ;;
    nginx) nginx_config "$workers"; command=("$nginx_bin" -p "$out/nginx" -c "$out/nginx/nginx.conf") ;;
    ceiling) command=(artifacts/load/ceiling "$port" "$workers") ;;
    *) echo "unknown server $name" >&2; exit 2 ;;
  esac
  case $name in
    falconet-*) command+=(--port "$port" --stats) ;;
    kestrel*) command+=(--port "$port") ;;
  esac
  "${environment[@]}" "${server_prefix[@]}" "${command[@]}" >"$log" 2>&1 &
  server_pid=$!
}

# stop: SIGTERM to the running server, then up to 20 s for its graceful stop (Falconet prints its --stats line then);
# SIGKILL after that, said on stderr.
stop() {
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 200); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$server_pid" 2>/dev/null; then
    echo "server $server_pid did not stop within 20 s of SIGTERM: killed" >&2
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
trap stop EXIT
trap 'exit 130' INT TERM

# cpu_ticks PID: user+system clock ticks of the process (all its threads, ended ones included) and its direct
# children (nginx's workers).
cpu_ticks() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

url() { # SCENARIO
  case $1 in
    plaintext16|plaintext1) echo "http://127.0.0.1:$port/plaintext" ;;
    json1) echo "http://127.0.0.1:$port/json" ;;
    *) echo "unknown scenario $1" >&2; exit 2 ;;
  esac
}
depth() { if [ "$1" = plaintext16 ]; then echo 16; else echo 1; fi; }

# measure SCENARIO CONNECTIONS LOG -> one line: requests/s, p50 and p99 in µs, server CPU µs per request,
# requests, errors (socket errors and non-2xx answers; wrk's own text in LOG).
measure() {
  local before after
  before=$(cpu_ticks "$server_pid")
  run_wrk "$2" "$duration" "$(url "$1")" "$(depth "$1")" --latency >"$3"
  after=$(cpu_ticks "$server_pid")
  awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /m$/) return v * 60000000; if (v ~ /s$/) return v * 1000000; return v + 0 }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = us($2) }
    $1 == "99%" { p99 = us($2) }
    / requests in / { n = $1 }
    /Socket errors/ { gsub(/,/, ""); errors += $4 + $6 + $8 + $10 }
    /Non-2xx/ { errors += $NF }
    END { printf "%s\t%.1f\t%.1f\t%.3f\t%d\t%d\n", rps + 0, p50, p99, (n > 0 ? ticks / hz * 1000000 / n : 0), n, errors }' "$3"
}

# machine: the lines that say where and how the figures were made.
machine() {
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command=$command_line"
  echo "cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
  echo "cores=$(nproc)"
  echo "kernel=$(uname -sr)"
  echo "dotnet=$(dotnet --version 2>/dev/null || echo none)"
  echo "wrk=$(wrk -v 2>&1 | awk 'NR == 1 { print $2 }')"
  echo "nginx=$("$nginx_bin" -v 2>&1 | sed 's/.*nginx\///')"
  echo "gcc=$(gcc -dumpfullversion)"
  echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
}

profile_run() {
  local name=$1 dir=$out seconds=$duration c=${connections%% *}
  place pinned
  echo "profiling $name: /plaintext without pipelining, $c connections, $seconds s after a ${warmup} s warm-up" >&2
  machine >"$dir/meta.env"
  start "$name" "$dir/logs/$name.log" DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
  wait_for_port "$port"
  run_wrk "$c" "$warmup" "http://127.0.0.1:$port/plaintext" 1 >/dev/null
  # perf samples the server's processes only (nginx's workers are its children), on the cpu-clock software event:
  # hardware counters are not available in every VM. The map files the runtime writes let perf name JIT frames.
  local pids
  pids=$( (pgrep -P "$server_pid" || true) | tr '\n' ,)$server_pid
  perf record -F 4000 -g -e cpu-clock -p "$pids" -o "$dir/perf.data" -- sleep "$seconds" 2>"$dir/logs/perf-record.log" &
  local perf_pid=$!
  run_wrk "$c" "$seconds" "http://127.0.0.1:$port/plaintext" 1 --latency >"$dir/logs/profile-wrk.txt"
  wait "$perf_pid" || true
  local pid=$server_pid
  perf report -i "$dir/perf.data" --no-children --sort dso,sym -n --stdio -g none --percent-limit 0 2>/dev/null >"$dir/perf-self.txt"
  perf report -i "$dir/perf.data" --children --sort sym -n --stdio -g none --percent-limit 0 2>/dev/null >"$dir/perf-children.txt"
  perf report -i "$dir/perf.data" --no-children --sort comm -n --stdio -g none 2>/dev/null >"$dir/perf-threads.txt"
  stop
  rm -f "/tmp/perf-$pid.map" "/tmp/perfinfo-$pid.map"
  echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/meta.env"
  { python3 "$load_dir/profile.py" "$dir/perf-self.txt" "$dir/perf-children.txt" "$dir/perf-threads.txt" "$name"
    echo
    echo "wrk during the profile: $(awk '/Requests\/sec/ { print $2 " requests/s" }' "$dir/logs/profile-wrk.txt"), $c connections, $seconds s;" \
      "$(sed -n 's/^date=//p' "$dir/meta.env"), $(sed -n 's/^cpu=//p' "$dir/meta.env"); load average before $(sed -n 's/^load_before=//p' "$dir/meta.env")." \
      "Command: \`$command_line\`"
  } >"$dir/profile.md"
  cat "$dir/profile.md"
  echo
  echo "Profile: $dir/profile.md (perf data: $dir/perf.data; perf report -i $dir/perf.data for the call graphs)"
}

if [ -n "$profile" ]; then
  profile_run "$profile"
  exit 0
fi

figures=$(( $(wc -w <<<"$scenarios") * $(wc -w <<<"$connections") ))
starts=$(( $(wc -w <<<"$servers") * $(wc -w <<<"$placements") * rounds ))
echo "$starts server starts, $figures figures of ${duration} s each: about $(( starts * (figures * (duration + 1) + warmup + 4) / 60 + 1 )) minutes" >&2
{ machine; echo "duration=$duration"; echo "warmup=$warmup"; } >"$out/meta.env"
printf 'round\tplacement\tserver\tscenario\tconnections\trequests_per_second\tp50_us\tp99_us\tcpu_us_per_request\trequests\terrors\n' >"$out/runs.tsv"
printf 'round\tplacement\tserver\tstats\n' >"$out/stats.tsv"

read -r -a order <<<"$servers"
warmup_each=$(awk -v w="$warmup" -v n="$(wc -w <<<"$scenarios")" 'BEGIN { s = int((w + n - 1) / n); print (s < 1 ? 1 : s) }')
max_connections=$(tr ' ' '\n' <<<"$connections" | sort -n | tail -1)
for round in $(seq 1 "$rounds"); do
  for placement in $placements; do
    place "$placement"
    # Rotate the order each round, so no server always follows the same one.
    for i in $(seq 0 $((${#order[@]} - 1))); do
      server=${order[$(( (i + round - 1) % ${#order[@]} ))]}
      log="$out/logs/$round-$placement-$server"
      start "$server" "$log.server.txt"
      wait_for_port "$port"
      for scenario in $scenarios; do
        run_wrk "$max_connections" "$warmup_each" "$(url "$scenario")" "$(depth "$scenario")" >/dev/null
      done
      for scenario in $scenarios; do
        for c in $connections; do
          line=$(measure "$scenario" "$c" "$log.$scenario.c$c.txt")
          printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$placement" "$server" "$scenario" "$c" "$line" >>"$out/runs.tsv"
          read -r rps _ p99 cpu _ errors <<<"$line"
          printf 'round %s/%s %-8s %-34s %-11s c%-4s %12s req/s  p99 %9s us  %7s us CPU/req%s\n' "$round" "$rounds" \
            "$placement" "$server" "$scenario" "$c" "$rps" "$p99" "$cpu" "$([ "$errors" = 0 ] || echo "  $errors errors")" >&2
        done
      done
      stop
      if [[ $server == falconet-* ]]; then
        printf '%s\t%s\t%s\t%s\n' "$round" "$placement" "$server" "$(grep '^requests=' "$log.server.txt" || echo none)" >>"$out/stats.tsv"
      fi
      sleep 1
    done
  done
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.env"

python3 "$load_dir/report.py" "$out"
if $publish; then
  mkdir -p docs/images
  cp "$out/chart.svg" docs/images/load-requests.svg
  echo "chart copied to docs/images/load-requests.svg; the tables for docs/benchmarks.md are in $out/results.md" >&2
fi
if $https; then
  benchmarks/load/tls.sh "$duration" "${connections%% *}" "sockets libuv" "throughput requests" "$((port + 10))" | tee "$out/https.md"
fi
echo
echo "Results: $out/results.md (chart $out/chart.svg, raw figures $out/runs.tsv, wrk outputs $out/logs/$($https && echo ", HTTPS $out/https.md"))"
