#!/usr/bin/env bash
# Soak: runs the sample for a while under a mix of valid, invalid, slow, abandoned, reset and large-body connections on
# loopback (benchmarks/Falconet.Soak), then lets it idle, and reports what was served and refused, resident memory at
# start, peak and end, file descriptors (and sockets among them) at start and end, and pool blocks outstanding after the
# stop (must be 0).
#
#   benchmarks/soak/soak.sh [--tls auto|sslstream|openssl] [seconds=300] [transport=sockets|libuv|iouring] [idle_seconds=60]
#
# With --tls the same mix runs over HTTPS, plus TLS's own hostile clients (garbage instead of a ClientHello, handshakes
# that stop half-way, records cut short or failing authentication after the handshake, closes with and without
# close_notify): the script makes a self-signed certificate in its work directory, starts the sample with --https-port
# (SOAK_HTTPS_PORT, by default SOAK_PORT + 1), --https-cert, --https-key and --tls-engine, and points the client there.
# The sample keeps its 10 s TLS handshake timeout (it has no option for it), so the idle time must be at least 12 s:
# long enough for a handshake the load left stalled to be closed by that timeout before the count at the end.
#
# Exits non-zero when the client saw an unexpected answer, a block is outstanding or a socket leaked. Prints a Markdown
# summary for docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/soak/common.sh

engine=""
positional=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --tls) engine="${2:-(none)}"; shift $(($# > 1 ? 2 : 1)) ;;
    --tls=*) engine="${1#--tls=}"; shift ;;
    *) positional+=("$1"); shift ;;
  esac
done
set -- ${positional[@]+"${positional[@]}"}

seconds="${1:-300}"
transport="${2:-sockets}"
idle="${3:-60}"

sample_options=(--transport "$transport")
scheme="plain HTTP"
case "$engine" in
  "") ;;
  auto|sslstream|openssl)
    if [ "$idle" -lt 12 ]; then
      echo "--tls needs idle_seconds of at least 12 (the sample's TLS handshake timeout is 10 s), not $idle" >&2
      exit 2
    fi
    make_certificate
    sample_options+=(--https-port "$https_port" --https-cert "$work/cert.pem" --https-key "$work/key.pem" --tls-engine "$engine")
    client_port=$https_port
    client_options=(--tls)
    scheme="HTTPS with the $engine TLS engine"
    ;;
  *) echo "--tls takes auto, sslstream or openssl, not '$engine'" >&2; exit 2 ;;
esac

build
start_sample "${sample_options[@]}"
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

echo "## Soak: $seconds s, $transport transport, $scheme, then $idle s idle"
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
