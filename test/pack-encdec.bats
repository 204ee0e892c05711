# pack-encdec: seqio converters, packing strategies, Electra examples.
load common
load tools/flat-json

# JSON lines on stdin -> records in $1.
mk() { to_records >"$1"; }
# Records in $1 -> sorted-key JSON lines on stdout.
js() { to_json "$1"; }

docstring_pair() {
	printf '%s\n' '{"inputs":[7,8,5,1],"targets":[3,9,1]}' \
	    '{"inputs":[8,4,9,3,1],"targets":[4,1]}' | mk "$T/in.tfr"
}

@test "pack-encdec: -h prints the synopsis on stdout" {
	run -0 --separate-stderr pack-encdec -h
	[ -z "$stderr" ]
	[ "${lines[0]}" = "usage: pack-encdec [-hqV] [--custom-ops] [--keep-partial] [--no-length-check]" ]
	[[ "$output" == *"pack-encdec [-hqV] [--keep-partial] [--progress | --no-progress]"* ]]
	[[ "$output" == *"[--stats] -C electra --max-seq-length length"* ]]
}

@test "pack-encdec: -V prints the version" {
	run -0 --separate-stderr pack-encdec -V
	[ "$output" = "pack-encdec 0.1.0" ]
	[ -z "$stderr" ]
}

@test "pack-encdec: usage errors are status 2" {
	run -2 --separate-stderr pack-encdec -l targets=4
	[[ "$stderr" == "pack-encdec: -C: a converter is required"* ]]
	run -2 --separate-stderr pack-encdec -C nosuch -l targets=4
	[[ "$stderr" == "pack-encdec: -C: unknown converter 'nosuch'"* ]]
	run -2 --separate-stderr pack-encdec -C lm -l targets=x
	run -2 --separate-stderr pack-encdec -C lm -l targets
	run -2 --separate-stderr pack-encdec -C lm
	run -2 --separate-stderr pack-encdec -C lm -l targets=4 --window 8
	run -2 --separate-stderr pack-encdec -C lm -l targets=4 --strategy best-fit --custom-ops
	run -2 --separate-stderr pack-encdec -C lm -l targets=4 --strategy worst-fit
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8
	run -2 --separate-stderr pack-encdec --bogus
}

@test "pack-encdec: EncDec docstring example, packed" {
	docstring_pair
	pack-encdec -C encdec -l inputs=10,targets=7 "$T/in.tfr" >"$T/out.tfr"
	run -0 js "$T/out.tfr"
	[ "${#lines[@]}" = 1 ]
	[ "$output" = '{"decoder_input_tokens":[0,3,9,0,4,0,0],"decoder_loss_weights":[1,1,1,1,1,0,0],"decoder_positions":[0,1,2,0,1,0,0],"decoder_segment_ids":[1,1,1,2,2,0,0],"decoder_target_tokens":[3,9,1,4,1,0,0],"encoder_input_tokens":[7,8,5,1,8,4,9,3,1,0],"encoder_positions":[0,1,2,3,0,1,2,3,4,0],"encoder_segment_ids":[1,1,1,1,2,2,2,2,2,0]}' ]
}

@test "pack-encdec: rows mix records packed as bytes with zeros, wide ids and empty lists" {
	# Small ids, a 0 inside (non-zero counting, segment id 0), a 2-byte
	# id, an empty list, an id of 5 varint bytes, a full row; bos 7 so
	# that the shift shows.
	printf '%s\n' '{"targets":[3,9,1]}' '{"targets":[4,0,1]}' '{"targets":[2,1]}' \
	    '{"targets":[5]}' '{"targets":[6]}' '{"targets":[7]}' '{"targets":[8,1]}' \
	    '{"targets":[300,1]}' '{"targets":[]}' '{"targets":[2147483647]}' \
	    '{"targets":[5,6,7,8,9,1]}' '{"targets":[4]}' | mk "$T/in.tfr"
	pack-encdec -C lm -l targets=6 --bos-id 7 "$T/in.tfr" >"$T/out.tfr"
	run -0 js "$T/out.tfr"
	[ "${#lines[@]}" = 5 ]
	[ "${lines[0]}" = '{"decoder_input_tokens":[7,3,9,7,7,0],"decoder_loss_weights":[1,1,1,1,0,0],"decoder_positions":[0,1,2,0,1,0],"decoder_segment_ids":[1,1,1,2,0,0],"decoder_target_tokens":[3,9,1,4,0,0]}' ]
	[ "${lines[1]}" = '{"decoder_input_tokens":[7,2,7,7,7,7],"decoder_loss_weights":[1,1,1,1,1,0],"decoder_positions":[0,1,0,0,0,0],"decoder_segment_ids":[1,1,2,3,4,0],"decoder_target_tokens":[2,1,5,6,7,0]}' ]
	[ "${lines[2]}" = '{"decoder_input_tokens":[7,8,7,300,7,7],"decoder_loss_weights":[1,1,1,1,1,0],"decoder_positions":[0,1,0,1,0,0],"decoder_segment_ids":[1,1,2,2,3,0],"decoder_target_tokens":[8,1,300,1,2147483647,0]}' ]
	[ "${lines[3]}" = '{"decoder_input_tokens":[7,5,6,7,8,9],"decoder_loss_weights":[1,1,1,1,1,1],"decoder_positions":[0,1,2,3,4,5],"decoder_segment_ids":[1,1,1,1,1,1],"decoder_target_tokens":[5,6,7,8,9,1]}' ]
	[ "${lines[4]}" = '{"decoder_input_tokens":[7,7,0,0,0,0],"decoder_loss_weights":[1,0,0,0,0,0],"decoder_positions":[0,0,0,0,0,0],"decoder_segment_ids":[1,0,0,0,0,0],"decoder_target_tokens":[4,0,0,0,0,0]}' ]
	# The same rows as canonical records, whatever path made them.
	js "$T/out.tfr" | to_records >"$T/again.tfr"
	cmp "$T/out.tfr" "$T/again.tfr"
}

@test "pack-encdec: output is the canonical Example encoding" {
	docstring_pair
	pack-encdec -C encdec -l inputs=10,targets=7 "$T/in.tfr" >"$T/out.tfr"
	js "$T/out.tfr" | to_records >"$T/again.tfr"
	cmp "$T/out.tfr" "$T/again.tfr"
}

@test "pack-encdec: unpacked EncDec with bos 10 and stdin input" {
	docstring_pair
	run -0 --separate-stderr bash -c 'pack-encdec -C encdec -l inputs=5,targets=4 --no-pack --bos-id 10 <"$1" >"$2"' _ "$T/in.tfr" "$T/out.tfr"
	[ -z "$stderr" ]
	run -0 js "$T/out.tfr"
	[ "${lines[0]}" = '{"decoder_input_tokens":[10,3,9,1],"decoder_loss_weights":[1,1,1,0],"decoder_target_tokens":[3,9,1,0],"encoder_input_tokens":[7,8,5,1,0]}' ]
	[ "${lines[1]}" = '{"decoder_input_tokens":[10,4,1,0],"decoder_loss_weights":[1,1,0,0],"decoder_target_tokens":[4,1,0,0],"encoder_input_tokens":[8,4,9,3,1]}' ]
}

@test "pack-encdec: prefixlm, encoder and decoder dispatch through the CLI" {
	docstring_pair
	pack-encdec -C decoder -l inputs=7,targets=8 "$T/in.tfr" >"$T/a.tfr"
	pack-encdec -C prefixlm -l inputs=7,targets=8 "$T/in.tfr" >"$T/b.tfr"
	cmp "$T/a.tfr" "$T/b.tfr"
	run -0 bash -c "$(declare -f to_json); to_json \"\$1\" | jq -c .decoder_causal_attention" _ "$T/a.tfr"
	[ "$output" = "[1,1,1,1,1,0,0,1,1,1,1,1,1,0,0]" ]
	pack-encdec -C encoder --mask-id 9 -l inputs=10,targets=10 "$T/in.tfr" >"$T/e.tfr"
	run -0 bash -c "$(declare -f to_json); to_json \"\$1\" | jq -c .encoder_loss_weights" _ "$T/e.tfr"
	[ "$output" = "[0,0,0,0,0,0,1,0,0,0]" ]
}

@test "pack-encdec: pass-through converter copies records byte for byte" {
	docstring_pair
	pack-encdec -C passthrough "$T/in.tfr" >"$T/out.tfr"
	cmp "$T/in.tfr" "$T/out.tfr"
}

@test "pack-encdec: pad keeps unlisted features, pack drops them" {
	printf '%s\n' '{"targets":[1,2,3],"text":"hello","w":[0.5]}' | mk "$T/in.tfr"
	pack-encdec -C pad -l targets=5 "$T/in.tfr" >"$T/pad.tfr"
	run -0 js "$T/pad.tfr"
	[ "$output" = '{"targets":[1,2,3,0,0],"text":["hello"],"w":[0.5]}' ]
	pack-encdec -C pack -l targets=5 "$T/in.tfr" >"$T/pack.tfr"
	run -0 js "$T/pack.tfr"
	[ "$output" = '{"targets":[1,2,3,0,0],"targets_positions":[0,1,2,0,0],"targets_segment_ids":[1,1,1,0,0]}' ]
}

@test "pack-encdec: pass-through features ride along unpacked" {
	printf '%s\n' '{"inputs":[1],"targets":[2],"p":[7,7]}' | mk "$T/in.tfr"
	run -1 --separate-stderr pack-encdec -C encdec -l inputs=2,targets=2,p=3 --passthrough p "$T/in.tfr"
	[ "$stderr" = "pack-encdec: Packing is incompatible with pass-through features." ]
	pack-encdec -C encdec -l inputs=2,targets=2,p=3 --passthrough p --no-pack "$T/in.tfr" >"$T/out.tfr"
	run -0 bash -c "$(declare -f to_json); to_json \"\$1\" | jq -c .p" _ "$T/out.tfr"
	[ "$output" = "[7,7,0]" ]
}

@test "pack-encdec: a bad record names file and record; earlier output is written" {
	printf '%s\n' '{"inputs":[1],"targets":[2]}' '{"inputs":[1,2,3,4],"targets":[2]}' \
	    '{"inputs":[1],"targets":[2]}' | mk "$T/in.tfr"
	run -1 --separate-stderr pack-encdec -C encdec --no-pack -l inputs=3,targets=3 -o "$T/out.tfr" "$T/in.tfr"
	n=$(tfr-cat -R -n 1 "$T/in.tfr" | wc -c)
	[ "$stderr" = "pack-encdec: $T/in.tfr: record 1 at offset $n: Feature 'inputs' has length not less than or equal to the expected length of 3 during input_validation validation" ]
	[ ! -e "$T/out.tfr" ]
	run -1 --separate-stderr bash -c 'pack-encdec -C encdec --no-pack -l inputs=3,targets=3 "$1" >"$2"' _ "$T/in.tfr" "$T/stdout.tfr"
	run -0 js "$T/stdout.tfr"
	[ "${#lines[@]}" = 1 ]
}

@test "pack-encdec: the seqio converters pass over the end of a document (an Example without features)" {
	printf '%s\n' '{"targets":[5,6,1]}' '{"targets":[7,1]}' '{"targets":[8,9,10,1]}' | mk "$T/plain.tfr"
	printf '%s\n' '{"targets":[5,6,1]}' '{}' '{"targets":[7,1]}' '{}' '{}' '{"targets":[8,9,10,1]}' '{}' | mk "$T/docs.tfr"
	for a in "-C lm -l targets=8" "-C lm -l targets=4 --no-pack" "-C decoder -l targets=8 --strategy first-fit"; do
		pack-encdec $a "$T/plain.tfr" >"$T/want.tfr"
		run -0 --separate-stderr pack-encdec $a -o "$T/got.tfr" "$T/docs.tfr"
		[ -z "$stderr" ]
		cmp "$T/want.tfr" "$T/got.tfr"
	done
	# what subword-encode makes of a blank line
	printf 'one two\n\nthree\n' >"$T/t.txt"
	subword-build -q --min-count 1 -o "$T/v" "$T/t.txt"
	run -0 bash -c 'subword-encode -q --eos -v "$1" "$2" | pack-encdec -C lm -l targets=16 | tfr-cat -c' _ "$T/v" "$T/t.txt"
	[ "$output" = 1 ]
}

@test "pack-encdec: missing and wrongly typed features" {
	printf '%s\n' '{"inputs":[1]}' | mk "$T/a.tfr"
	run -1 --separate-stderr pack-encdec -C encdec -l inputs=3,targets=3 "$T/a.tfr"
	[ "$stderr" = "pack-encdec: $T/a.tfr: record 0 at offset 0: Dataset is missing an expected feature during input_validation validation: 'targets'" ]
	printf '%s\n' '{"inputs":[1],"targets":"x"}' | mk "$T/b.tfr"
	run -1 --separate-stderr pack-encdec -C encdec -l inputs=3,targets=3 "$T/b.tfr"
	[[ "$stderr" == *"record 0 at offset 0: Dataset has incorrect type for feature 'targets' during input_validation validation: Got string, expected int32" ]]
	printf '%s\n' '{"inputs":[1],"targets":[4294967296]}' | mk "$T/c.tfr"
	run -1 --separate-stderr pack-encdec -C encdec -l inputs=3,targets=3 "$T/c.tfr"
	[[ "$stderr" == *"Got int64, expected int32"* ]]
}

@test "pack-encdec: --no-length-check trims over-long features" {
	printf '%s\n' '{"targets":[1,2,3,4,5,6]}' | mk "$T/in.tfr"
	run -1 pack-encdec -C lm -l targets=4 "$T/in.tfr"
	pack-encdec -C lm -l targets=4 --no-length-check "$T/in.tfr" >"$T/out.tfr"
	run -0 bash -c "$(declare -f to_json); to_json \"\$1\" | jq -c .decoder_target_tokens" _ "$T/out.tfr"
	[ "$output" = "[1,2,3,4]" ]
}

@test "pack-encdec: a missing input is reported, the others still read" {
	docstring_pair
	run -1 --separate-stderr bash -c 'pack-encdec -C lm -l targets=8 "$1" nosuch.tfr >"$2"' _ "$T/in.tfr" "$T/out.tfr"
	[ "$stderr" = "pack-encdec: nosuch.tfr: No such file or directory" ]
	run -0 js "$T/out.tfr"
	[ "${#lines[@]}" = 1 ]
}

@test "pack-encdec: a damaged input gives record and offset" {
	docstring_pair
	head -c 30 "$T/in.tfr" >"$T/cut.tfr"
	run -1 --separate-stderr pack-encdec -C lm -l targets=8 "$T/cut.tfr"
	[[ "$stderr" == "pack-encdec: $T/cut.tfr: record 0 at offset 0: "* ]]
}

@test "pack-encdec: gzip input is sniffed, -o FILE.gz writes gzip" {
	docstring_pair
	gzip -c "$T/in.tfr" >"$T/in.tfr.gz"
	pack-encdec -C lm -l targets=8 "$T/in.tfr" >"$T/plain.tfr"
	pack-encdec -C lm -l targets=8 -o "$T/out.tfr.gz" "$T/in.tfr.gz"
	gzip -dc "$T/out.tfr.gz" | cmp - "$T/plain.tfr"
}

@test "pack-encdec: --stats reports rows, efficiency and trimming" {
	docstring_pair
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C lm -l targets=8 "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[0]}" = "pack-encdec: examples in 2, rows out 1, packing efficiency 1.0000, tokens trimmed 0, zeros dropped 0" ]
	[ "${stderr_lines[1]}" = "pack-encdec: targets: length 8, tokens 5, non-pad share 0.6250" ]
}

big_input() {
	python3 -c '
import json
for i in range(6000):
    n = 1 + (i * 7919) % 23
    print(json.dumps({"inputs": [1 + (i + j) % 500 for j in range(n)],
                      "targets": [1 + (i * j) % 300 for j in range(1 + n // 2)]}))
' | mk "$T/big.tfr"
}

@test "pack-encdec: strategies are deterministic, denser, and keep tokens" {
	big_input
	for s in seqio first-fit best-fit; do
		pack-encdec --strategy $s -C encdec -l inputs=64,targets=32 "$T/big.tfr" >"$T/$s.tfr"
		pack-encdec --strategy $s -C encdec -l inputs=64,targets=32 "$T/big.tfr" | cmp - "$T/$s.tfr"
	done
	pack-encdec -C encdec -l inputs=64,targets=32 "$T/big.tfr" | cmp - "$T/seqio.tfr"
	n_seqio=$(js "$T/seqio.tfr" | wc -l)
	n_best=$(js "$T/best-fit.tfr" | wc -l)
	[ "$n_best" -lt "$n_seqio" ]
	for s in seqio first-fit best-fit; do
		js "$T/$s.tfr" | jq -r '.encoder_input_tokens[] | select(. != 0)' | sort -n | md5sum
	done | uniq | wc -l | grep -qx 1
	run -0 bash -c 'pack-encdec --strategy best-fit --window 4 --stats -C encdec -l inputs=64,targets=32 "$1" 2>&1 >/dev/null' _ "$T/big.tfr"
	[[ "${lines[0]}" == *"examples in 6000"* ]]
}

@test "pack-encdec: --custom-ops is tensor2tensor's first-fit" {
	printf '%s\n' '{"inputs":[1,2,3],"targets":[4,5]}' '{"inputs":[6,7,8],"targets":[9]}' \
	    '{"inputs":[10,11],"targets":[]}' | mk "$T/in.tfr"
	pack-encdec --custom-ops -C pack -l inputs=5,targets=5 "$T/in.tfr" >"$T/out.tfr"
	run -0 bash -c "$(declare -f to_json); to_json \"\$1\" | jq -c '[.inputs, .inputs_segment_ids]'" _ "$T/out.tfr"
	[ "${lines[0]}" = "[[1,2,3,10,11],[1,1,1,2,2]]" ]
	[ "${lines[1]}" = "[[6,7,8,0,0],[1,1,1,0,0]]" ]
}

@test "pack-encdec: a closed pipe is a quiet SIGPIPE" {
	big_input
	run bash -c 'pack-encdec -C encdec --no-pack -l inputs=64,targets=32 "$1" 2>"$2" | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$T/big.tfr" "$T/err"
	[ "$output" = 141 ]
	[ ! -s "$T/err" ]
}

@test "pack-encdec: a full disk is status 1" {
	big_input
	run -1 --separate-stderr bash -c 'pack-encdec -C lm -l targets=16 --no-length-check "$1" >/dev/full' _ "$T/big.tfr"
	[ -z "$output" ]
	[[ "$stderr" == "pack-encdec: stdout: No space left on device" ]]
}

electra_input() {
	printf '%s\n' '{"targets":[5,6]}' '{"targets":[7,8,9]}' '{}' '{"targets":[10,11,12,13,14,15,16,17,18,19]}' \
	    '{"targets":[20]}' | mk "$T/sent.tfr"
}

@test "pack-encdec: electra lays out [CLS] a [SEP] b [SEP]" {
	electra_input
	pack-encdec -C electra --max-seq-length 8 --cls-id 101 --sep-id 102 "$T/sent.tfr" >"$T/out.tfr"
	run -0 js "$T/out.tfr"
	[ "${#lines[@]}" = 3 ]
	# The first document has two sentences: either both in the first segment or split.
	case ${lines[0]} in
	'{"input_ids":[101,5,6,102,7,8,9,102],"input_mask":[1,1,1,1,1,1,1,1],"segment_ids":[0,0,0,0,1,1,1,1]}') ;;
	'{"input_ids":[101,5,6,7,8,9,102,0],"input_mask":[1,1,1,1,1,1,1,0],"segment_ids":[0,0,0,0,0,0,0,0]}') ;;
	*) false ;;
	esac
	[ "${lines[1]}" = '{"input_ids":[101,10,11,12,13,14,15,102],"input_mask":[1,1,1,1,1,1,1,1],"segment_ids":[0,0,0,0,0,0,0,0]}' ]
	[ "${lines[2]}" = '{"input_ids":[101,20,102,0,0,0,0,0],"input_mask":[1,1,1,0,0,0,0,0],"segment_ids":[0,0,0,0,0,0,0,0]}' ]
}

@test "pack-encdec: electra is seeded: default seed 0, other seeds differ" {
	python3 -c '
import json
for i in range(3000):
    print(json.dumps({"ids": [3 + (i * k) % 97 for k in range(1 + i % 9)] if i % 40 else {"int64_list": []}}))
' | mk "$T/many.tfr"
	pack-encdec -C electra -f ids --max-seq-length 32 --cls-id 1 --sep-id 2 "$T/many.tfr" >"$T/d.tfr"
	pack-encdec -C electra -f ids --max-seq-length 32 --cls-id 1 --sep-id 2 -s 0 "$T/many.tfr" | cmp - "$T/d.tfr"
	pack-encdec -C electra -f ids --max-seq-length 32 --cls-id 1 --sep-id 2 -s 0 "$T/many.tfr" | cmp - "$T/d.tfr"
	run -1 bash -c 'pack-encdec -C electra -f ids --max-seq-length 32 --cls-id 1 --sep-id 2 -s 5 "$1" | cmp -s - "$2"' _ "$T/many.tfr" "$T/d.tfr"
}

@test "pack-encdec: electra refuses a record without the feature" {
	printf '%s\n' '{"other":[1]}' | mk "$T/x.tfr"
	run -1 --separate-stderr pack-encdec -C electra --max-seq-length 8 --cls-id 1 --sep-id 2 "$T/x.tfr"
	[ "$stderr" = "pack-encdec: $T/x.tfr: record 0 at offset 0: no int64 feature 'targets'" ]
}

@test "pack-encdec: -h says what the man page SYNOPSIS says" {
	help_is_synopsis pack-encdec
}

docs_input() {
	python3 -c '
import json
for i in range(300):
    print(json.dumps({"targets": [2 + (i * k) % 5000 for k in range(1 + (i * 37) % 1500)] + [1]}))
' | mk "$T/docs.tfr"
	python3 -c '
import json
for i in range(300):
    print(json.dumps({"inputs": [2 + (i + k) % 900 for k in range(1 + i % 500)],
                      "targets": [2 + (i * k) % 700 for k in range(1 + i % 120)]}))
' | mk "$T/train.tfr"
}

@test "pack-encdec: the man page examples run" {
	docs_input
	cd "$T"
	pack-encdec -C encdec -l inputs=512,targets=128 train.tfr > packed.tfr
	pack-encdec -C encdec --no-pack --bos-id 1 -l inputs=512,targets=128 train.tfr > padded.tfr
	[ "$(tfr-cat -c padded.tfr)" = 300 ]
	[ "$(tfr-cat -c packed.tfr)" -lt 300 ]
	run -0 --separate-stderr pack-encdec -C lm -l targets=1024 --no-length-check --strategy best-fit --stats -o lm.tfr docs.tfr
	[[ "${stderr_lines[0]}" == "pack-encdec: examples in 300, rows out "* ]]
	run -0 --separate-stderr bash -c 'pack-encdec -C lm -l targets=64 --no-length-check docs.tfr | tfr-cat --flat -n 1'
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == '{"decoder_input_tokens":[0,2,'* ]]
	run -1 --separate-stderr pack-encdec -C lm -l targets=64 docs.tfr
	[[ "$stderr" == *"record 2 at offset "*": Feature 'targets' has length not less than or equal to the expected length of 64 during input_validation validation" ]]
}

@test "pack-encdec: the man page's electra example" {
	printf '%s\n' '{"targets":[5,6,7]}' '{"targets":[8,9]}' '{"targets":[10,11,12,13]}' \
	    '{"targets":[]}' '{"targets":[14,15]}' | mk "$T/s.tfr"
	pack-encdec -C electra --max-seq-length 12 --cls-id 101 --sep-id 102 "$T/s.tfr" >"$T/e.tfr"
	run -0 js "$T/e.tfr"
	[ "${lines[0]}" = '{"input_ids":[101,5,6,7,102,8,9,10,11,12,13,102],"input_mask":[1,1,1,1,1,1,1,1,1,1,1,1],"segment_ids":[0,0,0,0,0,1,1,1,1,1,1,1]}' ]
	[ "${lines[1]}" = '{"input_ids":[101,14,15,102,0,0,0,0,0,0,0,0],"input_mask":[1,1,1,1,0,0,0,0,0,0,0,0],"segment_ids":[0,0,0,0,0,0,0,0,0,0,0,0]}' ]
}

@test "pack-encdec: the man page's Electra pipeline" {
	command -v subword-encode >/dev/null || skip "subword-encode not built"
	printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' the cat sat on mat >"$T/vocab.txt"
	printf '%s\n' 'the cat sat' 'on the mat' '' 'the mat' >"$T/corpus.txt"
	cd "$T"
	subword-encode -m wordpiece -v vocab.txt corpus.txt | pack-encdec -C electra --max-seq-length 8 --cls-id 2 --sep-id 3 | tfr-cat -R --split 2 -o 'pretrain-%05d.tfr'
	[ -s pretrain-00000.tfr ]
}

@test "pack-encdec: --stats counts pass-through records; pad keeps records without the feature" {
	printf '%s\n' '{"targets":[1,2]}' '{"other":[3]}' | mk "$T/in.tfr"
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C passthrough "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[0]}" = "pack-encdec: examples in 2, rows out 2, packing efficiency 0.0000, tokens trimmed 0, zeros dropped 0" ]
	pack-encdec -C pad -l targets=3 "$T/in.tfr" >"$T/pad.tfr"
	run -0 js "$T/pad.tfr"
	[ "${lines[0]}" = '{"targets":[1,2,0]}' ]
	[ "${lines[1]}" = '{"other":[3]}' ]
}

@test "pack-encdec: --help to a full disk is status 1 with a message" {
	run -1 --separate-stderr bash -c 'pack-encdec --help >/dev/full'
	[ "$stderr" = "pack-encdec: stdout: No space left on device" ]
}

@test "pack-encdec: --max-record-size limits records on pipes and compressed input" {
	"$BATS_TEST_DIRNAME/tools/big-record" 1500 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	run -0 --separate-stderr sh -c 'cat "$1" | pack-encdec -C lm -l targets=2000 --max-record-size 2k -o "$2"' _ "$T/big.tfr" "$T/o.tfr"
	[ "$(tfr-cat -c "$T/o.tfr")" = 1 ]
	run -1 --separate-stderr sh -c 'cat "$1" | pack-encdec -C lm -l targets=2000 --max-record-size 1k' _ "$T/big.tfr"
	[ -z "$output" ]
	[ "$stderr" = "pack-encdec: stdin: record 0 at offset 0: length 1524 exceeds the limit of 1000 bytes (--max-record-size)" ]
	gzip -c "$T/big.tfr" >"$T/big.tfr.gz"
	run -1 --separate-stderr pack-encdec -C electra --cls-id 101 --sep-id 102 --max-seq-length 128 -f targets --max-record-size 1k -o "$T/o.tfr" "$T/big.tfr.gz"
	[[ "$stderr" == *"big.tfr.gz: record 0 at offset 0: length 1524 exceeds the limit of 1000 bytes (--max-record-size)" ]]
	run -2 --separate-stderr pack-encdec -C lm -l targets=8 --max-record-size -1 "$T/big.tfr"
}

@test "pack-encdec: out of memory while decoding names the file, record and offset" {
	(ulimit -v 60000 && pack-encdec -V >/dev/null) 2>/dev/null || skip "cannot run under ulimit -v"
	printf '%s\n' '{"targets":[5,6]}' | mk "$T/one.tfr"
	"$BATS_TEST_DIRNAME/tools/big-record" 10000000 | tfr-cat --no-crc -R --type raw >"$T/big.tfr"
	cat "$T/one.tfr" "$T/big.tfr" | gzip -1 >"$T/big.gz"
	n=$(stat -c %s "$T/one.tfr")
	run -1 --separate-stderr bash -c 'ulimit -v 60000; pack-encdec -C lm -l targets=100 "$1" >/dev/null' _ "$T/big.gz"
	[ "$stderr" = "pack-encdec: $T/big.gz: record 1 at offset $n: out of memory" ]
	run -1 --separate-stderr bash -c 'ulimit -v 60000; pack-encdec -C electra --cls-id 101 --sep-id 102 --max-seq-length 128 "$1" >/dev/null' _ "$T/big.gz"
	[ "$stderr" = "pack-encdec: $T/big.gz: record 1 at offset $n: out of memory" ]
	# a fault like a bad record: the rows before it, kept with --keep-partial
	pack-encdec -C lm -l targets=100 "$T/one.tfr" >"$T/want.tfr"
	run -1 --separate-stderr bash -c 'ulimit -v 60000; pack-encdec -C lm -l targets=100 --keep-partial -o "$2" "$1"' _ "$T/big.gz" "$T/kept.tfr"
	cmp "$T/want.tfr" "$T/kept.tfr"
}

@test "pack-encdec: a 20 MB record is not decoded whole: memory about one copy, rows as trimmed" {
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	"$BATS_TEST_DIRNAME/tools/big-record" 20000000 targets 7 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/big.gz"
	"$BATS_TEST_DIRNAME/tools/big-record" 512 targets 7 | tfr-cat --no-crc -R --type raw >"$T/cut.tfr"
	for opt in --no-pack "--strategy best-fit" --custom-ops; do
		/usr/bin/time -f %M -o "$T/rss" pack-encdec -C lm -l targets=512 --no-length-check $opt -o "$T/a.tfr" "$T/big.gz"
		rss=$(tail -1 "$T/rss")
		[ "$rss" -lt "$(rss_bound pack-encdec 50000)" ] || { echo "$opt: peak RSS $rss KB"; false; }
		pack-encdec -C lm -l targets=512 --no-length-check $opt -o "$T/b.tfr" "$T/cut.tfr"
		cmp "$T/a.tfr" "$T/b.tfr"
	done
	run -1 --separate-stderr /usr/bin/time -f %M -o "$T/rss" pack-encdec -C lm -l targets=512 "$T/big.gz"
	[ "$stderr" = "pack-encdec: $T/big.gz: record 0 at offset 0: Feature 'targets' has length not less than or equal to the expected length of 512 during input_validation validation" ]
	[ "$(tail -1 "$T/rss")" -lt "$(rss_bound pack-encdec 50000)" ]
}

@test "pack-encdec: -o keeps the old file when an input is missing or bad, and after kill -9" {
	local i
	docstring_pair
	echo OLD >"$T/keep"
	run -1 pack-encdec -C encdec -l inputs=8,targets=8 -o "$T/keep" "$T/in.tfr" "$T/nosuch"
	[ "$(cat "$T/keep")" = OLD ]
	for i in $(seq 1 3000); do echo "{\"inputs\":[$i,2,3],\"targets\":[4,$i]}"; done | mk "$T/big.tfr"
	kill_mid_write "$T/keep" "$T/big.tfr" pack-encdec -C encdec -l inputs=8,targets=8 -o "$T/keep"
}

@test "pack-encdec: an output that cannot be written is refused before reading input" {
	mkdir "$T/adir"
	refuses_output "pack-encdec: $T/adir: Is a directory" pack-encdec -C lm -l targets=8 -o "$T/adir" "$T/nosuch"
	refuses_output "pack-encdec: $T/nodir/o: No such file or directory" pack-encdec -C lm -l targets=8 -o "$T/nodir/o" "$T/nosuch"
	refuses_output "pack-encdec: an output file name is empty" pack-encdec -C lm -l targets=8 -o '' "$T/nosuch"
}

# 2000 records of varied lengths: $T/many.tfr
many() {
	local i
	for i in $(seq 1 2000); do
		printf '{"inputs":[%s],"targets":[%s]}\n' \
		    "$(seq -s, 1 $((i % 37 + 1)))" "$(seq -s, 2 $((i % 23 + 2)))"
	done | mk "$T/many.tfr"
}

@test "pack-encdec: after a fault the open rows are written: stdout equals the good prefix's, every strategy and converter" {
	local a
	many
	damage_at "$T/many.tfr" 1500 "$T/bad.tfr" "$T/good.tfr"
	for a in "-C encdec -l inputs=64,targets=32" \
	    "-C encdec -l inputs=64,targets=32 --strategy first-fit" \
	    "-C encdec -l inputs=64,targets=32 --strategy best-fit" \
	    "-C encdec -l inputs=64,targets=32 --strategy best-fit --window 8" \
	    "-C encdec -l inputs=64,targets=32 --custom-ops" \
	    "-C encdec -l inputs=64,targets=32 --no-pack" \
	    "-C lm -l targets=64" "-C prefixlm -l inputs=40,targets=40" \
	    "-C passthrough" \
	    "-C electra --max-seq-length 40 --cls-id 101 --sep-id 102 -f inputs"; do
		same_prefix_output "$T/bad.tfr" "$T/good.tfr" pack-encdec $a
	done
	damage_at "$T/many.tfr" -3 "$T/bad.tfr" "$T/good.tfr"
	same_prefix_output "$T/bad.tfr" "$T/good.tfr" pack-encdec -C encdec -l inputs=64,targets=32 --strategy best-fit
}

@test "pack-encdec: data seqio rejects mid-input: the rows of the records before it are written" {
	local a
	many
	cp "$T/many.tfr" "$T/good.tfr"
	printf '%s\n' '{"inputs":[1,2]}' | mk "$T/notargets.tfr"
	cat "$T/many.tfr" "$T/notargets.tfr" "$T/many.tfr" >"$T/bad.tfr"
	for a in "" "--strategy first-fit" "--strategy best-fit" "--custom-ops"; do
		same_prefix_output "$T/bad.tfr" "$T/good.tfr" pack-encdec -C encdec -l inputs=64,targets=32 $a
	done
}

# A BERT-like vocab.txt: [CLS] on line 102 (id 101), [SEP] on line 103 (id 102).
bert_vocab() {
	{
		echo '[PAD]'
		for i in $(seq 1 99); do echo "[unused$i]"; done
		printf '%s\n' '[UNK]' '[CLS]' '[SEP]' '[MASK]'
		for i in $(seq 104 120); do echo "w$i"; done
	} >"$T/vocab.txt"
}

@test "pack-encdec: electra -v takes [CLS] and [SEP] from the vocabulary by name" {
	electra_input
	bert_vocab
	pack-encdec -C electra --max-seq-length 8 --cls-id 101 --sep-id 102 "$T/sent.tfr" >"$T/ids.tfr"
	run -0 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" -o "$T/named.tfr" "$T/sent.tfr"
	[ -z "$stderr" ]
	cmp "$T/ids.tfr" "$T/named.tfr"
	# right ids by number, or tokens by name, with the vocabulary
	pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" --cls-id 101 --sep_id '[SEP]' "$T/sent.tfr" | cmp - "$T/ids.tfr"
	# another token by name
	run -0 bash -c 'pack-encdec -C electra --max-seq-length 8 -v "$1" --cls-id "[MASK]" "$2" | tfr-cat --flat -n 1' _ "$T/vocab.txt" "$T/sent.tfr"
	[[ "$output" == '{"input_ids":[103,5,6,'* ]]
}

@test "pack-encdec: electra ids by number are checked against the vocabulary (line numbers are not ids)" {
	electra_input
	bert_vocab
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" --cls-id 102 --sep-id 103 "$T/sent.tfr"
	[ -z "$output" ]
	[ "${stderr%%$'\n'*}" = "pack-encdec: --cls-id 102: id 102 in $T/vocab.txt is '[SEP]', not [CLS], which is id 101 (ids count from 0, the file's lines from 1); give --cls-id 101, or the token by name" ]
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" --sep-id 103 "$T/sent.tfr"
	[[ "$stderr" == "pack-encdec: --sep-id 103: id 103 in $T/vocab.txt is '[MASK]', not [SEP], which is id 102"* ]]
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" --sep-id 500 "$T/sent.tfr"
	[[ "$stderr" == "pack-encdec: --sep-id 500: $T/vocab.txt has ids 0 to 120"* ]]
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/vocab.txt" --sep-id '[SPE]' "$T/sent.tfr"
	[[ "$stderr" == "pack-encdec: --sep-id '[SPE]': no such token in $T/vocab.txt"* ]]
	# a vocabulary without [CLS]: name the one to use
	printf '[PAD]\n[SEP]\nw\n' >"$T/nocls.txt"
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 -v "$T/nocls.txt" "$T/sent.tfr"
	[[ "$stderr" == "pack-encdec: $T/nocls.txt: no [CLS] token; name the one to use with --cls-id"* ]]
	# names need the vocabulary; ids without it are taken as given
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 --cls-id '[CLS]' --sep-id 102 "$T/sent.tfr"
	[[ "$stderr" == *"a token name needs the vocabulary (-v vocab.txt)"* ]]
	run -2 --separate-stderr pack-encdec -C electra --max-seq-length 8 --cls-id 101 "$T/sent.tfr"
	[[ "$stderr" == "pack-encdec: -C electra needs the vocabulary (-v vocab.txt) or --cls-id and --sep-id"* ]]
	run -2 --separate-stderr pack-encdec -C encdec -l targets=8 -v "$T/vocab.txt" "$T/sent.tfr"
	[[ "$stderr" == *"-v, --cls-id and --sep-id apply to -C electra"* ]]
}

@test "pack-encdec: electra refuses a [CLS] or [SEP] id that a sentence holds (an id off by one)" {
	# BERT's ids: [UNK] 100, [CLS] 101, [SEP] 102; the text has an [UNK]
	printf '%s\n' '{"targets":[2023,4937]}' '{"targets":[2001,100,1012]}' '{}' '{"targets":[2178]}' | mk "$T/s.tfr"
	run -0 pack-encdec -C electra --max-seq-length 12 --cls-id 101 --sep-id 102 -o "$T/ok.tfr" "$T/s.tfr"
	# one too low: [CLS] is [UNK], which the text holds
	echo OLD >"$T/out.tfr"
	run -1 --separate-stderr pack-encdec -C electra --max-seq-length 12 --cls-id 100 --sep-id 101 -o "$T/out.tfr" "$T/s.tfr"
	[[ "$stderr" == "pack-encdec: $T/s.tfr: record 1 at offset "*": id 100, given as [CLS] (--cls-id), is in a sentence, where [CLS] and [SEP] never are: a token of the text (an id off by one?); -v vocab.txt takes both by name" ]]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$(cat "$T/out.tfr")" = OLD ]
	run -1 --separate-stderr pack-encdec -C electra --max-seq-length 12 --cls-id 101 --sep-id 2178 "$T/s.tfr"
	[[ "$stderr" == "pack-encdec: $T/s.tfr: record 3 at offset "*": id 2178, given as [SEP] (--sep-id), is in a sentence"* ]]
	# with the vocabulary too: ids made with the separators in them
	bert_vocab
	printf '%s\n' '{"targets":[104,105]}' '{"targets":[101,106,102]}' | mk "$T/v.tfr"
	run -1 --separate-stderr pack-encdec -C electra --max-seq-length 12 -v "$T/vocab.txt" "$T/v.tfr"
	[[ "$stderr" == "pack-encdec: $T/v.tfr: record 1 at offset "*": id 101, given as [CLS] (--cls-id), is in a sentence, where [CLS] and [SEP] never are: a token of the text (an id off by one?)" ]]
}

@test "pack-encdec: --stats reports tokens in, out and dropped for every converter" {
	printf '%s\n' '{"inputs":[1,2,3,4,5],"targets":[1,2]}' '{"inputs":[1],"targets":[1,2,3,4]}' | mk "$T/in.tfr"
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C encdec -l inputs=4,targets=3 --no-length-check "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[3]}" = "pack-encdec: tokens in 12, tokens out 10, tokens dropped 2 (16.67%, trimmed to the lengths)" ]
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C encdec --no-pack -l inputs=4,targets=3 --no-length-check "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[3]}" = "pack-encdec: tokens in 12, tokens out 10, tokens dropped 2 (16.67%, trimmed to the lengths)" ]
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C lm -l targets=3 --no-length-check "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[2]}" = "pack-encdec: tokens in 6, tokens out 5, tokens dropped 1 (16.67%, trimmed to the lengths)" ]
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C prefixlm -l inputs=4,targets=3 --no-length-check "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[2]}" = "pack-encdec: tokens in 12, tokens out 12, tokens dropped 0 (0.00%, trimmed to the lengths)" ]
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C encdec --strategy best-fit -l inputs=4,targets=3 --no-length-check "$1" >/dev/null' _ "$T/in.tfr"
	[ "${stderr_lines[3]}" = "pack-encdec: tokens in 12, tokens out 10, tokens dropped 2 (16.67%, trimmed to the lengths)" ]
	# a zero inside a packed feature: seqio's non-zero counting drops it
	printf '%s\n' '{"inputs":[1,0,3],"targets":[1,2]}' | mk "$T/z.tfr"
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C encdec -l inputs=4,targets=3 --no-length-check "$1" >/dev/null' _ "$T/z.tfr"
	[[ "${stderr_lines[3]}" == "pack-encdec: tokens in 5, tokens out "*"zeros dropped as seqio's packing drops them)" ]]
}

@test "pack-encdec: --stats of -C electra: paragraph-length lines lose what does not fit, and say so" {
	# documents of one 200-token line each: 128-token examples keep 126
	python3 -c '
import json
for d in range(10):
    print(json.dumps({"targets": [5 + (d + i) % 50 for i in range(200)]}))
    print(json.dumps({"targets": {"int64_list": []}}))
' | tfr-cat --from-json -o "$T/para.tfr"
	run -0 --separate-stderr bash -c 'pack-encdec --stats -C electra --max-seq-length 128 --cls-id 1 --sep-id 2 "$1" | tfr-cat -c' _ "$T/para.tfr"
	[ "$output" = 10 ]
	[ "${stderr_lines[0]}" = "pack-encdec: examples out 10" ]
	[[ "${stderr_lines[1]}" == "pack-encdec: tokens in 2000, tokens out "*", cut at --max-seq-length, as Electra cuts)" ]]
	out=$(sed 's/.*tokens out \([0-9]*\),.*/\1/' <<<"${stderr_lines[1]}")
	[ "$out" -le 1260 ]
	[ "$out" = "$(pack-encdec -C electra --max-seq-length 128 --cls-id 1 --sep-id 2 "$T/para.tfr" | tfr-cat --flat | jq '[.input_ids[] | select(. > 2)] | length' | paste -sd+ | bc)" ]
}

load tools/part-helpers

# seq2seq N SEED: N records of 'inputs' and 'targets' of 1..20 ids.
seq2seq() {
	awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); for (i = 0; i < n; i++) {
		a = 1 + int(rand() * 20); b = 1 + int(rand() * 20); s = "{\"inputs\":["
		for (j = 0; j < a; j++) s = s (j ? "," : "") 3 + int(rand() * 100)
		s = s "],\"targets\":["
		for (j = 0; j < b; j++) s = s (j ? "," : "") 3 + int(rand() * 100)
		print s "]}" } }' | to_records
}

@test "pack-encdec: --part K/N outputs concatenate to one run's when every example makes its own rows (N = 1..7)" {
	seq2seq 300 1 >"$T/a.tfr"
	seq2seq 50 2 | gzip >"$T/b.tfr"
	: >"$T/e.tfr"
	part_law cat pack-encdec -C encdec -l inputs=32,targets=32 --no-pack "$T/a.tfr" "$T/e.tfr" "$T/b.tfr" "$T/a.tfr"
	part_law cat pack-encdec -C passthrough "$T/a.tfr" "$T/b.tfr"
}

@test "pack-encdec: --part packs each part on its own: every example once, a few more rows at the seams" {
	seq2seq 300 3 >"$T/a.tfr"
	local n k one rows
	pack-encdec -C encdec -l inputs=32,targets=32 "$T/a.tfr" "$T/a.tfr" >"$T/one"
	one=$(tfr-cat -c "$T/one")
	tfr-cat --flat "$T/one" | jq -c '.encoder_input_tokens | map(select(. != 0))' | jq -s 'add | length' >"$T/tok.one"
	for n in 2 3 7; do
		: >"$T/cat"
		for k in $(seq 0 $((n - 1))); do
			pack-encdec -C encdec -l inputs=32,targets=32 --part "$k/$n" "$T/a.tfr" "$T/a.tfr" >>"$T/cat"
		done
		rows=$(tfr-cat -c "$T/cat")
		[ "$rows" -ge "$one" ] && [ "$rows" -le $((one + n - 1)) ]
		# The same tokens, all of them, once.
		tfr-cat --flat "$T/cat" | jq -c '.encoder_input_tokens | map(select(. != 0))' | jq -s 'add | length' >"$T/tok.cat"
		cmp "$T/tok.one" "$T/tok.cat"
	done
}

@test "pack-encdec: --part on standard input is a usage error; electra takes it too" {
	seq2seq 20 4 >"$T/a.tfr"
	run -2 --separate-stderr pack-encdec -C encdec -l inputs=32,targets=32 --part 0/2 <"$T/a.tfr"
	[ "${stderr%%$'\n'*}" = "pack-encdec: --part needs files: standard input cannot be cut into parts" ]
	run -2 --separate-stderr pack-encdec -C encdec -l inputs=32,targets=32 --part 2/2 "$T/a.tfr"
	run -0 --separate-stderr pack-encdec -C electra -f targets --max-seq-length 16 --cls-id 1 --sep-id 2 --part 1/2 -o "$T/e1" "$T/a.tfr"
	[ -z "$stderr" ]
	run -0 tfr-cat -c "$T/e1"
	[ "$output" -gt 0 ]
}

@test "pack-encdec: a 20 MB record is not decoded whole by prefixlm, prefixsuffixlm, decoder, pack, prepacked-encdec and electra" {
	local a
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	big() { "$BATS_TEST_DIRNAME/tools/big-record" "$@" | tfr-cat --no-crc -R --type raw; }
	big 6700000 inputs,suffixes,targets 7 | gzip -1 >"$T/big.gz"
	# Each list longer than every length: the same rows as the whole record.
	big 1000 inputs,suffixes,targets 7 >"$T/cut.tfr"
	for a in "-C prefixlm -l inputs=512,targets=128" \
	    "-C prefixlm -l inputs=512,targets=128 --no-pack" \
	    "-C prefixsuffixlm -l inputs=400,targets=128,suffixes=16" \
	    "-C decoder -l inputs=512,targets=128 --strategy best-fit" \
	    "-C pack -l inputs=512,targets=128,suffixes=8" \
	    "-C electra --cls-id 101 --sep-id 102 --max-seq-length 128 -f inputs"; do
		/usr/bin/time -f %M -o "$T/rss" pack-encdec --no-length-check $a -o "$T/a.tfr" "$T/big.gz" 2>/dev/null ||
		    /usr/bin/time -f %M -o "$T/rss" pack-encdec $a -o "$T/a.tfr" "$T/big.gz"
		rss=$(tail -1 "$T/rss")
		[ "$rss" -lt "$(rss_bound pack-encdec 50000)" ] || { echo "$a: peak RSS $rss KB"; false; }
		pack-encdec --no-length-check $a -o "$T/b.tfr" "$T/cut.tfr" 2>/dev/null ||
		    pack-encdec $a -o "$T/b.tfr" "$T/cut.tfr"
		cmp "$T/a.tfr" "$T/b.tfr"
	done
	big 3400000 inputs,inputs_positions,inputs_segment_ids,targets,targets_positions,targets_segment_ids 1 | gzip -1 >"$T/pp.gz"
	big 1000 inputs,inputs_positions,inputs_segment_ids,targets,targets_positions,targets_segment_ids 1 >"$T/cut.tfr"
	a="-C prepacked-encdec --no-pack -l inputs=64,inputs_segment_ids=64,inputs_positions=64,targets=32,targets_segment_ids=32,targets_positions=32"
	/usr/bin/time -f %M -o "$T/rss" pack-encdec --no-length-check $a -o "$T/a.tfr" "$T/pp.gz"
	[ "$(tail -1 "$T/rss")" -lt "$(rss_bound pack-encdec 50000)" ]
	pack-encdec --no-length-check $a -o "$T/b.tfr" "$T/cut.tfr"
	cmp "$T/a.tfr" "$T/b.tfr"
	# With the length check the message is the whole record's.
	run -1 --separate-stderr /usr/bin/time -f %M -o "$T/rss" pack-encdec -C prefixlm -l inputs=512,targets=128 "$T/big.gz"
	[ "$stderr" = "pack-encdec: $T/big.gz: record 0 at offset 0: Feature 'inputs' has length not less than or equal to the expected length of 512 during input_validation validation" ]
	[ "$(tail -1 "$T/rss")" -lt "$(rss_bound pack-encdec 50000)" ]
}

@test "pack-encdec: a 20 MB record's lists that a row copies whole (pad, prepacked-lm) are copied from the record: memory about the record and the row" {
	local names=decoder_input_tokens,decoder_loss_weights,decoder_positions,decoder_segment_ids,decoder_target_tokens
	[ -x /usr/bin/time ] || skip "no /usr/bin/time"
	"$BATS_TEST_DIRNAME/tools/big-record" 4000000 $names 3 | tfr-cat --no-crc -R --type raw >"$T/pp.tfr"
	gzip -1 <"$T/pp.tfr" >"$T/pp.gz"
	# Every feature is kept, in key order: the row is the record itself.
	/usr/bin/time -f %M -o "$T/rss" pack-encdec -C prepacked-lm -o "$T/a.tfr" "$T/pp.gz"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound pack-encdec 70000)" ] || { echo "prepacked-lm: peak RSS $rss KB"; false; }
	cmp "$T/a.tfr" "$T/pp.tfr"
	# Pad: the listed feature padded, the other copied unchanged.
	"$BATS_TEST_DIRNAME/tools/big-record" 10000000 inputs,targets 3 | tfr-cat --no-crc -R --type raw | gzip -1 >"$T/pad.gz"
	/usr/bin/time -f %M -o "$T/rss" pack-encdec -C pad -l targets=4,other=2 -o "$T/a.tfr" "$T/pad.gz"
	rss=$(tail -1 "$T/rss")
	[ "$rss" -lt "$(rss_bound pack-encdec 70000)" ] || { echo "pad: peak RSS $rss KB"; false; }
	[ "$(tfr-cat -f targets "$T/a.tfr")" = '{"features":{"feature":{"targets":{"int64List":{"value":["3","3","3","3"]}}}}}' ]
	tfr-cat -R -f inputs "$T/a.tfr" >"$T/in.a"
	tfr-cat -R -f inputs "$T/pad.gz" >"$T/in.b"
	cmp "$T/in.a" "$T/in.b"
	[ "$(tfr-cat -c "$T/a.tfr")" = 1 ]
}

@test "pack-encdec: running out of memory for a new open row is a fault like a bad record: the rows of the records before it are written" {
	local a
	(ulimit -v 120000 && pack-encdec -V >/dev/null) 2>/dev/null || skip "cannot run under ulimit -v"
	grep -qa __asan_init "$(command -v pack-encdec)" && skip "ulimit -v under ASan"
	# Every record fills a row of its own (1.5 MB of row for 64 KB of record).
	"$BATS_TEST_DIRNAME/tools/big-record" 65000 targets 5 | tfr-cat --no-crc -R --type raw >"$T/one.tfr"
	for i in $(seq 200); do cat "$T/one.tfr"; done >"$T/many.tfr"
	for a in "--strategy best-fit --window 100000" "--strategy first-fit --window 100000" --custom-ops; do
		run -1 --separate-stderr bash -c 'ulimit -v 120000; pack-encdec -C lm -l targets=65536 $1 -o "$2" --keep-partial "$3"' _ "$a" "$T/out.tfr" "$T/many.tfr"
		[[ "$stderr" =~ ^pack-encdec:\ $T/many.tfr:\ record\ ([0-9]+)\ at\ offset\ [0-9]+:\ out\ of\ memory$ ]] || { echo "$a: $stderr"; false; }
		k=${BASH_REMATCH[1]}
		[ "$k" -gt 0 ]
		# One row per record before it, as a run on those records writes.
		tfr-cat -R -n "$k" "$T/many.tfr" >"$T/good.tfr"
		pack-encdec -C lm -l targets=65536 $a -o "$T/want.tfr" "$T/good.tfr"
		cmp "$T/out.tfr" "$T/want.tfr" || { echo "$a: $(tfr-cat -c "$T/out.tfr") rows for $k records"; false; }
	done
}
