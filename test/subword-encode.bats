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
	[ "${lines[0]}" = "usage: subword-encode [-dhqV] [--keep-partial] [--lower | --no-lower]" ]
}

@test "subword-encode: --version names the Unicode version" {
	run -0 --separate-stderr subword-encode --version
	[ "$output" = "$(printf 'subword-encode 0.1.0\nUnicode 14.0.0, byte-level BPE Unicode 16.0.0')" ]
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

@test "subword-encode: id text: ids past the vocabulary, the records' ids" {
	printf 'the cat\tthe\nthe\tcat sat\n' >"$T/in"
	run -0 --separate-stderr subword-encode -v "$T/v" --fields a,b --eos=1234567 --output-format id "$T/in"
	# The records of the same input, as tfr-cat writes their ids.
	subword-encode -v "$T/v" --fields a,b --eos=1234567 "$T/in" >"$T/rec"
	want=$(tfr-cat "$T/rec" | sed 's/.*"a":{"int64List":{"value":\[\([^]]*\)\]}}.*"b":{"int64List":{"value":\[\([^]]*\)\]}}.*/\1\t\2/; s/"//g; s/,/ /g')
	[ "$output" = "$want" ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *" 1234567"$'\t'*" 1234567" ]]
	[[ "${lines[1]}" == *" 1234567"$'\t'*" 1234567" ]]
}

@test "subword-encode: a blank line ends a document in records; id output keeps tensor2tensor's empty list (1 with --eos)" {
	printf 'the cat\n\n   \nthe\n' >"$T/in"
	run -0 subword-encode -v "$T/v" --output-format id "$T/in"
	[ "$(wc -l <<<"$output")" -eq 4 ]
	[ -n "$(sed -n 1p <<<"$output")" ]
	[ -z "$(sed -n 2p <<<"$output")" ]
	[ -z "$(sed -n 3p <<<"$output")" ]
	run -0 subword-encode -v "$T/v" --eos --output-format id "$T/in"
	[ "$(sed -n 2p <<<"$output")" = 1 ]
	[ "$(sed -n 3p <<<"$output")" = 1 ]
	[ "$(sed -n 4p <<<"$output")" = "$(printf 'the\n' | subword-encode -v "$T/v" --output-format id) 1" ]
	# Four records, the second and third Examples without features, with or without --eos and -j.
	for a in "" "--eos" "-j 2" "--eos -j 2"; do
		subword-encode $a -v "$T/v" "$T/in" >"$T/rec"
		run -0 python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
while d:
    l = int.from_bytes(d[:8], "little"); print(d[12:12 + l].hex()[:8]); d = d[16 + l:]' "$T/rec"
		[ "${#lines[@]}" -eq 4 ]
		[ "${lines[0]}" != 0a00 ] && [ "${lines[1]}" = 0a00 ] && [ "${lines[2]}" = 0a00 ] && [ "${lines[3]}" != 0a00 ]
	done
	# decoding gives the blank lines back
	subword-encode -v "$T/v" "$T/in" >"$T/rec"
	run -0 subword-encode -d -v "$T/v" "$T/rec"
	[ "$output" = "$(printf 'the cat\n\n\nthe')" ]
	# --no-strip: only an empty line is blank
	printf 'the\n\n \n' | subword-encode --no-strip -v "$T/v" >"$T/rec"
	[ "$(tfr-cat --flat "$T/rec" | jq -c '.targets != null')" = "$(printf 'true\nfalse\ntrue')" ]
}

@test "subword-encode: blank lines end Megatron documents as in WordPiece mode" {
	printf 'the cat sat\nthe dog ran\n\nthe end came\n\n\nthe bird sang\n' >"$T/docs.txt"
	subword-encode -q -v "$T/v" "$T/docs.txt" | mmap-index build --raw-ids -q --format megatron --documents empty -o "$T/m"
	run -0 mmap-index info --json "$T/m"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = '[4,4]' ]
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
	run -0 --separate-stderr subword-encode -v "$T/v" --output-format piece <<<"Ω"
	[ "$output" = '\ 9 3 7 ; _' ]
	[ "$stderr" = "subword-encode: warning: targets: 100% of 1 characters escaped as \\NNN; ($T/v does not fit the text?)" ]
	run -0 bash -c 'subword-encode -v "$1" --output-format id <<<"Ω" 2>/dev/null | subword-encode -d --input-format id -v "$1"' _ "$T/v"
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
	# (the tab and the 'x' of "deux\ttrois" are escaped)
	[ "$stderr" = "$(printf '%s\n' "subword-encode: warning: targets: 11.8% of 17 characters escaped as \\NNN; ($T/v does not fit the text?)" "subword-encode: 2 lines without 2 tab-separated fields skipped")" ]
	# The last field keeps further tabs.
	run -0 bash -c 'subword-encode -q --fields a,b -v "$1" "$2" 2>/dev/null | subword-encode -d --fields a,b -v "$1"' _ "$T/v" "$T/p.tsv"
	[ "${lines[1]}" = "$(printf 'un\tdeux\ttrois')" ]
	# -q: only the warning that the vocabulary does not fit
	run -0 --separate-stderr subword-encode -q --fields inputs,targets -v "$T/v" --output-format id "$T/p.tsv"
	[ "$stderr" = "subword-encode: warning: targets: 11.8% of 17 characters escaped as \\NNN; ($T/v does not fit the text?)" ]
}

@test "subword-encode: -f renames the feature; decoding a missing feature fails" {
	subword-encode -f inputs -v "$T/v" "$T/c.txt" >"$T/rec"
	run -0 subword-encode -d -f inputs -v "$T/v" "$T/rec"
	[ "$output" = "$(cat "$T/c.txt")" ]
	run -1 --separate-stderr subword-encode -d -v "$T/v" "$T/rec"
	[ "$stderr" = "subword-encode: $T/rec: record 0 at offset 0: no int64 feature 'targets'" ]
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

@test "subword-encode: a vocab with long entries costs at most 16 bytes a byte" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time not installed"
	! grep -q __asan_init "$RECPIPE_BIN/subword-encode" ||
		skip "memory bounds are not checked under AddressSanitizer"
	# 24 ordinary entries, a 10 MB entry and two of 5 MB sharing all but
	# their ends (85 bytes a byte before: 1.7 GB for a 20 MB entry).
	printf 'x\n' | subword-build -q -t 10 -o "$T/base" -
	awk 'BEGIN { srand(3); for (i = 0; i < 10000000; i++)
	    printf "%c", 97 + int(rand() * 26); print "" }' >"$T/long.txt"
	head -c 5000000 "$T/long.txt" >"$T/half"
	{
		cat "$T/base"
		printf "'%s_'\n" "$(head -c 10000000 "$T/long.txt")"
		printf "'%sb_'\n'%sc_'\n" "$(cat "$T/half")" "$(cat "$T/half")"
	} >"$T/vocab"
	local size kb
	size=$(wc -c <"$T/vocab")
	/usr/bin/time -f %M -o "$T/rss" subword-encode -v "$T/vocab" \
		--output-format id "$T/long.txt" >"$T/ids"
	kb=$(cat "$T/rss")
	echo "vocab $size bytes, peak $kb KB"
	[ "$kb" -le $((16 * size / 1024)) ]
	# The 10 MB token is that one entry.
	[ "$(cat "$T/ids")" = "$(($(wc -l <"$T/base")))" ]
	printf '%sc\n' "$(cat "$T/half")" | subword-encode -v "$T/vocab" \
		--output-format id >"$T/ids"
	[ "$(cat "$T/ids")" = "$(($(wc -l <"$T/base") + 2))" ]
}

@test "subword-encode: threads share one vocabulary: 300,000 short entries cost 16 bytes a byte at -j 8" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time not installed"
	! grep -q __asan_init "$RECPIPE_BIN/subword-encode" ||
		skip "memory bounds are not checked under AddressSanitizer"
	# Each thread loaded a copy of its own: 118 MB for this 2.1 MB (16 MB now).
	awk 'BEGIN { srand(11); a = "abcdefghijklmnopqrstuvwxyz0123456789"
	    for (c = 1; c <= 36; c++) printf "\047%s\047\n", substr(a, c, 1)
	    printf "\047_\047\n\047 \047\n"
	    for (i = 0; i < 300000; i++) { n = 1 + int(rand() * 6); s = ""
		for (k = 0; k < n; k++) s = s substr(a, 1 + int(rand() * 36), 1)
		printf "\047%s%s\047\n", s, rand() < 0.5 ? "_" : "" } }' >"$T/vocab"
	awk 'NR % 97 == 0 { gsub(/[\047_]/, ""); printf "%s %s\n", $0, $0 }' \
	    "$T/vocab" >"$T/text"
	local size kb
	size=$(wc -c <"$T/vocab")
	/usr/bin/time -f %M -o "$T/rss" subword-encode -j 8 -v "$T/vocab" \
		--output-format id "$T/text" >"$T/ids4"
	kb=$(cat "$T/rss")
	echo "vocab $size bytes, peak $kb KB"
	[ "$kb" -le $(((16 * size + 32 * 1024 * 1024) / 1024)) ]
	run -0 subword-encode -j 1 -v "$T/vocab" --output-format id "$T/text"
	[ "$output" = "$(cat "$T/ids4")" ]
	[ "$(wc -l <"$T/ids4")" -eq "$(wc -l <"$T/text")" ]
}

@test "subword-encode: --help is the man page SYNOPSIS" {
	help_is_synopsis subword-encode
}

@test "subword-encode: WordPiece options need -m wordpiece" {
	run -2 --separate-stderr subword-encode --lower -v "$T/v"
	[[ "$stderr" == *"apply to -m wordpiece"* ]]
	run -2 --separate-stderr subword-encode --rules electra -v "$T/v"
	run -2 --separate-stderr subword-encode -m wordpiece --rules gpt -v "$T/v"
	run -2 --separate-stderr subword-encode -m gpt2 -v "$T/v"
}

@test "subword-encode: -m wordpiece with a hand-made vocab" {
	printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\n##s\nsat\n,\n!\nnaive\ncafe\n' >"$T/wp.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --output-format piece <<<"The CATS, naïve café sat!"
	[ "$output" = "the cat ##s , naive cafe sat !" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --output-format id <<<"The CATS, dog"
	[ "$output" = "4 5 6 8 1" ]
	[ "$stderr" = "subword-encode: warning: targets: 20% of 5 tokens replaced by [UNK] ($T/wp.txt does not fit the text?)" ]
	run -0 --separate-stderr subword-encode -m wordpiece --no-lower -v "$T/wp.txt" --output-format id <<<"The cat"
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
	# a blank line: the end of a document, an Example without features
	[ "${lines[1]}" = "0a00" ]
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

@test "subword-encode: -d takes --max-record-size as tfr-cat does" {
	"$BATS_TEST_DIRNAME/tools/big-record" 1500 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	run -0 --separate-stderr sh -c 'cat "$1" | subword-encode -d -v "$2" --max-record-size 2k' _ "$T/big.tfr" "$T/v"
	run -1 --separate-stderr sh -c 'cat "$1" | subword-encode -d -v "$2" --max-record-size 1k' _ "$T/big.tfr" "$T/v"
	[ "$stderr" = "subword-encode: stdin: record 0 at offset 0: length 1524 exceeds the limit of 1000 bytes (--max-record-size)" ]
	run -1 --separate-stderr sh -c 'gzip -c "$1" | subword-encode -d -v "$2" --max-record-size 1Ki' _ "$T/big.tfr" "$T/v"
	[[ "$stderr" == *"length 1524 exceeds the limit of 1024 bytes"* ]]
	run -2 --separate-stderr subword-encode -d -v "$T/v" --max-record-size 1x "$T/big.tfr"
	[[ "$stderr" == *"--max-record-size: expected a size (a whole number, with k, M, G, Ki, Mi or Gi), not '1x'"* ]]
}

@test "subword-encode: -d of a 20 MB record streams it: memory about one copy of the record" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	local id
	id=$(grep -n "^'the_'\$" "$T/v" | cut -d: -f1)
	id=$((id - 1))
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 targets "$id" | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	/usr/bin/time -f %M -o "$T/rss" subword-encode -d -v "$T/v" "$T/big.gz" >"$T/out"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound subword-encode 50000)" ] || { echo "peak RSS $rss KB for a 20 MB record"; false; }
	[ "$(wc -c <"$T/out")" = 80000000 ]
	[ "$(tr ' ' '\n' <"$T/out" | sort | uniq -c | sed 's/^ *//')" = "20000000 the" ]
	# and with --strip-extraneous, trailing ids 0 and 1 dropped
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 targets 1 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/eos.gz"
	/usr/bin/time -f %M -o "$T/rss" subword-encode -d --strip-extraneous -v "$T/v" "$T/eos.gz" >"$T/out"
	[ "$(tail -1 "$T/rss")" -lt "$(rss_bound subword-encode 50000)" ]
	[ "$(cat "$T/out")" = "" ] && [ "$(wc -c <"$T/out")" = 1 ]
}

@test "subword-encode: -d --keep-partial -o after a streamed 20 MB record keeps its line and the document end" {
	local id
	id=$(grep -n "^'the_'\$" "$T/v" | cut -d: -f1)
	id=$((id - 1))
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 targets "$id" | tfr-cat --no-crc -R --type raw >"$T/big.rec"
	printf '""\n' | tfr-cat --from-json --type raw >"$T/end.rec"
	n=$(( $(stat -c %s "$T/big.rec") + $(stat -c %s "$T/end.rec") ))
	{ cat "$T/big.rec" "$T/end.rec"; printf 'abc'; } | gzip -1 >"$T/cut.gz"
	run -1 --separate-stderr subword-encode -d --keep-partial -v "$T/v" -o "$T/out" "$T/cut.gz"
	[ "$stderr" = "subword-encode: $T/cut.gz: record 2 at offset $n: truncated header: 3 bytes after the last record" ]
	[ "$(wc -c <"$T/out")" = 80000001 ]
	[ "$(tail -c 6 "$T/out" | od -An -c | tr -d ' ')" = 'the\n\n' ]
	# without it the old file stays
	echo OLD >"$T/out"
	run -1 subword-encode -d -v "$T/v" -o "$T/out" "$T/cut.gz"
	[ "$(cat "$T/out")" = OLD ]
}

@test "subword-encode: -d names the offset and the reason of a bad record" {
	subword-encode -v "$T/v" "$T/c.txt" | head -c 200 | tfr-cat -R --recover -q >"$T/good.rec" 2>/dev/null || true
	n=$(stat -c %s "$T/good.rec")
	# a record whose payload is not an Example: a field runs past the end
	printf '"CgUKAw=="\n' | tfr-cat --from-json --type raw >"$T/bad.rec"
	cat "$T/good.rec" "$T/bad.rec" >"$T/both.rec"
	run -1 --separate-stderr subword-encode -d -v "$T/v" "$T/both.rec"
	k=$(tfr-cat -c "$T/good.rec")
	[ "$stderr" = "subword-encode: $T/both.rec: record $k at offset $n: malformed Example: example: field 1: length 5 runs past the end at byte 2" ]
	[ "${#lines[@]}" -eq "$k" ]
	run -1 --separate-stderr subword-encode -d --fields targets,inputs -v "$T/v" "$T/good.rec"
	[ "$stderr" = "subword-encode: $T/good.rec: record 0 at offset 0: no int64 feature 'inputs'" ]
}

@test "subword-encode: -v FIELD=VOCAB for a field that does not exist names the field" {
	run -2 --separate-stderr subword-encode --fields a,b -v a="$T/v" -v c="$T/v" "$T/c.txt"
	[ "${lines[0]}" = "" ]
	[ "$(sed -n 1p <<<"$stderr")" = "subword-encode: -v c=$T/v: no field 'c' (the fields are a,b)" ]
	run -2 --separate-stderr subword-encode -d -v inputs="$T/v" "$T/c.txt"
	[ "$(sed -n 1p <<<"$stderr")" = "subword-encode: -v inputs=$T/v: no field 'inputs' (the fields are targets)" ]
	# a vocabulary whose file name has a '=' is still a vocabulary
	cp "$T/v" "$T/x=v"
	run -0 --separate-stderr subword-encode --output-format id -v "$T/x=v" "$T/c.txt"
}

@test "subword-encode: -d out of memory names the file, record and offset" {
	(ulimit -v 60000 && subword-encode -V >/dev/null) 2>/dev/null || skip "cannot run under ulimit -v"
	subword-encode -v "$T/v" <<<"the cat" >"$T/one.rec"
	"$BATS_TEST_DIRNAME/tools/big-record" 10000000 targets 2 | tfr-cat --no-crc -R --type raw >"$T/big.rec"
	cat "$T/one.rec" "$T/big.rec" | gzip -1 >"$T/big.gz"
	n=$(stat -c %s "$T/one.rec")
	run -1 --separate-stderr bash -c 'ulimit -v 60000; subword-encode -d -v "$1" "$2"' _ "$T/v" "$T/big.gz"
	[ "$stderr" = "subword-encode: $T/big.gz: record 1 at offset $n: out of memory" ]
	[ "$output" = "the cat" ]
}

# ---- JSON lines (Megatron-LM preprocess_data.py --json-keys) ----

wp_vocab() {
	printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\n##s\nsat\n,\n!\nnaive\ncafe\n' >"$T/wp.txt"
}

@test "subword-encode: jsonl documents: a string or a list of sentences; empty ones dropped; --eos after the last" {
	wp_vocab
	printf '%s\n' '{"text": "the cat"}' '{"text": ""}' '{"text": ["the", "", "cat sat"], "x": 1}' \
	    '{"text": "!!", "text": "! !"}' '{"text": []}' >"$T/d.jsonl"
	# a sentence per line, a blank line per document; [EOS] is 13 (12 lines, [BOS] 12)
	subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --eos --output-format id "$T/d.jsonl" >"$T/o"
	printf '4 5 13\n\n\n4\n5 7 13\n\n9 9 13\n\n\n' | cmp - "$T/o"
	subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format piece "$T/d.jsonl" >"$T/o"
	printf 'the cat\n\n\nthe\ncat sat\n\n! !\n\n\n' | cmp - "$T/o"
	# Megatron's [EOS] has no line in vocab.txt; piece output names it
	run -0 subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --eos --output-format piece "$T/d.jsonl"
	[ "${lines[0]}" = "the cat [EOS]" ]
	# records through mmap-index: Megatron's documents, no extra step
	subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --eos "$T/d.jsonl" |
	    mmap-index build --raw-ids -q --format megatron -o "$T/mg_text_document"
	run -0 mmap-index info --json "$T/mg_text_document"
	[ "$(jq -c '[.sequences, .documents, .dtype]' <<<"$output")" = '[4,5,"uint16"]' ]
	[ "$(tail -c 48 "$T/mg_text_document.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 1 1 3 4 4 " ]
	run -0 mmap-index cat --output-format id "$T/mg_text_document"
	[ "$output" = $'4 5 13\n4\n5 7 13\n9 9 13' ]
	# the same in several threads
	subword-encode -j 2 -m wordpiece -v "$T/wp.txt" --input-format jsonl --eos "$T/d.jsonl" |
	    mmap-index build --raw-ids -q --format megatron -o "$T/j2"
	cmp "$T/j2.idx" "$T/mg_text_document.idx" && cmp "$T/j2.bin" "$T/mg_text_document.bin"
}

@test "subword-encode: --eos takes an id or a token, with = or as the next word" {
	wp_vocab
	echo '{"text": "cat"}' >"$T/d.jsonl"
	for a in --eos=9 '--eos 9' --eos=! '--eos [CLS]' '--eos=[BOS]' '--eos [EOS]' --eos; do
		run -0 subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format id $a "$T/d.jsonl"
		case $a in
		*9|*!)	[ "${lines[0]}" = "5 9" ] ;;
		*CLS*)	[ "${lines[0]}" = "5 2" ] ;;
		*BOS*)	[ "${lines[0]}" = "5 12" ] ;;
		*)	[ "${lines[0]}" = "5 13" ] ;;
		esac
	done
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --eos=dog "$T/d.jsonl"
	[ "$stderr" = "subword-encode: $T/wp.txt: --eos: no token 'dog' in the vocabulary" ]
	# Megatron counts distinct tokens: a repeated line does not move [EOS]
	printf 'the\n' >>"$T/wp.txt"
	run -0 subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format id --eos "$T/d.jsonl"
	[ "${lines[0]}" = "5 13" ]
	# a vocabulary that has [EOS] keeps its id
	printf '[EOS]\n' >>"$T/wp.txt"
	run -0 subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format id --eos "$T/d.jsonl"
	[ "${lines[0]}" = "5 13" ]
	printf '[PAD]\n[UNK]\n[EOS]\ncat\n' >"$T/wp2.txt"
	run -0 subword-encode -m wordpiece -v "$T/wp2.txt" --input-format jsonl --output-format id --eos "$T/d.jsonl"
	[ "${lines[0]}" = "3 2" ]
	# subword mode: tensor2tensor's 1 unless an id is given
	printf "'<pad>_'\n'<EOS>_'\n'the_'\n" >"$T/t2t.txt"
	run -2 --separate-stderr subword-encode -v "$T/t2t.txt" --eos=x "$T/d.jsonl"
}

@test "subword-encode: jsonl faults name the line and the key" {
	wp_vocab
	printf '%s\n' '{"text": "the"}' '[1]' >"$T/a.jsonl"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format id "$T/a.jsonl"
	[ "$output" = $'4\n' ] || [ "${lines[0]}" = 4 ]
	[ "$stderr" = "subword-encode: $T/a.jsonl: line 2: not a JSON object: a list" ]
	printf '%s\n' '{"title": "the"}' >"$T/b.jsonl"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl "$T/b.jsonl"
	[ "$stderr" = "subword-encode: $T/b.jsonl: line 1: no key 'text'" ]
	printf '%s\n' '{"text": 5}' >"$T/c.jsonl"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl "$T/c.jsonl"
	[ "$stderr" = "subword-encode: $T/c.jsonl: line 1: 'text' holds a number, not a string or a list of strings" ]
	printf '%s\n' '{"text": ["a", null]}' >"$T/c.jsonl"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl "$T/c.jsonl"
	[ "$stderr" = "subword-encode: $T/c.jsonl: line 1: 'text' item 1 holds null, not a string" ]
	printf '{"text": "a"}\n\n' >"$T/e.jsonl"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl "$T/e.jsonl"
	[[ "$stderr" == "subword-encode: $T/e.jsonl: line 2: invalid JSON at column "* ]]
	run -2 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --json-keys text "$T/e.jsonl"
	[ "${stderr%%$'\n'*}" = "subword-encode: --json-keys applies to --input-format jsonl" ]
}

@test "subword-encode: several --json-keys: one record per line, a feature per key" {
	wp_vocab
	printf '%s\n' '{"a": "the", "b": ["cat", "", "sat"]}' '{"a": "", "b": "!"}' >"$T/d.jsonl"
	run -0 subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --json-keys a,b --eos --output-format id "$T/d.jsonl"
	[ "$output" = $'4 13\t5 7 13\n\t9 13' ]
	subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --json-keys b,a "$T/d.jsonl" >"$T/r.tfr"
	mmap-index build --raw-ids -q -f b -o "$T/b" "$T/r.tfr"
	run -0 mmap-index cat --output-format id "$T/b"
	[ "$output" = $'5 7\n9' ]
}

@test "subword-encode: -m wordpiece: a blank line ends a document (BERT's corpora)" {
	wp_vocab
	printf 'the cat\nsat\n \ncat\n\n\n' >"$T/t.txt"
	subword-encode -m wordpiece -v "$T/wp.txt" "$T/t.txt" | mmap-index build --raw-ids -q --format megatron -o "$T/m"
	run -0 mmap-index info --json "$T/m"
	[ "$(jq -c '[.sequences, .documents]' <<<"$output")" = '[3,3]' ]
	# decoding gives the blank lines back
	subword-encode -m wordpiece -v "$T/wp.txt" "$T/t.txt" >"$T/r.tfr"
	subword-encode -d -m wordpiece -v "$T/wp.txt" "$T/r.tfr" >"$T/o"
	printf 'the cat\nsat\n\ncat\n\n\n' | cmp - "$T/o"
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

@test "subword-encode: jsonl: a fault in a later sentence of a document leaves out the whole line; stdout is what the lines before give" {
	local a
	# no [UNK]: "zzz" in the third sentence of line 3 is a fault
	printf '[PAD]\na\nb\nc\n' >"$T/wp.txt"
	printf '{"text":["a b","c"]}\n{"text":"b a"}\n' >"$T/good.jsonl"
	{ cat "$T/good.jsonl"; printf '{"text":["a","b","zzz","c"]}\n{"text":"a"}\n'; } >"$T/bad.jsonl"
	for a in "--output-format id" "--output-format piece" "--output-format records" "-j 2 --output-format id" "-j 2" "--eos"; do
		same_prefix_output "$T/bad.jsonl" "$T/good.jsonl" subword-encode -q -m wordpiece -v "$T/wp.txt" --input-format jsonl $a
	done
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --input-format jsonl --output-format id "$T/bad.jsonl"
	[ "$stderr" = "subword-encode: $T/bad.jsonl: line 3: $T/wp.txt: a word needs [UNK] and the vocabulary has no [UNK]" ]
	# the documents of lines 1 and 2, each ended by an empty line
	[ "$output" = $'1 2\n3\n\n2 1' ]
}

@test "subword-encode: --parallel zips a source and a target file into inputs and targets, as the tab-separated form" {
	head -n 20 "$T/c.txt" >"$T/p.en"
	head -n 20 "$T/fr.txt" >"$T/p.fr"
	paste "$T/p.en" "$T/p.fr" | subword-encode --fields inputs,targets --eos -v inputs="$T/v" -v targets="$T/vfr" >"$T/tsv.tfr"
	run -0 --separate-stderr subword-encode --parallel --eos -v inputs="$T/v" -v targets="$T/vfr" -o "$T/par.tfr" "$T/p.en" "$T/p.fr"
	[ -z "$stderr" ]
	cmp "$T/tsv.tfr" "$T/par.tfr"
	# other field names, id output, gzip inputs
	gzip -c "$T/p.fr" >"$T/p.fr.gz"
	run -0 subword-encode --parallel --fields src,tgt -v src="$T/v" -v tgt="$T/vfr" --output-format id "$T/p.en" "$T/p.fr.gz"
	[ "${#lines[@]}" -eq 20 ]
	[ "${lines[0]}" = "$(paste "$T/p.en" "$T/p.fr" | head -n 1 | subword-encode --fields a,b -v a="$T/v" -v b="$T/vfr" --output-format id)" ]
	# a blank line pairs with its partner (text2text_txt_iterator keeps it)
	printf 'the cat\n\n' >"$T/b.en"
	printf 'le chat\nle chat\n' >"$T/b.fr"
	run -0 bash -c 'subword-encode --parallel -v inputs="$1" -v targets="$2" "$3" "$4" | tfr-cat -c' _ "$T/v" "$T/vfr" "$T/b.en" "$T/b.fr"
	[ "$output" = 2 ]
}

@test "subword-encode: --parallel --skip-empty leaves out a line blank in any file, as compile_data does; a tab stays in its field" {
	printf 'the cat\n\nthe\tcat\nthe\n \n' >"$T/b.en"
	printf 'le chat\nle chat\nle chat\n\n\n' >"$T/b.fr"
	run -0 --separate-stderr subword-encode --parallel --skip-empty --output-format id -v inputs="$T/v" -v targets="$T/vfr" "$T/b.en" "$T/b.fr"
	[ "${#lines[@]}" -eq 2 ]
	# (the tab is escaped: a warning about it first)
	[ "${stderr_lines[1]}" = "subword-encode: 3 lines with an empty field skipped" ]
	# the tab is the English side's, not a field separator
	[ "${lines[1]}" = "$(printf 'the\tcat\n' | subword-encode -q -v "$T/v" --output-format id)$(printf '\t')$(echo 'le chat' | subword-encode -v "$T/vfr" --output-format id)" ]
	# the same records as the tab-separated form of the clean lines
	printf 'the cat\tle chat\n' | subword-encode --fields inputs,targets --eos -v inputs="$T/v" -v targets="$T/vfr" >"$T/tsv.tfr"
	subword-encode -q --parallel --skip-empty --eos -v inputs="$T/v" -v targets="$T/vfr" "$T/b.en" "$T/b.fr" | tfr-cat -R -n 1 >"$T/par.tfr"
	cmp "$T/tsv.tfr" "$T/par.tfr"
	run -0 --separate-stderr subword-encode -q --parallel --skip-empty --output-format id -v inputs="$T/v" -v targets="$T/vfr" "$T/b.en" "$T/b.fr"
	[[ "$stderr" != *skipped* ]]
	run -2 --separate-stderr subword-encode --skip-empty -v "$T/v" "$T/b.en"
	[[ "$stderr" == "subword-encode: --skip-empty applies to --parallel"* ]]
}

@test "subword-encode: --parallel files of different lengths: an error naming both files and the line" {
	head -n 5 "$T/c.txt" >"$T/p.en"
	head -n 3 "$T/fr.txt" >"$T/p.fr"
	run -1 --separate-stderr subword-encode --parallel -v inputs="$T/v" -v targets="$T/vfr" --output-format id "$T/p.en" "$T/p.fr"
	[ "$stderr" = "subword-encode: $T/p.en: line 4 has no partner: $T/p.fr ends after 3 lines (--parallel files must have as many lines each)" ]
	# the three good pairs were written
	[ "${#lines[@]}" -eq 3 ]
	run -1 --separate-stderr subword-encode --parallel -v inputs="$T/v" -v targets="$T/vfr" -o "$T/x.tfr" "$T/p.fr" "$T/p.en"
	[[ "$stderr" == *"$T/p.en: line 4 has no partner: $T/p.fr ends after 3 lines"* ]]
	[ ! -e "$T/x.tfr" ]
	run -2 --separate-stderr subword-encode --parallel -v "$T/v" "$T/p.en"
	[[ "$stderr" == "subword-encode: --parallel: 1 file for 2 fields (inputs,targets); give one file per field, in that order"* ]]
}

@test "subword-encode: tab-separated lines meeting a single field are encoded whole, with a warning" {
	head -n 4 "$T/c.txt" >"$T/p.en"
	head -n 4 "$T/fr.txt" >"$T/p.fr"
	run -0 --separate-stderr bash -c 'paste "$2" "$3" | subword-encode --eos -v "$1" --output-format id' _ "$T/v" "$T/p.en" "$T/p.fr"
	[ "${#lines[@]}" -eq 4 ]
	# (the tabs are escaped: a line at the end)
	[[ "${stderr_lines[0]}" == "subword-encode: targets: "*" characters, "*"% escaped as \\NNN;" ]]
	[ "${stderr_lines[1]}" = "subword-encode: warning: 4 lines hold a tab but there is one field, 'targets', so each was encoded whole; for tab-separated columns give --fields (e.g. --fields inputs,targets), for line-parallel files --parallel" ]
	run -0 --separate-stderr bash -c 'paste "$2" "$3" | subword-encode -j 2 -v "$1" --output-format id' _ "$T/v" "$T/p.en" "$T/p.fr"
	[[ "$stderr" == *"warning: 4 lines hold a tab"* ]]
	run -0 --separate-stderr bash -c 'paste "$2" "$3" | subword-encode -q -v "$1" --output-format id' _ "$T/v" "$T/p.en" "$T/p.fr"
	[ -z "$stderr" ]
	run -0 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/p.en"
	[ -z "$stderr" ]
}

@test "subword-encode: -m wordpiece reports the [UNK] share at the end, warns above 5%" {
	printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncat\n##s\nsat\n' >"$T/wp.txt"
	for i in $(seq 1 99); do echo "the cat sat"; done >"$T/wt.txt"
	echo "the dog sat" >>"$T/wt.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --output-format id "$T/wt.txt"
	[ "$stderr" = "subword-encode: targets: 300 tokens, 0.333% replaced by [UNK]" ]
	run -0 --separate-stderr subword-encode -q -m wordpiece -v "$T/wp.txt" --output-format id "$T/wt.txt"
	[ -z "$stderr" ]
	# none: nothing to say
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --output-format id <<<"the cat"
	[ -z "$stderr" ]
	# a vocabulary that does not fit the text: a warning, even with -q; -j counts the same
	printf '猫 sat\n狗\n' >"$T/zh.txt"
	for a in "" "-q" "-j 2"; do
		run -0 --separate-stderr subword-encode $a -m wordpiece -v "$T/wp.txt" -o "$T/zh.tfr" "$T/zh.txt"
		[ "$stderr" = "subword-encode: warning: targets: 66.7% of 3 tokens replaced by [UNK] ($T/wp.txt does not fit the text?)" ]
	done
}

@test "subword-encode: --max-unk-rate fails at the end; stdout has every record, -o nothing" {
	printf '[PAD]\n[UNK]\nthe\ncat\n' >"$T/wp.txt"
	printf 'the cat\nthe dog\n' >"$T/in.txt"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --max-unk-rate 0.2 --output-format id "$T/in.txt"
	[ "$output" = "$(printf '2 3\n2 1')" ]
	[ "$stderr" = "subword-encode: targets: 25% of 4 tokens replaced by [UNK], above --max-unk-rate 0.2 ($T/wp.txt does not fit the text?)" ]
	echo OLD >"$T/out.tfr"
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --max-unk-rate 10% -o "$T/out.tfr" "$T/in.txt"
	[ "$(cat "$T/out.tfr")" = OLD ]
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --max-unk-rate 10% --keep-partial -o "$T/out.tfr" "$T/in.txt"
	[ "$(tfr-cat -c "$T/out.tfr")" = 2 ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --max-unk-rate 0.25 -o "$T/out.tfr" "$T/in.txt"
	[[ "$stderr" == *"warning: targets: 25% of 4 tokens"* ]]
	run -2 --separate-stderr subword-encode -m wordpiece -v "$T/wp.txt" --max-unk-rate 2 "$T/in.txt"
	run -2 --separate-stderr subword-encode -d -v "$T/v" --max-unk-rate 0.1 "$T/in.txt"
	[[ "$stderr" == *"--max-unk-rate applies to encoding"* ]]
}

@test "subword-encode: subword mode reports the share of escaped characters, warns above 5%, honours --max-unk-rate" {
	# $T/v is made from English lines: Thai and Chinese are escaped, character by character
	printf 'สวัสดีครับ\n今天天气很好\n' >"$T/th.txt"
	subword-encode -q -v "$T/v" --output-format id "$T/th.txt" >"$T/th.ref"
	for a in "" "-q" "-j 2"; do
		run -0 --separate-stderr subword-encode $a -v "$T/v" --output-format id "$T/th.txt"
		[ "$output" = "$(cat "$T/th.ref")" ]
		[ "$stderr" = "subword-encode: warning: targets: 100% of 16 characters escaped as \\NNN; ($T/v does not fit the text?)" ]
	done
	run -1 --separate-stderr subword-encode -v "$T/v" --max-unk-rate 0.1 --output-format id "$T/th.txt"
	[ "$output" = "$(cat "$T/th.ref")" ]
	[ "$stderr" = "subword-encode: targets: 100% of 16 characters escaped as \\NNN;, above --max-unk-rate 0.1 ($T/v does not fit the text?)" ]
	run -1 --separate-stderr subword-encode -v "$T/v" --max-unk-rate 10% -o "$T/th.tfr" "$T/th.txt"
	[ ! -e "$T/th.tfr" ]
	# English: nothing escaped, nothing said
	run -0 --separate-stderr subword-encode -v "$T/v" --max-unk-rate 0.1 --output-format id "$T/c.txt"
	[ -z "$stderr" ]
	# '_' and '\\' are always escaped, and are no sign of a wrong vocabulary
	run -0 --separate-stderr subword-encode -v "$T/v" --max-unk-rate 0 --output-format id <<<'the_cat \\ sat'
	[ -z "$stderr" ]
	# a few escapes: a line, silenced by -q
	run -0 --separate-stderr subword-encode -v "$T/v" --output-format id <<<'The cat sat on the mat: 猫'
	[ "$stderr" = "subword-encode: targets: 25 characters, 4% escaped as \\NNN;" ]
	# --parallel counts each field against its own vocabulary
	head -n 2 "$T/c.txt" >"$T/p.en"
	run -1 --separate-stderr subword-encode --parallel -v "$T/v" --max-unk-rate 0.5 --output-format id "$T/p.en" "$T/th.txt"
	[ "$stderr" = "subword-encode: targets: 100% of 16 characters escaped as \\NNN;, above --max-unk-rate 0.5 ($T/v does not fit the text?)" ]
}

@test "subword-encode: a WordPiece vocabulary whose case does not fit the lower-casing is a warning" {
	printf '[PAD]\n[UNK]\nthe\ncat\n' >"$T/uncased.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/uncased.txt" --no-lower --output-format id <<<"the cat"
	[ "$stderr" = "subword-encode: warning: $T/uncased.txt: 0 of its 2 entries with cased letters have an upper-case one (an uncased vocabulary) but --no-lower keeps the text's case, so capitalised words become [UNK] or other pieces; leave out --no-lower" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/uncased.txt" --output-format id <<<"The cat"
	[ -z "$stderr" ]
	printf '[PAD]\n[UNK]\nThe\nthe\nCat\ncat\n' >"$T/cased.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/cased.txt" --output-format id <<<"the cat"
	[ "$stderr" = "subword-encode: warning: $T/cased.txt: 2 of its 4 entries with cased letters have an upper-case one (a cased vocabulary) but the text is lower-cased; give --no-lower for a cased model (do_lower_case=False), or --lower to keep this" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/cased.txt" --lower --output-format id <<<"the cat"
	[ -z "$stderr" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/cased.txt" --no-lower --output-format id <<<"The cat"
	[ -z "$stderr" ]
	# without cased letters, case does not matter
	printf '[PAD]\n[UNK]\n猫\n##狗\n1\n' >"$T/caseless.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/caseless.txt" --no-lower --output-format id <<<"猫"
	[ -z "$stderr" ]
}

@test "subword-encode: the case of a WordPiece vocabulary is what its entries are made of, not one entry" {
	# an upper-case symbol or two among lower-case words: uncased, as bert-base-uncased has ℝ and ##ℝ
	{ printf '[PAD]\n[UNK]\n'; for i in $(seq 1 300); do printf 'w%d\n' "$i"; done; printf 'ℝ\n##ℝ\n'; } >"$T/u.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/u.txt" --no-lower --output-format id <<<"w1"
	[ "$stderr" = "subword-encode: warning: $T/u.txt: 2 of its 302 entries with cased letters have an upper-case one (an uncased vocabulary) but --no-lower keeps the text's case, so capitalised words become [UNK] or other pieces; leave out --no-lower" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/u.txt" --output-format id <<<"W1"
	[ -z "$stderr" ]
	# 1% of them or more: cased
	{ cat "$T/u.txt"; printf 'Paris\nLondon\n'; } >"$T/c.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/c.txt" --output-format id <<<"w1"
	[[ "$stderr" == "subword-encode: warning: $T/c.txt: 4 of its 304 entries with cased letters have an upper-case one (a cased vocabulary)"* ]]
}

@test "subword-encode: bert-base-uncased is uncased, the same words capitalised make a cased vocabulary" {
	need_shared wordpiece-vocabs/bert-base-uncased-vocab.txt
	local u="$SHARED/wordpiece-vocabs/bert-base-uncased-vocab.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$u" --output-format id <<<"The cat"
	[ -z "$stderr" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$u" --no-lower --output-format id <<<"the cat"
	[ "$stderr" = "subword-encode: warning: $u: 2 of its 26950 entries with cased letters have an upper-case one (an uncased vocabulary) but --no-lower keeps the text's case, so capitalised words become [UNK] or other pieces; leave out --no-lower" ]
	# a thousand of its words capitalised, as a cased vocabulary has them
	awk 'NR >= 2000 && NR < 3000 && /^[a-z]/ { $0 = toupper(substr($0, 1, 1)) substr($0, 2) } 1' "$u" >"$T/cased.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/cased.txt" --output-format id <<<"the cat"
	[[ "$stderr" == "subword-encode: warning: $T/cased.txt: "*" (a cased vocabulary) but the text is lower-cased"* ]]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$T/cased.txt" --no-lower --output-format id <<<"the"
	[ -z "$stderr" ]
}

@test "subword-encode: bert-base-chinese (do_lower_case=True) is uncased" {
	need_shared wordpiece-vocabs/bert-base-chinese-vocab.txt
	local z="$SHARED/wordpiece-vocabs/bert-base-chinese-vocab.txt"
	run -0 --separate-stderr subword-encode -m wordpiece -v "$z" --output-format id <<<"猫 cat"
	[ -z "$stderr" ]
	run -0 --separate-stderr subword-encode -m wordpiece -v "$z" --no-lower --output-format id <<<"猫 cat"
	[[ "$stderr" == "subword-encode: warning: $z: 2 of its "*" (an uncased vocabulary)"* ]]
}

# part_law OUT-ARGS...: the --part K/N outputs for N = 1..7 concatenated
# equal one run's output (the inputs and options are the arguments).
part_law() {
	local n k
	subword-encode "$@" >"$T/one"
	for n in 1 2 3 4 5 6 7; do
		: >"$T/cat"
		for k in $(seq 0 $((n - 1))); do
			subword-encode --part "$k/$n" "$@" >>"$T/cat" || return 1
		done
		cmp "$T/one" "$T/cat" || { echo "N=$n differs"; return 1; }
	done
}

@test "subword-encode: --part K/N outputs concatenated are one run's (N = 1..7)" {
	{ head -c 3000 "$T/c.txt"; head -c 9000 /dev/zero | tr '\0' x; echo
	  tail -c 500 "$T/c.txt"; } >"$T/a.txt"
	: >"$T/empty.txt"
	printf 'the cat\n\n\nno newline at the end' >"$T/b.txt"
	printf '\n' >"$T/nl.txt"
	part_law -v "$T/v" "$T/a.txt" "$T/empty.txt" "$T/b.txt" "$T/nl.txt" "$T/c.txt"
	part_law -v "$T/v" --output-format id "$T/b.txt" "$T/a.txt"
	part_law -j 2 -v "$T/v" --eos "$T/a.txt" "$T/c.txt" "$T/b.txt"
	part_law -v "$T/v" "$T/empty.txt"
}

@test "subword-encode: -d --part over records, a gzip file whole, concatenates to one run" {
	subword-encode -v "$T/v" -o "$T/r1.tfr" "$T/c.txt"
	head -c 2000 "$T/c.txt" | subword-encode -v "$T/v" -o "$T/r2.tfr.gz"
	mv "$T/r2.tfr.gz" "$T/r2.tfr"
	printf '%s ' $(seq 1 3000) | subword-encode -v "$T/v" -o "$T/r3.tfr"
	part_law -d -v "$T/v" "$T/r1.tfr" "$T/r2.tfr" "$T/r3.tfr" "$T/r1.tfr"
	subword-encode -v "$T/v" --output-format id "$T/c.txt" >"$T/ids"
	part_law -d --input-format id -v "$T/v" "$T/ids"
}

@test "subword-encode: --part: a fault names the part's line and the file's offset" {
	{ head -c 4000 "$T/c.txt"; printf 'bad \377 byte\n'; head -c 4000 "$T/c.txt"
	  printf 'x\377\n'; } >"$T/bad.txt"
	run -1 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/bad.txt"
	[ "$stderr" = "subword-encode: $T/bad.txt: line 81: invalid UTF-8 at byte offset 4004" ]
	run -1 --separate-stderr subword-encode --part 0/2 -v "$T/v" --output-format id "$T/bad.txt"
	[ "$stderr" = "subword-encode: $T/bad.txt: line 81: invalid UTF-8 at byte offset 4004" ]
	# Part 1 starts after the first bad line: its line 81 is the file's 162nd.
	run -1 --separate-stderr subword-encode --part 1/2 -v "$T/v" --output-format id "$T/bad.txt"
	[ "$stderr" = "subword-encode: $T/bad.txt: line 81: invalid UTF-8 at byte offset 8012" ]
	[ "${#lines[@]}" = 80 ]
}

@test "subword-encode: --part needs regular files; bad parts are usage errors" {
	run -2 --separate-stderr subword-encode --part 0/2 -v "$T/v" <"$T/c.txt"
	[ "${stderr%%$'\n'*}" = "subword-encode: --part needs files: standard input cannot be cut into parts" ]
	run -2 --separate-stderr subword-encode --part 0/2 -v "$T/v" - <"$T/c.txt"
	run -2 --separate-stderr subword-encode --part 1/2 -v "$T/v" /dev/null
	[ "${stderr%%$'\n'*}" = "subword-encode: --part needs regular files: /dev/null is not one" ]
	run -2 --separate-stderr subword-encode --part 2/2 -v "$T/v" "$T/c.txt"
	[ "${stderr%%$'\n'*}" = "subword-encode: --part: expected K/N with 0 <= K < N, not '2/2'" ]
	run -2 --separate-stderr subword-encode --part 1 -v "$T/v" "$T/c.txt"
	run -1 --separate-stderr subword-encode --part 1/2 -v "$T/v" "$T/c.txt" "$T/nosuch"
	[ "$stderr" = "subword-encode: $T/nosuch: No such file or directory" ]
	[ -z "$output" ]
	# N = 1 is the whole input, from anywhere.
	subword-encode --part 0/1 -v "$T/v" <"$T/c.txt" >"$T/a"
	subword-encode -v "$T/v" <"$T/c.txt" >"$T/b"
	cmp "$T/a" "$T/b"
}

@test "subword-encode: -d of a 20 MB record that is one long token (no '_') writes it as it goes: memory about one copy" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	printf "'<pad>_'\n'<EOS>_'\n'a'\n'b_'\n" >"$T/va"
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 targets 2 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	/usr/bin/time -f %M -o "$T/rss" subword-encode -d -v "$T/va" "$T/big.gz" >"$T/out"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound subword-encode 50000)" ] || { echo "peak RSS $rss KB for a 20 MB record"; false; }
	[ "$(wc -c <"$T/out")" = 20000001 ]
	[ "$(tr -d a <"$T/out")" = "" ]
}

@test "subword-encode: a vocabulary of another kind than the mode reads is named, with the mode that reads it" {
	printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\n' >"$T/bert.txt"
	printf 'the 100\nof 50\n' >"$T/dict.txt"
	printf '<unk>\t0\n<s>\t0\n</s>\t0\n\342\226\201the\t-2.3\n' >"$T/m.vocab"
	printf "'<pad>_'\n'<EOS>_'\n'the_'\n'cat_'\n" >"$T/t2t.txt"
	echo "the cat" >"$T/in.txt"
	run -1 --separate-stderr subword-encode -v "$T/bert.txt" "$T/in.txt"
	[ "$stderr" = "subword-encode: $T/bert.txt: this looks like a BERT vocab.txt, not a tensor2tensor vocabulary: use -m wordpiece" ]
	run -1 --separate-stderr subword-encode -v "$T/dict.txt" "$T/in.txt"
	[[ "$stderr" == "subword-encode: $T/dict.txt: this looks like a fairseq dict.txt, not a tensor2tensor vocabulary: "* ]]
	run -1 --separate-stderr subword-encode -v "$T/m.vocab" "$T/in.txt"
	[ "$stderr" = "subword-encode: $T/m.vocab: this looks like a SentencePiece .vocab, not a tensor2tensor vocabulary: give the .model with -m spm" ]
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/t2t.txt" "$T/in.txt"
	[ "$stderr" = "subword-encode: $T/t2t.txt: this looks like a tensor2tensor vocabulary, not a BERT vocab.txt: use -m subword" ]
	run -1 --separate-stderr subword-encode -m wordpiece -v "$T/dict.txt" "$T/in.txt"
	[[ "$stderr" == "subword-encode: $T/dict.txt: this looks like a fairseq dict.txt, not a BERT vocab.txt: "* ]]
	# each in its own mode is fine
	run -0 subword-encode -q --output-format id -v "$T/t2t.txt" "$T/in.txt"
	[ "$output" = "2 3" ]
	run -0 subword-encode -q -m wordpiece --output-format id -v "$T/bert.txt" "$T/in.txt"
}
