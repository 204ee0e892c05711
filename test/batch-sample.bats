load common

# ds PREFIX SIZE...: a dataset whose sentence i has SIZE_i tokens (ids
# 10, 11, ... then eos 2), built with mmap-index.
ds() {
	local p=$1 n k line
	shift
	: >"$p.txt"
	for n in "$@"; do
		line=
		for ((k = 1; k < n; k++)); do line+="$((9 + k)) "; done
		[ "$n" -gt 0 ] && line+=2
		printf '%s\n' "$line" >>"$p.txt"
	done
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$p" "$p.txt"
}

# A pair of 20 sentences of sizes 1..20 (source) and 20..1 (target).
pair20() {
	ds "$T/a.src" $(seq 1 20)
	ds "$T/a.tgt" $(seq 20 -1 1)
}

@test "batch-sample: -h prints the synopsis, -V the version" {
	run -0 --separate-stderr batch-sample -h
	[ -z "$stderr" ]
	[[ "${lines[0]}" == "usage: batch-sample batches [-q] [--collate]"* ]]
	run -0 --separate-stderr batch-sample by-size --help
	[[ "${lines[0]}" == "usage: batch-sample batches"* ]]
	run -0 --separate-stderr batch-sample -V
	[ "$output" = "batch-sample 0.1.0" ]
}

@test "batch-sample: --help is the man page SYNOPSIS" {
	help_is_synopsis batch-sample
}

@test "batch-sample: usage errors exit 2 and name the option" {
	run -2 --separate-stderr batch-sample
	run -2 --separate-stderr batch-sample frobnicate
	[ "${stderr%%$'\n'*}" = "batch-sample: unknown subcommand 'frobnicate'" ]
	run -2 --separate-stderr batch-sample by-size --collate
	[ "${stderr%%$'\n'*}" = "batch-sample: by-size: --collate does not apply (it applies to batches)" ]
	run -2 --separate-stderr batch-sample collate --max-tokens 5
	[ "${stderr%%$'\n'*}" = "batch-sample: collate: --max-tokens does not apply (it applies to batches, by-size)" ]
	local o
	for o in --max-tokens --required-batch-size-multiple; do
		for v in 0 -3 x ''; do
			run -2 --separate-stderr batch-sample by-size "$o" "$v"
			[ "${stderr%%$'\n'*}" = "batch-sample: $o: expected an integer from 1 to 9223372036854775807, not '$v'" ]
		done
	done
	# --batch-size 0 is no limit, as in fairseq
	for v in -3 x ''; do
		run -2 --separate-stderr batch-sample by-size --batch-size "$v"
		[ "${stderr%%$'\n'*}" = "batch-sample: --batch-size: expected an integer from 0 to 9223372036854775807, not '$v'" ]
	done
	for o in --max-source-positions:9223372036854775807 \
	    --max-target-positions:9223372036854775807 --epoch:4294967295 \
	    --epochs:4294967295 --virtual-data-size:9223372036854775807 \
	    --pad-to-multiple:2147483647; do
		run -2 --separate-stderr batch-sample batches -p x "${o%:*}" 0
		[ "${stderr%%$'\n'*}" = "batch-sample: ${o%:*}: expected an integer from 1 to ${o#*:}, not '0'" ]
	done
	run -2 --separate-stderr batch-sample batches -p x --shard 3/2
	[ "${stderr%%$'\n'*}" = "batch-sample: --shard: expected K/N with 0 <= K < N, not '3/2'" ]
	run -2 --separate-stderr batch-sample batches -p x --shard 0/0
	run -2 --separate-stderr batch-sample batches -p x --shard 1/4294967296
	run -2 --separate-stderr batch-sample batches -p x --sampling-temperature 0
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-temperature: expected a positive number, not '0'" ]
	run -2 --separate-stderr batch-sample by-size --fairseq-compat 0.11
	[ "${stderr%%$'\n'*}" = "batch-sample: --fairseq-compat: expected 0.12 or main, not '0.11'" ]
	run -2 --separate-stderr batch-sample batches -p x --output-format text
	run -2 --separate-stderr batch-sample collate --left-pad-source maybe
	[ "${stderr%%$'\n'*}" = "batch-sample: --left-pad-source: expected True or False, not 'maybe'" ]
	run -2 --separate-stderr batch-sample batches
	[ "${stderr%%$'\n'*}" = "batch-sample: no datasets: give -p or --lang-pairs" ]
	run -2 --separate-stderr batch-sample batches -p k=a -p k=b
	[ "${stderr%%$'\n'*}" = "batch-sample: -p: key 'k' given twice" ]
	run -2 --separate-stderr batch-sample batches -p a --encoder-langtok src
	[ "${stderr%%$'\n'*}" = "batch-sample: --encoder-langtok needs --dict or --source-dict with -p" ]
	run -2 --separate-stderr batch-sample batches -p a,b --decoder-langtok --source-dict x
	[ "${stderr%%$'\n'*}" = "batch-sample: --decoder-langtok needs --dict or --target-dict with -p" ]
	run -2 --separate-stderr batch-sample batches -p a --dict x --source-dict y
	[ "${stderr%%$'\n'*}" = "batch-sample: --dict is --source-dict and --target-dict at once: give one or the others" ]
	run -2 --separate-stderr batch-sample batches -p a --langs de,en --lang-dict x
	[ "${stderr%%$'\n'*}" = "batch-sample: --langs and --lang-dict exclude each other" ]
	run -2 --separate-stderr batch-sample batches -p a --lang-tok-style fancy
	[ "${stderr%%$'\n'*}" = "batch-sample: --lang-tok-style: expected multilingual or mbart, not 'fancy'" ]
	run -2 --separate-stderr batch-sample batches -p a --json
	[ "${stderr%%$'\n'*}" = "batch-sample: --json goes with --stats" ]
	run -2 --separate-stderr batch-sample batches -p a --collate --output-format ids
	run -2 --separate-stderr batch-sample batches -p a some-operand
	run -2 --separate-stderr batch-sample batches --lang-pairs de-en -p a "$T"
	run -2 --separate-stderr batch-sample batches --lang-pairs deen "$T"
	[ "${stderr%%$'\n'*}" = "batch-sample: --lang-pairs: expected SRC-TGT, not 'deen'" ]
}

@test "batch-sample: bad data exits 1 with one line naming the file, nothing written" {
	ds "$T/s" 3 4 5
	ds "$T/t" 3 4
	run -1 --separate-stderr batch-sample batches -o "$T/out" -p "$T/s,$T/t"
	[ "$stderr" = "batch-sample: $T/t.idx: 2 sentences, but $T/s.idx has 3" ]
	[ -z "$output" ]
	[ ! -e "$T/out" ]
	run -1 --separate-stderr batch-sample batches -o "$T/out" -p "$T/nosuch"
	[[ "$stderr" == "batch-sample: $T/nosuch.idx: "*"No such file or directory" ]]
	[ "${#lines[@]}" = 0 ]
	printf 'not an index at all, really' >"$T/f.idx"
	: >"$T/f.bin"
	run -1 --separate-stderr batch-sample batches -o "$T/out" -p "$T/f"
	[[ "$stderr" == "batch-sample: $T/f.idx: "* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
	ds "$T/e"
	run -1 --separate-stderr batch-sample batches -o "$T/out" -p "$T/e"
	[ "$stderr" = "batch-sample: $T/e.idx: pair 0 has no sentences" ]
	cp "$T/s.bin" "$T/x.de.bin"; cp "$T/s.idx" "$T/x.de.idx"
	cp "$T/s.bin" "$T/x.en.bin"; cp "$T/s.idx" "$T/x.en.idx"
	printf '__de__ 1\nhello\n' >"$T/bad.txt"
	run -1 --separate-stderr batch-sample batches -o "$T/out" -p "$T/x.de,$T/x.en" \
	    --dict "$T/bad.txt" --encoder-langtok src --decoder-langtok
	[ "$stderr" = "batch-sample: $T/bad.txt: line 2: expected 'symbol count [#fairseq:overwrite]'" ]
	run -1 --separate-stderr batch-sample batches -p "$T/s" --dict "$T/nodict.txt"
	[ "$stderr" = "batch-sample: $T/nodict.txt: No such file or directory" ]
	[ ! -e "$T/out" ]
	ls "$T" | grep -v -q '^out\.' || true
	[ -z "$(ls "$T" | grep '^out')" ]
}

@test "batch-sample: by-size batches lines and says fairseq's words for a long item" {
	run -0 --separate-stderr batch-sample by-size --max-tokens 12 --required-batch-size-multiple 1 <<<$'5\n5\n5\n5\n5\n5\n5'
	[ "$output" = $'0 1\n2 3\n4 5\n6' ]
	[ -z "$stderr" ]
	run -0 batch-sample by-size --max-tokens 12 --required-batch-size-multiple 1 <<<$'10 5\n11 5\n12 5'
	[ "$output" = $'10 11\n12' ]
	# indices above 2^63 - 1 come back as they were given
	run -0 batch-sample by-size --required-batch-size-multiple 1 <<<$'18446744073709551615 1\n9223372036854775808 2'
	[ "$output" = "18446744073709551615 9223372036854775808" ]
	printf '1\n1\n1\n1\n1\n' >"$T/five"
	run -0 batch-sample by-size "$T/five"
	[ "$output" = "0 1 2 3 4" ]
	run -0 --separate-stderr batch-sample by-size --fairseq-compat main "$T/five"
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 --separate-stderr batch-sample by-size </dev/null
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 --separate-stderr batch-sample by-size --fairseq-compat main </dev/null
	[ -z "$output" ] && [ -z "$stderr" ]
	run -1 --separate-stderr batch-sample by-size --max-tokens 20 <<<$'3\n30\n4'
	[ "$stderr" = "batch-sample: stdin: Sentences lengths should not exceed max_tokens=20" ]
	[ -z "$output" ]
	run -1 --separate-stderr batch-sample by-size "$T/five" - <<<$'7\nx'
	[ "$stderr" = "batch-sample: input: line 7: expected SIZE" ]
	run -1 --separate-stderr batch-sample by-size "$T/nosuch"
	[ "$stderr" = "batch-sample: $T/nosuch: No such file or directory" ]
	run -0 batch-sample by-size -o "$T/b.txt" --batch-size 2 "$T/five"
	[ -z "$output" ]
	[ "$(cat "$T/b.txt")" = $'0 1\n2 3\n4' ]
}

@test "batch-sample: collate pads, sorts and says which sample has an empty target" {
	local b='[{"id":7,"source":[10,11,2],"target":[20,2]},{"id":3,"source":[12,2],"target":[21,22,23,2]}]'
	run -0 --separate-stderr batch-sample collate <<<"$b"
	[ "$output" = '{"id":[7,3],"nsentences":2,"ntokens":6,"src_tokens":[[10,11,2],[1,12,2]],"src_lengths":[3,2],"prev_output_tokens":[[2,20,1,1],[2,21,22,23]],"target":[[20,2,1,1],[21,22,23,2]]}' ]
	run -0 batch-sample collate --no-input-feeding --left-pad-source False --pad 0 --pad-to-multiple 8 <<<"$b"
	[ "$(jq -c '[.prev_output_tokens, .src_tokens[1]]' <<<"$output")" = '[null,[12,2,0,0,0,0,0,0]]' ]
	run -0 batch-sample collate <<<'[{"id":1,"source":[5,2]}]'
	[ "$(jq -c '[.target, .prev_output_tokens, .ntokens]' <<<"$output")" = '[null,null,2]' ] ||
	[ "$(jq -c '[.target, .prev_output_tokens]' <<<"$output")" = '[null,null]' ]
	run -0 batch-sample collate <<<'[]'
	[ "$(jq -c .nsentences <<<"$output")" = 0 ]
	run -1 --separate-stderr batch-sample collate <<<"$b"$'\n[{"id":9,"source":[5,2],"target":[]}]'
	[ "$stderr" = "batch-sample: stdin: line 2: sample 9: empty target" ]
	[ "${#lines[@]}" = 1 ]
	run -1 --separate-stderr batch-sample collate <<<'[{"id":1,"source":[5,2.5]}]'
	[ "$stderr" = "batch-sample: stdin: line 1: sample 0: \"source\" is not an array of integers" ]
}

@test "batch-sample: batches as JSON, ids and records readable by tfr-cat" {
	pair20
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --required-batch-size-multiple 1
	[ -z "$stderr" ]
	[ "$(jq -s 'map(.ids | length) | add' <<<"$output")" = 20 ]
	[ "$(jq -s -c 'map(.ids[][1]) | sort' <<<"$output")" = "$(seq 0 19 | jq -s -c .)" ]
	[ "$(jq -s -c 'map(.step)' <<<"$output")" = "$(seq 0 $((${#lines[@]} - 1)) | jq -s -c .)" ]
	[ "$(jq -s -c 'map([.epoch, .shard]) | unique' <<<"$output")" = '[[1,0]]' ]
	local json="$output"
	run -0 batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --required-batch-size-multiple 1 --output-format ids
	[ "$output" = "$(jq -r '.ids | map("\(.[0]):\(.[1])") | join(" ")' <<<"$json")" ]
	batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --required-batch-size-multiple 1 --output-format records -o "$T/b.tfr"
	run -0 --separate-stderr tfr-cat "$T/b.tfr"
	[ -z "$stderr" ]
	[ "${#lines[@]}" = "$(jq -s length <<<"$json")" ]
	local first
	first=$(jq -c '.ids | length' <<<"${json%%$'\n'*}")
	[ "$(jq -c '.features.feature.ids_shape.int64List.value' <<<"${lines[0]}")" = "[\"$first\",\"2\"]" ]
	[ "$(jq -c '.features.feature.ids.int64List.value | map(tonumber)' <<<"${lines[0]}")" = \
	    "$(jq -c '.ids | flatten' <<<"${json%%$'\n'*}")" ]
	# the records are in the canonical form tfr-cat writes
	tfr-cat "$T/b.tfr" | tfr-cat --from-json -R >"$T/re.tfr"
	cmp "$T/b.tfr" "$T/re.tfr"
	batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 --collate \
	    --output-format records -o "$T/c.tfr"
	tfr-cat "$T/c.tfr" | tfr-cat --from-json -R >"$T/re.tfr"
	cmp "$T/c.tfr" "$T/re.tfr"
	run -0 batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 --collate
	json="$output"
	run -0 tfr-cat "$T/c.tfr"
	[ "$(jq -c '.features.feature | [.src_tokens.int64List.value, .src_tokens_shape.int64List.value, .target.int64List.value, .prev_output_tokens_shape.int64List.value, .ntokens.int64List.value, .nsentences_shape.int64List] | map(if type == "array" then map(tonumber) else . end)' <<<"${lines[0]}")" = \
	    "$(jq -c '[(.src_tokens | flatten), [.src_tokens | length, (.[0] | length)], (.target | flatten), [.prev_output_tokens | length, (.[0] | length)], [.ntokens], {}]' <<<"${json%%$'\n'*}")" ]
	if command -v script >/dev/null; then
		run -1 script -qec "batch-sample batches -p $T/a.src --output-format records" /dev/null
		[[ "$output" == *"batch-sample: refusing to write records to a terminal (use -o FILE or a pipe)"* ]]
	fi
}

@test "batch-sample: shards pad with fill batches, every worker the same steps" {
	pair20
	local k all=""
	for k in 0 1 2 3 4 5 6; do
		run -0 batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 \
		    --required-batch-size-multiple 1 --shard "$k/7"
		all+="$output"$'\n'
		[ "$(jq -s 'length' <<<"$output")" = "$(batch-sample batches -p "$T/a.src,$T/a.tgt" \
		    --max-tokens 40 --required-batch-size-multiple 1 --shard 0/7 | wc -l)" ]
	done
	[ "$(jq -s -c 'map(select(.ids != []) | .ids[][1]) | sort' <<<"$all")" = "$(seq 0 19 | jq -s -c .)" ]
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --required-batch-size-multiple 1 --shard 6/7 --stats --json
	[ "$(jq -c .fill_batches <<<"$stderr")" = "$(jq -s 'map(select(.ids == [])) | length' <<<"$output")" ]
}

@test "batch-sample: --stats tells sentences, padding and filtered ones" {
	pair20
	run -0 --separate-stderr batch-sample batches -p "de-en=$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --max-source-positions 18 --stats --json -o /dev/null
	[ -z "$output" ]
	[ "$(jq -c '[.filtered, .real_size, .sentences, .src_tokens + .tgt_tokens]' <<<"$stderr")" = '[2,20,18,378]' ]
	[ "$(jq -c '[.filtered_ids[][1]] | sort' <<<"$stderr")" = '[18,19]' ]
	[ "$(jq -c '.pairs[0] | [.key, .size]' <<<"$stderr")" = '["de-en",20]' ]
	run -0 --separate-stderr batch-sample batches -p "de-en=$T/a.src,$T/a.tgt" --max-tokens 40 \
	    --max-source-positions 18 --stats -o /dev/null
	[[ "${stderr}" == *"2 filtered by length"* ]]
	[[ "${stderr}" == *"de-en"* ]]
}

@test "batch-sample: --lang-pairs finds files, reversed names, and one data dir per epoch" {
	mkdir -p "$T/d0" "$T/d1"
	ds "$T/d0/train.de-en.de" 3 4 5
	ds "$T/d0/train.de-en.en" 3 4 5
	ds "$T/d1/train.de-en.de" 3 4 5 6 7
	ds "$T/d1/train.de-en.en" 3 4 5 6 7
	# fr-en only as en-fr, only in d0
	ds "$T/d0/train.en-fr.fr" 2 2
	ds "$T/d0/train.en-fr.en" 2 2
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en,fr-en --epochs 3 \
	    --stats --json "$T/d0:$T/d1"
	[ "$(jq -s -c 'map([.epoch, .real_size])' <<<"$stderr")" = '[[1,5],[2,7],[3,5]]' ]
	[ "$(jq -s -c 'map(select(.epoch == 2) | .ids[] | select(.[0] == 0) | .[1]) | sort' <<<"$output")" = '[0,1,2,3,4]' ]
	[ "$(jq -s -c 'map(select(.epoch == 2) | .ids[] | select(.[0] == 1) | .[1]) | sort' <<<"$output")" = '[0,1]' ]
	[ "$(jq -c '.pairs | map(.key)' <<<"${stderr%%$'\n'*}")" = '["de-en","fr-en"]' ]
	# a later first epoch picks its directory the same way: epoch 4 reads d1
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en,fr-en --epoch 4 \
	    --stats --json -o /dev/null "$T/d0:$T/d1"
	[ "$(jq -c '[.epoch, .real_size]' <<<"$stderr")" = '[4,7]' ]
	# language tokens with --lang-pairs: __en__ before every fr-en source (as --encoder-langtok tgt)
	printf '__de__ 1\n__en__ 1\n__fr__ 1\n' >"$T/dict.txt"
	run -0 --separate-stderr batch-sample batches --lang-pairs fr-en --encoder-langtok tgt \
	    --dict "$T/dict.txt" --collate --no-shuffle "$T/d0"
	[ "$(jq -c '.src_tokens' <<<"$output")" = '[[5,10,2],[5,10,2]]' ]
	run -0 --separate-stderr batch-sample batches --lang-pairs fr-en --encoder-langtok src \
	    --decoder-langtok --dict "$T/dict.txt" --collate --no-shuffle "$T/d0"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0], .prev_output_tokens[0][0:2]]' <<<"$output")" = '[6,5,[2,5]]' ]
	# split1 is appended to the pair
	ds "$T/d0/train1.de-en.de" 9
	ds "$T/d0/train1.de-en.en" 9
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --stats --json "$T/d0"
	[ "$(jq -c .real_size <<<"$stderr")" = 4 ]
	run -1 --separate-stderr batch-sample batches --lang-pairs de-it "$T/d0:$T/d1"
	[ "$stderr" = "batch-sample: $T/d0:$T/d1: no train.de-it.*.idx (nor train.it-de.*.idx)" ]
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --split valid "$T/d0" ||
	[ "$status" = 1 ]
}

@test "batch-sample: language tokens count in sizes and lead the collated rows" {
	ds "$T/x.de" 3 4
	ds "$T/x.en" 2 5
	printf 'hello 5\n__en__ 1\n__de__ 1\n' >"$T/dict.txt"
	run -0 --separate-stderr batch-sample batches -p "$T/x.de,$T/x.en" --stats --json \
	    --dict "$T/dict.txt" --encoder-langtok src --decoder-langtok -o /dev/null
	[ "$(jq -c '[.src_tokens, .tgt_tokens]' <<<"$stderr")" = '[9,9]' ]
	run -0 --separate-stderr batch-sample batches -p "$T/x.de,$T/x.en" --stats --json \
	    --dict "$T/dict.txt" --encoder-langtok src --decoder-langtok --max-source-positions 4 -o /dev/null
	[ "$(jq -c '.filtered' <<<"$stderr")" = 1 ]
	run -0 --separate-stderr batch-sample batches -p "$T/x.de,$T/x.en" --collate \
	    --dict "$T/dict.txt" --encoder-langtok tgt --decoder-langtok --no-shuffle
	[ "$(jq -c '.src_tokens' <<<"$output")" = '[[5,10,11,12,2],[1,5,10,11,2]]' ]
	[ "$(jq -c '.target' <<<"$output")" = '[[5,10,11,12,13,2],[5,10,2,1,1,1]]' ]
}

@test "batch-sample: a closed pipe is quiet, a full disk is an error" {
	yes 2 | head -n 40000 >"$T/big.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/big" "$T/big.txt"
	run bash -c 'batch-sample batches -p "$1" --max-tokens 8 --output-format ids | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big"
	[ "$output" = 141 ]
	run -1 --separate-stderr batch-sample by-size -o /dev/full <<<"3"
	[ "$stderr" = "batch-sample: /dev/full: No space left on device" ]
}

@test "batch-sample: sampling weights, virtual size, grouped shuffling and remainder losses" {
	pair20
	ds "$T/b.src" 3 4 5 6
	ds "$T/b.tgt" 3 4 5 6
	run -0 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" -p "y=$T/b.src,$T/b.tgt" \
	    --sampling-weights x=1,y=3 --virtual-data-size 40 --stats --json -o /dev/null
	[ "$(jq -c '[.virtual_size, .sampled, [.pairs[].ratio], ([.pairs[].virtual_size] | add)]' <<<"$stderr")" = '[40,true,[1,3],40]' ]
	run -2 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" -p "y=$T/b.src,$T/b.tgt" --sampling-weights x=1
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-weights: no weight for pair 'y'" ]
	run -2 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" --sampling-weights z=1
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-weights: no pair 'z'" ]
	run -2 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" --sampling-weights x=-1
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-weights: expected a weight of 0 or more for x, not '-1'" ]
	# 20 sentences in batches of 2: 10 batches; 3 shards group 9 and drop 1
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --batch-size 2 \
	    --required-batch-size-multiple 1 --grouped-shuffling --shard 0/3 --stats --json
	[ "$(jq -c '[.batches_total, .group_dropped_batches, .group_dropped_items, .steps]' <<<"$stderr")" = '[10,1,2,3]' ]
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --batch-size 2 \
	    --required-batch-size-multiple 1 --skip-remainder-batch --stats --json
	[ "$(jq -c '[.skipped_batches, .skipped_items, .batches]' <<<"$stderr")" = '[1,2,9]' ]
	[ "${#lines[@]}" = 9 ]
	# --no-shuffle: batches in sorted order, every epoch the same
	run -0 batch-sample batches -p "$T/a.src,$T/a.tgt" --batch-size 2 \
	    --required-batch-size-multiple 1 --no-shuffle --epochs 2 --output-format ids
	[ "${lines[0]}" = "0:0 0:1" ]
	[ "${lines[*]:0:10}" = "${lines[*]:10:10}" ]
}

@test "batch-sample: collating several pairs: every sentence once, rows by source length" {
	pair20
	ds "$T/b.src" 3 4 5 6 7 8 9 10
	ds "$T/b.tgt" 9 8 7 6 5 4 3 2
	run -0 batch-sample batches -p "$T/a.src,$T/a.tgt" -p "$T/b.src,$T/b.tgt" \
	    --sampling-method uniform --max-tokens 64 --collate
	[ "$(jq -c '[(.ids | map(.[1]) | sort) == (.id | sort), (.src_lengths == (.src_lengths | sort | reverse)), .nsentences == (.ids | length)] | all' <<<"$output" | sort -u)" = true ]
	# with ties, the rows of pair 0 come first (fairseq collates per pair,
	# then sorts again), even where the batch has pair 1 first
	ds "$T/c.tgt" 1 1 1 1 1 1 1 1
	run -0 batch-sample batches -p "$T/b.src,$T/b.tgt" -p "$T/b.src,$T/c.tgt" --batch-size 2 \
	    --required-batch-size-multiple 1 --collate --no-shuffle
	[ "$(jq -c '[.ids, .src_lengths, [.target[][0]]]' <<<"${lines[0]}")" = '[[[1,0],[0,0]],[3,3],[10,2]]' ]
}

@test "batch-sample: --collate names the dataset of an empty target; a named output is not left" {
	ds "$T/s" 2 3
	ds "$T/t" 2 0
	run -1 --separate-stderr batch-sample batches -p "$T/s,$T/t" --collate --no-shuffle \
	    --batch-size 1 --required-batch-size-multiple 1 -o "$T/out.json"
	[ "$stderr" = "batch-sample: $T/t.idx: sequence 1: empty target (epoch 1, step 1, pair 0, sentence 1)" ]
	[ -z "$(ls "$T" | grep '^out')" ]
	# what came before the fault is written on standard output
	run -1 --separate-stderr batch-sample batches -p "$T/s,$T/t" --collate --no-shuffle \
	    --batch-size 1 --required-batch-size-multiple 1
	[ "$(jq -c .ids <<<"$output")" = '[[0,0]]' ]
}

@test "batch-sample: --progress draws on standard error, -q and --no-progress do not" {
	pair20
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --progress -o /dev/null
	[[ "$stderr" == *"batch-sample: epoch 1: step 0 of "* ]]
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --progress -q -o /dev/null
	[ -z "$stderr" ]
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --no-progress -o /dev/null
	[ -z "$stderr" ]
}

@test "batch-sample: Megatron datasets are read as well, and a monolingual pair sorts by source" {
	printf '%s\n' "5 2" "3 4 5 2" "2" "7 7 7 7 7 2" >"$T/m.txt"
	mmap-index build --raw-ids -q --format megatron --input-format id --dtype int32 -o "$T/m" "$T/m.txt"
	run -0 --separate-stderr batch-sample batches -p "$T/m" --no-shuffle --batch-size 1 \
	    --required-batch-size-multiple 1 --output-format ids
	[ "$output" = $'0:2\n0:0\n0:1\n0:3' ]
	run -0 batch-sample batches -p "$T/m" --no-shuffle --collate --max-tokens 100
	[ "$(jq -c '[.id, .src_lengths, .ntokens, .target, .prev_output_tokens]' <<<"$output")" = '[[3,1,0,2],[6,4,2,1],13,null,null]' ]
}

@test "batch-sample: an output that cannot be written is refused before the data is read" {
	mkdir "$T/adir"
	run -1 --separate-stderr batch-sample batches -o "$T/adir" -p "$T/nosuch"
	[ "$stderr" = "batch-sample: $T/adir: Is a directory" ]
	run -1 --separate-stderr batch-sample by-size -o "$T/nodir/out" "$T/nosuch"
	[ "$stderr" = "batch-sample: $T/nodir/out: No such file or directory" ]
	run -2 --separate-stderr batch-sample collate -o '' "$T/nosuch"
	[ "${stderr%%$'\n'*}" = "batch-sample: -o: empty file name" ]
	[ -z "$(ls "$T/adir")" ]
}

@test "batch-sample: language tokens missing from dict.txt get the ids fairseq appends" {
	ds "$T/x.fr" 1
	ds "$T/x.en" 1
	# fairseq's multilingual task adds __LANG__ for the pairs' languages,
	# sorted, after the last line: __en__ is 4 + 2 = 6 and __fr__ is 7
	# (__de__ is there already and keeps its id 5)
	printf 'hello 5\n__de__ 1\n' >"$T/dict.txt"
	run -0 --separate-stderr batch-sample batches -p "$T/x.fr,$T/x.en" --collate \
	    --dict "$T/dict.txt" --encoder-langtok src --decoder-langtok --no-shuffle
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[7,6]' ]
	run -0 --separate-stderr batch-sample batches -p "$T/x.fr,$T/x.en" --collate \
	    --dict "$T/dict.txt" --encoder-langtok tgt --no-shuffle
	[ "$(jq -c '.src_tokens[0][0]' <<<"$output")" = 6 ]
}

@test "batch-sample: --stats shows no ratio for pairs that are concatenated, not sampled" {
	pair20
	ds "$T/b.src" 3 4 5 6
	ds "$T/b.tgt" 3 4 5 6
	# without sampling every pair is taken whole: fairseq has no ratios
	# (sample_ratios is None), and a ratio of 0 would read as "never drawn"
	run -0 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" -p "y=$T/b.src,$T/b.tgt" \
	    --stats --json -o /dev/null
	[ "$(jq -c '[.sampled, [.pairs[] | [.ratio, .prob, .virtual_size]]]' <<<"$stderr")" = '[false,[[null,0.8333333333333334,20],[null,0.16666666666666666,4]]]' ]
	run -0 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" -p "y=$T/b.src,$T/b.tgt" \
	    --stats -o /dev/null
	[ "$(awk '$2 == "x" || $2 == "y" { print $2, $4, $5, $6 }' <<<"$stderr")" = $'x - 0.8333 20\ny - 0.1667 4' ]
	# with sampling the ratio is there
	run -0 --separate-stderr batch-sample batches -p "x=$T/a.src,$T/a.tgt" -p "y=$T/b.src,$T/b.tgt" \
	    --sampling-method uniform --stats -o /dev/null
	[ "$(awk '$2 == "x" || $2 == "y" { print $2, $4 }' <<<"$stderr")" = $'x 1.0000\ny 1.0000' ]
}

@test "batch-sample: a dictionary per language, or --source-dict and --target-dict, as fairseq loads them" {
	mkdir -p "$T/d"
	ds "$T/d/train.de-en.de" 3 4
	ds "$T/d/train.de-en.en" 2 5
	# fairseq's multilingual task reads DATA/dict.LANG.txt of the first data
	# directory for each language and adds the tokens of every language of
	# the list (sorted), in that order, to each: dict.de.txt has 2 words
	# (__de__ = 6, __en__ = 7), dict.en.txt has 5 (__de__ = 9, __en__ = 10)
	printf 'a 1\nb 1\n' >"$T/d/dict.de.txt"
	printf 'a 1\nb 1\nc 1\nd 1\ne 1\n' >"$T/d/dict.en.txt"
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok src \
	    --decoder-langtok --collate --no-shuffle "$T/d"
	[ "$(jq -c '[.src_tokens, .target]' <<<"$output")" = '[[[6,10,11,12,2],[1,6,10,11,2]],[[10,10,11,12,13,2],[10,10,2,1,1,1]]]' ]
	# --encoder-langtok tgt: the target language's token in the source dictionary
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok tgt \
	    --collate --no-shuffle "$T/d"
	[ "$(jq -c '.src_tokens' <<<"$output")" = '[[7,10,11,12,2],[1,7,10,11,2]]' ]
	# --source-dict and --target-dict replace them, --dict is both
	printf 'x 1\n' >"$T/one.txt"
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok src \
	    --decoder-langtok --collate --no-shuffle --target-dict "$T/one.txt" "$T/d"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[6,6]' ]
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok src \
	    --decoder-langtok --collate --no-shuffle --dict "$T/one.txt" "$T/d"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[5,6]' ]
	# with -p the dictionaries are named
	run -0 --separate-stderr batch-sample batches -p "$T/d/train.de-en.de,$T/d/train.de-en.en" \
	    --encoder-langtok src --decoder-langtok --collate --no-shuffle \
	    --source-dict "$T/d/dict.de.txt" --target-dict "$T/d/dict.en.txt"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[6,10]' ]
	# a missing dictionary of a language is named
	rm "$T/d/dict.en.txt"
	run -1 --separate-stderr batch-sample batches --lang-pairs de-en --decoder-langtok "$T/d"
	[ "$stderr" = "batch-sample: $T/d/dict.en.txt: No such file or directory" ]
}

@test "batch-sample: --langs and --lang-dict give the order of the language tokens" {
	mkdir -p "$T/d"
	ds "$T/d/train.de-en.de" 3
	ds "$T/d/train.de-en.en" 2
	printf 'a 1\n' >"$T/dict.txt"
	# the list's order, not the sorted one: __fr__ 5, __en__ 6, __de__ 7
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok src \
	    --decoder-langtok --collate --dict "$T/dict.txt" --langs fr,en,de "$T/d"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[7,6]' ]
	printf '  en \n\nde\r\n' >"$T/langs.txt"
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --encoder-langtok src \
	    --decoder-langtok --collate --dict "$T/dict.txt" --lang-dict "$T/langs.txt" "$T/d"
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[6,5]' ]
	run -1 --separate-stderr batch-sample batches --lang-pairs de-en --langs en,fr "$T/d"
	[ "$stderr" = "batch-sample: --langs: language de of the pairs is not in the list" ]
}

@test "batch-sample: --lang-tok-replacing-bos-eos puts the tokens in place of eos and bos, sizes unchanged" {
	ds "$T/x.de" 4 3
	ds "$T/x.en" 5 2
	printf 'a 1\n' >"$T/dict.txt"
	# __de__ 5, __en__ 6; fairseq's TransformEosLangPairDataset: the
	# source's eos (last column when left-padded) becomes the encoder
	# token, prev_output_tokens' first column the decoder token; the
	# target keeps its eos and sizes count no added token
	local args=(-p "$T/x.de,$T/x.en" --dict "$T/dict.txt" --encoder-langtok src --decoder-langtok
	    --collate --no-shuffle --lang-tok-replacing-bos-eos)
	run -0 --separate-stderr batch-sample batches "${args[@]}"
	[ "$(jq -c '[.src_tokens, .src_lengths, .prev_output_tokens, .target]' <<<"$output")" = \
	    '[[[10,11,12,5],[1,10,11,5]],[4,3],[[6,10,11,12,13],[6,10,1,1,1]],[[10,11,12,13,2],[10,2,1,1,1]]]' ]
	run -0 --separate-stderr batch-sample batches "${args[@]}" --left-pad-source False
	[ "$(jq -c '.src_tokens' <<<"$output")" = '[[10,11,12,5],[10,11,5,1]]' ]
	run -0 --separate-stderr batch-sample batches "${args[@]}" --stats --json -o /dev/null
	[ "$(jq -c '[.src_tokens, .tgt_tokens]' <<<"$stderr")" = '[7,7]' ]
	# only the sides with a token change
	run -0 --separate-stderr batch-sample batches -p "$T/x.de,$T/x.en" --dict "$T/dict.txt" \
	    --decoder-langtok --collate --no-shuffle --lang-tok-replacing-bos-eos
	[ "$(jq -c '[.src_tokens[0], .prev_output_tokens[0][0]]' <<<"$output")" = '[[10,11,12,2],6]' ]
	# fairseq does not implement left-padded targets here
	run -2 --separate-stderr batch-sample batches "${args[@]}" --left-pad-target True
	[ "${stderr%%$'\n'*}" = "batch-sample: --lang-tok-replacing-bos-eos with --decoder-langtok needs --left-pad-target False (fairseq does not implement it)" ]
	# a source without eos at its end is an error naming it (upstream asserts)
	printf '10 11\n' >"$T/n.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/y.de" "$T/n.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/y.en" "$T/n.txt"
	run -1 --separate-stderr batch-sample batches --raw-ids -p "$T/y.de,$T/y.en" --dict "$T/dict.txt" \
	    --encoder-langtok src --collate --lang-tok-replacing-bos-eos
	[ "$stderr" = "batch-sample: epoch 1, step 0: sample 0: source does not end with eos 2, which the language token is to replace" ]
}

@test "batch-sample: --lang-tok-style mbart looks up [LANG] tokens" {
	ds "$T/x.en_XX" 3
	ds "$T/x.ro_RO" 2
	# [en_XX] is in the file (id 5); [ro_RO] is added after the last line
	# (7), then <mask>, as fairseq's augment_dictionary does
	printf '__ro_RO__ 1\n[en_XX] 1\nz 1\n' >"$T/dict.txt"
	run -0 --separate-stderr batch-sample batches -p "$T/x.en_XX,$T/x.ro_RO" --dict "$T/dict.txt" \
	    --encoder-langtok src --decoder-langtok --collate --lang-tok-style mbart
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[5,7]' ]
	run -0 --separate-stderr batch-sample batches -p "$T/x.en_XX,$T/x.ro_RO" --dict "$T/dict.txt" \
	    --encoder-langtok src --decoder-langtok --collate
	[ "$(jq -c '[.src_tokens[0][0], .target[0][0]]' <<<"$output")" = '[7,4]' ]
}

@test "batch-sample: --virtual-epoch-size serves a pass in slices, as SampledMultiEpochDataset" {
	pair20
	local a=(-p "$T/a.src,$T/a.tgt" --batch-size 1 --required-batch-size-multiple 1 --output-format ids)
	# one pass of 20 sentences (concatenated) in slices of 8, 8 and 4:
	# every sentence once over epochs 1-3; epoch 4 draws a new pass
	run -0 --separate-stderr batch-sample batches "${a[@]}" --virtual-epoch-size 8 --epochs 4 --stats --json
	[ "$(jq -s -c 'map([.virtual_size, .virtual_epoch.pass_epoch, .virtual_epoch.start, .virtual_epoch.new_pass])' <<<"$stderr")" = \
	    '[[8,1,0,true],[8,1,8,false],[4,1,16,false],[8,4,0,true]]' ]
	[ "$(printf '%s\n' "${lines[@]:0:20}" | sort -t: -k2 -n | tr '\n' ' ')" = "$(seq 0 19 | sed 's/^/0:/' | tr '\n' ' ')" ]
	[ "$(printf '%s\n' "${lines[@]:20:8}" | sort | tr '\n' ' ')" != "$(printf '%s\n' "${lines[@]:0:8}" | sort | tr '\n' ' ')" ]
	# started at epoch 2 (a resumed run), fairseq draws the pass with epoch 2's seed
	run -0 --separate-stderr batch-sample batches "${a[@]}" --virtual-epoch-size 8 --epoch 2 --stats --json
	[ "$(jq -c '[.virtual_epoch.pass_epoch, .virtual_epoch.start]' <<<"$stderr")" = '[2,8]' ]
	# a size above the virtual data size is capped to it
	run -0 --separate-stderr batch-sample batches "${a[@]}" --virtual-epoch-size 99 --epochs 2 --stats --json
	[ "$(jq -s -c 'map([.virtual_size, .virtual_epoch.pass_epoch])' <<<"$stderr")" = '[[20,1],[20,2]]' ]
	run -0 --separate-stderr batch-sample batches "${a[@]}" --virtual-epoch-size 8 --stats
	[[ "$stderr" == *"virtual epoch: items 0 to 8 of 20 permuted in epoch 1 (now)"* ]]
	run -2 --separate-stderr batch-sample batches "${a[@]}" --virtual-epoch-size 0
	[ "${stderr%%$'\n'*}" = "batch-sample: --virtual-epoch-size: expected an integer from 1 to 9223372036854775807, not '0'" ]
}

@test "batch-sample: with virtual epochs the next data directory comes after a new pass" {
	mkdir -p "$T/d0" "$T/d1"
	ds "$T/d0/train.de-en.de" 3 4 5
	ds "$T/d0/train.de-en.en" 3 4 5
	ds "$T/d1/train.de-en.de" 3 4 5 6 7
	ds "$T/d1/train.de-en.en" 3 4 5 6 7
	# translation_multi_simple_epoch: a pass drawn again asks for the next
	# shard, loaded at the next epoch, whose new dataset draws its own pass
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --virtual-epoch-size 2 \
	    --epochs 8 --stats --json -o /dev/null "$T/d0:$T/d1"
	[ "$(jq -s -c 'map([.real_size, .virtual_size, .virtual_epoch.pass_epoch, .virtual_epoch.start])' <<<"$stderr")" = \
	    '[[3,2,1,0],[3,1,1,2],[3,2,3,0],[5,2,4,0],[5,2,4,2],[5,1,4,4],[5,2,7,0],[3,1,8,2]]' ]
	# the first directory from --virtual-data-size: epoch 3 is in the
	# second pass of ceil(4 / 2) virtual epochs, so shard001
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --virtual-epoch-size 2 \
	    --sampling-method uniform --virtual-data-size 4 --epoch 3 --stats --json -o /dev/null "$T/d0:$T/d1"
	[ "$(jq -c '[.real_size, .virtual_epoch.pass_epoch]' <<<"$stderr")" = '[5,3]' ]
	run -0 --separate-stderr batch-sample batches --lang-pairs de-en --virtual-epoch-size 2 \
	    --sampling-method uniform --epoch 3 --stats --json -o /dev/null "$T/d0:$T/d1"
	[ "$(jq -c '.real_size' <<<"$stderr")" = 3 ]
}

@test "batch-sample: an empty --lang-pairs list or pair is a usage error, missing data or not" {
	local l
	for l in , ,,, 'de-en,,fr-en' 'de-en,'; do
		run -2 --separate-stderr batch-sample batches --lang-pairs "$l" "$T/nosuch"
		[ "${stderr%%$'\n'*}" = "batch-sample: --lang-pairs: expected SRC-TGT, not ''" ]
		run -2 --separate-stderr batch-sample batches --lang-pairs "$l" "$T"
		[ "${stderr%%$'\n'*}" = "batch-sample: --lang-pairs: expected SRC-TGT, not ''" ]
	done
	run -2 --separate-stderr batch-sample batches --lang-pairs '' "$T"
	[ "${stderr%%$'\n'*}" = "batch-sample: --lang-pairs: empty list" ]
}

@test "batch-sample: --sampling-weights that overflow or name a pair twice are refused" {
	pair20
	ds "$T/b.src" 3 4 5 6
	ds "$T/b.tgt" 3 4 5 6
	run -2 --separate-stderr batch-sample batches -p "a=$T/a.src,$T/a.tgt" -p "b=$T/b.src,$T/b.tgt" \
	    --sampling-weights a=1e308,b=1e308
	[ "$stderr" = "batch-sample: --sampling-weights: the weights overflow (their sum is not a finite number)"$'\n'"Try 'batch-sample --help' for more information." ]
	run -2 --separate-stderr batch-sample batches -p "a=$T/a.src,$T/a.tgt" -p "b=$T/b.src,$T/b.tgt" \
	    --sampling-weights a=1,b=2,a=3
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-weights: pair 'a' given twice" ]
	run -2 --separate-stderr batch-sample batches -p "a=$T/a.src,$T/a.tgt" -p "b=$T/b.src,$T/b.tgt" \
	    --sampling-weights main:a=1,b=2,a=3
	[ "${stderr%%$'\n'*}" = "batch-sample: --sampling-weights: pair 'a' given twice" ]
	# large weights that do not overflow give the ratios of small ones
	run -0 batch-sample batches -p "a=$T/a.src,$T/a.tgt" -p "b=$T/b.src,$T/b.tgt" \
	    --sampling-weights a=1e307,b=3e307 --virtual-data-size 40
	[ "$output" = "$(batch-sample batches -p "a=$T/a.src,$T/a.tgt" -p "b=$T/b.src,$T/b.tgt" \
	    --sampling-weights a=1,b=3 --virtual-data-size 40)" ]
}

@test "batch-sample: -p takes X.idx and X.bin for the dataset X, as mmap-index does" {
	pair20
	local want
	want=$(batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40)
	run -0 --separate-stderr batch-sample batches -p "k=$T/a.src.idx,$T/a.tgt.bin" --max-tokens 40
	[ -z "$stderr" ]
	[ "$output" = "$want" ]
	run -0 batch-sample batches -p "$T/a.src.bin,$T/a.tgt.idx" --max-tokens 40
	[ "$output" = "$want" ]
	# the language of a prefix named by its file is that of the prefix
	cp "$T/a.src.bin" "$T/x.de.bin"; cp "$T/a.src.idx" "$T/x.de.idx"
	cp "$T/a.tgt.bin" "$T/x.en.bin"; cp "$T/a.tgt.idx" "$T/x.en.idx"
	printf '__de__ 1\n__en__ 1\n' >"$T/dict.txt"
	run -0 batch-sample batches -p "$T/x.de.idx,$T/x.en.idx" --dict "$T/dict.txt" \
	    --encoder-langtok src --decoder-langtok --collate
	[ "$output" = "$(batch-sample batches -p "$T/x.de,$T/x.en" --dict "$T/dict.txt" \
	    --encoder-langtok src --decoder-langtok --collate)" ]
	# without X.idx the name is the prefix itself
	run -1 --separate-stderr batch-sample batches -p "$T/nosuch.idx"
	[[ "$stderr" == "batch-sample: $T/nosuch.idx.idx: "*"No such file or directory" ]]
}

@test "batch-sample: a sentence size the .bin cannot hold is caught when the dataset is opened" {
	ds "$T/s" 3 4 5
	ds "$T/t" 3 4 5
	cp "$T/s.idx" "$T/big.idx"; cp "$T/s.bin" "$T/big.bin"
	# sizes start at byte 26 of a fairseq .idx: sentence 1 becomes 2^31-1
	printf '\377\377\377\177' | dd of="$T/big.idx" bs=1 seek=30 conv=notrunc 2>/dev/null
	run -1 --separate-stderr batch-sample batches -p "$T/big,$T/t" --max-tokens 100
	[ "$stderr" = "batch-sample: $T/big.idx: sequence 1: size 2147483647 does not fit in $T/big.bin (24 bytes)" ]
	[ -z "$output" ]
	run -1 --separate-stderr batch-sample batches -p "$T/t,$T/big" --max-tokens 100 \
	    --max-source-positions 2147483647 --max-target-positions 2147483647
	[ "$stderr" = "batch-sample: $T/big.idx: sequence 1: size 2147483647 does not fit in $T/big.bin (24 bytes)" ]
	# sizes each small enough, but more tokens than the .bin holds
	cp "$T/s.idx" "$T/sum.idx"; head -c 20 "$T/s.bin" >"$T/sum.bin"
	run -1 --separate-stderr batch-sample batches -p "$T/sum,$T/t"
	[ "$stderr" = "batch-sample: $T/sum.idx: sizes add up to 12 tokens (24 bytes), more than $T/sum.bin holds (20 bytes)" ]
}

@test "batch-sample: memory depends on the shards that get batches, not on their number" {
	pair20
	local n
	# 50 million shards took 3.9 GB, 2^32-1 could not be allocated
	for n in 0/50000000 49999999/50000000 4294967294/4294967295; do
		run -0 --separate-stderr /usr/bin/time -f %M -o "$T/rss" batch-sample batches \
		    -p "$T/a.src,$T/a.tgt" --max-tokens 40 --shard "$n" --stats --json
		[ "$(tail -1 "$T/rss")" -lt "$(rss_bound batch-sample 30000)" ]
		[ "${#lines[@]}" = 1 ]
		[ "$(jq -c .steps <<<"$stderr")" = 1 ]
	done
	[ "$(jq -c .ids <<<"${lines[0]}")" = '[]' ]
	[ "$(jq -c '[.batches, .fill_batches, .sentences]' <<<"$stderr")" = '[0,1,0]' ]
	run -0 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --max-tokens 40 --shard 0/50000000 --stats --json
	[ "$(jq -c '[.batches, .fill_batches]' <<<"$stderr")" = '[1,0]' ]
	run -2 --separate-stderr batch-sample batches -p "$T/a.src,$T/a.tgt" --shard 0/4294967296
	[ "${stderr%%$'\n'*}" = "batch-sample: --shard: expected K/N with 0 <= K < N, not '0/4294967296'" ]
}

@test "batch-sample: a fairseq dataset of ids fairseq-preprocess never writes is refused; --raw-ids takes it" {
	local hint="not what fairseq-preprocess writes (tensor2tensor ids?); binarize through a dictionary (mmap-index dict, then build --input-format text --dict), or give --raw-ids if these are the ids you mean"
	# tensor2tensor ids: EOS 1, fairseq's <pad>
	printf '5 6 1\n7 1\n' >"$T/t2t.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/t2t" "$T/t2t.txt"
	run -1 --separate-stderr batch-sample batches -p "$T/t2t" --max-tokens 100 --collate
	[ "$stderr" = "batch-sample: $T/t2t.idx: sentence 1: it ends in <pad>, not </s>: $hint" ]
	printf '5 1 6 2\n' >"$T/pad.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/pad" "$T/pad.txt"
	run -1 --separate-stderr batch-sample batches -p "$T/pad" --max-tokens 100 --collate --output-format records
	[ "$stderr" = "batch-sample: $T/pad.idx: sentence 0: <pad> inside it: $hint" ]
	printf '5 6\n' >"$T/noeos.txt"
	mmap-index build --raw-ids -q --input-format id --dtype uint16 -o "$T/noeos" "$T/noeos.txt"
	run -1 --separate-stderr batch-sample batches -p "$T/noeos" --max-tokens 100 --collate
	[ "$stderr" = "batch-sample: $T/noeos.idx: sentence 0: it does not end in </s>: $hint" ]
	# said to be meant: taken as they are (the collated target ends in 1, padding)
	run -0 batch-sample batches --raw-ids -p "$T/t2t" --max-tokens 100 --collate
	# batches of indices alone read no token: nothing to check
	run -0 batch-sample batches -p "$T/t2t" --max-tokens 100
	# what fairseq-preprocess writes goes through
	printf '5 6 2\n7 2\n' >"$T/ok.txt"
	mmap-index build -q --input-format id --dtype uint16 -o "$T/ok" "$T/ok.txt"
	run -0 batch-sample batches -p "$T/ok" --max-tokens 100 --collate
}

@test "batch-sample: --task sets fairseq main's rules of the task; explicit options win; --max-sentences 0 is no limit" {
	awk 'BEGIN { for (i = 0; i < 61; i++) { n = 1 + (i * 7) % 13; s = ""; for (j = 0; j < n; j++) s = s (j ? " " : "") (4 + (i + j) % 50); print s " 2" } }' >"$T/s.txt"
	mmap-index build -q --input-format id --dtype uint16 -o "$T/s" "$T/s.txt"
	local e
	for e in 1 2; do
		want=$(batch-sample batches -p "$T/s" --max-tokens 40 --epoch "$e" --fairseq-compat main --order-seed seed --output-format ids)
		run -0 batch-sample batches -p "$T/s" --max-tokens 40 --epoch "$e" --task translation_multi_simple_epoch --output-format ids
		[ "$output" = "$want" ]
		want=$(batch-sample batches -p "$T/s" --max-tokens 40 --epoch "$e" --fairseq-compat main --order-seed seed+epoch --output-format ids)
		run -0 batch-sample batches -p "$T/s" --max-tokens 40 --epoch "$e" --task translation --output-format ids
		[ "$output" = "$want" ]
	done
	# the task differs from the defaults (fairseq 0.12's) where it should
	[ "$(batch-sample batches -p "$T/s" --max-tokens 40 --epoch 2 --output-format ids)" != \
	  "$(batch-sample batches -p "$T/s" --max-tokens 40 --epoch 2 --task translation_multi_simple_epoch --output-format ids)" ]
	# explicit options win, before or after --task
	want=$(batch-sample batches -p "$T/s" --max-tokens 40 --epoch 2 --fairseq-compat 0.12 --order-seed seed --output-format ids)
	run -0 batch-sample batches -p "$T/s" --max-tokens 40 --epoch 2 --fairseq-compat 0.12 --task translation_multi_simple_epoch --output-format ids
	[ "$output" = "$want" ]
	run -2 --separate-stderr batch-sample batches -p "$T/s" --task translation_lev
	[ "${stderr%%$'\n'*}" = "batch-sample: --task: expected translation_multi_simple_epoch or translation, not 'translation_lev'" ]
	# --max-sentences 0 and --batch-size 0 are no limit, as in fairseq
	want=$(batch-sample batches -p "$T/s" --max-tokens 40 --output-format ids)
	run -0 batch-sample batches -p "$T/s" --max-tokens 40 --max-sentences 0 --output-format ids
	[ "$output" = "$want" ]
	run -0 batch-sample batches -p "$T/s" --max-tokens 40 --batch-size 0 --output-format ids
	[ "$output" = "$want" ]
	# fairseq's --fixed-dictionary is --dict
	printf 'a 1\nb 1\n' >"$T/d.txt"
	want=$(batch-sample batches -p "$T/s" --max-tokens 40 --dict "$T/d.txt" --langs a,b --encoder-langtok src --collate 2>&1 || true)
	run batch-sample batches -p "$T/s" --max-tokens 40 --fixed-dictionary "$T/d.txt" --langs a,b --encoder-langtok src --collate
	[ "$output" = "$want" ]
}
