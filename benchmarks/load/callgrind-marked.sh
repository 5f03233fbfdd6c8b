# shellcheck shell=bash
# Shared by the callgrind scripts (sourced from the repository root).

# callgrind_marked OUT [VALGRIND_OPTION... --] COMMAND...: runs COMMAND (a .NET benchmark) under callgrind with
# instrumentation off; the benchmark prints "ready" after its warm-up and waits for a line on standard input, then
# runs what is counted, prints "done ..." and waits for another line. Instructions are counted between the two, so
# start-up, JIT and warm-up are not. Leaves OUT/callgrind.out.*, OUT/bench.txt, OUT/valgrind.txt, OUT/jit.txt (the
# JIT's summary: which methods were compiled how) and OUT/perf.map (JIT frames' names for callgrind-report.py).
# Valgrind places the program's memory below 4 GiB unless told otherwise (--aspace-minaddr); the JIT then emits
# addresses as 32-bit absolutes, trips an assertion of its own and compiles every method again with MinOpts.
callgrind_marked() {
  local out=$1 options=() pid
  shift
  if [[ " $* " == *" -- "* ]]; then
    while [ "$1" != -- ]; do options+=("$1"); shift; done
    shift
  fi
  local fifo=$out/stdin
  rm -f "$fifo"; mkfifo "$fifo"
  exec 7<>"$fifo"
  env DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0 DOTNET_JitStdOutFile="$out/jit.txt" DOTNET_JitDisasmSummary=1 \
    valgrind --tool=callgrind --aspace-minaddr=0x100000000 --instr-atstart=no "${options[@]}" --callgrind-out-file="$out/callgrind.out" \
    "$@" <"$fifo" >"$out/bench.txt" 2>"$out/valgrind.txt" &
  pid=$!
  until grep -q '^ready' "$out/bench.txt" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$out/valgrind.txt" >&2; exit 1; }
    sleep 1
  done
  callgrind_control -i on "$pid" >/dev/null
  echo >&7
  until grep -q '^done' "$out/bench.txt"; do sleep 1; done
  callgrind_control -d "$pid" >/dev/null
  callgrind_control -i off "$pid" >/dev/null
  echo >&7
  wait "$pid"
  exec 7>&-
  rm -f "$fifo"
  cp "/tmp/perf-$pid.map" "$out/perf.map" 2>/dev/null || true
  rm -f "/tmp/perf-$pid.map" "/tmp/perfinfo-$pid.map"
}
