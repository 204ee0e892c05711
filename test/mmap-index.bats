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
	[[ "${lines[0]}" == "usage: mmap-index build [-q] [--keep-partial] [--progress | --no-progress]"* ]]
	run -0 --separate-stderr mmap-index cat --help
	[[ "${lines[0]}" == "usage: mmap-index build"* ]]
	run -0 --separate-stderr mmap-index -V
	[ "$output" = "mmap-index 0.1.0" ]
	[ -z "$stderr" ]
}

@test "mmap-index: -h is the man page SYNOPSIS" {
	help_is_synopsis mmap-index
}

@test "mmap-index: usage errors exit 2" {
	run -2 --separate-stderr mmap-index
	run -2 --separate-stderr mmap-index frobnicate
	[ "${stderr%%$'\n'*}" = "mmap-index: unknown subcommand 'frobnicate'" ]
	run -2 --separate-stderr mmap-index cat --wrap x
	[ "${stderr%%$'\n'*}" = "mmap-index: cat: --wrap does not apply (it applies to build)" ]
	run -2 --separate-stderr mmap-index build --raw-ids --input-format id
	[ "${stderr%%$'\n'*}" = "mmap-index: build: -o PREFIX is needed" ]
	run -2 --separate-stderr mmap-index build --raw-ids -o "$T/x" --dtype float16
	run -2 --separate-stderr mmap-index build --raw-ids -o "$T/x" --documents empty
	[ "${stderr%%$'\n'*}" = "mmap-index: --documents applies to --format megatron" ]
	run -2 --separate-stderr mmap-index build --raw-ids -o "$T/x" --format megatron --dtype uint32
	[ "${stderr%%$'\n'*}" = "mmap-index: Megatron cannot store uint32" ]
	run -2 --separate-stderr mmap-index get "$T/x" 1x
	run -2 --separate-stderr mmap-index cat --range 5 "$T/x"
	[ ! -e "$T/x.bin" ] && [ ! -e "$T/x.idx" ]
}

@test "mmap-index: id lines round trip, worked example bytes" {
	ids "$T/in.txt" "1 2 3" "" "65535 0" "7"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
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
	run -0 mmap-index build --raw-ids -o "$T/m" --format megatron --dtype uint16 --input-format id "$T/in.txt"
	[ "$(stat -c %s "$T/m.idx")" = 122 ]
	cmp "$T/d.bin" "$T/m.bin"
}

@test "mmap-index: records in, records out (cat -R gives back the input)" {
	printf '%s\n' '[5,6,7,2]' '[]' '[1099511627783,-1]' | "$J" >"$T/in.tfr"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/d" --dtype int64 "$T/in.tfr"
	[ -z "$stderr" ]
	mmap-index cat -R "$T/d" >"$T/out.tfr"
	cmp "$T/in.tfr" "$T/out.tfr"
	mmap-index cat --output-format records -o "$T/out2.tfr" "$T/d"
	cmp "$T/in.tfr" "$T/out2.tfr"
	# from stdin, another feature name
	printf '%s\n' '[1,2]' | "$J" -f inputs | mmap-index build --raw-ids -q -o "$T/e" -f inputs --dtype int32
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
	run -0 --separate-stderr mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 "$T/odd.tfr"
	[ -z "$stderr" ]
	run -0 mmap-index cat --output-format id "$T/d"
	[ "$output" = "$(printf '1 300\n%.0s' 1 2 3 4 5)" ]
}

@test "mmap-index: a token that does not fit is an error; --wrap wraps as upstream" {
	printf '%s\n' '[1,2]' '[3,70000]' | "$J" >"$T/in.tfr"
	run -1 --separate-stderr mmap-index build --raw-ids -o "$T/d" --dtype uint16 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 1 at offset 37: token 70000 does not fit uint16 (--wrap wraps it as upstream does)" ]
	run -0 find "$T" -name 'd*'
	[ -z "$output" ]
	printf '%s\n' '[70000,-1]' | "$J" >"$T/w.tfr"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/d" --dtype uint16 --wrap "$T/w.tfr"
	run -0 mmap-index cat --output-format id "$T/d"
	[ "$output" = "4464 65535" ]
}

@test "mmap-index: --dtype auto picks upstream's type from --vocab-size and says so" {
	: >"$T/e.txt"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/a" --input-format id --vocab-size 32000 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype uint16 (fairseq, vocabulary of 32000)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/a" --input-format id --vocab-size 65500 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype uint32 (fairseq, vocabulary of 65500)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/a" --format megatron --input-format id --vocab-size 65500 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype int32 (Megatron, vocabulary of 65500)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/a" --input-format id --vocab-size 5000000000 "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype int64 (fairseq, vocabulary of 5000000000)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -q -o "$T/a" --input-format id --vocab-size 32000 "$T/e.txt"
	[ -z "$stderr" ]
	run -0 mmap-index info --json "$T/a"
	[ "$(jq -r .dtype <<<"$output")" = uint16 ]
}

@test "mmap-index: Megatron documents: each, or ended by empty records/lines" {
	printf '%s\n' '[1,2]' '[3]' '{}' '[4,5,6]' '{}' '{}' '[7]' '[]' | "$J" >"$T/in.tfr"
	run -0 mmap-index build --raw-ids -q -o "$T/d" --format megatron --documents empty --dtype uint16 "$T/in.tfr"
	run -0 mmap-index info --json "$T/d"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[5,4]" ]
	# document_indices 0 2 3 3 5 at the end of the .idx
	[ "$(tail -c 40 "$T/d.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 2 3 3 5 " ]
	# by default, empty records end documents when there are any (recpipe(5))
	run -0 mmap-index build --raw-ids -q -o "$T/e" --format megatron --dtype uint16 "$T/in.tfr"
	cmp "$T/d.idx" "$T/e.idx"
	# with --documents each an empty record is an error
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/e" --format megatron --documents each --dtype uint16 "$T/in.tfr"
	[[ "$stderr" == "mmap-index: $T/in.tfr: record 2 at offset "*": no features (an empty Example ends a document, which --documents each refuses)" ]]
	# without any, every sequence is a document; fairseq passes over them
	printf '%s\n' '[1,2]' '[3]' | "$J" >"$T/nodocs.tfr"
	run -0 mmap-index build --raw-ids -q -o "$T/h" --format megatron "$T/nodocs.tfr"
	run -0 mmap-index info --json "$T/h"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[2,2]" ]
	for j in 1 2; do
		run -0 mmap-index build --raw-ids -q -j $j -o "$T/k$j" "$T/in.tfr"
		run -0 mmap-index cat --output-format id "$T/k$j"
		[ "$output" = $'1 2\n3\n4 5 6\n7' ]
		[ "$(mmap-index info --json "$T/k$j" | jq .sequences)" = 5 ]
	done
	ids "$T/in.txt" "1 2" "3" "" "4 5 6" "" "" "7"
	run -0 mmap-index build --raw-ids -q -o "$T/f" --format megatron --documents empty --dtype uint16 --input-format id "$T/in.txt"
	run -0 mmap-index info --json "$T/f"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[4,4]" ]
	run -0 mmap-index build --raw-ids -q -o "$T/g" --format megatron --dtype uint16 --input-format id "$T/in.txt"
	run -0 mmap-index info --json "$T/g"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[7,7]" ]
}

@test "mmap-index: a record without the feature names the record" {
	printf '%s\n' '[1]' | "$J" -f inputs >"$T/in.tfr"
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/d" --dtype int32 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 0 at offset 0: no such feature (see -f)" ]
	printf '%s\n' '[0.5]' | "$J" >"$T/f.tfr"
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/d" --dtype int32 "$T/f.tfr"
	[ "$stderr" = "mmap-index: $T/f.tfr: record 0 at offset 0: a float_list needs a float --dtype" ]
	printf 'garbage that is not a record' >"$T/g.tfr"
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/d" --dtype int32 "$T/g.tfr"
	[[ "$stderr" == "mmap-index: $T/g.tfr: record 0 at offset 0: "* ]]
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/d" --dtype int32 "$T/nosuch.tfr"
	[ "$stderr" = "mmap-index: $T/nosuch.tfr: No such file or directory" ]
	run -0 find "$T" -name 'd*'
	[ -z "$output" ]
}

@test "mmap-index: float datasets print floats" {
	printf '%s\n' '[0.5,-2.25,10000000000.0]' '[3.0,0.1]' | "$J" >"$T/f.tfr"
	run -0 mmap-index build --raw-ids -q -o "$T/f" --format megatron --dtype float32 "$T/f.tfr"
	run -0 mmap-index cat "$T/f"
	[ "${lines[0]}" = '{"targets":[0.5,-2.25,10000000000.0]}' ]
	[ "${lines[1]}" = '{"targets":[3.0,0.1]}' ]
	[ "$(od -An -tu1 -j17 -N1 "$T/f.idx" | tr -d ' ')" = 7 ]
	ids "$T/d.txt" "1e-05 2.5 1e+300" "123456789.125"
	run -0 mmap-index build --raw-ids -q -o "$T/d" --dtype float64 --input-format id "$T/d.txt"
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
			run -0 mmap-index build --raw-ids -q -o "$T/d" --format $f --dtype $t --input-format id "$T/in.txt"
			run -0 mmap-index cat --output-format id "$T/d"
			[ "$output" = "$(cat "$T/in.txt")" ] || { echo "$f $t: $output"; false; }
			run -0 mmap-index info --json "$T/d"
			[ "$(jq -r '.layout + " " + .dtype' <<<"$output")" = "$f $t" ]
		done
	done
}

@test "mmap-index: get by argument and from stdin; out of range is an error after the good ones" {
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build --raw-ids -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
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
	mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
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
		run -0 mmap-index build --raw-ids -q --wrap -o "$T/d" --dtype $t --input-format id "$T/in.txt"
		run -0 mmap-index cat --output-format id "$T/d"
		[ "$output" = "$(cat "$T/in.txt")" ] || { echo "$t: $output"; false; }
		run -0 mmap-index get "$T/d" 0 1
		[ "$output" = "{\"targets\":[${v// /,}]}"$'\n{"targets":[]}' ] || { echo "$t: $output"; false; }
	done
}

@test "mmap-index: info shows layout, dtype, counts and a histogram" {
	ids "$T/in.txt" "1 2 3" "" "4" "5 6 7 8 9"
	mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
	run -0 --separate-stderr mmap-index info "$T/d"
	[ "$output" = "prefix:     $T/d
layout:     fairseq
dtype:      uint16 (code 8, 2 bytes)
sequences:  4
tokens:     9
bin bytes:  18
idx bytes:  74
length:     min 0, mean 2.25, p50 1, p90 5, p99 5, max 5
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
		mmap-index build --raw-ids -q -o "$T/a" --format $f --dtype uint16 --input-format id "$T/a.txt"
		mmap-index build --raw-ids -q -o "$T/b" --format $f --dtype uint16 --input-format id "$T/b.txt"
		mmap-index build --raw-ids -q -o "$T/ab" --format $f --dtype uint16 --input-format id "$T/ab.txt"
		run -0 --separate-stderr mmap-index merge -o "$T/m" "$T/a" "$T/b"
		[ -z "$stderr" ] && [ -z "$output" ]
		cmp "$T/ab.bin" "$T/m.bin"
		cmp "$T/ab.idx" "$T/m.idx"
	done
}

@test "mmap-index: merge keeps Megatron documents, refuses mixed dtypes and layouts" {
	ids "$T/a.txt" "1" "2" "" "3"
	mmap-index build --raw-ids -q -o "$T/a" --format megatron --documents empty --dtype uint16 --input-format id "$T/a.txt"
	mmap-index merge -o "$T/m" "$T/a" "$T/a" "$T/a"
	[ "$(tail -c 56 "$T/m.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 2 3 5 6 8 9 " ]
	mmap-index build --raw-ids -q -o "$T/b" --format megatron --dtype int32 --input-format id "$T/a.txt"
	run -1 --separate-stderr mmap-index merge -o "$T/x" "$T/a" "$T/b"
	[ "$stderr" = "mmap-index: $T/b: dtype int32, but $T/a is uint16" ]
	mmap-index build --raw-ids -q -o "$T/c" --dtype uint16 --input-format id "$T/a.txt"
	run -1 --separate-stderr mmap-index merge -o "$T/x" "$T/a" "$T/c"
	[ "$stderr" = "mmap-index: $T/c: layout fairseq, but $T/a is megatron" ]
	[ ! -e "$T/x.bin" ] && [ ! -e "$T/x.idx" ]
}

@test "mmap-index: verify passes good datasets and names the first bad entry" {
	ids "$T/in.txt" "1 2" "3" "4 5 6"
	mmap-index build --raw-ids -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
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
	mmap-index build --raw-ids -q -o "$T/d" --dtype int32 --input-format id "$T/in.txt"
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
	run -0 mmap-index build --raw-ids -q -o "$T/e" --format megatron --dtype int32 --input-format id "$T/e.txt"
	[ "$(stat -c %s "$T/e.bin")" = 0 ]
	[ "$(stat -c %s "$T/e.idx")" = 42 ]
	run -0 --separate-stderr mmap-index cat "$T/e"
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 mmap-index verify "$T/e"
}

@test "mmap-index: a closed pipe ends quietly; a full disk is an error" {
	seq 1 30000 | awk '{ print $1, $1 + 1, $1 + 2 }' >"$T/big.txt"
	mmap-index build --raw-ids -q -o "$T/big" --dtype int32 --input-format id "$T/big.txt"
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
	run -0 --separate-stderr mmap-index build --raw-ids -q --dtype uint64 --input-format id -o "$T/u64" "$T/u64.txt"
	run -0 mmap-index cat --output-format id "$T/u64"
	[ "$output" = "$(cat "$T/u64.txt")" ]
	run -1 --separate-stderr bash -c 'echo 18446744073709551616 | mmap-index build --raw-ids -q --dtype uint64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: token 18446744073709551616 does not fit uint64" ]
	run -1 --separate-stderr bash -c 'echo 3 -1 | mmap-index build --raw-ids -q --dtype uint64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: token -1 does not fit uint64 (--wrap wraps it as upstream does)" ]
	run -1 --separate-stderr bash -c 'echo 9223372036854775808 | mmap-index build --raw-ids -q --dtype int64 --input-format id -o "$1" -' _ "$T/u64b"
	[ "$stderr" = "mmap-index: stdin: line 1: token 9223372036854775808 does not fit int64" ]
	[ ! -e "$T/u64b.idx" ] && [ ! -e "$T/u64b.bin" ]
}

@test "mmap-index: get -j: the same bytes for any number of threads, faults late in the input included" {
	seq 1 30000 | awk '{ n = $1 % 7; s = ""; for (k = 0; k < n; k++) s = s " " ($1 * 7 + k) % 70000; print substr(s, 2) }' >"$T/big.txt"
	mmap-index build --raw-ids -q -o "$T/big" --dtype uint32 --input-format id "$T/big.txt"
	mmap-index build --raw-ids -q -o "$T/b16" --dtype uint16 --wrap --input-format id "$T/big.txt"
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
		mmap-index build --raw-ids -q -j "$j" -o "$T/m$j" --format megatron --documents empty --dtype int32 "$T/in.tfr"
		mmap-index build --raw-ids -q --jobs="$j" -o "$T/w$j" --format megatron --documents empty --dtype uint8 --wrap "$T/in.tfr"
		cmp "$T/m1.bin" "$T/m$j.bin"
		cmp "$T/m1.idx" "$T/m$j.idx"
		cmp "$T/w1.bin" "$T/w$j.bin"
		cmp "$T/w1.idx" "$T/w$j.idx"
	done
	run -0 mmap-index info --json "$T/m2"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = "[25715,4286]" ]
	# with --documents each the first empty record (record 5) is the fault
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 2 -o "$T/f" --format megatron --documents each --dtype uint16 "$T/in.tfr"
	[ "$stderr" = "mmap-index: $T/in.tfr: record 5 at offset 190: no features (an empty Example ends a document, which --documents each refuses)" ]
	# fairseq has no documents and passes over them
	run -0 mmap-index build --raw-ids -q -j 2 -o "$T/fs" --dtype uint16 "$T/in.tfr"
	run -0 mmap-index info --json "$T/fs"
	[ "$(jq -c '.sequences' <<<"$output")" = 25715 ]
	# a token that does not fit at record 25000, a bad payload CRC after it
	seq 1 30000 | awk '{ n = $1 % 7; s = ""; for (k = 0; k < n; k++) s = s "," ($1 * 7 + k) % 65536
		print ($1 == 25001 ? "[1,65536]" : "[" substr(s, 2) "]") }' | "$J" >"$T/late.tfr"
	for j in 1 3; do
		mmap-index build --raw-ids -q -j "$j" -o "$T/g$j" --dtype int64 "$T/late.tfr"
	done
	cmp "$T/g1.bin" "$T/g3.bin"
	cmp "$T/g1.idx" "$T/g3.idx"
	# uint16 with --wrap: the same in any number of threads, 65536 kept as 0
	for j in 1 3; do
		mmap-index build --raw-ids -q --wrap -j "$j" -o "$T/u$j" --dtype uint16 "$T/late.tfr"
	done
	cmp "$T/u1.bin" "$T/u3.bin"
	cmp "$T/u1.idx" "$T/u3.idx"
	run -0 mmap-index get --output-format id "$T/u3" 24999 25000
	[ "$output" = "$(printf '%s\n' "43928 43929 43930" "1 0")" ]
	size=$(wc -c <"$T/late.tfr")
	printf '\125' | dd of="$T/late.tfr" bs=1 seek=$((size - 1000)) conv=notrunc status=none
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 1 -o "$T/late" --dtype uint16 "$T/late.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/late.tfr: record 25000 at offset "*": token 65536 does not fit uint16 (--wrap wraps it as upstream does)" ]]
	for j in 2 3; do
		run -1 --separate-stderr mmap-index build --raw-ids -q -j "$j" -o "$T/late" --dtype uint16 "$T/late.tfr"
		[ "${#stderr_lines[@]}" = 1 ] && [ "$stderr" = "$want" ]
	done
	# with room for the token, the bad CRC near the end is the fault
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 1 -o "$T/late" --dtype int32 "$T/late.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/late.tfr: record "*" at offset "*": payload CRC mismatch" ]]
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 2 -o "$T/late" --format megatron --dtype int32 "$T/late.tfr"
	[ "${#stderr_lines[@]}" = 1 ] && [ "$stderr" = "$want" ]
	# cut short in the middle of a record
	head -c $((size / 2)) "$T/late.tfr" >"$T/cut.tfr"
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 1 -o "$T/late" --dtype int32 "$T/cut.tfr"
	want=$stderr
	[[ "$want" == "mmap-index: $T/cut.tfr: record "*" at offset "*": truncated "* ]]
	run -1 --separate-stderr mmap-index build --raw-ids -q -j 2 -o "$T/late" --dtype int32 "$T/cut.tfr"
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
	mmap-index build --raw-ids -q -o "$T/data/shard000/train.eng_Latn-fra_Latn.eng_Latn" --vocab-size 32000 --input-format id "$T/s0.txt"
	mmap-index build --raw-ids -q -o "$T/data/shard001/train.eng_Latn-fra_Latn.eng_Latn" --vocab-size 32000 --input-format id "$T/s1.txt"
	run -0 mmap-index merge -o "$T/all" "$T"/data/shard*/train.eng_Latn-fra_Latn.eng_Latn.idx
	run -0 mmap-index cat --output-format id "$T/all"
	[ "$output" = $'5 6 2\n7 2\n8 2' ]
	run -0 mmap-index verify "$T"/data/shard*/*.idx
	[ "${#lines[@]}" = 2 ]
	[ "${lines[1]}" = "$T/data/shard001/train.eng_Latn-fra_Latn.eng_Latn: ok (fairseq, uint16, 1 sequences, 2 tokens)" ]
}

@test "mmap-index: build takes --max-record-size as tfr-cat does, in every thread count" {
	"$BATS_TEST_DIRNAME/tools/big-record" 1500 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	for j in 1 2; do
		run -0 --separate-stderr sh -c 'cat "$1" | mmap-index build --raw-ids -q -j $2 --max-record-size 2k -o "$3"' _ "$T/big.tfr" $j "$T/ok$j"
		run -1 --separate-stderr sh -c 'cat "$1" | mmap-index build --raw-ids -q -j $2 --max-record-size 1k -o "$3"' _ "$T/big.tfr" $j "$T/no$j"
		[ "$stderr" = "mmap-index: stdin: record 0 at offset 0: length 1524 exceeds the limit of 1000 bytes (--max-record-size)" ]
		[ ! -e "$T/no$j.bin" ] && [ ! -e "$T/no$j.idx" ]
	done
	run -2 --separate-stderr mmap-index cat --max-record-size 1k "$T/ok1"
	[ "${stderr%%$'\n'*}" = "mmap-index: cat: --max-record-size does not apply (it applies to build)" ]
}

# Peak RSS of a command in KB (in $rss); the command's status is kept.
peak_rss() {
	local st=0
	/usr/bin/time -f %M -o "$T/rss" "$@" 2>"$T/rss.err" || st=$?
	rss=$(tail -1 "$T/rss")
	return $st
}

@test "mmap-index: build of a 20 MB record holds about one copy of it, with any -j" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	for j in 1 2; do
		peak_rss mmap-index build --raw-ids -q -j $j -o "$T/b$j" "$T/big.gz"
		[ "$rss" -lt "$(rss_bound mmap-index 50000)" ] || { echo "-j $j: peak RSS $rss KB for a 20 MB record"; false; }
	done
	cmp "$T/b1.bin" "$T/b2.bin"
	cmp "$T/b1.idx" "$T/b2.idx"
	# written as int64, then narrowed in place to the type the ids ask for
	[ "$(stat -c %s "$T/b1.bin")" = 40000000 ]
	run -0 --separate-stderr mmap-index info --json "$T/b1"
	[[ "$output" == *'"tokens":20000000'* ]]
	[[ "$output" == *'"dtype":"uint16"'* ]]
	# A record claiming 20 MB that is bad: read once, not copied.
	"$BATS_TEST_DIRNAME/tools/big-record" --length 20000000 | gzip -1 >"$T/bad.gz"
	for j in 1 2; do
		run -1 peak_rss mmap-index build --raw-ids -q -j $j -o "$T/c$j" "$T/bad.gz"
		[ "$(cat "$T/rss.err")" = "mmap-index: $T/bad.gz: record 0 at offset 0: payload CRC mismatch" ]
		[ "$(tail -1 "$T/rss")" -lt "$(rss_bound mmap-index 30000)" ] || { echo "-j $j: peak RSS $(tail -1 "$T/rss") KB"; false; }
	done
}

@test "mmap-index: out of memory names the file and the record, with any -j" {
	(ulimit -v 40000 && mmap-index -V >/dev/null) 2>/dev/null || skip "cannot run under ulimit -v"
	"$BATS_TEST_DIRNAME/tools/big-record" 10000000 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	for j in 1 2; do
		run -1 --separate-stderr bash -c 'ulimit -v 40000; mmap-index build --raw-ids -q -j $1 -o "$2" "$3"' _ $j "$T/o$j" "$T/big.gz"
		[[ "$stderr" == "mmap-index: $T/big.gz: record 0 at offset 0: out of memory"* ]] ||
		    { echo "-j $j: $stderr"; false; }
		[ ! -e "$T/o$j.bin" ]
	done
}

@test "mmap-index: an id above INT64_MAX does not fit the dtype" {
	printf '1 2 18446744073709551615\n' >"$T/ids"
	run -1 --separate-stderr mmap-index build --raw-ids -q --dtype int64 --input-format id -o "$T/o" "$T/ids"
	[ "$stderr" = "mmap-index: $T/ids: line 1: token 18446744073709551615 does not fit int64" ]
	run -1 --separate-stderr mmap-index build --raw-ids -q --wrap --dtype int32 --input-format id -o "$T/o" "$T/ids"
	[ "$stderr" = "mmap-index: $T/ids: line 1: token 18446744073709551615 does not fit int32" ]
	printf '7 -9223372036854775809\n' >"$T/neg"
	run -1 --separate-stderr mmap-index build --raw-ids -q --dtype int64 --input-format id -o "$T/o" "$T/neg"
	[ "$stderr" = "mmap-index: $T/neg: line 1: token -9223372036854775809 does not fit int64" ]
	printf '1 2 18446744073709551616\n' >"$T/ids"
	run -1 --separate-stderr mmap-index build --raw-ids -q --dtype uint64 --input-format id -o "$T/o" "$T/ids"
	[ "$stderr" = "mmap-index: $T/ids: line 1: token 18446744073709551616 does not fit uint64" ]
	printf '1 2x\n' >"$T/ids"
	run -1 --separate-stderr mmap-index build --raw-ids -q --input-format id -o "$T/o" "$T/ids"
	[ "$stderr" = "mmap-index: $T/ids: line 1: bad token id '2x'" ]
}

# ---- fairseq dictionaries and text (fairseq-preprocess) ----
# Expected outputs below are worked by hand from fairseq's Dictionary
# (dictionary.py: add_file_to_dictionary, finalize, pad_to_multiple_,
# save, encode_line) and tokenize_line.

@test "mmap-index dict: ties in finalize go by code point, prefixes first; padding to 8 by default" {
	# counts: ab 2, a/z/Z/é 1; é is U+00E9, after z; 4 + 5 symbols -> 16
	printf 'z \xc3\xa9 Z ab a\nab\n' >"$T/t.txt"
	run -0 --separate-stderr mmap-index dict "$T/t.txt"
	[ "$output" = "$(printf 'ab 2\nZ 1\na 1\nz 1\n\xc3\xa9 1\nmadeupword0000 0\nmadeupword0001 0\nmadeupword0002 0\nmadeupword0003 0\nmadeupword0004 0\nmadeupword0005 0\nmadeupword0006 0')" ]
	[ "$stderr" = "mmap-index: stdout: 16 types from 2 lines, 6 words" ]
	run -0 mmap-index dict -q --padding-factor 1 "$T/t.txt"
	[ "$output" = "$(printf 'ab 2\nZ 1\na 1\nz 1\n\xc3\xa9 1')" ]
	# 9 symbols: a multiple of 3 already, one short of 10
	run -0 mmap-index dict -q --padding-factor 3 "$T/t.txt"
	[ "$output" = "$(printf 'ab 2\nZ 1\na 1\nz 1\n\xc3\xa9 1')" ]
	run -0 mmap-index dict -q --padding-factor 5 "$T/t.txt"
	[ "$output" = "$(printf 'ab 2\nZ 1\na 1\nz 1\n\xc3\xa9 1\nmadeupword0000 0')" ]
}

@test "mmap-index dict: padding skips madeupword names the text uses, their numbers used up" {
	printf 'madeupword0000 x\n' >"$T/t.txt"
	run -0 mmap-index dict -q "$T/t.txt"
	[ "$output" = $'madeupword0000 1\nx 1\nmadeupword0001 0\nmadeupword0002 0' ]
	# a name the text used but nwords dropped is free again
	printf 'x x madeupword0001\n' >"$T/t.txt"
	run -0 mmap-index dict -q --nwords 5 "$T/t.txt"
	[ "$output" = $'x 2\nmadeupword0000 0\nmadeupword0001 0\nmadeupword0002 0' ]
}

@test "mmap-index dict: --nwords counts the four specials, --threshold stops at the first rare word" {
	printf 'a a a b b c\n' >"$T/t.txt"
	run -0 mmap-index dict -q --nwords 6 --padding-factor 1 "$T/t.txt"
	[ "$output" = $'a 3\nb 2' ]
	run -0 mmap-index dict -q --nwords 4 --padding-factor 1 "$T/t.txt"
	[ -z "$output" ]
	run -0 mmap-index dict -q --nwords 3 "$T/t.txt"
	[ "$output" = $'madeupword0000 0\nmadeupword0001 0\nmadeupword0002 0\nmadeupword0003 0' ]
	run -0 mmap-index dict -q --nwords 0 --padding-factor 1 "$T/t.txt"
	[ "$output" = $'a 3\nb 2\nc 1' ]
	run -0 mmap-index dict -q --threshold 2 --padding-factor 1 "$T/t.txt"
	[ "$output" = $'a 3\nb 2' ]
	run -0 mmap-index dict -q --threshold 4 --padding-factor 0 "$T/t.txt"
	[ -z "$output" ]
}

@test "mmap-index dict: specials in the text count for themselves; EOS per line, empty lines too" {
	# </s> <unk> <s> <pad> never appear in dict.txt; 3 lines, one empty
	printf '</s> <unk> b\n\n<s> <pad> b a\n' >"$T/t.txt"
	run -0 --separate-stderr mmap-index dict --padding-factor 1 "$T/t.txt"
	[ "$output" = $'b 2\na 1' ]
	[ "$stderr" = "mmap-index: stdout: 6 types from 3 lines, 7 words" ]
	# the same words as ids: </s> is 2 wherever it is written
	printf '%s\n' "$output" >"$T/d.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	run -0 mmap-index cat --output-format id "$T/o"
	[ "$output" = $'2 3 4 2\n2\n0 1 4 5 2' ]
}

@test "mmap-index dict: tokenize_line whitespace (29 code points) and universal newlines" {
	# \v \f \x1c-\x1f, U+0085, U+00A0, U+2003, U+3000 split; U+200B and U+FEFF do not
	printf 'a\tb\vc\fd\x1ce\x1ff\xc2\x85g\xc2\xa0h\xe2\x80\x83i\xe3\x80\x80j k\xe2\x80\x8bl \xef\xbb\xbfm\n' >"$T/t.txt"
	run -0 mmap-index dict -q --padding-factor 1 "$T/t.txt"
	[ "$output" = "$(printf 'a 1\nb 1\nc 1\nd 1\ne 1\nf 1\ng 1\nh 1\ni 1\nj 1\nk\xe2\x80\x8bl 1\n\xef\xbb\xbfm 1')" ]
	# "\r", "\r\n" and "\n" end lines; a last line without one counts
	printf 'a\rb\r\nc\n\rd' >"$T/u.txt"
	run -0 --separate-stderr mmap-index dict --padding-factor 1 "$T/u.txt"
	[ "$stderr" = "mmap-index: stdout: 8 types from 5 lines, 4 words" ]
	run -0 mmap-index build --raw-ids -q --input-format text --dict <(printf 'a 1\n') -o "$T/o" "$T/u.txt"
	run -0 mmap-index cat --output-format id "$T/o"
	[ "$output" = $'4 2\n3 2\n3 2\n2\n3 2' ]
}

@test "mmap-index dict: several files give one dictionary (--joined-dictionary), in any order" {
	printf 'b b c\n' >"$T/s.txt"
	printf 'c a\nd\n' >"$T/t.txt"
	run -0 mmap-index dict -q -o "$T/d1.txt" "$T/s.txt" "$T/t.txt"
	run -0 mmap-index dict -q -o "$T/d2.txt" "$T/t.txt" "$T/s.txt"
	cmp "$T/d1.txt" "$T/d2.txt"
	[ "$(cat "$T/d1.txt")" = $'b 2\nc 2\na 1\nd 1' ]
	cat "$T/s.txt" "$T/t.txt" | mmap-index dict -q >"$T/d3.txt"
	cmp "$T/d1.txt" "$T/d3.txt"
}

@test "mmap-index dict: invalid UTF-8 names file, line and offset; -o and build -o write nothing" {
	printf 'ok\nab\xffc\n' >"$T/t.txt"
	run -1 --separate-stderr mmap-index dict -o "$T/d.txt" "$T/t.txt"
	[ "$stderr" = "mmap-index: $T/t.txt: line 2 at offset 5: invalid UTF-8" ]
	[ ! -e "$T/d.txt" ]
	run -1 --separate-stderr mmap-index build --raw-ids --input-format text --dict <(printf 'a 1\n') -o "$T/o" "$T/t.txt"
	[ "${stderr_lines[-1]}" = "mmap-index: $T/t.txt: line 2 at offset 5: invalid UTF-8" ]
	[ ! -e "$T/o.bin" ] && [ ! -e "$T/o.idx" ]
	run -2 --separate-stderr mmap-index dict --threshold x "$T/t.txt"
	run -2 --separate-stderr mmap-index dict --wrap "$T/t.txt"
	[ "${stderr%%$'\n'*}" = "mmap-index: dict: --wrap does not apply (it applies to build)" ]
}

@test "mmap-index build --input-format text: unknown words, empty lines, EOS, the report" {
	printf 'the_ 9\ncat_ 5\n<unk> 0 #fairseq:overwrite\n' >"$T/d.txt"
	printf 'the_ cat_ sat_\n\n  \nthe_ dog_ sat_ <unk>\n' >"$T/t.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	# sat_ twice and dog_ once became <unk>: 3 of 11 tokens (4 EOS
	# counted); the literal <unk> is not "replaced"
	[ "${stderr_lines[0]}" = "mmap-index: dtype uint16 (fairseq, vocabulary of 7)" ]
	[ "${stderr_lines[1]}" = "mmap-index: $T/t.txt: 4 sents, 11 tokens, 27.3% replaced (by <unk>)" ]
	[ "${stderr_lines[2]}" = "mmap-index: $T/t.txt: most frequent unknown words: sat_ (2), dog_ (1)" ]
	# <unk> was overwritten: its later id 6 wins
	run -0 mmap-index cat --output-format id "$T/o"
	[ "$output" = $'4 5 3 2\n2\n2\n4 3 3 6 2' ]
	run -0 mmap-index info --json "$T/o"
	[ "$(jq -r .dtype <<<"$output")" = uint16 ]
	[ "$(jq -r .layout <<<"$output")" = fairseq ]
	# no unknowns: no list; several files: a total line
	printf 'cat_ the_\n' >"$T/k.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/k.txt" "$T/k.txt"
	[ "${stderr_lines[1]}" = "mmap-index: $T/k.txt: 1 sents, 3 tokens, 0.0% replaced (by <unk>)" ]
	[ "${stderr_lines[3]}" = "mmap-index: total: 2 sents, 6 tokens, 0.0% replaced (by <unk>)" ]
	[ "${#stderr_lines[@]}" = 4 ]
	# Python's format(x, '.3'): all replaced is "1e+02"
	printf 'x y\n' >"$T/x.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/x.txt"
	[ "${stderr_lines[1]}" = "mmap-index: $T/x.txt: 1 sents, 3 tokens, 66.7% replaced (by <unk>)" ]
	printf 'x\n\n' >"$T/x.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/x.txt"
	[ "${stderr_lines[1]}" = "mmap-index: $T/x.txt: 2 sents, 3 tokens, 33.3% replaced (by <unk>)" ]
}

@test "mmap-index build --input-format text: dtype from the dictionary size as fairseq picks it" {
	# 65495 lines + 4 specials = 65499 < 65500: uint16; one more: uint32
	seq -f 'w%g 1' 65495 >"$T/d.txt"
	printf 'w65495\n' >"$T/t.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "${stderr_lines[0]}" = "mmap-index: dtype uint16 (fairseq, vocabulary of 65499)" ]
	run -0 mmap-index cat --output-format id "$T/o"
	[ "$output" = "65498 2" ]
	echo 'w65496 1' >>"$T/d.txt"
	run -0 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "${stderr_lines[0]}" = "mmap-index: dtype uint32 (fairseq, vocabulary of 65500)" ]
	[ "$(stat -c %s "$T/o.bin")" = 8 ]
}

@test "mmap-index build --input-format text: bad dictionaries name the line" {
	printf 'x\n' >"$T/t.txt"
	printf 'a 1\nb\n' >"$T/d.txt"
	run -1 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "$stderr" = "mmap-index: $T/d.txt: line 2: expected 'symbol count [#fairseq:overwrite]'" ]
	printf 'a 1\nb x\n' >"$T/d.txt"
	run -1 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "$stderr" = "mmap-index: $T/d.txt: line 2: expected 'symbol count [#fairseq:overwrite]'" ]
	printf 'a 1\r</s> 5\n' >"$T/d.txt"
	run -1 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "$stderr" = "mmap-index: $T/d.txt: line 2: duplicate symbol '</s>' (fairseq needs #fairseq:overwrite)" ]
	[ ! -e "$T/o.bin" ] && [ ! -e "$T/o.idx" ]
	# trailing whitespace goes, the symbol keeps inner and leading spaces
	printf ' a b 1 \t\n' >"$T/d.txt"
	printf 'b\n' >"$T/t.txt"
	run -0 mmap-index build --raw-ids -q --input-format text --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	run -0 mmap-index cat --output-format id "$T/o"
	[ "$output" = "3 2" ]
	run -2 --separate-stderr mmap-index build --raw-ids --input-format text -o "$T/o" "$T/t.txt"
	[ "${stderr%%$'\n'*}" = "mmap-index: --input-format text needs --dict" ]
	run -2 --separate-stderr mmap-index build --raw-ids --dict "$T/d.txt" -o "$T/o" "$T/t.txt"
	[ "${stderr%%$'\n'*}" = "mmap-index: --dict goes with --input-format text" ]
	run -2 --separate-stderr mmap-index build --raw-ids --input-format text --dict "$T/d.txt" --vocab-size 9 -o "$T/o" "$T/t.txt"
}

@test "mmap-index build: without --vocab-size the type comes from the ids met, as upstream picks it for that vocabulary" {
	ids "$T/a.txt" "5 2" "" "7"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/a" --input-format id "$T/a.txt"
	[ "$stderr" = "mmap-index: dtype uint16 (fairseq, ids 2 to 7)" ]
	[ "$(stat -c %s "$T/a.bin")" = 6 ]
	run -0 mmap-index cat --output-format id "$T/a"
	[ "$output" = $'5 2\n\n7' ]
	# 65499 + 1 = 65500: fairseq uint32, Megatron int32
	ids "$T/b.txt" "1" "65499"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/b" --input-format id "$T/b.txt"
	[ "$stderr" = "mmap-index: dtype uint32 (fairseq, ids 1 to 65499)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/b" --format megatron --input-format id "$T/b.txt"
	[ "$stderr" = "mmap-index: dtype int32 (Megatron, ids 1 to 65499)" ]
	run -0 mmap-index cat --output-format id "$T/b"
	[ "$output" = $'1\n65499' ]
	ids "$T/c.txt" "3 -1"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/c" --input-format id "$T/c.txt"
	[ "$stderr" = "mmap-index: dtype int64 (fairseq, ids -1 to 3)" ]
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/c" --format megatron --input-format id "$T/c.txt"
	[ "$stderr" = "mmap-index: dtype int32 (Megatron, ids -1 to 3)" ]
	ids "$T/d.txt" "4294967294"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/d" --input-format id "$T/d.txt"
	[ "$stderr" = "mmap-index: dtype int64 (fairseq, ids 4294967294 to 4294967294)" ]
	: >"$T/e.txt"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/e" --input-format id "$T/e.txt"
	[ "$stderr" = "mmap-index: dtype uint16 (fairseq, no tokens)" ]
	# records, in one thread and in several; more tokens than one buffer
	{ seq 0 300000 | paste -sd, | sed 's/^/[/;s/$/]/'; echo '[1,2]'; } >"$T/big.json"
	"$J" <"$T/big.json" >"$T/big.tfr"
	for j in 1 2; do
		run -0 --separate-stderr mmap-index build --raw-ids -j $j -o "$T/r$j" "$T/big.tfr"
		[ "$stderr" = "mmap-index: dtype uint32 (fairseq, ids 0 to 300000)" ]
		[ "$(stat -c %s "$T/r$j.bin")" = $(( (300001 + 2) * 4 )) ]
	done
	cmp "$T/r1.bin" "$T/r2.bin" && cmp "$T/r1.idx" "$T/r2.idx"
	run -0 mmap-index build --raw-ids -q --dtype uint32 -o "$T/r3" "$T/big.tfr"
	cmp "$T/r1.bin" "$T/r3.bin" && cmp "$T/r1.idx" "$T/r3.idx"
}

@test "mmap-index build: an id at or above --vocab-size is an error naming the record" {
	ids "$T/a.txt" "1 2" "3 10 4"
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/a" --input-format id --vocab-size 10 "$T/a.txt"
	[ "$stderr" = "mmap-index: $T/a.txt: line 2: token 10 is outside the vocabulary of 10 (--vocab-size)" ]
	[ ! -e "$T/a.bin" ] && [ ! -e "$T/a.idx" ]
	run -0 mmap-index build --raw-ids -q -o "$T/a" --input-format id --vocab-size 11 "$T/a.txt"
	# --wrap reproduces upstream, which checks nothing
	run -0 mmap-index build --raw-ids -q -o "$T/a" --input-format id --vocab-size 10 --wrap "$T/a.txt"
	printf '%s\n' '[1,2]' '[3]' '[9,12]' | "$J" >"$T/r.tfr"
	for j in 1 2; do
		run -1 --separate-stderr mmap-index build --raw-ids -q -j $j -o "$T/r" --vocab-size 10 "$T/r.tfr"
		[[ "$stderr" == "mmap-index: $T/r.tfr: record 2 at offset "*": token 12 is outside the vocabulary of 10 (--vocab-size)" ]]
		[ ! -e "$T/r.bin" ] && [ ! -e "$T/r.idx" ]
	done
}

@test "mmap-index build and merge: -o x.bin and -o x.idx name the dataset x" {
	ids "$T/a.txt" "1 2"
	mmap-index build --raw-ids -q -o "$T/x.bin" --input-format id "$T/a.txt"
	[ -e "$T/x.bin" ] && [ -e "$T/x.idx" ] && [ ! -e "$T/x.bin.bin" ]
	mmap-index build --raw-ids -q -o "$T/y.idx" --input-format id "$T/a.txt"
	[ -e "$T/y.bin" ] && [ -e "$T/y.idx" ]
	mmap-index merge -q -o "$T/z.idx" "$T/x" "$T/y"
	run -0 mmap-index cat --output-format id "$T/z"
	[ "$output" = $'1 2\n1 2' ]
}

@test "mmap-index: build and merge keep the old pair when PREFIX.idx is a directory, and refuse it before the work" {
	ids "$T/in.txt" "1 2 3" "4 5"
	mmap-index build --raw-ids -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	mkdir "$T/old.idx"
	refuses_output "mmap-index: $T/old.idx: Is a directory" mmap-index build --raw-ids -q -o "$T/old" "$T/nosuch.tfr"
	cmp "$T/good.bin" "$T/old.bin"
	refuses_output "mmap-index: $T/old.idx: Is a directory" mmap-index merge -q -o "$T/old" "$T/good"
	cmp "$T/good.bin" "$T/old.bin"
	[ "$(ls "$T" | grep -c '^old')" = 2 ]
}

@test "mmap-index: a failed build or merge leaves the old pair as it was" {
	ids "$T/in.txt" "1 2 3" "4 5"
	ids "$T/bad.txt" "1 2" "x"
	mmap-index build --raw-ids -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	cp "$T/good.idx" "$T/old.idx"
	run -1 mmap-index build --raw-ids -q -o "$T/old" --input-format id "$T/bad.txt"
	cmp "$T/good.bin" "$T/old.bin"
	cmp "$T/good.idx" "$T/old.idx"
	run -1 mmap-index build --raw-ids -q -o "$T/old" "$T/nosuch.tfr"
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
	mmap-index build --raw-ids -q -o "$T/good" --input-format id "$T/in.txt"
	cp "$T/good.bin" "$T/old.bin"
	cp "$T/good.idx" "$T/old.idx"
	kill_mid_write "$T/old.bin" "$T/in.txt" mmap-index build --raw-ids -q -o "$T/old" --input-format id
	cmp "$T/good.idx" "$T/old.idx"
	echo OLD >"$T/keep"
	seq 0 2999 >"$T/idx.txt"
	kill_mid_write "$T/keep" "$T/idx.txt" mmap-index get -o "$T/keep" "$T/good" -
}

@test "mmap-index: get, cat and info -o keep the old file on a fault; an unwritable output is refused first" {
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build --raw-ids -q -o "$T/d" --input-format id "$T/in.txt"
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
	# a missing output directory is made, as fairseq-preprocess makes
	# --destdir, and removed again when the run fails before using it
	refuses_output "mmap-index: $T/nosuch: No such file or directory" mmap-index build --raw-ids -o "$T/nodir/x" "$T/nosuch"
	[ ! -e "$T/nodir" ]
	: >"$T/afile"
	refuses_output "mmap-index: $T/afile/x.bin: Not a directory" mmap-index build --raw-ids -o "$T/afile/x" "$T/nosuch"
	refuses_output "mmap-index: an output file name is empty" mmap-index build --raw-ids -o '' "$T/nosuch"
	refuses_output "mmap-index: an output file name is empty" mmap-index cat -o '' "$T/nosuch"
}

@test "mmap-index: get after a bad index: stdout is what the good indices give; -o keeps it only with --keep-partial" {
	local a
	ids "$T/in.txt" "10" "20 21" "30"
	mmap-index build --raw-ids -q -o "$T/d" --input-format id "$T/in.txt"
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
		mmap-index build --raw-ids -q -j "$j" -o "$T/g" "$T/good.tfr"
		run -1 mmap-index build --raw-ids -q -j "$j" -o "$T/b" "$T/bad.tfr"
		[ ! -e "$T/b.bin" ] && [ ! -e "$T/b.idx" ]
		run -1 mmap-index build --raw-ids -q -j "$j" --keep-partial -o "$T/b" "$T/bad.tfr"
		cmp "$T/g.bin" "$T/b.bin"
		cmp "$T/g.idx" "$T/b.idx"
		rm -f "$T/b.bin" "$T/b.idx"
	done
	# id lines: a bad id, and a token that does not fit the dtype
	seq 1 500 >"$T/good.txt"
	{ cat "$T/good.txt"; echo "1 x"; seq 1 9; } >"$T/bad.txt"
	{ cat "$T/good.txt"; echo "70000"; seq 1 9; } >"$T/big.txt"
	mmap-index build --raw-ids -q --dtype uint16 --input-format id -o "$T/g" "$T/good.txt"
	for f in bad big; do
		run -1 mmap-index build --raw-ids -q --dtype uint16 --input-format id --keep-partial -o "$T/b" "$T/$f.txt"
		cmp "$T/g.bin" "$T/b.bin"
		cmp "$T/g.idx" "$T/b.idx"
	done
	# a missing input is skipped: the others are kept
	run -1 mmap-index build --raw-ids -q --keep-partial -o "$T/b" "$T/good.tfr" "$T/nosuch"
	mmap-index build --raw-ids -q -o "$T/g" "$T/good.tfr"
	cmp "$T/g.bin" "$T/b.bin"
	cmp "$T/g.idx" "$T/b.idx"
}

@test "mmap-index dict: after a bad line stdout is the dictionary of the lines before it; -o keeps it only with --keep-partial" {
	printf 'a b c\nb c\nc d\n' >"$T/good.txt"
	# the bad line's words before the bad byte are not counted
	{ cat "$T/good.txt"; printf 'e e \377 f\ng g g\n'; } >"$T/bad.txt"
	same_prefix_output "$T/bad.txt" "$T/good.txt" mmap-index dict -q
	same_prefix_output "$T/bad.txt" "$T/good.txt" mmap-index dict -q --padding-factor 1 --threshold 2
	run -1 --separate-stderr mmap-index dict -q "$T/bad.txt"
	[ "$stderr" = "mmap-index: $T/bad.txt: line 4 at offset 18: invalid UTF-8" ]
	[ "$output" = "$(mmap-index dict -q "$T/good.txt")" ]
	# the check of each line: a character across eight-byte words is fine,
	# a bad byte after many good ones is found at its offset
	printf 'abcdef\xc3\xa9 abcdefgh\xe2\x82\xac x\nabcdefghijklmnopq r\xe2\x82\n' >"$T/long.txt"
	run -1 --separate-stderr mmap-index dict -q --padding-factor 1 "$T/long.txt"
	[ "$stderr" = "mmap-index: $T/long.txt: line 2 at offset 42: invalid UTF-8" ]
	[ "$output" = "$(printf 'abcdefgh\xe2\x82\xac 1\nabcdef\xc3\xa9 1\nx 1')" ]
	# a missing input is skipped, the others are read
	run -1 --separate-stderr mmap-index dict -q "$T/good.txt" "$T/nosuch" "$T/good.txt"
	[ "$stderr" = "mmap-index: $T/nosuch: No such file or directory" ]
	[ "$output" = "$(mmap-index dict -q "$T/good.txt" "$T/good.txt")" ]
	echo OLD >"$T/old"
	run -1 mmap-index dict -q -o "$T/old" "$T/good.txt" "$T/nosuch"
	[ "$(cat "$T/old")" = OLD ]
	run -1 mmap-index dict -q --keep-partial -o "$T/old" "$T/good.txt" "$T/nosuch"
	[ "$(cat "$T/old")" = "$(mmap-index dict -q "$T/good.txt")" ]
	# --keep-partial belongs to dict and build, not to merge or verify
	run -2 --separate-stderr mmap-index verify --keep-partial "$T/x"
	[ "${stderr%%$'\n'*}" = "mmap-index: verify: --keep-partial does not apply (it applies to build, cat, get, info, dict)" ]
}

@test "mmap-index dict: an output that cannot be written is refused before reading; a kill leaves the old file" {
	mkdir "$T/adir"
	refuses_output "mmap-index: $T/adir: Is a directory" mmap-index dict -q -o "$T/adir" "$T/nosuch"
	refuses_output "mmap-index: $T/nosuch: No such file or directory" mmap-index dict -q -o "$T/nodir/d.txt" "$T/nosuch"
	[ ! -e "$T/nodir" ]
	refuses_output "mmap-index: an output file name is empty" mmap-index dict -q -o '' "$T/nosuch"
	local i
	for i in $(seq 1 2000); do echo "w$i w$((i % 7)) x"; done >"$T/t.txt"
	echo OLD >"$T/keep"
	kill_mid_write "$T/keep" "$T/t.txt" mmap-index dict -q -o "$T/keep"
	[ "$(ls "$T" | grep -c '^keep')" = 1 ]
}

@test "mmap-index build --input-format text --keep-partial: the pair of the lines before a bad line" {
	printf 'a b\nb c\n' >"$T/t.txt"
	mmap-index dict -q -o "$T/d.txt" "$T/t.txt"
	printf 'a b\n\nc a z\n' >"$T/good.txt"
	{ cat "$T/good.txt"; printf 'a \377\nb\n'; } >"$T/bad.txt"
	mmap-index build --raw-ids -q --input-format text --dict "$T/d.txt" -o "$T/g" "$T/good.txt"
	cp "$T/g.bin" "$T/o.bin"
	cp "$T/g.idx" "$T/o.idx"
	echo OLD >"$T/o.bin"
	run -1 mmap-index build --raw-ids -q --input-format text --dict "$T/d.txt" -o "$T/o" "$T/bad.txt"
	[ "$(cat "$T/o.bin")" = OLD ]
	cmp "$T/g.idx" "$T/o.idx"
	run -1 mmap-index build --raw-ids -q --keep-partial --input-format text --dict "$T/d.txt" -o "$T/o" "$T/bad.txt"
	cmp "$T/g.bin" "$T/o.bin"
	cmp "$T/g.idx" "$T/o.idx"
	# a missing input is skipped
	rm "$T/o.bin" "$T/o.idx"
	run -1 mmap-index build --raw-ids -q --keep-partial --input-format text --dict "$T/d.txt" -o "$T/o" "$T/nosuch" "$T/good.txt"
	cmp "$T/g.bin" "$T/o.bin"
	cmp "$T/g.idx" "$T/o.idx"
	# an unwritable output is refused before the dictionary is read
	mkdir "$T/adir.idx"
	refuses_output "mmap-index: $T/adir.idx: Is a directory" mmap-index build --raw-ids -q --input-format text --dict "$T/nosuch" -o "$T/adir" "$T/good.txt"
}

@test "mmap-index build --keep-partial: without --vocab-size the kept pair is narrowed, and its documents closed, as a build of the good prefix" {
	local i j
	# Megatron, documents ended by empty Examples; small ids: uint16, not int64
	for i in $(seq 1 600); do
		echo "[$((i % 200)),$((i % 13)),2]"
		[ $((i % 5)) = 0 ] && echo '"end_document"'
	done | "$J" >"$T/in.tfr"
	damage_at "$T/in.tfr" 400 "$T/bad.tfr" "$T/good.tfr"
	for j in 1 2; do
		mmap-index build --raw-ids -q -j "$j" --format megatron -o "$T/g" "$T/good.tfr"
		run -0 mmap-index info --json "$T/g"
		[ "$(jq -r .dtype <<<"$output")" = uint16 ]
		run -1 mmap-index build --raw-ids -q -j "$j" --format megatron --keep-partial -o "$T/b" "$T/bad.tfr"
		cmp "$T/g.bin" "$T/b.bin"
		cmp "$T/g.idx" "$T/b.idx"
		rm "$T/b.bin" "$T/b.idx"
	done
}

@test "mmap-index build and merge: -o x.bin is the prefix x when the outputs are checked" {
	ids "$T/in.txt" "1 2" "3"
	# x.bin.idx is in the way of nothing: the pair is x.bin and x.idx
	mkdir "$T/x.bin.idx" "$T/y.bin.bin"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/x.bin" "$T/in.txt"
	[ -f "$T/x.bin" ] && [ -f "$T/x.idx" ]
	run -0 mmap-index merge -q -o "$T/y.bin" "$T/x" "$T/x"
	[ -f "$T/y.bin" ] && [ -f "$T/y.idx" ]
	mkdir "$T/z.idx"
	refuses_output "mmap-index: $T/z.idx: Is a directory" mmap-index build --raw-ids -q --input-format id -o "$T/z.bin" "$T/nosuch"
}

@test "mmap-index dict: a text file named x.bin is read as it is, even beside an x.idx" {
	printf 'a a b\n' >"$T/t.bin"
	: >"$T/t.idx"
	run -0 mmap-index dict -q --padding-factor 1 "$T/t.bin"
	[ "$output" = $'a 2\nb 1' ]
}

@test "mmap-index: --keep-partial after a 20 MB record keeps it streamed and narrowed, with any -j" {
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	n=$(stat -c %s "$T/big.tfr")
	{ cat "$T/big.tfr"; printf 'abc'; } | gzip -1 >"$T/cut.gz"
	for j in 1 2; do
		run -1 --separate-stderr mmap-index build --raw-ids -q -j $j --keep-partial -o "$T/k$j" "$T/cut.gz"
		[ "$stderr" = "mmap-index: $T/cut.gz: record 1 at offset $n: truncated header: 3 bytes after the last record" ] ||
		    { echo "-j $j: $stderr"; false; }
		[ "$(stat -c %s "$T/k$j.bin")" = 40000000 ]
		run -0 --separate-stderr mmap-index info --json "$T/k$j"
		[[ "$output" == *'"dtype":"uint16"'*'"sequences":1,"tokens":20000000'* ]]
		# without it, nothing is left
		run -1 mmap-index build --raw-ids -q -j $j -o "$T/n$j" "$T/cut.gz"
		[ ! -e "$T/n$j.bin" ] && [ ! -e "$T/n$j.idx" ]
	done
	cmp "$T/k1.bin" "$T/k2.bin"
}

@test "mmap-index: build --input-format text warns above 5% <unk>; --max-unk-rate fails at the end and writes nothing" {
	printf 'the cat sat\nthe dog ran\n' >"$T/m.txt"
	printf 'the 3\ncat 1\nsat 1\n' >"$T/md.txt"
	run -0 --separate-stderr mmap-index build --raw-ids -q -o "$T/mm" --input-format text --dict "$T/md.txt" "$T/m.txt"
	[ "$stderr" = "mmap-index: warning: 25.0% of 8 tokens replaced by <unk> ($T/md.txt does not fit the text?)" ]
	[ -e "$T/mm.bin" ]
	rm -f "$T/mm.bin" "$T/mm.idx"
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/mm" --input-format text --dict "$T/md.txt" --max-unk-rate 0.2 "$T/m.txt"
	[ "$stderr" = "mmap-index: 25.0% of 8 tokens replaced by <unk>, above --max-unk-rate 0.2 ($T/md.txt does not fit the text?)" ]
	[ ! -e "$T/mm.bin" ] && [ ! -e "$T/mm.idx" ]
	run -1 --separate-stderr mmap-index build --raw-ids -q -o "$T/mm" --input-format text --dict "$T/md.txt" --max-unk-rate 10% --keep-partial "$T/m.txt"
	[ -e "$T/mm.bin" ] && [ -e "$T/mm.idx" ]
	run -0 --separate-stderr mmap-index build --raw-ids -q -o "$T/mm" --input-format text --dict "$T/md.txt" --max-unk-rate 0.3 "$T/m.txt"
	printf 'the cat sat\n' >"$T/ok.txt"
	run -0 --separate-stderr mmap-index build --raw-ids -q -o "$T/ok" --input-format text --dict "$T/md.txt" "$T/ok.txt"
	[ -z "$stderr" ]
	run -2 --separate-stderr mmap-index build --raw-ids -o "$T/x" --max-unk-rate 0.1 "$T/m.txt"
	[[ "$stderr" == "mmap-index: --max-unk-rate applies to --input-format text"* ]]
}

load tools/part-helpers

# merge_law ARGS... (inputs last): for N = 1..7 the datasets of
# build --part K/N ARGS merged in order equal build ARGS.
merge_law() {
	local n k list
	mmap-index build --raw-ids -q -o "$T/one" "$@" || return 1
	for n in 1 2 3 4 5 6 7; do
		list=()
		for k in $(seq 0 $((n - 1))); do
			mmap-index build --raw-ids -q --part "$k/$n" -o "$T/part$k" "$@" || {
				echo "part $k/$n failed"
				return 1
			}
			list+=("$T/part$k")
		done
		mmap-index merge -q -o "$T/merged" "${list[@]}" || return 1
		cmp "$T/one.bin" "$T/merged.bin" && cmp "$T/one.idx" "$T/merged.idx" || {
			echo "N=$n: the merged parts differ from one run"
			return 1
		}
	done
}

@test "mmap-index: build --part K/N parts merged are one run's dataset (records, fairseq and Megatron, N = 1..7)" {
	tok_records 300 1 >"$T/a.tfr"
	tok_records 80 2 | gzip >"$T/b.tfr"
	: >"$T/e.tfr"
	tok_records 40 3 >"$T/c.tfr"
	merge_law --vocab-size 30000 "$T/a.tfr" "$T/e.tfr" "$T/b.tfr" "$T/c.tfr"
	merge_law --vocab-size 30000 -j 2 "$T/a.tfr" "$T/b.tfr" "$T/c.tfr"
	merge_law --format megatron --vocab-size 30000 "$T/a.tfr" "$T/b.tfr"
	merge_law --format megatron --dtype int32 --documents each -j 2 "$T/a.tfr" "$T/c.tfr"
}

@test "mmap-index: build --part keeps Megatron documents whole across parts" {
	tok_records 400 4 docs >"$T/a.tfr"
	tok_records 60 5 docs | gzip >"$T/b.tfr"
	tok_records 100 6 docs >"$T/c.tfr"
	merge_law --format megatron --vocab-size 30000 "$T/a.tfr" "$T/b.tfr" "$T/c.tfr"
	merge_law --format megatron --documents empty -j 2 --vocab-size 30000 "$T/c.tfr" "$T/a.tfr"
	# Documents in the run: the merged index has them, not one per sequence.
	run -0 mmap-index info --json "$T/merged"
	[[ "$output" == *'"documents":'* ]]
	# No document ends at all: part 0 holds every sequence as a document.
	merge_law --format megatron --vocab-size 30000 "$T/c.tfr" "$T/a.tfr" "$T/c.tfr"
	tok_records 100 7 >"$T/d.tfr"
	merge_law --format megatron --vocab-size 30000 "$T/d.tfr"
	mmap-index build --raw-ids -q --format megatron --vocab-size 30000 --part 1/2 -o "$T/p1" "$T/d.tfr"
	run -0 mmap-index info --json "$T/p1"
	[[ "$output" == *'"sequences":0'* ]]
}

@test "mmap-index: build --part over id lines and text (documents of empty lines kept whole)" {
	awk 'BEGIN { srand(5); for (i = 0; i < 600; i++) {
		if (rand() < 0.15) { print ""; continue }
		len = 1 + int(rand() * rand() * 50); if (rand() < 0.01) len = 20000
		s = ""; for (j = 0; j < len; j++) s = s (j ? " " : "") int(rand() * 30000); print s } }' >"$T/ids.txt"
	printf '5 6 7' >"$T/tail.txt"
	merge_law --input-format id --vocab-size 30000 "$T/ids.txt" "$T/tail.txt" "$T/ids.txt"
	merge_law --input-format id --format megatron --documents empty --vocab-size 30000 \
	    "$T/ids.txt" "$T/tail.txt" "$T/ids.txt"
	awk 'BEGIN { srand(7); for (i = 0; i < 500; i++) { n = 1 + int(rand() * 12); s = ""
		for (j = 0; j < n; j++) s = s (j ? " " : "") "w" int(rand() * rand() * 200); print s } }' >"$T/text.txt"
	mmap-index dict -q -o "$T/dict.txt" "$T/text.txt"
	merge_law --input-format text --dict "$T/dict.txt" "$T/text.txt" "$T/text.txt"
}

@test "mmap-index: build --part needs a fixed dtype and regular files" {
	tok_records 10 1 >"$T/a.tfr"
	run -2 --separate-stderr mmap-index build --raw-ids --part 0/2 -o "$T/x" "$T/a.tfr"
	[ "${stderr%%$'\n'*}" = "mmap-index: --part needs --dtype, --vocab-size or --wrap: one run picks the dtype from the largest id of the whole input" ]
	run -2 --separate-stderr mmap-index build --raw-ids --part 0/2 --vocab-size 30000 -o "$T/x" <"$T/a.tfr"
	[ "${stderr%%$'\n'*}" = "mmap-index: --part needs files: standard input cannot be cut into parts" ]
	run -2 --separate-stderr mmap-index build --raw-ids --part 0/2 --vocab-size 30000 -o "$T/x" <(cat "$T/a.tfr")
	run -2 --separate-stderr mmap-index cat --part 0/2 "$T/x"
	[ ! -e "$T/x.bin" ] && [ ! -e "$T/x.idx" ]
	# N = 1 is the whole input from anywhere, dtype narrowing included.
	mmap-index build --raw-ids -q --part 0/1 -o "$T/y" <"$T/a.tfr"
	mmap-index build --raw-ids -q -o "$T/z" <"$T/a.tfr"
	cmp "$T/y.idx" "$T/z.idx"
}

@test "mmap-index: merge that cannot write its .bin names it" {
	seq 1 3000 | awk '{ print $1, $1 + 1 }' >"$T/m.txt"
	mmap-index build --raw-ids -q --input-format id --dtype int32 -o "$T/src" "$T/m.txt"
	# a file size limit stands for a full disk (SIGXFSZ ignored: EFBIG)
	run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 8; mmap-index merge -o "$1" "$2"' _ "$T/out" "$T/src"
	[ "$stderr" = "mmap-index: $T/out.bin: File too large" ]
	[ ! -e "$T/out.bin" ] && [ ! -e "$T/out.idx" ]
}

# threads_of CMD...: the threads CMD starts (clone calls; the first
# thread is the process itself)
threads_of() {
	strace -f -o "$T/st" -e trace=clone,clone3 "$@" >/dev/null 2>&1
	grep -c 'clone' "$T/st" || true
}

@test "mmap-index: -j 0 takes the processors the task was given, not the machine's" {
	command -v strace >/dev/null || skip "strace not installed"
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# LeakSanitizer cannot run under a tracer (the sanitizer build)
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	for i in $(seq 1 3000); do echo '{"targets":[1,2,3]}'; done | tfr-cat -R --from-json >"$T/r.tfr"
	# a Slurm task's share of its allocation
	[ "$(SLURM_CPUS_PER_TASK=3 threads_of mmap-index build --raw-ids -q -j 0 -o "$T/a" "$T/r.tfr")" -eq 2 ]
	[ "$(SLURM_CPUS_PER_TASK=1 threads_of mmap-index build --raw-ids -q -j 0 -o "$T/a" "$T/r.tfr")" -eq 0 ]
	# the affinity mask it was started with
	if command -v taskset >/dev/null; then
		[ "$(env -u SLURM_CPUS_PER_TASK taskset -c 0 strace -f -o "$T/st" -e trace=clone,clone3 \
			mmap-index build --raw-ids -q -j 0 -o "$T/a" "$T/r.tfr" >/dev/null 2>&1; grep -c clone "$T/st" || true)" -eq 0 ]
	fi
	# -j N is N, whatever the allocation
	[ "$(SLURM_CPUS_PER_TASK=1 threads_of mmap-index build --raw-ids -q -j 3 -o "$T/a" "$T/r.tfr")" -eq 2 ]
}

@test "mmap-index: build, merge and dict make the output directory, as --destdir" {
	seq 1 5 >"$T/ids.txt"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/data-bin/a/train.en" "$T/ids.txt"
	run -0 mmap-index verify "$T/data-bin/a/train.en"
	run -0 mmap-index merge -o "$T/m/x" "$T/data-bin/a/train.en"
	[ -f "$T/m/x.bin" ] && [ -f "$T/m/x.idx" ]
	echo "a b a" >"$T/w.txt"
	run -0 mmap-index dict -q -o "$T/d/dict.en.txt" "$T/w.txt"
	[ -s "$T/d/dict.en.txt" ]
}

@test "mmap-index: a fairseq dataset holds what fairseq-preprocess writes: tensor2tensor ids are refused, --raw-ids takes them" {
	local hint="these are not ids that fairseq-preprocess writes (tensor2tensor's end of sentence is 1); binarize through a fairseq dictionary (mmap-index dict, then build --input-format text --dict), or give --raw-ids if these are the ids you mean"
	# tensor2tensor ids: EOS 1, which fairseq pads with
	for i in $(seq 1 3000); do echo "{\"targets\":[5,$((i % 50 + 3)),2]}"; done >"$T/ok.jsonl"
	{ cat "$T/ok.jsonl"; echo '{"targets":[9,1,9,2]}'; cat "$T/ok.jsonl"; } | tfr-cat -R --from-json >"$T/t2t.tfr"
	{ cat "$T/ok.jsonl"; echo '{"targets":[9,9,1]}'; } | tfr-cat -R --from-json >"$T/t2t-end.tfr"
	for j in 1 2; do
		run -1 --separate-stderr mmap-index build -q -j "$j" -o "$T/d$j" "$T/t2t.tfr"
		[ "$stderr" = "mmap-index: $T/t2t.tfr: record 3000 at offset 114000: token 1 is 1, fairseq's <pad>: $hint" ]
		[ ! -e "$T/d$j.bin" ] && [ ! -e "$T/d$j.idx" ]
		run -1 --separate-stderr mmap-index build -q -j "$j" -o "$T/d$j" "$T/t2t-end.tfr"
		[ "$stderr" = "mmap-index: $T/t2t-end.tfr: record 3000 at offset 114000: the sequence ends in 1, fairseq's <pad>, not </s> (2): $hint" ]
	done
	# id lines: <pad> inside, no </s> at the end, an empty sequence
	printf '5 6 2\n7 1 8 2\n' >"$T/pad.txt"
	run -1 --separate-stderr mmap-index build -q --input-format id -o "$T/d" "$T/pad.txt"
	[ "$stderr" = "mmap-index: $T/pad.txt: line 2: token 1 is 1, fairseq's <pad>: $hint" ]
	printf '5 6 2\n7 8\n' >"$T/noeos.txt"
	run -1 --separate-stderr mmap-index build -q --input-format id -o "$T/d" "$T/noeos.txt"
	[ "$stderr" = "mmap-index: $T/noeos.txt: line 2: the sequence ends in 8, not </s> (2): $hint" ]
	printf '5 2\n\n' >"$T/empty.txt"
	run -1 --separate-stderr mmap-index build -q --input-format id -o "$T/d" "$T/empty.txt"
	[ "$stderr" = "mmap-index: $T/empty.txt: line 2: an empty sequence, without the </s> (2) that ends every sentence: $hint" ]
	# what fairseq-preprocess writes goes through; --raw-ids takes anything
	run -0 mmap-index build -q --input-format id -o "$T/d" <(printf '5 6 2\n7 2\n')
	for f in pad noeos empty; do
		run -0 mmap-index build -q --raw-ids --input-format id -o "$T/r" "$T/$f.txt"
	done
	run -0 mmap-index build -q --raw-ids -j 2 -o "$T/r" "$T/t2t.tfr"
	[ "$(mmap-index get --output-format id "$T/r" 3000)" = "9 1 9 2" ]
	# Megatron keeps its own rules
	run -0 mmap-index build -q --format megatron -o "$T/m" "$T/t2t.tfr"
}

@test "mmap-index: the fairseq rule holds for a sequence too long to hold whole" {
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	for j in 1 2; do
		run -1 --separate-stderr mmap-index build -q -j "$j" -o "$T/b" "$T/big.tfr"
		[[ "$stderr" == "mmap-index: $T/big.tfr: record 0 at offset 0: token 0 is 1, fairseq's <pad>: "* ]]
		[ ! -e "$T/b.bin" ]
	done
	run -0 mmap-index build -q --raw-ids -o "$T/b" "$T/big.tfr"
}

@test "mmap-index: a damaged gzip stream names the record and offset where it breaks, with any -j, as tfr-cat does" {
	local i j n
	for i in 1 2 3 4 5 6; do
		printf '{"targets":[%d,2,3,4,5,6,7]}\n' "$i"
	done | tfr-cat --from-json -R >"$T/r.tfr"
	n=$(stat -c %s "$T/r.tfr")
	# A byte of the gzip trailer's CRC changed: the stream breaks after
	# the six records, where a seventh would start.
	gzip -n <"$T/r.tfr" >"$T/ok.gz"
	local size=$(stat -c %s "$T/ok.gz")
	{
		head -c $((size - 8)) "$T/ok.gz"
		tail -c 8 "$T/ok.gz" | head -c 1 | tr '\000-\377' '\377\000-\376'
		tail -c 7 "$T/ok.gz"
	} >"$T/bad.gz"
	run -1 --separate-stderr tfr-cat "$T/bad.gz"
	[ "$stderr" = "tfr-cat: $T/bad.gz: record 6 at offset $n: gzip data corrupt: incorrect data check" ]
	for j in 1 2; do
		run -1 --separate-stderr mmap-index build -q --raw-ids -j $j -o "$T/o$j" "$T/bad.gz"
		[ "$stderr" = "mmap-index: $T/bad.gz: record 6 at offset $n: gzip data corrupt: incorrect data check" ] ||
		    { echo "-j $j: $stderr"; false; }
	done
}

@test "mmap-index: a fairseq build says when it passes over document ends" {
	printf '{"targets":[5,2]}\n{}\n{"targets":[6,2]}\n' | tfr-cat --from-json >"$T/de.tfr"
	run -0 --separate-stderr mmap-index build -o "$T/f" "$T/de.tfr"
	[[ "$stderr" == *"1 document ends"*"passed over"*"--parallel"* ]]
	run -0 --separate-stderr mmap-index build -j 2 -o "$T/f2" "$T/de.tfr"
	[[ "$stderr" == *"1 document ends"* ]]
	cmp "$T/f.bin" "$T/f2.bin"
	run -0 --separate-stderr mmap-index build -q -o "$T/f3" "$T/de.tfr"
	[ -z "$stderr" ]
	# Megatron keeps them as documents: nothing to say
	run -0 --separate-stderr mmap-index build --format megatron -o "$T/m" "$T/de.tfr"
	[[ "$stderr" != *"document ends"* ]]
}

@test "mmap-index: cat and get write a feature name that is not UTF-8 with U+FFFD (recpipe(5))" {
	ids "$T/in.txt" "1 2" "3"
	mmap-index build --raw-ids -o "$T/d" --dtype uint16 --input-format id "$T/in.txt"
	# 0xff is no UTF-8 at all, 0xc3 a sequence cut short; "\x01" and '"' are escaped.
	f=$(printf 'a\377b\303"\001')
	run -0 --separate-stderr mmap-index cat -f "$f" "$T/d"
	[ -z "$stderr" ]
	[ "${lines[0]}" = '{"a'$'\xef\xbf\xbd''b'$'\xef\xbf\xbd''\"\u0001":[1,2]}' ]
	printf '%s\n' "${lines[1]}" | jq -e . >/dev/null
	run -0 --separate-stderr mmap-index get -f "$f" "$T/d" 1
	[ "$output" = '{"a'$'\xef\xbf\xbd''b'$'\xef\xbf\xbd''\"\u0001":[3]}' ]
}
