# The batching cases of ../shared/vectors/mmap/: batch_by_size under both
# fairseq versions, collation, and whole pipelines (sampling, order,
# filter, batches, epoch shuffle, shards) over datasets built here with
# mmap-index; numpy's RNG through the library's unit test on rng.json.
load common

M="$VEC/mmap/manifest.json"

setup() {
	need_shared vectors/mmap/manifest.json
}

vcase() {
	run -0 --separate-stderr python3 "$BATS_TEST_DIRNAME/vectors/batch.py" \
	    "$RECPIPE_BIN" "$@"
	[ -z "$stderr" ]
}

# The cases named one by one below; a case the folder gains later is run
# by the "further cases" test, so that it is checked, not only noticed.
NAMED="default_leftpad_src empty_m1 fuzz_0 increasing_1_10_mt20_m2 max_sentences_only mult8_5items_no_limits rightpad_both single_pair single_pair_3shards sorted_random_5000_mt4096_m8 temp_T5_3pairs_2shards too_long uniform_5x7_mt12"

@test "vectors-batch: the manifest lists exactly the case files of the folder" {
	run -0 jq -r '[.batch_cases[], .collate_cases[], .pipeline_cases[]] | map(.file) | sort | join(" ")' "$M"
	local listed="$output"
	run -0 bash -c 'cd "$1" && ls batch/*.json collate/*.json pipeline/*.json | sort | tr "\n" " "' _ "$VEC/mmap"
	[ "$output" = "$listed " ]
}

@test "vectors-batch: every named case is in the manifest" {
	run -0 jq -r '[.batch_cases[], .collate_cases[], .pipeline_cases[]] | map(.name) | join(" ")' "$M"
	all_listed "$NAMED" "$output"
}

@test "vectors-batch: further cases of the manifest, each run as its kind" {
	local kind file name bad=0 ran=0
	while read -r kind file name; do
		case " $NAMED " in *" $name "*) continue ;; esac
		ran=$((ran + 1))
		case $kind in
		batch)
			python3 "$BATS_TEST_DIRNAME/vectors/batch.py" "$RECPIPE_BIN" batch "$VEC/mmap/$file" 0.12 &&
			    python3 "$BATS_TEST_DIRNAME/vectors/batch.py" "$RECPIPE_BIN" batch "$VEC/mmap/$file" main ||
			    bad=$((bad + 1)) ;;
		*)
			python3 "$BATS_TEST_DIRNAME/vectors/batch.py" "$RECPIPE_BIN" "$kind" "$VEC/mmap/$file" ||
			    bad=$((bad + 1)) ;;
		esac
	done < <(jq -r '(.batch_cases[] | "batch \(.file) \(.name)"),
	    (.collate_cases[] | "collate \(.file) \(.name)"),
	    (.pipeline_cases[] | "pipeline \(.file) \(.name)")' "$M")
	echo "# $ran further cases, $bad failed" >&3
	[ "$bad" -eq 0 ]
}

@test "vectors-batch: by-size empty_m1 (0.12, main)" { vcase batch "$VEC/mmap/batch/empty_m1.json" 0.12; vcase batch "$VEC/mmap/batch/empty_m1.json" main; }
@test "vectors-batch: by-size fuzz_0 (0.12, main)" { vcase batch "$VEC/mmap/batch/fuzz_0.json" 0.12; vcase batch "$VEC/mmap/batch/fuzz_0.json" main; }
@test "vectors-batch: by-size increasing_1_10_mt20_m2 (0.12, main)" { vcase batch "$VEC/mmap/batch/increasing_1_10_mt20_m2.json" 0.12; vcase batch "$VEC/mmap/batch/increasing_1_10_mt20_m2.json" main; }
@test "vectors-batch: by-size max_sentences_only (0.12, main)" { vcase batch "$VEC/mmap/batch/max_sentences_only.json" 0.12; vcase batch "$VEC/mmap/batch/max_sentences_only.json" main; }
@test "vectors-batch: by-size mult8_5items_no_limits (0.12, main)" { vcase batch "$VEC/mmap/batch/mult8_5items_no_limits.json" 0.12; vcase batch "$VEC/mmap/batch/mult8_5items_no_limits.json" main; }
@test "vectors-batch: by-size sorted_random_5000_mt4096_m8 (0.12, main)" { vcase batch "$VEC/mmap/batch/sorted_random_5000_mt4096_m8.json" 0.12; vcase batch "$VEC/mmap/batch/sorted_random_5000_mt4096_m8.json" main; }
@test "vectors-batch: by-size too_long (0.12, main)" { vcase batch "$VEC/mmap/batch/too_long.json" 0.12; vcase batch "$VEC/mmap/batch/too_long.json" main; }
@test "vectors-batch: by-size uniform_5x7_mt12 (0.12, main)" { vcase batch "$VEC/mmap/batch/uniform_5x7_mt12.json" 0.12; vcase batch "$VEC/mmap/batch/uniform_5x7_mt12.json" main; }

@test "vectors-batch: collate default_leftpad_src" { vcase collate "$VEC/mmap/collate/default_leftpad_src.json"; }
@test "vectors-batch: collate rightpad_both" { vcase collate "$VEC/mmap/collate/rightpad_both.json"; }

@test "vectors-batch: pipeline single_pair" { vcase pipeline "$VEC/mmap/pipeline/single_pair.json"; }
@test "vectors-batch: pipeline single_pair_3shards" { vcase pipeline "$VEC/mmap/pipeline/single_pair_3shards.json"; }
@test "vectors-batch: pipeline temp_T5_3pairs_2shards" { vcase pipeline "$VEC/mmap/pipeline/temp_T5_3pairs_2shards.json"; }

@test "vectors-batch: rng.json through the library's unit test of numpy's generator" {
	local t="$RECPIPE_BIN/../test/t-nprng"
	[ -x "$t" ] || skip "unit test t-nprng not built (make unit)"
	run -0 env SHARED="$SHARED" "$t"
	grep -q 'rng.json' <<<"$output"
	! grep -q '^not ok' <<<"$output"
}
