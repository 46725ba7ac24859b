# The shell tests' helpers are tests/lib/functions.sh; this forwards to it
# for test-benchmark-smoke.sh, which stays here beside benchmark.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib/functions.sh"
