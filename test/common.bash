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

# The usage block of 'TOOL --help' (up to its first blank line) must say
# what the SYNOPSIS of man/TOOL.1 says, whitespace aside.
help_is_synopsis() {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	local a b
	a=$(mandoc -Tascii -O width=300 "$BATS_TEST_DIRNAME/../man/$1.1" | col -b |
	    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \t\n' '   ' |
	    sed 's/^ //;s/ $//')
	b=$("$1" --help | sed '/^$/,$d' | sed 's/^usage: //' | tr -s ' \t\n' '   ' |
	    sed 's/^ //;s/ $//')
	if [ "$a" != "$b" ]; then
		printf 'man:  %s\nhelp: %s\n' "$a" "$b"
		return 1
	fi
}
