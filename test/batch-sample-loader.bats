#!/usr/bin/env bats
# batch-sample loader: nnmaker's batch loaders over TFRecord datasets.

load common

setup() {
	command -v jq >/dev/null || skip "jq not installed"
}

# MNIST-shaped Examples (a 2x2 "image" here): image i holds i+0.5 ... and
# label i; records 0-4 in a.tfrecords, 5-9 in sub/b.tfrecords.
mnist() {
	mkdir -p "$T/mn/sub"
	for i in 0 1 2 3 4; do
		printf '{"image":[%d.5,1.5,2.5,3.5],"label":[%d]}\n' "$i" "$i"
	done | tfr-cat -R --from-json >"$T/mn/a.tfrecords"
	for i in 5 6 7 8 9; do
		printf '{"image":[%d.5,1.5,2.5,3.5],"label":[%d]}\n' "$i" "$i"
	done | tfr-cat -R --from-json >"$T/mn/sub/b.tfrecords"
	cat >"$T/mn/__manifest__.json" <<'J'
{"compression": null, "allow_var_len": false, "features": [
  {"name": "image", "dtype": "float32", "shape": [2, 2], "deserialize_type": "float"},
  {"name": "label", "dtype": "int64", "shape": [], "deserialize_type": "int"}]}
J
}

# Audio-like SequenceExamples: file f, record r holds steps 10f+3r .. +2
# of a feature list "s" (float) and "t" (int64, same values).
audio() {
	mkdir -p "$T/au"
	for f in 0 1; do
		for r in 0 1 2 3; do
			b=$((f * 100 + r * 3))
			printf '{"context":{"rec":[%d]},"feature_lists":{"s":[[%d.5],[%d.5],[%d.5]],"t":[[%d],[%d],[%d]]}}\n' \
			    "$r" "$b" $((b + 1)) $((b + 2)) "$b" $((b + 1)) $((b + 2))
		done | tfr-cat -R --from-json >"$T/au/f$f.tfrecords"
	done
	tfr-cat --manifest "$T"/au/*.tfrecords >"$T/au/__manifest__.json"
}

# Sentences a record: file d, sentence k of length 1 + (k % 3), token
# values 1000d + 10k + j.
text() {
	mkdir -p "$T/tx"
	for d in 0 1; do
		for k in 0 1 2 3 4 5 6; do
			toks=""
			for j in $(seq 0 $((k % 3))); do
				toks="$toks${toks:+,}[$((d * 1000 + k * 10 + j))]"
			done
			printf '{"context":{"n":[%d]},"feature_lists":{"tok":[%s]}}\n' "$k" "$toks"
		done | tfr-cat -R --from-json >"$T/tx/d$d.tfrecords"
	done
	tfr-cat --manifest "$T"/tx/*.tfrecords >"$T/tx/__manifest__.json"
}

# config TYPE DIR EXTRA: a loader configuration
config() {
	cat <<J
{"type": "$1", "name": "t", // a comment
 "dataset": {"type": "dir", "args": {"data_dir": "$2"}},
 "num_read_buffer_bytes": 0, "num_prefetch": 1,
 $3}
J
}

@test "loader: independent without shuffle gives every record once, in file order, batches across epochs" {
	mnist
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 2,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json"
	[ "${#lines[@]}" = 5 ]
	[ "${lines[0]}" = '{"x":{"dtype":"float32","shape":[4,2,2],"values":[0.5,1.5,2.5,3.5,1.5,1.5,2.5,3.5,2.5,1.5,2.5,3.5,3.5,1.5,2.5,3.5]},"y":{"dtype":"int64","shape":[4],"values":[0,1,2,3]}}' ]
	run -0 sh -c "batch-sample loader --config '$T/c.json' | jq -c .y.values"
	[ "$(echo $output)" = '[0,1,2,3] [4,5,6,7] [8,9,0,1] [2,3,4,5] [6,7,8,9]' ]
	# drop_remainder drops only the very last batch
	sed 's/"drop_remainder": false/"drop_remainder": true/; s/"epochs": 2/"epochs": 1/' "$T/c.json" >"$T/d.json"
	run -0 sh -c "batch-sample loader --config '$T/d.json' | jq -c .y.values"
	[ "$(echo $output)" = '[0,1,2,3] [4,5,6,7]' ]
}

@test "loader: shuffled epochs are permutations of the unshuffled, never mixed; same seed, same bytes" {
	mnist
	config independent "$T/mn" '"target_batch_size": 5, "drop_remainder": false, "epochs": 3,
	 "shuffle": true, "num_shuffle_buffer_elements": 4, "num_filenames_shuffle_buffer": 2, "num_mix_files": 2,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	batch-sample loader --config "$T/c.json" -s 5 | jq -c '.y.values[]' >"$T/seq"
	[ "$(wc -l <"$T/seq")" = 30 ]
	for e in 0 1 2; do
		[ "$(sed -n "$((e * 10 + 1)),$((e * 10 + 10))p" "$T/seq" | sort -n | tr '\n' ' ')" = '0 1 2 3 4 5 6 7 8 9 ' ]
	done
	batch-sample loader --config "$T/c.json" -s 5 -o "$T/1.json"
	batch-sample loader --config "$T/c.json" -s 5 -o "$T/2.json"
	cmp "$T/1.json" "$T/2.json"
	batch-sample loader --config "$T/c.json" -s 6 -o "$T/3.json"
	! cmp -s "$T/1.json" "$T/3.json" || false
	# the performance knobs change nothing
	sed 's/"num_prefetch": 1,/"num_prefetch": 9, "num_parallel_reads": 4, "sloppy_interleave": true, "num_parallel_parses": 3, "num_interleave_in_buffer_elements": 2,/' "$T/c.json" >"$T/k.json"
	batch-sample loader --config "$T/k.json" -s 5 -o "$T/4.json"
	cmp "$T/1.json" "$T/4.json"
}

@test "loader: a shuffle buffer of 1 is no shuffle; the buffer bounds how far an element moves" {
	mnist
	config independent "$T/mn" '"target_batch_size": 10, "drop_remainder": false, "epochs": 1,
	 "shuffle": true, "num_shuffle_buffer_elements": 1, "num_filenames_shuffle_buffer": 1, "num_mix_files": 1,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	run -0 sh -c "batch-sample loader --config '$T/c.json' | jq -c .y.values"
	[ "$output" = '[0,1,2,3,4,5,6,7,8,9]' ]
	# buffer 3: the k-th element out is one of the first k+3 in
	sed 's/"num_shuffle_buffer_elements": 1/"num_shuffle_buffer_elements": 3/' "$T/c.json" >"$T/b.json"
	for s in 1 2 3 4 5 6 7 8; do
		batch-sample loader --config "$T/b.json" -s $s | jq -c '.y.values[]' | awk '$1 > NR + 1 { exit 1 }'
	done
}

@test "loader: records output is one Example a batch with _shape features" {
	mnist
	config independent "$T/mn" '"target_batch_size": 3, "drop_remainder": true, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	batch-sample loader --config "$T/c.json" --output-format records >"$T/out.tfr"
	run -0 tfr-cat --flat "$T/out.tfr"
	[ "${#lines[@]}" = 3 ]
	[ "${lines[1]}" = '{"x":[3.5,1.5,2.5,3.5,4.5,1.5,2.5,3.5,5.5,1.5,2.5,3.5],"x_shape":[3,2,2],"y":[3,4,5],"y_shape":[3]}' ]
}

@test "loader: --limit, --stats, and epochs null streams until the reader goes away" {
	mnist
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": null,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	run -0 --separate-stderr batch-sample loader --config "$T/c.json" --limit 7 --stats
	[ "${#lines[@]}" = 7 ]
	[ "$stderr" = "$(printf 'batches 7\nexamples 28\nrecords 28\nepochs 2\npadding y 0.0000')" ]
	run -0 sh -c "batch-sample loader --config '$T/c.json' | head -n 1000 | wc -l"
	[ "$output" = 1000 ]
}

@test "loader: continuous_sequence windows are consecutive, of drawn lengths, within each file" {
	audio
	config continuous_sequence "$T/au" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "min_window": 2, "max_window": 5, "stride": null,
	 "primary_features": [{"from_name": "t", "to_name": "t"}, {"from_name": "s", "to_name": "s"}]' >"$T/c.json"
	batch-sample loader --config "$T/c.json" -s 3 | jq -c '[.t.values, .s.values]' >"$T/w"
	# each window: length 2-5, consecutive values, s = t + 0.5; windows of a file follow one another
	jq -e -s 'map(.[0]) as $w | ($w | all(length >= 2 and length <= 5)) and
	    ($w | all(. as $a | [range(1; length)] | all($a[.] == $a[. - 1] + 1))) and
	    (map(.[1] == (.[0] | map(. + 0.5))) | all)' "$T/w"
	jq -s -c 'map(.[0][0])' "$T/w" >"$T/starts"
	jq -e -s 'map(.[0]) | . as $w | [range(1; length)] | all(($w[.][0] == $w[. - 1][-1] + 1) or $w[.][0] == 100)' "$T/w"
	# stride 1: windows start at every step
	sed 's/"stride": null/"stride": 1/' "$T/c.json" >"$T/s.json"
	run -0 sh -c "batch-sample loader --config '$T/s.json' -s 3 | jq -c '.t.values[0]' | head -4"
	[ "$(echo $output)" = '0 1 2 3' ]
}

@test "loader: continuous_sequence refuses features of different lengths and windows longer than a file" {
	mkdir -p "$T/bad"
	printf '%s\n' '{"context":{},"feature_lists":{"a":[[1],[2]],"b":[[1],[2]]}}' \
	    '{"context":{},"feature_lists":{"a":[[1],[2]],"b":[[1]]}}' | tfr-cat -R --from-json >"$T/bad/x.tfrecords"
	tfr-cat --manifest "$T/bad/x.tfrecords" >"$T/bad/__manifest__.json"
	config continuous_sequence "$T/bad" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "min_window": 2, "max_window": 2,
	 "primary_features": [{"from_name": "a", "to_name": "a"}, {"from_name": "b", "to_name": "b"}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	[ "${#lines[@]}" = 1 ]
	[ "$stderr" = "batch-sample: $T/bad/x.tfrecords: record 1: offset 62: feature 'b' has 1 steps, but 'a' has 2" ]
	sed 's/"min_window": 2, "max_window": 2/"min_window": 9, "max_window": 9/' "$T/c.json" >"$T/w.json"
	run -1 --separate-stderr batch-sample loader --config "$T/w.json"
	[[ "$stderr" == "batch-sample: $T/bad/x.tfrecords: record 1: offset 62: feature 'b' has 1 steps"* ]]
	printf '%s\n' '{"context":{},"feature_lists":{"a":[[1],[2]],"b":[[1],[2]]}}' | tfr-cat -R --from-json >"$T/bad/x.tfrecords"
	run -1 --separate-stderr batch-sample loader --config "$T/w.json"
	[ "$stderr" = "batch-sample: $T/bad/x.tfrecords: 2 steps, fewer than min_window 9" ]
}

@test "loader: discrete_sequence windows are whole consecutive records with their boundaries" {
	text
	config discrete_sequence "$T/tx" '"target_batch_size": 2, "drop_remainder": false, "epochs": 1,
	 "min_window": 2, "max_window": 3, "padding": [{"tensor": "x", "value": -1}, {"tensor": "n", "value": -1}],
	 "primary_features": [{"from_name": "tok", "to_name": "x"}, {"from_name": "n", "to_name": "n"}]' >"$T/c.json"
	batch-sample loader --config "$T/c.json" -s 11 >"$T/out"
	# unpack the examples: values without padding, cut at the boundaries
	jq -c '.x as $x | range(0; $x.shape[0]) as $i |
	    ($x.values[$i * $x.shape[1]:($i + 1) * $x.shape[1]]) as $row |
	    {b: $x.boundaries[$i], n: .n.values[.n.shape[1] * $i:.n.shape[1] * ($i + 1)], row: $row}' "$T/out" >"$T/ex"
	# 2-3 records an example; each record k between boundaries holds 1 + k % 3 tokens 1000d + 10k + j
	jq -e -s 'all(.[]; (.b | length) >= 3 and (.b | length) <= 4 and
	    (.n | map(select(. >= 0)) | length) == ((.b | length) - 1) and
	    (. as $e | [range(0; ($e.b | length) - 1)] | all(. as $k |
	      ($e.row[$e.b[$k]:$e.b[$k + 1]]) as $r | ($r | length) == 1 + ($e.n[$k] % 3) and
	      ($r | to_entries | all(.value % 1000 == $e.n[$k] * 10 + .key)))) and
	    (.row[.b[-1]:] | all(. == -1)))' "$T/ex"
	# records are consecutive and never reused within a file
	jq -e -s '[.[].n | map(select(. >= 0))] | . as $w | [range(1; length)] | all(($w[.][0] == $w[. - 1][-1] + 1) or $w[.][0] < $w[. - 1][-1])' "$T/ex"
	batch-sample loader --config "$T/c.json" -s 11 --output-format records | tfr-cat --flat | head -1 | jq -e '.x_boundaries_shape[0] == 2 and (.x_boundaries | length) == 2 * .x_boundaries_shape[1]'
}

@test "loader: padding true, per-tensor shapes and values; without padding different shapes are an error" {
	text
	config discrete_sequence "$T/tx" '"target_batch_size": 3, "drop_remainder": false, "epochs": 1,
	 "min_window": 1, "max_window": 1, "padding": true,
	 "primary_features": [{"from_name": "tok", "to_name": "x"}]' >"$T/c.json"
	run -0 --separate-stderr sh -c "batch-sample loader --config '$T/c.json' --stats | head -1 | jq -c .x"
	[ "$output" = '{"dtype":"int64","shape":[3,3],"values":[0,0,0,10,11,0,20,21,22],"boundaries":[[0,1],[0,2],[0,3]]}' ]
	sed 's/"padding": true/"padding": [{"tensor": "x", "shape": [5], "value": 7}]/' "$T/c.json" >"$T/p.json"
	run -0 sh -c "batch-sample loader --config '$T/p.json' | head -1 | jq -c .x.values"
	[ "$output" = '[0,7,7,7,7,10,11,7,7,7,20,21,22,7,7]' ]
	run -0 --separate-stderr batch-sample loader --config "$T/p.json" --stats
	[[ "$stderr" == *"padding x 0.6286" ]]	# 26 tokens in 14 x 5 cells
	sed 's/"padding": true/"padding": false/' "$T/c.json" >"$T/n.json"
	run -1 --separate-stderr batch-sample loader --config "$T/n.json"
	[ -z "$output" ]
	[ "$stderr" = "batch-sample: batch 0: tensor 'x': examples of shapes [1] and [2] cannot be batched without padding" ]
	sed 's/"shape": \[5\]/"shape": [2]/' "$T/p.json" >"$T/q.json"
	run -1 --separate-stderr batch-sample loader --config "$T/q.json"
	[ "$stderr" = "batch-sample: batch 0: tensor 'x': dimension 0 is 3, above its padded size 2" ]
}

@test "loader: secondary features (const, ones) and processing steps (slice, onehot, reshape)" {
	mnist
	config independent "$T/mn" '"target_batch_size": 2, "drop_remainder": true, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}],
	 "secondary_features": [{"to_name": "w", "type": "ones", "args": {"shape": "y", "dtype": "float32"}},
	   {"to_name": "c", "type": "const", "args": {"shape": [2], "dtype": "x", "value": 2.5}},
	   {"to_name": "z", "type": "const", "args": {"shape": [], "dtype": "string"}}],
	 "processing_steps": [{"tensor": "x", "type": "slice", "args": {"slice": "[:, -1]"}},
	   {"tensor": "y", "type": "onehot", "args": {"depth": 3}},
	   {"tensor": "c", "type": "reshape", "args": {"shape": [1, 2]}}]' >"$T/c.json"
	run -0 sh -c "batch-sample loader --config '$T/c.json' | head -2 | tail -1"
	[ "$output" = '{"x":{"dtype":"float32","shape":[2,2],"values":[1.5,3.5,1.5,3.5]},"y":{"dtype":"float32","shape":[2,3],"values":[0,0,1,0,0,0]},"w":{"dtype":"float32","shape":[2],"values":[1,1]},"c":{"dtype":"float32","shape":[2,1,2],"values":[2.5,2.5,2.5,2.5]},"z":{"dtype":"string","shape":[2],"values":["",""]}}' ]
	# a slice index out of range names the step
	sed 's/"\[:, -1\]"/"[:, 2]"/' "$T/c.json" >"$T/s.json"
	run -1 --separate-stderr batch-sample loader --config "$T/s.json"
	[ "$stderr" = "batch-sample: processing_steps[0].args.slice: index 2 out of range for dimension 1 of 'x', shape [2,2]" ]
}

@test "loader: raw features with endianness, dtype and len" {
	mkdir -p "$T/raw"
	# int16 [2] tensors, two a record, big-endian: 1,2 and 3,-1
	echo '{"features":{"feature":{"r":{"bytesList":{"value":["AAEAAg==","AAP//w=="]}}}}}' |
	    tfr-cat -R --from-json >"$T/raw/x.tfrecords"
	cat >"$T/raw/__manifest__.json" <<'J'
{"compression": null, "allow_var_len": false, "features": [{"name": "r", "dtype": "int16", "shape": [2],
  "deserialize_type": "raw", "deserialize_args": {"endian": "big", "len": 2}}]}
J
	tfr-cat --check-manifest "$T/raw"
	config independent "$T/raw" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "r", "to_name": "r"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json"
	[ "$output" = '{"r":{"dtype":"int16","shape":[1,2,2],"values":[1,2,3,-1]}}' ]
}

@test "loader: a damaged record: the batches before it, then the file, record and offset" {
	mnist
	config independent "$T/mn" '"target_batch_size": 2, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	printf '{"image":[1.5,2.5,3.5,4.5],"label":[5]}\n{"image":[1.5,2.5,3.5]}\n' |
	    tfr-cat -R --from-json >"$T/mn/sub/b.tfrecords"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	[ "${#lines[@]}" = 3 ]
	[ "$stderr" = "batch-sample: $T/mn/sub/b.tfrecords: record 1: offset 65: feature 'label' is missing" ]
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --output-format records -o "$T/part.tfr"
	[ ! -e "$T/part.tfr" ]	# a named output is whole or absent
	batch-sample loader --config "$T/c.json" --output-format records >"$T/part.tfr" 2>/dev/null || true
	[ "$(tfr-cat -c "$T/part.tfr")" = 3 ]
	tfr-cat -R -z zlib "$T/mn/a.tfrecords" >"$T/mn/sub/b.tfrecords"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	[ "${#lines[@]}" = 2 ]
	[ "$stderr" = "batch-sample: $T/mn/sub/b.tfrecords: the file is zlib-compressed, but the manifest says none" ]
}

@test "loader: configuration faults name the key path" {
	mnist
	bad() {
		config independent "$T/mn" "$1" >"$T/c.json"
		run -1 --separate-stderr batch-sample loader --config "$T/c.json"
		[ -z "$output" ]
		[ "$stderr" = "batch-sample: $T/c.json: $2" ]
	}
	P='"primary_features": [{"from_name": "label", "to_name": "y"}]'
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, $P" "missing required key 'epochs'"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, \"bogus\": 1, $P" "bogus: unknown key"
	bad "\"target_batch_size\": 0, \"drop_remainder\": false, \"epochs\": 1, $P" "target_batch_size: 0 is below 1"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, \"shuffle\": true, $P" "missing required key 'num_shuffle_buffer_elements'"
	bad '"target_batch_size": 2, "drop_remainder": false, "epochs": 1, "primary_features": [{"from_name": "label", "to_name": "y"}, {"from_name": "image", "to_name": "y"}]' "primary_features[1].to_name: 'y' is already a tensor's name"
	bad '"target_batch_size": 2, "drop_remainder": false, "epochs": 1, "primary_features": [{"from_name": "nope", "to_name": "y"}]' "primary_features[0].from_name: 'nope' is not in the dataset's manifest"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, $P, \"processing_steps\": [{\"tensor\": \"y\", \"type\": \"onehot\", \"args\": {\"depth\": 2}}, {\"tensor\": \"q\", \"type\": \"slice\"}]" "processing_steps[1].tensor: no tensor is named 'q'"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, $P, \"processing_steps\": [{\"tensor\": \"y\", \"type\": \"slice\", \"args\": {\"slice\": \"[1::0]\"}}]" "processing_steps[0].args.slice: '[1::0]': slice step cannot be zero"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, $P, \"processing_steps\": [{\"tensor\": \"y\", \"type\": \"slice\", \"args\": {\"slice\": \"[0]\"}}]" "processing_steps[0].args.slice: 1 dimensions sliced, but 'y' has 0"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, $P, \"padding\": [{\"tensor\": \"nope\"}]" "padding[0].tensor: no tensor is named 'nope'"
	bad "\"target_batch_size\": 2, \"drop_remainder\": false, \"epochs\": 1, \"min_window\": 2, $P" "min_window: only for the sequence loaders"
	bad '"target_batch_size": 2, "drop_remainder": false, "epochs": 1, "primary_features": [{"from_name": "label", "to_name": "y"}, {"from_name": "image", "to_name": "y_shape"}]' "primary_features[1].to_name: 'y_shape' is a name the records output gives to a feature of 'y'"
	run -2 --separate-stderr batch-sample loader
	[[ "$stderr" == "batch-sample: loader: --config is required"* ]]
}

@test "loader: its options in the subcommands' table, its seed and formats its own" {
	run -2 --separate-stderr batch-sample loader --collate
	[ "${stderr%%$'\n'*}" = "batch-sample: loader: --collate does not apply (it applies to batches)" ]
	run -2 --separate-stderr batch-sample loader -p x --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: loader: -p does not apply (it applies to batches)" ]
	run -2 --separate-stderr batch-sample batches --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: batches: --config does not apply (it applies to loader)" ]
	run -2 --separate-stderr batch-sample by-size --limit 3
	[ "${stderr%%$'\n'*}" = "batch-sample: by-size: --limit does not apply (it applies to loader)" ]
	run -2 --separate-stderr batch-sample loader --output-format ids --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: --output-format: expected json or records, not 'ids'" ]
	run -2 --separate-stderr batch-sample loader --output-format text --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: --output-format: expected json or records, not 'text'" ]
	run -2 --separate-stderr batch-sample loader --seed -1 --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: -s: expected an integer from 0 to 9223372036854775807, not '-1'" ]
	run -2 --separate-stderr batch-sample loader --limit x --config "$T/c.json"
	[ "${stderr%%$'\n'*}" = "batch-sample: --limit: expected an integer from 0 to 9223372036854775807, not 'x'" ]
	run -2 --separate-stderr batch-sample loader --config "$T/c.json" extra
	[ "${stderr%%$'\n'*}" = "batch-sample: loader: unexpected operand 'extra'" ]
	# a seed above batches' 2^32 - 1 gets as far as the configuration
	run -1 --separate-stderr batch-sample loader -s 4294967296 --config "$T/nosuch.json"
	[ "$stderr" = "batch-sample: $T/nosuch.json: No such file or directory" ]
	run -2 --separate-stderr batch-sample batches -p x -s 4294967296
	[ "${stderr%%$'\n'*}" = "batch-sample: -s: expected an integer from 0 to 4294967295, not '4294967296'" ]
}

@test "loader: a list dataset" {
	mnist
	printf '%s\n' "$T/mn/sub/b.tfrecords" "$T/mn/a.tfrecords" >"$T/list.txt"
	cat >"$T/c.json" <<J
{"type": "independent", "name": "l", "num_read_buffer_bytes": 0, "num_prefetch": 1,
 "dataset": {"type": "list", "args": {"manifest_file": "$T/mn/__manifest__.json", "list_file": "$T/list.txt"}},
 "target_batch_size": 10, "drop_remainder": false, "epochs": 1,
 "primary_features": [{"from_name": "label", "to_name": "y"}]}
J
	run -0 sh -c "batch-sample loader --config '$T/c.json' | jq -c .y.values"
	[ "$output" = '[5,6,7,8,9,0,1,2,3,4]' ]
	run -0 tfr-cat --check-manifest "$T/c.json"
	[ "$output" = "$T/c.json: 10 records in 2 files, OK" ]
}

@test "loader: tfr-cat --manifest --var-len states an Example list of varying length as var_len; it is checked and loaded, one value a step" {
	mkdir -p "$T/vl"
	printf '%s\n' '{"a":[1,2],"b":[0.5]}' '{"a":[3],"b":[1.5]}' '{"a":[4,5,6],"b":[2.5]}' |
	    tfr-cat -R --from-json >"$T/vl/v.tfrecords"
	run -1 tfr-cat --manifest "$T/vl/v.tfrecords"
	run -0 tfr-cat --manifest --var-len "$T/vl/v.tfrecords"
	[ "${lines[2]}" = '  "allow_var_len": true,' ]
	[ "${lines[4]}" = '    {"name": "a", "dtype": "int64", "shape": [], "var_len": true, "deserialize_type": "int"},' ]
	[ "${lines[5]}" = '    {"name": "b", "dtype": "float32", "shape": [], "var_len": false, "deserialize_type": "float"}' ]
	tfr-cat --manifest --var-len "$T/vl/v.tfrecords" >"$T/vl/__manifest__.json"
	run -0 tfr-cat --check-manifest "$T/vl"
	config independent "$T/vl" '"target_batch_size": 3, "drop_remainder": false, "epochs": 1, "padding": true,
	 "primary_features": [{"from_name": "a", "to_name": "a"}, {"from_name": "b", "to_name": "b"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json"
	[ "$output" = '{"a":{"dtype":"int64","shape":[3,3],"values":[1,2,0,3,0,0,4,5,6]},"b":{"dtype":"float32","shape":[3],"values":[0.5,1.5,2.5]}}' ]
	# a shape of two values a step takes lists of an even length
	sed 's/"shape": \[\], "var_len": true/"shape": [2], "var_len": true/' "$T/vl/__manifest__.json" >"$T/m2.json"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/m2.json" "$T/vl/v.tfrecords"
	[ "$stderr" = "tfr-cat: $T/vl/v.tfrecords: record 1: offset 46: feature 'a': 1 values, not a whole number of steps of 2" ]
}

@test "loader: a cast to float16 rounds to half precision, ties to even" {
	mkdir -p "$T/h"
	echo '{"x":[0.1,1.0004,2049,3,-0.00001]}' | tfr-cat -R --from-json >"$T/h/a.tfrecords"
	echo '{"compression": null, "allow_var_len": false, "features": [{"name": "x", "dtype": "float16", "shape": [5], "deserialize_type": "float"}]}' >"$T/h/__manifest__.json"
	config independent "$T/h" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "x", "to_name": "x"}],
	 "secondary_features": [{"to_name": "c", "type": "const", "args": {"shape": [], "dtype": "x", "value": 0.1}}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json"
	# 0.1 is 0x2e66; 1.0004 is nearer 1 than 1+2^-10; 2049 is halfway
	# between 2048 and 2050, and 2048's last bit is even; -1e-5 is the
	# subnormal -168 x 2^-24; the constant is cast too
	[ "$output" = '{"x":{"dtype":"float16","shape":[1,5],"values":[0.0999755859,1,2048,3,-1.00135803e-05]},"c":{"dtype":"float16","shape":[1],"values":[0.0999755859]}}' ]
	run -0 sh -c "batch-sample loader --config '$T/c.json' --output-format records | tfr-cat --flat"
	[ "$output" = '{"c":[0.099975586],"c_shape":[1],"x":[0.099975586,1.0,2048.0,3.0,-1.001358e-05],"x_shape":[1,5]}' ]
}

@test "loader: discrete_sequence boundaries follow a slice or reshape of the first axis" {
	text
	config discrete_sequence "$T/tx" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "min_window": 2, "max_window": 2, "padding": true,
	 "primary_features": [{"from_name": "tok", "to_name": "x"}],
	 "processing_steps": [{"tensor": "x", "type": "slice", "args": {"slice": "[1:]"}}]' >"$T/c.json"
	# file 0: records 0+1 hold tokens 0 | 10 11, records 2+3 hold 20 21 22 | 30
	run -0 sh -c "batch-sample loader --config '$T/c.json' | head -2 | jq -c '[.x.values, .x.boundaries]'"
	[ "$(echo $output)" = '[[10,11],[[0,0,2]]] [[21,22,30],[[0,2,3]]]' ]
	sed 's/\[1:\]/[::-1]/' "$T/c.json" >"$T/r.json"
	run -0 sh -c "batch-sample loader --config '$T/r.json' | head -2 | jq -c '[.x.values, .x.boundaries]'"
	[ "$(echo $output)" = '[[11,10,0],[[0,2,3]]] [[30,22,21,20],[[0,1,4]]]' ]
	sed 's/\[1:\]/[0]/' "$T/c.json" >"$T/i.json"
	run -1 --separate-stderr batch-sample loader --config "$T/i.json"
	[ "$stderr" = "batch-sample: processing_steps[0].args.slice: an index on the first axis of 'x' would drop the axis its record boundaries are on" ]
	# audio: 3 steps a record, 2 records a window: boundaries 0 3 6
	audio
	config discrete_sequence "$T/au" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "min_window": 2, "max_window": 2,
	 "primary_features": [{"from_name": "s", "to_name": "s"}],
	 "processing_steps": [{"tensor": "s", "type": "reshape", "args": {"shape": [2, 3]}}]' >"$T/a.json"
	run -0 sh -c "batch-sample loader --config '$T/a.json' | head -1 | jq -c '[.s.shape, .s.boundaries]'"
	[ "$output" = '[[1,2,3],[[0,1,2]]]' ]
	sed 's/"shape": \[2, 3\]/"shape": [3, 2]/' "$T/a.json" >"$T/b.json"
	run -1 --separate-stderr batch-sample loader --config "$T/b.json"
	[[ "$stderr" == *"processing_steps[0]: reshaping 's' from [6] to [3,2] splits a record at step 3" ]]
}

@test "loader: float32 values go to the records output as their bytes, the same records as through a float64 cast" {
	# 7 floats a step (vectors of 4 and a tail), 1-5 steps a record, of all magnitudes
	mkdir -p "$T/f32" "$T/f64"
	awk 'BEGIN { srand(3); for (r = 0; r < 40; r++) {
	    printf "{\"context\":{\"id\":[%d]},\"feature_lists\":{\"x\":[", r
	    for (s = 0; s <= r % 5; s++) { printf "%s[", s ? "," : ""
		for (i = 0; i < 7; i++) printf "%s%.7g", i ? "," : "", (rand() - 0.5) * 10 ^ int(rand() * 40 - 20)
		printf "]" }
	    printf "]}}\n" } }' | tfr-cat -R --from-json >"$T/f32/a.tfrecords"
	cp "$T/f32/a.tfrecords" "$T/f64/"
	tfr-cat --manifest "$T/f32/a.tfrecords" >"$T/f32/__manifest__.json"
	grep -q '"float32"' "$T/f32/__manifest__.json"
	sed 's/"float32"/"float64"/' "$T/f32/__manifest__.json" >"$T/f64/__manifest__.json"
	mnist
	cp -R "$T/mn" "$T/mn64"
	sed 's/"float32"/"float64"/' "$T/mn/__manifest__.json" >"$T/mn64/__manifest__.json"
	common='"drop_remainder": false, "epochs": 2, "shuffle": true, "num_shuffle_buffer_elements": 7,
	 "num_filenames_shuffle_buffer": 1, "num_mix_files": 1'
	for kind in f32:f64 mn:mn64; do
		a=${kind%:*} b=${kind#*:}
		case $a in
		f32)	set -- "continuous_sequence:\"min_window\": 2, \"max_window\": 9, \"padding\": true" \
			    "continuous_sequence:\"min_window\": 3, \"max_window\": 3, \"stride\": 2" \
			    "discrete_sequence:\"min_window\": 1, \"max_window\": 3, \"padding\": [{\"tensor\": \"x\", \"shape\": [20, 9], \"value\": -0.75}]"
			pf='"primary_features": [{"from_name": "x", "to_name": "x"}]' ;;
		mn)	set -- "independent:\"padding\": [{\"tensor\": \"x\", \"shape\": [3, 3], \"value\": 0.25}]" \
			    "independent:\"processing_steps\": [{\"tensor\": \"x\", \"type\": \"slice\", \"args\": {\"slice\": \"[::-1, 1:]\"}}]" \
			    "independent:\"multi_load\": false"
			pf='"primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]' ;;
		esac
		for c in "$@"; do
			config "${c%%:*}" "$T/$a" "\"target_batch_size\": 3, $common, ${c#*:}, $pf" >"$T/a.json"
			config "${c%%:*}" "$T/$b" "\"target_batch_size\": 3, $common, ${c#*:}, $pf" >"$T/b.json"
			batch-sample loader --config "$T/a.json" --output-format records -s 4 >"$T/a.tfr"
			batch-sample loader --config "$T/b.json" --output-format records -s 4 >"$T/b.tfr"
			[ -s "$T/a.tfr" ]
			cmp "$T/a.tfr" "$T/b.tfr"
			# and the values are the float32 ones
			run -0 tfr-cat --flat "$T/a.tfr"
			[ "${#lines[@]}" -gt 2 ]
		done
	done
}

@test "loader: normalization, as nnmaker's code has it: per batch, along an axis of the examples, after padding" {
	mnist
	config independent "$T/mn" '"target_batch_size": 2, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}],
	 "normalization": [{"tensor": "x", "axis": 1}]' >"$T/c.json"
	# image 0 is [[0.5,1.5],[2.5,3.5]] and image 1 [[1.5,1.5],[2.5,3.5]]: each
	# row becomes (x - mean) / (sqrt(var + 1e-8) + 1e-8)
	run -0 sh -c "batch-sample loader --config '$T/c.json' | head -1"
	[ "$output" = '{"x":{"dtype":"float32","shape":[2,2,2],"values":[-0.99999994,0.99999994,-0.99999994,0.99999994,0,0,-0.99999994,0.99999994]},"y":{"dtype":"int64","shape":[2],"values":[0,1]}}' ]
	# the records output holds the same values
	batch-sample loader --config "$T/c.json" --output-format records >"$T/r.tfr"
	run -0 sh -c "tfr-cat --flat '$T/r.tfr' | head -1 | jq -c .x"
	[ "$output" = '[-0.99999994,0.99999994,-0.99999994,0.99999994,0,0,-0.99999994,0.99999994]' ]
	# along axis 0 of float64 examples, over a whole batch of 5: every column
	# has mean 0 and variance about 1 (padding is not at play here)
	sed 's/"dtype": "float32"/"dtype": "float64"/' "$T/mn/__manifest__.json" >"$T/m64" && mv "$T/m64" "$T/mn/__manifest__.json"
	config independent "$T/mn" '"target_batch_size": 5, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}],
	 "normalization": [{"tensor": "x", "axis": 0}]' >"$T/c0.json"
	run -0 sh -c "batch-sample loader --config '$T/c0.json' | head -1 | python3 -c '
import json, sys
b = json.load(sys.stdin)[\"x\"]
v = b[\"values\"]
for n in range(5):
    for k in range(2):
        col = [v[n * 4 + j * 2 + k] for j in range(2)]
        m = sum(col) / 2
        var = sum((x - m) ** 2 for x in col) / 2
        assert abs(m) < 1e-12 and (var == 0 or abs(var - 1) < 1e-6), (n, k, col)
print(b[\"dtype\"], b[\"shape\"])
'"
	[ "$output" = "float64 [5, 2, 2]" ]
}

@test "loader: normalization faults name the key path" {
	mnist
	local base='"target_batch_size": 2, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]'
	# refused KEYS: the run of a config with these keys more, which must fail
	refused() {
		config independent "$T/mn" "$base, $1" >"$T/c.json"
		run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	}
	refused '"normalization": [{"tensor": "y", "axis": 0}]'
	[ "$stderr" = "batch-sample: $T/c.json: normalization[0].tensor: 'y' is int64; only float tensors are normalized (cast it first)" ]
	refused '"normalization": [{"tensor": "x", "axis": 2}]'
	[ "$stderr" = "batch-sample: $T/c.json: normalization[0].axis: tensor 'x' is of rank 2, so it has no axis 2" ]
	refused '"normalization": [{"tensor": "x", "axis": 0}, {"tensor": "x", "axis": 1}]'
	[ "$stderr" = "batch-sample: $T/c.json: normalization[1].tensor: 'x' is normalized twice" ]
	refused '"normalization": [{"tensor": "z", "axis": 0}]'
	[ "$stderr" = "batch-sample: $T/c.json: normalization[0].tensor: no tensor is named 'z'" ]
	refused '"normalization": [{"tensor": "x", "axis": -1}]'
	[[ "$stderr" == "batch-sample: $T/c.json: normalization[0].axis: "* ]]
	refused '"multi_load": true, "normalization": [{"tensor": "x", "axis": 0}]'
	[ "$stderr" = "batch-sample: $T/c.json: normalization: not with multi_load" ]
}

# recode IN OUT: the records of IN, every second one with an unknown
# field after its messages (a form the decoder reads and the canonical
# fast path leaves to it)
recode() {
	python3 - "$1" <<'PY' | "$BATS_TEST_DIRNAME/jsonl2tfr" >"$2"
import struct, sys
d = open(sys.argv[1], "rb").read()
i = k = 0
while i < len(d):
    n = struct.unpack_from("<Q", d, i)[0]
    p = d[i + 12:i + 12 + n]
    i += 16 + n
    print('"hex:' + (p + (b"\x18\x05" if k % 2 else b"")).hex() + '"')
    k += 1
PY
}

@test "loader: records in another wire form give the batches canonical ones give, through every loader" {
	mkdir -p "$T/sq" "$T/sq2" "$T/im" "$T/im2"
	for f in 0 1; do
		awk -v f="$f" 'BEGIN { srand(5 + f); for (r = 0; r < 30; r++) {
		    printf "{\"context\":{\"id\":[%d]},\"feature_lists\":{\"a\":[", r
		    n = 1 + int(rand() * 6)
		    for (s = 0; s < n; s++) { printf "%s[", s ? "," : ""
			for (i = 0; i < 3; i++) printf "%s%.6g", i ? "," : "", rand() * 100 - 50
			printf "]" }
		    printf "],\"b\":["
		    for (s = 0; s < n; s++) printf "%s[%.6g,%.6g]", s ? "," : "", rand(), -rand()
		    printf "]}}\n" } }' | tfr-cat -R --from-json >"$T/sq/p$f.tfrecords"
		recode "$T/sq/p$f.tfrecords" "$T/sq2/p$f.tfrecords"
		awk -v f="$f" 'BEGIN { srand(9 + f); for (r = 0; r < 25; r++) {
		    printf "{\"image\":[%.6g,%.6g,%.6g,%.6g],\"label\":[%d]}\n",
			rand(), rand(), -rand(), rand() * 1e6, r * 7 - 90 } }' |
		    tfr-cat -R --from-json >"$T/im/p$f.tfrecords"
		recode "$T/im/p$f.tfrecords" "$T/im2/p$f.tfrecords"
	done
	! cmp -s "$T/sq/p0.tfrecords" "$T/sq2/p0.tfrecords" || false
	tfr-cat --manifest "$T"/sq/*.tfrecords >"$T/sq/__manifest__.json"
	tfr-cat --manifest "$T"/im/*.tfrecords >"$T/im/__manifest__.json"
	cp "$T/sq/__manifest__.json" "$T/sq2/"
	cp "$T/im/__manifest__.json" "$T/im2/"
	common='"drop_remainder": false, "epochs": 2, "shuffle": true, "num_shuffle_buffer_elements": 5,
	 "num_filenames_shuffle_buffer": 2, "num_mix_files": 2'
	seqf='"primary_features": [{"from_name": "a", "to_name": "a"}, {"from_name": "b", "to_name": "b"}]'
	for c in "continuous_sequence:sq:\"min_window\": 2, \"max_window\": 9, \"padding\": true, $seqf" \
	    "continuous_sequence:sq:\"min_window\": 3, \"max_window\": 3, \"stride\": 2, $seqf" \
	    "discrete_sequence:sq:\"min_window\": 1, \"max_window\": 3, \"padding\": true, $seqf" \
	    "independent:im:\"primary_features\": [{\"from_name\": \"image\", \"to_name\": \"x\"}, {\"from_name\": \"label\", \"to_name\": \"y\"}]"; do
		type=${c%%:*} rest=${c#*:} dir=${rest%%:*}
		config "$type" "$T/$dir" "\"target_batch_size\": 4, $common, ${rest#*:}" >"$T/a.json"
		config "$type" "$T/${dir}2" "\"target_batch_size\": 4, $common, ${rest#*:}" >"$T/b.json"
		for fmt in json records; do
			batch-sample loader --config "$T/a.json" --output-format $fmt -s 3 >"$T/a.out"
			batch-sample loader --config "$T/b.json" --output-format $fmt -s 3 >"$T/b.out"
			[ -s "$T/a.out" ]
			cmp "$T/a.out" "$T/b.out"
		done
	done
}

@test "loader: a list far longer than the manifest says is refused without being decoded whole" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	mkdir -p "$T/bg"
	# a 20 MB record: 20 M one-byte int64 values where the manifest wants one
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 | tfr-cat --no-crc -R --type raw |
	    gzip -1 >"$T/bg/a.tfrecords"
	cat >"$T/bg/__manifest__.json" <<'J'
{"compression": "GZIP", "allow_var_len": false, "features": [
  {"name": "targets", "dtype": "int64", "shape": [], "deserialize_type": "int"}]}
J
	config independent "$T/bg" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "targets", "to_name": "y"}]' >"$T/c.json"
	run -1 --separate-stderr /usr/bin/time -f %M -o "$T/rss" batch-sample loader --config "$T/c.json"
	[ "$stderr" = "batch-sample: $T/bg/a.tfrecords: record 0: offset 0: feature 'targets': 20000000 values, but its shape wants 1" ] ||
	    { echo "$stderr"; false; }
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound batch-sample 50000)" ] || { echo "peak RSS $rss KB for a 20 MB record"; false; }
}

@test "loader: --max-record-size bounds a record of a compressed file, as tfr-cat's" {
	mnist
	gzip "$T/mn/a.tfrecords" "$T/mn/sub/b.tfrecords"
	mv "$T/mn/a.tfrecords.gz" "$T/mn/a.tfrecords"
	mv "$T/mn/sub/b.tfrecords.gz" "$T/mn/sub/b.tfrecords"
	sed -i 's/"compression": null/"compression": "GZIP"/' "$T/mn/__manifest__.json"
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json" --max-record-size 64
	[ "${#lines[@]}" = 3 ]
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --max-record-size 20
	[ "$stderr" = "batch-sample: $T/mn/a.tfrecords: record 0: offset 0: length 49 exceeds the limit of 20 bytes (--max-record-size)" ] ||
	    { echo "$stderr"; false; }
	[ -z "$output" ]
	run -2 batch-sample loader --config "$T/c.json" --max-record-size 2Q
}

# rss_ok LIMIT_KB CMD...: CMD succeeds with a peak RSS under LIMIT_KB
# (any limit under the sanitizers); its stdout in $T/out.
rss_ok() {
	local lim=$1
	shift
	/usr/bin/time -f %M -o "$T/rss" "$@" >"$T/out" || return 1
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound batch-sample "$lim")" ] || { echo "peak RSS $rss KB: $*"; return 1; }
}

@test "loader: buffers and open files sized by the dataset, not by num_mix_files and the buffer sizes" {
	mnist
	local c='"target_batch_size": 3, "drop_remainder": false, "epochs": 2, "shuffle": true,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]'
	config independent "$T/mn" "$c"', "num_shuffle_buffer_elements": 10,
	 "num_filenames_shuffle_buffer": 2, "num_mix_files": 2' >"$T/small.json"
	batch-sample loader --config "$T/small.json" -s 5 >"$T/want"
	# 2^63-1 could not be allocated, and the loader crashed freeing what it had
	for n in 9223372036854775807 10000000; do
		config independent "$T/mn" "$c"', "num_shuffle_buffer_elements": '$n',
		 "num_filenames_shuffle_buffer": '$n', "num_mix_files": '$n >"$T/big.json"
		rss_ok 30000 batch-sample loader --config "$T/big.json" -s 5
		cmp "$T/want" "$T/out"
	done
	# a batch larger than the data is the data
	config independent "$T/mn" '"target_batch_size": 10000000, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "label", "to_name": "y"}]' >"$T/b.json"
	rss_ok 30000 batch-sample loader --config "$T/b.json"
	[ "$(jq -c .y.values "$T/out")" = '[0,1,2,3,4,5,6,7,8,9]' ]
}

@test "loader: configuration numbers that would size memory past 2 GiB are refused up front, naming the key and the size" {
	mnist
	# --limit 1 and one epoch: should a refusal go missing, the run stays short
	local p='"primary_features": [{"from_name": "image", "to_name": "x"}, {"from_name": "label", "to_name": "y"}]'
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 1, '"$p"',
	 "processing_steps": [{"tensor": "y", "type": "onehot", "args": {"depth": 1000000000}}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[ "$stderr" = "batch-sample: $T/c.json: processing_steps[0].args.depth: one value of depth 1000000000 takes 4000000000 bytes as float32, more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	# one value fits, a batch of them does not: refused when the shape is known
	sed 's/1000000000/200000000/' "$T/c.json" >"$T/d.json"
	run -1 --separate-stderr batch-sample loader --config "$T/d.json" --limit 1
	[ "$stderr" = "batch-sample: $T/d.json: processing_steps[0].args.depth: a batch of 4 'y' takes at least 3200000000 bytes as float32 (200000000 values each), more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	config independent "$T/mn" '"target_batch_size": 100000000000, "drop_remainder": false, "epochs": 1, '"$p" >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[[ "$stderr" == "batch-sample: $T/c.json: target_batch_size: 100000000000 examples held at once take at least "*" bytes, more than the 2147483648 a batch may take" ]] ||
	    { echo "$stderr"; false; }
	# the manifest's shapes: 1000 images of 1000 x 1000 floats
	mkdir -p "$T/big"
	cp "$T/mn/a.tfrecords" "$T/big/"
	sed 's/"shape": \[2, 2\]/"shape": [1000, 1000]/' "$T/mn/__manifest__.json" >"$T/big/__manifest__.json"
	config independent "$T/big" '"target_batch_size": 1000, "drop_remainder": false, "epochs": 1, '"$p" >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[ "$stderr" = "batch-sample: $T/c.json: target_batch_size: a batch of 1000 'x' takes at least 4000000000 bytes as float32 (1000000 values each), more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 1, '"$p"',
	 "padding": [{"tensor": "x", "shape": [3, 100000000]}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[ "$stderr" = "batch-sample: $T/c.json: padding[0].shape: a batch of 4 'x' takes at least 4800000000 bytes as float32 (300000000 values each), more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 1, '"$p"',
	 "secondary_features": [{"to_name": "o", "type": "ones", "args": {"shape": [65536, 65536], "dtype": "int64"}}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[ "$stderr" = "batch-sample: $T/c.json: secondary_features[0].args.shape: a batch of 4 'o' takes at least 137438953472 bytes as int64 (4294967296 values each), more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
}

@test "loader: a batch tensor past 2 GiB is an error naming it, not an allocation failure" {
	mnist
	# padded to the batch's size (-1) along the first axis: known when batched
	config independent "$T/mn" '"target_batch_size": 4, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "image", "to_name": "x"}],
	 "padding": [{"tensor": "x", "shape": [-1, 100000000]}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json" --limit 1
	[ "$stderr" = "batch-sample: batch 0: tensor 'x': padded to [4,2,100000000] it takes 3200000000 bytes as float32, more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	[ -z "$output" ]
	# a one-hot of as many values as the record has
	mkdir -p "$T/lg"
	printf '{"context":{},"feature_lists":{"tok":[%s[1]]}}\n' "$(printf '[2],%.0s' $(seq 299))" |
	    tfr-cat -R --from-json >"$T/lg/a.tfrecords"
	tfr-cat --manifest "$T/lg/a.tfrecords" >"$T/lg/__manifest__.json"
	config discrete_sequence "$T/lg" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "min_window": 1, "max_window": 1,
	 "primary_features": [{"from_name": "tok", "to_name": "x"}],
	 "processing_steps": [{"tensor": "x", "type": "onehot", "args": {"depth": 1000000, "dtype": "int32"}}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	[ "$stderr" = "batch-sample: processing_steps[0]: onehot of 'x': 300 values of depth 1000000 take 2400000000 bytes as int32, more than the 2147483648 a tensor of a batch may take" ] ||
	    { echo "$stderr"; false; }
	[ -z "$output" ]
	sed 's/1000000/1000/' "$T/c.json" >"$T/d.json"
	run -0 sh -c "batch-sample loader --config '$T/d.json' | jq -c '.x.shape'"
	[ "$output" = '[1,300,1000]' ]
}

@test "loader: secondary shapes are checked as manifest shapes are" {
	mnist
	local s
	for s in '[4294967296, 4294967296]' '[1099511627776, 2]'; do
		config independent "$T/mn" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
		 "primary_features": [{"from_name": "label", "to_name": "y"}],
		 "secondary_features": [{"to_name": "o", "type": "const", "args": {"shape": '"$s"', "dtype": "int64"}}]' >"$T/c.json"
		run -1 --separate-stderr batch-sample loader --config "$T/c.json"
		[ "$stderr" = "batch-sample: $T/c.json: secondary_features[0].args.shape: more than 2^40 elements" ] ||
		    { echo "$stderr"; false; }
		sed "s/\"shape\": \[2, 2\]/\"shape\": $s/" "$T/mn/__manifest__.json" >"$T/m.json"
		run -1 --separate-stderr tfr-cat --check-manifest "$T/m.json" "$T/mn/a.tfrecords"
		[[ "$stderr" == *"features[0].shape: more than 2^40 elements" ]] || { echo "$stderr"; false; }
	done
	# and so are the shapes of reshape steps
	config independent "$T/mn" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "label", "to_name": "y"}],
	 "processing_steps": [{"tensor": "y", "type": "reshape", "args": {"shape": [4294967296, 4294967296, 1]}}]' >"$T/c.json"
	run -1 --separate-stderr batch-sample loader --config "$T/c.json"
	[ "$stderr" = "batch-sample: $T/c.json: processing_steps[0].args.shape: more than 2^40 elements" ] ||
	    { echo "$stderr"; false; }
}

@test "loader: a window's memory is that of its values, not of the max_window drawn" {
	audio
	text
	local w
	for w in 1000000000000000 1000; do
		# windows that cannot be made past the end of each file: none, or a few
		config continuous_sequence "$T/au" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
		 "min_window": 2, "max_window": '$w', "padding": true,
		 "primary_features": [{"from_name": "s", "to_name": "s"}, {"from_name": "t", "to_name": "t"}]' >"$T/c.json"
		rss_ok 30000 batch-sample loader --config "$T/c.json" -s 3
		config discrete_sequence "$T/tx" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
		 "min_window": 1, "max_window": '$w', "padding": true,
		 "primary_features": [{"from_name": "tok", "to_name": "x"}]' >"$T/c.json"
		rss_ok 30000 batch-sample loader --config "$T/c.json" -s 3
	done
	# windows of up to 4 records: the batches windows reserved whole gave (seed 3)
	config discrete_sequence "$T/tx" '"target_batch_size": 2, "drop_remainder": false, "epochs": 1,
	 "min_window": 1, "max_window": 4, "padding": true,
	 "primary_features": [{"from_name": "tok", "to_name": "x"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json" -s 3
	[ "${lines[0]}" = '{"x":{"dtype":"int64","shape":[2,3],"values":[0,10,11,20,21,22],"boundaries":[[0,1,3],[0,3]]}}' ]
	[ "${lines[1]}" = '{"x":{"dtype":"int64","shape":[2,6],"values":[30,40,41,50,51,52,1000,1010,1011,0,0,0],"boundaries":[[0,1,3,6],[0,1,3]]}}' ]
	[ "${lines[2]}" = '{"x":{"dtype":"int64","shape":[1,9],"values":[1020,1021,1022,1030,1040,1041,1050,1051,1052],"boundaries":[[0,3,4,6,9]]}}' ]
}

@test "loader: string values that are not UTF-8 (an encoded surrogate) go out as base64, as tfr-cat writes them" {
	mkdir -p "$T/str"
	# "ok" and "é" are UTF-8; ED A0 80 encodes a surrogate, which no UTF-8 decoder takes
	echo '{"features":{"feature":{"s":{"bytesList":{"value":["b2s=","w6k="]}}}}}' |
	    tfr-cat -R --from-json >"$T/str/a.tfrecords"
	echo '{"features":{"feature":{"s":{"bytesList":{"value":["7aCA","b2s="]}}}}}' |
	    tfr-cat -R --from-json >"$T/str/b.tfrecords"
	cat >"$T/str/__manifest__.json" <<'J'
{"compression": null, "allow_var_len": false, "features": [{"name": "s", "dtype": "string", "shape": [2], "deserialize_type": "string"}]}
J
	config independent "$T/str" '"target_batch_size": 1, "drop_remainder": false, "epochs": 1,
	 "primary_features": [{"from_name": "s", "to_name": "s"}]' >"$T/c.json"
	run -0 batch-sample loader --config "$T/c.json"
	[ "${lines[0]}" = '{"s":{"dtype":"string","shape":[1,2],"values":["ok","é"]}}' ]
	[ "${lines[1]}" = '{"s":{"dtype":"string","shape":[1,2],"encoding":"base64","values":["7aCA","b2s="]}}' ]
	# every line is JSON that a strict UTF-8 decoder takes
	python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8", errors="strict")]' <(printf '%s\n' "${lines[@]}")
	# and tfr-cat writes the same bytes the same way
	run -0 tfr-cat --flat "$T/str/b.tfrecords"
	[ "$output" = '{"s":{"bytes_list":["7aCA","b2s="]}}' ]
}
