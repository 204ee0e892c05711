#!/usr/bin/env bats
# scripts/demo (make demo): the whole job on the bundled corpus, every
# step's output present and the report's figures those of the outputs.

load common

DEMO="$BATS_TEST_DIRNAME/../scripts/demo"

# The line of the report (in $T/demo) that starts with $1.
report_line() {
	grep "^$1" "$T/demo/report.txt"
}

@test "demo: runs every step on the bundled corpus into the given directory" {
	run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	for f in vocab.txt ids.tfr train-00000-of-00002.tfrecord.gz \
	    train-00001-of-00002.tfrecord.gz tokens.bin tokens.idx \
	    batches.jsonl report.txt; do
		[ -s "$T/demo/$f" ] || { echo "missing: $f"; return 1; }
	done
	# The report is what was printed, at its end.
	[ "$(tail -n "$(wc -l <"$T/demo/report.txt")" <<<"$output")" = "$(cat "$T/demo/report.txt")" ]
	# Every product reads back whole.
	tfr-cat --verify "$T/demo/ids.tfr"
	tfr-cat --verify "$T/demo"/train-*-of-00002.tfrecord.gz
	mmap-index verify "$T/demo/tokens"
}

@test "demo: the report's counts are those of the files" {
	"$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	local d="$T/demo" lines v s0 s1 nb
	lines=$(wc -l <"$BATS_TEST_DIRNAME/../scripts/data/demo-corpus.txt")
	v=$(wc -l <"$d/vocab.txt")
	s0=$(tfr-cat -c "$d/train-00000-of-00002.tfrecord.gz")
	s1=$(tfr-cat -c "$d/train-00001-of-00002.tfrecord.gz")
	nb=$(wc -l <"$d/batches.jsonl")
	[ "$(tfr-cat -c "$d/ids.tfr")" -eq "$lines" ]
	report_line "1 vocabulary" | grep -q " vocab.txt  *$v subwords  *[0-9]* ms$"
	report_line "2 token ids" | grep -q " ids.tfr  *$lines Examples, 617 ids  *[0-9]* ms$"
	report_line "3 packed" | grep -q " $((s0 + s1)) rows in 2 shards ($s0 + $s1)  *[0-9]* ms$"
	report_line "4 dataset" | grep -q " tokens.bin, tokens.idx  *$lines sentences, 617 tokens  *[0-9]* ms$"
	report_line "5 batches" | grep -q " batches.jsonl  *$nb batches, $lines sentences  *[0-9]* ms$"
	# Every sentence is in exactly one batch.
	[ "$(grep -o '\[0,[0-9]*\]' "$d/batches.jsonl" | sort -u | wc -l)" -eq "$lines" ]
	[ "$(grep -o '\[0,[0-9]*\]' "$d/batches.jsonl" | wc -l)" -eq "$lines" ]
	mmap-index info "$d/tokens" | grep -q "^tokens: *617$"
}

@test "demo: packing and padding figures agree with the tools' own statistics" {
	"$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	local d="$T/demo" rows eff pad slots
	rows=$(cat "$d"/train-*-of-00002.tfrecord.gz | tfr-cat -c)
	# pack-encdec's efficiency for one feature: the fewest rows / rows.
	eff=$(awk -v r="$rows" 'BEGIN { printf "%.3f", int((617 + 63) / 64) / r }')
	# padding: the share of slots without a token.
	pad=$(awk -v r="$rows" 'BEGIN { printf "%.1f", 100 * (1 - 617 / (64 * r)) }')
	report_line "packing:" | grep -qF "617 ids in $rows rows of 64 slots: efficiency $eff, padding $pad%"
	slots=$(batch-sample batches -q -p "$d/tokens" --max-tokens 256 --stats --json -o /dev/null 2>&1 |
	    jq .src_slots)
	pad=$(awk -v s="$slots" 'BEGIN { printf "%.1f", 100 * (1 - 617 / s) }')
	report_line "batching:" | grep -qF "617 tokens in $slots slots of $(wc -l <"$d/batches.jsonl") batches (<= 256 each): padding $pad%"
	report_line "total:" | awk '{ exit !($2 < 30) }'
}

@test "demo: files already in the output directory other than its own are kept" {
	mkdir -p "$T/demo"
	echo keep >"$T/demo/notes.txt"
	echo old >"$T/demo/vocab.txt"
	"$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	[ "$(cat "$T/demo/notes.txt")" = keep ]
	[ "$(cat "$T/demo/vocab.txt")" != old ]
}

@test "demo: DEMO_CORPUS runs it on another text" {
	printf 'one two three\nfour five six seven\n\neight\n' >"$T/c.txt"
	DEMO_CORPUS="$T/c.txt" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	[[ "$output" == *"recpipe demo: 4 lines of text, 41 bytes"* ]]
	report_line "4 dataset" | grep -q " 4 sentences, "
}

@test "demo: an unreadable corpus fails at once, naming it" {
	DEMO_CORPUS="$T/missing.txt" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 1 ]
	[ "$output" = "demo: $T/missing.txt: cannot read" ]
	[ ! -e "$T/demo" ]
}

@test "demo: a step that fails stops the demo with the tool's own message" {
	mkdir -p "$T/bin"
	for t in tfr-cat subword-build subword-encode pack-encdec mmap-index; do
		ln -s "$RECPIPE_BIN/$t" "$T/bin/$t"
	done
	printf '#!/bin/sh\necho "batch-sample: tokens: broken" >&2\nexit 1\n' >"$T/bin/batch-sample"
	chmod +x "$T/bin/batch-sample"
	run "$DEMO" "$T/bin" "$T/demo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"batch-sample: tokens: broken"* ]]
	[[ "$output" == *"demo: batch-sample failed" ]]
	[ ! -e "$T/demo/report.txt" ]
}
