# Every tool's named output follows its suffix: records for .tfrecord,
# .tfrecords, .tfr and -NNNNN-of-NNNNN shard names, gzip for .gz, text
# otherwise; or the tool refuses with the reason before any work.
load common

setup() {
	printf '%s\n' '{"targets":[5,6,7]}' '{"targets":[1]}' |
	    tfr-cat --from-json -o "$T/in.tfr"
	printf 'the cat sat on the mat\nthe dog sat\n' >"$T/c.txt"
	subword-build -q --min-count 1 -o "$T/v" "$T/c.txt"
}

@test "outputs: tfr-cat -o copy.tfrecord without -R writes records" {
	run -0 --separate-stderr tfr-cat -o "$T/copy.tfrecord" "$T/in.tfr"
	[ -z "$stderr" ]
	cmp "$T/in.tfr" "$T/copy.tfrecord"
	tfr-cat -o "$T/copy.tfrecords.gz" "$T/in.tfr"
	[ "$(od -An -tx1 -N2 "$T/copy.tfrecords.gz" | tr -d ' ')" = 1f8b ]
	tfr-cat -o "$T/train-00000-of-00001" "$T/in.tfr"
	cmp "$T/in.tfr" "$T/train-00000-of-00001"
	# other names keep JSON
	tfr-cat -o "$T/out.json" "$T/in.tfr"
	[ "$(head -c1 "$T/out.json")" = "{" ]
}

@test "outputs: text into a record name and records into a text name are refused" {
	run -2 --separate-stderr tfr-cat --flat -o "$T/x.tfrecord" "$T/in.tfr"
	[[ "$stderr" == "tfr-cat: $T/x.tfrecord: a record file name, but the output is text"* ]]
	[ ! -e "$T/x.tfrecord" ]
	run -2 --separate-stderr tfr-cat -c -o "$T/x.tfr" "$T/in.tfr"
	[[ "$stderr" == *"a record file name, but the output is text"* ]]
	run -2 --separate-stderr tfr-cat -R -o "$T/x.jsonl" "$T/in.tfr"
	[[ "$stderr" == "tfr-cat: $T/x.jsonl: a text file name, but the output is records; leave out -R"* ]]
	[ ! -e "$T/x.jsonl" ]
	run -2 --separate-stderr subword-encode -v "$T/v" -o "$T/x.txt" "$T/c.txt"
	[[ "$stderr" == *"a text file name, but the output is records; add --output-format id"* ]]
	run -2 --separate-stderr subword-encode -v "$T/v" --output-format id -o "$T/x.tfrecord" "$T/c.txt"
	[[ "$stderr" == *"a record file name, but the output is text"* ]]
	run -2 --separate-stderr pack-encdec -C encdec -l inputs=4,targets=4 -o "$T/x.json" "$T/in.tfr"
	[[ "$stderr" == *"$T/x.json: a text file name, but the output is records"* ]]
	run -2 --separate-stderr subword-build -o "$T/v.tfrecord" "$T/c.txt"
	[[ "$stderr" == *"a record file name, but the output is text"* ]]
}

@test "outputs: .gz text outputs are gzip in every tool" {
	tfr-cat --flat -o "$T/x.jsonl.gz" "$T/in.tfr"
	[ "$(od -An -tx1 -N2 "$T/x.jsonl.gz" | tr -d ' ')" = 1f8b ]
	[ "$(gzip -dc "$T/x.jsonl.gz")" = "$(tfr-cat --flat "$T/in.tfr")" ]
	tfr-cat -c -o "$T/n.txt.gz" "$T/in.tfr"
	[ "$(gzip -dc "$T/n.txt.gz")" = 2 ]
	subword-encode -v "$T/v" --output-format id -o "$T/ids.gz" "$T/c.txt"
	[ "$(gzip -dc "$T/ids.gz")" = "$(subword-encode -v "$T/v" --output-format id "$T/c.txt")" ]
	subword-build -q --min-count 1 -o "$T/v.gz" "$T/c.txt"
	gzip -dc "$T/v.gz" | cmp - "$T/v"
	mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 "$T/in.tfr"
	mmap-index cat --output-format id -o "$T/d.ids.gz" "$T/d"
	[ "$(gzip -dc "$T/d.ids.gz")" = "$(printf '5 6 7\n1')" ]
	# zlib by .zz
	tfr-cat --flat -o "$T/x.jsonl.zz" "$T/in.tfr"
	[ "$(od -An -tx1 -N1 "$T/x.jsonl.zz" | tr -d ' ')" = 78 ]
}

@test "outputs: compressions we cannot write are refused with the way to get them" {
	run -2 --separate-stderr tfr-cat -R -o "$T/x.tfr.zst" "$T/in.tfr"
	[[ "$stderr" == "tfr-cat: $T/x.tfr.zst: cannot write zstd; name it .gz (gzip) or write to stdout and pipe through 'zstd'"* ]]
	[ ! -e "$T/x.tfr.zst" ]
	run -2 --separate-stderr tfr-cat -o "$T/x.zst" "$T/in.tfr"
	run -2 --separate-stderr subword-encode -v "$T/v" -o "$T/x.xz" "$T/c.txt"
	[[ "$stderr" == *"cannot write xz"* ]]
	run -2 --separate-stderr pack-encdec -C encdec -l inputs=4,targets=4 -o "$T/x.bz2" "$T/in.tfr"
	[[ "$stderr" == *"cannot write bzip2"* ]]
	run -2 --separate-stderr mmap-index cat -o "$T/x.lz4" "$T/d"
	[[ "$stderr" == *"cannot write lz4"* ]]
	run -2 --separate-stderr tfr-cat --split 2 -o "$T/s-%d.tfr.zst" "$T/in.tfr"
	[[ "$stderr" == *"cannot write zstd"* ]]
}

@test "outputs: short -K-of-N numbers are not a shard name: a part's text output keeps its name" {
	run -0 --separate-stderr subword-build -q --count-only -o "$T/counts-0-of-3" "$T/c.txt"
	[ -z "$stderr" ]
	grep -q "'the'" "$T/counts-0-of-3" || grep -q "the" "$T/counts-0-of-3"
	tfr-cat --flat -o "$T/flat-1-of-2" "$T/in.tfr"
	[ "$(head -c1 "$T/flat-1-of-2")" = "{" ]
	# Five digits a side is the TensorFlow form: records.
	run -2 --separate-stderr tfr-cat --flat -o "$T/flat-00001-of-00002" "$T/in.tfr"
	[[ "$stderr" == *"a record file name, but the output is text"* ]]
}

# rec_tools: a command of each tool that writes records, one a line, its
# output name '@' (the dataset $T/d is made by the test).
rec_tools() {
	printf '%s\n' \
	    "tfr-cat -R -o @ $T/in.tfr" \
	    "subword-encode -v $T/v -o @ $T/c.txt" \
	    "pack-encdec -C lm -l targets=8 -o @ $T/in.tfr" \
	    "mmap-index cat -R -o @ $T/d" \
	    "batch-sample batches -p $T/d,$T/d --max-tokens 40 --required-batch-size-multiple 1 --output-format records -o @"
}

@test "outputs: .gz and .zz record outputs are gzip and zlib in every tool that writes records" {
	local cmd
	mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 "$T/in.tfr"
	while read -r cmd; do
		${cmd/@/-} >"$T/plain"
		${cmd/@/$T/x.tfr.gz}
		[ "$(od -An -tx1 -N2 "$T/x.tfr.gz" | tr -d ' ')" = 1f8b ]
		gzip -dc "$T/x.tfr.gz" | cmp - "$T/plain"
		${cmd/@/$T/x.tfr.zz}
		[ "$(od -An -tx1 -N1 "$T/x.tfr.zz" | tr -d ' ')" = 78 ]
		tfr-cat -R "$T/x.tfr.zz" | cmp - "$T/plain"
	done < <(rec_tools)
	# each shard of --split, written through a record writer or spilled
	for n in 2 70; do
		tfr-cat --split "$n" -o "$T/sh-%02d.tfr.gz" "$T/in.tfr"
		[ "$(od -An -tx1 -N2 "$T/sh-01.tfr.gz" | tr -d ' ')" = 1f8b ]
		gzip -dc "$T/sh-00.tfr.gz" "$T/sh-01.tfr.gz" | cmp - "$T/in.tfr"
	done
	gzip -t "$T/sh-69.tfr.gz"
	# -z is the one exception: it overrides the suffix, to a file or to stdout
	tfr-cat -R -z none -o "$T/z.tfr.gz" "$T/in.tfr"
	cmp "$T/z.tfr.gz" "$T/in.tfr"
	tfr-cat -R -z gzip -o - "$T/in.tfr" | gzip -dc | cmp - "$T/in.tfr"
}

@test "outputs: -o - is stdout, never compressed, in every tool" {
	local cmd
	mmap-index build --raw-ids -q -o "$T/d" --dtype uint16 "$T/in.tfr"
	cd "$T"
	while read -r cmd; do
		${cmd/-o @/} >"$T/none"
		run -0 --separate-stderr bash -c "${cmd/@/-} >$T/dash"
		[ -z "$stderr" ]
		cmp "$T/none" "$T/dash"
		[ "$(od -An -tx1 -N1 "$T/dash" | tr -d ' ')" != 1f ]
	done < <(rec_tools; printf '%s\n' \
	    "tfr-cat -o @ $T/in.tfr" \
	    "subword-encode -v $T/v --output-format id -o @ $T/c.txt" \
	    "subword-build -q --min-count 1 -o @ $T/c.txt" \
	    "mmap-index cat --output-format id -o @ $T/d")
	[ ! -e "$T/-" ]
}

@test "outputs: -o stdout is a file named stdout in every tool, pack-encdec too" {
	cd "$T"
	pack-encdec -C lm -l targets=8 "$T/in.tfr" >"$T/want"
	run -0 --separate-stderr bash -c "pack-encdec -C lm -l targets=8 -o stdout $T/in.tfr >$T/out"
	[ -z "$stderr" ]
	[ ! -s "$T/out" ]
	cmp "$T/stdout" "$T/want"
	rm "$T/stdout"
	tfr-cat -R -o stdout "$T/in.tfr" >"$T/out"
	[ ! -s "$T/out" ]
	cmp "$T/stdout" "$T/in.tfr"
	rm "$T/stdout"
	subword-encode -v "$T/v" -o stdout "$T/c.txt" >"$T/out"
	[ ! -s "$T/out" ]
	[ -s "$T/stdout" ]
}

# no_temps: no temporary or lock of a named output is left in $T.
no_temps() {
	[ -z "$(ls "$T" | grep -E '\.rp-|\.lock$')" ]
}

@test "outputs: a fault leaves no partial file and keeps the old one, in every tool" {
	local cmd name
	printf '%s\n' '{"targets":[5,6,7]}' '{"targets":[1]}' '{"targets":[2,3]}' |
	    tfr-cat --from-json -o "$T/three.tfr"
	head -c $(($(stat -c %s "$T/three.tfr") - 3)) "$T/three.tfr" >"$T/bad.tfr"
	{ cat "$T/c.txt"; printf 'bad \377 line\n'; } >"$T/bad.txt"
	for name in old.tfr old.tfr.gz old; do
		while read -r cmd; do
			echo OLD >"$T/$name"
			run -1 --separate-stderr ${cmd/@/$T/$name}
			[ -n "$stderr" ]
			[ "$(cat "$T/$name")" = OLD ]
			no_temps
		done < <(printf '%s\n' \
		    "tfr-cat -R -o @ $T/bad.tfr" \
		    "subword-encode -v $T/v -o @ $T/bad.txt" \
		    "subword-encode -v $T/v -j 2 -o @ $T/bad.txt" \
		    "pack-encdec -C lm -l targets=8 -o @ $T/bad.tfr" \
		    "pack-encdec -C lm -l targets=8 -o @ $T/in.tfr $T/nosuch.tfr")
	done
	# text outputs
	for name in old.json old.json.gz; do
		echo OLD >"$T/$name"
		run -1 --separate-stderr tfr-cat -o "$T/$name" "$T/bad.tfr"
		[ "$(cat "$T/$name")" = OLD ]
		run -1 --separate-stderr subword-encode -v "$T/v" --output-format id -o "$T/$name" "$T/bad.txt"
		[ "$(cat "$T/$name")" = OLD ]
		no_temps
	done
	# the shards of --split, through record writers or spilled: all old
	for n in 2 70; do
		echo OLD0 >"$T/s-00.tfr.gz"
		echo OLD1 >"$T/s-01.tfr"
		run -1 --separate-stderr tfr-cat --split "$n" -o "$T/s-%02d.tfr" "$T/bad.tfr"
		[ "$(cat "$T/s-01.tfr")" = OLD1 ]
		[ ! -e "$T/s-00.tfr" ]
		run -1 --separate-stderr tfr-cat --split "$n" -o "$T/s-%02d.tfr.gz" "$T/bad.tfr"
		[ "$(cat "$T/s-00.tfr.gz")" = OLD0 ]
		[ ! -e "$T/s-02.tfr.gz" ]
		no_temps
	done
}

@test "outputs: --keep-partial commits the good part as a whole compressed stream" {
	local good
	{ cat "$T/c.txt"; printf 'bad \377 line\n'; } >"$T/bad.txt"
	printf '%s\n' '{"targets":[5,6,7]}' '{"targets":[1]}' '{"targets":[2,3]}' |
	    tfr-cat --from-json -o "$T/three.tfr"
	head -c $(($(stat -c %s "$T/three.tfr") - 3)) "$T/three.tfr" >"$T/bad.tfr"
	run -1 --separate-stderr subword-encode -v "$T/v" --keep-partial -o "$T/k.tfr.gz" "$T/bad.txt"
	gzip -dc "$T/k.tfr.gz" | cmp - <(subword-encode -v "$T/v" "$T/c.txt")
	run -1 --separate-stderr pack-encdec -C lm -l targets=8 --no-pack --keep-partial -o "$T/p.tfr.gz" "$T/bad.tfr"
	gzip -dc "$T/p.tfr.gz" | cmp - <(pack-encdec -C lm -l targets=8 --no-pack "$T/in.tfr")
	run -1 --separate-stderr tfr-cat -R --keep-partial -o "$T/t.tfr.gz" "$T/bad.tfr"
	gzip -dc "$T/t.tfr.gz" | cmp - "$T/in.tfr"
	no_temps
}

@test "outputs: tfr-cat --split --contiguous keeps the old shards after a fault, spilled and compressed ones too" {
	local n
	for ((n = 1; n <= 200; n++)); do echo "{\"targets\":[$n]}"; done |
	    tfr-cat --from-json -o "$T/many.tfr"
	{ head -c 30 "$T/many.tfr"; cat "$T/many.tfr"; } >"$T/bad.tfr"
	for n in 3 70; do
		echo OLD >"$T/c-01.tfr.gz"
		run -1 --separate-stderr tfr-cat --split "$n" --contiguous -o "$T/c-%02d.tfr.gz" "$T/bad.tfr"
		[ "$(cat "$T/c-01.tfr.gz")" = OLD ]
		[ ! -e "$T/c-00.tfr.gz" ]
		[ ! -e "$T/c-02.tfr.gz" ]
		no_temps
	done
}
