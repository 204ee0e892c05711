# subword-encode -m spm: against Debian's spm_encode/spm_decode when
# installed (models trained here with spm_train), records, the options
# of the other modes, and the refusals: a bad model is one line naming
# the file, exit 1, before any output.
load common

setup() {
	local i
	for i in $(seq 1 200); do
		printf 'The cat number %d sat on the mat; the dog ran after it.\n' "$i"
		printf 'A bird sang: "la la la", and the end came.\n'
	done >"$T/c.txt"
	printf 'Hello  world\n\n  spaced\tout \r\ncaf\xc3\xa9 \xef\xbc\xa1\xe3\x80\x80\xef\xac\x81\n\xff\xfe bad\nlast line' >"$T/odd.txt"
}

# $U (unigram) and $B (BPE with byte fallback) models: trained here with
# spm_train, or the shared vectors' models; skip when neither exists.
need_models() {
	if command -v spm_train >/dev/null; then
		spm_train --input="$T/c.txt" --model_prefix="$T/u" --vocab_size=60 \
		    --minloglevel=2 >/dev/null 2>&1
		spm_train --input="$T/c.txt" --model_prefix="$T/b" --model_type=bpe \
		    --vocab_size=300 --byte_fallback --minloglevel=2 >/dev/null 2>&1
		U="$T/u.model" B="$T/b.model"
	elif [ -e "$VEC/spm/models/uni.model" ]; then
		U="$VEC/spm/models/uni.model" B="$VEC/spm/models/bpe_bf.model"
	else
		skip "neither spm_train nor ../shared/vectors/spm"
	fi
}

need_oracle() {
	command -v spm_encode >/dev/null || skip "spm_encode not installed"
	need_models
}

@test "spm: ids and pieces are spm_encode's, on odd lines too" {
	need_oracle
	local m f
	for m in "$U" "$B"; do
		for f in id piece; do
			spm_encode --model="$m" --output_format=$f <"$T/odd.txt" >"$T/want"
			run -0 subword-encode -m spm -v "$m" --output-format $f "$T/odd.txt"
			subword-encode -m spm -v "$m" --output-format $f "$T/odd.txt" >"$T/got"
			cmp "$T/want" "$T/got"
		done
	done
}

@test "spm: --extra-options as spm_encode's --extra_options" {
	need_oracle
	local x
	for x in bos:eos reverse:bos eos:eos:unk bos: unk_piece; do
		spm_encode --model="$U" --output_format=piece --extra_options=$x <"$T/odd.txt" >"$T/want"
		subword-encode -m sentencepiece -v "$U" --output-format piece \
		    --extra-options $x "$T/odd.txt" >"$T/got"
		cmp "$T/want" "$T/got"
	done
}

@test "spm: decoding ids and pieces is spm_decode's" {
	need_oracle
	local f
	for f in id piece; do
		spm_encode --model="$B" --output_format=$f <"$T/odd.txt" >"$T/enc"
		spm_decode --model="$B" --input_format=$f <"$T/enc" >"$T/want"
		subword-encode -d -m spm -v "$B" --input-format $f "$T/enc" >"$T/got"
		cmp "$T/want" "$T/got"
	done
	printf '+5 007 5\r 12abc abc 0x10\n\n   \n' >"$T/q"
	spm_decode --model="$U" --input_format=id <"$T/q" >"$T/want"
	subword-encode -d -m spm -v "$U" --input-format id "$T/q" >"$T/got"
	cmp "$T/want" "$T/got"
}

@test "spm: an id out of range fails after the lines before it" {
	need_models
	printf '5 6\n99999\n7\n' >"$T/q"
	run -1 --separate-stderr subword-encode -d -m spm -v "$U" --input-format id "$T/q"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$stderr" == *"q: line 2: Invalid id: 99999"* ]]
}

@test "spm: records hold the ids in targets; --eos appends </s>; -d reads them back" {
	need_models
	subword-encode -m spm -v "$U" --output-format id "$T/c.txt" >"$T/ids"
	run -0 subword-encode -m spm -v "$U" -o "$T/r.tfr" "$T/c.txt"
	run -0 tfr-cat --flat "$T/r.tfr"
	[ "${#lines[@]}" -eq 400 ]
	subword-encode -m spm -v "$U" --eos -o "$T/e.tfr" "$T/c.txt"
	run -0 tfr-cat --flat "$T/e.tfr"
	[[ "${lines[0]}" == *",2]}" ]]
	run -0 subword-encode -d -m spm -v "$U" "$T/r.tfr"
	[ "${lines[0]}" = "The cat number 1 sat on the mat; the dog ran after it." ]
}

@test "spm: -j 2 and --part give the -j 1 output" {
	need_models
	local i
	for i in $(seq 1 30); do cat "$T/c.txt"; done >"$T/big.txt"
	subword-encode -m spm -j 1 -v "$B" --output-format id "$T/big.txt" >"$T/one"
	subword-encode -m spm -j 2 -v "$B" --output-format id "$T/big.txt" >"$T/two"
	cmp "$T/one" "$T/two"
	subword-encode -m spm -v "$B" --output-format id --part 0/2 "$T/big.txt" >"$T/p1"
	subword-encode -m spm -v "$B" --output-format id --part 1/2 "$T/big.txt" >"$T/p2"
	cat "$T/p1" "$T/p2" | cmp - "$T/one"
}

@test "spm: --extra-ids adds seqio's sentinels, <extra_id_0> the highest id" {
	need_models
	local n
	n=$(subword-encode -m spm -v "$U" --extra-ids 3 --output-format id <<<"<extra_id_0>" | tr ' ' '\n' | sort -n | tail -1)
	run -0 subword-encode -m spm -v "$U" --extra-ids 3 --output-format piece <<<"a <extra_id_2> b"
	[[ "$output" == *"$(printf '\342\226\201')<extra_id_2>"* ]]
	[ "$n" -ge 60 ]
}

@test "spm: jsonl documents with --json-keys and --eos" {
	need_models
	printf '{"text": "The cat sat."}\n{"text": "A bird sang."}\n' >"$T/d.jsonl"
	run -0 subword-encode -m spm -v "$U" --input-format jsonl --json-keys text --eos --output-format id "$T/d.jsonl"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *" 2" ]]
}

@test "spm: --max-unk-rate fails when the model does not fit the text" {
	need_models
	printf '\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97 \xe4\xb8\xad\n' >"$T/zh.txt"
	run -1 --separate-stderr subword-encode -m spm -v "$U" --max-unk-rate 0.1 --output-format id "$T/zh.txt"
	[[ "$stderr" == *"above --max-unk-rate"* ]]
}

@test "spm: bad extra options fail before any output" {
	need_models
	run -1 --separate-stderr subword-encode -m spm -v "$U" --extra-options bos:foo --output-format id "$T/c.txt"
	[ -z "$output" ]
	[[ "$stderr" == *"u.model: --extra-options bos:foo: option \"foo\" is not available"* || "$stderr" == *"option \"foo\" is not available"* ]]
}

@test "spm: a truncated or corrupt model is one line naming the file, exit 1" {
	need_models
	head -c 1000 "$U" >"$T/cut.model"
	run -1 --separate-stderr subword-encode -m spm -v "$T/cut.model" --output-format id "$T/c.txt"
	[ -z "$output" ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == "subword-encode: cut.model: "* || "$stderr" == *"/cut.model: "* ]]
	printf 'not a model\n' >"$T/x.model"
	run -1 --separate-stderr subword-encode -m spm -v "$T/x.model" --output-format id "$T/c.txt"
	[[ "$stderr" == *"x.model: "* ]]
}

@test "spm: text vocabularies given with -m spm are named" {
	printf "'the_'\n'cat_'\n'<EOS>_'\n" >"$T/t2t.vocab"
	run -1 --separate-stderr subword-encode -m spm -v "$T/t2t.vocab" --output-format id "$T/c.txt"
	[[ "$stderr" == *"tensor2tensor vocabulary"* ]]
	printf '[PAD]\n[UNK]\nthe\n##s\n' >"$T/vocab.txt"
	run -1 --separate-stderr subword-encode -m spm -v "$T/vocab.txt" --output-format id "$T/c.txt"
	[[ "$stderr" == *"BERT vocab.txt"* ]]
	printf 'the 100\ncat 50\n' >"$T/dict.txt"
	run -1 --separate-stderr subword-encode -m spm -v "$T/dict.txt" --output-format id "$T/c.txt"
	[[ "$stderr" == *"fairseq dict.txt"* ]]
}

@test "spm: a .model given to another mode says use -m spm" {
	need_models
	run -1 --separate-stderr subword-encode -v "$U" --output-format id "$T/c.txt"
	[[ "$stderr" == *"this is a SentencePiece model: use -m spm"* ]]
	run -1 --separate-stderr subword-encode -m wordpiece -v "$U" --output-format id "$T/c.txt"
	[[ "$stderr" == *"this is a SentencePiece model: use -m spm"* ]]
}

@test "spm: usage errors" {
	run -2 --separate-stderr subword-encode -v x --extra-ids 3 "$T/c.txt"
	[[ "$stderr" == *"apply to -m spm"* ]]
	run -2 --separate-stderr subword-encode -d -v x --input-format piece "$T/c.txt"
	[[ "$stderr" == *"piece applies to -d -m spm"* ]]
}

@test "spm: T5 layout, seqio's sentinels and EOS, then packed by pack-encdec" {
	need_shared vectors/spm/models/uni_pad.model
	local m="$VEC/spm/models/uni_pad.model"
	paste "$T/c.txt" "$T/c.txt" | head -20 >"$T/pairs.tsv"
	run -0 subword-encode -m spm -v "$m" --extra-ids 100 --eos \
	    --fields inputs,targets -o "$T/t5.tfr" "$T/pairs.tsv"
	run -0 tfr-cat --flat "$T/t5.tfr"
	[ "${#lines[@]}" -eq 20 ]
	[[ "${lines[0]}" == *",1],"* ]]
	run -0 pack-encdec -C encdec -l inputs=64,targets=64 -o "$T/t5p.tfr" "$T/t5.tfr"
	run -0 tfr-cat --flat "$T/t5p.tfr"
	[[ "${lines[0]}" == *'"encoder_input_tokens"'* ]]
}

@test "spm: --parallel files are read as spm_encode reads lines" {
	need_models
	printf 'a\r\nb \xff\n' >"$T/src"
	printf 'x\ny\n' >"$T/tgt"
	run -0 subword-encode -m spm -v "$U" --parallel -o "$T/par.tfr" "$T/src" "$T/tgt"
	subword-encode -m spm -v "$U" --output-format id "$T/src" >"$T/ids"
	run -0 tfr-cat --flat "$T/par.tfr"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *"\"inputs\":[$(head -1 "$T/ids" | tr ' ' ',')]"* ]]
}
