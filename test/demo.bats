#!/usr/bin/env bats
# scripts/demo (make demo): the whole job on the shipped corpus, every
# step's output present and the report's figures those of the outputs.
# Most tests run it on the first 300 lines of that corpus (small.txt)
# to stay quick under the sanitizers; two run the whole of it.

load common

DEMO="$BATS_TEST_DIRNAME/../scripts/demo"
CORPUS="$BATS_TEST_DIRNAME/../scripts/data/demo-corpus.txt.gz"

setup() {
	gzip -dc "$CORPUS" | head -n 300 >"$T/small.txt"
}

# The line of the report (in $T/demo) that starts with $1.
report_line() {
	grep "^$1" "$T/demo/report.txt"
}

# The number of ids in each record of $1, one a line.
lengths() {
	tfr-cat --flat "$1" | awk -F, '{ print NF }'
}

@test "demo: runs every step on the shipped corpus into the given directory" {
	run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	for f in corpus.txt vocab.txt ids.tfr train-00000-of-00002.tfrecord.gz \
	    train-00001-of-00002.tfrecord.gz tokens.bin tokens.idx \
	    batches.jsonl report.txt; do
		[ -s "$T/demo/$f" ] || { echo "missing: $f"; return 1; }
	done
	[[ "$output" == *"recpipe demo: 15582 lines of text, 4614015 bytes, from scripts/data/demo-corpus.txt.gz"* ]]
	# The text is the shipped one, decompressed.
	gzip -dc "$CORPUS" | cmp - "$T/demo/corpus.txt"
	# The report is what was printed, at its end.
	[ "$(tail -n "$(wc -l <"$T/demo/report.txt")" <<<"$output")" = "$(cat "$T/demo/report.txt")" ]
	# About 8k subwords, as asked.
	v=$(wc -l <"$T/demo/vocab.txt")
	[ "$v" -gt 7000 ] && [ "$v" -lt 9500 ]
	# Every product reads back whole.
	tfr-cat --verify "$T/demo/ids.tfr"
	tfr-cat --verify "$T/demo"/train-*-of-00002.tfrecord.gz
	mmap-index verify "$T/demo/tokens"
	# Quick enough to be the first thing a newcomer runs.
	report_line "total:" | awk '{ exit !($2 < 30) }'
}

@test "demo: on the shipped corpus, packing and batching figures are those of the files" {
	"$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	local d="$T/demo" ids kept trim rows s0 s1 eff pad slots tok drop
	lengths "$d/ids.tfr" >"$T/len"
	ids=$(awk '{ n += $1 } END { print n }' "$T/len")
	trim=$(awk '$1 > 512 { n += $1 - 512 } END { print n + 0 }' "$T/len")
	[ "$trim" -gt 0 ]	# the corpus has paragraphs longer than a row
	kept=$((ids - trim))
	s0=$(tfr-cat -c "$d/train-00000-of-00002.tfrecord.gz")
	s1=$(tfr-cat -c "$d/train-00001-of-00002.tfrecord.gz")
	rows=$((s0 + s1))
	# Every id that was not trimmed is in a packed row.
	[ "$(lengths "$d/train-00000-of-00002.tfrecord.gz" | wc -l)" -eq "$s0" ]
	[ "$(tfr-cat --flat -f decoder_target_tokens "$d"/train-0000[01]-of-00002.tfrecord.gz |
	    tr -c '0-9\n' ' ' | awk '{ for (i = 1; i <= NF; i++) n += ($i != 0) } END { print n }')" -eq "$kept" ]
	eff=$(awk -v k="$kept" -v r="$rows" 'BEGIN { printf "%.4f", int((k + 511) / 512) / r }')
	pad=$(awk -v k="$kept" -v r="$rows" 'BEGIN { printf "%.1f", 100 * (1 - k / (512 * r)) }')
	report_line "packing:" | grep -qF "$kept ids in $rows rows of 512 slots ($s0 + $s1): efficiency $eff, padding $pad%"
	grep -qF "$trim ids past 512 in a paragraph trimmed" "$d/report.txt"
	report_line "2 token ids" | grep -q " ids.tfr  *15582 Examples, $ids ids "
	# fairseq leaves out sentences longer than 1024 tokens.
	drop=$(awk '$1 > 1024 { n++ } END { print n + 0 }' "$T/len")
	tok=$(awk '$1 <= 1024 { n += $1 } END { print n }' "$T/len")
	slots=$(batch-sample batches -q -p "$d/tokens" --max-tokens 4096 --stats --json -o /dev/null 2>&1 |
	    jq .src_slots)
	pad=$(awk -v t="$tok" -v s="$slots" 'BEGIN { printf "%.1f", 100 * (1 - t / s) }')
	report_line "batching:" | grep -qF "$tok tokens in $slots slots of $(wc -l <"$d/batches.jsonl") batches (<= 4096 each): padding $pad%"
	grep -qF "($drop sentences longer than 1024 tokens left out, as fairseq does)" "$d/report.txt"
	report_line "5 batches" | grep -q " $((15582 - drop)) sentences "
}

@test "demo: the report's counts are those of the files" {
	DEMO_CORPUS="$T/small.txt" "$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	local d="$T/demo" lines ids v s0 s1 nb
	lines=$(wc -l <"$T/small.txt")
	ids=$(lengths "$d/ids.tfr" | awk '{ n += $1 } END { print n }')
	v=$(wc -l <"$d/vocab.txt")
	s0=$(tfr-cat -c "$d/train-00000-of-00002.tfrecord.gz")
	s1=$(tfr-cat -c "$d/train-00001-of-00002.tfrecord.gz")
	nb=$(wc -l <"$d/batches.jsonl")
	[ ! -e "$d/corpus.txt" ]	# plain text is read where it is
	[ "$(tfr-cat -c "$d/ids.tfr")" -eq "$lines" ]
	report_line "1 vocabulary" | grep -q " vocab.txt  *$v subwords  *[0-9]* ms  [0-9.]* MB/s of text$"
	report_line "2 token ids" | grep -q " ids.tfr  *$lines Examples, $ids ids  *[0-9]* ms  "
	report_line "3 packed" | grep -q " $((s0 + s1)) rows in 2 shards  *[0-9]* ms  "
	report_line "4 dataset" | grep -q " tokens.bin, tokens.idx  *$lines sentences, $ids tokens  *[0-9]* ms  "
	report_line "5 batches" | grep -q " batches.jsonl  *$nb batches, $lines sentences  *[0-9]* ms  "
	# Every sentence is in exactly one batch.
	[ "$(grep -o '\[0,[0-9]*\]' "$d/batches.jsonl" | sort -u | wc -l)" -eq "$lines" ]
	[ "$(grep -o '\[0,[0-9]*\]' "$d/batches.jsonl" | wc -l)" -eq "$lines" ]
	mmap-index info "$d/tokens" | grep -q "^tokens: *$ids$"
	report_line "total:" | grep -q "^total:     [0-9.]* s for 0.[0-9] MB of text$"
}

@test "demo: the line shown is decoded back to itself" {
	DEMO_CORPUS="$T/small.txt" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	local n line
	n=$(awk 'length($0) >= 40 { print NR; exit }' "$T/small.txt")
	line=$(sed -n "${n}p" "$T/small.txt")
	[[ "$output" == *"A look: line $n, its ids, and the ids decoded again:"$'\n'"  $line"$'\n'* ]]
	[[ "$output" == *$'\n'"  $line<EOS>"$'\n'* ]]
}

@test "demo: files already in the output directory other than its own are kept" {
	mkdir -p "$T/demo"
	echo keep >"$T/demo/notes.txt"
	echo old >"$T/demo/vocab.txt"
	echo old >"$T/demo/corpus.txt"
	DEMO_CORPUS="$T/small.txt" "$DEMO" "$RECPIPE_BIN" "$T/demo" >/dev/null
	[ "$(cat "$T/demo/notes.txt")" = keep ]
	[ "$(cat "$T/demo/vocab.txt")" != old ]
	[ ! -e "$T/demo/corpus.txt" ]
}

@test "demo: DEMO_CORPUS runs it on another text" {
	printf 'one two three\nfour five six seven\n\neight\n' >"$T/c.txt"
	DEMO_CORPUS="$T/c.txt" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	[[ "$output" == *"recpipe demo: 4 lines of text, 41 bytes"* ]]
	report_line "4 dataset" | grep -q " 4 sentences, "
}

@test "demo: a DEMO_CORPUS ending in .gz is decompressed into the output directory" {
	gzip -c "$T/small.txt" >"$T/small.txt.gz"
	DEMO_CORPUS="$T/small.txt.gz" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 0 ]
	cmp "$T/small.txt" "$T/demo/corpus.txt"
	[[ "$output" == *"recpipe demo: 300 lines of text, $(wc -c <"$T/small.txt") bytes"* ]]
	report_line "4 dataset" | grep -q " 300 sentences, "
}

@test "demo: a corpus that is not gzip fails, naming it" {
	cp "$T/small.txt" "$T/bad.gz"
	DEMO_CORPUS="$T/bad.gz" run "$DEMO" "$RECPIPE_BIN" "$T/demo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"demo: $T/bad.gz: cannot decompress" ]]
	[ ! -e "$T/demo/report.txt" ]
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
	DEMO_CORPUS="$T/small.txt" run "$DEMO" "$T/bin" "$T/demo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"batch-sample: tokens: broken"* ]]
	[[ "$output" == *"demo: batch-sample failed" ]]
	[ ! -e "$T/demo/report.txt" ]
}
