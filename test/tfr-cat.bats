#!/usr/bin/env bats
# tfr-cat: the command line, end to end.

load common

setup() {
	# The spec's worked record: payload "foo".
	printf '\003\000\000\000\000\000\000\000\260\231\111\016foo\141\212\276\376' >"$T/foo.tfr"
	printf '%s\n' '{"features":{"feature":{"a":{"int64List":{"value":["1","2"]}},"t":{"bytesList":{"value":["aGk="]}}}}}' \
		'{"features":{"feature":{"a":{"int64List":{"value":["3"]}},"f":{"floatList":{"value":[0.5]}}}}}' \
		'{"features":{"feature":{"a":{"int64List":{}}}}}' >"$T/three.jsonl"
	tfr-cat -R --from-json "$T/three.jsonl" >"$T/three.tfr"
}

# 1000 records of about 100 bytes: larger than a pipe buffer.
big() {
	local i
	for i in $(seq 1 1000); do
		printf '{"a":[%d,%d,%d],"t":["%0100d"]}\n' "$i" "$((i * 2))" "$((i * 3))" "$i"
	done | tfr-cat -R --from-json >"$T/big.tfr"
}

@test "tfr-cat: --help prints the synopsis and exits 0" {
	run -0 --separate-stderr tfr-cat --help
	[[ "$output" == "usage: tfr-cat [-chqRV]"* ]]
	[ -z "$stderr" ]
}

@test "tfr-cat: --version" {
	run -0 tfr-cat -V
	[ "$output" = "tfr-cat 0.1.0" ]
}

@test "tfr-cat: an unknown option is a usage error, status 2" {
	run -2 --separate-stderr tfr-cat --bogus
	[ -z "$output" ]
	[ "$stderr" = "$(printf "tfr-cat: unknown option '--bogus'\nTry 'tfr-cat --help' for more information.")" ]
}

@test "tfr-cat: missing file is status 1 and names the file" {
	run -1 --separate-stderr tfr-cat "$T/nosuch.tfr"
	[ -z "$output" ]
	[ "$stderr" = "tfr-cat: $T/nosuch.tfr: No such file or directory" ]
}

@test "tfr-cat: raw mode prints the spec's 'foo' record as base64 of its payload" {
	run -0 --separate-stderr tfr-cat --type raw "$T/foo.tfr"
	[ "$output" = '"Zm9v"' ]
	[ -z "$stderr" ]
}

@test "tfr-cat: raw JSON reads back to the same bytes" {
	tfr-cat --type raw "$T/foo.tfr" | tfr-cat -R --from-json --type raw >"$T/back.tfr"
	cmp "$T/foo.tfr" "$T/back.tfr"
}

@test "tfr-cat: JSON lines in the proto3 mapping, keys sorted" {
	run -0 --separate-stderr tfr-cat "$T/three.tfr"
	[ "${lines[0]}" = '{"features":{"feature":{"a":{"int64List":{"value":["1","2"]}},"t":{"bytesList":{"value":["aGk="]}}}}}' ]
	[ "${lines[2]}" = '{"features":{"feature":{"a":{"int64List":{}}}}}' ]
	[ "${#lines[@]}" = 3 ]
}

@test "tfr-cat: --flat and back gives the same records" {
	run -0 tfr-cat --flat "$T/three.tfr"
	[ "${lines[0]}" = '{"a":[1,2],"t":["hi"]}' ]
	[ "${lines[1]}" = '{"a":[3],"f":[0.5]}' ]
	[ "${lines[2]}" = '{"a":{"int64_list":[]}}' ]
	tfr-cat --flat "$T/three.tfr" | tfr-cat -R --from-json >"$T/again.tfr"
	cmp "$T/three.tfr" "$T/again.tfr"
}

@test "tfr-cat: -f keeps only the named features, in JSON and in records" {
	run -0 tfr-cat --flat -f t,f "$T/three.tfr"
	[ "${lines[0]}" = '{"t":["hi"]}' ]
	[ "${lines[1]}" = '{"f":[0.5]}' ]
	[ "${lines[2]}" = '{"features":{}}' ]
	tfr-cat -R -f a "$T/three.tfr" | tfr-cat --flat >"$T/a.jsonl"
	[ "$(head -1 "$T/a.jsonl")" = '{"a":[1,2]}' ]
}

@test "tfr-cat: -n and --skip select records across files" {
	run -0 tfr-cat --flat --skip 2 -n 2 "$T/three.tfr" "$T/three.tfr"
	[ "${#lines[@]}" = 2 ]
	[ "${lines[0]}" = '{"a":{"int64_list":[]}}' ]
	[ "${lines[1]}" = '{"a":[1,2],"t":["hi"]}' ]
}

@test "tfr-cat: --shard K/N takes every Nth record" {
	big
	run -0 tfr-cat -c --shard 1/3 "$T/big.tfr"
	[ "$output" = 333 ]
	run -0 tfr-cat --flat -f a -n 1 --shard 1/3 "$T/big.tfr"
	[ "$output" = '{"a":[2,4,6]}' ]
}

@test "tfr-cat: -c counts records; stdin works" {
	big
	run -0 tfr-cat -c "$T/big.tfr"
	[ "$output" = 1000 ]
	run -0 bash -c 'tfr-cat -c <"$1"' _ "$T/big.tfr"
	[ "$output" = 1000 ]
	run -0 bash -c 'cat "$1" | tfr-cat -c -' _ "$T/big.tfr"
	[ "$output" = 1000 ]
}

@test "tfr-cat: -c still finds a truncated last record" {
	big
	head -c -3 "$T/big.tfr" >"$T/cut.tfr"
	run -1 --separate-stderr tfr-cat -c "$T/cut.tfr"
	[[ "$stderr" == "tfr-cat: $T/cut.tfr: record 999 at offset "*": truncated record"* ]]
}

@test "tfr-cat: -R -z gzip and -z zlib compress; reading sniffs them" {
	big
	tfr-cat -R -z gzip "$T/big.tfr" >"$T/big.gz"
	tfr-cat -R -z zlib "$T/big.tfr" >"$T/big.zz"
	[ "$(head -c2 "$T/big.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	[ "$(head -c2 "$T/big.zz" | od -An -tx1 | tr -d ' ')" = 789c ]
	tfr-cat -R "$T/big.gz" | cmp - "$T/big.tfr"
	tfr-cat -R "$T/big.zz" | cmp - "$T/big.tfr"
	gzip -dc "$T/big.gz" | cmp - "$T/big.tfr"
}

@test "tfr-cat: -o FILE.gz compresses by suffix" {
	big
	tfr-cat -R -o "$T/out.tfrecord.gz" "$T/big.tfr"
	gzip -dc "$T/out.tfrecord.gz" | cmp - "$T/big.tfr"
}

@test "tfr-cat: -o a FIFO or a device writes through it and leaves it in place" {
	big
	mkfifo "$T/fifo"
	cat "$T/fifo" >"$T/got" &
	local reader=$!
	timeout 10 tfr-cat -R -o "$T/fifo" "$T/big.tfr" || true
	if [ ! -p "$T/fifo" ]; then
		kill "$reader"	# it waits on the FIFO that was replaced
		false
	fi
	wait "$reader"
	cmp "$T/got" "$T/big.tfr"
	[ "$(ls "$T" | grep -c '^fifo')" -eq 1 ]
	# A character device (the tool's own /dev/null stands in for the system's).
	if mknod "$T/null" c 1 3 2>/dev/null; then
		tfr-cat -R -o "$T/null" "$T/big.tfr"
		[ -c "$T/null" ]
	fi
}

@test "tfr-cat: concatenated gzip files read as one stream" {
	tfr-cat -R -z gzip "$T/three.tfr" >"$T/a.gz"
	cat "$T/a.gz" "$T/a.gz" >"$T/aa.gz"
	run -0 tfr-cat -c "$T/aa.gz"
	[ "$output" = 6 ]
}

@test "tfr-cat: a gzip file read as --compression none says what to try" {
	tfr-cat -R -z gzip "$T/three.tfr" >"$T/a.gz"
	run -1 --separate-stderr tfr-cat --compression none "$T/a.gz"
	[ "$stderr" = "tfr-cat: $T/a.gz: record 0 at offset 0: length CRC mismatch (the input looks gzip-compressed: try --compression gzip)" ]
}

@test "tfr-cat: a Git LFS pointer is named as such" {
	printf 'version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n' >"$T/lfs.tfrecord"
	run -1 --separate-stderr tfr-cat "$T/lfs.tfrecord"
	[[ "$stderr" == *"Git LFS pointer"*"git lfs pull"* ]]
}

@test "tfr-cat: good records come out before a damaged one" {
	cat "$T/three.tfr" "$T/foo.tfr" >"$T/x.tfr"
	printf 'junkjunkjunkjunk' >>"$T/x.tfr"
	run -1 --separate-stderr tfr-cat --type raw "$T/x.tfr"
	[ "${#lines[@]}" = 4 ]
	[ "${lines[3]}" = '"Zm9v"' ]
	[[ "$stderr" == "tfr-cat: $T/x.tfr: record 4 at offset "*": length CRC mismatch" ]]
}

@test "tfr-cat: a partial header is an error, and a clean end with --tf-compat" {
	cat "$T/three.tfr" >"$T/p.tfr"
	printf '\001\002\003\004\005' >>"$T/p.tfr"
	run -1 --separate-stderr tfr-cat -c "$T/p.tfr"
	[[ "$stderr" == *"record 3 at offset"*"truncated header: 5 bytes after the last record" ]]
	run -0 --separate-stderr tfr-cat -c --tf-compat "$T/p.tfr"
	[ "$output" = 3 ]
	[ -z "$stderr" ]
}

@test "tfr-cat: a payload that is not an Example names the record; raw mode is fine" {
	cat "$T/three.tfr" "$T/foo.tfr" >"$T/x.tfr"
	run -1 --separate-stderr tfr-cat "$T/x.tfr"
	[ "${#lines[@]}" = 3 ]
	[[ "$stderr" == "tfr-cat: $T/x.tfr: record 3 at offset "*": payload is not an Example: "* ]]
	run -0 tfr-cat --type raw "$T/x.tfr"
}

@test "tfr-cat: --recover writes every intact record and reports the skipped bytes" {
	big
	# Damage the payload of record 10 and the length of record 500.
	cp "$T/big.tfr" "$T/bad.tfr"
	off10=$(tfr-cat --index "$T/big.tfr" | sed -n '11p' | cut -d' ' -f1)
	off500=$(tfr-cat --index "$T/big.tfr" | sed -n '501p' | cut -d' ' -f1)
	printf 'X' | dd of="$T/bad.tfr" bs=1 seek=$((off10 + 20)) conv=notrunc status=none
	printf 'X' | dd of="$T/bad.tfr" bs=1 seek=$((off500 + 2)) conv=notrunc status=none
	run -1 --separate-stderr tfr-cat -c "$T/bad.tfr"
	run -1 --separate-stderr tfr-cat -R --recover -o "$T/rec.tfr" "$T/bad.tfr"
	[[ "$stderr" == *"record 10 at offset $off10: payload CRC mismatch"* ]]
	[[ "$stderr" == *"skipped bytes $off10-"* ]]
	[[ "$stderr" == *"record 500 at offset $off500: length CRC mismatch"* ]]
	[[ "$stderr" == *"recovered 998 records; skipped 2 byte ranges"* ]]
	run -0 tfr-cat -c "$T/rec.tfr"
	[ "$output" = 998 ]
}

@test "tfr-cat: --verify prints a summary and fails on a bad CRC" {
	run -0 --separate-stderr tfr-cat --verify "$T/three.tfr"
	[ "$output" = "$T/three.tfr: 3 records, $(stat -c %s "$T/three.tfr") bytes, none, OK" ]
	cp "$T/three.tfr" "$T/bad.tfr"
	printf 'Z' | dd of="$T/bad.tfr" bs=1 seek=20 conv=notrunc status=none
	run -1 --separate-stderr tfr-cat --verify "$T/bad.tfr" "$T/three.tfr"
	[[ "${lines[0]}" == *"bad.tfr: 0 records, "*", FAILED" ]]
	[[ "${lines[1]}" == *"three.tfr: 3 records, "*", OK" ]]
	[[ "$stderr" == *"record 0 at offset 0: payload CRC mismatch" ]]
}

@test "tfr-cat: --index writes tfrecord2idx lines" {
	run -0 tfr-cat --index "$T/foo.tfr" "$T/foo.tfr"
	[ "${lines[0]}" = "0 19" ]
	[ "${lines[1]}" = "0 19" ]
	run -0 tfr-cat --index "$T/three.tfr"
	[ "${lines[0]}" = "0 $(( $(tfr-cat -R -n 1 "$T/three.tfr" | wc -c) ))" ]
}

@test "tfr-cat: --stats summarises features" {
	run -0 tfr-cat --stats "$T/three.tfr"
	[ "${lines[0]}" = "records	3" ]
	[ "${lines[1]}" = "feature	present	kind	min	mean	p50	p90	p99	max	lengths" ]
	[ "${lines[2]}" = "a	3	int64	0	1.0	1	2	2	2	0:1 1:1 2-3:1" ]
	[ "${lines[3]}" = "f	1	float	1	1.0	1	1	1	1	1:1" ]
}

@test "tfr-cat: --split deals records round-robin into named shards" {
	big
	tfr-cat --split 3 -o "$T/train-%05d-of-%05d" "$T/big.tfr"
	run -0 tfr-cat -c "$T/train-00000-of-00003"
	[ "$output" = 334 ]
	run -0 tfr-cat -c "$T/train-00002-of-00003"
	[ "$output" = 333 ]
	run -0 tfr-cat --flat -f a -n 2 "$T/train-00001-of-00003"
	[ "${lines[0]}" = '{"a":[2,4,6]}' ]
	[ "${lines[1]}" = '{"a":[5,10,15]}' ]
}

@test "tfr-cat: --shuffle is a seeded permutation" {
	big
	tfr-cat -R --shuffle "$T/big.tfr" >"$T/s1"
	tfr-cat -R --shuffle "$T/big.tfr" >"$T/s2"
	tfr-cat -R --shuffle -s 7 "$T/big.tfr" >"$T/s3"
	cmp "$T/s1" "$T/s2"
	! cmp -s "$T/s1" "$T/s3" || false
	! cmp -s "$T/s1" "$T/big.tfr" || false
	diff <(tfr-cat --flat "$T/s1" | sort) <(tfr-cat --flat "$T/big.tfr" | sort)
	tfr-cat -R --shuffle-window 50 "$T/big.tfr" >"$T/w"
	diff <(tfr-cat --flat "$T/w" | sort) <(tfr-cat --flat "$T/big.tfr" | sort)
}

@test "tfr-cat: --shuffle beyond --shuffle-memory fails and leaves no output" {
	big
	run -1 --separate-stderr tfr-cat -R --shuffle --shuffle-memory 10k -o "$T/o.tfr" "$T/big.tfr"
	[[ "$stderr" == *"--shuffle-window"* ]]
	[ ! -e "$T/o.tfr" ]
	[ -z "$(ls "$T" | grep 'o.tfr.')" ]
}

@test "tfr-cat: a failed input leaves no named output" {
	printf 'garbage-garbage!' >"$T/g.tfr"
	run -1 tfr-cat -R -o "$T/out.tfr" "$T/three.tfr" "$T/g.tfr"
	[ ! -e "$T/out.tfr" ]
}

@test "tfr-cat: refuses to write records to a terminal" {
	command -v script >/dev/null || skip "no script(1)"
	run script -qec "$RECPIPE_BIN/tfr-cat -R $T/three.tfr" /dev/null
	[[ "$output" == *"refusing to write records to a terminal"* ]]
}

@test "tfr-cat: --from-json reports the line of bad JSON" {
	printf '{"a":[1]}\n{"a":[1,\n' >"$T/bad.jsonl"
	run -0 --separate-stderr bash -c 'tfr-cat -R --from-json "$1" | tfr-cat -c; echo "${PIPESTATUS[0]}"' _ "$T/bad.jsonl"
	[[ "$stderr" == "tfr-cat: $T/bad.jsonl: line 2: "* ]]
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 1 ]
}

@test "tfr-cat: a closed pipe is a quiet SIGPIPE" {
	big
	run bash -c 'tfr-cat "$1" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big.tfr"
	[ "$output" = 141 ]
	run bash -c 'tfr-cat -R "$1" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big.tfr"
	[ "$output" = 141 ]
}

@test "tfr-cat: a full disk is status 1 with a message" {
	run -1 --separate-stderr bash -c 'tfr-cat "$1" >/dev/full' _ "$T/three.tfr"
	[ "$stderr" = "tfr-cat: stdout: No space left on device" ]
	run -1 --separate-stderr bash -c 'tfr-cat -R "$1" >/dev/full' _ "$T/three.tfr"
	[ "$stderr" = "tfr-cat: stdout: No space left on device" ]
}

@test "tfr-cat: SequenceExample flat JSON round trip" {
	printf '%s\n' '{"context":{"len":[2]},"feature_lists":{"tok":[[1,2],[3],null,{"int64_list":[]}]}}' >"$T/seq.jsonl"
	tfr-cat -R --from-json "$T/seq.jsonl" >"$T/seq.tfr"
	run -0 tfr-cat --flat "$T/seq.tfr"
	[ "$output" = '{"context":{"len":[2]},"feature_lists":{"tok":[[1,2],[3],null,{"int64_list":[]}]}}' ]
	run -0 tfr-cat "$T/seq.tfr"
	[ "$output" = '{"context":{"feature":{"len":{"int64List":{"value":["2"]}}}},"featureLists":{"featureList":{"tok":{"feature":[{"int64List":{"value":["1","2"]}},{"int64List":{"value":["3"]}},{},{"int64List":{}}]}}}}' ]
}

@test "tfr-cat: --index refuses compressed input unless --force" {
	tfr-cat -R -z gzip "$T/three.tfr" >"$T/a.gz"
	run -1 --separate-stderr tfr-cat --index "$T/a.gz"
	[[ "$stderr" == *"gzip-compressed, so offsets cannot be used to seek"* ]]
	run -0 tfr-cat --index --force "$T/a.gz"
	[ "${#lines[@]}" = 3 ]
	[ "${lines[0]%% *}" = 0 ]
}

@test "tfr-cat: -c seeks over large payloads and still checks the last one" {
	head -c 300000 /dev/zero | base64 -w0 | awk '{ for (i = 0; i < 20; i++) print "\"" $0 "\"" }' |
		tfr-cat --from-json --type raw -o "$T/large.tfr"
	run -0 tfr-cat -c "$T/large.tfr"
	[ "$output" = 20 ]
	head -c -1 "$T/large.tfr" >"$T/cut.tfr"
	run -1 --separate-stderr tfr-cat -c "$T/cut.tfr"
	[[ "$stderr" == *"record 19 at offset "*": truncated record"* ]]
}

@test "tfr-cat: --help is the man page SYNOPSIS" {
	help_is_synopsis tfr-cat
}

@test "tfr-cat: an empty Example and an empty payload are records too" {
	printf '{}\n"" \n' >"$T/e.jsonl"
	printf '{}\n' | tfr-cat --from-json >"$T/e.tfr"
	run -0 tfr-cat -c "$T/e.tfr"
	[ "$output" = 1 ]
	printf '""\n' | tfr-cat --from-json --type raw | cmp - <(printf '\000\000\000\000\000\000\000\000\051\003\230\007\330\352\202\242')
}

@test "tfr-cat: a truncated record says how many bytes it needs, in a file, a pipe and gzip" {
	cat "$T/three.tfr" "$T/foo.tfr" >"$T/x.tfr"
	n=$(stat -c %s "$T/three.tfr")
	head -c $((n + 15)) "$T/x.tfr" >"$T/cut.tfr"	# 'foo' needs 3 + 4 bytes, 3 are left
	want="record 3 at offset $n: truncated record: length 3 needs 7 bytes after its header, 3 are left"
	run -1 --separate-stderr tfr-cat -c "$T/cut.tfr"
	[ "$stderr" = "tfr-cat: $T/cut.tfr: $want" ]
	run -1 --separate-stderr sh -c 'cat "$1" | tfr-cat --type raw' _ "$T/cut.tfr"
	[ "$stderr" = "tfr-cat: stdin: $want" ]
	gzip -c "$T/cut.tfr" >"$T/cut.tfr.gz"
	run -1 --separate-stderr tfr-cat --verify "$T/cut.tfr.gz"
	[ "${lines[0]}" = "$T/cut.tfr.gz: 3 records, $n bytes, gzip, FAILED" ]
	[ "$stderr" = "tfr-cat: $T/cut.tfr.gz: $want" ]
}

@test "tfr-cat: compressed input that is not records gets the plain input's hint" {
	printf 'this is text, not a TFRecord file at all\n' >"$T/text"
	run -1 --separate-stderr tfr-cat "$T/text"
	[ "$stderr" = "tfr-cat: $T/text: record 0 at offset 0: length CRC mismatch (is this a TFRecord file?)" ]
	gzip -c "$T/text" >"$T/text.gz"
	run -1 --separate-stderr tfr-cat "$T/text.gz"
	[ "$stderr" = "tfr-cat: $T/text.gz: record 0 at offset 0: length CRC mismatch (is this a TFRecord file?)" ]
	printf 'hi\n' | gzip >"$T/hi.gz"
	run -1 --separate-stderr tfr-cat -c "$T/hi.gz"
	[ "$stderr" = "tfr-cat: $T/hi.gz: record 0 at offset 0: truncated header: 3 bytes after the last record (is this a TFRecord file?)" ]
}

@test "tfr-cat: out of memory while decoding is reported as such, with file, record and offset" {
	(ulimit -v 100000 && tfr-cat --version >/dev/null) 2>/dev/null || skip "cannot run under ulimit -v"
	# 10M empty Features in a feature list: 20 MB of record, 800 MB decoded
	"$BATS_TEST_DIRNAME/tools/big-record" --steps 10000000 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	tfr-cat -R -n 1 "$T/three.tfr" >"$T/one.tfr"
	n=$(stat -c %s "$T/one.tfr")
	cat "$T/one.tfr" "$T/big.tfr" | gzip -1 >"$T/big.gz"
	for opt in --type=sequence --flat --stats "-R -f targets"; do
		run -1 --separate-stderr bash -c 'ulimit -v 100000; tfr-cat $1 "$2" >/dev/null' _ "$opt" "$T/big.gz"
		[ "$(tail -1 <<<"$stderr")" = "tfr-cat: $T/big.gz: record 1 at offset $n: out of memory" ] ||
		    { echo "$opt: $stderr"; false; }
	done
	# --verify decodes nothing, and the file is good: OK
	run -0 --separate-stderr bash -c 'ulimit -v 100000; tfr-cat --verify "$1"' _ "$T/big.gz"
	[ "$output" = "$T/big.gz: 2 records, $((n + $(stat -c %s "$T/big.tfr"))) bytes, gzip, OK" ]
	# when even the record cannot be held, it is FAILED
	run -1 --separate-stderr bash -c 'ulimit -v 30000; tfr-cat --verify "$1"' _ "$T/big.gz"
	[ "$output" = "$T/big.gz: 1 records, $n bytes, gzip, FAILED" ]
	[[ "$stderr" == "tfr-cat: $T/big.gz: record 1 at offset $n: out of memory"* ]]
}

@test "tfr-cat: -o /dev/full names /dev/full in every text mode; > /dev/full names stdout" {
	big
	for opt in --type=example --flat -c --index --stats --verify; do
		run -1 --separate-stderr tfr-cat $opt -o /dev/full "$T/big.tfr"
		[ "$stderr" = "tfr-cat: /dev/full: No space left on device" ] || { echo "$opt: $stderr"; false; }
	done
	run -1 --separate-stderr bash -c 'tfr-cat "$1" >/dev/full' _ "$T/big.tfr"
	[ "$stderr" = "tfr-cat: stdout: No space left on device" ]
}

@test "tfr-cat: JSON, --stats and -f of a 20 MB record hold about one copy of the record" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	for opt in --type=auto --flat --stats; do
		/usr/bin/time -f %M -o "$T/rss" tfr-cat $opt "$T/big.gz" >"$T/out"
		rss=$(tail -1 "$T/rss")
		[ "$rss" -lt "$(rss_bound tfr-cat 50000)" ] || { echo "$opt: peak RSS $rss KB for a 20 MB record"; false; }
	done
	tfr-cat "$T/big.gz" >"$T/out"
	[ "$(head -c 58 "$T/out")" = '{"features":{"feature":{"targets":{"int64List":{"value":["' ]
	[ "$(tail -c 18 "$T/out")" = '"1","1","1"]}}}}}' ]
	[ "$(tr -cd 1 <"$T/out" | wc -c)" = 20000000 ]
	[ "$(wc -c <"$T/out")" = $((58 + 20000000 * 4 - 2 + 7)) ]
	tfr-cat --flat "$T/big.gz" >"$T/out"
	[ "$(wc -c <"$T/out")" = $((12 + 20000000 * 2 - 1 + 3)) ]
	run -0 tfr-cat --stats "$T/big.gz"
	[ "${lines[2]}" = "$(printf 'targets\t1\tint64\t20000000\t20000000.0\t20000000\t20000000\t20000000\t20000000\t16777216-33554431:1')" ]
	# and -f re-encodes it in about one more copy
	/usr/bin/time -f %M -o "$T/rss" tfr-cat -R -f targets "$T/big.gz" >"$T/out.tfr"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound tfr-cat 50000)" ] || { echo "-R -f: peak RSS $rss KB for a 20 MB record"; false; }
	gzip -dc "$T/big.gz" | cmp - "$T/out.tfr"
}

@test "tfr-cat: JSON, --stats and -f of a 20 MB bytes_list of 10M empty values stay within 2.5 times the record" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	# decoded, each value took 16 bytes: 207 MB at the peak
	"$BATS_TEST_DIRNAME/tools/big-record" --bytes 10000000 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	for opt in --type=auto --flat --stats "-R -f targets"; do
		/usr/bin/time -f %M -o "$T/rss" tfr-cat $opt "$T/big.gz" >"$T/out"
		rss=$(tail -1 "$T/rss")
		[ "$rss" -lt "$(rss_bound tfr-cat 50000)" ] || { echo "$opt: peak RSS $rss KB for a 20 MB record"; false; }
	done
	gzip -dc "$T/big.gz" | cmp - "$T/out"
	tfr-cat "$T/big.gz" >"$T/out"
	[ "$(head -c 62 "$T/out")" = '{"features":{"feature":{"targets":{"bytesList":{"value":["",""' ]
	[ "$(tail -c 12 "$T/out")" = '"",""]}}}}}' ]
	[ "$(wc -c <"$T/out")" = $((57 + 10000000 * 3 - 1 + 6 + 1)) ]
	tfr-cat --flat "$T/big.gz" >"$T/out"
	[ "$(head -c 17 "$T/out")" = '{"targets":["",""' ]
	[ "$(wc -c <"$T/out")" = $((12 + 10000000 * 3 - 1 + 3)) ]
	run -0 tfr-cat --stats "$T/big.gz"
	[ "${lines[2]}" = "$(printf 'targets\t1\tbytes\t10000000\t10000000.0\t10000000\t10000000\t10000000\t10000000\t8388608-16777215:1')" ]
	# values that are not UTF-8 go out as base64, streamed too
	"$BATS_TEST_DIRNAME/tools/big-record" --bytes 4000000 raw 255 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/raw.gz"
	/usr/bin/time -f %M -o "$T/rss" tfr-cat --flat "$T/raw.gz" >"$T/out"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound tfr-cat 30000)" ] || { echo "base64: peak RSS $rss KB for a 12 MB record"; false; }
	[ "$(head -c 33 "$T/out")" = '{"raw":{"bytes_list":["/w==","/w=' ]
	[ "$(wc -c <"$T/out")" = $((22 + 4000000 * 7 - 1 + 4)) ]
}

@test "tfr-cat: -o in every text mode leaves the old file when the input is missing" {
	local m
	for m in "" --flat --index -c --stats --verify; do
		echo OLD >"$T/keep"
		run -1 tfr-cat $m -o "$T/keep" "$T/nosuch.tfr"
		[ "$(cat "$T/keep")" = OLD ]
	done
	echo OLD >"$T/keep"
	run -1 tfr-cat -R -o "$T/keep" "$T/nosuch.tfr"
	[ "$(cat "$T/keep")" = OLD ]
	run -1 tfr-cat --from-json -o "$T/keep" "$T/nosuch.jsonl"
	[ "$(cat "$T/keep")" = OLD ]
	# and a good run replaces it
	tfr-cat -c -o "$T/keep" "$T/three.tfr"
	[ "$(cat "$T/keep")" = 3 ]
}

@test "tfr-cat: kill -9 in the middle of writing leaves the old output" {
	local m
	big
	for m in "" --flat --index -c --stats -R; do
		echo OLD >"$T/keep"
		kill_mid_write "$T/keep" "$T/big.tfr" tfr-cat $m -o "$T/keep"
	done
	echo OLD >"$T/keep"
	tfr-cat "$T/big.tfr" >"$T/big.jsonl"
	kill_mid_write "$T/keep" "$T/big.jsonl" tfr-cat --from-json -o "$T/keep"
}

@test "tfr-cat: an output that cannot be written is refused before reading input" {
	mkdir "$T/adir"
	refuses_output "tfr-cat: $T/adir: Is a directory" tfr-cat -R -o "$T/adir" "$T/nosuch.tfr"
	refuses_output "tfr-cat: $T/adir: Is a directory" tfr-cat -o "$T/adir" "$T/nosuch.tfr"
	refuses_output "tfr-cat: $T/adir: Is a directory" tfr-cat --from-json -o "$T/adir" "$T/nosuch.jsonl"
	refuses_output "tfr-cat: $T/adir/: Is a directory" tfr-cat -c -o "$T/adir/" "$T/nosuch.tfr"
	refuses_output "tfr-cat: $T/nodir/out: No such file or directory" tfr-cat -R -o "$T/nodir/out" "$T/nosuch.tfr"
	refuses_output "tfr-cat: an output file name is empty" tfr-cat -R -o '' "$T/nosuch.tfr"
	refuses_output "tfr-cat: an output file name is empty" tfr-cat --flat -o '' "$T/nosuch.tfr"
	touch "$T/afile"
	refuses_output "tfr-cat: $T/afile/x: Not a directory" tfr-cat -R -o "$T/afile/x" "$T/nosuch.tfr"
	# the directories are untouched: no temporary left in them
	[ -z "$(ls "$T/adir")" ]
}

@test "tfr-cat: a read-only directory is refused before reading input" {
	[ "$(id -u)" != 0 ] || skip "root may write anywhere"
	mkdir "$T/ro"
	chmod 555 "$T/ro"
	refuses_output "tfr-cat: $T/ro/out: Permission denied" tfr-cat -R -o "$T/ro/out" "$T/nosuch.tfr"
}

@test "tfr-cat: a --split shard name that is a directory is refused up front" {
	mkdir "$T/sh-1"
	refuses_output "tfr-cat: $T/sh-1: Is a directory" tfr-cat -R --split 2 -o "$T/sh-%d" "$T/nosuch.tfr"
	[ ! -e "$T/sh-0" ]
}

@test "tfr-cat: --split field widths are kept in full, or refused up front" {
	big
	tfr-cat -R --split 2 -o "$T/sh-%40d" "$T/big.tfr"
	[ "$(ls "$T" | grep -c '^sh-')" = 2 ]
	[ "$(tfr-cat -c "$T/sh-$(printf '%40d' 1)")" = 500 ]
	tfr-cat -R --split 3 -o "$T/w-%-4d-of-%03d" "$T/big.tfr"
	[ "$(tfr-cat -c "$T/w-2   -of-003")" = 333 ]
	run -2 --separate-stderr tfr-cat -R --split 2 -o "$T/x-%256d" "$T/big.tfr"
	[[ "$stderr" == *"a field width above 255"* ]]
	run -2 --separate-stderr tfr-cat -R --split 2 -o "$T/x-%5s" "$T/big.tfr"
	run -2 --separate-stderr tfr-cat -R --split 2 -o "$T/x" "$T/big.tfr"
	[ -z "$(ls "$T" | grep '^x')" ]
}

@test "tfr-cat: --split commits all its shards or none" {
	big
	# a fault in the input: no shard at all, and old shards stay
	head -c 50000 "$T/big.tfr" >"$T/cut.tfr"
	echo OLD >"$T/s-0"
	run -1 tfr-cat -R --split 3 -o "$T/s-%d" "$T/cut.tfr"
	[ "$(cat "$T/s-0")" = OLD ]
	[ ! -e "$T/s-1" ] && [ ! -e "$T/s-2" ]
	# the same with many shards (written a different way)
	run -1 tfr-cat -R --split 100 -o "$T/m-%d" "$T/cut.tfr"
	[ -z "$(ls "$T" | grep '^m-')" ]
	# --keep-partial commits every shard with the good records
	run -1 tfr-cat -R --keep-partial --split 3 -o "$T/s-%d" "$T/cut.tfr"
	tfr-cat -R "$T/cut.tfr" >"$T/good.tfr" || true
	[ "$(cat "$T/s-0" "$T/s-1" "$T/s-2" | tfr-cat -c)" = "$(tfr-cat -c "$T/good.tfr")" ]
}

# Inputs for --split --contiguous: big.tfr (cut anywhere by its records),
# a gzip file (whole to one part) and a small plain file.
contiguous_inputs() {
	big
	tfr-cat -R -n 30 -z gzip "$T/big.tfr" >"$T/mid.tfr.gz"
	tfr-cat -R --skip 990 "$T/big.tfr" >"$T/end.tfr"
}

@test "tfr-cat: shard K of --split N --contiguous is the output of --part K/N, N = 1..5" {
	local n k
	contiguous_inputs
	for n in 1 2 3 4 5; do
		run -0 --separate-stderr tfr-cat --split $n --contiguous \
		    -o "$T/c-%d-of-%d" "$T/big.tfr" "$T/mid.tfr.gz" "$T/end.tfr"
		[ -z "$stderr" ]
		for ((k = 0; k < n; k++)); do
			tfr-cat -R --part $k/$n "$T/big.tfr" "$T/mid.tfr.gz" \
			    "$T/end.tfr" >"$T/want"
			cmp "$T/want" "$T/c-$k-of-$n" || { echo "shard $k of $n"; false; }
		done
		# in order, the shards are the input
		cat "$T"/c-*-of-$n >"$T/got"
		cat "$T/big.tfr" >"$T/want"
		tfr-cat -R "$T/mid.tfr.gz" >>"$T/want"
		cat "$T/end.tfr" >>"$T/want"
		cmp "$T/want" "$T/got"
	done
}

@test "tfr-cat: --split --contiguous shuffles, selects features and reads JSON lines as --part does" {
	local opt k
	contiguous_inputs
	for opt in --shuffle "--shuffle-window 5" "-f a" "-z gzip"; do
		tfr-cat --split 3 --contiguous $opt -o "$T/s-%d" "$T/big.tfr" "$T/end.tfr"
		for k in 0 1 2; do
			tfr-cat -R --part $k/3 $opt "$T/big.tfr" "$T/end.tfr" >"$T/want"
			cmp "$T/want" "$T/s-$k" || { echo "$opt: shard $k"; false; }
		done
	done
	tfr-cat --flat "$T/big.tfr" >"$T/big.jsonl"
	tfr-cat --from-json --split 4 --contiguous -o "$T/j-%d" "$T/big.jsonl"
	for k in 0 1 2 3; do
		tfr-cat --from-json --part $k/4 "$T/big.jsonl" >"$T/want"
		cmp "$T/want" "$T/j-$k"
	done
	# more shards than are kept open at once
	tfr-cat --split 70 --contiguous -o "$T/m-%02d" "$T/big.tfr"
	for k in 0 33 69; do
		tfr-cat -R --part $k/70 "$T/big.tfr" >"$T/want"
		cmp "$T/want" "$T/m-$(printf %02d $k)"
	done
}

@test "tfr-cat: --split --contiguous commits all its shards or none" {
	big
	head -c 50000 "$T/big.tfr" >"$T/cut.tfr"
	echo OLD >"$T/s-0"
	run -1 tfr-cat --split 3 --contiguous -o "$T/s-%d" "$T/cut.tfr"
	[ "$(cat "$T/s-0")" = OLD ]
	[ ! -e "$T/s-1" ] && [ ! -e "$T/s-2" ]
	run -1 tfr-cat --split 100 --contiguous -o "$T/m-%d" "$T/cut.tfr"
	[ -z "$(ls "$T" | grep '^m-')" ]
	# --keep-partial commits every shard, together the good records
	run -1 tfr-cat --keep-partial --split 3 --contiguous -o "$T/s-%d" "$T/cut.tfr"
	tfr-cat -R "$T/cut.tfr" >"$T/good.tfr" || true
	cat "$T/s-0" "$T/s-1" "$T/s-2" >"$T/got"
	cmp "$T/good.tfr" "$T/got"
}

@test "tfr-cat: --contiguous usage errors: without --split, stdin, --shard, --skip, -n, --part" {
	big
	run -2 --separate-stderr tfr-cat --contiguous -R "$T/big.tfr"
	[[ "$stderr" == "tfr-cat: --contiguous goes with --split only"* ]]
	run -2 --separate-stderr tfr-cat --split 2 --contiguous -o "$T/s-%d" <"$T/big.tfr"
	[[ "$stderr" == "tfr-cat: --split --contiguous needs files: standard input cannot be cut into parts"* ]]
	for opt in "--shard 0/2" "--skip 1" "-n 3" "--part 0/2"; do
		run -2 --separate-stderr tfr-cat --split 2 --contiguous $opt -o "$T/s-%d" "$T/big.tfr"
		[[ "$stderr" == "tfr-cat: --split --contiguous excludes --part, --shard, --skip and -n"* ]]
	done
	# one shard is the whole input, from anywhere (as --part 0/1)
	tfr-cat --split 1 --contiguous -o "$T/one-%d" <"$T/big.tfr"
	cmp "$T/big.tfr" "$T/one-0"
}

# Shards k of a --split N run must hold what --shard k/N selects.
same_as_shard() {
	local pat=$1 n=$2 k
	shift 2
	for k in "$@"; do
		tfr-cat -R --shard "$k/$n" "$T/big.tfr" >"$T/want"
		tfr-cat -R "$(printf "$pat" "$k")" >"$T/got"
		cmp "$T/want" "$T/got"
	done
}

@test "tfr-cat: --split 65 and --split 10000 work under ulimit -n 1024" {
	big
	mkdir "$T/a" "$T/b" "$T/c" "$T/d"
	run -0 bash -c 'ulimit -n 1024; tfr-cat -R --split 65 -o "$1/s-%03d" "$2"' _ "$T/a" "$T/big.tfr"
	[ "$(ls "$T/a" | wc -l)" = 65 ]
	same_as_shard "$T/a/s-%03d" 65 0 17 64
	run -0 bash -c 'ulimit -n 1024; tfr-cat -R --split 10000 -o "$1/s-%05d-of-%05d.gz" "$2"' _ "$T/b" "$T/big.tfr"
	[ "$(ls "$T/b" | wc -l)" = 10000 ]
	[ "$(tfr-cat -c "$T"/b/s-0000* | tail -1)" = "10 total" ]
	same_as_shard "$T/b/s-%05d-of-10000.gz" 10000 0 999 9999
	run -0 bash -c 'ulimit -n 1024; tfr-cat -R --shuffle --split 10000 -o "$1/s-%05d" "$2"' _ "$T/c" "$T/big.tfr"
	[ "$(ls "$T/c" | wc -l)" = 10000 ]
	[ "$(cat "$T"/c/* | tfr-cat -c)" = 1000 ]
	run -0 bash -c 'ulimit -n 1024; tfr-cat -R --shuffle-window 3 --split 200 -o "$1/s-%05d" "$2"' _ "$T/d" "$T/big.tfr"
	# a shuffled shard holds the records of its plain shard
	tfr-cat --shard 7/200 "$T/big.tfr" | sort >"$T/want"
	tfr-cat "$T/d/s-00007" | sort >"$T/got"
	cmp "$T/want" "$T/got"
	[ "$(ls "$T/d" | wc -l)" = 200 ]
}

@test "tfr-cat: after a fault stdout holds what the good prefix gives, in every mode; -o is all-or-nothing unless --keep-partial" {
	local m
	big
	damage_at "$T/big.tfr" 700 "$T/bad.tfr" "$T/good.tfr"
	for m in "" --flat --index --stats -R "-R -z gzip" "-R --shuffle" "-R --shuffle-window 50" "-R -f a" "--type raw"; do
		same_prefix_output "$T/bad.tfr" "$T/good.tfr" tfr-cat $m
	done
	# -c reads headers only: a truncated record is its fault
	damage_at "$T/big.tfr" -5 "$T/bad.tfr" "$T/good.tfr"
	same_prefix_output "$T/bad.tfr" "$T/good.tfr" tfr-cat -c
	same_prefix_output "$T/bad.tfr" "$T/good.tfr" tfr-cat -R --shuffle
	# JSON in: a bad line
	tfr-cat "$T/big.tfr" | head -n 300 >"$T/good.jsonl"
	{ cat "$T/good.jsonl"; echo '{"a":['; tfr-cat "$T/big.tfr" | tail -n 5; } >"$T/bad.jsonl"
	same_prefix_output "$T/bad.jsonl" "$T/good.jsonl" tfr-cat --from-json
}

@test "tfr-cat: --index checks payload CRCs" {
	big
	damage_at "$T/big.tfr" 10 "$T/bad.tfr" "$T/good.tfr"
	run -1 --separate-stderr tfr-cat --index "$T/bad.tfr"
	[ "${#lines[@]}" = 10 ]
	[[ "$stderr" == *"record 10 at offset"* ]]
	run -0 --separate-stderr tfr-cat --index --no-crc "$T/bad.tfr"
	[ "${#lines[@]}" = 1000 ]
}

@test "tfr-cat: -f with no feature names is a usage error" {
	run -2 --separate-stderr tfr-cat -f '' "$T/three.tfr"
	[ -z "$output" ]
	[[ "$stderr" == "tfr-cat: -f: no feature names"* ]]
	run -2 --separate-stderr tfr-cat -R -f ',,' "$T/three.tfr"
	[ -z "$output" ]
}

@test "tfr-cat: --from-json refuses a feature given twice, naming it, the line and the byte" {
	printf '%s\n' '{"a":[1]}' '{"a":[1],"b":[2],"a":[3]}' >"$T/dup.jsonl"
	run -1 --separate-stderr tfr-cat -R --from-json -o "$T/dup.tfr" "$T/dup.jsonl"
	[ "$stderr" = "tfr-cat: $T/dup.jsonl: line 2: duplicate feature \"a\" at byte 17" ]
	[ ! -e "$T/dup.tfr" ]
	printf '%s\n' '{"features":{"feature":{"x":{"int64List":{}},"x":{"int64List":{}}}}}' >"$T/dup.jsonl"
	run -1 --separate-stderr tfr-cat -R --from-json "$T/dup.jsonl"
	[ "$stderr" = "tfr-cat: $T/dup.jsonl: line 1: duplicate feature \"x\" at byte 45" ]
	printf '%s\n' '{"context":{},"feature_lists":{"s":[[1]],"s":[[2]]}}' >"$T/dup.jsonl"
	run -1 --separate-stderr tfr-cat -R --from-json "$T/dup.jsonl"
	[ "$stderr" = "tfr-cat: $T/dup.jsonl: line 1: duplicate feature list \"s\" at byte 41" ]
}

# Manifests (--manifest, --check-manifest)

mnist_like() {	# DIR: two files of MNIST-shaped Examples (4x4 here) and a manifest
	mkdir -p "$1/sub"
	for i in 0 1 2; do
		printf '{"image":[%s],"label":[%d]}\n' \
		    "$(seq -s, 0.5 1 15.5)" "$i"
	done | tfr-cat -R --from-json >"$1/a.tfrecords"
	for i in 3 4; do
		printf '{"image":[%s],"label":[%d]}\n' \
		    "$(seq -s, 0.5 1 15.5)" "$i"
	done | tfr-cat -R --from-json >"$1/sub/b.tfrecords"
	echo junk >"$1/notes.txt"
	tfr-cat --manifest "$1/a.tfrecords" "$1/sub/b.tfrecords" >"$1/__manifest__.json"
}

@test "tfr-cat: --manifest infers Examples: dtype, shape, deserialize_type, compression null" {
	mnist_like "$T/ds"
	run -0 cat "$T/ds/__manifest__.json"
	[ "${lines[1]}" = '  "compression": null,' ]
	[ "${lines[2]}" = '  "allow_var_len": false,' ]
	[ "${lines[4]}" = '    {"name": "image", "dtype": "float32", "shape": [16], "var_len": false, "deserialize_type": "float"},' ]
	[ "${lines[5]}" = '    {"name": "label", "dtype": "int64", "shape": [], "var_len": false, "deserialize_type": "int"}' ]
	tfr-cat -R -z zlib "$T/ds/a.tfrecords" >"$T/z.tfrecords"
	run -0 tfr-cat --manifest "$T/z.tfrecords"
	[ "${lines[1]}" = '  "compression": "zlib",' ]
}

@test "tfr-cat: --manifest infers SequenceExamples: context and feature lists" {
	printf '%s\n' '{"context":{"id":["a"]},"feature_lists":{"x":[[1.5,2],[3.5,4]]}}' \
	    '{"context":{"id":["b"]},"feature_lists":{"x":[[5.5,6]]}}' |
	    tfr-cat -R --from-json >"$T/seq.tfrecords"
	run -0 tfr-cat --manifest "$T/seq.tfrecords"
	[ "${lines[2]}" = '  "allow_var_len": true,' ]
	[ "${lines[4]}" = '    {"name": "id", "dtype": "string", "shape": [], "var_len": false, "deserialize_type": "string"},' ]
	[ "${lines[5]}" = '    {"name": "x", "dtype": "float32", "shape": [2], "var_len": true, "deserialize_type": "float"}' ]
}

@test "tfr-cat: --manifest refuses lists of varying length and optional features, naming them" {
	printf '%s\n' '{"a":[1,2]}' '{"a":[1,2]}' '{"a":[1]}' | tfr-cat -R --from-json >"$T/v.tfrecords"
	run -1 --separate-stderr tfr-cat --manifest "$T/v.tfrecords"
	[ -z "$output" ]
	[ "$stderr" = "tfr-cat: $T/v.tfrecords: record 2: offset 62: feature 'a': 2 values in $T/v.tfrecords record 0 but 1 in $T/v.tfrecords record 2; a fixed-length manifest cannot state it (--var-len states it as a list of varying length)" ]
	printf '%s\n' '{"a":[1]}' '{"a":[1],"b":[2]}' | tfr-cat -R --from-json >"$T/o.tfrecords"
	run -1 --separate-stderr tfr-cat --manifest "$T/o.tfrecords"
	[[ "$stderr" == *"feature 'b' is in $T/o.tfrecords record 1 but not in $T/o.tfrecords record 0"* ]]
}

# SequenceExamples shaped as TFX writes them: record 0's context features
# are Features with no kind set.
tfx_like() {	# FILE
	printf '%s\n' '{"context":{"f":null,"i":null},"feature_lists":{"s":[["a"],["b"]]}}' \
	    '{"context":{"f":[1.5],"i":[7]},"feature_lists":{"s":[["b"],["c"]]}}' \
	    '{"context":{"f":[2.5],"i":[8]},"feature_lists":{"s":[["c"]]}}' |
	    tfr-cat -R --from-json >"$1"
}

@test "tfr-cat: --manifest --var-len takes the kind of a feature from the records that set one" {
	tfx_like "$T/tfx.tfrecords"
	run -0 --separate-stderr tfr-cat --manifest --var-len "$T/tfx.tfrecords"
	[ -z "$stderr" ]
	[ "${lines[4]}" = '    {"name": "f", "dtype": "float32", "shape": [], "var_len": true, "deserialize_type": "float"},' ]
	[ "${lines[5]}" = '    {"name": "i", "dtype": "int64", "shape": [], "var_len": true, "deserialize_type": "int"},' ]
	[ "${lines[6]}" = '    {"name": "s", "dtype": "string", "shape": [], "var_len": true, "deserialize_type": "string"}' ]
	printf '%s\n' "$output" >"$T/m.json"
	run -0 tfr-cat -q --check-manifest "$T/m.json" "$T/tfx.tfrecords"
	# without --var-len, record 0's empty list is a length a fixed-length manifest cannot state
	run -1 --separate-stderr tfr-cat --manifest "$T/tfx.tfrecords"
	[[ "$stderr" == *"feature 'f': 0 values in $T/tfx.tfrecords record 0 but 1 in $T/tfx.tfrecords record 1; a fixed-length manifest cannot state it (--var-len states it"* ]]
}

@test "tfr-cat: --manifest names the record that set a kind when another record differs" {
	printf '%s\n' '{"context":{"f":null},"feature_lists":{}}' \
	    '{"context":{"f":[1.5]},"feature_lists":{}}' \
	    '{"context":{"f":[7]},"feature_lists":{}}' |
	    tfr-cat -R --from-json >"$T/k.tfrecords"
	run -1 --separate-stderr tfr-cat --manifest --var-len "$T/k.tfrecords"
	[[ "$stderr" == *"feature 'f': a float list in $T/k.tfrecords record 1 but an int64 list in $T/k.tfrecords record 2" ]]
}

@test "tfr-cat: --manifest states a feature no record gives a kind, with a warning naming it" {
	printf '%s\n' '{"context":{"f":null,"i":[1]},"feature_lists":{"e":[]}}' \
	    '{"context":{"f":null,"i":[2]},"feature_lists":{"e":[]}}' |
	    tfr-cat -R --from-json >"$T/n.tfrecords"
	run -0 --separate-stderr tfr-cat --manifest "$T/n.tfrecords"
	[ "$stderr" = "tfr-cat: feature 'f': no record gives it a kind; stated as a string with no values
tfr-cat: feature 'e': no record gives it a kind; stated as a string with no values" ]
	[ "${lines[4]}" = '    {"name": "e", "dtype": "string", "shape": [], "var_len": true, "deserialize_type": "string"},' ]
	[ "${lines[5]}" = '    {"name": "f", "dtype": "string", "shape": [0], "var_len": false, "deserialize_type": "string"},' ]
	printf '%s\n' "$output" >"$T/m.json"
	run -0 tfr-cat -q --check-manifest "$T/m.json" "$T/n.tfrecords"
}

@test "tfr-cat: --manifest --var-len describes TFX's SequenceExample file, which --check-manifest then passes" {
	need_shared tfrecord-samples/tfx_sequence_eval.tfrecord.gz
	f="$SHARED/tfrecord-samples/tfx_sequence_eval.tfrecord.gz"
	run -0 --separate-stderr tfr-cat --manifest --var-len "$f"
	[ -z "$stderr" ]
	[ "${lines[1]}" = '  "compression": "gzip",' ]
	[ "${lines[4]}" = '    {"name": "f", "dtype": "float32", "shape": [], "var_len": true, "deserialize_type": "float"},' ]
	printf '%s\n' "$output" >"$T/m.json"
	run -0 tfr-cat --check-manifest "$T/m.json" "$f"
	[ "$output" = "$T/m.json: 4500 records in 1 files, OK" ]
}

@test "tfr-cat: --manifest states the -f features of the records after --skip, up to -n" {
	# record 0 lacks 'b', record 3 has a longer 'a': only records 1 and 2 agree
	printf '%s\n' '{"a":[1]}' '{"a":[1],"b":[2.5],"c":["x"]}' \
	    '{"a":[2],"b":[3.5],"c":["y","z"]}' '{"a":[1,2],"b":[4.5],"c":["z"]}' |
	    tfr-cat -R --from-json >"$T/sel.tfrecords"
	run -0 --separate-stderr tfr-cat --manifest -f a,b --skip 1 -n 2 "$T/sel.tfrecords"
	[ -z "$stderr" ]
	[ "${#lines[@]}" = 8 ]
	[ "${lines[4]}" = '    {"name": "a", "dtype": "int64", "shape": [], "var_len": false, "deserialize_type": "int"},' ]
	[ "${lines[5]}" = '    {"name": "b", "dtype": "float32", "shape": [], "var_len": false, "deserialize_type": "float"}' ]
	run -1 --separate-stderr tfr-cat --manifest -f a,b --skip 1 "$T/sel.tfrecords"
	[[ "$stderr" == *"feature 'a': 1 values in $T/sel.tfrecords record 1 but 2 in $T/sel.tfrecords record 3;"* ]]
	run -0 tfr-cat --manifest -f a --shard 0/2 "$T/sel.tfrecords"
	[ "${lines[4]}" = '    {"name": "a", "dtype": "int64", "shape": [], "var_len": false, "deserialize_type": "int"}' ]
}

@test "tfr-cat: --check-manifest checks the records after --skip, up to -n; -f is a usage error" {
	printf '%s\n' '{"a":[1,2]}' '{"a":[1]}' '{"a":[2]}' '{"a":[3,4]}' |
	    tfr-cat -R --from-json >"$T/c.tfrecords"
	tfr-cat --manifest --skip 1 -n 2 "$T/c.tfrecords" >"$T/m.json"
	run -0 tfr-cat --check-manifest "$T/m.json" --skip 1 -n 2 "$T/c.tfrecords"
	[ "$output" = "$T/m.json: 2 records in 1 files, OK" ]
	run -1 --separate-stderr tfr-cat --check-manifest "$T/m.json" --skip 1 "$T/c.tfrecords"
	[[ "$stderr" == "tfr-cat: $T/c.tfrecords: record 3: "*"feature 'a': 2 values, but its shape wants 1" ]]
	run -2 --separate-stderr tfr-cat --check-manifest "$T/m.json" -f a "$T/c.tfrecords"
	[[ "$stderr" == "tfr-cat: -f does not apply to --check-manifest: it checks every feature of the manifest"* ]]
}

@test "tfr-cat: --check-manifest on a dir dataset checks every .tfrecords file under it" {
	mnist_like "$T/ds"
	run -0 tfr-cat --check-manifest "$T/ds"
	[ "$output" = "$T/ds: 5 records in 2 files, OK" ]
	printf '{"image":[%s],"label":[9]}\n' "$(seq -s, 0.5 1 14.5)" |
	    tfr-cat -R --from-json >"$T/ds/sub/c.tfrecords"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/ds"
	[ "$stderr" = "tfr-cat: $T/ds/sub/c.tfrecords: record 0: offset 0: feature 'image': 15 values, but its shape wants 16" ]
}

@test "tfr-cat: --check-manifest names a missing feature, a kind and a compression mismatch" {
	mnist_like "$T/ds"
	printf '%s\n' '{"label":[1]}' | tfr-cat -R --from-json >"$T/m.tfrecords"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/ds/__manifest__.json" "$T/m.tfrecords"
	[[ "$stderr" == *"record 0: offset 0: feature 'image' is missing" ]]
	printf '{"image":[%s],"label":[1.5]}\n' "$(seq -s, 0.5 1 15.5)" | tfr-cat -R --from-json >"$T/k.tfrecords"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/ds/__manifest__.json" "$T/k.tfrecords"
	[[ "$stderr" == *"feature 'label': a float list, but the manifest says an int64 list (int)" ]]
	tfr-cat -R -z gzip "$T/ds/a.tfrecords" >"$T/g.tfrecords"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/ds/__manifest__.json" "$T/g.tfrecords"
	[ "$stderr" = "tfr-cat: $T/g.tfrecords: the file is gzip-compressed, but the manifest says none" ]
}

@test "tfr-cat: --check-manifest with a list dataset and raw features of dtype x shape x len bytes" {
	mnist_like "$T/ds"
	printf '%s\n' "$T/ds/a.tfrecords" '' "  $T/ds/sub/b.tfrecords  " >"$T/files.txt"
	printf '{"type":"list","args":{"manifest_file":"%s","list_file":"%s"}}\n' \
	    "$T/ds/__manifest__.json" "$T/files.txt" >"$T/spec.json"
	run -0 tfr-cat --check-manifest "$T/spec.json"
	[ "$output" = "$T/spec.json: 5 records in 2 files, OK" ]
	# raw: two int16 [3] tensors per record, 6 bytes each
	printf '%s\n' '{"r":["abcdef","ghijkl"]}' '{"r":["abcdef","ghijk"]}' | tfr-cat -R --from-json >"$T/raw.tfrecords"
	cat >"$T/raw.json" <<'J'
{
  // two little-endian int16 vectors a record
  "compression": null, "allow_var_len": false,
  "features": [{"name": "r", "dtype": "int16", "shape": [3],
    "deserialize_type": "raw", "deserialize_args": {"endian": "little", "len": 2}}]
}
J
	run -1 --separate-stderr tfr-cat --check-manifest "$T/raw.json" "$T/raw.tfrecords"
	[ "$stderr" = "tfr-cat: $T/raw.tfrecords: record 1: offset 43: feature 'r': raw bytes 1 hold 5 bytes, not 6 (int16 x 3)" ]
}

@test "tfr-cat: --check-manifest refuses bad manifests with the key path" {
	bad() {
		printf '%s\n' "$1" >"$T/m.json"
		run -1 --separate-stderr tfr-cat --check-manifest "$T/m.json" /dev/null
		[ "$stderr" = "tfr-cat: $T/m.json: $2" ]
	}
	bad '{"compression":null,"allow_var_len":false}' "missing required key 'features'"
	bad '{"compression":"lz4","allow_var_len":false,"features":[]}' 'compression: expected "zlib", "gzip" or null'
	bad '{"compression":null,"allow_var_len":false,"features":[],"x":1}' 'x: unknown key'
	bad '{"compression":null,"allow_var_len":false,"features":[{"name":"a","dtype":"int64","shape":[],"deserialize_type":"int","var_len":true}]}' "features[0].var_len: true, but the manifest's allow_var_len is false"
	bad '{"compression":null,"allow_var_len":true,"features":[{"name":"a","dtype":"int64","shape":[],"deserialize_type":"int"}]}' "features[0]: missing required key 'var_len'"
	bad '{"compression":null,"allow_var_len":false,"features":[{"name":"a","dtype":"int64","shape":[2,"x"],"deserialize_type":"int"}]}' 'features[0].shape[1]: expected an integer'
	bad '{"compression":null,"allow_var_len":false,"features":[{"name":"a","dtype":"int64","shape":[],"deserialize_type":"raw","deserialize_args":{"endian":"middle"}}]}' 'features[0].deserialize_args.endian: expected "little" or "big"'
	bad '{"compression":null,"allow_var_len":false,"features":[{"name":"a","dtype":"quux","shape":[],"deserialize_type":"int"}]}' "features[0].dtype: unknown dtype 'quux'"
	bad '{"compression":null, // no comment can hide a brace
}' 'line 2: column 1: string or '"'"'}'"'"' expected near '"'"'}'"'"''
}

@test "tfr-cat: --check-manifest names the step of a feature list" {
	printf '%s\n' '{"context":{"id":["a"]},"feature_lists":{"x":[[1.5,2],[3.5,4]]}}' |
	    tfr-cat -R --from-json >"$T/seq.tfrecords"
	tfr-cat --manifest "$T/seq.tfrecords" >"$T/m.json"
	printf '%s\n' '{"context":{"id":["b"]},"feature_lists":{"x":[[1.5,2],[3.5]]}}' |
	    tfr-cat -R --from-json >"$T/bad.tfrecords"
	run -1 --separate-stderr tfr-cat --check-manifest "$T/m.json" "$T/bad.tfrecords"
	[ "$stderr" = "tfr-cat: $T/bad.tfrecords: record 0: offset 0: feature 'x' step 1: 1 values, but its shape wants 2" ]
	run -0 tfr-cat --check-manifest "$T/m.json" "$T/seq.tfrecords"
}

@test "tfr-cat: --manifest refuses a context feature and a feature list of the same name" {
	printf '%s\n' '{"context":{"x":[1]},"feature_lists":{"x":[[1],[2]]}}' |
	    tfr-cat -R --from-json >"$T/both.tfrecords"
	run -1 --separate-stderr tfr-cat --manifest "$T/both.tfrecords"
	[ -z "$output" ]
	[ "$stderr" = "tfr-cat: 'x' is both a context feature and a feature list; a manifest names each once" ]
}

@test "tfr-cat: --from-json warns once per feature whose kind changes between records" {
	# jq 1.6 prints 0.0 as 0: a float feature would turn int64
	printf '%s\n' '{"x":[0.5],"y":[1]}' '{"x":[0.25],"y":[2]}' '{"x":[0],"y":[3]}' \
	    '{"x":[1],"y":[4]}' '{"x":[0.5],"y":[5]}' >"$T/k.jsonl"
	run -0 --separate-stderr tfr-cat --from-json -o "$T/k.tfr" "$T/k.jsonl"
	[ "$stderr" = "tfr-cat: $T/k.jsonl: feature 'x' is float in record 0 and int64 from record 2: pass --like FILE to keep the kinds" ]
	# with --like the kinds are kept, and nothing is said
	printf '%s\n' '{"x":[0.5],"y":[1]}' | tfr-cat --from-json -o "$T/ref.tfr"
	run -0 --separate-stderr tfr-cat --from-json --like "$T/ref.tfr" -o "$T/k2.tfr" "$T/k.jsonl"
	[ -z "$stderr" ]
	# a later input names the one where the kind was seen first
	printf '%s\n' '{"x":[3]}' >"$T/k3.jsonl"
	tfr-cat --flat "$T/ref.tfr" >"$T/ref.jsonl"
	run -0 --separate-stderr tfr-cat --from-json -o "$T/k4.tfr" "$T/ref.jsonl" "$T/k3.jsonl"
	[ "$stderr" = "tfr-cat: $T/k3.jsonl: feature 'x' is float in $T/ref.jsonl record 0 and int64 from record 0: pass --like FILE to keep the kinds" ]
	# -f: only the features kept; feature lists name the step
	run -0 --separate-stderr tfr-cat --from-json -f y -o "$T/k5.tfr" "$T/k.jsonl"
	[ -z "$stderr" ]
	printf '%s\n' '{"context":{},"feature_lists":{"s":[[0.5],[0]]}}' >"$T/s.jsonl"
	run -0 --separate-stderr tfr-cat --from-json -o "$T/s.tfr" "$T/s.jsonl"
	[ "$stderr" = "tfr-cat: $T/s.jsonl: feature list 's' is float in record 0 step 0 and int64 from record 0 step 1: pass --like FILE to keep the kinds" ]
}

@test "tfr-cat: --from-json --like takes feature kinds from a record file or a manifest, not from jq's numbers" {
	printf '%s\n' '{"f":[0.0,1.5],"i":[1,2],"s":["a"]}' '{"f":[2.0,3.0],"i":[3,4],"s":["b"]}' |
	    tfr-cat --from-json -o "$T/ref.tfr"
	# what jq 1.6 does to floats with nothing after the point
	printf '%s\n' '{"f":[0,1.5],"i":[1,2],"s":["a"]}' '{"f":[2,3],"i":[3,4],"s":["b"]}' >"$T/jq.jsonl"
	# without a reference the second record's floats come back as int64, with a warning
	run -0 --separate-stderr bash -c 'tfr-cat --from-json "$1" | tfr-cat --flat' _ "$T/jq.jsonl"
	[ "${lines[1]}" = '{"f":[2,3],"i":[3,4],"s":["b"]}' ]
	[ "$stderr" = "tfr-cat: $T/jq.jsonl: feature 'f' is float in record 0 and int64 from record 1: pass --like FILE to keep the kinds" ]
	tfr-cat --from-json --like "$T/ref.tfr" "$T/jq.jsonl" | cmp - "$T/ref.tfr"
	tfr-cat --manifest "$T/ref.tfr" >"$T/m.json"
	tfr-cat --from-json --like "$T/m.json" "$T/jq.jsonl" | cmp - "$T/ref.tfr"
	mkdir -p "$T/ds"
	cp "$T/m.json" "$T/ds/__manifest__.json"
	tfr-cat --from_json --like "$T/ds" -o "$T/back.tfr" "$T/jq.jsonl"
	cmp "$T/back.tfr" "$T/ref.tfr"
	# an empty list takes the feature's kind
	run -0 bash -c 'echo "{\"f\":[],\"i\":[1],\"s\":[\"x\"]}" | tfr-cat --from-json --like "$1" | tfr-cat --flat' _ "$T/ref.tfr"
	[ "$output" = '{"f":{"float_list":[]},"i":[1],"s":["x"]}' ]
	if command -v jq >/dev/null; then
		tfr-cat --flat "$T/ref.tfr" | jq -c . | tfr-cat --from-json --like "$T/ref.tfr" | cmp - "$T/ref.tfr"
	fi
}

@test "tfr-cat: --from-json --like: values that cannot have the feature's kind are errors naming it" {
	printf '%s\n' '{"f":[0.5],"i":[1],"s":["a"]}' | tfr-cat --from-json -o "$T/ref.tfr"
	run -1 --separate-stderr bash -c 'echo "{\"i\":[1.5]}" | tfr-cat --from-json --like "$1"' _ "$T/ref.tfr"
	[ "$stderr" = 'tfr-cat: stdin: line 1: feature "i": a value with a fraction or an exponent, but the feature is int64 at byte 5' ]
	run -1 --separate-stderr bash -c 'echo "{\"s\":[1]}" | tfr-cat --from-json --like "$1"' _ "$T/ref.tfr"
	[[ "$stderr" == *'feature "s": numbers, but the feature is bytes'* ]]
	run -2 --separate-stderr tfr-cat --like "$T/ref.tfr" "$T/ref.tfr"
	[[ "$stderr" == "tfr-cat: --like gives the feature kinds for --from-json"* ]]
	run -1 --separate-stderr tfr-cat --from-json --like "$T/nosuch" "$T/ref.tfr"
	[ "$stderr" = "tfr-cat: $T/nosuch: No such file or directory" ]
	printf '{"features": [{"name": "x", "dtype": "nope"}]}\n' >"$T/bad.json"
	run -1 --separate-stderr tfr-cat --from-json --like "$T/bad.json" /dev/null
	[[ "$stderr" == "tfr-cat: --like $T/bad.json: "* ]]
}

load tools/part-helpers

# Records of every size, an empty file, one record spanning several
# parts, gzip and zlib files mixed in.
part_inputs() {
	raw_records 120 >"$T/p1.tfr"
	: >"$T/p0.tfr"
	raw_records 40 | gzip >"$T/p2.tfr"
	one_record 100000 >"$T/p3.tfr"
	raw_records 30 | tfr-cat -R -z zlib >"$T/p4.tfr"
	cat "$T/p3.tfr" "$T/p1.tfr" >"$T/p5.tfr"
	parts=("$T/p1.tfr" "$T/p0.tfr" "$T/p2.tfr" "$T/p3.tfr" "$T/p4.tfr" "$T/p5.tfr")
}

@test "tfr-cat: --part K/N outputs concatenated are one run's (-R, JSON, --index, -c; N = 1..7)" {
	part_inputs
	part_law cat tfr-cat -R --type raw "${parts[@]}"
	part_law cat tfr-cat --type raw "${parts[@]}"
	part_law cat tfr-cat --index "$T/p1.tfr" "$T/p0.tfr" "$T/p3.tfr" "$T/p5.tfr"
	part_law sum tfr-cat -c "${parts[@]}"
	part_law cat tfr-cat -R --type raw "$T/p0.tfr"
	part_law cat tfr-cat -R --type raw "$T/p3.tfr"
}

@test "tfr-cat: --from-json --part cuts at line starts" {
	big
	tfr-cat --flat "$T/big.tfr" >"$T/big.jsonl"
	printf '{"a":[1]}' >"$T/nonl.jsonl"
	part_law cat tfr-cat -R --from-json "$T/big.jsonl" "$T/nonl.jsonl" "$T/three.jsonl"
}

@test "tfr-cat: --part reads its own bytes: damage in another part does not touch it" {
	raw_records 200 >"$T/a.tfr"
	local size
	size=$(stat -c %s "$T/a.tfr")
	cp "$T/a.tfr" "$T/bad.tfr"
	# A byte in the last quarter changed: parts 0 and 1 of 2 ... 0 of 4 are fine.
	flip_byte "$T/bad.tfr" $((size - size / 8))
	tfr-cat -R --part 0/2 "$T/a.tfr" >"$T/want"
	run -0 --separate-stderr tfr-cat -R --part 0/2 "$T/bad.tfr"
	tfr-cat -R --part 0/2 "$T/bad.tfr" | cmp - "$T/want"
	run -1 --separate-stderr tfr-cat -R --part 1/2 "$T/bad.tfr"
	[[ "$stderr" == "tfr-cat: $T/bad.tfr: record "*" at offset "*": "*"CRC mismatch"* ]]
}

@test "tfr-cat: --part record numbers count from the part, offsets are the file's" {
	raw_records 300 >"$T/a.tfr"
	local size off n
	size=$(stat -c %s "$T/a.tfr")
	# A payload byte changed at about 70% of the file (part 1 of 2).
	off=$(tfr-cat --index "$T/a.tfr" | awk -v s="$size" '$1 > s * 0.7 { print $1; exit }')
	flip_byte "$T/a.tfr" $((off + 12))
	run -1 --separate-stderr tfr-cat --index "$T/a.tfr"
	n=${#lines[@]}
	[ "$stderr" = "tfr-cat: $T/a.tfr: record $n at offset $off: payload CRC mismatch" ]
	run -1 --separate-stderr tfr-cat --index --part 1/2 "$T/a.tfr"
	[ "$stderr" = "tfr-cat: $T/a.tfr: record ${#lines[@]} at offset $off: payload CRC mismatch" ]
	[ "${#lines[@]}" -lt "$n" ] && [ "${#lines[@]}" -gt 0 ]
	# Part 0 ends before the damage and is whole.
	run -0 --separate-stderr tfr-cat -c --part 0/2 "$T/a.tfr"
	[ -z "$stderr" ]
}

@test "tfr-cat: records stored inside a record fool the search; the part then fails, never writes wrong output" {
	local i
	# A record whose payload is itself 10 records of 20000 bytes.
	raw_records 3 >"$T/a.tfr"
	for i in 1 2 3 4 5 6 7 8 9 10; do one_record 20000; done >"$T/inner"
	printf '"%s"\n' "$(base64 -w0 "$T/inner")" | tfr-cat --from-json --type raw -R >>"$T/a.tfr"
	raw_records 3 >>"$T/a.tfr"
	run -0 tfr-cat -c "$T/a.tfr"
	[ "$output" = 7 ]
	run -1 --separate-stderr tfr-cat -c --part 0/2 "$T/a.tfr"
	[[ "$stderr" == *": record crosses the end of the part at offset "* ]]
	run -1 --separate-stderr tfr-cat -c --part 1/2 "$T/a.tfr"
}

@test "tfr-cat: --recover --part: the parts write the records one run writes" {
	raw_records 200 >"$T/a.tfr"
	local size
	size=$(stat -c %s "$T/a.tfr")
	# Damage around the middle, across the boundary of 2 parts.
	head -c 3000 /dev/urandom | dd of="$T/a.tfr" bs=1 seek=$((size / 2 - 1500)) conv=notrunc 2>/dev/null
	run -1 tfr-cat -R -q --recover "$T/a.tfr"
	tfr-cat -R -q --recover "$T/a.tfr" >"$T/one" || true
	{ tfr-cat -R -q --recover --part 0/2 "$T/a.tfr" || true
	  tfr-cat -R -q --recover --part 1/2 "$T/a.tfr" || true; } >"$T/two"
	cmp "$T/one" "$T/two"
}

@test "tfr-cat: --part usage errors: stdin, a pipe, --shard, --skip, -n, --manifest" {
	big
	run -2 --separate-stderr tfr-cat --part 0/2 <"$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part needs files: standard input cannot be cut into parts" ]
	run -2 --separate-stderr tfr-cat --part 0/2 <(cat "$T/big.tfr")
	[[ "${stderr%%$'\n'*}" == "tfr-cat: --part needs regular files: /dev/fd/"*" is not one" ]]
	run -2 --separate-stderr tfr-cat --part 0/2 --shard 0/2 "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part excludes --shard, --skip and -n: they count records from the start of the input, which a part does not read" ]
	run -2 --separate-stderr tfr-cat --part 0/2 --skip 1 "$T/big.tfr"
	run -2 --separate-stderr tfr-cat --part 0/2 -n 1 "$T/big.tfr"
	run -2 --separate-stderr tfr-cat --part 0/2 --manifest "$T/big.tfr"
	run -2 --separate-stderr tfr-cat --part 0/0 "$T/big.tfr"
	run -2 --separate-stderr tfr-cat --part x "$T/big.tfr"
	# N = 1 is the whole input, from anywhere.
	tfr-cat -c --part 0/1 <"$T/big.tfr" >"$T/n"
	[ "$(cat "$T/n")" = 1000 ]
}

@test "tfr-cat: a --split rename that fails late puts the shards renamed before it back" {
	local a
	big
	for a in 3 100; do
		rm -rf "$T/o"
		mkdir "$T/o"
		echo OLD0 >"$T/o/sh-0"
		echo OLD1 >"$T/o/sh-1"
		mkfifo "$T/o.fifo"
		# Once the shards are open (names checked), sh-2 becomes a directory.
		(
			for i in $(seq 200); do
				compgen -G "$T/o/sh-0.*" >/dev/null && break
				sleep 0.05
			done
			mkdir "$T/o/sh-2"
			cat "$T/big.tfr"
		) >"$T/o.fifo" &
		run -1 --separate-stderr tfr-cat -R --split $a -o "$T/o/sh-%d" "$T/o.fifo"
		wait
		rm -f "$T/o.fifo"
		[ "$stderr" = "tfr-cat: $T/o/sh-2: Is a directory" ] || { echo "$a: $stderr"; false; }
		[ "$(cat "$T/o/sh-0")" = OLD0 ]
		[ "$(cat "$T/o/sh-1")" = OLD1 ]
		# Nothing else: no temporaries, no kept copies, no new shards.
		[ "$(cd "$T/o" && echo *)" = "sh-0 sh-1 sh-2" ] || { echo "$a: $(ls "$T/o")"; false; }
	done
}

# SequenceExample steps past every size at which a reader changes its
# way of reading (1 MiB: left in the record; 2 MiB; 16 MiB: a big
# record), of int64s and of bytes, between small steps.  Each step
# must read back whole: steps over 1 MiB once came back empty.
@test "tfr-cat: feature-list steps past 1, 2 and 16 MiB keep their values" {
	python3 - "$T" <<'PY'
import base64, json, sys
t = sys.argv[1]
ids = [list(range(30000, 530000)), [1, 2, 3], list(range(2, 6000002)), [7]]
img = [[base64.b64encode(bytes([i % 251 for i in range(n)])).decode()]
       for n in (2 << 20, 5, (1 << 20) + 1, 17 << 20)]
with open(t + "/big.json", "w") as f:
    json.dump({"context": {}, "feature_lists": {"ids": ids, "img": img}}, f)
with open(t + "/want.flat", "w") as f:
    json.dump({"context": {}, "feature_lists": {"ids": ids, "img": img}}, f,
              separators=(",", ":"))
    f.write("\n")
PY
	tfr-cat --from-json -R "$T/big.json" >"$T/big.tfr"
	run -0 --separate-stderr tfr-cat -R "$T/big.tfr"
	tfr-cat -R "$T/big.tfr" | cmp - "$T/big.tfr"
	# --flat writes every value (bytes as base64)
	tfr-cat --flat "$T/big.tfr" >"$T/got.flat"
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)' \
		"$T/got.flat" "$T/want.flat"
	# the JSON form reads back to the same record
	tfr-cat "$T/big.tfr" | tfr-cat --from-json -R | cmp - "$T/big.tfr"
	# -f keeps the list whole (the record is canonical: the same bytes)
	tfr-cat -R -f ids,img "$T/big.tfr" | cmp - "$T/big.tfr"
	tfr-cat -R -f ids "$T/big.tfr" | tfr-cat --flat | python3 -c '
import json, sys
d = json.load(sys.stdin)["feature_lists"]["ids"]
sys.exit(not (len(d) == 4 and len(d[0]) == 500000 and d[0][-1] == 529999 and len(d[2]) == 6000000 and d[3] == [7]))'
}

@test "tfr-cat: --part takes digits only: a blank on either side is refused alike" {
	big
	for p in ' 0/2' '0/2 ' '0/ 2' '0 /2' '+0/2' '0/+2' '0x0/2'; do
		run -2 --separate-stderr tfr-cat --part "$p" -R "$T/big.tfr"
		[ "${stderr%%$'\n'*}" = "tfr-cat: --part: expected K/N with 0 <= K < N, not '$p'" ]
	done
	run -0 tfr-cat --part 0/2 -R "$T/big.tfr"
}

# auto_part WANT_K WANT_N ENV...: --part auto under ENV is --part K/N.
auto_part() {
	local k=$1 n=$2
	shift 2
	env -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_ARRAY_TASK_ID -u SGE_TASK_ID \
		-u PARALLEL_SEQ "$@" tfr-cat -R --part auto "$T/big.tfr" >"$T/auto.tfr"
	tfr-cat -R --part "$k/$n" "$T/big.tfr" | cmp - "$T/auto.tfr"
}

@test "tfr-cat: --part auto takes the part from Slurm, MPI, Grid Engine and GNU parallel" {
	big
	auto_part 2 5 SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=5 SLURM_ARRAY_TASK_COUNT=5
	auto_part 1 3 SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=14 SLURM_ARRAY_TASK_STEP=2
	auto_part 3 4 OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4
	auto_part 0 2 PMI_RANK=0 PMI_SIZE=2
	auto_part 2 4 SGE_TASK_ID=5 SGE_TASK_FIRST=1 SGE_TASK_LAST=7 SGE_TASK_STEPSIZE=2
	# an MPI rank comes before a Slurm array the launch runs in
	auto_part 1 2 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=6
	# GNU parallel numbers jobs from 1 and gives no count: auto/N
	PARALLEL_SEQ=2 tfr-cat -R --part auto/3 "$T/big.tfr" >"$T/auto.tfr"
	tfr-cat -R --part 1/3 "$T/big.tfr" | cmp - "$T/auto.tfr"
	# and the parts of an array tile the input
	for id in 0 1 2 3; do
		SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 \
			tfr-cat -R --part auto "$T/big.tfr"
	done | cmp - "$T/big.tfr"
}

@test "tfr-cat: --part auto refuses what it cannot trust, naming the variables" {
	big
	clean="env -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_ARRAY_TASK_ID -u SGE_TASK_ID -u PARALLEL_SEQ"
	run -2 --separate-stderr $clean tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: no engine gives the part: none of OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_ARRAY_TASK_ID, SGE_TASK_ID or PARALLEL_SEQ is set" ]
	run -2 --separate-stderr $clean OMPI_COMM_WORLD_RANK=4 OMPI_COMM_WORLD_SIZE=4 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: part 4 of 4 from OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE: not 0 <= K < N" ]
	run -2 --separate-stderr $clean PMI_RANK=-1 PMI_SIZE=4 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: PMI_RANK=-1 is not a task number (digits only)" ]
	run -2 --separate-stderr $clean PMI_RANK=1 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: PMI_RANK is set but not PMI_SIZE (MPI)" ]
	# an array that is not one range (--array=1,3,7) cannot number parts
	run -2 --separate-stderr $clean SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_COUNT=3 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: the Slurm array has 7 tasks, but SLURM_ARRAY_TASK_COUNT=3 (an array of parts is one range: --array=0-2)" ]
	# a count given must be the engine's
	run -2 --separate-stderr $clean SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 tfr-cat -R --part auto/8 "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto/8: the engine runs 4 tasks (SLURM_ARRAY_TASK_ID in SLURM_ARRAY_TASK_MIN..MAX)" ]
	run -2 --separate-stderr $clean PARALLEL_SEQ=3 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: GNU parallel gives the job number (PARALLEL_SEQ=3) but not the number of jobs: pass it, as --part auto/N" ]
	run -2 --separate-stderr $clean PARALLEL_SEQ=4 tfr-cat -R --part auto/3 "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto/3: PARALLEL_SEQ=4 is not a job of 3 (1 to 3)" ]
	run -2 --separate-stderr $clean SGE_TASK_ID=4 SGE_TASK_FIRST=1 SGE_TASK_LAST=7 SGE_TASK_STEPSIZE=2 tfr-cat -R --part auto "$T/big.tfr"
	[ "${stderr%%$'\n'*}" = "tfr-cat: --part auto: SGE_TASK_ID=4 is not a task of the array 1-7:2" ]
	for p in autox auto/0 auto/ auto/x; do
		run -2 --separate-stderr $clean PMI_RANK=0 PMI_SIZE=1 tfr-cat -R --part "$p" "$T/big.tfr"
		[[ "${stderr%%$'\n'*}" == "tfr-cat: --part: expected "*", not '$p'" ]]
	done
	# Grid Engine's "undefined" (not an array job) is not set
	run -2 --separate-stderr $clean SGE_TASK_ID=undefined tfr-cat -R --part auto "$T/big.tfr"
	[[ "${stderr%%$'\n'*}" == "tfr-cat: --part auto: no engine gives the part"* ]]
}

@test "tfr-cat: --stats gives percentiles by nearest rank and power-of-2 buckets, as mmap-index info" {
	# lengths 1..100 of feature "x": p50 50, p90 90, p99 99
	for i in $(seq 1 100); do
		printf '{"x":[%s]}\n' "$(seq -s, 1 "$i")"
	done | tfr-cat -R --from-json >"$T/l.tfr"
	run -0 tfr-cat --stats "$T/l.tfr"
	[ "${lines[2]}" = "x	100	int64	1	50.5	50	90	99	100	1:1 2-3:2 4-7:4 8-15:8 16-31:16 32-63:32 64-127:37" ]
	# the same lengths in a dataset: the same figures
	mmap-index build --raw-ids -q -o "$T/l" "$T/l.tfr" -f x
	run -0 mmap-index info "$T/l"
	[[ "$output" == *"length:     min 1, mean 50.50, p50 50, p90 90, p99 99, max 100"* ]]
	[[ "$output" == *"  64-127                 37"* ]]
	run -0 mmap-index info --json "$T/l"
	[ "$(jq -c .length <<<"$output")" = '{"min":1,"mean":50.5,"p50":50,"p90":90,"p99":99,"max":100}' ]
}

@test "tfr-cat: a file compressed as no TFRecord reader reads, or a dataset index, is named for what it is" {
	printf '\3757zXZ\000\000\004junkjunkjunkjunk' >"$T/a.xz"
	printf '\050\265\057\375junkjunkjunkjunk' >"$T/a.zst"
	printf 'BZh91AY&SYjunkjunkjunkjunk' >"$T/a.bz2"
	printf '\004\042\115\030junkjunkjunkjunk' >"$T/a.lz4"
	printf 'MMIDIDX\000\000\001\000\000\000\000\000\000\000\010\000\000\000\000\000\000\000\000\000' >"$T/a.idx"
	local f
	for f in xz zst:zstd bz2:bzip2 lz4; do
		run -1 --separate-stderr tfr-cat -c "$T/a.${f%%:*}"
		[ "$stderr" = "tfr-cat: $T/a.${f%%:*}: record 0 at offset 0: length CRC mismatch (the input is ${f##*:}-compressed, which no TFRecord reader reads: decompress it first, ${f##*:} -dc)" ]
	done
	run -1 --separate-stderr tfr-cat -c "$T/a.idx"
	[ "$stderr" = "tfr-cat: $T/a.idx: record 0 at offset 0: length CRC mismatch (this is the .idx of a fairseq or Megatron token dataset, not records: mmap-index reads it)" ]
	# the other tools read records through the same reader
	run -1 --separate-stderr mmap-index build -q --raw-ids -o "$T/x" "$T/a.zst"
	[[ "$stderr" == *"(the input is zstd-compressed, which no TFRecord reader reads: decompress it first, zstd -dc)" ]]
}
