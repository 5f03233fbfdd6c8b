# Shared by the load scripts (sourced from the repository root): CPU pinning, waiting for a port, one wrk run.
# The server is pinned to CPU 0 and wrk to CPU 1 when the machine has two or more cores, so they do not share one.
# Servers are stopped with SIGTERM: a background job of a non-interactive shell starts with SIGINT ignored, and
# .NET keeps that disposition.

load_dir=benchmarks/load
command -v wrk >/dev/null || { echo "wrk is required: apt-get install wrk" >&2; exit 1; }
if [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); else server_cpu=(); client_cpu=(); fi

wait_for_port() { # PORT
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2; return 1
}

# run_wrk CONNECTIONS SECONDS URL DEPTH [--latency]: wrk's whole output, DEPTH requests pipelined per write.
run_wrk() {
  "${client_cpu[@]}" wrk -t1 -c"$1" -d"$2s" ${5:-} -s "$load_dir/pipeline.lua" "$3" -- "$4"
}

# warm_up CONNECTIONS PORT: tiered JIT, pools and connection set-up, 3 s of pipelined plaintext.
warm_up() {
  wait_for_port "$2"
  run_wrk "$1" 3 "http://127.0.0.1:$2/plaintext" 16 >/dev/null
}
