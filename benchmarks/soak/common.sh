# Shared by the soak scripts (sourced from the repository root): build, start the sample, read its resident memory and
# descriptors from /proc, sample them once a second. The sample runs on port 19320 (SOAK_PORT to change it; its HTTPS
# port, when a script asks for one, is SOAK_HTTPS_PORT, by default the next); the scripts stop only the sample they
# started (SIGTERM, which the sample handles as Ctrl+C).

port=${SOAK_PORT:-19320}
https_port=${SOAK_HTTPS_PORT:-$((port + 1))}
work=$(mktemp -d)

# The soak client's target: the sample's plain port unless a script points it elsewhere (client_port, client_options).
client_port=$port
client_options=()

build() {
  dotnet build samples/Plaintext -c Release -v q -nologo >/dev/null
  dotnet build benchmarks/Falconet.Soak -c Release -v q -nologo >/dev/null
}

# start_sample [sample options...]: starts the sample with --stats, sets $pid, waits until it listens on the port the
# client will use ($client_port: the HTTPS one, bound after the plain one, when a script set it so).
start_sample() {
  dotnet samples/Plaintext/bin/Release/net10.0/Falconet.Samples.Plaintext.dll --port "$port" --stats "$@" >"$work/sample.out" 2>&1 &
  pid=$!
  trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$client_port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "the sample did not start: $(cat "$work/sample.out")" >&2
  return 1
}

# stop_sample: SIGTERM, then the sample prints its --stats lines into $work/sample.out.
stop_sample() {
  kill -TERM "$pid"
  wait "$pid" || true
  trap - EXIT
}

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
fds() { ls "/proc/$pid/fd" | wc -l; }
# Sockets only: the runtime keeps every assembly it loads open, so the total grows as code paths are first used.
sockets() { ls -l "/proc/$pid/fd" | grep -c 'socket:' || true; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# start_sampler: one line per second into $work/samples.txt (elapsed seconds, resident KiB, descriptors); sets $sampler.
start_sampler() {
  (
    start=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
      echo "$((SECONDS - start)) $(rss_kib) $(fds)"
      sleep 1
    done
  ) >"$work/samples.txt" &
  sampler=$!
}

peak_rss() { awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$work/samples.txt"; }

# make_certificate: a self-signed ECDSA P-256 certificate for localhost and its key, $work/cert.pem and $work/key.pem.
make_certificate() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
}

# soak_client SECONDS PROFILE: runs the soak client against the sample; its report goes to $work/client-PROFILE.out.
soak_client() {
  dotnet benchmarks/Falconet.Soak/bin/Release/net10.0/Falconet.Soak.dll --port "$client_port" --seconds "$1" --profile "$2" \
    ${client_options[@]+"${client_options[@]}"} >"$work/client-$2.out"
}
