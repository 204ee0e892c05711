# The mmap cases of ../shared/vectors/mmap/manifest.json: files written by
# the real fairseq and Megatron-LM builders.  Our build of the same input
# must equal their bytes, and our reader must return what theirs does.
load common

M="$VEC/mmap/manifest.json"

setup() {
	need_shared vectors/mmap/manifest.json
}

# jq on the manifest entry of case $1
mf() {
	jq -r --arg n "$1" ".mmap_cases[] | select(.name == \$n) | $2" "$M"
}

# Compare "mmap-index cat" JSON lines ($1) with an upstream reader's output ($2).
same_read() {
	python3 - "$1" "$2" <<'PY'
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
theirs = [json.loads(l) for l in open(sys.argv[2])] if sys.argv[2] != "-" else []
if len(ours) != len(theirs):
    sys.exit("%d sequences, upstream %d" % (len(ours), len(theirs)))
for i, (o, t) in enumerate(zip(ours, theirs)):
    if isinstance(t, dict):
        if o.get("mode") != t["mode"]:
            sys.exit("sequence %d: mode %r, upstream %r" % (i, o.get("mode"), t["mode"]))
        t = t["tokens"]
    if o["targets"] != t or [type(x) for x in o["targets"]] != [type(x) for x in t]:
        sys.exit("sequence %d: %r, upstream %r" % (i, o["targets"], t))
PY
}

# Build case $1 for implementation $2 from its input and compare bytes,
# then read the upstream files and compare with the upstream reader.
run_case() {
	local name=$1 impl=$2 dir dtype args
	dir="$(dirname "$M")/$(mf "$name" .dir)"
	dtype=$(mf "$name" .dtype)
	args=(--format "$impl" --dtype "$dtype")
	grep -q '"end_document"' "$dir/input.jsonl" && args+=(--documents empty)
	grep -q '"mode"' "$dir/input.jsonl" && args+=(--mode-feature mode)
	"$BATS_TEST_DIRNAME/jsonl2tfr" <"$dir/input.jsonl" >"$T/in.tfr"
	run -0 --separate-stderr mmap-index build --raw-ids -o "$T/out" "${args[@]}" "$T/in.tfr"
	[ -z "$stderr" ]
	cmp "$T/out.bin" "$dir/$(mf "$name" ".impls.$impl.bin")"
	cmp "$T/out.idx" "$dir/$(mf "$name" ".impls.$impl.idx")"
	[ "$(sha256sum <"$T/out.idx" | cut -d' ' -f1)" = "$(mf "$name" ".impls.$impl.idx_sha256")" ]

	# Our reader on the upstream files.
	local up="$dir/${impl}" read
	run -0 --separate-stderr mmap-index cat "$up"
	[ -z "$stderr" ]
	printf '%s\n' "$output" | sed '/^$/d' >"$T/ours.jsonl"
	read=$(mf "$name" ".impls.$impl.read // .impls.$impl.read_no_mmap // \"-\"")
	[ "$read" = - ] || read="$dir/$read"
	same_read "$T/ours.jsonl" "$read"

	# The decoded index: counts and document indices.
	run -0 mmap-index info --json "$up"
	[ "$(jq .sequences <<<"$output")" = "$(jq .len "$dir/$impl.index.json")" ]
	[ "$(jq .dtype <<<"$output")" = "$(jq .dtype "$dir/$impl.index.json")" ]
	if [ "$impl" = megatron ]; then
		[ "$(jq .documents <<<"$output")" = "$(jq '.document_indices | length - 1' "$dir/$impl.index.json")" ]
	fi
	run -0 mmap-index verify -q "$up"
}

# The cases named one by one below; any other case of the manifest is run
# by the "further cases" test, so that it is checked, not only noticed.
NAMED="basic_uint16:fairseq basic_uint16:megatron empty_seqs_int32:fairseq empty_seqs_int32:megatron zero_length_int32:fairseq zero_length_int32:megatron int64:fairseq int64:megatron float32:fairseq float32:megatron mg_explicit_docs:megatron mg_multimodal:megatron"

@test "vectors-mmap: every named case is in the manifest" {
	run -0 jq -r '[.mmap_cases[] | .name as $n | .impls | keys[] | $n + ":" + .] | join(" ")' "$M"
	all_listed "$NAMED" "$output"
}

@test "vectors-mmap: further cases of the manifest, built and read as upstream" {
	local c name impl dir dtype ran=0
	for c in $(jq -r '.mmap_cases[] | .name as $n | .impls | keys[] | $n + ":" + .' "$M"); do
		case " $NAMED " in *" $c "*) continue ;; esac
		name=${c%%:*} impl=${c#*:} ran=$((ran + 1))
		echo "# case $c" >&3
		if [ "$(mf "$name" ".impls.$impl.write_error")" != null ]; then
			# upstream refuses to write it: so do we, leaving nothing
			dir="$(dirname "$M")/$(mf "$name" .dir)"
			dtype=$(mf "$name" .dtype)
			"$BATS_TEST_DIRNAME/jsonl2tfr" <"$dir/input.jsonl" >"$T/in.tfr"
			run --separate-stderr mmap-index build --raw-ids -o "$T/refused" --format "$impl" --dtype "$dtype" "$T/in.tfr"
			[ "$status" -ne 0 ]
			run -0 find "$T" -name 'refused*'
			[ -z "$output" ]
			continue
		fi
		run_case "$name" "$impl"
	done
	echo "# $ran further cases" >&3
}

@test "vectors-mmap: basic_uint16 fairseq" { run_case basic_uint16 fairseq; }
@test "vectors-mmap: basic_uint16 megatron" { run_case basic_uint16 megatron; }
@test "vectors-mmap: empty_seqs_int32 fairseq" { run_case empty_seqs_int32 fairseq; }
@test "vectors-mmap: empty_seqs_int32 megatron" { run_case empty_seqs_int32 megatron; }
@test "vectors-mmap: zero_length_int32 fairseq (0-byte .bin upstream cannot read)" { run_case zero_length_int32 fairseq; }
@test "vectors-mmap: zero_length_int32 megatron" { run_case zero_length_int32 megatron; }
@test "vectors-mmap: int64 fairseq" { run_case int64 fairseq; }
@test "vectors-mmap: int64 megatron" { run_case int64 megatron; }
@test "vectors-mmap: float32 megatron (code 7)" { run_case float32 megatron; }
@test "vectors-mmap: mg_explicit_docs megatron" { run_case mg_explicit_docs megatron; }
@test "vectors-mmap: mg_multimodal megatron" { run_case mg_multimodal megatron; }

@test "vectors-mmap: float32 fairseq is refused up front, leaving no partial files" {
	local dir
	dir="$(dirname "$M")/$(mf float32 .dir)"
	[ "$(mf float32 .impls.fairseq.write_error)" != null ]
	"$BATS_TEST_DIRNAME/jsonl2tfr" <"$dir/input.jsonl" >"$T/in.tfr"
	run -2 --separate-stderr mmap-index build --raw-ids -o "$T/out" --dtype float32 "$T/in.tfr"
	[ "${stderr%%$'\n'*}" = "mmap-index: fairseq cannot store float32" ]
	run -0 find "$T" -name 'out*'
	[ -z "$output" ]
}

@test "vectors-mmap: each upstream .idx read as the other project's fails with one line" {
	local name impl other dir
	for name in basic_uint16 empty_seqs_int32 int64; do
		dir="$(dirname "$M")/$(mf "$name" .dir)"
		for impl in fairseq megatron; do
			other=megatron; [ "$impl" = megatron ] && other=fairseq
			run -1 --separate-stderr mmap-index cat --format "$other" "$dir/$impl"
			[ -z "$output" ]
			[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
			[[ "$stderr" == "mmap-index: $dir/$impl.idx: not a "* ]]
			run -0 mmap-index info --json "$dir/$impl"
			[ "$(jq -r .layout <<<"$output")" = "$impl" ]
		done
	done
}

@test "vectors-mmap: merging upstream datasets keeps documents and modes" {
	local dir
	dir="$(dirname "$M")/$(mf mg_multimodal .dir)"
	run -0 --separate-stderr mmap-index merge -o "$T/mm" "$dir/megatron" "$dir/megatron"
	[ -z "$stderr" ]
	run -0 mmap-index verify "$T/mm"
	[ "$output" = "$T/mm: ok (megatron-multimodal, uint16, 8 sequences, 12 tokens, 8 documents)" ]
	run -0 mmap-index cat "$T/mm"
	[ "$(printf '%s\n' "$output" | jq -c .mode | tr '\n' ' ')" = "0 1 2 1 0 1 2 1 " ]
	dir="$(dirname "$M")/$(mf mg_explicit_docs .dir)"
	run -0 mmap-index merge -o "$T/docs" "$dir/megatron" "$dir/megatron"
	[ "$(tail -c 72 "$T/docs.idx" | od -An -tu8 | tr -s ' \n' ' ')" = " 0 2 3 3 5 7 8 8 10 " ]
	run -1 --separate-stderr mmap-index merge -o "$T/x" "$dir/megatron" "$(dirname "$M")/$(mf mg_multimodal .dir)/megatron"
	[[ "$stderr" == *"layout megatron-multimodal, but"*"is megatron" ]]
}
