# Every case of ../shared/vectors/bpe/manifest.json (made by tiktoken and
# GPT-2's encoder.py, which agreed on every line) through subword-encode
# -m bpe and -m tiktoken, compared byte for byte by the suite's own
# run_cases.py.  Skipped when ../shared is absent.
load common

setup() {
	need_shared vectors/bpe/manifest.json
	D="$VEC/bpe"
	command -v python3 >/dev/null || skip "python3 not installed"
}

@test "vectors-bpe: every encode case gives tiktoken's and encoder.py's ids" {
	run_group encode
}

@test "vectors-bpe: every piece case gives encoder.py's bpe() pieces" {
	run_group piece
}

@test "vectors-bpe: every special case gives encode(allowed_special=all)" {
	run_group special
}

@test "vectors-bpe: every decode case gives decode_bytes()" {
	run_group decode
}

@test "vectors-bpe: every records case holds the ids in targets" {
	run_group records
}

@test "vectors-bpe: the manifest's cases all ran, none skipped" {
	local n
	n=$(jq '.cases | length' "$D/manifest.json")
	run -0 python3 "$D/run_cases.py" --tfr-cat "$RECPIPE_BIN/tfr-cat" \
	    "$RECPIPE_BIN/subword-encode"
	[[ "$output" == *"$n/$n "* ]]
}
