#!/usr/bin/env bash
# Soak: runs the sample for a while under a mix of valid, invalid, slow, abandoned, reset and large-body connections on
# loopback (benchmarks/Falconet.Soak), then lets it idle, and reports what was served and refused, resident memory at
# start, peak and end, file descriptors (and sockets among them) at start and end, and pool blocks outstanding after the
# stop (must be 0).
#
#   benchmarks/soak/soak.sh [seconds=300] [transport=sockets|libuv|iouring] [idle_seconds=60]
#
# Exits non-zero when the client saw an unexpected answer, a block is outstanding or a socket leaked. Prints a Markdown
# summary for docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/soak/common.sh

seconds="${1:-300}"
transport="${2:-sockets}"
idle="${3:-60}"

build
start_sample --transport "$transport"
rss_start=$(rss_kib)
fds_start=$(fds)
sockets_start=$(sockets)
start_sampler

client_status=0
soak_client "$seconds" soak || client_status=$?
rss_after_load=$(rss_kib)
sleep "$idle"
rss_end=$(rss_kib)
fds_end=$(fds)
sockets_end=$(sockets)
kill "$sampler" 2>/dev/null || true
rss_peak=$(peak_rss)
stop_sample

echo "## Soak: $seconds s, $transport transport, then $idle s idle"
echo
echo '```'
cat "$work/client-soak.out"
grep -v '^Falconet listening' "$work/sample.out"
echo '```'
echo
echo "| Resident memory at start | peak | after the load | after $idle s idle | Descriptors at start / end | of them sockets |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| $(mib "$rss_start") MiB | $(mib "$rss_peak") MiB | $(mib "$rss_after_load") MiB | $(mib "$rss_end") MiB | $fds_start / $fds_end | $sockets_start / $sockets_end |"
echo
echo "Per-second samples (seconds, resident KiB, descriptors): $work/samples.txt"

status=0
grep -q 'blocks_outstanding=0 ' "$work/sample.out" || { echo "pool blocks outstanding after the stop" >&2; status=1; }
[ "$sockets_end" -le "$sockets_start" ] || { echo "sockets: $sockets_start at start, $sockets_end at end" >&2; status=1; }
[ "$client_status" -eq 0 ] || { echo "the client saw unexpected answers" >&2; status=1; }
exit "$status"
