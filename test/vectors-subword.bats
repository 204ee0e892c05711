# Every case of ../shared/vectors/subword/manifest.json (made by
# tensor2tensor itself) through subword-build and subword-encode,
# compared byte for byte.  Skipped when ../shared is absent.
load common

setup() {
	need_shared vectors/subword/manifest.json
	M="$VEC/subword/manifest.json"
	D="$VEC/subword"
}

# Run one case by name; on failure print why.
run_case() {
	local name=$1 kind out="$T/$1.out" f want got p args=()
	kind=$(jq -r --arg n "$name" '.cases[] | select(.name == $n) | .kind' "$M")
	# The inputs must be the files the vectors were made from.
	while IFS=' ' read -r f want; do
		got=$(sha256sum "$D/$f" | cut -d' ' -f1)
		if [ "$got" != "$want" ]; then
			echo "$name: $f: sha256 mismatch"
			return 1
		fi
	done < <(jq -r --arg n "$name" '.cases[] | select(.name == $n) | .sha256 | to_entries[] | "\(.key) \(.value)"' "$M")
	p() { jq -r --arg n "$name" ".cases[] | select(.name == \$n) | $1" "$M"; }
	case $kind in
	build)
		if [ "$(p .params.target_size)" != null ]; then
			args+=(-t "$(p .params.target_size)")
		else
			args+=(--min-count "$(p .params.min_count)")
		fi
		args+=(--iterations "$(p .params.num_iterations)")
		[ "$(p .params.max_subtoken_length)" = null ] ||
			args+=(-L "$(p .params.max_subtoken_length)")
		args+=(-b "$(p .params.file_byte_budget)")
		while IFS= read -r f; do
			args+=(--reserved "$f")
		done < <(p '.params.reserved_extra[]')
		while IFS= read -r f; do
			args+=("$D/$f")
		done < <(p '.corpus[]')
		subword-build -q "${args[@]}" -o "$out" || { echo "$name: exit $?"; return 1; }
		;;
	encode)
		args+=(-v "$D/$(p .vocab)" --output-format id)
		[ "$(p .params.eos)" = true ] && args+=(--eos)
		[ "$(p .params.strip)" = true ] || args+=(--no-strip)
		subword-encode "${args[@]}" "$D/$(p .input)" >"$out" ||
			{ echo "$name: exit $?"; return 1; }
		;;
	decode)
		args+=(-d --input-format id -v "$D/$(p .vocab)")
		[ "$(p .params.strip_extraneous)" = true ] && args+=(--strip-extraneous)
		subword-encode "${args[@]}" "$D/$(p .input)" >"$out" ||
			{ echo "$name: exit $?"; return 1; }
		;;
	*)
		echo "$name: unknown kind $kind"
		return 1
		;;
	esac
	cmp "$D/$(p .expected)" "$out" || { echo "$name: output differs"; return 1; }
}

@test "vectors-subword: every build case gives the vocab file byte for byte" {
	local n fail=0 count=0
	for n in $(jq -r '.cases[] | select(.kind == "build") | .name' "$M"); do
		count=$((count + 1))
		run_case "$n" || fail=$((fail + 1))
	done
	echo "$count build cases, $fail failed"
	[ "$count" -gt 0 ]
	[ "$fail" -eq 0 ]
}

@test "vectors-subword: every encode case gives the ids byte for byte" {
	local n fail=0 count=0
	for n in $(jq -r '.cases[] | select(.kind == "encode") | .name' "$M"); do
		count=$((count + 1))
		run_case "$n" || fail=$((fail + 1))
	done
	echo "$count encode cases, $fail failed"
	[ "$count" -gt 0 ]
	[ "$fail" -eq 0 ]
}

@test "vectors-subword: every decode case gives the text byte for byte" {
	local n fail=0 count=0
	for n in $(jq -r '.cases[] | select(.kind == "decode") | .name' "$M"); do
		count=$((count + 1))
		run_case "$n" || fail=$((fail + 1))
	done
	echo "$count decode cases, $fail failed"
	[ "$count" -gt 0 ]
	[ "$fail" -eq 0 ]
}

@test "vectors-subword: the manifest has no case of another kind" {
	run -0 jq -r '[.cases[] | select(.kind != "build" and .kind != "encode" and .kind != "decode")] | length' "$M"
	[ "$output" = 0 ]
}

@test "vectors-subword: records carry the same ids as the id lines, a blank line ending a document" {
	local v="$D/expected/b01_shakes_t4000.subwords" in="$D/inputs/tricky-encode.txt"
	subword-encode -q -v "$v" --eos "$in" 2>/dev/null >"$T/rec"
	subword-encode -q -v "$v" --eos --output-format id "$in" 2>/dev/null >"$T/ids"
	cmp "$D/expected/e02_shakes_tricky_eos.ids" "$T/ids"
	# the ids of each record, a blank line for an end of document
	tfr-cat --flat "$T/rec" | jq -r '.targets // [] | map(tostring) | join(" ")' >"$T/rids"
	# the id lines, tensor2tensor's lone EOS of each blank line made blank
	# (stripped, any other line has ids before its EOS)
	sed 's/^1$//' "$T/ids" >"$T/want"
	[ "$(grep -c -x '' "$T/rids")" -eq 2 ]
	cmp "$T/want" "$T/rids"
}
