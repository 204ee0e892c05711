# Shared setup for the bats suites: tools from the build under test
# (RECPIPE_BIN, set by make), fixtures, the shared vectors when present.
bats_require_minimum_version 1.5.0
export LC_ALL=C
# Recipes the tests run with make are builds of their own, not part of
# the make that may be running the tests (make check): no inherited
# flags, no "Entering directory" lines in their output.
unset MAKEFLAGS MFLAGS MAKELEVEL
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

# damage_at FILE K BAD GOOD: BAD is the record file FILE with the first
# payload byte of record K changed (a payload CRC fault); GOOD is its
# good prefix, records 0 .. K-1.  With K=-N, BAD is FILE cut N bytes
# short of its end instead (a truncated last record) and GOOD is every
# record but the last.
damage_at() {
	local f=$1 k=$2 bad=$3 good=$4 off n
	if [ "$k" -lt 0 ]; then
		n=$(tfr-cat --index "$f" | wc -l)
		off=$(tfr-cat --index "$f" | sed -n "${n}p" | cut -d' ' -f1)
		head -c "$off" "$f" >"$good"
		head -c "$(($(stat -c %s "$f") + k))" "$f" >"$bad"
		return
	fi
	off=$(tfr-cat --index "$f" | sed -n "$((k + 1))p" | cut -d' ' -f1)
	head -c "$off" "$f" >"$good"
	cp "$f" "$bad"
	printf '\377' | dd of="$bad" bs=1 seek=$((off + 12)) conv=notrunc status=none
}

# same_prefix_output BAD GOOD CMD...: CMD on BAD fails (status 1) and
# writes to stdout byte for byte what CMD on GOOD writes (status 0);
# with -o X --keep-partial, X holds the same bytes; with -o X alone, an
# old X is left as it was.
same_prefix_output() {
	local bad=$1 good=$2
	shift 2
	run -1 bash -c '"$@" "$0" >"$0.out"' "$bad" "$@"
	run -0 bash -c '"$@" "$0" >"$0.out"' "$good" "$@"
	cmp "$good.out" "$bad.out"
	echo OLD >"$T/old.out"
	run -1 "$@" -o "$T/old.out" "$bad"
	[ "$(cat "$T/old.out")" = OLD ]
	run -1 "$@" -o "$T/kept.out" --keep-partial "$bad"
	cmp "$good.out" "$T/kept.out"
}
# man_opts syn|list PAGE: the options a man page names, one entry a line:
# syn, each line of its SYNOPSIS; list, each .It Fl entry of its option lists.
man_opts() {
	sed 's/\\-/-/g' "$2" | awk -v mode="$1" '
	function names(line,   w, out, n, i, t, j, fl) {
		out = ""
		n = split(line, w, /[ \t]+/)
		fl = 0
		for (i = 1; i <= n; i++) {
			t = w[i]
			if (t == "Fl" || t == ".Fl") { fl = 1; continue }
			if (t ~ /^\.?[A-Z][a-z][a-z]?$/) { fl = 0; continue }
			if (!fl || t ~ /^[|,.;:()]$/) continue
			sub(/[^A-Za-z0-9-].*$/, "", t)
			if (t ~ /^-[a-z0-9]/) out = out " -" t
			else if (t ~ /^[A-Za-z0-9]+$/)
				for (j = 1; j <= length(t); j++) out = out " -" substr(t, j, 1)
		}
		return substr(out, 2)
	}
	/^\.Sh / { sec = substr($0, 5); next }
	mode == "syn" && sec == "SYNOPSIS" { s = names($0); if (s != "") print s }
	mode == "list" && sec != "SYNOPSIS" && /^\.It Fl/ { print names($0) }
	'
}

# help_opts usage|list: the options of a --help text on stdin: usage, each
# line of the usage block; list, each option line of the text after it
# (its options up to the first two spaces).
help_opts() {
	awk -v mode="$1" '
	function names(s,   out, t) {
		out = ""
		while (match(s, /(^|[][ |,])--?[A-Za-z0-9][A-Za-z0-9-]*/)) {
			t = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
			sub(/^[][ |,]/, "", t)
			if (t ~ /^--/) { out = out " " t; continue }
			t = substr(t, 2)
			while (t != "") { out = out " -" substr(t, 1, 1); t = substr(t, 2) }
		}
		return substr(out, 2)
	}
	/^$/ { blank = 1; next }
	!blank && mode == "usage" { sub(/^usage: [^ ]+/, ""); s = names($0); if (s != "") print s }
	blank && mode == "list" && /^ +-/ { sub(/^ +/, ""); sub(/  .*$/, ""); print names($0) }
	'
}

# options_agree TOOL: the SYNOPSIS of man/TOOL.1, the usage block of
# 'TOOL --help', the option list after it and the option lists of the man
# page name the same options: every option of the SYNOPSIS is in the usage
# block (and back), is described in --help and in the man page; --help
# and the man page describe the same names (long spellings included), and
# describe nothing the SYNOPSIS does not give; every long option of the
# option tables of cmd/TOOL.c is described.
options_agree() {
	local page="$BATS_TEST_DIRNAME/../man/$1.1" syn use mlist hlist e bad=0
	syn=$(man_opts syn "$page" | tr ' ' '\n' | sort -u)
	use=$("$1" --help | help_opts usage | tr ' ' '\n' | sort -u)
	mlist=$(man_opts list "$page")
	hlist=$("$1" --help | help_opts list)
	if [ "$syn" != "$use" ]; then
		echo "SYNOPSIS and --help usage differ:"
		diff <(echo "$syn") <(echo "$use") | grep '^[<>]'
		bad=1
	fi
	if [ "$(tr ' ' '\n' <<<"$mlist" | sort -u)" != "$(tr ' ' '\n' <<<"$hlist" | sort -u)" ]; then
		echo "man page option list (<) and --help option list (>) differ:"
		diff <(tr ' ' '\n' <<<"$mlist" | sort -u) <(tr ' ' '\n' <<<"$hlist" | sort -u) | grep '^[<>]'
		bad=1
	fi
	for e in $syn; do
		if ! tr ' ' '\n' <<<"$mlist" | grep -qx -- "$e"; then
			echo "$e: in the SYNOPSIS, not described in the man page"
			bad=1
		fi
	done
	# Every long option the source declares is described.
	for e in $(grep -oE '^[[:space:]]*\{ *"[a-z0-9-]+",' "$BATS_TEST_DIRNAME/../cmd/$1.c" |
	    grep -oE '"[a-z0-9-]+"' | tr -d '"' | sort -u); do
		if ! tr ' ' '\n' <<<"$hlist" | grep -qx -- "--$e"; then
			echo "--$e: accepted, not described in --help"
			bad=1
		fi
	done
	while read -r e; do
		[ -n "$e" ] || continue
		if ! tr ' ' '\n' <<<"$e" | grep -qxF -f <(echo "$syn"); then
			echo "'$e': described, not in the SYNOPSIS"
			bad=1
		fi
	done < <(printf '%s\n%s\n' "$mlist" "$hlist")
	return $bad
}

# A peak RSS bound: KB, or no bound under ASan (its shadow and quarantine).
rss_bound() {
	if grep -qa __asan_init "$(command -v "$1")"; then echo 100000000; else echo "$2"; fi
}

# all_listed WORDS TEXT: every word of WORDS is a word of TEXT; else the
# first one missing is said and the status is 1.
all_listed() {
	local w
	for w in $1; do
		grep -qw -- "$w" <<<"$2" || { echo "missing: $w"; return 1; }
	done
}

# run_group GROUP: one group of the cases of $D/run_cases.py (a vector
# set of subword-encode's: spm, bpe) through the tools under test; the
# summary line says how many passed.
run_group() {
	run python3 "$D/run_cases.py" --group "$1" --show 3 \
	    --tfr-cat "$RECPIPE_BIN/tfr-cat" "$RECPIPE_BIN/subword-encode"
	echo "$output" | tail -20
	[ "$status" -eq 0 ]
	[[ "$output" == *" pass "* || "$output" == *"pass ("* ]]
}
