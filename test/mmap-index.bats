load common

J="$BATS_TEST_DIRNAME/jsonl2tfr"

# ids FILE LINE...: write id lines
ids() {
	local f=$1
	shift
	printf '%s\n' "$@" >"$f"
}

@test "mmap-index: -h prints the synopsis on stdout, -V the version" {
	run -0 --separate-stderr mmap-index -h
	[ -z "$stderr" ]
	[[ "${lines[0]}" == "usage: mmap-index build [-q] [--keep-partial] [--wrap] -o prefix"* ]]
	run -0 --separate-stderr mmap-index cat --help
	[[ "${lines[0]}" == "usage: mmap-index build"* ]]
	run -0 --separate-stderr mmap-index -V
	[ "$output" = "mmap-index 0.1.0" ]
	[ -z "$stderr" ]
}

@test "mmap-index: -h is the man page SYNOPSIS" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	local a b
	a=$(mandoc -Tascii -O width=300 "$BATS_TEST_DIRNAME/../man/mmap-index.1" | col -b |
	    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')
	b=$(mmap-index -h | sed 's/^usage: //' | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')
	[ "$a" = "$b" ]
}

@test "mmap-index: usage errors exit 2" {
	run -2 --separate-stderr mmap-index
	run -2 --separate-stderr mmap-index frobnicate
	[ "${stderr%%$'\n'*}" = "mmap-index: unknown subcommand 'frobnicate'" ]
	run -2 --separate-stderr mmap-index cat --wrap x
	[ "${stderr%%$'\n'*}" = "mmap-index: --wrap does not apply to this subcommand" ]
	run -2 --separate-stderr mmap-index build --input-format id
	[ "${stderr%%$'\n'*}" = "mmap-index: build: -o PREFIX is needed" ]
	run -2 --separate-stderr mmap-index build -o "$T/x" --dtype float16
	run -2 --separate-stderr mmap-index build -o "$T/x" --documents empty
	[ "${stderr%%$'\n'*}" = "mmap-index: --documents applies to --format megatron" ]
	run -2 --separate-stderr mmap-index build -o "$T/x" --format megatron --dtype uint32
	[ "${stderr%%$'\n'*}" = "mmap-index: Megatron cannot store uint32" ]
	run -2 --separate-stderr mmap-index get "$T/x" 1x
	run -2 --separate-stderr mmap-index cat --range 5 "$T/x"
	[ ! -e "$T/x.bin" ] && [ ! -e "$T/x.idx" ]
}

@test "mmap-index: id lines round trip, worked example bytes" {
	ids "$T/in.txt" "1 2 3" "" "65535 0" "7"
	run -0 --separate-stderr mmap-index build -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
	[ -z "$stderr" ]
	[ "$(od -An -tx1 "$T/d.bin" | tr -d ' \n')" = 010002000300ffff00000700 ]
	[ "$(stat -c %s "$T/d.idx")" = 74 ]
	[ "$(od -An -tx1 -N26 "$T/d.idx" | tr -d ' \n')" = 4d4d494449445800000100000000000000080400000000000000 ]
	run -0 --separate-stderr mmap-index cat --output-format id "$T/d"
	[ "$output" = "$(cat "$T/in.txt")" ]
	[ -z "$stderr" ]
	run -0 mmap-index cat "$T/d"
	[ "${lines[0]}" = '{"targets":[1,2,3]}' ]
	[ "${lines[1]}" = '{"targets":[]}' ]
	run -0 mmap-index build -o "$T/m" --format megatron --dtype uint16 --input-format id "$T/in.txt"
	[ "$(stat -c %s "$T/m.idx")" = 122 ]
	cmp "$T/d.bin" "$T/m.bin"
}

@test "mmap-index: records in, records out (cat -R gives back the input)" {
	printf '%s\n' '[5,6,7,2]' '[]' '[1099511627783,-1]' | "$J" >"$T/in.tfr"
	run -0 --separate-stderr mmap-index build -o "$T/d" --dtype int64 "$T/in.tfr"
	[ -z "$stderr" ]
	mmap-index cat -R "$T/d" >"$T/out.tfr"
	cmp "$T/in.tfr" "$T/out.tfr"
	mmap-index cat --output-format records -o "$T/out2.tfr" "$T/d"
	cmp "$T/in.tfr" "$T/out2.tfr"
	# from stdin, another feature name
	printf '%s\n' '[1,2]' | "$J" -f inputs | mmap-index build -q -o "$T/e" -f inputs --dtype int32
	run -0 mmap-index cat -f inputs "$T/e"
	[ "$output" = '{"inputs":[1,2]}' ]
	run -0 mmap-index cat -f 'a"b\c' "$T/e"
	[ "$output" = '{"a\"b\\c":[1,2]}' ]
	jq -e . <<<"$output" >/dev/null
}

@test "mmap-index: non-canonical Examples give the same dataset as canonical ones" {
	# targets = [1, 300] written five ways: canonical; unpacked values;
	# value before key in the map entry; two Features messages (merged);
	# a duplicate key where the last one wins.
	printf '"hex:%s"\n' 0a140a120a077461726765747312071a050a0301ac02 \
	    0a140a120a077461726765747312071a05080108ac02 \
	    0a140a1212071a050a0301ac020a0774617267657473 \
	    0a0c0a0a0a016112051a030a01000a140a120a077461726765747312071a050a0301ac02 \
	    0a300a1a0a0774617267657473120f1a0d0a0b09ffffffffffffffffff010a120a077461726765747312071a050a0301ac02 |
	    "$J" >"$T/odd.tfr"
	run -0 --separate-stderr mmap-index build -q -o "$T/d" --dtype uint16 "$T/odd.tfr"
	[ -z "$stderr" ]
	run -0 mmap-index cat --output-format id "$T/d"
	[ "$output" = "$(printf '1 300\n%.0s' 1 2 3 4 5)" ]
}

@test "mmap-index: a token that does not fit is an error; --wrap wraps as upstream" {
	printf '%s\n' '[1,2]' '[3,70000]' | "$J" >"$T/in.tfr"
	run -1 --separate-stderr mmap-index build -o "$T/d" --dtype uint16 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 1 at offset 37: token 70000 does not fit uint16 (--wrap wraps it as upstream does)" ]
	run -0 find "$T" -name 'd*'
	[ -z "$output" ]
	printf '%s\n' '[70000,-1]' | "$J" >"$T/w.tfr"
	run -0 --separate-stderr mmap-index build -o "$T/d" --dtype uint16 --wrap "$T/w.tfr"
	run -0 mmap-index cat --output-format id "$T/d"
	[ "$output" = "4464 65535" ]
}

@test "mmap-index: --dtype auto picks upstream's type from --vocab-size and says so" {
	: >"$T/e.txt"
	run -0 --separate-stderr mmap-index build -o "$T/a" --input-format id --vocab-size 32000 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype uint16 (fairseq, vocabulary of 32000)" ]
	run -0 --separate-stderr mmap-index build -o "$T/a" --input-format id --vocab-size 65500 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype uint32 (fairseq, vocabulary of 65500)" ]
	run -0 --separate-stderr mmap-index build -o "$T/a" --format megatron --input-format id --vocab-size 65500 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype int32 (Megatron, vocabulary of 65500)" ]
	run -0 --separate-stderr mmap-index build -o "$T/a" --input-format id --vocab-size 5000000000 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype int64 (fairseq, vocabulary of 5000000000)" ]
	run -0 --separate-stderr mmap-index build -q -o "$T/a" --input-format id --vocab-size 32000 "$T/e.txt"
	[ -z "$stderr" ]
	run -0 mmap-index info --json "$T/a"
	[ "$(jq -r .dtype <<<"$output")" = uint16 ]
}

@test "mmap-index: Megatron documents: each, or ended by empty records/lines" {
	printf '%s\n' '[1,2]' '[3]' '{}' '[4,5,6]' '{}' '{}' '[7]' '[]' | "$J" >"$T/in.tfr"
	run -0 mmap-index build -q -o "$T/d" --format megatron --documents empty --dtype uint16 "$T/in.tfr"
	run -0 mmap-index info --json "$T/d"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[5,4]" ]
	# document_indices 0 2 3 3 5 at the end of the .idx
	[ "$(tail -c 40 "$T/d.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 2 3 3 5 " ]
	# without --documents empty an empty record is an error
	run -1 --separate-stderr mmap-index build -q -o "$T/e" --format megatron --dtype uint16 "$T/in.tfr"
	[[ "$stderr" == "mmap-index: $T/in.tfr: record 2 at offset "*": no features (an empty record ends a document only with --documents empty)" ]]
	ids "$T/in.txt" "1 2" "3" "" "4 5 6" "" "" "7"
	run -0 mmap-index build -q -o "$T/f" --format megatron --documents empty --dtype uint16 --input-format id "$T/in.txt"
	run -0 mmap-index info --json "$T/f"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[4,4]" ]
	run -0 mmap-index build -q -o "$T/g" --format megatron --dtype uint16 --input-format id "$T/in.txt"
	run -0 mmap-index info --json "$T/g"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[7,7]" ]
}

@test "mmap-index: a record without the feature names the record" {
	printf '%s\n' '[1]' | "$J" -f inputs >"$T/in.tfr"
	run -1 --separate-stderr mmap-index build -q -o "$T/d" --dtype int32 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 0 at offset 0: no such feature (see -f)" ]
	printf '%s\n' '[0.5]' | "$J" >"$T/f.tfr"
	run -1 --separate-stderr mmap-index build -q -o "$T/d" --dtype int32 "$T/f.tfr"
	[ "$stderr" = "mmap-index: $T/f.tfr: record 0 at offset 0: a float_list needs a float --dtype" ]
	printf 'garbage that is not a record' >"$T/g.tfr"
	run -1 --separate-stderr mmap-index build -q -o "$T/d" --dtype int32 "$T/g.tfr"
	[[ "$stderr" == "mmap-index: $T/g.tfr: record 0 at offset 0: "* ]]
	run -1 --separate-stderr mmap-index build -q -o "$T/d" --dtype int32 "$T/nosuch.tfr"
	[ "$stderr" = "mmap-index: $T/nosuch.tfr: No such file or directory" ]
	run -0 find "$T" -name 'd*'
	[ -z "$output" ]
}

@test "mmap-index: float datasets print floats" {
	printf '%s\n' '[0.5,-2.25,10000000000.0]' '[3.0,0.1]' | "$J" >"$T/f.tfr"
	run -0 mmap-index build -q -o "$T/f" --format megatron --dtype float32 "$T/f.tfr"
	run -0 mmap-index cat "$T/f"
	[ "${lines[0]}" = '{"targets":[0.5,-2.25,10000000000.0]}' ]
	[ "${lines[1]}" = '{"targets":[3.0,0.1]}' ]
	[ "$(od -An -tu1 -j17 -N1 "$T/f.idx" | tr -d ' ')" = 7 ]
	ids "$T/d.txt" "1e-05 2.5 1e+300" "123456789.125"
	run -0 mmap-index build -q -o "$T/d" --dtype float64 --input-format id "$T/d.txt"
	[ "$(od -An -tu1 -j17 -N1 "$T/d.idx" | tr -d ' ')" = 6 ]
	run -0 mmap-index cat --output-format id "$T/d"
	[ "${lines[0]}" = "1e-05 2.5 1e+300" ]
	[ "${lines[1]}" = "123456789.125" ]
}

@test "mmap-index: every dtype round trips through both layouts" {
	local t f
	for f in fairseq megatron; do
		for t in uint8 int8 int16 uint16 int32 uint32 int64 uint64 float32 float64; do
			case $f:$t in fairseq:float32|megatron:uint32|megatron:uint64) continue;; esac
			case $t in
			uint8) v="0 255 7";; int8) v="-128 127 0";; int16) v="-32768 32767";;
			uint16) v="0 65535";; int32) v="-2147483648 2147483647";;
			uint32) v="0 4294967295";; int64|uint64) v="0 9223372036854775807";;
			float*) v="0.5 -1.5 3.0";;
			esac
			case $t in float*) ids "$T/in.txt" "$v" "" "1.0";; *) ids "$T/in.txt" "$v" "" "1";; esac
			run -0 mmap-index build -q -o "$T/d" --format $f --dtype $t --input-format id "$T/in.txt"
			run -0 mmap-index cat --output-format id "$T/d"
			[ "$output" = "$(cat "$T/in.txt")" ] || { echo "$f $t: $output"; false; }
			run -0 mmap-index info --json "$T/d"
			[ "$(jq -r '.layout + " " + .dtype' <<<"$output")" = "$f $t" ]
		done
	done
}

@test "mmap-index: get by argument and from stdin; out of range is an error after the good ones" {
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
	run -0 mmap-index get --output-format id "$T/d" 2 0
	[ "$output" = $'30\n10' ]
	run -0 bash -c 'printf "1\n1\n" | mmap-index get "$1" -' _ "$T/d"
	[ "$output" = $'{"targets":[20,21]}\n{"targets":[20,21]}' ]
	run -1 --separate-stderr mmap-index get "$T/d" 0 3
	[ "$output" = '{"targets":[10]}' ]
	[ "$stderr" = "mmap-index: $T/d: index 3 out of range (3 sequences)" ]
	run -1 --separate-stderr bash -c 'printf "0\nx\n" | mmap-index get "$1" -' _ "$T/d"
	[ "$output" = '{"targets":[10]}' ]
	[ "$stderr" = "mmap-index: stdin: line 2: bad index 'x'" ]
	run -1 --separate-stderr bash -c 'printf "2\n1\n9\n0\n" | mmap-index get --output-format id "$1" -' _ "$T/d"
	[ "$output" = $'30\n20 21' ]
	[ "$stderr" = "mmap-index: $T/d: index 9 out of range (3 sequences)" ]
	run -0 mmap-index cat --range 1:2 --output-format id "$T/d"
	[ "$output" = "20 21" ]
	run -0 mmap-index cat --range 2: --output-format id "$T/d"
	[ "$output" = "30" ]
	run -0 mmap-index cat --range 7:9 "$T/d"
	[ -z "$output" ]
}

@test "mmap-index: get - reads index lines in blocks: line ends, long lines, faults late in the input" {
	seq 0 999 | awk '{ print $1, $1 + 1 }' >"$T/in.txt"
	mmap-index build -q -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
	# a last line without a newline; trailing spaces and CRs
	run -0 bash -c 'printf "5\r\n7  \r \n9" | mmap-index get --output-format id "$1" -' _ "$T/d"
	[ "$output" = $'5 6\n7 8\n9 10' ]
	# a valid line longer than any read block
	run -0 bash -c '{ printf 3; head -c 200000 /dev/zero | tr "\0" " "; printf "\n4\n"; } | mmap-index get --output-format id "$1" -' _ "$T/d"
	[ "$output" = $'3 4\n4 5' ]
	# bad lines: leading space, sign, empty, inner space, NUL; the text is cut at 40 bytes
	local l
	for l in " 1" "+1" "" "1 2" "12345678901234567890123456789012345678901234567890"; do
		run -1 --separate-stderr bash -c 'printf "2\n%s\n3\n" "$2" | mmap-index get --output-format id "$1" -' _ "$T/d" "$l"
		[ "$output" = "2 3" ]
		[ "$stderr" = "mmap-index: stdin: line 2: bad index '${l:0:40}'" ] || { echo "$l: $stderr"; false; }
	done
	run -1 --separate-stderr bash -c 'printf "2\n7x" | mmap-index get --output-format id "$1" -' _ "$T/d"
	[ "$output" = "2 3" ]
	[ "$stderr" = "mmap-index: stdin: line 2: bad index '7x'" ]
	# 18446744073709551609 is the largest index read; one more is a bad line
	run -1 --separate-stderr bash -c 'echo 18446744073709551609 | mmap-index get "$1" -' _ "$T/d"
	[ "$stderr" = "mmap-index: $T/d: index 18446744073709551609 out of range (1000 sequences)" ]
	run -1 --separate-stderr bash -c 'echo 18446744073709551610 | mmap-index get "$1" -' _ "$T/d"
	[ "$stderr" = "mmap-index: stdin: line 1: bad index '18446744073709551610'" ]
	# faults after many batches and read blocks: everything before is written
	for i in $(seq 1 30); do seq 0 999; done >"$T/idx.txt"
	awk 'NR == FNR { l[NR - 1] = $0; next } { print l[$1] }' "$T/in.txt" "$T/idx.txt" >"$T/want.txt"
	{ cat "$T/idx.txt"; echo 1000; echo 5; } >"$T/idx-range.txt"
	run -1 --separate-stderr bash -c 'mmap-index get --output-format id "$1" - <"$2" >"$3"' _ "$T/d" "$T/idx-range.txt" "$T/got.txt"
	[ "$stderr" = "mmap-index: $T/d: index 1000 out of range (1000 sequences)" ]
	cmp "$T/want.txt" "$T/got.txt"
	{ cat "$T/idx.txt"; echo x; echo 5; } >"$T/idx-bad.txt"
	run -1 --separate-stderr bash -c 'mmap-index get --output-format id "$1" - <"$2" >"$3"' _ "$T/d" "$T/idx-bad.txt" "$T/got.txt"
	[ "$stderr" = "mmap-index: stdin: line 30001: bad index 'x'" ]
	cmp "$T/want.txt" "$T/got.txt"
	# - twice: the second reads nothing; indices as operands around it
	run -0 bash -c 'printf "1\n" | mmap-index get --output-format id "$1" 0 - 2 - 3' _ "$T/d"
	[ "$output" = $'0 1\n1 2\n2 3\n3 4' ]
}

@test "mmap-index: id output of every integer dtype at the digit-count edges" {
	local t v
	for t in uint8 int8 int16 uint16 int32 uint32 int64 uint64; do
		case $t in
		uint8) v="0 9 10 99 100 255";;
		int8) v="-128 -100 -99 -10 -9 -1 0 1 9 10 99 100 127";;
		int16) v="-32768 -10000 -9999 -1000 -999 -1 0 9 10 99 100 999 1000 9999 10000 32767";;
		uint16) v="0 1 9 10 99 100 999 1000 9999 10000 65535";;
		int32) v="-2147483648 -100000 -99999 -10000 -9999 -1 0 9 99999 100000 2147483647";;
		uint32) v="0 99999 100000 999999 4294967295";;
		*) v="-9223372036854775808 -99999 -1 0 99999 100000 9223372036854775807";;
		esac
		[ $t = uint64 ] && v="0 99999 100000 9223372036854775807"
		ids "$T/in.txt" "$v" "" "7"
		run -0 mmap-index build -q --wrap -o "$T/d" --dtype $t --input-format id "$T/in.txt"
		run -0 mmap-index cat --output-format id "$T/d"
		[ "$output" = "$(cat "$T/in.txt")" ] || { echo "$t: $output"; false; }
		run -0 mmap-index get "$T/d" 0 1
		[ "$output" = "{\"targets\":[${v// /,}]}"$'\n{"targets":[]}' ] || { echo "$t: $output"; false; }
	done
}

@test "mmap-index: info shows layout, dtype, counts and a histogram" {
	ids "$T/in.txt" "1 2 3" "" "4" "5 6 7 8 9"
	mmap-index build -q -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
	run -0 --separate-stderr mmap-index info "$T/d"
	[ "$output" = "prefix:     $T/d
layout:     fairseq
dtype:      uint16 (code 8, 2 bytes)
sequences:  4
tokens:     9
bin bytes:  18
idx bytes:  74
length:     min 0, mean 2.25, max 5
histogram:
  0                      1
  1                      1
  2-3                    1
  4-7                    1" ]
	run -0 mmap-index info --json "$T/d"
	[ "$(jq -c '[.sequences,.tokens,.documents,.length.max,(.histogram|length)]' <<<"$output")" = "[4,9,null,5,4]" ]
}

@test "mmap-index: merge equals one build of the concatenation" {
	local f
	for f in fairseq megatron; do
		ids "$T/a.txt" "1 2" "3"
		ids "$T/b.txt" "" "4 5 6"
		cat "$T/a.txt" "$T/b.txt" >"$T/ab.txt"
		mmap-index build -q -o "$T/a" --format $f --dtype uint16 --input-format id "$T/a.txt"
		mmap-index build -q -o "$T/b" --format $f --dtype uint16 --input-format id "$T/b.txt"
		mmap-index build -q -o "$T/ab" --format $f --dtype uint16 --input-format id "$T/ab.txt"
		run -0 --separate-stderr mmap-index merge -o "$T/m" "$T/a" "$T/b"
		[ -z "$stderr" ] && [ -z "$output" ]
		cmp "$T/ab.bin" "$T/m.bin"
		cmp "$T/ab.idx" "$T/m.idx"
	done
}

@test "mmap-index: merge keeps Megatron documents, refuses mixed dtypes and layouts" {
	ids "$T/a.txt" "1" "2" "" "3"
	mmap-index build -q -o "$T/a" --format megatron --documents empty --dtype uint16 --input-format id "$T/a.txt"
	mmap-index merge -o "$T/m" "$T/a" "$T/a" "$T/a"
	[ "$(tail -c 56 "$T/m.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 2 3 5 6 8 9 " ]
	mmap-index build -q -o "$T/b" --format megatron --dtype int32 --input-format id "$T/a.txt"
	run -1 --separate-stderr mmap-index merge -o "$T/x" "$T/a" "$T/b"
	[ "$stderr" = "mmap-index: $T/b: dtype int32, but $T/a is uint16" ]
	mmap-index build -q -o "$T/c" --dtype uint16 --input-format id "$T/a.txt"
	run -1 --separate-stderr mmap-index merge -o "$T/x" "$T/a" "$T/c"
	[ "$stderr" = "mmap-index: $T/c: layout fairseq, but $T/a is megatron" ]
	[ ! -e "$T/x.bin" ] && [ ! -e "$T/x.idx" ]
}

@test "mmap-index: verify passes good datasets and names the first bad entry" {
	ids "$T/in.txt" "1 2" "3" "4 5 6"
	mmap-index build -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
	run -0 --separate-stderr mmap-index verify "$T/d"
	[ "$output" = "$T/d: ok (fairseq, int32, 3 sequences, 6 tokens)" ]
	[ -z "$stderr" ]
	run -0 --separate-stderr mmap-index verify -q "$T/d"
	[ -z "$output" ]
	# pointer of sequence 1 (int64 at 26 + 12 + 8) made 4 instead of 8
	cp "$T/d.bin" "$T/p.bin"
	cp "$T/d.idx" "$T/p.idx"
	printf '\004' | dd of="$T/p.idx" bs=1 seek=46 conv=notrunc status=none
	run -1 --separate-stderr mmap-index verify "$T/p" "$T/d"
	[ "${lines[0]}" = "$T/d: ok (fairseq, int32, 3 sequences, 6 tokens)" ]
	[ "$stderr" = "mmap-index: $T/p.idx: sequence 1: pointer 4, expected 8 (sequences must follow each other in $T/p.bin)" ]
	# a .bin longer than the index says
	cp "$T/d.idx" "$T/q.idx"
	{ cat "$T/d.bin"; printf x; } >"$T/q.bin"
	run -1 --separate-stderr mmap-index verify "$T/q"
	[ "$stderr" = "mmap-index: $T/q.bin: 25 bytes, but the index accounts for 24" ]
}

@test "mmap-index: damaged or foreign indexes give one line naming the file" {
	ids "$T/in.txt" "1 2" "3"
	mmap-index build -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
	head -c 49 "$T/d.idx" >"$T/t.idx"
	cp "$T/d.bin" "$T/t.bin"
	run -1 --separate-stderr mmap-index cat "$T/t"
	[ "$stderr" = "mmap-index: $T/t.idx: truncated: 49 bytes, but 2 sequences need at least 26 + 12 * 2 = 50" ]
	{ cat "$T/d.idx"; printf x; } >"$T/t.idx"
	run -1 --separate-stderr mmap-index info "$T/t"
	[[ "$stderr" == "mmap-index: $T/t.idx: size 51 matches no layout for 2 sequences"* ]]
	printf 'TNTIDX\0\0garbagegarbagegarbagegarbage' >"$T/t.idx"
	run -1 --separate-stderr mmap-index cat "$T/t"
	[[ "$stderr" == "mmap-index: $T/t.idx: a legacy fairseq IndexedDataset index"* ]]
	printf 'hello' >"$T/t.idx"
	run -1 --separate-stderr mmap-index cat "$T/t"
	[ "$stderr" = "mmap-index: $T/t.idx: bad magic (not an MMIDIDX index)" ]
	run -1 --separate-stderr mmap-index cat "$T/nosuch"
	[ "$stderr" = "mmap-index: $T/nosuch.idx: No such file or directory" ]
	cp "$T/d.idx" "$T/s.idx"
	head -c 5 "$T/d.bin" >"$T/s.bin"
	run -1 --separate-stderr mmap-index cat "$T/s"
	[ -z "$output" ]
	[ "$stderr" = "mmap-index: $T/s.idx: sequence 0: pointer 0 + 8 bytes runs past the end of $T/s.bin (5 bytes)" ]
	run -1 --separate-stderr mmap-index cat --format megatron "$T/d"
	[[ "$stderr" == "mmap-index: $T/d.idx: not a Megatron index: "* ]]
}

@test "mmap-index: an empty dataset has a 0-byte .bin and reads fine" {
	: >"$T/e.txt"
	run -0 mmap-index build -q -o "$T/e" --format megatron --dtype int32 --input-format id "$T/e.txt"
	[ "$(stat -c %s "$T/e.bin")" = 0 ]
	[ "$(stat -c %s "$T/e.idx")" = 42 ]
	run -0 --separate-stderr mmap-index cat "$T/e"
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 mmap-index verify "$T/e"
}

@test "mmap-index: a closed pipe ends quietly; a full disk is an error" {
	seq 1 30000 | awk '{ print $1, $1 + 1, $1 + 2 }' >"$T/big.txt"
	mmap-index build -q -o "$T/big" --dtype int32 --input-format id "$T/big.txt"
	run -0 --separate-stderr bash -c 'mmap-index cat "$1" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big"
	[ "$output" = 141 ] && [ -z "$stderr" ]
	run -0 --separate-stderr bash -c 'mmap-index cat -R "$1" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big"
	[ "$output" = 141 ] && [ -z "$stderr" ]
	run -1 --separate-stderr bash -c 'mmap-index cat "$1" >/dev/full' _ "$T/big"
	[ "$stderr" = "mmap-index: stdout: No space left on device" ]
	run -0 mmap-index cat --output-format id "$T/big"
	[ "$output" = "$(cat "$T/big.txt")" ]
	# many lookups from stdin, in any order, come out in that order
	seq 29999 -7 0 >"$T/idx.txt"
	mmap-index get --output-format id "$T/big" - <"$T/idx.txt" >"$T/got.txt"
	awk 'NR == FNR { l[NR - 1] = $0; next } { print l[$1] }' "$T/big.txt" "$T/idx.txt" | cmp - "$T/got.txt"
}

@test "mmap-index: build --dtype uint64 from id lines keeps ids above INT64_MAX; cat gives the same text" {
	printf '18446744073709551615 9223372036854775808 0\n9223372036854775807\n\n5\n' >"$T/u64.txt"
	run -0 --separate-stderr mmap-index build -q --dtype uint64 --input-format id -o "$T/u64" "$T/u64.txt"
	run -0 mmap-index cat --output-format id "$T/u64"
	[ "$output" = "$(cat "$T/u64.txt")" ]
	run -1 --separate-stderr bash -c 'echo 18446744073709551616 | mmap-index build -q --dtype uint64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: bad token id '18446744073709551616'" ]
	run -1 --separate-stderr bash -c 'echo 3 -1 | mmap-index build -q --dtype uint64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: token -1 does not fit uint64 (--wrap wraps it as upstream does)" ]
	run -1 --separate-stderr bash -c 'echo 9223372036854775808 | mmap-index build -q --dtype int64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: bad token id '9223372036854775808'" ]
	[ ! -e "$T/u64b.idx" ] && [ ! -e "$T/u64b.bin" ]
}

@test "mmap-index: get -j: the same bytes for any number of threads, faults late in the input included" {
	seq 1 30000 | awk '{ n = $1 % 7; s = ""; for (k = 0; k < n; k++) s = s " " ($1 * 7 + k) % 70000; print substr(s, 2) }' >"$T/big.txt"
	mmap-index build -q -o "$T/big" --dtype uint32 --input-format id "$T/big.txt"
	mmap-index build -q -o "$T/b16" --dtype uint16 --wrap --input-format id "$T/big.txt"
	awk 'BEGIN { srand(3); for (i = 0; i < 20000; i++) print int(rand() * 30000) }' >"$T/idx.txt"
	awk 'NR == FNR { l[NR - 1] = $0; next } { print l[$1] }' "$T/big.txt" "$T/idx.txt" >"$T/want.txt"
	for j in 1 2 3; do
		mmap-index get -j "$j" --output-format id "$T/big" - <"$T/idx.txt" >"$T/got.txt"
		cmp "$T/want.txt" "$T/got.txt"
		mmap-index get --jobs="$j" "$T/b16" 5 - 7 <"$T/idx.txt" >"$T/got.$j.json"
		cmp "$T/got.1.json" "$T/got.$j.json"
	done
	# an index out of range, and a bad line, at line 15001 of 20000
	awk 'NR == 15001 { print 30000; next } { print }' "$T/idx.txt" >"$T/idx-range.txt"
	awk 'NR == 15001 { print "1e3"; next } { print }' "$T/idx.txt" >"$T/idx-bad.txt"
	head -n 15000 "$T/want.txt" >"$T/want-15000.txt"
	for j in 1 2 3; do
		run -1 --separate-stderr bash -c 'mmap-index get -j "$4" --output-format id "$1" - <"$2" >"$3"' _ "$T/big" "$T/idx-range.txt" "$T/got.txt" "$j"
		[ "$stderr" = "mmap-index: $T/big: index 30000 out of range (30000 sequences)" ]
		cmp "$T/want-15000.txt" "$T/got.txt"
		run -1 --separate-stderr bash -c 'mmap-index get -j "$4" --output-format id "$1" - <"$2" >"$3"' _ "$T/big" "$T/idx-bad.txt" "$T/got.txt" "$j"
		[ "$stderr" = "mmap-index: stdin: line 15001: bad index '1e3'" ]
		cmp "$T/want-15000.txt" "$T/got.txt"
	done
	# a pointer past the end of the .bin, met by the lookup at line 15001
	cp "$T/big.bin" "$T/hurt.bin"
	cp "$T/big.idx" "$T/hurt.idx"
	k=$(sed -n 15001p "$T/idx.txt")
	printf '\377\377\377\377\377\377\377\177' | dd of="$T/hurt.idx" bs=1 seek=$((26 + 4 * 30000 + 8 * k)) conv=notrunc status=none
	for j in 1 2 3; do
		run -1 --separate-stderr bash -c 'mmap-index get -j "$4" --output-format id "$1" - <"$2" >"$3"' _ "$T/hurt" "$T/idx.txt" "$T/got.txt" "$j"
		[ "${#stderr_lines[@]}" = 1 ]
		[[ "$stderr" = "mmap-index: $T/hurt.idx: sequence $k: pointer 9223372036854775807 + "*" bytes runs past the end of $T/hurt.bin ("*" bytes)" ]]
		cmp "$T/want-15000.txt" "$T/got.txt"
	done
	run -0 --separate-stderr bash -c 'mmap-index get -j 2 "$1" - <"$2" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big" "$T/idx.txt"
	[ "$output" = 141 ] && [ -z "$stderr" ]
	run -1 --separate-stderr bash -c 'mmap-index get -j 2 "$1" - <"$2" >/dev/full' _ "$T/big" "$T/idx.txt"
	[ "$stderr" = "mmap-index: stdout: No space left on device" ]
	run -2 --separate-stderr mmap-index get -j x "$T/big" 0
	run -2 --separate-stderr mmap-index cat -j 2 "$T/big"
}

@test "mmap-index: build -j: the same files for any number of threads; a fault late in the input leaves none" {
	# 30000 records (several jobs of records), empty ones ending documents
	seq 1 30000 | awk '{ n = $1 % 7; s = ""; for (k = 0; k < n; k++) s = s "," ($1 * 7 + k) % 65536
		print (n == 6 ? "{}" : "[" substr(s, 2) "]") }' | "$J" >"$T/in.tfr"
	for j in 1 2 3; do
		mmap-index build -q -j "$j" -o "$T/m$j" --format megatron --documents empty --dtype int32 "$T/in.tfr"
		mmap-index build -q --jobs="$j" -o "$T/w$j" --format megatron --documents empty --dtype uint8 --wrap "$T/in.tfr"
		cmp "$T/m1.bin" "$T/m$j.bin"
		cmp "$T/m1.idx" "$T/m$j.idx"
		cmp "$T/w1.bin" "$T/w$j.bin"
		cmp "$T/w1.idx" "$T/w$j.idx"
	done
	run -0 mmap-index info --json "$T/m2"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[25715,4286]" ]
	# fairseq: the first empty record (record 5) is the fault
	run -1 --separate-stderr mmap-index build -q -j 2 -o "$T/f" --dtype uint16 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 5 at offset 190: no features (an empty record ends a document only with --documents empty)" ]
	# a token that does not fit at record 25000, a bad payload CRC after it
	seq 1 30000 | awk '{ n = $1 % 7; s = ""; for (k = 0; k < n; k++) s = s "," ($1 * 7 + k) % 65536
		print ($1 == 25001 ? "[1,65536]" : "[" substr(s, 2) "]") }' | "$J" >"$T/late.tfr"
	for j in 1 3; do
		mmap-index build -q -j "$j" -o "$T/g$j" --dtype int64 "$T/late.tfr"
	done
	cmp "$T/g1.bin" "$T/g3.bin"
	cmp "$T/g1.idx" "$T/g3.idx"
	# uint16 with --wrap: the same in any number of threads, 65536 kept as 0
	for j in 1 3; do
		mmap-index build -q --wrap -j "$j" -o "$T/u$j" --dtype uint16 "$T/late.tfr"
	done
	cmp "$T/u1.bin" "$T/u3.bin"
	cmp "$T/u1.idx" "$T/u3.idx"
	run -0 mmap-index get --output-format id "$T/u3" 24999 25000
	[ "$output" = "$(printf '%s\n' "43928 43929 43930" "1 0")" ]
	size=$(wc -c <"$T/late.tfr")
	printf '\125' | dd of="$T/late.tfr" bs=1 seek=$((size - 1000)) conv=notrunc status=none
	run -1 --separate-stderr mmap-index build -q -j 1 -o "$T/late" --dtype uint16 "$T/late.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/late.tfr: record 25000 at offset "*": token 65536 does not fit uint16 (--wrap wraps it as upstream does)" ]]
	for j in 2 3; do
		run -1 --separate-stderr mmap-index build -q -j "$j" -o "$T/late" --dtype uint16 "$T/late.tfr"
		[ "${#stderr_lines[@]}" = 1 ] && [ "$stderr" = "$want" ]
	done
	# with room for the token, the bad CRC near the end is the fault
	run -1 --separate-stderr mmap-index build -q -j 1 -o "$T/late" --dtype int32 "$T/late.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/late.tfr: record "*" at offset "*": payload CRC mismatch" ]]
	run -1 --separate-stderr mmap-index build -q -j 2 -o "$T/late" --format megatron --dtype int32 "$T/late.tfr"
	[ "${#stderr_lines[@]}" = 1 ] && [ "$stderr" = "$want" ]
	# cut short in the middle of a record
	head -c $((size / 2)) "$T/late.tfr" >"$T/cut.tfr"
	run -1 --separate-stderr mmap-index build -q -j 1 -o "$T/late" --dtype int32 "$T/cut.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/cut.tfr: record "*" at offset "*": truncated "* ]]
	run -1 --separate-stderr mmap-index build -q -j 2 -o "$T/late" --dtype int32 "$T/cut.tfr"
	[ "${#stderr_lines[@]}" = 1 ] && [ "$stderr" = "$want" ]
	run -0 find "$T" -name 'late*' ! -name '*.tfr'
	[ -z "$output" ]
	run -0 find "$T" -name 'f.*'
	[ -z "$output" ]
}

@test "mmap-index: man page example: an Open-NLLB-style sharded layout" {
	mkdir -p "$T/data/shard000" "$T/data/shard001"
	ids "$T/s0.txt" "5 6 2" "7 2"
	ids "$T/s1.txt" "8 2"
	mmap-index build -q -o "$T/data/shard000/train.eng_Latn-fra_Latn.eng_Latn" --vocab-size 32000 --input-format id "$T/s0.txt"
	mmap-index build -q -o "$T/data/shard001/train.eng_Latn-fra_Latn.eng_Latn" --vocab-size 32000 --input-format id "$T/s1.txt"
	run -0 mmap-index merge -o "$T/all" "$T"/data/shard*/train.eng_Latn-fra_Latn.eng_Latn.idx
	run -0 mmap-index cat --output-format id "$T/all"
	[ "$output" = $'5 6 2\n7 2\n8 2' ]
	run -0 mmap-index verify "$T"/data/shard*/*.idx
	[ "${#lines[@]}" = 2 ]
	[ "${lines[1]}" = "$T/data/shard001/train.eng_Latn-fra_Latn.eng_Latn: ok (fairseq, uint16, 1 sequences, 2 tokens)" ]
}

@test "mmap-index: build and merge keep the old pair when PREFIX.idx is a directory, and refuse it before the work" {
	ids "$T/in.txt" "1 2 3" "4 5"
	mmap-index build -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	mkdir "$T/old.idx"
	refuses_output "mmap-index: $T/old.idx: Is a directory" mmap-index build -q -o "$T/old" "$T/nosuch.tfr"
	cmp "$T/good.bin" "$T/old.bin"
	refuses_output "mmap-index: $T/old.idx: Is a directory" mmap-index merge -q -o "$T/old" "$T/good"
	cmp "$T/good.bin" "$T/old.bin"
	[ "$(ls "$T" | grep -c '^old')" = 2 ]
}

@test "mmap-index: a failed build or merge leaves the old pair as it was" {
	ids "$T/in.txt" "1 2 3" "4 5"
	ids "$T/bad.txt" "1 2" "x"
	mmap-index build -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	cp "$T/good.idx" "$T/old.idx"
	run -1 mmap-index build -q -o "$T/old" --input-format id "$T/bad.txt"
	cmp "$T/good.bin" "$T/old.bin"
	cmp "$T/good.idx" "$T/old.idx"
	run -1 mmap-index build -q -o "$T/old" "$T/nosuch.tfr"
	cmp "$T/good.bin" "$T/old.bin"
	cmp "$T/good.idx" "$T/old.idx"
	printf 'junk' >"$T/j.idx"
	: >"$T/j.bin"
	run -1 mmap-index merge -q -o "$T/old" "$T/good" "$T/j"
	cmp "$T/good.bin" "$T/old.bin"
	cmp "$T/good.idx" "$T/old.idx"
	[ "$(ls "$T" | grep -c '^old')" = 2 ]
}

@test "mmap-index: kill -9 in the middle of a build or get -o leaves the old files" {
	local i
	for i in $(seq 1 3000); do echo "$i $((i + 1)) $((i + 2))"; done >"$T/in.txt"
	mmap-index build -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	cp "$T/good.idx" "$T/old.idx"
	kill_mid_write "$T/old.bin" "$T/in.txt" mmap-index build -q -o "$T/old" --input-format id
	cmp "$T/good.idx" "$T/old.idx"
	echo OLD >"$T/keep"
	seq 0 2999 >"$T/idx.txt"
	kill_mid_write "$T/keep" "$T/idx.txt" mmap-index get -o "$T/keep" "$T/good" -
}

@test "mmap-index: get, cat and info -o keep the old file on a fault; an unwritable output is refused first" {
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build -q -o "$T/d" --input-format id "$T/in.txt"
	echo OLD >"$T/keep"
	run -1 mmap-index get -o "$T/keep" "$T/d" 0 9
	[ "$(cat "$T/keep")" = OLD ]
	run -1 mmap-index cat -o "$T/keep" "$T/nosuch"
	[ "$(cat "$T/keep")" = OLD ]
	run -1 mmap-index info -o "$T/keep" "$T/nosuch"
	[ "$(cat "$T/keep")" = OLD ]
	mkdir "$T/adir"
	refuses_output "mmap-index: $T/adir: Is a directory" mmap-index get -o "$T/adir" "$T/nosuch" 0
	refuses_output "mmap-index: $T/adir: Is a directory" mmap-index cat -o "$T/adir" "$T/nosuch"
	refuses_output "mmap-index: $T/nodir/x.bin: No such file or directory" mmap-index build -o "$T/nodir/x" "$T/nosuch"
	refuses_output "mmap-index: an output file name is empty" mmap-index build -o '' "$T/nosuch"
	refuses_output "mmap-index: an output file name is empty" mmap-index cat -o '' "$T/nosuch"
}

@test "mmap-index: get after a bad index: stdout is what the good indices give; -o keeps it only with --keep-partial" {
	local a
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build -q -o "$T/d" --input-format id "$T/in.txt"
	for a in "" "-R" "--output-format id" "-j 2"; do
		printf '2\n0\n1\n' | mmap-index get $a "$T/d" - >"$T/good.out"
		run -1 bash -c 'printf "2\n0\n1\n7\n1\n" | mmap-index get $1 "$2" - >"$3"' _ "$a" "$T/d" "$T/bad.out"
		cmp "$T/good.out" "$T/bad.out"
		echo OLD >"$T/old.out"
		run -1 bash -c 'printf "2\n0\n1\n7\n1\n" | mmap-index get $1 -o "$3" "$2" -' _ "$a" "$T/d" "$T/old.out"
		[ "$(cat "$T/old.out")" = OLD ]
		run -1 bash -c 'printf "2\n0\n1\n7\n1\n" | mmap-index get $1 --keep-partial -o "$3" "$2" -' _ "$a" "$T/d" "$T/kept.out"
		cmp "$T/good.out" "$T/kept.out"
	done
}

@test "mmap-index: build --keep-partial commits the pair of the sequences before a fault" {
	local i j
	for i in $(seq 1 3000); do echo "[$i,$((i + 1)),7]"; done | "$J" >"$T/in.tfr"
	damage_at "$T/in.tfr" 2000 "$T/bad.tfr" "$T/good.tfr"
	for j in 1 2; do
		mmap-index build -q -j "$j" -o "$T/g" "$T/good.tfr"
		run -1 mmap-index build -q -j "$j" -o "$T/b" "$T/bad.tfr"
		[ ! -e "$T/b.bin" ] && [ ! -e "$T/b.idx" ]
		run -1 mmap-index build -q -j "$j" --keep-partial -o "$T/b" "$T/bad.tfr"
		cmp "$T/g.bin" "$T/b.bin"
		cmp "$T/g.idx" "$T/b.idx"
		rm -f "$T/b.bin" "$T/b.idx"
	done
	# id lines: a bad id, and a token that does not fit the dtype
	seq 1 500 >"$T/good.txt"
	{ cat "$T/good.txt"; echo "1 x"; seq 1 9; } >"$T/bad.txt"
	{ cat "$T/good.txt"; echo "70000"; seq 1 9; } >"$T/big.txt"
	mmap-index build -q --dtype uint16 --input-format id -o "$T/g" "$T/good.txt"
	for f in bad big; do
		run -1 mmap-index build -q --dtype uint16 --input-format id --keep-partial -o "$T/b" "$T/$f.txt"
		cmp "$T/g.bin" "$T/b.bin"
		cmp "$T/g.idx" "$T/b.idx"
	done
	# a missing input is skipped: the others are kept
	run -1 mmap-index build -q --keep-partial -o "$T/b" "$T/good.tfr" "$T/nosuch"
	mmap-index build -q -o "$T/g" "$T/good.tfr"
	cmp "$T/g.bin" "$T/b.bin"
	cmp "$T/g.idx" "$T/b.idx"
}
