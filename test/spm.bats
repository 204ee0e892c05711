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

# The README's T5/seqio recipe: text made into span-corruption pairs as
# T5 writes them, encoded with a T5-layout model (pad 0, eos 1, unk 2, no
# bos: the shared vectors' uni_pad, else one trained here) and seqio's 100
# sentinels, packed by pack-encdec and dealt into TFRecord shards.
@test "spm: T5 layout, seqio's sentinels and EOS, packed by pack-encdec into shards" {
	local m n k
	if [ -e "$VEC/spm/models/uni_pad.model" ]; then
		m=$VEC/spm/models/uni_pad.model n=4000
	elif command -v spm_train >/dev/null; then
		spm_train --input="$T/c.txt" --model_prefix="$T/t5" --vocab_size=60 --pad_id=0 \
		    --eos_id=1 --unk_id=2 --bos_id=-1 --minloglevel=2 >/dev/null 2>&1
		m=$T/t5.model n=60
	else
		skip "neither spm_train nor ../shared/vectors/spm"
	fi
	# words 3 and 4 of each line dropped for <extra_id_0>, the last word
	# for <extra_id_1>; the targets are the spans after their sentinels
	awk '{ printf "%s %s <extra_id_0>", $1, $2; for (i = 5; i < NF; i++) printf " %s", $i
	    printf " <extra_id_1>\t<extra_id_0> %s %s <extra_id_1> %s <extra_id_2>\n", $3, $4, $NF }' \
	    "$T/c.txt" >"$T/pairs.tsv"
	printf 'x <extra_id_99> y\tz\n' >>"$T/pairs.tsv"
	run -0 --separate-stderr subword-encode -m spm -v "$m" --extra-ids 100 --eos \
	    --fields inputs,targets -o "$T/t5.tfr" "$T/pairs.tsv"
	tfr-cat --flat "$T/t5.tfr" >"$T/t5.jsonl"
	[ "$(wc -l <"$T/t5.jsonl")" -eq 401 ]
	# <extra_id_K> is id n + 99 - K; </s> (1) ends both features
	[ "$(jq -c '[.inputs[-1], .targets[-1]]' "$T/t5.jsonl" | sort -u)" = "[1,1]" ]
	[ "$(head -1 "$T/t5.jsonl" | jq -c '.targets | map(select(. >= '$n'))')" = "[$((n + 99)),$((n + 98)),$((n + 97))]" ]
	[ "$(tail -1 "$T/t5.jsonl" | jq -c '.inputs | map(select(. >= '$n'))')" = "[$n]" ]
	# around the sentinels, the ids are spm_encode's on the model itself
	if command -v spm_encode >/dev/null; then
		k=$(printf 'The cat\nsat on the mat; the dog ran after\n' |
		    spm_encode --model="$m" --output_format=id | tr ' ' ,)
		[ "$(head -1 "$T/t5.jsonl" | jq -c .inputs)" = \
		    "[${k%%$'\n'*},$((n + 99)),${k#*$'\n'},$((n + 98)),1]" ]
	fi
	# packed as seqio's EncDecFeatureConverter packs them, then dealt
	# round-robin into four shards
	mkdir "$T/t5"
	pack-encdec -C encdec -l inputs=64,targets=32 "$T/t5.tfr" >"$T/packed.tfr"
	pack-encdec -C encdec -l inputs=64,targets=32 "$T/t5.tfr" |
	    tfr-cat -R --split 4 -o "$T/t5/train.tfrecord-%05d-of-%05d"
	for k in 0 1 2 3; do
		tfr-cat -R --shard "$k/4" "$T/packed.tfr" | cmp - "$T/t5/train.tfrecord-0000$k-of-00004"
	done
	[ "$(ls "$T/t5" | wc -l)" -eq 4 ]
	# every token is there once, in order: the non-pad tokens of the rows
	# are the examples' inputs and targets one after the other
	tfr-cat --flat "$T/packed.tfr" >"$T/packed.jsonl"
	[ "$(jq -c '.encoder_input_tokens[] | select(. != 0)' "$T/packed.jsonl" | tr '\n' ' ')" = \
	    "$(jq -c '.inputs[]' "$T/t5.jsonl" | tr '\n' ' ')" ]
	[ "$(jq -c '.decoder_target_tokens[] | select(. != 0)' "$T/packed.jsonl" | tr '\n' ' ')" = \
	    "$(jq -c '.targets[]' "$T/t5.jsonl" | tr '\n' ' ')" ]
	[ "$(jq -c '.encoder_segment_ids | max' "$T/packed.jsonl" | sort -n | tail -1)" -gt 1 ]
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

@test "spm: --allowed-special megatron encodes between Megatron's specials" {
	need_oracle
	local n enc
	# The model's pieces: the specials it lacks come after them.
	n=$(spm_export_vocab --model="$U" | wc -l)
	enc() { printf '%s\n' "$1" | spm_encode --model="$U" --output_format=id; }
	printf 'the cat <s>sat</s> on<CLS>the mat<EOD>\n<<s>>x<MASK><PAD><SEP>\nno specials here\n' >"$T/in"
	{
		echo "$(enc 'the cat ') 1 $(enc 'sat') 2 $(enc ' on') $n $(enc 'the mat') $((n + 2)) $((n + 2))"
		echo "$(enc '<') 1 $(enc '>x') $((n + 3)) $((n + 4)) $((n + 1)) $((n + 2))"
		echo "$(enc 'no specials here') $((n + 2))"
	} | tr -s ' ' | sed 's/^ //; s/ $//' >"$T/want"
	subword-encode -m spm -v "$U" --allowed-special megatron --eos '<EOD>' \
	    --output-format id "$T/in" >"$T/got"
	diff "$T/want" "$T/got"
	# Pieces: a special is its own text.
	run -0 subword-encode -m spm -v "$U" --allowed-special megatron \
	    --eos '<EOD>' --output-format piece "$T/in"
	[[ ${lines[0]} == *' <s> '*' </s> '*'<CLS>'*' <EOD> <EOD>' ]]
	# Without it the texts are ordinary text, as spm_encode takes them.
	spm_encode --model="$U" --output_format=id <"$T/in" >"$T/want"
	subword-encode -m spm -v "$U" --output-format id "$T/in" >"$T/got"
	cmp "$T/want" "$T/got"
	# JSON lines: the pieces of specials past the model are their texts.
	printf '{"text": "the <s>cat<EOD>"}\n' >"$T/d.jsonl"
	run -0 subword-encode -m spm -v "$U" --allowed-special megatron --eos '<EOD>' \
	    --input-format jsonl --output-format piece "$T/d.jsonl"
	[[ ${lines[0]} == *' <s> '*' <EOD> <EOD>' ]]
	# -j 2 gives the same ids.
	subword-encode -m spm -v "$U" --allowed-special megatron --eos '<EOD>' \
	    -j 2 --output-format id "$T/in" >"$T/got2"
	subword-encode -m spm -v "$U" --allowed-special megatron --eos '<EOD>' \
	    --output-format id "$T/in" >"$T/got"
	cmp "$T/got" "$T/got2"
}

@test "spm: --allowed-special megatron: where it applies" {
	need_models
	run -2 subword-encode -m spm -v "$U" --allowed-special megatron -d "$T/c.txt"
	[[ $output == *'--allowed-special megatron applies to encoding'* ]]
	run -2 subword-encode -m spm -v "$U" --allowed-special megatron --extra-ids 3 "$T/c.txt"
	[[ $output == *'without --extra-ids'* ]]
	run -2 subword-encode -v "$T/c.txt" --allowed-special megatron "$T/c.txt"
	[[ $output == *'applies to -m spm'* ]]
	run -2 subword-encode -m spm -v "$U" --allowed-special all "$T/c.txt"
	[[ $output == *'--allowed-special all apply to -m bpe'* ]]
	run -2 subword-encode -m spm -v "$U" --allowed-special some "$T/c.txt"
	[[ $output == *'all, none or megatron'* ]]
}
