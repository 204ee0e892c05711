#!/usr/bin/env bats
# The recipes of scripts/builds/: products named as upstream names them,
# their contents, incremental rebuilds, the scale-out stages giving the
# same bytes as one run, and the real corpora of ../shared when present.

load common

BUILDS="$BATS_TEST_DIRNAME/../scripts/builds"
# make check runs this suite under make: the recipes are run as a user
# runs them, without its flags and variables (-w, -j, O=, ...).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

# Under make check the make these tests run is a sub-make: MAKEFLAGS then
# carries -w, and "Entering directory" lines would mix with the names and
# stages the recipes print.  Each make here is a make of its own.
unset MAKEFLAGS MFLAGS MAKELEVEL

# build RECIPE ARGS...: the one-process build (make -j2 all) into $T/out.
build() {
	local r=$1
	shift
	make -s -j2 -f "$BUILDS/$r.mk" BIN="$RECPIPE_BIN" OUT="$T/out" "$@"
}

# stages RECIPE OUT N ARGS...: every stage of the recipe in order, as an
# engine runs them: the parts of a parts stage all at once (K = 0 .. N-1,
# side by side), a once stage once.
stages() {
	local r=$BUILDS/$1.mk out=$2 n=$3 name kind k pids fail
	shift 3
	make -s -f "$r" stages "$@" >"$T/stages"
	while read -r name kind _; do
		if [ "$kind" = parts ]; then
			pids=()
			for ((k = 0; k < n; k++)); do
				make -s -f "$r" "$name" BIN="$RECPIPE_BIN" OUT="$out" N="$n" K="$k" "$@" &
				pids+=($!)
			done
			fail=0
			for k in "${pids[@]}"; do
				wait "$k" || fail=1
			done
			[ "$fail" -eq 0 ] || return 1
		else
			make -s -f "$r" "$name" BIN="$RECPIPE_BIN" OUT="$out" N="$n" "$@" || return 1
		fi
	done <"$T/stages"
}

# same_products RECIPE DIR1 DIR2 [VAR=value ...]: every product of DIR1
# is in DIR2, equal.
same_products() {
	local r=$1 a=$2 b=$3 p n=0
	shift 3
	for p in $(make -s -f "$BUILDS/$r.mk" products "$@"); do
		cmp "$a/$p" "$b/$p" || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# Skip unless every TOOL takes --part K/N (N > 1 runs need it).
need_part() {
	local t
	for t; do
		"$t" --part 0/2 --help >/dev/null 2>&1 || skip "$t has no --part yet"
	done
}

# The real-corpus runs are for the normal build only: under the
# sanitizers they would take minutes and check nothing new.
need_fast() {
	! grep -q __asan_init "$RECPIPE_BIN/subword-build" ||
		skip "real-corpus build not run under AddressSanitizer"
}

# mtimes DIR: every file under DIR with its modification time (the
# records of what each product was made from aside).
mtimes() {
	(cd "$1" && find . -type f ! -name '*.tmp' ! -path '*/records/*' -printf '%p %T@\n' | sort)
}

# changed BEFORE AFTER: the files whose time changed (or that appeared).
changed() {
	comm -13 "$1" "$2" | cut -d' ' -f1 | sed 's|^\./||' | sort | tr '\n' ' '
}

# An English/Chinese pair of 300 lines, with a pair whose Chinese side
# is empty (compile_data drops it), a blank pair, and a tab inside a
# Chinese line (kept in targets); and a dev pair of 20 lines.
enzh_fixture() {
	local i
	for i in $(seq 1 300); do
		printf 'The cat number %d sat on the mat, and the dog ran.\n' "$i"
	done >"$T/train.en"
	for i in $(seq 1 300); do
		printf '第%d只猫坐在垫子上，狗跑了。\n' "$i"
	done >"$T/train.zh"
	sed -i '7s/.*/  /; 11s/.*//' "$T/train.zh"
	sed -i '11s/.*//' "$T/train.en"
	sed -i '5s/。/\t。/' "$T/train.zh"
	for i in $(seq 1 20); do
		printf 'A bird sang %d songs.\n' "$i"
	done >"$T/dev.en"
	for i in $(seq 1 20); do
		printf '一只鸟唱了%d首歌。\n' "$i"
	done >"$T/dev.zh"
	ENZH=(SRC="$T/train.en" TGT="$T/train.zh" DEV_SRC="$T/dev.en" DEV_TGT="$T/dev.zh")
}

@test "t2t-translate-enzh: shards and vocabularies named as tensor2tensor names them" {
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	run -0 make -s -f "$BUILDS/t2t-translate-enzh.mk" products
	[ "${#lines[@]}" -eq 13 ]
	[ "${lines[0]}" = vocab.translate_enzh_wmt8k.8192.subwords.en ]
	[ "${lines[1]}" = vocab.translate_enzh_wmt8k.8192.subwords.zh ]
	[ "${lines[2]}" = translate_enzh_wmt8k-train-00000-of-00010 ]
	[ "${lines[11]}" = translate_enzh_wmt8k-train-00009-of-00010 ]
	[ "${lines[12]}" = translate_enzh_wmt8k-dev-00000-of-00001 ]
	for p in "${lines[@]}"; do
		[ -s "$T/out/$p" ]
	done
	# 300 pairs less the two with an empty side, dealt round-robin.
	[ "$(tfr-cat -c "$T/out"/translate_enzh_wmt8k-train-*-of-00010 | tail -1)" = "298 total" ]
	[ "$(tfr-cat -c "$T/out/translate_enzh_wmt8k-train-00000-of-00010")" -eq 30 ]
	[ "$(tfr-cat -c "$T/out/translate_enzh_wmt8k-train-00009-of-00010")" -eq 29 ]
	[ "$(tfr-cat -c "$T/out/translate_enzh_wmt8k-dev-00000-of-00001")" -eq 20 ]
	[ "$(head -2 "$T/out/vocab.translate_enzh_wmt8k.8192.subwords.zh")" = "$(printf "'<pad>_'\n'<EOS>_'")" ]
}

@test "t2t-translate-enzh: the records are the pairs' ids with EOS, dealt and then shuffled" {
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	local d=$T/out v=$T/out/vocab.translate_enzh_wmt8k.8192.subwords
	# Every record: inputs and targets, each ending in EOS.
	tfr-cat --flat "$d"/translate_enzh_wmt8k-train-*-of-00010 >"$T/all.jsonl"
	[ "$(jq -c 'keys' "$T/all.jsonl" | sort -u)" = '["inputs","targets"]' ]
	[ "$(jq '.inputs[-1], .targets[-1]' "$T/all.jsonl" | sort -u)" = 1 ]
	# The records of shard 3 are pairs 3, 13, 23 ... of the kept pairs,
	# in another order; they decode to the text.
	paste "$T/train.en" "$T/train.zh" | awk -F'\t' '$1 ~ /[^ ]/ && $2 ~ /[^ ]/' |
	    awk 'NR % 10 == 4' | sort >"$T/want3"
	subword-encode -d --strip-extraneous -f inputs -v "$v.en" \
	    "$d/translate_enzh_wmt8k-train-00003-of-00010" >"$T/en3"
	subword-encode -d --strip-extraneous -f targets -v "$v.zh" \
	    "$d/translate_enzh_wmt8k-train-00003-of-00010" >"$T/zh3"
	paste "$T/en3" "$T/zh3" >"$T/got3"
	[ "$(sort "$T/got3")" = "$(cat "$T/want3")" ]
	! cmp -s "$T/got3" <(awk 'NR % 10 == 4' <(paste "$T/train.en" "$T/train.zh" |
	    awk -F'\t' '$1 ~ /[^ ]/ && $2 ~ /[^ ]/')) || false
	# The tab inside a Chinese line is kept in targets.
	subword-encode -d --strip-extraneous -f targets -v "$v.zh" \
	    "$d"/translate_enzh_wmt8k-train-*-of-00010 >"$T/zh"
	[ "$(grep -c "$(printf '第5只猫坐在垫子上，狗跑了\t。')" "$T/zh")" -eq 1 ]
	# The same seed gives the same bytes; another seed another order.
	build t2t-translate-enzh "${ENZH[@]}" OUT="$T/again"
	same_products t2t-translate-enzh "$T/out" "$T/again"
	build t2t-translate-enzh "${ENZH[@]}" OUT="$T/seed2" SEED=2
	! cmp -s "$d/translate_enzh_wmt8k-train-00003-of-00010" \
	    "$T/seed2/translate_enzh_wmt8k-train-00003-of-00010" || false
	cmp "$d/vocab.translate_enzh_wmt8k.8192.subwords.en" "$T/seed2/vocab.translate_enzh_wmt8k.8192.subwords.en"
}

@test "t2t-translate-enzh: touching one input rebuilds only what depends on it" {
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	mtimes "$T/out" >"$T/m0"
	run -0 build t2t-translate-enzh "${ENZH[@]}"
	mtimes "$T/out" >"$T/m1"
	[ -z "$(changed "$T/m0" "$T/m1")" ]
	touch "$T/dev.en"
	build t2t-translate-enzh "${ENZH[@]}"
	mtimes "$T/out" >"$T/m2"
	[ "$(changed "$T/m1" "$T/m2")" = "text/dev.tsv tmp/dev.tfr translate_enzh_wmt8k-dev-00000-of-00001 " ]
	touch "$T/train.en"
	build t2t-translate-enzh "${ENZH[@]}"
	mtimes "$T/out" >"$T/m3"
	run changed "$T/m2" "$T/m3"
	[[ "$output" == *"vocab.translate_enzh_wmt8k.8192.subwords.en "* ]]
	[[ "$output" == *"translate_enzh_wmt8k-train-00009-of-00010 "* ]]
	[[ "$output" == *"translate_enzh_wmt8k-dev-00000-of-00001 "* ]]
	[[ "$output" != *subwords.zh* ]]
}

@test "t2t-translate-enzh: a changed value or tool remakes exactly what was made with it" {
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	mtimes "$T/out" >"$T/m0"
	# SEED: the shards only, as a build with that seed makes them.
	run -0 build t2t-translate-enzh "${ENZH[@]}" SEED=2
	mtimes "$T/out" >"$T/m1"
	[ "$(changed "$T/m0" "$T/m1")" = "translate_enzh_wmt8k-dev-00000-of-00001 $(printf 'translate_enzh_wmt8k-train-%05d-of-00010 ' $(seq 0 9))" ]
	build t2t-translate-enzh "${ENZH[@]}" SEED=2 OUT="$T/seed2"
	same_products t2t-translate-enzh "$T/out" "$T/seed2"
	# BUDGET: the vocabularies and all after them.
	build t2t-translate-enzh "${ENZH[@]}" SEED=2 BUDGET=3000
	build t2t-translate-enzh "${ENZH[@]}" SEED=2 BUDGET=3000 OUT="$T/budget"
	same_products t2t-translate-enzh "$T/out" "$T/budget"
	! cmp -s "$T/out/vocab.translate_enzh_wmt8k.8192.subwords.en" "$T/seed2/vocab.translate_enzh_wmt8k.8192.subwords.en" || false
	# Another tfr-cat binary (same name, other bytes): the shards only.
	mkdir "$T/bin"
	cp "$RECPIPE_BIN"/* "$T/bin/"
	mtimes "$T/out" >"$T/m2"
	build t2t-translate-enzh "${ENZH[@]}" SEED=2 BUDGET=3000 BIN="$T/bin"
	mtimes "$T/out" >"$T/m3"
	[ -z "$(changed "$T/m2" "$T/m3")" ]
	printf '\0' >>"$T/bin/tfr-cat"
	build t2t-translate-enzh "${ENZH[@]}" SEED=2 BUDGET=3000 BIN="$T/bin"
	mtimes "$T/out" >"$T/m4"
	[ "$(changed "$T/m3" "$T/m4")" = "translate_enzh_wmt8k-dev-00000-of-00001 $(printf 'translate_enzh_wmt8k-train-%05d-of-00010 ' $(seq 0 9))" ]
	# Another training file of the same name, older than the products.
	cp "$T/train.en" "$T/other.en"
	sed -i 's/cat/cow/' "$T/other.en"
	touch -d '2001-01-01' "$T/other.en"
	build t2t-translate-enzh "${ENZH[@]}" SRC="$T/other.en" OUT="$T/seed2"
	build t2t-translate-enzh "${ENZH[@]}" SRC="$T/other.en" OUT="$T/fresh"
	same_products t2t-translate-enzh "$T/seed2" "$T/fresh"
}

@test "t2t-translate-enzh: a part missing, or made from other options or input, stops the merge" {
	need_part subword-build subword-encode
	enzh_fixture
	stages t2t-translate-enzh "$T/base" 3 "${ENZH[@]}"
	local r=$BUILDS/t2t-translate-enzh.mk
	(cd "$T/base" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) >"$T/before"
	# part 1 of the count stage made again with another budget
	cp -a "$T/base" "$T/n3"
	make -s -f "$r" count BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 K=1 "${ENZH[@]}" BUDGET=3000
	run -2 make -s -f "$r" vocab BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 "${ENZH[@]}"
	[ "${lines[0]}" = "t2t-translate-enzh: $T/n3/parts/count.en.1-of-3: missing or out of date (made from other inputs or options than this build's): run the stage count (part 1 of 3) again" ]
	(cd "$T/n3" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) | diff "$T/before" -
	# a part missing
	rm -r "$T/n3"
	cp -a "$T/base" "$T/n3"
	rm "$T/n3/parts/train.2-of-3.tfr"
	run -2 make -s -f "$r" shards BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 "${ENZH[@]}"
	[ "${lines[0]}" = "t2t-translate-enzh: $T/n3/parts/train.2-of-3.tfr: missing or out of date (made from other inputs or options than this build's): run the stage encode (part 2 of 3) again" ]
	# the part of another build (another training text), newer
	sed 's/cat/cow/' "$T/train.en" >"$T/other.en"
	stages t2t-translate-enzh "$T/other" 3 "${ENZH[@]}" SRC="$T/other.en"
	cp "$T/other/parts/train.2-of-3.tfr" "$T/n3/parts/"
	cp "$T/other/parts/records/train.2-of-3.tfr" "$T/n3/parts/records/"
	run -2 make -s -f "$r" shards BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 "${ENZH[@]}"
	[[ ${lines[0]} == "t2t-translate-enzh: $T/n3/parts/train.2-of-3.tfr: missing or out of date"* ]]
	# nothing committed was touched
	(cd "$T/n3" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) | diff "$T/before" -
	# the part made again, the merge goes on
	make -s -f "$r" encode BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 K=2 "${ENZH[@]}"
	make -s -f "$r" shards BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 "${ENZH[@]}"
	build t2t-translate-enzh "${ENZH[@]}"
	same_products t2t-translate-enzh "$T/out" "$T/n3"
}

@test "t2t-translate-enzh: stages and products follow the recipe contract" {
	run -0 make -s -f "$BUILDS/t2t-translate-enzh.mk" stages
	[ "$output" = "$(printf 'text once\ncount parts cpus=4\nvocab once mem=8G\nencode parts cpus=4\nshards once')" ]
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	stages t2t-translate-enzh "$T/n1" 1 "${ENZH[@]}"
	same_products t2t-translate-enzh "$T/out" "$T/n1"
	# A parts stage writes only under parts/, with K and N in the names.
	[ -s "$T/n1/parts/count.en.0-of-1" ]
	[ -s "$T/n1/parts/train.0-of-1.tfr" ]
}

@test "t2t-translate-enzh: N parts give the bytes of one run, N = 2, 3, 7" {
	need_part subword-build subword-encode
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}"
	for n in 2 3 7; do
		stages t2t-translate-enzh "$T/n$n" "$n" "${ENZH[@]}"
		same_products t2t-translate-enzh "$T/out" "$T/n$n"
		[ -s "$T/n$n/parts/train.$((n - 1))-of-$n.tfr" ]
	done
}

@test "t2t-translate-enzh: a training file over the byte budget is sampled whole by the vocab stage" {
	need_part subword-build subword-encode
	enzh_fixture
	build t2t-translate-enzh "${ENZH[@]}" BUDGET=3000
	build t2t-translate-enzh "${ENZH[@]}" OUT="$T/full"
	# The budget samples a stride of the lines: another vocabulary.
	! cmp -s "$T/out/vocab.translate_enzh_wmt8k.8192.subwords.en" \
	    "$T/full/vocab.translate_enzh_wmt8k.8192.subwords.en" || false
	stages t2t-translate-enzh "$T/n3" 3 "${ENZH[@]}" BUDGET=3000
	same_products t2t-translate-enzh "$T/out" "$T/n3"
}

@test "t2t-translate-enzh: the real en-zh corpus, 10 + 1 shards, vocabularies near 8192" {
	need_shared corpus/enzh.en.xz
	need_shared corpus/multi/flores200-devtest/zho_Hans.txt.xz
	need_fast
	local f n total=0 lines
	build t2t-translate-enzh
	for f in $(make -s -f "$BUILDS/t2t-translate-enzh.mk" products); do
		[ -s "$T/out/$f" ]
	done
	for f in "$T/out"/translate_enzh_wmt8k-train-*-of-00010; do
		n=$(tfr-cat -c "$f")
		[ "$n" -ge 50053 ] && [ "$n" -le 50054 ]
		total=$((total + n))
	done
	[ "$total" -eq 500533 ]
	[ "$(tfr-cat -c "$T/out/translate_enzh_wmt8k-dev-00000-of-00001")" -eq 1012 ]
	for f in "$T/out"/vocab.translate_enzh_wmt8k.8192.subwords.*; do
		lines=$(wc -l <"$f")
		[ "$lines" -ge 7800 ] && [ "$lines" -le 8600 ]
	done
}

# Five English files (a corpus dir) of documents separated by blank
# lines, and a small BERT vocab.txt.
electra_fixture() {
	local f i
	mkdir -p "$T/corpus"
	for f in a b c d e; do
		for i in $(seq 1 40); do
			printf 'The cat sat on the mat %s %d times.\n' "$f" "$i"
			printf 'A dog ran, and a bird sang.\n'
			[ $((i % 7)) -ne 0 ] || printf '\n'
		done >"$T/corpus/$f.txt"
	done
	printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the cat sat on mat \
	    times a dog ran bird sang , . b c d e 1 2 3 4 5 6 7 8 9 0 '##1' '##2' \
	    '##3' '##4' '##5' '##6' '##7' '##8' '##9' '##0' >"$T/vocab.txt"
	ELECTRA=(CORPUS_DIR="$T/corpus" VOCAB="$T/vocab.txt" MAX_SEQ_LENGTH=32)
}

@test "electra-pretrain: pretrain_data.tfrecord-I-of-1000, each job its own files" {
	electra_fixture
	run -0 make -s -f "$BUILDS/electra-pretrain.mk" products
	[ "${#lines[@]}" -eq 1000 ]
	[ "${lines[0]}" = pretrain_data.tfrecord-0-of-1000 ]
	[ "${lines[999]}" = pretrain_data.tfrecord-999-of-1000 ]
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=10
	run -0 make -s -f "$BUILDS/electra-pretrain.mk" products OUT_FILES=10 PROCS=2
	[ "${#lines[@]}" -eq 10 ]
	for p in "${lines[@]}"; do
		[ -s "$T/out/$p" ]
	done
	# Every example: [CLS] first, three features of the length.
	tfr-cat --flat "$T/out"/pretrain_data.tfrecord-*-of-10 >"$T/all.jsonl"
	[ "$(jq -c '[keys, (.input_ids | length), (.input_mask | length), (.segment_ids | length), .input_ids[0]]' \
	    "$T/all.jsonl" | sort -u)" = '[["input_ids","input_mask","segment_ids"],32,32,32,2]' ]
	# Job 0 has files a, c, e and writes files 0, 2, ... 8 round-robin:
	# its examples are those of its files, in that order.
	for f in a c e; do
		subword-encode -m wordpiece --rules electra -v "$T/vocab.txt" -o "$T/$f.tfr" "$T/corpus/$f.txt"
	done
	pack-encdec -C electra --max-seq-length 32 --cls-id 2 --sep-id 3 "$T"/{a,c,e}.tfr |
	    tfr-cat -R --split 5 -o "$T/want-%d"
	for i in 0 1 2 3 4; do
		cmp "$T/want-$i" "$T/out/pretrain_data.tfrecord-$((2 * i))-of-10"
	done
	! cmp -s "$T/out/pretrain_data.tfrecord-0-of-10" "$T/out/pretrain_data.tfrecord-1-of-10"
}

@test "electra-pretrain: a job without files writes empty files, as ELECTRA's does" {
	electra_fixture
	build electra-pretrain "${ELECTRA[@]}" PROCS=6 OUT_FILES=12
	[ -s "$T/out/pretrain_data.tfrecord-4-of-12" ]
	[ -e "$T/out/pretrain_data.tfrecord-5-of-12" ]
	[ ! -s "$T/out/pretrain_data.tfrecord-5-of-12" ]
	[ ! -s "$T/out/pretrain_data.tfrecord-11-of-12" ]
}

@test "electra-pretrain: touching one corpus file rebuilds only its job" {
	electra_fixture
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6
	mtimes "$T/out" >"$T/m0"
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6
	mtimes "$T/out" >"$T/m1"
	[ -z "$(changed "$T/m0" "$T/m1")" ]
	touch "$T/corpus/b.txt"
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6
	mtimes "$T/out" >"$T/m2"
	[ "$(changed "$T/m1" "$T/m2")" = "parts/ids/b.tfr parts/job-1-of-2.done parts/job-1-of-2/00000 parts/job-1-of-2/00001 parts/job-1-of-2/00002 pretrain_data.tfrecord-1-of-6 pretrain_data.tfrecord-3-of-6 pretrain_data.tfrecord-5-of-6 " ]
}

@test "electra-pretrain: the stages give the bytes of one run for any N" {
	run -0 make -s -f "$BUILDS/electra-pretrain.mk" stages
	[ "$output" = "$(printf 'examples parts\nshards once')" ]
	electra_fixture
	build electra-pretrain "${ELECTRA[@]}" PROCS=3 OUT_FILES=9
	for n in 1 2 3 4; do
		stages electra-pretrain "$T/n$n" "$n" "${ELECTRA[@]}" PROCS=3 OUT_FILES=9
		same_products electra-pretrain "$T/out" "$T/n$n" PROCS=3 OUT_FILES=9
	done
	# Another number of jobs is another data set, as in ELECTRA.
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=9 OUT="$T/p2"
	! cmp -s "$T/out/pretrain_data.tfrecord-1-of-9" "$T/p2/pretrain_data.tfrecord-1-of-9"
}

@test "electra-pretrain: a corpus file name never reaches a shell unquoted" {
	electra_fixture
	local r=$BUILDS/electra-pretrain.mk name
	cd "$T"
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=4 OUT="$T/plain"
	# quotes and backticks are characters like others
	mv "$T/corpus/b.txt" "$T/corpus/b'it\`s\`\"q\".txt"
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=4
	same_products electra-pretrain "$T/plain" "$T/out" PROCS=2 OUT_FILES=4
	# names make cannot take are refused, naming them, before anything runs
	for name in 'x;touch PWNED;.txt' 'a b.txt' 'x$(shell touch PWNED).txt' "$(printf 'new\nline.txt')" \
	    'x`touch PWNED`$(touch PWNED).txt'; do
		: >"$T/corpus/$name"
		run -2 make -n -f "$r" "${ELECTRA[@]}" OUT="$T/dry"
		[[ ${lines[0]} == *"*** electra-pretrain: $T/corpus/"*": a name with white space or one of"*"cannot be used by make.  Stop." ]]
		run -2 make -s -f "$r" products "${ELECTRA[@]}"
		run -1 "$BATS_TEST_DIRNAME/../scripts/cluster/slurm-build" -n -o "$T/dry" "$r" "${ELECTRA[@]}"
		command -v parallel >/dev/null || continue
		run -1 "$BATS_TEST_DIRNAME/../scripts/cluster/parallel-build" -n -o "$T/dry" "$r" "${ELECTRA[@]}"
		[[ $output == *"electra-pretrain: $T/corpus/"*": a name with white space"* ]]
		rm "$T/corpus/$name"
		[ ! -e PWNED ]
	done
	[ ! -e "$T/dry" ] || [ -z "$(find "$T/dry" -type f ! -path '*/logs/*')" ]
}

@test "electra-pretrain: a changed value or corpus remakes exactly the jobs made with it" {
	electra_fixture
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5 OUT="$T/seed5"
	same_products electra-pretrain "$T/out" "$T/seed5" PROCS=2 OUT_FILES=6
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5 MAX_SEQ_LENGTH=24 LOWER=0
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5 MAX_SEQ_LENGTH=24 LOWER=0 OUT="$T/len24"
	same_products electra-pretrain "$T/out" "$T/len24" PROCS=2 OUT_FILES=6
	# a file gone from the corpus: its job only
	mtimes "$T/out" >"$T/m0"
	rm "$T/corpus/e.txt"
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5 MAX_SEQ_LENGTH=24 LOWER=0
	mtimes "$T/out" >"$T/m1"
	[ "$(changed "$T/m0" "$T/m1")" = "parts/job-0-of-2.done parts/job-0-of-2/00000 parts/job-0-of-2/00001 parts/job-0-of-2/00002 pretrain_data.tfrecord-0-of-6 pretrain_data.tfrecord-2-of-6 pretrain_data.tfrecord-4-of-6 " ]
	build electra-pretrain "${ELECTRA[@]}" PROCS=2 OUT_FILES=6 SEED=5 MAX_SEQ_LENGTH=24 LOWER=0 OUT="$T/four"
	same_products electra-pretrain "$T/out" "$T/four" PROCS=2 OUT_FILES=6
}

@test "electra-pretrain: a job missing or made with another seed stops the shards stage" {
	electra_fixture
	local r=$BUILDS/electra-pretrain.mk
	stages electra-pretrain "$T/n2" 2 "${ELECTRA[@]}" PROCS=3 OUT_FILES=6
	(cd "$T/n2" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) >"$T/before"
	make -s -f "$r" examples BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 K=1 "${ELECTRA[@]}" PROCS=3 OUT_FILES=6 SEED=4
	run -2 make -s -f "$r" shards BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 "${ELECTRA[@]}" PROCS=3 OUT_FILES=6
	[ "${lines[0]}" = "electra-pretrain: $T/n2/parts/job-1-of-3.done: missing or out of date (made from other inputs or options than this build's): run the stage examples (part 1 of 2) again" ]
	rm "$T/n2/parts/job-2-of-3.done"
	run -2 make -s -f "$r" shards BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 "${ELECTRA[@]}" PROCS=3 OUT_FILES=6 SEED=4
	[ "${lines[0]}" = "electra-pretrain: $T/n2/parts/job-0-of-3.done: missing or out of date (made from other inputs or options than this build's): run the stage examples (part 0 of 2) again" ]
	(cd "$T/n2" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) | diff "$T/before" -
}

@test "electra-pretrain: English text and BERT's uncased vocab.txt" {
	need_shared corpus/en-gutenberg.txt.xz
	need_shared wordpiece-vocabs/bert-base-uncased-vocab.txt
	need_fast
	mkdir "$T/corpus"
	xz -dc "$SHARED/corpus/en-gutenberg.txt.xz" | head -n 20000 >"$T/en.txt"
	split -n l/4 -d "$T/en.txt" "$T/corpus/part-"
	build electra-pretrain CORPUS_DIR="$T/corpus" PROCS=2
	local n
	n=$(tfr-cat -c "$T/out"/pretrain_data.tfrecord-*-of-1000 | awk 'END { print $1 }')
	[ "$n" -gt 5000 ]
	[ "$(tfr-cat -c "$T/out/pretrain_data.tfrecord-999-of-1000")" -gt 0 ]
	[ "$(tfr-cat --flat "$T/out"/pretrain_data.tfrecord-1*-of-1000 |
	    jq -c '[(.input_ids | length), .input_ids[0], (.input_ids | index(102) > 0)]' |
	    sort -u)" = '[128,101,true]' ]
}

# Three line-parallel languages of 61 lines: aa (words), bb (the same
# words reversed), cc (numbers spelled out), the last in a .xz file.
nllb_fixture() {
	local i
	mkdir -p "$T/text"
	for i in $(seq 1 61); do
		printf 'the cat %d sat on the mat and the dog ran\n' "$i"
	done >"$T/text/aa.txt"
	rev "$T/text/aa.txt" >"$T/text/bb.txt"
	for i in $(seq 1 61); do
		printf 'number %d of %d is here %d\n' "$i" "$((i * 7))" "$((i % 5))"
	done >"$T/cc.txt"
	xz -c "$T/cc.txt" >"$T/text/cc.txt.xz"
	NLLB=(TEXT="$T/text" PAIRS="aa-bb aa-cc cc-bb" SHARDS=2 VOCAB_SIZE=200 MAX_TOKENS=256 LINES_gu-lv=)
}

@test "nllb: data_bin/shardNNN/train.SRC-TGT.LANG for every direction, dict.txt with language tokens" {
	nllb_fixture
	build nllb "${NLLB[@]}"
	run -0 make -s -f "$BUILDS/nllb.mk" products "${NLLB[@]}"
	[ "${#lines[@]}" -eq 28 ]
	[ "${lines[0]}" = vocab.subwords ]
	[ "${lines[1]}" = data_bin/dict.txt ]
	for p in "${lines[@]}"; do
		[ -s "$T/out/$p" ]
	done
	local s f
	for s in 000 001; do
		for f in aa-bb.aa aa-bb.bb aa-cc.aa aa-cc.cc cc-bb.cc cc-bb.bb; do
			mmap-index verify "$T/out/data_bin/shard$s/train.$f"
		done
	done
	# Line i goes to shard i mod 2: 31 and 30 sentences.
	mmap-index info "$T/out/data_bin/shard000/train.aa-cc.cc" | grep -q '^sequences: *31$'
	mmap-index info "$T/out/data_bin/shard001/train.aa-cc.cc" | grep -q '^sequences: *30$'
	# The dictionary: the pieces' words, padded, then the languages.
	[ "$(tail -3 "$T/out/data_bin/dict.txt")" = "$(printf '__aa__ 1\n__bb__ 1\n__cc__ 1')" ]
	# Sentence 1 of shard 1 is line 2: its pieces' ids (line n of the
	# dictionary is id n + 3), then </s>.
	local want
	want=$(sed -n 2p "$T/cc.txt" | subword-encode -v "$T/out/vocab.subwords" --output-format piece |
	    tr ' ' '\n' | grep . | while read -r w; do
		awk -v w="$w" '$1 == w { print NR + 3; exit }' "$T/out/data_bin/dict.txt"
	    done | tr '\n' ' ')
	[ "$(mmap-index cat --output-format id --range 0:1 "$T/out/data_bin/shard001/train.cc-bb.cc")" = "${want}2" ]
}

@test "nllb: batches over both shards, temperature sampling, statistics per epoch" {
	nllb_fixture
	build nllb "${NLLB[@]}"
	local d=$T/out
	grep -q '^epoch 1: 93 sentences in 3 pairs' "$d/batches.stats"
	grep -q '^epoch 2: 90 sentences in 3 pairs' "$d/batches.stats"
	# Each epoch holds the sentences of its shard once, less the last
	# batch when it is not a multiple of 8 (fairseq main drops it):
	# translation_multi_simple_epoch's rules, as Open-NLLB trains.
	n1=$(jq -c 'select(.epoch == 1) | .ids[]' "$d/batches.jsonl" | wc -l)
	[ "$(jq -c 'select(.epoch == 1) | .ids[]' "$d/batches.jsonl" | sort -u | wc -l)" -eq "$n1" ]
	[ "$n1" -le 93 ] && [ "$n1" -gt 80 ]
	[ "$(jq -c 'select(.epoch == 2) | .ids[]' "$d/batches.jsonl" | wc -l)" -le 90 ]
	[ "$(jq -c '.ids | length' "$d/batches.jsonl" | awk '$1 % 8 { n++ } END { print n + 0 }')" -eq 0 ]
	# The batches are batch-sample's over the layout, language tokens on.
	batch-sample batches -q --lang-pairs aa-bb,aa-cc,cc-bb --sampling-method temperature \
	    --task translation_multi_simple_epoch \
	    --encoder-langtok src --decoder-langtok --dict "$d/data_bin/dict.txt" \
	    --max-tokens 256 --epochs 2 "$d/data_bin/shard000:$d/data_bin/shard001" >"$T/want"
	cmp "$T/want" "$d/batches.jsonl"
}

@test "nllb: LINES_SRC-TGT takes the first lines only, and temperature sampling draws it more" {
	nllb_fixture
	build nllb "${NLLB[@]}" OUT="$T/whole"
	build nllb "${NLLB[@]}" LINES_cc-bb=25
	local d=$T/out w=$T/whole
	# Lines 0 .. 24: 13 in shard 0, 12 in shard 1, the first ones.
	mmap-index info "$d/data_bin/shard000/train.cc-bb.bb" | grep -q '^sequences: *13$'
	mmap-index info "$d/data_bin/shard001/train.cc-bb.cc" | grep -q '^sequences: *12$'
	[ "$(mmap-index cat --output-format id "$d/data_bin/shard001/train.cc-bb.cc")" = \
	    "$(mmap-index cat --output-format id --range 0:12 "$w/data_bin/shard001/train.cc-bb.cc")" ]
	cmp "$d/data_bin/shard001/train.aa-cc.cc.bin" "$w/data_bin/shard001/train.aa-cc.cc.bin"
	# Sampled at temperature 1.5, the small pair is drawn more than its size.
	run -0 grep -m1 '^ *2 cc-bb' "$d/batches.stats"
	read -r _ _ size _ _ drawn _ <<<"$output"
	[ "$size" -eq 13 ] && [ "$drawn" -gt 13 ]
	# The stages cut it the same way.
	stages nllb "$T/n3" 3 "${NLLB[@]}" LINES_cc-bb=25
	same_products nllb "$d" "$T/n3" "${NLLB[@]}" LINES_cc-bb=25
}

@test "nllb: with a fixed vocabulary and dictionary, one language rebuilds only its files" {
	nllb_fixture
	build nllb "${NLLB[@]}" OUT="$T/first"
	head -n -3 "$T/first/data_bin/dict.txt" >"$T/words.txt"
	build nllb "${NLLB[@]}" VOCAB="$T/first/vocab.subwords" DICT="$T/words.txt"
	same_products nllb "$T/first" "$T/out" "${NLLB[@]}" VOCAB="$T/first/vocab.subwords"
	mtimes "$T/out" >"$T/m0"
	touch "$T/text/cc.txt.xz"
	build nllb "${NLLB[@]}" VOCAB="$T/first/vocab.subwords" DICT="$T/words.txt"
	mtimes "$T/out" >"$T/m1"
	[ "$(changed "$T/m0" "$T/m1")" = "batches.jsonl batches.stats data_bin/shard000/train.aa-cc.cc.bin data_bin/shard000/train.aa-cc.cc.idx data_bin/shard000/train.cc-bb.cc.bin data_bin/shard000/train.cc-bb.cc.idx data_bin/shard001/train.aa-cc.cc.bin data_bin/shard001/train.aa-cc.cc.idx data_bin/shard001/train.cc-bb.cc.bin data_bin/shard001/train.cc-bb.cc.idx text/cc.s000.pieces text/cc.s000.txt text/cc.s001.pieces text/cc.s001.txt text/cc.txt " ]
	# Without them, nothing is rebuilt when nothing changed.
	build nllb "${NLLB[@]}" OUT="$T/first"
	mtimes "$T/first" >"$T/f0"
	build nllb "${NLLB[@]}" OUT="$T/first"
	mtimes "$T/first" >"$T/f1"
	[ -z "$(changed "$T/f0" "$T/f1")" ]
}

@test "nllb: a changed value remakes exactly what was made with it, as a fresh build makes it" {
	nllb_fixture
	build nllb "${NLLB[@]}"
	mtimes "$T/out" >"$T/m0"
	build nllb "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128
	mtimes "$T/out" >"$T/m1"
	[ "$(changed "$T/m0" "$T/m1")" = "batches.jsonl batches.stats " ]
	build nllb "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128 LINES_cc-bb=25
	mtimes "$T/out" >"$T/m2"
	[ "$(changed "$T/m1" "$T/m2")" = "batches.jsonl batches.stats data_bin/shard000/train.cc-bb.bb.bin data_bin/shard000/train.cc-bb.bb.idx data_bin/shard000/train.cc-bb.cc.bin data_bin/shard000/train.cc-bb.cc.idx data_bin/shard001/train.cc-bb.bb.bin data_bin/shard001/train.cc-bb.bb.idx data_bin/shard001/train.cc-bb.cc.bin data_bin/shard001/train.cc-bb.cc.idx " ]
	build nllb "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128 LINES_cc-bb=25 OUT="$T/fresh"
	same_products nllb "$T/out" "$T/fresh" "${NLLB[@]}"
	# the vocabulary size, the seed, the directions: all that follows them
	build nllb "${NLLB[@]}" VOCAB_SIZE=150 SEED=3 PAIRS="aa-bb cc-bb"
	build nllb "${NLLB[@]}" VOCAB_SIZE=150 SEED=3 PAIRS="aa-bb cc-bb" OUT="$T/fresh2"
	same_products nllb "$T/out" "$T/fresh2" "${NLLB[@]}" PAIRS="aa-bb cc-bb"
	! cmp -s "$T/out/vocab.subwords" "$T/fresh/vocab.subwords" || false
	# and the same through the stages
	stages nllb "$T/n2" 2 "${NLLB[@]}"
	stages nllb "$T/n2" 2 "${NLLB[@]}" VOCAB_SIZE=150 SEED=3 PAIRS="aa-bb cc-bb"
	same_products nllb "$T/n2" "$T/fresh2" "${NLLB[@]}" PAIRS="aa-bb cc-bb"
}

@test "nllb: names and values are checked before make expands them" {
	nllb_fixture
	cd "$T"
	local r=$BUILDS/nllb.mk v
	for v in 'OUT=a b' 'OUT=o$(shell touch PWNED)' 'TEXT=x;touch PWNED;' 'SEED=1;touch PWNED' \
	    'PAIRS=aa-bb;touch${IFS}PWNED' 'TEMPERATURE=1.5`touch PWNED`' 'LINES_aa-bb=$(shell touch PWNED)' \
	    'MAX_TOKENS=$(shell touch PWNED)' 'OUT=~/x' 'SPM=$(shell touch PWNED)' 'SPM=2' \
	    'SPM_MODEL=$(shell touch PWNED)' 'SPM_TYPE=bpe;touch${IFS}PWNED' 'SPM_THREADS=$(shell touch PWNED)' \
	    'SPM_TRAIN=$(shell touch PWNED)' 'BIN=$(shell touch PWNED)'; do
		for spm in SPM= SPM=1; do
			[ "${v%%=*}" != SPM ] || [ "$spm" = SPM= ] || continue
			run -2 make -s -n -f "$r" "${NLLB[@]}" "$spm" "$v"
			[ "${#lines[@]}" -eq 1 ]
			[[ ${lines[0]} == *"*** nllb: "*"${v%%=*}"* ]]
			run -2 make -s -f "$r" products "${NLLB[@]}" "$spm" "$v"
			[ ! -e PWNED ]
		done
	done
	# a SentencePiece build takes no tensor2tensor vocabulary, and has no
	# count stage
	run -2 make -s -n -f "$r" "${NLLB[@]}" SPM=0 SPM_MODEL=m.model
	[[ ${lines[0]} == *"*** nllb: SPM=0 and SPM_MODEL=m.model: a model is SentencePiece"* ]]
	run -2 make -s -n -f "$r" "${NLLB[@]}" SPM=1 VOCAB=v.subwords
	[[ ${lines[0]} == *"*** nllb: VOCAB=v.subwords: a tensor2tensor vocabulary"* ]]
	run -2 make -s -n -f "$r" count "${NLLB[@]}" SPM_MODEL=m.model
	[[ ${lines[0]} == *"*** nllb: count: no stage of the SentencePiece build"* ]]
	# a quote is a character like another
	build nllb "${NLLB[@]}" OUT="$T/it's\"q\"\`b\`"
	build nllb "${NLLB[@]}"
	same_products nllb "$T/out" "$T/it's\"q\"\`b\`" "${NLLB[@]}"
	[ ! -e PWNED ]
}

@test "recipes: a link planted in OUT at a temporary's name is not written through" {
	nllb_fixture
	enzh_fixture
	echo precious >"$T/victim"
	local f
	mkdir -p "$T/out/text" "$T/out/data_bin" "$T/t2t/text"
	for f in text/aa.txt.tmp text/cc.txt.tmp text/aa.s000.txt.tmp text/cc.s001.txt.tmp \
	    data_bin/dict.txt.tmp data_bin/dict.txt.words batches.jsonl.tmp batches.stats.tmp; do
		ln -s "$T/victim" "$T/out/$f"
	done
	build nllb "${NLLB[@]}"
	build nllb "${NLLB[@]}" OUT="$T/clean"
	same_products nllb "$T/out" "$T/clean" "${NLLB[@]}"
	xz -k "$T/train.en"
	for f in text/train.en.tmp text/train.tsv.tmp text/dev.tsv.tmp; do
		ln -s "$T/victim" "$T/t2t/text/${f#text/}"
	done
	build t2t-translate-enzh "${ENZH[@]}" SRC="$T/train.en.xz" OUT="$T/t2t"
	[ "$(cat "$T/victim")" = precious ]
	# and no temporary is left behind
	find "$T/out" "$T/t2t" -name '*.??????' >"$T/left"
	! grep -v '\.[a-z]*$' "$T/left"
}

@test "nllb: the stages give the bytes of one run" {
	run -0 make -s -f "$BUILDS/nllb.mk" stages
	[ "$output" = "$(printf 'text once\ncount parts cpus=4\nvocab once mem=8G\npieces parts cpus=4\ndict once\nbin parts cpus=4\ndata once')" ]
	nllb_fixture
	build nllb "${NLLB[@]}"
	stages nllb "$T/n1" 1 "${NLLB[@]}"
	same_products nllb "$T/out" "$T/n1" "${NLLB[@]}"
	[ -s "$T/n1/parts/cc.s001.0-of-1.idx" ]
}

@test "nllb: a part missing or made with other options stops the merge; nothing committed is touched" {
	need_part subword-build subword-encode
	nllb_fixture
	local r=$BUILDS/nllb.mk
	stages nllb "$T/n2" 2 "${NLLB[@]}"
	(cd "$T/n2" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) >"$T/before"
	rm "$T/n2/parts/cc.s001.1-of-2.idx"
	run -2 make -s -f "$r" data BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 "${NLLB[@]}" TEMPERATURE=3
	[ "${lines[0]}" = "nllb: $T/n2/parts/cc.s001.1-of-2.idx: missing or out of date (made from other inputs or options than this build's): run the stage bin (part 1 of 2) again" ]
	make -s -f "$r" bin BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 K=1 "${NLLB[@]}"
	# the pieces of part 0 made again with another vocabulary
	cp "$T/n2/vocab.subwords" "$T/vocab2"
	make -s -f "$r" pieces BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 K=0 "${NLLB[@]}" VOCAB="$T/vocab2"
	run -2 make -s -f "$r" dict BIN="$RECPIPE_BIN" OUT="$T/n2" N=2 "${NLLB[@]}"
	[[ ${lines[0]} == "nllb: $T/n2/parts/"*".0-of-2.pieces: missing or out of date"*"run the stage pieces (part 0 of 2) again" ]]
	(cd "$T/n2" && find . -type f ! -path './parts/*' -exec cksum {} + | sort) | diff "$T/before" -
}

@test "nllb: N parts give the bytes of one run, N = 2, 3, 7" {
	need_part subword-build subword-encode
	nllb_fixture
	build nllb "${NLLB[@]}"
	for n in 2 3 7; do
		stages nllb "$T/n$n" "$n" "${NLLB[@]}"
		same_products nllb "$T/out" "$T/n$n" "${NLLB[@]}"
	done
}

# A SentencePiece model of the nllb fixture's three languages, trained
# here by spm_train (80 pieces, about all the text holds), else the
# shared vectors' unigram model; NLLB_SPM: the fixture's values for the
# SentencePiece build.
nllb_model() {
	if command -v spm_train >/dev/null; then
		xz -dc "$T/text/cc.txt.xz" | cat "$T/text/aa.txt" "$T/text/bb.txt" - >"$T/all.txt"
		(cd "$T" && spm_train --input=all.txt --model_prefix=m --vocab_size=80 \
		    --minloglevel=2 >/dev/null 2>&1)
		M=$T/m.model
	elif [ -e "$VEC/spm/models/uni.model" ]; then
		M=$VEC/spm/models/uni.model
	else
		skip "neither spm_train nor ../shared/vectors/spm"
	fi
	NLLB_SPM=("${NLLB[@]}" VOCAB_SIZE=80)
}

# nllb_like_spm_encode DIR MODEL PAIRS...: the products of DIR are what
# spm_encode --output_format=piece makes of the fixture's text (line i of
# each language in shard i mod 2, dealt here again), binarized through the
# dictionary by mmap-index build --input-format text (fairseq-preprocess
# --srcdict, as the binarize vectors show), and the dictionary is the
# joined dictionary of those pieces, then the language tokens.
nllb_like_spm_encode() {
	local d=$1 m=$2 s p l langs
	shift 2
	langs=$(printf '%s\n' "$@" | tr '-' '\n' | sort -u)
	for l in $langs; do
		if [ -e "$T/text/$l.txt" ]; then cat "$T/text/$l.txt"; else xz -dc "$T/text/$l.txt.xz"; fi >"$T/$l.raw"
		sed -n '1~2p' "$T/$l.raw" | spm_encode --model="$m" --output_format=piece >"$T/$l.s000.pieces"
		sed -n '2~2p' "$T/$l.raw" | spm_encode --model="$m" --output_format=piece >"$T/$l.s001.pieces"
	done
	{ mmap-index dict -q $(for l in $langs; do echo "$T/$l.s000.pieces" "$T/$l.s001.pieces"; done) &&
	    printf '__%s__ 1\n' $langs; } >"$T/dict.txt"
	cmp "$T/dict.txt" "$d/data_bin/dict.txt"
	for s in 000 001; do
		for p; do
			for l in ${p%-*} ${p#*-}; do
				mmap-index build -q --input-format text --dict "$T/dict.txt" -o "$T/want" "$T/$l.s$s.pieces"
				cmp "$T/want.bin" "$d/data_bin/shard$s/train.$p.$l.bin"
				cmp "$T/want.idx" "$d/data_bin/shard$s/train.$p.$l.idx"
			done
		done
	done
}

@test "nllb: SPM=1 trains spm.model with spm_train; the datasets are spm_encode's pieces, binarized" {
	command -v spm_train >/dev/null || skip "spm_train not installed"
	command -v spm_encode >/dev/null || skip "spm_encode not installed"
	nllb_fixture
	nllb_model
	# a fourth language of lines as spm_encode reads them: a CR, tabs,
	# runs of spaces, an empty line, full-width letters (NFKC), a NUL
	local i
	for i in $(seq 1 61); do
		case $((i % 6)) in
		0) printf 'line\t%d  of \xef\xbc\xa1\xef\xbc\xa2\r\n' "$i" ;;
		1) printf '  the cat %d  \n' "$i" ;;
		2) printf '\n' ;;
		3) printf 'caf\xc3\xa9 %d\x00x\n' "$i" ;;
		*) printf 'the dog %d ran\n' "$i" ;;
		esac
	done >"$T/text/dd.txt"
	NLLB_SPM+=(PAIRS="aa-bb aa-cc cc-bb dd-aa")
	build nllb "${NLLB_SPM[@]}" SPM=1
	run -0 make -s -f "$BUILDS/nllb.mk" products "${NLLB_SPM[@]}" SPM=1
	[ "${#lines[@]}" -eq 37 ]
	[ "${lines[0]} ${lines[1]} ${lines[2]}" = "spm.model spm.vocab data_bin/dict.txt" ]
	[ ! -e "$T/out/vocab.subwords" ]
	nllb_like_spm_encode "$T/out" "$T/out/spm.model" aa-bb aa-cc cc-bb dd-aa
	mmap-index info "$T/out/data_bin/shard000/train.dd-aa.dd" | grep -q '^sequences: *31$'
	[ "$(sed -n 2p "$T/out/spm.vocab" | cut -f1)" = "<s>" ]
	[ "$(wc -l <"$T/out/spm.vocab")" -eq 80 ]
	# the plan has no count stage; its parts give the bytes of one run
	run -0 make -s -f "$BUILDS/nllb.mk" stages SPM=1
	[ "$output" = "$(printf 'text once\nvocab once cpus=16 mem=8G\npieces parts cpus=4\ndict once\nbin parts cpus=4\ndata once')" ]
	stages nllb "$T/n3" 3 "${NLLB_SPM[@]}" SPM=1
	same_products nllb "$T/out" "$T/n3" "${NLLB_SPM[@]}" SPM=1
	# the model records its trainer's values, and what spm_train says
	# when they do not fit the text is one line, with nothing left behind
	grep -q "^SPM_TYPE='unigram' VOCAB_SIZE='80' SPM_THREADS='16' LANGS='aa bb cc dd' spm_train:[0-9a-f]\{64\}\$" \
	    "$T/out/records/spm.model"
	run -2 --separate-stderr make -s -f "$BUILDS/nllb.mk" BIN="$RECPIPE_BIN" OUT="$T/big" "${NLLB_SPM[@]}" SPM=1 VOCAB_SIZE=5000
	[[ ${stderr_lines[0]} == "nllb: spm_train: "*"Vocabulary size too high (5000)"* ]]
	[ -z "$(find "$T/big" -name 'spm*')" ]
}

@test "nllb: SPM_MODEL=model: N parts give the bytes of one run (N = 1, 2, 3, DICT= too); a part of another model stops the merge" {
	need_part subword-encode
	nllb_fixture
	nllb_model
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$M"
	run -0 make -s -f "$BUILDS/nllb.mk" products "${NLLB_SPM[@]}" SPM_MODEL="$M"
	[ "${#lines[@]}" -eq 27 ]
	[ "${lines[0]}" = data_bin/dict.txt ]
	[ ! -e "$T/out/spm.model" ]
	if command -v spm_encode >/dev/null; then
		nllb_like_spm_encode "$T/out" "$M" aa-bb aa-cc cc-bb
	fi
	for n in 1 2 3; do
		stages nllb "$T/n$n" "$n" "${NLLB_SPM[@]}" SPM_MODEL="$M"
		same_products nllb "$T/out" "$T/n$n" "${NLLB_SPM[@]}" SPM_MODEL="$M"
	done
	# a part encoded with another model stops the dictionary, naming it
	cp "$M" "$T/other.model"
	make -s -f "$BUILDS/nllb.mk" pieces BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 K=0 "${NLLB_SPM[@]}" SPM_MODEL="$T/other.model"
	run -2 make -s -f "$BUILDS/nllb.mk" dict BIN="$RECPIPE_BIN" OUT="$T/n3" N=3 "${NLLB_SPM[@]}" SPM_MODEL="$M"
	[[ ${lines[0]} == "nllb: $T/n3/parts/"*".0-of-3.pieces: missing or out of date"*"run the stage pieces (part 0 of 3) again" ]]
	# a fixed dictionary (Open-NLLB's): the same ids from it
	head -n -3 "$T/out/data_bin/dict.txt" >"$T/fixed.txt"
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$M" DICT="$T/fixed.txt" OUT="$T/fixed"
	same_products nllb "$T/out" "$T/fixed" "${NLLB_SPM[@]}" SPM_MODEL="$M"
	stages nllb "$T/fixed2" 2 "${NLLB_SPM[@]}" SPM_MODEL="$M" DICT="$T/fixed.txt"
	same_products nllb "$T/out" "$T/fixed2" "${NLLB_SPM[@]}" SPM_MODEL="$M"
}

@test "nllb: SPM_MODEL is recorded: another model remakes what it encodes, as a fresh build makes it" {
	nllb_fixture
	nllb_model
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$M"
	mtimes "$T/out" >"$T/m0"
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$M"
	mtimes "$T/out" >"$T/m1"
	[ -z "$(changed "$T/m0" "$T/m1")" ]
	grep -qF "SPM_MODEL='$M' VOCAB_FILE='$M' subword-encode:" "$T/out/records/text/aa.s000.pieces"
	# the same model under another name, its time kept: the pieces are
	# made again (and equal), so nothing after them changes bytes
	cp -p "$M" "$T/other.model"
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$T/other.model"
	mtimes "$T/out" >"$T/m2"
	[ "$(changed "$T/m1" "$T/m2" | tr ' ' '\n' | grep -c '\.pieces$')" -eq 6 ]
	build nllb "${NLLB_SPM[@]}" SPM_MODEL="$T/other.model" OUT="$T/fresh"
	same_products nllb "$T/out" "$T/fresh" "${NLLB_SPM[@]}" SPM_MODEL="$T/other.model"
	# tensor2tensor subwords again in the same OUT: today's bytes
	build nllb "${NLLB[@]}"
	build nllb "${NLLB[@]}" OUT="$T/t2t"
	same_products nllb "$T/out" "$T/t2t" "${NLLB[@]}"
	# a model trained here: another SPM_TYPE trains it again
	if command -v spm_train >/dev/null; then
		build nllb "${NLLB_SPM[@]}" SPM=1
		mtimes "$T/out" >"$T/m3"
		build nllb "${NLLB_SPM[@]}" SPM=1 SPM_TYPE=bpe
		mtimes "$T/out" >"$T/m4"
		[[ " $(changed "$T/m3" "$T/m4") " == *" spm.model spm.vocab "* ]]
		build nllb "${NLLB_SPM[@]}" SPM=1 SPM_TYPE=bpe OUT="$T/fresh-bpe"
		same_products nllb "$T/out" "$T/fresh-bpe" "${NLLB_SPM[@]}" SPM=1 SPM_TYPE=bpe
	fi
}

@test "nllb: the New Testament in five languages, two shards" {
	need_shared corpus/multi/bible-nt/uk.txt.xz
	need_fast
	build nllb
	local s f
	for s in 000 001; do
		for f in uk-eu.uk uk-eu.eu uk-lv.uk uk-lv.lv zu-uk.zu zu-uk.uk; do
			mmap-index info "$T/out/data_bin/shard$s/train.$f" | grep -q '^sequences: *3297$'
		done
	done
	# gu-lv takes its first 1000 lines only.
	mmap-index info "$T/out/data_bin/shard001/train.gu-lv.gu" | grep -q '^sequences: *500$'
	[ "$(grep -c '^__' "$T/out/data_bin/dict.txt")" -eq 5 ]
	grep -q '^epoch 2: 10391 sentences in 4 pairs' "$T/out/batches.stats"
}

@test "nllb: FLORES-200 devtest, English to three languages" {
	need_shared corpus/multi/flores200-devtest/eng_Latn.txt.xz
	need_fast
	build nllb TEXT="$SHARED/corpus/multi/flores200-devtest" SHARDS=1 \
	    PAIRS="eng_Latn-fra_Latn eng_Latn-zho_Hans eng_Latn-hin_Deva"
	mmap-index info "$T/out/data_bin/shard000/train.eng_Latn-zho_Hans.zho_Hans" |
	    grep -q '^sequences: *1012$'
	[ "$(tail -4 "$T/out/data_bin/dict.txt" | cut -d' ' -f1 | tr '\n' ' ')" = "__eng_Latn__ __fra_Latn__ __hin_Deva__ __zho_Hans__ " ]
	grep -q '^epoch 1: 3036 sentences in 3 pairs' "$T/out/batches.stats"
}
