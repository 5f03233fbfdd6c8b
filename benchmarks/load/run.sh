#!/usr/bin/env bash
# The load figures of docs/benchmarks.md in one command. It installs what is missing from Debian (wrk, nginx, gnuplot,
# nghttp2-client for h2load, openssl, linux-perf, strace), builds Release, builds the C peer and the constant-rate
# client with gcc, then runs the sections (benchmarks/load/harness.py) into one results directory and writes its
# report (report.py): Markdown per section, charts, the raw rows. With --publish it also rebuilds the generated parts
# of docs/benchmarks.md and its charts from that directory.
#
#   benchmarks/load/run.sh [--publish] [--no-build] [harness options]
#
#   --sections LIST     throughput latency scaling churn handshakes idle tls aspnetcore h2 [all, in that order];
#                       optional: variants, tlsbytes (the tls section's response sizes alone)
#   --quick             smoke run: 1 s figures, 1 round, fewer cells; proves every part works, its figures mean nothing
#   --plan              print what would run and the estimated duration, run nothing
#   --servers LIST      servers instead of each section's own list (servers.py names them)
#   --shapes LIST       only these cells of the grid sections (harness.py's SHAPES, e.g. grpc-h2load-m16)
#   --connections LIST  connection counts for every shape of the grid sections
#   --rounds N          rounds per section (no rounds are added where servers come close)
#   --duration S        seconds per figure [8]
#   --warmup S          warm-up seconds per server start [10]
#   --port N            servers listen on N, N+1 (HTTPS) and N+2 (HTTP/2) [18090]
#   --out DIR           results directory [artifacts/load/<UTC time>]
#   --profile SERVER    instead: a perf profile of SERVER pinned, /plaintext without pipelining (see profile.py)
#   --depth N           with --profile: N pipelined requests per write [1]
#
# TechEmpower's Kestrel entry is taken from $FALCONET_PLATFORM_BENCHMARKS (a built PlatformBenchmarks.dll) or
# artifacts/peers/PlatformBenchmarks/PlatformBenchmarks.dll; without it its rows say it was skipped.
#
# Figures of record (about 2 hours on 2 cores): benchmarks/publish.sh
# Smoke run of every section (about 9 minutes after the build):  benchmarks/load/run.sh --quick
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/load/common.sh

publish=false build=true out="" arguments=() command_line=benchmarks/load/run.sh
for argument in "$@"; do
  if [[ $argument == *" "* ]]; then command_line="$command_line \"$argument\""; else command_line="$command_line $argument"; fi
done
while [ "$#" -gt 0 ]; do
  case $1 in
    --publish) publish=true ;;
    --no-build) build=false ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) arguments+=("$1") ;;
  esac
  shift
done

need_tools wrk:wrk nginx:nginx gcc:gcc gnuplot:gnuplot-nox python3:python3 h2load:nghttp2-client openssl:openssl \
  perf:linux-perf strace:strace taskset:util-linux
if $build; then
  echo "building Release" >&2
  for project in samples/Plaintext samples/AspNetCore benchmarks/Peers/KestrelApp benchmarks/Peers/AspNetCoreKestrel benchmarks/PayloadServer benchmarks/GrpcLoad; do
    dotnet build "$project" -c Release -v q -nologo >/dev/null
  done
fi
mkdir -p artifacts/load
gcc -O2 -Wall -Wextra -Werror -pthread -o artifacts/load/c-epoll benchmarks/Peers/CEpoll/c-epoll.c
if [ ! -f /usr/include/liburing.h ]; then
  echo "installing liburing-dev (apt-get)" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev >/dev/null
fi
gcc -O2 -Wall -Wextra -Werror -pthread -o artifacts/load/c-uring benchmarks/Peers/CUring/c-uring.c -luring
gcc -O2 -Wall -Wextra -Werror -pthread -o artifacts/load/loadgen benchmarks/load/loadgen.c -lm

if [ -z "$out" ]; then out=artifacts/load/$(date -u +%Y%m%d-%H%M%SZ); fi
python3 benchmarks/load/harness.py --command "$command_line" --out "$out" "${arguments[@]}"
for argument in "${arguments[@]}"; do
  case $argument in --plan|--profile) exit 0 ;; esac
done
python3 benchmarks/load/report.py "$out" $($publish && echo --publish)
