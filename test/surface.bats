#!/usr/bin/env bats
# One surface across the suite: what every tool does the same way.

load common

TOOLS="tfr-cat subword-build subword-encode pack-encdec mmap-index batch-sample"

@test "every tool: SYNOPSIS, --help and the man page name the same options" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	local t bad=0
	for t in $TOOLS; do
		options_agree "$t" || { echo "^ $t"; bad=1; }
	done
	[ "$bad" = 0 ]
}

@test "every tool: --help fits in 80 columns" {
	local t
	for t in $TOOLS; do
		"$t" --help | awk -v t="$t" 'length > 80 { print t ": " $0; bad = 1 } END { exit bad }'
	done
}

# A small corpus, its vocabulary and its records, made once per test.
fixtures() {
	local i
	for i in $(seq 1 40); do
		echo "the cat $i sat on the mat and the dog $((i * 7)) ran after it"
	done >"$T/corpus.txt"
	subword-build -q -t 100 -o "$T/vocab" "$T/corpus.txt"
	subword-encode -q -v "$T/vocab" --eos -o "$T/ids.tfr" "$T/corpus.txt"
}

@test "every tool: no file operand reads the standard input" {
	fixtures
	subword-build -q -t 100 "$T/corpus.txt" >"$T/a"
	subword-build -q -t 100 <"$T/corpus.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	subword-build -q --count-only "$T/corpus.txt" >"$T/c"
	subword-build -q --from-counts -t 100 <"$T/c" >"$T/b"
	cmp "$T/a" "$T/b"
	subword-encode -v "$T/vocab" --output-format id <"$T/corpus.txt" >"$T/a"
	subword-encode -v "$T/vocab" --output-format id "$T/corpus.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	[ "$(tfr-cat -c <"$T/ids.tfr")" = 40 ]
	pack-encdec -C lm -l targets=32 <"$T/ids.tfr" >"$T/a"
	pack-encdec -C lm -l targets=32 "$T/ids.tfr" >"$T/b"
	cmp "$T/a" "$T/b"
	mmap-index dict <"$T/corpus.txt" >"$T/a"
	mmap-index dict "$T/corpus.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	mmap-index build --raw-ids -q -o "$T/p1" <"$T/ids.tfr"
	mmap-index build --raw-ids -q -o "$T/p2" "$T/ids.tfr"
	cmp "$T/p1.bin" "$T/p2.bin"
	[ "$(batch-sample by-size --max-tokens 8 <<<$'3\n3\n3')" = "$(printf '3\n3\n3\n' | batch-sample by-size --max-tokens 8 -)" ]
}

@test "every tool with -j: the same argument, the same message, the same default" {
	local t h first=
	for t in subword-build subword-encode "mmap-index build"; do
		run -2 --separate-stderr $t -j x
		[ "${stderr%%$'\n'*}" = "${t%% *}: -j: expected an integer from 0 to 256, not 'x'" ]
		run -2 --separate-stderr $t -j 257
		[ "${stderr%%$'\n'*}" = "${t%% *}: -j: expected an integer from 0 to 256, not '257'" ]
		h=$(${t%% *} --help | grep -e '-j, --jobs' | sed 's/^ *-j, --jobs N *//')
		[ -n "$h" ]
		[ -z "$first" ] || [ "$h" = "$first" ]
		first=$h
	done
	# The output does not depend on -j.
	fixtures
	subword-encode -v "$T/vocab" "$T/corpus.txt" >"$T/a"
	subword-encode -j 1 -v "$T/vocab" "$T/corpus.txt" >"$T/b"
	subword-encode -j 3 -v "$T/vocab" "$T/corpus.txt" >"$T/c"
	cmp "$T/a" "$T/b"
	cmp "$T/a" "$T/c"
}

# shows_progress CMD...: with --progress, CMD draws a progress line
# ("\rTOOL: ...") on stderr; with --no-progress, and by default when
# stderr is not a terminal, it does not.
shows_progress() {
	local tool=${1%% *}
	"$@" --progress 2>"$T/err" >/dev/null
	grep -q $'\r'"$tool: " "$T/err" || { echo "no progress: $*"; cat -A "$T/err"; return 1; }
	"$@" --no-progress 2>"$T/err" >/dev/null
	! grep -q $'\r' "$T/err" || { echo "progress with --no-progress: $*"; return 1; }
	"$@" 2>"$T/err" >/dev/null
	! grep -q $'\r' "$T/err" || { echo "progress to a file: $*"; return 1; }
}

@test "every tool that runs long: --progress, --no-progress, and none by default off a terminal" {
	fixtures
	shows_progress tfr-cat "$T/ids.tfr"
	shows_progress tfr-cat --from-json <(tfr-cat "$T/ids.tfr")
	shows_progress subword-build -t 100 "$T/corpus.txt"
	shows_progress subword-encode -v "$T/vocab" --output-format id "$T/corpus.txt"
	shows_progress pack-encdec -C lm -l targets=32 "$T/ids.tfr"
	shows_progress mmap-index build --raw-ids -o "$T/p" "$T/ids.tfr"
	shows_progress mmap-index build --raw-ids -j 1 -o "$T/p" "$T/ids.tfr"
	shows_progress mmap-index dict "$T/corpus.txt"
	# batch-sample loader, over a dataset of ten one-feature Examples.
	mkdir -p "$T/ds"
	for i in 0 1 2 3 4 5 6 7 8 9; do printf '{"x":[%d]}\n' "$i"; done |
	    tfr-cat -R --from-json >"$T/ds/a.tfrecords"
	tfr-cat --manifest "$T/ds/a.tfrecords" >"$T/ds/__manifest__.json"
	printf '%s\n' '{"type": "independent", "name": "t",' \
	    '"dataset": {"type": "dir", "args": {"data_dir": "'"$T/ds"'"}},' \
	    '"num_read_buffer_bytes": 0, "num_prefetch": 1, "target_batch_size": 2,' \
	    '"drop_remainder": false, "epochs": 1,' \
	    '"primary_features": [{"from_name": "x", "to_name": "x"}]}' >"$T/c.json"
	shows_progress batch-sample loader --config "$T/c.json"
}

@test "every tool: counts and sizes take the same suffixes" {
	fixtures
	subword-build -q -t 100 "$T/corpus.txt" >"$T/a"
	run -0 subword-build -q -t 1k "$T/corpus.txt"
	run -0 subword-build -q -t 1e3 "$T/corpus.txt"
	[ "$(tfr-cat -n 1k -c "$T/ids.tfr")" = 40 ]
	pack-encdec -C lm -l targets=1Ki "$T/ids.tfr" >"$T/a"
	pack-encdec -C lm -l targets=1024 "$T/ids.tfr" >"$T/b"
	cmp "$T/a" "$T/b"
	pack-encdec -C lm -l targets=32 --strategy first-fit --window 1k "$T/ids.tfr" >"$T/a"
	pack-encdec -C lm -l targets=32 --strategy first-fit --window 1000 "$T/ids.tfr" >"$T/b"
	cmp "$T/a" "$T/b"
	mmap-index build --raw-ids -q --vocab-size 64Ki -o "$T/p1" "$T/ids.tfr"
	mmap-index build --raw-ids -q --vocab-size 65536 -o "$T/p2" "$T/ids.tfr"
	cmp "$T/p1.idx" "$T/p2.idx"
	[ "$(mmap-index cat --range 0:1k --output-format id "$T/p1" | wc -l)" = 40 ]
	[ "$(mmap-index cat --range 3e1: --output-format id "$T/p1" | wc -l)" = 10 ]
	mmap-index dict --threshold 1k "$T/corpus.txt" >"$T/a"
	[ ! -s "$T/a" ] || [ "$(wc -l <"$T/a")" -le 8 ]
	[ "$(batch-sample by-size --max-tokens 1k <<<$'3\n3')" = "0 1" ]
	# A sign where a number may be negative (fairseq's "0 or less keeps all").
	mmap-index dict -q "$T/corpus.txt" >"$T/a"
	mmap-index dict -q --nwords -1k "$T/corpus.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	run -2 subword-build -t -1k "$T/corpus.txt"
	run -2 subword-build -t 8x "$T/corpus.txt"
	run -2 subword-build -t 1.5 "$T/corpus.txt"
}

@test "tfr-cat: -c of several inputs counts each and a total, as wc does" {
	printf '%s\n' '{"a":[1]}' '{"a":[2]}' '{"a":[3]}' | tfr-cat --from-json >"$T/three.tfr"
	printf '%s\n' '{"a":[1]}' | tfr-cat --from-json >"$T/one.tfr"
	run -0 tfr-cat -c "$T/three.tfr"
	[ "$output" = 3 ]
	run -0 tfr-cat -c <"$T/three.tfr"
	[ "$output" = 3 ]
	run -0 --separate-stderr tfr-cat -c "$T/three.tfr" "$T/one.tfr" - <"$T/three.tfr"
	[ "$output" = "3 $T/three.tfr"$'\n'"1 $T/one.tfr"$'\n'"3 stdin"$'\n'"7 total" ]
	run -1 --separate-stderr tfr-cat -c "$T/three.tfr" "$T/nosuch"
	[ "$output" = "3 $T/three.tfr"$'\n'"3 total" ]
	[[ "$stderr" == *"nosuch"* ]]
}

@test "tfr-cat: --verify counts a failing record the same for a bad frame and a bad payload" {
	printf '%s\n' '{"a":[1]}' '{"a":[2]}' '{"a":[3]}' | tfr-cat --from-json >"$T/three.tfr"
	printf '%s\n' '"CgUKAw=="' | tfr-cat --from-json --type raw >"$T/badpay.rec"
	# A bad payload after the three records, then the three again.
	cat "$T/three.tfr" "$T/badpay.rec" "$T/three.tfr" >"$T/pay.tfr"
	# A bad payload CRC at the same place.
	cat "$T/three.tfr" "$T/badpay.rec" "$T/three.tfr" >"$T/crc.tfr"
	printf 'Z' | dd of="$T/crc.tfr" bs=1 seek=$((90 + 12)) conv=notrunc status=none
	run -1 --separate-stderr tfr-cat --verify "$T/pay.tfr"
	[ "$output" = "$T/pay.tfr: 3 records, 90 bytes, none, FAILED" ]
	[[ "$stderr" == *"record 3 at offset 90: payload is not an Example"* ]]
	run -1 --separate-stderr tfr-cat --verify "$T/crc.tfr"
	[ "$output" = "$T/crc.tfr: 3 records, 90 bytes, none, FAILED" ]
	[[ "$stderr" == *"record 3 at offset 90: payload CRC mismatch"* ]]
}

# Every page of the suite, as NAME.SECTION.
man_pages() {
	(cd "$BATS_TEST_DIRNAME/../man" && ls *.[135])
}

@test "man pages: the same footer, the same closing sections, each names the others" {
	local m d got want bad=0
	d="$BATS_TEST_DIRNAME/../man"
	for m in $(man_pages); do
		grep -qE '^\.Dd (January|February|March|April|May|June|July|August|September|October|November|December) [1-9][0-9]?, 20[0-9][0-9]$' "$d/$m" ||
		    { echo "$m: .Dd is not 'Month D, YYYY'"; bad=1; }
		[ "$(grep '^\.Os' "$d/$m")" = ".Os recpipe" ] || { echo "$m: .Os is not 'recpipe'"; bad=1; }
		want=$(man_pages | grep -vx "$m" | sed 's/\(.*\)\.\(.\)/\2 \1/' | sort | sed 's/\(.\) \(.*\)/\2 \1/')
		got=$(sed -n '/^\.Sh SEE ALSO/,/^\.Sh /p' "$d/$m" | sed -n 's/^\.Xr \([^ ]*\) \([0-9]\).*/\1 \2/p')
		[ "$got" = "$want" ] || { echo "$m: SEE ALSO: $(echo $got)"; bad=1; }
		case $m in *.1)
			got=$(sed -n 's/^\.Sh //p' "$d/$m" | sed -n '/^EXIT STATUS$/,$p' | tr '\n' ,)
			# DIAGNOSTICS, where a page has one, goes where mdoc(7) puts it.
			[ "$got" = "EXIT STATUS,EXAMPLES,SEE ALSO,STANDARDS,CAVEATS," ] ||
			    [ "$got" = "EXIT STATUS,EXAMPLES,DIAGNOSTICS,SEE ALSO,STANDARDS,CAVEATS," ] ||
			    { echo "$m: closing sections: $got"; bad=1; }
		esac
	done
	[ "$bad" = 0 ]
}

@test "man pages: render within 80 columns (mandoc, and man -l when present)" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	local m d w bad=0
	d="$BATS_TEST_DIRNAME/../man"
	for m in $(man_pages); do
		w=$(mandoc -T utf8 -O width=80 "$d/$m" | LC_ALL=C.UTF-8 col -b | LC_ALL=C.UTF-8 wc -L)
		[ "$w" -le 80 ] || { echo "$m: mandoc: $w columns"; bad=1; }
		if command -v man >/dev/null && man -l "$d/$m" >/dev/null 2>&1; then
			w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$d/$m" 2>/dev/null | LC_ALL=C.UTF-8 wc -L)
			[ "$w" -le 80 ] || { echo "$m: man -l: $w columns"; bad=1; }
		fi
	done
	[ "$bad" = 0 ]
}

@test "README: the headline says what is byte-identical and what is not; ELECTRA pipelines use --rules electra" {
	local r="$BATS_TEST_DIRNAME/../README.md" head
	# The opening, up to the first section.
	head=$(sed '/^## /q' "$r")
	grep -q 'Byte for byte' <<<"$head"
	grep -q 'not the same bytes' <<<"$head"
	grep -q 'without a' <<<"$head" && grep -q 'seed' <<<"$head"
	! grep -qi 'output is byte-identical' <<<"$head" || false
	# Every WordPiece encoding fed to -C electra, in the README and the pages.
	! grep -h -A1 'subword-encode -m wordpiece' "$r" "$BATS_TEST_DIRNAME"/../man/*.1 |
	    grep -B1 -e '-C electra' | grep 'subword-encode -m wordpiece' | grep -v -e '--rules electra'
}

# bats ignores the status of a '! cmd' that is not a test's last command
# (errexit does not apply to it): such an assertion can never fail.
@test "surface: no bats file asserts with a bare '!' before a test's end" {
	run -0 awk '
		/^[ \t]*! / { if (next_is && !cont && neg) print cand; cand = FILENAME ":" FNR; cont = ($0 ~ /[|\\][ \t]*$/) ; neg = ($0 !~ /\|\|/); next_is = 1; next }
		next_is && cont { cont = ($0 ~ /[|\\][ \t]*$/); if ($0 ~ /\|\|/) neg = 0; next }
		next_is { if (neg && $0 !~ /^}/) print cand; next_is = 0 }
	' "$BATS_TEST_DIRNAME"/*.bats
	[ -z "$output" ]
}
