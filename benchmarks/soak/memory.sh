#!/usr/bin/env bash
# Resident memory over a load and the idle time after it. Three phases: ordinary keep-alive load (64 connections
# pipelining /plaintext and /json), a burst of 1,000 connections that pipeline 500 requests each and read them slowly,
# and 64 clients posting bodies of up to 4 MiB; then idle. Prints the resident memory at start, after each phase, at the
# peak and after the idle time, and the sample's pool figures (slabs allocated and released).
#
#   benchmarks/soak/memory.sh [phase_seconds=30] [idle_seconds=60] [transport=sockets]
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/soak/common.sh

phase="${1:-30}"
idle="${2:-60}"
transport="${3:-sockets}"

build
start_sample --transport "$transport"
rss_start=$(rss_kib)
start_sampler
soak_client "$phase" valid
rss_valid=$(rss_kib)
soak_client "$phase" burst
rss_burst=$(rss_kib)
soak_client "$phase" large
rss_large=$(rss_kib)
sleep "$idle"
rss_idle=$(rss_kib)
kill "$sampler" 2>/dev/null || true
rss_peak=$(peak_rss)
stop_sample

echo "## Resident memory: $phase s per phase, then $idle s idle ($transport transport)"
echo
echo "| At start | after the keep-alive load | after the burst | after the large bodies | peak | after $idle s idle |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| $(mib "$rss_start") MiB | $(mib "$rss_valid") MiB | $(mib "$rss_burst") MiB | $(mib "$rss_large") MiB | $(mib "$rss_peak") MiB | $(mib "$rss_idle") MiB |"
echo
echo '```'
cat "$work/client-valid.out" "$work/client-burst.out" "$work/client-large.out"
grep -v '^Falconet listening' "$work/sample.out"
echo '```'
echo
echo "Per-second samples (seconds, resident KiB, descriptors): $work/samples.txt"
