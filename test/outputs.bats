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
