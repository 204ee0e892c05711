# Options across the suite: '_' for '-' in long options (the upstream
# spelling), unknown options and names answered with the closest valid one.
load common

setup() {
	printf 'the cat sat on the mat\nthe dog sat\n' >"$T/c.txt"
	subword-build -q --min-count 1 -o "$T/v" "$T/c.txt"
}

@test "options: long options take '_' for '-' in every tool" {
	subword-build -q -t 30 -o "$T/a" "$T/c.txt"
	run -0 --separate-stderr subword-build -q --vocab_size=30 -o "$T/b" "$T/c.txt"
	[ -z "$stderr" ]
	cmp "$T/a" "$T/b"
	subword-build -q --vocab-size 30 -o "$T/b2" "$T/c.txt"
	cmp "$T/a" "$T/b2"
	subword-build -q --target_size 30 --max_subtoken_length 20 -o "$T/b3" "$T/c.txt"
	run -0 subword-encode -v "$T/v" --output_format id "$T/c.txt"
	[ "${#lines[@]}" -eq 2 ]
	run -0 bash -c 'subword-encode -v "$1" "$2" | tfr-cat --flat | tfr-cat --from_json | tfr-cat -c' _ "$T/v" "$T/c.txt"
	[ "$output" = 2 ]
	run -0 bash -c 'subword-encode -v "$1" "$2" | pack-encdec -C lm -l targets=8 --no_length_check | tfr-cat -c' _ "$T/v" "$T/c.txt"
	[ "$output" -ge 1 ]
	run -0 mmap-index dict --padding_factor 8 "$T/c.txt"
}

@test "options: an unknown option names the closest valid one, status 2" {
	run -2 --separate-stderr subword-build --target-sise=5 "$T/c.txt"
	[ -z "$output" ]
	[ "$stderr" = "$(printf "subword-build: unknown option '--target-sise'; did you mean '--target-size'?\nTry 'subword-build --help' for more information.")" ]
	run -2 --separate-stderr tfr-cat --form-json
	[[ "$stderr" == "tfr-cat: unknown option '--form-json'; did you mean '--from-json'?"* ]]
	run -2 --separate-stderr subword-encode -v "$T/v" --output_formt id
	[[ "$stderr" == *"did you mean '--output-format'?"* ]]
	run -2 --separate-stderr pack-encdec --no-lenght-check
	[[ "$stderr" == *"did you mean '--no-length-check'?"* ]]
	run -2 --separate-stderr mmap-index build --raw-ids --dtpye uint16
	[[ "$stderr" == *"did you mean '--dtype'?"* ]]
	run -2 --separate-stderr batch-sample batches --max-tokns 5
	[[ "$stderr" == "batch-sample: unknown option '--max-tokns'; did you mean '--max-tokens'?"* ]]
	run -2 --separate-stderr tfr-cat --zzzzzzzz
	[[ "$stderr" == "tfr-cat: unknown option '--zzzzzzzz'"$'\n'* ]]
}

@test "options: a missing argument, an argument to a flag, an ambiguous prefix" {
	run -2 --separate-stderr tfr-cat --output
	[[ "$stderr" == "tfr-cat: option '--output' needs an argument"* ]]
	run -2 --separate-stderr tfr-cat -o
	[[ "$stderr" == "tfr-cat: option '-o' needs an argument"* ]]
	run -2 --separate-stderr tfr-cat --flat=yes
	[[ "$stderr" == "tfr-cat: option '--flat' takes no argument"* ]]
	run -2 --separate-stderr tfr-cat --sh 1/2
	[[ "$stderr" == "tfr-cat: option '--sh' is ambiguous"* ]]
	run -2 --separate-stderr tfr-cat -Y
	[[ "$stderr" == "tfr-cat: unknown option '-Y'"* ]]
}

@test "options: a -v field that does not exist is named, with the closest" {
	run -2 --separate-stderr subword-encode -v target="$T/v" "$T/c.txt"
	[[ "$stderr" == "subword-encode: -v target=$T/v: no field 'target'; did you mean 'targets'? (the fields are targets)"* ]]
	run -2 --separate-stderr pack-encdec -C encdc -l targets=4
	[[ "$stderr" == "pack-encdec: -C: unknown converter 'encdc'; did you mean 'encdec'?"* ]]
}
