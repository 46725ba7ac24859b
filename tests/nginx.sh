# The private nginx's helpers are tests/lib/nginx.sh; this forwards to it
# for benchmark.sh, which stays here.
source "$(dirname "${BASH_SOURCE[0]}")/lib/nginx.sh"
