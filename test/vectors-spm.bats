# Every case of ../shared/vectors/spm/manifest.json (made by spm_encode
# and spm_decode 0.1.97, seqio's extra ids applied to the model) through
# subword-encode -m spm, compared byte for byte by the suite's own
# run_cases.py.  Skipped when ../shared is absent.
load common

setup() {
	need_shared vectors/spm/manifest.json
	D="$VEC/spm"
	command -v python3 >/dev/null || skip "python3 not installed"
}

@test "vectors-spm: every encode case gives spm_encode's ids and pieces" {
	run_group encode
}

@test "vectors-spm: every decode case gives spm_decode's text" {
	run_group decode
}

@test "vectors-spm: every seqio case gives SentencePieceVocabulary's ids" {
	run_group seqio
}

@test "vectors-spm: every records case holds the ids in targets" {
	run_group records
}

@test "vectors-spm: the manifest's cases all ran, none skipped" {
	local n
	n=$(jq '.cases | length' "$D/manifest.json")
	run -0 python3 "$D/run_cases.py" --tfr-cat "$RECPIPE_BIN/tfr-cat" \
	    "$RECPIPE_BIN/subword-encode"
	[[ "$output" == *"$n/$n "* ]]
}
