# Every case of ../shared/vectors/binarize/manifest.json: files written by
# the real fairseq-preprocess and Megatron-LM preprocess_data.py.  Our
# tools on the same input must write the same bytes.
load common

M="$VEC/binarize/manifest.json"

setup() {
	need_shared vectors/binarize/manifest.json
	D=$(dirname "$M")
}

# sha256 of file $1 equals $2
same_sha() {
	local got
	got=$(sha256sum <"$1" | cut -d' ' -f1)
	if [ "$got" != "$2" ]; then
		echo "$1: sha256 $got, expected $2"
		return 1
	fi
}

# fairseq-preprocess's dictionary: run case number $1
run_fairseq_dict() {
	local c=$1 args inputs
	mapfile -t args < <(jq -r ".cases[$c].args[]" "$M")
	mapfile -t inputs < <(jq -r ".cases[$c].inputs[] | \"$D/\" + ." "$M")
	mmap-index dict -q -o "$T/dict.txt" "${args[@]}" "${inputs[@]}"
	same_sha "$T/dict.txt" "$(jq -r ".cases[$c].expected[\"dict.txt\"]" "$M")"
}

# fairseq-preprocess --srcdict: the .bin/.idx it writes
run_fairseq_build() {
	local c=$1 inputs f
	mapfile -t inputs < <(jq -r ".cases[$c].inputs[] | \"$D/\" + ." "$M")
	mmap-index build -q --input-format text --dict "$D/$(jq -r ".cases[$c].dict" "$M")" \
	    -o "$T/out" "${inputs[@]}"
	for f in $(jq -r ".cases[$c].expected | keys[]" "$M"); do
		same_sha "$T/out.${f##*.}" "$(jq -r ".cases[$c].expected[\"$f\"]" "$M")"
	done
}

# Megatron-LM preprocess_data.py with its BERT tokenizer and --append-eod:
# one pipeline per key, PREFIX_KEY_document
run_megatron() {
	local c=$1 up vocab lower eod key f
	up=$(jq -r ".cases[$c].upstream" "$M")
	vocab="$D/$(jq -r ".cases[$c].vocab" "$M")"
	[ -e "$vocab" ] || skip "$vocab not present"
	case $up in
	*BertWordPieceLowerCase*)	lower=--lower ;;
	*BertWordPieceCase*)		lower=--no-lower ;;
	*)	echo "case $c: tokenizer not handled: $up"; return 1 ;;
	esac
	eod=$(jq -r ".cases[$c].append_eod_id // empty" "$M")
	[[ $up == *--append-eod* ]]
	for key in $(jq -r ".cases[$c].json_keys[]" "$M"); do
		# --eos alone is Megatron's [EOS]; the manifest names its id
		subword-encode -m wordpiece $lower -v "$vocab" --input-format jsonl \
		    --json-keys "$key" --eos "$D/$(jq -r ".cases[$c].inputs[0]" "$M")" |
		    mmap-index build -q --format megatron -o "$T/mg_${key}_document"
		[ -z "$eod" ] || subword-encode -m wordpiece $lower -v "$vocab" --input-format jsonl \
		    --json-keys "$key" --eos "$eod" --output-format id \
		    "$D/$(jq -r ".cases[$c].inputs[0]" "$M")" | grep -q " $eod\$"
	done
	for f in $(jq -r ".cases[$c].expected | keys[]" "$M"); do
		same_sha "$T/$f" "$(jq -r ".cases[$c].expected[\"$f\"]" "$M")"
	done
}

run_case() {
	local c=$1 kind
	kind=$(jq -r ".cases[$c].kind" "$M")
	case $kind in
	fairseq-dict)	run_fairseq_dict "$c" ;;
	fairseq-build)	run_fairseq_build "$c" ;;
	megatron)	run_megatron "$c" ;;
	*)		echo "case $c: kind '$kind' not handled"; return 1 ;;
	esac
}

@test "vectors/binarize: every fairseq case of the manifest" {
	local n c ran=0
	n=$(jq '.cases | length' "$M")
	for ((c = 0; c < n; c++)); do
		case $(jq -r ".cases[$c].kind" "$M") in
		fairseq*) run_case "$c"; ran=$((ran + 1)) ;;
		esac
	done
	[ "$ran" -ge 2 ]
}

@test "vectors/binarize: every Megatron case of the manifest, through subword-encode | mmap-index build" {
	local n c ran=0
	n=$(jq '.cases | length' "$M")
	for ((c = 0; c < n; c++)); do
		case $(jq -r ".cases[$c].kind" "$M") in
		megatron) run_case "$c"; ran=$((ran + 1)) ;;
		esac
	done
	[ "$ran" -ge 1 ]
}

@test "vectors/binarize: no case of an unknown kind" {
	run -0 jq -r '.cases[].kind' "$M"
	for k in "${lines[@]}"; do
		[[ $k == fairseq-dict || $k == fairseq-build || $k == megatron ]]
	done
}
