#!/usr/bin/env bash
# Rebuilds the load part of docs/benchmarks.md from one run: every section of the load harness, then the generated
# blocks of the page and its charts (the prose between them is kept). About 2 hours on a quiet 2-core machine; run it
# on one with nothing else running. `benchmarks/publish.sh --quick` does the same as a smoke run (about 9 minutes,
# figures marked as smoke). Any option of benchmarks/load/run.sh can follow.
set -euo pipefail
cd "$(dirname "$0")/.."
exec benchmarks/load/run.sh --publish "$@"
