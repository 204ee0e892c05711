# Text inputs: gzip-compressed text is read as records are (sniffed, files
# and pipes alike); xz, zstd, bzip2 and lz4 are named with the command that
# decompresses them instead of a bare "invalid UTF-8".
load common

setup() {
	for i in $(seq 1 30); do
		printf 'the cat number %d sat on the mat\nthe dog ran\n' "$i"
	done >"$T/c.txt"
	gzip -c "$T/c.txt" >"$T/c.txt.gz"
	subword-build -q --min-count 2 -o "$T/v" "$T/c.txt"
}

@test "text input: subword-build and subword-encode read gzip text, file or pipe" {
	run -0 --separate-stderr subword-build -q --min-count 2 -o "$T/vz" "$T/c.txt.gz"
	[ -z "$stderr" ]
	cmp "$T/v" "$T/vz"
	subword-build -q --min-count 2 -o "$T/vp" - <"$T/c.txt.gz"
	cmp "$T/v" "$T/vp"
	subword-encode -v "$T/v" --output-format id "$T/c.txt" >"$T/want"
	subword-encode -v "$T/v" --output-format id "$T/c.txt.gz" | cmp - "$T/want"
	subword-encode -v "$T/v" --output-format id <"$T/c.txt.gz" | cmp - "$T/want"
	cat "$T/c.txt.gz" | subword-encode -v "$T/v" --output-format id | cmp - "$T/want"
	cat "$T/c.txt" | subword-encode -v "$T/v" --output-format id | cmp - "$T/want"
	subword-encode -j 2 -v "$T/v" --output-format id "$T/c.txt.gz" | cmp - "$T/want"
	# two gzip members read as one stream, as gzip -dc does
	cat "$T/c.txt.gz" "$T/c.txt.gz" | subword-encode -v "$T/v" --output-format id >"$T/two"
	[ "$(wc -l <"$T/two")" -eq 120 ]
	# ids back: -d reads gzip id lines too
	gzip -c "$T/want" >"$T/want.gz"
	subword-encode -d --input-format id -v "$T/v" "$T/want.gz" | cmp - "$T/c.txt"
}

@test "text input: mmap-index dict and text/id builds read gzip text" {
	mmap-index dict -q -o "$T/dict.txt" "$T/c.txt"
	mmap-index dict -q -o "$T/dictz.txt" "$T/c.txt.gz"
	cmp "$T/dict.txt" "$T/dictz.txt"
	mmap-index build --raw-ids -q -o "$T/a" --input-format text --dict "$T/dict.txt" "$T/c.txt"
	mmap-index build --raw-ids -q -o "$T/b" --input-format text --dict "$T/dict.txt" "$T/c.txt.gz"
	cmp "$T/a.bin" "$T/b.bin"
	printf '1 2 3\n4\n' | gzip >"$T/ids.gz"
	mmap-index build --raw-ids -q -o "$T/i" --dtype uint16 --input-format id "$T/ids.gz"
	[ "$(mmap-index cat --output-format id "$T/i")" = "$(printf '1 2 3\n4')" ]
}

@test "text input: a damaged gzip stream is an error naming the file" {
	head -c 40 "$T/c.txt.gz" >"$T/cut.gz"
	run -1 --separate-stderr subword-encode -v "$T/v" --output-format id "$T/cut.gz"
	[ "$stderr" = "subword-encode: $T/cut.gz: compressed stream truncated" ]
	run -1 --separate-stderr subword-build -q -o "$T/x" "$T/cut.gz"
	[ "$stderr" = "subword-build: $T/cut.gz: compressed stream truncated" ]
	[ ! -e "$T/x" ]
}

@test "text input: xz, zstd, bzip2 and lz4 text is named with the command to decompress it" {
	printf '\3757zXZ\0\0\4' >"$T/c.xz"
	run -1 --separate-stderr subword-encode -v "$T/v" "$T/c.xz"
	[ "$stderr" = "subword-encode: $T/c.xz: xz-compressed text; decompress it first (xz -dc $T/c.xz | subword-encode ...)" ]
	printf '\050\265\057\375\0\0' >"$T/c.zst"
	run -1 --separate-stderr subword-build -o "$T/x" "$T/c.zst"
	[[ "$stderr" == *"zstd-compressed text; decompress it first (zstd -dc"* ]]
	printf 'BZh91AY&SY\0\0' >"$T/c.bz2"
	run -1 --separate-stderr mmap-index dict "$T/c.bz2"
	[[ "$stderr" == *"bzip2-compressed text"* ]]
	run -1 --separate-stderr subword-encode -v "$T/v" <"$T/c.bz2"
	[[ "$stderr" == "subword-encode: stdin: bzip2-compressed text; decompress it first (bzip2 -dc FILE | subword-encode ...)" ]]
	# text that only begins like a magic number is text
	printf 'BZh9 is a word\n' >"$T/bz.txt"
	run -0 subword-encode -v "$T/v" --output-format id "$T/bz.txt"
}
