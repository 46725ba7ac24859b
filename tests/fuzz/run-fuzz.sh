#!/usr/bin/env bash
# run-fuzz.sh HARNESS SEEDS SECONDS ARTIFACTS [LIBFUZZER OPTIONS...]
#
# Run a libFuzzer harness over its seed corpus, then fuzz for SECONDS.
# New inputs go to a temporary directory (the seeds in the source tree
# are never written); an input that crashes is kept as ARTIFACTS-crash-*
# (or -timeout-*, -oom-*) and the run fails.
set -euo pipefail

harness=$1 seeds=$2 seconds=$3 artifacts=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/nbdcurld-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# -error_exitcode=1: libFuzzer's default, 77, is what meson reads as a
# skipped test, so a crash would not fail the suite.
"$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -error_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts-" "$@" "$work" "$seeds"
