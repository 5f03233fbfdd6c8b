# shellcheck shell=bash disable=SC2034 # the variables set here are read by the scripts that source this file
# Shared by the load scripts (sourced from the repository root): tools from Debian, CPU pinning, waiting for a port,
# one wrk run with the TechEmpower request.
# The server is pinned to CPU 0 and wrk to CPU 1 when the machine has two or more cores, so they do not share one.
# Servers are stopped with SIGTERM: a background job of a non-interactive shell starts with SIGINT ignored, and
# .NET keeps that disposition.

load_dir=benchmarks/load
if [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); else server_cpu=(); client_cpu=(); fi

# The headers TechEmpower's wrk command sends (the Host is its server's name, so the request bytes are the same).
techempower_headers=(
  -H 'Host: tfb-server'
  -H 'Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7'
  -H 'Connection: keep-alive'
)

# need_tools COMMAND:PACKAGE...: installs the Debian package of each missing command with apt-get, as .ci/run does.
need_tools() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${pair%%:*}" ] || missing+=("${pair#*:}")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "installing ${missing[*]} (apt-get)" >&2
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# tool_path COMMAND: the command's path, /usr/sbin included (nginx lives there and is not on every user's PATH).
tool_path() { command -v "$1" 2>/dev/null || echo "/usr/sbin/$1"; }

wait_for_port() { # PORT
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2; return 1
}

# run_wrk CONNECTIONS SECONDS URL DEPTH [wrk options]: wrk's whole output for the TechEmpower request, on the client
# CPU. DEPTH requests go out per write through pipeline.lua; at depth 1 no script runs, so wrk sends its one
# prepared request without a Lua call per request, as TechEmpower's non-pipelined tests do.
run_wrk() {
  local script=()
  if [ "$4" -gt 1 ]; then script=(-s "$load_dir/pipeline.lua"); fi
  "${client_cpu[@]}" wrk -t1 -c"$1" -d"$2s" --timeout 8 "${@:5}" "${techempower_headers[@]}" "${script[@]}" "$3" ${script:+-- "$4"}
}

