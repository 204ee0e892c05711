#!/usr/bin/env bats
# The TFRecord vectors made by the upstream code, and the real files
# beside them (both skipped when ../shared is absent).

load common

@test "tfrecord vectors: every case of the manifest" {
	need_shared vectors/tfrecord/manifest.json
	run python3 "$BATS_TEST_DIRNAME/vectors/tfrecord.py" "$RECPIPE_BIN/tfr-cat" "$VEC/tfrecord/manifest.json"
	echo "$output"
	[ "$status" = 0 ]
	[[ "${lines[-1]}" == *" passed, 0 failed" ]]
}

@test "tfrecord samples: every real file verifies with the stated record count" {
	need_shared tfrecord-samples/README.md
	local f n want
	while read -r f want; do
		run -0 --separate-stderr tfr-cat -q --type raw --verify "$SHARED/tfrecord-samples/$f"
		run -0 tfr-cat -c "$SHARED/tfrecord-samples/$f"
		[ "$output" = "$want" ] || { echo "$f: $output records, want $want"; false; }
	done <<-'LIST'
	pwnall_singles.tfrecords 3
	pwnall_data.tfrecord 1
	jongwook_test.tfrecord 42
	jongwook_images.tfrecord 2
	magenta_tfrecord_iterator_test.tfrecord 3
	magenta_notesequences.tfrecord 46
	tfx_penguin_eval.tfrecord.gz 100
	tfx_sequence_eval.tfrecord.gz 4500
	LIST
}

@test "tfrecord samples: Examples decode, and JSON goes back to the same records" {
	need_shared tfrecord-samples/README.md
	local f
	for f in pwnall_singles.tfrecords pwnall_data.tfrecord jongwook_test.tfrecord \
	    jongwook_images.tfrecord tfx_penguin_eval.tfrecord.gz; do
		tfr-cat "$SHARED/tfrecord-samples/$f" >"$T/j"
		tfr-cat -R --from-json "$T/j" | tfr-cat >"$T/k"
		cmp "$T/j" "$T/k"
		tfr-cat --flat "$SHARED/tfrecord-samples/$f" | tfr-cat -R --from-json | tfr-cat >"$T/k"
		cmp "$T/j" "$T/k"
	done
}

@test "tfrecord samples: the TFX SequenceExample file with kind-less context features" {
	need_shared tfrecord-samples/tfx_sequence_eval.tfrecord.gz
	run -0 --separate-stderr tfr-cat -n 1 "$SHARED/tfrecord-samples/tfx_sequence_eval.tfrecord.gz"
	[[ "$output" == '{"context":{"feature":{'* ]]
	[[ "$output" == *':{}'* ]]
	tfr-cat "$SHARED/tfrecord-samples/tfx_sequence_eval.tfrecord.gz" >"$T/j"
	tfr-cat -R --from-json "$T/j" | tfr-cat >"$T/k"
	cmp "$T/j" "$T/k"
}
