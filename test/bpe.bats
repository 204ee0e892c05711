# subword-encode -m bpe and -m tiktoken on a tiny vocabulary made here
# (test/tools/bpe-fixture: GPT-2's encoder.json + vocab.bpe and the same
# ranks as a .tiktoken file): ids worked out by hand, both file forms
# alike, decoding, records, the options of the other modes, and the
# refusals.  The real vocabularies are in vectors-bpe.bats.
load common

setup() {
	command -v python3 >/dev/null || skip "python3 not installed"
	"$BATS_TEST_DIRNAME/tools/bpe-fixture" "$T"
	E="$T/encoder.json" M="$T/vocab.bpe" K="$T/tiny.tiktoken"
}

bpe() { subword-encode -m bpe -v "$E" --merges "$M" "$@"; }
tik() { subword-encode -m tiktoken -v "$K" --encoding gpt2 "$@"; }

@test "bpe: ids by the lowest-ranked pair first, pieces as encoder.json spells them" {
	# "the": t h e -> t he (257); " cat": ca (259) then cat (260);
	# " the": " t" (256) before "he" (257), then " the" (258).
	printf 'the cat\na the\n' >"$T/in"
	run -0 bpe --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 220 260" ]
	[ "${lines[1]}" = "64 258" ]
	run -0 bpe --output-format piece "$T/in"
	[ "${lines[0]}" = "t he Ġ cat" ]
	[ "${lines[1]}" = "a Ġthe" ]
}

@test "bpe: GPT-2's files and the .tiktoken file of the same ranks give the same ids" {
	printf 'the cat\n  the  cat \n\n\ttab\r\ncaf\xc3\xa9 12345 it'"'"'s IT'"'"'S\n' >"$T/in"
	bpe -q --output-format id "$T/in" >"$T/a"
	tik -q --output-format id "$T/in" >"$T/b"
	cmp "$T/a" "$T/b"
	[ "$(wc -l <"$T/a")" -eq 5 ]
}

@test "bpe: the pattern splits before merging: a run of spaces leaves its last one" {
	# "a   the": "a", "  " (two spaces, 220 220), " the" (258).
	printf 'a   the\nthe   \n' >"$T/in"
	run -0 bpe --output-format id "$T/in"
	[ "${lines[0]}" = "64 220 220 258" ]
	[ "${lines[1]}" = "83 257 220 220 220" ]
}

@test "bpe: lines split at \\n only, nothing stripped, an empty line an empty line" {
	printf '\n the\r\n\nlast' >"$T/in"
	# "\r" is byte 13, rank 201; "last" has no merges
	bpe --output-format id "$T/in" >"$T/out"
	printf '\n258 201\n\n75 64 82 83\n' | cmp - "$T/out"
}

@test "bpe: -d writes each id's bytes as they are, newlines and half characters too" {
	printf 'the cat\n caf\xc3\xa9\n\n' >"$T/in"
	bpe --output-format id "$T/in" >"$T/ids"
	bpe -d --input-format id "$T/ids" >"$T/back"
	cmp "$T/in" "$T/back"
	# 198 is "\n" (byte 10), 94 is byte 0xa1: both go out raw
	printf '83 198 257\n94\n' >"$T/ids2"
	bpe -d --input-format id "$T/ids2" >"$T/raw"
	printf 't\nhe\n\xa1\n' | cmp - "$T/raw"
}

@test "bpe: records hold the ids in targets; -d of the records gives the text" {
	printf 'the cat\na the\n' >"$T/in"
	bpe -o "$T/r.tfr" "$T/in"
	run -0 tfr-cat --flat "$T/r.tfr"
	[[ "${lines[0]}" == *'"targets":[83,257,220,260]'* ]]
	[[ "${lines[1]}" == *'"targets":[64,258]'* ]]
	bpe -d "$T/r.tfr" | cmp - "$T/in"
}

@test "bpe: --eos appends <|endoftext|>; an empty line gets it alone" {
	printf 'the\n\n' >"$T/in"
	run -0 bpe --eos --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 261" ]
	[ "${lines[1]}" = "261" ]
	run -0 tik --eos --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 50256" ]
	run -0 bpe --eos=7 --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 7" ]
	run -0 bpe --eos '<|endoftext|>' --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 261" ]
	run -0 bpe --eos='<|endoftext|>' --output-format id "$T/in"
	[ "${lines[0]}" = "83 257 261" ]
	run -1 --separate-stderr bpe --eos '<|nothing|>' --output-format id "$T/in"
	[[ "$stderr" == *"no token '<|nothing|>'"* ]]
}

@test "bpe: special-token texts are text unless --allowed-special all" {
	printf 'the<|endoftext|>the\n' >"$T/in"
	run -0 bpe --output-format id "$T/in"
	[[ "$output" != *261* ]]
	run -0 bpe --allowed-special all --output-format id "$T/in"
	[ "$output" = "83 257 261 83 257" ]
	run -0 tik --allowed-special all --output-format id "$T/in"
	[ "$output" = "83 257 50256 83 257" ]
	run -0 bpe --allowed-special none --output-format id "$T/in"
	[[ "$output" != *261* ]]
}

@test "bpe: jsonl documents as Megatron's preprocess_data.py, an empty one skipped" {
	printf '{"text":"the cat"}\n{"text":""}\n{"text":"a the"}\n' >"$T/in.jsonl"
	bpe --eos --input-format jsonl "$T/in.jsonl" | mmap-index build -q \
	    --format megatron -o "$T/ds"
	run -0 mmap-index cat "$T/ds"
	[ "${lines[0]}" = '{"targets":[83,257,220,260,261]}' ]
	[ "${lines[1]}" = '{"targets":[64,258,261]}' ]
	[ "${#lines[@]}" -eq 2 ]
	# the empty document is in the document index, as add_document([]) puts it
	run -0 mmap-index info "$T/ds"
	[[ "$output" == *"documents:  3"* ]]
}

@test "bpe: -j and --part give the bytes of one process" {
	local i
	for i in $(seq 1 3000); do printf 'the cat %d sat on the mat, caf\xc3\xa9 the\n' "$i"; done >"$T/big"
	bpe --output-format id -j 1 "$T/big" >"$T/one"
	bpe --output-format id -j 2 "$T/big" >"$T/two"
	cmp "$T/one" "$T/two"
	for i in 0 1 2; do bpe --output-format id --part $i/3 "$T/big"; done >"$T/parts"
	cmp "$T/one" "$T/parts"
	tik -j 2 -o "$T/b.tfr" "$T/big"
	bpe -j 1 -o "$T/a.tfr" "$T/big"
	cmp "$T/a.tfr" "$T/b.tfr"
}

@test "bpe: a line that is not UTF-8 is an error naming its line" {
	printf 'the\ncat\nbad \xff line\n' >"$T/in"
	run -1 --separate-stderr bpe --output-format id "$T/in"
	[[ "$stderr" == *"line 3"* ]]
	[[ "$stderr" == *"UTF-8"* ]]
	[ "$(printf '%s\n' "$output" | wc -l)" -le 3 ]
	run -1 --separate-stderr bpe -j 2 --output-format id "$T/in"
	[[ "$stderr" == *"line 3"* ]]
}

@test "bpe: -d refuses an id the vocabulary lacks, naming the line" {
	printf '83\n262\n' >"$T/ids"
	run -1 --separate-stderr bpe -d --input-format id "$T/ids"
	[[ "$stderr" == *"line 2"* && "$stderr" == *"262"* ]]
	# an id that is 100 after wrapping to 32 bits
	printf '4294967396\n' >"$T/ids"
	run -1 --separate-stderr tik -d --input-format id "$T/ids"
	[[ "$stderr" == *"line 1"* ]]
	printf '%s\n' -1 >"$T/ids"
	run -1 --separate-stderr tik -d --input-format id "$T/ids"
}

@test "bpe: --encoding from the rank file's name, or asked for" {
	printf 'the cat\n' >"$T/in"
	cp "$K" "$T/gpt2.tiktoken"
	run -0 subword-encode -m tiktoken -v "$T/gpt2.tiktoken" --output-format id "$T/in"
	[ "$output" = "83 257 220 260" ]
	run -2 --separate-stderr subword-encode -m tiktoken -v "$K" --output-format id "$T/in"
	[[ "$stderr" == *"--encoding"* ]]
	run -2 --separate-stderr subword-encode -m tiktoken -v "$K" --encoding cl99k "$T/in"
	[[ "$stderr" == *"unknown encoding: cl99k"* ]]
}

@test "bpe: usage errors exit 2" {
	printf 'the\n' >"$T/in"
	run -2 --separate-stderr subword-encode -m bpe -v "$E" "$T/in"
	[[ "$stderr" == *"--merges"* ]]
	run -2 --separate-stderr tik --merges "$M" "$T/in"
	[[ "$stderr" == *"--merges applies to -m bpe"* ]]
	run -2 --separate-stderr bpe --encoding cl100k_base "$T/in"
	run -2 --separate-stderr bpe --allowed-special some "$T/in"
	run -2 --separate-stderr subword-encode -v "$E" --allowed-special all "$T/in"
	run -2 --separate-stderr bpe --max-unk-rate 0.1 "$T/in"
	run -2 --separate-stderr bpe -d --input-format piece "$T/in"
}

@test "bpe: a wrong or damaged vocabulary is one line naming the file, exit 1" {
	printf 'the\n' >"$T/in"
	run -1 --separate-stderr subword-encode -m tiktoken -v "$E" --encoding gpt2 "$T/in"
	[[ "$stderr" == *"encoder.json"* && "$stderr" == *"-m bpe"* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	# a merge line that makes another rank than encoder.json says
	sed '3s/.*/h t/' "$M" >"$T/bad.bpe"
	run -1 --separate-stderr subword-encode -m bpe -v "$E" --merges "$T/bad.bpe" "$T/in"
	[[ "$stderr" == *"bad.bpe"* ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	printf 'dGhl 0\nnot base64! 1\n' >"$T/bad.tiktoken"
	run -1 --separate-stderr subword-encode -m tiktoken --encoding gpt2 -v "$T/bad.tiktoken" "$T/in"
	[[ "$stderr" == *"bad.tiktoken"* && "$stderr" == *"line 2"* ]]
	[ -z "$output" ]
}
