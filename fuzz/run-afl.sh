#!/usr/bin/env bash
# Fuzzes a target with afl++ through SharpFuzz for a bounded time.
#   fuzz/run-afl.sh [SECONDS] [OUT_DIR] [TARGET]     (defaults: 1800 s, /tmp/falconet-afl, http)
# TARGET: http (the parser and the connection loop), tls-sslstream or tls-openssl (the TLS layer with that engine).
# Needs: afl++ (apt-get install -y afl++) and the SharpFuzz instrumenter (dotnet tool install --tool-path
# /tmp/sharpfuzz-tool SharpFuzz.CommandLine --version 2.3.0). Runs nice'd; afl-fuzz stops by itself after SECONDS.
set -euo pipefail

seconds="${1:-1800}"
out="${2:-/tmp/falconet-afl}"
target="${3:-http}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tool="${SHARPFUZZ:-/tmp/sharpfuzz-tool/sharpfuzz}"
bin="$out/bin"

rm -rf "$bin" "$out/seeds" "$out/findings"
mkdir -p "$out"
dotnet publish "$root/fuzz/Falconet.Fuzz/Falconet.Fuzz.csproj" -c Release -o "$bin" --nologo -v quiet

# Seeds first: the instrumented assembly only runs under afl-fuzz, which provides its coverage map.
dotnet "$bin/Falconet.Fuzz.dll" "$target" --seeds "$out/seeds"

# Only the server is instrumented: coverage of the code under test, not of the harness or the framework.
"$tool" "$bin/Falconet.dll"

export AFL_SKIP_BIN_CHECK=1       # dotnet itself is not instrumented; SharpFuzz reports coverage from managed code
export AFL_NO_UI=1                # plain status lines instead of the curses screen
export AFL_SKIP_CPUFREQ=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_AFFINITY=1          # the machine is shared: do not pin a core
export AFL_FORKSRV_INIT_TMOUT=60000
# -t: a run over 5 s is a hang (the target itself gives up after 10 s); -m none: the .NET runtime reserves much address space.
nice -n 10 afl-fuzz -V "$seconds" -t 5000 -m none -i "$out/seeds" -o "$out/findings" -- dotnet "$bin/Falconet.Fuzz.dll" "$target"
