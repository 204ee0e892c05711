# Shared setup for the bats suites: tools from the build under test
# (RECPIPE_BIN, set by make), fixtures, the shared vectors when present.
bats_require_minimum_version 1.5.0
export LC_ALL=C
: "${RECPIPE_BIN:=$BATS_TEST_DIRNAME/../build/bin}"
PATH="$RECPIPE_BIN:$PATH"
FIX="$BATS_TEST_DIRNAME/fixtures"
SHARED="$BATS_TEST_DIRNAME/../../shared"
VEC="$SHARED/vectors"
T="${BATS_TEST_TMPDIR:-/tmp}"

# Skip the test when ../shared (or a part of it) is not beside the project.
need_shared() {
	[ -e "$SHARED/$1" ] || skip "../shared/$1 not present"
}
