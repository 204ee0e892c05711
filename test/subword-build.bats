# subword-build: options, errors, sampling, map/reduce over shards.
load common

# A small English-like corpus, the same on every run.
corpus() {
	local i
	for i in $(seq 1 "$1"); do
		printf 'The cat number %d sat on the mat; the dog_%d ran after it.\n' \
			"$i" "$((i % 7))"
		printf 'A bird (%d) sang: "la la la", and the end came.\n' "$((i * 3))"
	done
}

@test "subword-build: --help is the synopsis on stdout" {
	run -0 --separate-stderr subword-build --help
	[ -z "$stderr" ]
	[ "${lines[0]}" = "usage: subword-build [-hqV] [--count-only] [--keep-partial]" ]
}

@test "subword-build: --version names the Unicode version" {
	run -0 --separate-stderr subword-build -V
	[ "${lines[0]}" = "subword-build 0.1.0" ]
	[ "${lines[1]}" = "Unicode 14.0.0" ]
	[ -z "$stderr" ]
}

@test "subword-build: usage errors exit 2" {
	run -2 --separate-stderr subword-build -t 10 --min-count 3 x
	[[ "$stderr" == *"exclude each other"* ]]
	run -2 --separate-stderr subword-build -b 0 x
	[ "${stderr%%$'\n'*}" = "subword-build: -b: expected a positive number of bytes, not '0'" ]
	run -2 --separate-stderr subword-build --file-byte-budget 1x x
	[ "${stderr%%$'\n'*}" = "subword-build: --file-byte-budget: expected a size (a whole number, with k, M, G, Ki, Mi or Gi), not '1x'" ]
	run -2 --separate-stderr subword-build --iterations 0 x
	run -2 --separate-stderr subword-build -t 0 x
	run -2 --separate-stderr subword-build -L 0 x
	run -2 --separate-stderr subword-build --no-such-option x
	run -2 --separate-stderr subword-build --count-only --from-counts x
	run -2 --separate-stderr subword-build --reserved "$(printf '\377')" x
}

@test "subword-build: a missing file is status 1 and names it" {
	run -1 --separate-stderr subword-build -o "$T/v" "$T/nosuch"
	[ "$stderr" = "subword-build: $T/nosuch: No such file or directory" ]
	[ ! -e "$T/v" ]
}

@test "subword-build: invalid UTF-8 names file, line and byte offset; no vocab written" {
	printf 'good line\nsecond \342\202 bad\n' >"$T/bad.txt"
	run -1 --separate-stderr subword-build -o "$T/v" "$T/bad.txt"
	[ "$stderr" = "subword-build: $T/bad.txt: line 2: invalid UTF-8 at byte offset 17" ]
	[ ! -e "$T/v" ]
	[ -z "$(ls "$T" | grep '^v\.')" ]
}

@test "subword-build: an empty corpus gives the 24 fixed entries" {
	: >"$T/empty.txt"
	run -0 --separate-stderr subword-build -t 100 "$T/empty.txt"
	[ "$stderr" = "subword-build: 24 entries, min_count 1, from 0 of 0 bytes of text (100%; -b sets the bytes counted of each file)" ]
	[ "${#lines[@]}" -eq 24 ]
	[ "${lines[0]}" = "'<pad>_'" ]
	[ "${lines[1]}" = "'<EOS>_'" ]
	[ "${lines[2]}" = "'u'" ]
	[ "${lines[23]}" = "'0'" ]
}

@test "subword-build: reserved tokens follow <pad> and <EOS>, escaped" {
	corpus 50 >"$T/c.txt"
	subword-build --min-count 5 --reserved '<mask>' --reserved 'a_b' -o "$T/v" "$T/c.txt"
	[ "$(sed -n 1,4p "$T/v")" = "$(printf "'<pad>_'\n'<EOS>_'\n'<mask>_'\n'a\\\\ub_'")" ]
}

@test "subword-build: -L bounds subtokens to L-1 code points" {
	corpus 50 >"$T/c.txt"
	subword-build --min-count 2 -L 4 -o "$T/v" "$T/c.txt"
	# Entries without the reserved ones, unescaped lengths at most 3.
	run -0 python3 -c '
import sys
es = [l[1:-2] for l in open(sys.argv[1], encoding="utf-8")][2:]
print(max(len(e) for e in es))' "$T/v"
	[ "$output" = 3 ]
}

@test "subword-build: stdin and a file give the same vocab, budget included" {
	corpus 300 >"$T/c.txt"
	subword-build -t 200 -b 3000 -o "$T/a" "$T/c.txt"
	subword-build -t 200 -b 3000 -o "$T/b" - <"$T/c.txt"
	cat "$T/c.txt" | subword-build -t 200 -b 3000 -o "$T/c" -
	cmp "$T/a" "$T/b"
	cmp "$T/a" "$T/c"
}

@test "subword-build: the byte budget samples every k-th line as tensor2tensor does" {
	# 10 lines of 10 bytes: size 100, budget 10: every = trunc(100/10/2) = 5.
	for i in 0 1 2 3 4 5 6 7 8 9; do printf 'line%d abc\n' "$i"; done >"$T/l.txt"
	run -0 subword-build --count-only -b 10 "$T/l.txt"
	# Lines 0-4 skipped, line 5 taken, lines 6-10 skipped.
	[ "$output" = "$(printf '#subword-counts 1\n1\tabc\n1\tline5\n')" ]
	run -0 subword-build --count-only -b 4 "$T/l.txt"
	# every = 12: no line is ever taken.
	[ "$output" = "#subword-counts 1" ]
	# every = 0 from budget 51 up; each line costs 9 code points.  The
	# budget is tested before a line: 60 and 63 take 7 lines, 64 takes 8.
	run -0 subword-build --count-only -b 60 "$T/l.txt"
	[ "${lines[1]}" = "$(printf '7\tabc')" ]
	[ "${#lines[@]}" -eq 9 ]
	run -0 subword-build --count-only -b 63 "$T/l.txt"
	[ "${lines[1]}" = "$(printf '7\tabc')" ]
	run -0 subword-build --count-only -b 64 "$T/l.txt"
	[ "${lines[1]}" = "$(printf '8\tabc')" ]
}

@test "subword-build: counting shards in parallel and building from the counts equals one run" {
	corpus 400 >"$T/all.txt"
	split -l 250 "$T/all.txt" "$T/shard."
	local s pids=()
	for s in "$T"/shard.*; do
		subword-build --count-only -b 1e9 -o "$s.counts" "$s" &
		pids+=($!)
	done
	for s in "${pids[@]}"; do wait "$s"; done
	subword-build -t 300 --from-counts -o "$T/reduced" "$T"/shard.*.counts
	subword-build -t 300 -b 1e9 -o "$T/single" "$T/all.txt"
	cmp "$T/single" "$T/reduced"
	# The shards as separate inputs of one run give the same too.
	subword-build -t 300 -b 1e9 -o "$T/multi" "$T"/shard.a?
	cmp "$T/single" "$T/multi"
	[ "$(wc -l <"$T/single")" -gt 100 ]
}

@test "subword-build: -j N counts in threads and gives the same counts and vocab" {
	# Over 3 MiB, so that the lines go to the workers in several batches.
	awk 'BEGIN { for (i = 0; i < 90000; i++)
		printf "w%d and x%d met y%d in %d, then z_%d (%d)\n",
		    i % 997, i % 89, i % 13, i, i % 7, i * 31 % 1009 }' >"$T/big.txt"
	[ "$(wc -c <"$T/big.txt")" -gt 3145728 ]
	subword-build -j 1 --count-only -b 1e9 -o "$T/c1" "$T/big.txt"
	subword-build -j 2 --count-only -b 1e9 -o "$T/c2" "$T/big.txt"
	subword-build -j 5 --count-only -b 1e9 -o "$T/c5" - <"$T/big.txt"
	cmp "$T/c1" "$T/c2"
	cmp "$T/c1" "$T/c5"
	# Every line was counted once: each of the 90000 lines holds "and" once.
	grep -qx "$(printf '90000\tand')" "$T/c1"
	# Sampling (a budget of 1e6 code points: some lines skipped, then a stop).
	subword-build -j 1 -t 500 -o "$T/v1" "$T/big.txt"
	subword-build -j 2 -t 500 -o "$T/v2" "$T/big.txt"
	subword-build -t 500 -o "$T/v0" "$T/big.txt"
	cmp "$T/v1" "$T/v2"
	cmp "$T/v1" "$T/v0"
	run -2 --separate-stderr subword-build -j -1 "$T/big.txt"
	[[ "$stderr" == *"-j: expected an integer from 0 to 256, not "* ]]
}

@test "subword-build: count files merge by summing" {
	printf 'a b a\n' >"$T/x.txt"
	subword-build --count-only -o "$T/x.counts" "$T/x.txt"
	run -0 subword-build --count-only -o - "$T/x.txt"
	[ "$output" = "$(printf '#subword-counts 1\n2\ta\n1\tb\n')" ]
	subword-build --min-count 1 --from-counts -o "$T/v2" "$T/x.counts" "$T/x.counts"
	printf 'a b a\na b a\n' >"$T/y.txt"
	subword-build --min-count 1 -o "$T/v1" "$T/y.txt"
	cmp "$T/v1" "$T/v2"
}

@test "subword-build: a bad count file names file and line" {
	printf '#subword-counts 1\n3\tok\nnonsense\n' >"$T/bad.counts"
	run -1 --separate-stderr subword-build --from-counts "$T/bad.counts"
	[ "$stderr" = "subword-build: $T/bad.counts: line 3: expected a count, a tab and a token" ]
	printf 'token,5\n' >"$T/t2t.counts"
	run -1 --separate-stderr subword-build --from-counts "$T/t2t.counts"
	[[ "$stderr" == *"not a subword-build count file"* ]]
}

@test "subword-build: CR deleted anywhere, BOM kept with the first token" {
	printf '\357\273\277first line\r\nsec\rond\r\n\r' >"$T/crlf.txt"
	run -0 subword-build --count-only "$T/crlf.txt"
	[ "$output" = "$(printf '#subword-counts 1\n1\tfirst\n1\tline\n1\tsecond\n1\t\357\273\277')" ]
}

@test "subword-build: progress shows the bisection probes when asked" {
	corpus 50 >"$T/c.txt"
	run -0 --separate-stderr subword-build --progress -t 150 -o "$T/v" "$T/c.txt"
	[[ "$stderr" == *"min_count 500: "*" subtokens"* ]]
	run -0 --separate-stderr subword-build -t 150 -o "$T/v" "$T/c.txt"
	# no probe lines: the summary alone
	[[ "$stderr" != *"min_count 500: "* ]]
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
}

@test "subword-build: a full disk is status 1" {
	: >"$T/e.txt"
	run -1 --separate-stderr bash -c 'subword-build -t 10 "$1" >/dev/full' _ "$T/e.txt"
	[ "$stderr" = "subword-build: stdout: No space left on device" ]
}

@test "subword-build: -o replaces the file whole" {
	corpus 20 >"$T/c.txt"
	echo old >"$T/v"
	subword-build -t 50 -o "$T/v" "$T/c.txt"
	[ "$(head -1 "$T/v")" = "'<pad>_'" ]
	[ "$(ls "$T" | grep -c '^v')" -eq 1 ]
}

@test "subword-build: -o a FIFO writes through it and leaves it in place" {
	corpus 20 >"$T/c.txt"
	mkfifo "$T/fifo"
	cat "$T/fifo" >"$T/got" &
	local reader=$!
	timeout 10 subword-build -t 50 -o "$T/fifo" "$T/c.txt" || true
	if [ ! -p "$T/fifo" ]; then
		kill "$reader"	# it waits on the FIFO that was replaced
		false
	fi
	wait "$reader"
	[ "$(head -1 "$T/got")" = "'<pad>_'" ]
}

# Skip unless peak RSS can be measured (GNU time) and means something
# (not under AddressSanitizer, whose shadow memory is not ours).
need_rss() {
	[ -x /usr/bin/time ] || skip "/usr/bin/time not installed"
	! grep -q __asan_init "$RECPIPE_BIN/subword-build" ||
		skip "memory bounds are not checked under AddressSanitizer"
}

# Peak RSS in KB of a command.
peak_kb() {
	/usr/bin/time -f %M -o "$T/rss" "$@" >/dev/null
	cat "$T/rss"
}

# One line of n pseudo-random lower-case letters (a fixed seed).
letters() {
	awk -v n="$1" 'BEGIN { srand(7); for (i = 0; i < n; i++)
	    printf "%c", 97 + int(rand() * 26); print "" }'
}

# One line of n pseudo-random CJK ideographs (U+5000..U+9FFF), no spaces.
ideographs() {
	awk -v n="$1" 'BEGIN { srand(11); for (i = 0; i < n; i++)
	    printf "%c%c%c", 229 + int(rand() * 5), 128 + int(rand() * 64),
	    128 + int(rand() * 64); print "" }'
}

@test "subword-build: one long repetitive token is sorted in O(n log n)" {
	# 400,000 'a' took minutes (comparison sort of the suffixes).
	awk 'BEGIN { while (i++ < 400000) printf "a"; print "" }' >"$T/a.txt"
	timeout 60 subword-build -q -L 200 -o "$T/v200" "$T/a.txt"
	timeout 60 subword-build -q -o "$T/v" "$T/a.txt"
	[ "$(head -1 "$T/v200")" = "'<pad>_'" ]
	# With -L 200 no entry is longer than 199 code points ('', _ aside).
	[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/v200")" -le 201 ]
	# Without -L the whole token is one subtoken (as with 3,000 'a').
	[ "$(wc -l <"$T/v")" -eq 25 ]
	[ "$(sed -n 3p "$T/v")" = "'$(head -c 400000 "$T/a.txt")_'" ]
}

@test "subword-build: memory on one long line is linear in its length" {
	# 32 bytes per character plus 16 MB: 1 MB of letters or of ideographs,
	# with and without -L (several GB before).
	local kb
	need_rss
	letters 1000000 >"$T/l.txt"
	kb=$(peak_kb subword-build -q -j 1 -L 200 -o "$T/v" "$T/l.txt")
	echo "letters -L 200: $kb KB"
	[ "$kb" -le $((32 * 1000000 / 1024 + 16384)) ]
	kb=$(peak_kb subword-build -q -j 1 -o "$T/v" "$T/l.txt")
	echo "letters: $kb KB"
	[ "$kb" -le $((32 * 1000000 / 1024 + 16384)) ]
	ideographs 400000 >"$T/i.txt"
	kb=$(peak_kb subword-build -q -j 1 -L 200 -o "$T/v" "$T/i.txt")
	echo "ideographs -L 200: $kb KB"
	[ "$kb" -le $((32 * 400000 / 1024 + 16384)) ]
}

@test "subword-build: memory on one long repetitive token is linear in its length" {
	# 32 bytes per character plus 16 MB for 2 MB of 'a' (1 MB of "ab")
	# without -L, where the suffix tree is a chain as deep as the token
	# and the walk keeps a subtoken per character (63 MB for 1 MB of 'a'
	# before, then 86 MB for 2 MB: stack and kept ones at once).
	local kb
	need_rss
	awk 'BEGIN { while (i++ < 2000000) printf "a"; print "" }' >"$T/a.txt"
	kb=$(peak_kb subword-build -q -j 1 -b 1e10 -o "$T/v" "$T/a.txt")
	echo "a: $kb KB"
	[ "$kb" -le $((32 * 2000000 / 1024 + 16384)) ]
	[ "$(wc -l <"$T/v")" -eq 25 ]
	[ "$(sed -n 3p "$T/v")" = "'$(head -c 2000000 "$T/a.txt")_'" ]
	awk 'BEGIN { while (i++ < 500000) printf "ab"; print "" }' >"$T/ab.txt"
	kb=$(peak_kb subword-build -q -j 1 -o "$T/v" "$T/ab.txt")
	echo "ab: $kb KB"
	[ "$kb" -le $((32 * 1000000 / 1024 + 16384)) ]
}

# A count file of one token of n 'a' with count k.
a_counts() {
	awk -v n="$1" -v k="$2" 'BEGIN { printf "#subword-counts 1\n%s\t", k
	    while (i++ < n) printf "a"; print "" }'
}

@test "subword-build: memory on one long token is the same whatever its count" {
	# 2 MB of 'a' with count 5000 from a count file: sums of counts pass
	# 2^31, and the walk's stack took 24 bytes a node instead of 16 (16 MB
	# more than with count 1).
	local kb1 kb
	need_rss
	a_counts 2000000 1 >"$T/a1.counts"
	a_counts 2000000 5000 >"$T/a5k.counts"
	kb1=$(peak_kb subword-build -q -j 1 --min-count 1 --from-counts -o "$T/v1" "$T/a1.counts")
	kb=$(peak_kb subword-build -q -j 1 --min-count 1 --from-counts -o "$T/v" "$T/a5k.counts")
	echo "count 1: $kb1 KB, count 5000: $kb KB"
	[ "$kb" -le $((32 * 2000000 / 1024 + 16384)) ]
	[ "$kb" -le $((kb1 + 2048)) ]
	cmp "$T/v1" "$T/v"
	[ "$(wc -l <"$T/v")" -eq 25 ]
	[ "$(sed -n 3p "$T/v")" = "'$(sed -n 2p "$T/a1.counts" | cut -f 2)_'" ]
}

@test "subword-build: counts times 2^33 and --min-count times 2^33 give the same vocabulary" {
	# Every sum of counts passes 32 bits; the walk holds the wide ones
	# beside its stack.
	corpus 3000 >"$T/c.txt"
	subword-build -q --count-only -o "$T/c.counts" "$T/c.txt"
	awk -F '\t' -v OFS='\t' 'NR == 1 { print; next }
	    { $1 = sprintf("%.0f", $1 * 8589934592); print }' \
	    "$T/c.counts" >"$T/big.counts"
	for m in 1 2 5 20; do
		subword-build -q --min-count "$m" --from-counts -o "$T/v" "$T/c.counts"
		subword-build -q --min-count $((m * 8589934592)) --from-counts \
		    -o "$T/vbig" "$T/big.counts"
		cmp "$T/v" "$T/vbig"
		subword-build -q --min-count "$m" -L 6 --iterations 2 \
		    --from-counts -o "$T/v" "$T/c.counts"
		subword-build -q --min-count $((m * 8589934592)) -L 6 \
		    --iterations 2 --from-counts -o "$T/vbig" "$T/big.counts"
		cmp "$T/v" "$T/vbig"
	done
}

@test "subword-build: --help is the man page SYNOPSIS" {
	help_is_synopsis subword-build
}

@test "subword-build: an output that cannot be written is refused before counting" {
	mkdir "$T/adir"
	refuses_output "subword-build: $T/adir: Is a directory" subword-build -q -o "$T/adir" "$T/nosuch"
	refuses_output "subword-build: $T/nodir/v: No such file or directory" subword-build -q -o "$T/nodir/v" "$T/nosuch"
	refuses_output "subword-build: an output file name is empty" subword-build -q -o '' "$T/nosuch"
}

@test "subword-build: kill -9 while counting leaves the old vocabulary" {
	corpus 2000 >"$T/c.txt"
	echo OLD >"$T/keep"
	kill_mid_write "$T/keep" "$T/c.txt" subword-build -q --min-count 2 -o "$T/keep" -
	run -1 subword-build -q --min-count 2 -o "$T/keep" "$T/nosuch"
	[ "$(cat "$T/keep")" = OLD ]
}

@test "subword-build: after a fault stdout holds the vocabulary of the good input; -o keeps it only with --keep-partial" {
	corpus 50 >"$T/good.txt"
	{ cat "$T/good.txt"; printf 'bad \377 line\n'; corpus 80; } >"$T/bad.txt"
	same_prefix_output "$T/bad.txt" "$T/good.txt" subword-build -q --min-count 2
	same_prefix_output "$T/bad.txt" "$T/good.txt" subword-build -q --min-count 2 -j 2
	same_prefix_output "$T/bad.txt" "$T/good.txt" subword-build -q --count-only
	# a missing input: the others are read
	run -1 --separate-stderr subword-build -q --min-count 2 "$T/good.txt" "$T/nosuch"
	[ "$stderr" = "subword-build: $T/nosuch: No such file or directory" ]
	subword-build -q --min-count 2 "$T/good.txt" >"$T/want"
	[ "$output" = "$(cat "$T/want")" ]
	# a bad count file
	subword-build -q --count-only "$T/good.txt" >"$T/good.counts"
	{ cat "$T/good.counts"; printf 'x\ty\n'; } >"$T/bad.counts"
	run -1 subword-build -q --min-count 2 -o "$T/v" --from-counts "$T/bad.counts"
	[ ! -e "$T/v" ]
}

@test "subword-build: --part K/N counts merged by --from-counts give one run's vocab (N = 1..7)" {
	local n k list
	corpus 300 >"$T/a.txt"
	: >"$T/empty.txt"
	{ head -c 2000 "$T/a.txt"; head -c 20000 /dev/zero | tr '\0' 'w'; echo
	  printf 'no newline at the end'; } >"$T/b.txt"
	subword-build -q -t 300 -b 1e9 -o "$T/one" "$T/a.txt" "$T/empty.txt" "$T/b.txt"
	subword-build -q --count-only -b 1e9 -o "$T/one.counts" "$T/a.txt" "$T/empty.txt" "$T/b.txt"
	for n in 1 2 3 4 5 6 7; do
		list=()
		for k in $(seq 0 $((n - 1))); do
			subword-build -q --count-only -b 1e9 --part "$k/$n" -j 1 \
			    -o "$T/p$k.counts" "$T/a.txt" "$T/empty.txt" "$T/b.txt"
			list+=("$T/p$k.counts")
		done
		subword-build -q -t 300 --from-counts -o "$T/merged" "${list[@]}"
		cmp "$T/one" "$T/merged"
	done
	[ "$(wc -l <"$T/one")" -gt 100 ]
}

@test "subword-build: --part count files add up to one run's counts" {
	local k
	corpus 200 >"$T/a.txt"
	subword-build -q --count-only -b 1e9 -o "$T/one.counts" "$T/a.txt" "$T/a.txt"
	for k in 0 1 2; do
		subword-build -q --count-only -b 1e9 --part "$k/3" -o "$T/p$k" "$T/a.txt" "$T/a.txt"
	done
	# Parts hold different lines: their counts differ from each other.
	run -1 cmp -s "$T/p0" "$T/p1"
	# The parts summed build what the whole builds, token for token.
	subword-build -q --min-count 1 --from-counts -o "$T/v1" "$T/one.counts"
	subword-build -q --min-count 1 --from-counts -o "$T/v2" "$T/p0" "$T/p1" "$T/p2"
	cmp "$T/v1" "$T/v2"
}

@test "subword-build: --part with a small budget samples each part at the file's rate" {
	corpus 2000 >"$T/a.txt"
	# One part of one: the same sample as a run without --part.
	subword-build -q --count-only -b 20000 -o "$T/one" "$T/a.txt"
	subword-build -q --count-only -b 20000 --part 0/1 -o "$T/p" "$T/a.txt"
	cmp "$T/one" "$T/p"
	# Two parts each take about half the budget: together about one run's tokens.
	subword-build -q --count-only -b 20000 --part 0/2 -o "$T/p0" "$T/a.txt"
	subword-build -q --count-only -b 20000 --part 1/2 -o "$T/p1" "$T/a.txt"
	local one two
	one=$(awk -F'\t' 'NR > 1 { s += $1 } END { print s }' "$T/one")
	two=$(cat "$T/p0" "$T/p1" | awk -F'\t' '!/^#/ { s += $1 } END { print s }')
	[ "$two" -gt $((one * 8 / 10)) ] && [ "$two" -lt $((one * 12 / 10)) ]
}

@test "subword-build: --part is for --count-only, on regular files" {
	corpus 10 >"$T/a.txt"
	run -2 --separate-stderr subword-build --part 0/2 "$T/a.txt"
	[ "${stderr%%$'\n'*}" = "subword-build: --part applies to --count-only (the parts' counts make one vocabulary through --from-counts)" ]
	run -2 --separate-stderr subword-build --count-only --part 0/2 - <"$T/a.txt"
	[ "${stderr%%$'\n'*}" = "subword-build: --part needs files: standard input cannot be cut into parts" ]
	run -2 --separate-stderr subword-build --count-only --part 3/2 "$T/a.txt"
	run -1 --separate-stderr subword-build --count-only --part 0/2 "$T/a.txt" "$T/nosuch"
	[ "$stderr" = "subword-build: $T/nosuch: No such file or directory" ]
}

# Many distinct words of 1 to 12 letters, some of them CJK when $1 is
# "cjk", the same on every run.
wordy() {
	awk -v cjk="$1" 'BEGIN {
		s = 12345
		for (l = 0; l < 4000; l++) {
			line = ""
			for (w = 0; w < 9; w++) {
				s = (s * 69069 + 1) % 4294967296
				n = 1 + int(s / 65536) % 12
				word = ""
				for (k = 0; k < n; k++) {
					s = (s * 69069 + 1) % 4294967296
					c = int(s / 65536) % 26
					if (cjk == "cjk" && c < 6)
						word = word sprintf("%c", 228) \
						    sprintf("%c", 184 + c) sprintf("%c", 128 + k)
					else
						word = word sprintf("%c", 97 + c)
				}
				line = line (w ? (s % 5 ? " " : "_ ") : "") word
			}
			print line
		}
	}'
}

@test "subword-build: -j N builds from counts in threads, the same vocabulary whatever N" {
	wordy >"$T/w.txt"
	wordy cjk >"$T/z.txt"
	# Far more distinct text than one part of a build holds.
	[ "$(wc -c <"$T/w.txt")" -gt 200000 ]
	subword-build -q --count-only -b 1e9 -o "$T/w.counts" "$T/w.txt"
	subword-build -q --count-only -b 1e9 -o "$T/z.counts" "$T/z.txt"
	awk -F '\t' -v OFS='\t' 'NR == 1 { print; next }
	    { $1 = sprintf("%.0f", $1 * 8589934592); print }' \
	    "$T/w.counts" >"$T/big.counts"
	local j f
	for f in w z; do
		subword-build -q -j 1 -t 2000 --from-counts -o "$T/$f.v1" "$T/$f.counts"
		subword-build -q -j 1 --min-count 2 -L 4 --iterations 2 \
		    --reserved '<x>' --from-counts -o "$T/$f.m1" "$T/$f.counts"
		[ "$(wc -l <"$T/$f.v1")" -gt 1000 ]
		for j in 2 3 7; do
			subword-build -q -j "$j" -t 2000 --from-counts \
			    -o "$T/$f.v$j" "$T/$f.counts"
			cmp "$T/$f.v1" "$T/$f.v$j"
			subword-build -q -j "$j" --min-count 2 -L 4 --iterations 2 \
			    --reserved '<x>' --from-counts -o "$T/$f.m$j" "$T/$f.counts"
			cmp "$T/$f.m1" "$T/$f.m$j"
		done
	done
	# Counts past 32 bits: the walks hold wide counts beside their stacks.
	subword-build -q -j 1 --min-count 25769803776 --from-counts \
	    -o "$T/b1" "$T/big.counts"
	subword-build -q -j 3 --min-count 25769803776 --from-counts \
	    -o "$T/b3" "$T/big.counts"
	subword-build -q -j 1 --min-count 3 --from-counts -o "$T/s1" "$T/w.counts"
	cmp "$T/b1" "$T/b3"
	cmp "$T/b1" "$T/s1"
	# Building from text takes -j the same way.
	subword-build -q -j 2 -t 2000 -b 1e9 -o "$T/t2" "$T/w.txt"
	cmp "$T/w.v1" "$T/t2"
}

@test "subword-build: count files of 3 parts read in threads build one run's vocabulary at -j 1, 2, 3 and 5" {
	local j k list=()
	wordy >"$T/w.txt"
	wordy cjk >>"$T/w.txt"
	subword-build -q -j 1 -t 2000 -b 1e9 -o "$T/one" "$T/w.txt"
	for k in 0 1 2; do
		subword-build -q -j 1 --count-only -b 1e9 --part "$k/3" \
		    -o "$T/p$k.counts" "$T/w.txt"
		list+=("$T/p$k.counts")
	done
	# A compressed one is read in its turn, between the others.
	gzip -c "$T/p1.counts" >"$T/p1.counts.gz"
	for j in 1 2 3 5; do
		subword-build -q -j "$j" -t 2000 --from-counts -o "$T/v$j" "${list[@]}"
		cmp "$T/one" "$T/v$j"
		subword-build -q -j "$j" -t 2000 --from-counts -o "$T/g$j" \
		    "$T/p0.counts" "$T/p1.counts.gz" "$T/p2.counts"
		cmp "$T/one" "$T/g$j"
	done
	[ "$(wc -l <"$T/one")" -gt 1000 ]
}

@test "subword-build: count files read in threads give -j 1's messages, in order" {
	local j
	printf '#subword-counts 1\n5\tx\n3\ty\n' >"$T/a.counts"
	printf '#subword-counts 1\n2\tx\nnonsense\n4\tz\n' >"$T/bad.counts"
	printf '#subword-counts 1\n9223372036854775800\ty\n' >"$T/big.counts"
	printf '#subword-counts 1\n1\tq\n9\ty\n' >"$T/over.counts"
	for j in 1 2 3 5; do
		run -1 --separate-stderr subword-build -q -j "$j" --min-count 1 \
		    --from-counts -o "$T/v$j" "$T/a.counts" "$T/bad.counts" \
		    "$T/big.counts" "$T/nosuch" "$T/over.counts" "$T/a.counts"
		[ "$stderr" = "subword-build: $T/bad.counts: line 3: expected a count, a tab and a token
subword-build: $T/nosuch: No such file or directory
subword-build: $T/over.counts: line 3: count overflows" ]
		[ ! -e "$T/v$j" ]
		# What was read before each fault builds the same at any -j.
		subword-build -q -j "$j" --min-count 1 --keep-partial --from-counts \
		    -o "$T/k$j" "$T/a.counts" "$T/bad.counts" "$T/big.counts" \
		    "$T/over.counts" "$T/a.counts" 2>/dev/null || true
		cmp "$T/k1" "$T/k$j"
	done
	# The lines before a fault count, the ones after it do not.
	grep -qx "'q_'" "$T/k1"
	run -1 grep -qx "'z_'" "$T/k1"
}

@test "subword-build: -j 4 on one long repetitive token stays within -j 1's memory bound" {
	# The chain as deep as the token lies in one part's walk; the other
	# parts' stacks start small.
	local kb
	need_rss
	awk 'BEGIN { while (i++ < 500000) printf "ab"; print "" }' >"$T/ab.txt"
	kb=$(peak_kb subword-build -q -j 4 -o "$T/v4" "$T/ab.txt")
	echo "ab: $kb KB"
	[ "$kb" -le $((32 * 1000000 / 1024 + 16384)) ]
	subword-build -q -j 1 -o "$T/v1" "$T/ab.txt"
	cmp "$T/v1" "$T/v4"
}

@test "subword-build: ends with one line: the entries, the min_count, the text counted of the text there was" {
	local i
	for i in $(seq 1 3000); do
		printf 'the cat %d sat on the mat and the dog ran %d times\n' "$i" "$((i % 7))"
	done >"$T/c.txt"
	size=$(stat -c %s "$T/c.txt")
	run -0 --separate-stderr subword-build -t 100 -b 1e9 -o "$T/v" "$T/c.txt"
	[[ "$stderr" =~ ^subword-build:\ [0-9]+\ entries,\ min_count\ [0-9]+,\ from\ $size\ of\ $size\ bytes\ of\ text\ \(100%\;\ -b\ sets\ the\ bytes\ counted\ of\ each\ file\)$ ]]
	[ "${stderr#subword-build: }" != "$stderr" ]
	n=$(wc -l <"$T/v")
	[[ "$stderr" == "subword-build: $n entries, "* ]]
	# the default budget counts part of a larger file: the share shows it
	run -0 --separate-stderr subword-build -t 100 -b 10000 -o "$T/v" "$T/c.txt"
	[[ "$stderr" == *" of $size bytes of text ("[0-9]*"%; -b sets the bytes counted of each file)" ]]
	[[ "$stderr" != *"(100%;"* ]]
	# -q says nothing
	run -0 --separate-stderr subword-build -q -t 100 -o "$T/v" "$T/c.txt"
	[ -z "$stderr" ]
}
