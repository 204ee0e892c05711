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

# kill_mid_write OUT INPUT CMD...: run CMD with its standard input a FIFO
# that is fed INPUT and then held open, so that CMD is caught in the middle
# of its work; kill it with SIGKILL.  OUT must still hold what it held
# before (a named output is written to a temporary file and renamed).
kill_mid_write() {
	local out=$1 in=$2 fifo="$T/mid.fifo" pid before fd
	shift 2
	before=$(cksum <"$out")
	rm -f "$fifo"
	mkfifo "$fifo"
	"$@" <"$fifo" 2>/dev/null &
	pid=$!
	exec {fd}>"$fifo"
	cat "$in" >&"$fd"
	sleep 0.3
	kill -9 "$pid"
	wait "$pid" || true
	exec {fd}>&-
	[ "$(cksum <"$out")" = "$before" ]
}

# refuses_output MESSAGE CMD...: CMD fails with status 1, nothing on
# stdout and exactly MESSAGE on stderr.  Used for outputs that cannot be
# written (a directory, a missing directory, an empty name): given with a
# missing input, the message must name the output, not the input, to show
# that the output was refused before any input was read.
refuses_output() {
	local want=$1
	shift
	run -1 --separate-stderr "$@"
	[ -z "$output" ]
	if [ "$stderr" != "$want" ]; then
		printf 'want: %s\ngot:  %s\n' "$want" "$stderr"
		return 1
	fi
}
