# Every case of ../shared/vectors/seqio/manifest.json: convert, pack and
# pad cases through pack-encdec (records made from the JSON lines by
# tfr-cat --from-json, read back by tfr-cat --flat), unit cases through
# a test helper that calls the library.
load common
load tools/build-helpers

MAN="$VEC/seqio/manifest.json"

setup_file() {
	[ -e "$VEC/seqio/manifest.json" ] || return 0
	build_helpers "$BATS_FILE_TMPDIR/tools"
}

setup() {
	need_shared vectors/seqio/manifest.json
	TOOLS="$BATS_FILE_TMPDIR/tools"
	[ -x "$TOOLS/seqio-unit" ] || skip "test helpers did not build"
}

# Run every case of one kind; list the failures.
run_kind() {
	local id fails=0 out
	for id in $(jq -r --arg k "$1" '.cases[] | select(.kind == $k) | .id' "$MAN"); do
		if ! out=$("$BATS_TEST_DIRNAME/tools/seqio-case.sh" "$MAN" "$id" "$T"); then
			printf '%s\n' "$out"
			fails=$((fails + 1))
		fi
	done
	[ "$fails" = 0 ]
}

@test "vectors-seqio: convert cases (outputs and seqio's errors)" {
	run_kind convert
}

@test "vectors-seqio: pack cases" {
	run_kind pack
}

@test "vectors-seqio: pad cases" {
	run_kind pad
}

@test "vectors-seqio: unit cases through the library helpers" {
	local id c got ok fails=0
	for id in $(jq -r '.cases[] | select(.kind == "unit") | .id' "$MAN"); do
		c=$(jq -c --arg id "$id" '.cases[] | select(.id == $id)' "$MAN")
		got=$("$TOOLS/seqio-unit" <<<"$c")
		if jq -e 'has("expected_error")' <<<"$c" >/dev/null; then
			ok=$(jq -n --argjson g "$got" --argjson c "$c" '
			    ($g | type) == "object" and ($g.error | type) == "string" and
			    (($c.expected_error.message // null) as $m |
			     $m == null or ($g.error | contains($m))) and
			    (($c.expected_error.message_regex // null) as $r |
			     $r == null or ($g.error | test($r)))')
		elif jq -e '.expected_subset == true' <<<"$c" >/dev/null; then
			ok=$(jq -n --argjson g "$got" --argjson c "$c" \
			    '[$c.expected | to_entries[] | $g[.key] == .value] | all')
		else
			ok=$(jq -n --argjson g "$got" --argjson c "$c" '$g == $c.expected')
		fi
		if [ "$ok" != true ]; then
			echo "$id: got $got"
			fails=$((fails + 1))
		fi
	done
	[ "$fails" = 0 ]
}

@test "vectors-seqio: every case of the manifest is of a kind run above" {
	run jq -r '[.cases[].kind] | unique | map(select(. != "convert" and . != "pack" and . != "pad" and . != "unit")) | length' "$MAN"
	[ "$output" = 0 ]
}
