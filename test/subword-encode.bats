# subword-encode: records and id lines, fields, decoding, errors.
load common

setup() {
	local i
	for i in $(seq 1 60); do
		printf 'The cat number %d sat on the mat; the dog ran after it.\n' "$i"
		printf 'A bird sang: "la la la", and the end came.\n'
	done >"$T/c.txt"
	subword-build -q --min-count 3 -o "$T/v" "$T/c.txt"
	for i in $(seq 1 40); do
		printf 'le chat %d dort\n' "$i"
	done >"$T/fr.txt"
	subword-build -q --min-count 2 -o "$T/vfr" "$T/fr.txt"
}

@test "subword-encode: --help is the synopsis on stdout" {
	run -0 --separate-stderr subword-encode --help
	[ -z "$stderr" ]
	[ "${lines[0]}" = "usage: subword-encode [-dhqV] [--eos] [--keep-partial] [--lower | --no-lower]" ]
}

@test "subword-encode: --version names the Unicode version" {
	run -0 --separate-stderr subword-encode --version
	[ "$output" = "$(printf 'subword-encode 0.1.0\nUnicode 14.0.0')" ]
}

@test "subword-encode: usage errors exit 2" {
	run -2 --separate-stderr subword-encode "$T/c.txt"
	[[ "$stderr" == *"no vocabulary"* ]]
	run -2 --separate-stderr subword-encode -v "$T/v" --output-format json
	run -2 --separate-stderr subword-encode -v "$T/v" --input-format id
	run -2 --separate-stderr subword-encode -v "$T/v" --strip-extraneous
	run -2 --separate-stderr subword-encode -d -v "$T/v" --output-format id
	run -2 --separate-stderr subword-encode -v "$T/v" --fields a,,b
	run -2 --separate-stderr subword-encode -v "$T/v" --fields a,a
	run -2 --separate-stderr subword-encode -v a="$T/v" --fields a,b
	[[ "$stderr" == *"no vocabulary for field b"* ]]
}

@test "subword-encode: a missing vocab or input is status 1" {
	run -1 --separate-stderr subword-encode -v "$T/nosuch" --output-format id
	[ "$stderr" = "subword-encode: $T/nosuch: No such file or directory" ]
	run -1 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/nosuch" "$T/c.txt"
	[ "$stderr" = "subword-encode: $T/nosuch: No such file or directory" ]
	# The other input was still encoded.
	[ "${#lines[@]}" -eq 120 ]
}

@test "subword-encode: ids round-trip through decoding" {
	subword-encode -v "$T/v" --output-format id "$T/c.txt" >"$T/ids"
	run -0 --separate-stderr subword-encode -d --input-format id -v "$T/v" "$T/ids"
	[ -z "$stderr" ]
	[ "$output" = "$(cat "$T/c.txt")" ]
	subword-encode -v "$T/v" "$T/c.txt" | subword-encode -d -v "$T/v" >"$T/dec"
	cmp "$T/c.txt" "$T/dec"
}

@test "subword-encode: a blank line is an empty record; --eos appends id 1" {
	printf 'the cat\n\n   \nthe\n' >"$T/in"
	run -0 subword-encode -v "$T/v" --output-format id "$T/in"
	[ "$(wc -l <<<"$output")" -eq 4 ]
	[ -n "$(sed -n 1p <<<"$output")" ]
	[ -z "$(sed -n 2p <<<"$output")" ]
	[ -z "$(sed -n 3p <<<"$output")" ]
	run -0 subword-encode -v "$T/v" --eos --output-format id "$T/in"
	[ "$(sed -n 2p <<<"$output")" = 1 ]
	[ "$(sed -n 4p <<<"$output")" = "$(printf 'the\n' | subword-encode -v "$T/v" --output-format id) 1" ]
	# Four records, the second with an empty targets list.
	subword-encode -v "$T/v" "$T/in" >"$T/rec"
	run -0 subword-encode -d -v "$T/v" "$T/rec"
	[ "$output" = "$(printf 'the cat\n\n\nthe')" ]
	run -0 python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
n = 0
while d:
    l = int.from_bytes(d[:8], "little"); d = d[16 + l:]; n += 1
print(n)' "$T/rec"
	[ "$output" = 4 ]
}

@test "subword-encode: lines are stripped unless --no-strip" {
	printf '  the cat \n' >"$T/in"
	a=$(subword-encode -v "$T/v" --output-format id "$T/in")
	b=$(printf 'the cat\n' | subword-encode -v "$T/v" --output-format id)
	[ "$a" = "$b" ]
	c=$(subword-encode -v "$T/v" --no-strip --output-format id "$T/in")
	[ "$a" != "$c" ]
	run -0 subword-encode -d --input-format id -v "$T/v" <<<"$c"
	[ "$output" = "  the cat " ]
}

@test "subword-encode: piece output shows the escaped subtokens" {
	run -0 subword-encode -v "$T/v" --output-format piece <<<"the cat"
	[ "$output" = "the_ cat_" ]
}

@test "subword-encode: characters outside the alphabet are spelled by number" {
	run -0 subword-encode -v "$T/v" --output-format piece <<<"Ω"
	[ "$output" = '\ 9 3 7 ; _' ]
	run -0 bash -c 'subword-encode -v "$1" --output-format id <<<"Ω" | subword-encode -d --input-format id -v "$1"' _ "$T/v"
	[ "$output" = "Ω" ]
}

@test "subword-encode: parallel fields with one vocab each" {
	paste "$T/fr.txt" <(head -40 "$T/c.txt") >"$T/par.tsv"
	subword-encode --fields inputs,targets -v inputs="$T/vfr" -v targets="$T/v" \
		--output-format id "$T/par.tsv" >"$T/par.ids"
	[ "$(wc -l <"$T/par.ids")" -eq 40 ]
	[ "$(cut -f1 "$T/par.ids")" = "$(subword-encode -v "$T/vfr" --output-format id "$T/fr.txt")" ]
	[ "$(cut -f2 "$T/par.ids")" = "$(head -40 "$T/c.txt" | subword-encode -v "$T/v" --output-format id)" ]
	subword-encode --fields inputs,targets -v inputs="$T/vfr" -v targets="$T/v" \
		"$T/par.tsv" >"$T/par.rec"
	run -0 subword-encode -d --fields inputs,targets -v inputs="$T/vfr" -v targets="$T/v" "$T/par.rec"
	[ "$output" = "$(cat "$T/par.tsv")" ]
	run -0 subword-encode -d -f inputs -v "$T/vfr" "$T/par.rec"
	[ "$output" = "$(cat "$T/fr.txt")" ]
}

@test "subword-encode: lines without a tab are skipped with a warning, as tensor2tensor does" {
	printf 'le chat\tthe cat\nno tab here\n\nun\tdeux\ttrois\n' >"$T/p.tsv"
	run -0 --separate-stderr subword-encode --fields inputs,targets -v "$T/v" --output-format id "$T/p.tsv"
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "subword-encode: 2 lines without 2 tab-separated fields skipped" ]
	# The last field keeps further tabs.
	run -0 bash -c 'subword-encode -q --fields a,b -v "$1" "$2" | subword-encode -d --fields a,b -v "$1"' _ "$T/v" "$T/p.tsv"
	[ "${lines[1]}" = "$(printf 'un\tdeux\ttrois')" ]
	run -0 --separate-stderr subword-encode -q --fields inputs,targets -v "$T/v" --output-format id "$T/p.tsv"
	[ -z "$stderr" ]
}

@test "subword-encode: -f renames the feature; decoding a missing feature fails" {
	subword-encode -f inputs -v "$T/v" "$T/c.txt" >"$T/rec"
	run -0 subword-encode -d -f inputs -v "$T/v" "$T/rec"
	[ "$output" = "$(cat "$T/c.txt")" ]
	run -1 --separate-stderr subword-encode -d -v "$T/v" "$T/rec"
	[ "$stderr" = "subword-encode: $T/rec: record 0: no int64 feature with that name" ]
	[ -z "$output" ]
}

@test "subword-encode: --strip-extraneous drops trailing PAD and EOS" {
	printf '1 0 1\n5 1\n' >"$T/ids"
	run -0 subword-encode -d --input-format id -v "$T/v" "$T/ids"
	[ "${lines[0]}" = "<EOS><pad><EOS>" ]
	run -0 subword-encode -d --strip-extraneous --input-format id -v "$T/v" "$T/ids"
	[ -z "${lines[0]}" ] || [ "${#lines[@]}" -eq 1 ]
	[ "$(sed -n 1p <<<"$output")" = "" ]
}

@test "subword-encode: invalid UTF-8 stops at the line, after the good output" {
	printf 'the cat\nthe \377 dog\nthe end\n' >"$T/bad"
	run -1 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/bad"
	[ "$stderr" = "subword-encode: $T/bad: line 2: invalid UTF-8 at byte offset 12" ]
	[ "${#lines[@]}" -eq 1 ]
	subword-encode -v "$T/v" "$T/bad" >"$T/rec" 2>/dev/null || true
	run -0 subword-encode -d -v "$T/v" "$T/rec"
	[ "$output" = "the cat" ]
	run -1 --separate-stderr subword-encode -v "$T/v" -o "$T/out.rec" "$T/bad"
	[ ! -e "$T/out.rec" ]
}

@test "subword-encode: bad id lines and bad records are errors with their position" {
	printf '1 2\n3 x\n' >"$T/ids"
	run -1 --separate-stderr subword-encode -d --input-format id -v "$T/v" "$T/ids"
	[ "$stderr" = "subword-encode: $T/ids: line 2: not a list of ids" ]
	[ "$output" = "<EOS><EOS>" ] || [ "${#lines[@]}" -eq 1 ]
	subword-encode -v "$T/v" "$T/c.txt" | head -c 100 >"$T/trunc.rec"
	run -1 --separate-stderr subword-encode -d -v "$T/v" "$T/trunc.rec"
	[[ "$stderr" == "subword-encode: $T/trunc.rec: record "*" at offset "* ]]
}

@test "subword-encode: a corrupt vocabulary is reported" {
	printf "'<pad>_'\n'<EOS>_'\n'ab_'\n" >"$T/corrupt"
	run -1 --separate-stderr subword-encode -v "$T/corrupt" --output-format id <<<"a"
	[[ "$stderr" == *"corrupt vocabulary"* ]]
	: >"$T/emptyvocab"
	run -1 --separate-stderr subword-encode -v "$T/emptyvocab" --output-format id <<<"a"
	[ "$stderr" = "subword-encode: $T/emptyvocab: empty vocabulary" ]
	printf "'a'\n'\377'\n" >"$T/badvocab"
	run -1 --separate-stderr subword-encode -v "$T/badvocab" --output-format id <<<"a"
	[ "$stderr" = "subword-encode: $T/badvocab: line 2: invalid UTF-8 at byte offset 5" ]
}

@test "subword-encode: a closed pipe is a quiet SIGPIPE" {
	for i in $(seq 1 200); do cat "$T/c.txt"; done >"$T/big.txt"
	run bash -c 'subword-encode -v "$1" --output-format id "$2" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/v" "$T/big.txt"
	[ "$output" = 141 ]
	run bash -c 'subword-encode -v "$1" "$2" 2>&1 | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/v" "$T/big.txt"
	[ "$output" = 141 ]
}

@test "subword-encode: a full disk is status 1" {
	run -1 --separate-stderr bash -c 'subword-encode -v "$1" --output-format id "$2" >/dev/full' _ "$T/v" "$T/c.txt"
	[ "$stderr" = "subword-encode: stdout: No space left on device" ]
}

@test "subword-encode: -o writes records, compressed by suffix" {
	subword-encode -v "$T/v" -o "$T/out.rec" "$T/c.txt"
	subword-encode -v "$T/v" -o "$T/out.rec.gz" "$T/c.txt"
	subword-encode -v "$T/v" "$T/c.txt" >"$T/plain.rec"
	cmp "$T/out.rec" "$T/plain.rec"
	[ "$(head -c2 "$T/out.rec.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	run -0 subword-encode -d -v "$T/v" "$T/out.rec.gz"
	[ "$output" = "$(cat "$T/c.txt")" ]
}

@test "subword-encode: one vocab is shared by all fields" {
	printf 'the cat\tthe dog\n' >"$T/p.tsv"
	run -0 subword-encode --fields inputs,targets -v "$T/v" --output-format id "$T/p.tsv"
	a=$(printf 'the cat\n' | subword-encode -v "$T/v" --output-format id)
	b=$(printf 'the dog\n' | subword-encode -v "$T/v" --output-format id)
	[ "$output" = "$(printf '%s\t%s' "$a" "$b")" ]
}

@test "subword-encode: --help is the man page SYNOPSIS" {
	help_is_synopsis subword-encode
}

@test "subword-encode: WordPiece options need -m wordpiece; --eos needs subword" {
	run -2 --separate-stderr subword-encode --lower -v "$T/v"
	[[ "$stderr" == *"apply to -m wordpiece"* ]]
	run -2 --separate-stderr subword-encode --rules electra -v "$T/v"
	run -2 --separate-stderr subword-encode -m wordpiece --rules gpt -v "$T/v"
	run -2 --separate-stderr subword-encode -m wordpiece --eos -v "$T/v"
	run -2 --separate-stderr subword-encode -m sentencepiece -v "$T/v"
}

@test "subword-encode: -m wordpiece with a hand-made vocab" {
	printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\n##s\nsat\n,\n!\nnaive\ncafe\n' >"$T/wp.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --output-format piece <<<"The CATS, naïve café sat!"
	[ "$output" = "the cat ##s , naive cafe sat !" ]
	run -0 subword-encode -m wordpiece -v "$T/wp.txt" --output-format id <<<"The CATS, dog"
	[ "$output" = "4 5 6 8 1" ]
	run -0 subword-encode -m wordpiece --no-lower -v "$T/wp.txt" --output-format id <<<"The cat"
	[ "$output" = "1 5" ]
	printf 'the cats\n\ncat!\n' | subword-encode -m wordpiece -v "$T/wp.txt" >"$T/wp.rec"
	run -0 subword-encode -d -m wordpiece -v "$T/wp.txt" "$T/wp.rec"
	[ "$output" = "$(printf 'the cats\n\ncat !')" ]
	printf '4 99\n' >"$T/bad.ids"
	run -1 --separate-stderr subword-encode -d -m wordpiece --input-format id -v "$T/wp.txt" "$T/bad.ids"
	[[ "$stderr" == "subword-encode: $T/bad.ids: line 1: "*"out of range"* ]]
}

@test "subword-encode: -m wordpiece with bert-base-uncased" {
	need_shared wordpiece-vocabs/bert-base-uncased-vocab.txt
	run -0 --separate-stderr subword-encode -m wordpiece -v "$SHARED/wordpiece-vocabs/bert-base-uncased-vocab.txt" \
		--output-format id <<<"The Quick brown fox, naïve café — unaffable!"
	[ "$output" = "1996 4248 2829 4419 1010 15743 7668 1517 14477 20961 3468 999" ]
	[ -z "$stderr" ]
}

@test "subword-encode: records are canonical Examples" {
	printf "'<pad>_'\n'<EOS>_'\n'ab_'\n'a'\n'b'\n'_'\n" >"$T/tiny"
	printf 'ab\n\n' | subword-encode --eos -v "$T/tiny" >"$T/r"
	run -0 python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
while d:
    n = int.from_bytes(d[:8], "little")
    print(d[12:12 + n].hex())
    d = d[16 + n:]' "$T/r"
	[ "${lines[0]}" = "0a130a110a077461726765747312061a040a020201" ]
	[ "${lines[1]}" = "0a120a100a077461726765747312051a030a0101" ]
	# Two fields come out sorted by name.
	printf 'ab\tb\n' | subword-encode --fields z,a -v "$T/tiny" >"$T/r2"
	run -0 python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
print(d[12:-4].hex())' "$T/r2"
	[ "$output" = "0a190a0b0a016112061a040a0204050a0a0a017a12051a030a0102" ]
}

@test "subword-encode: -j gives the same bytes and the same errors" {
	for i in $(seq 1 300); do cat "$T/c.txt"; done >"$T/big.txt"
	subword-encode -v "$T/v" --output-format id "$T/big.txt" >"$T/a"
	subword-encode -j 2 -v "$T/v" --output-format id "$T/big.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	subword-encode -v "$T/v" --eos "$T/big.txt" "$T/c.txt" >"$T/a"
	subword-encode -j 3 -v "$T/v" --eos "$T/big.txt" - <"$T/c.txt" >"$T/b"
	cmp "$T/a" "$T/b"
	subword-encode -j 2 -v "$T/v" -o "$T/b.gz" "$T/big.txt"
	run -0 bash -c 'subword-encode -d -v "$1" "$2" | cmp - "$3"' _ "$T/v" "$T/b.gz" "$T/big.txt"
	{ cat "$T/big.txt"; printf 'x\r\ny \377\n'; } >"$T/bad.txt"
	run -1 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/bad.txt"
	want=$stderr
	n=${#lines[@]}
	run -1 --separate-stderr subword-encode -j 2 -v "$T/v" --output-format id "$T/bad.txt"
	[ "$stderr" = "$want" ]
	[ "${#lines[@]}" -eq "$n" ]
	[[ "$stderr" == *"line 36002: invalid UTF-8 at byte offset"* ]]
	run -2 --separate-stderr subword-encode -j x -v "$T/v"
}

@test "subword-encode: -o keeps the old file when an input is missing, in every output form" {
	local a
	subword-encode -v "$T/v" -o "$T/rec" "$T/c.txt"
	for a in "" "--output-format id" "--output-format piece" "-d" "-d --input-format id"; do
		echo OLD >"$T/keep"
		run -1 subword-encode $a -v "$T/v" -o "$T/keep" "$T/nosuch"
		[ "$(cat "$T/keep")" = OLD ]
		run -1 subword-encode $a -v "$T/v" -o "$T/keep" "$T/c.txt" "$T/nosuch"
		[ "$(cat "$T/keep")" = OLD ]
	done
}

@test "subword-encode: kill -9 in the middle of writing leaves the old output" {
	local i
	for i in $(seq 1 40); do cat "$T/c.txt"; done >"$T/big.txt"
	echo OLD >"$T/keep"
	kill_mid_write "$T/keep" "$T/big.txt" subword-encode -v "$T/v" -o "$T/keep"
	kill_mid_write "$T/keep" "$T/big.txt" subword-encode -v "$T/v" --output-format id -o "$T/keep"
}

@test "subword-encode: an output that cannot be written is refused before the vocabulary and input are read" {
	mkdir "$T/adir"
	refuses_output "subword-encode: $T/adir: Is a directory" subword-encode -v "$T/nosuch" -o "$T/adir" "$T/nosuch"
	refuses_output "subword-encode: $T/nodir/x: No such file or directory" subword-encode -v "$T/v" -o "$T/nodir/x" "$T/nosuch"
	refuses_output "subword-encode: an output file name is empty" subword-encode -v "$T/v" -o '' "$T/nosuch"
}

@test "subword-encode: after a fault stdout holds what the good lines or records give; -o keeps it only with --keep-partial" {
	local a
	head -n 70 "$T/c.txt" >"$T/good.txt"
	{ cat "$T/good.txt"; printf 'bad \377 line\n'; cat "$T/c.txt"; } >"$T/bad.txt"
	for a in "" "--output-format id" "--output-format piece" "-j 2" "-j 2 --output-format id"; do
		same_prefix_output "$T/bad.txt" "$T/good.txt" subword-encode -v "$T/v" $a
	done
	subword-encode -v "$T/v" -o "$T/rec" "$T/c.txt"
	damage_at "$T/rec" 50 "$T/bad.tfr" "$T/good.tfr"
	same_prefix_output "$T/bad.tfr" "$T/good.tfr" subword-encode -d -v "$T/v"
	subword-encode -v "$T/v" --output-format id "$T/c.txt" | head -n 40 >"$T/good.ids"
	{ cat "$T/good.ids"; echo "1 2 x"; cat "$T/good.ids"; } >"$T/bad.ids"
	same_prefix_output "$T/bad.ids" "$T/good.ids" subword-encode -d --input-format id -v "$T/v"
}
