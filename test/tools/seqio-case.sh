#!/bin/bash
# Run one case of ../shared/vectors/seqio/manifest.json through pack-encdec.
# Usage: seqio-case.sh MANIFEST ID OUTDIR (test helper for the bats suites;
# pack-encdec, tfr-cat and jq on PATH)
# Prints nothing and exits 0 when the case passes; otherwise says why.
set -u
man=$1 id=$2 out=$3
. "$(dirname "$0")/flat-json.bash"
dir=$(dirname "$man")
c=$(jq -c --arg id "$id" '.cases[] | select(.id == $id)' "$man")
kind=$(jq -r .kind <<<"$c")
args=()
case $kind in
convert)
	o=$(jq -c .options <<<"$c")
	args+=(-C "$(jq -r .converter <<<"$o")")
	l=$(jq -r '.task_feature_lengths | to_entries | map("\(.key)=\(.value)") | join(",")' <<<"$o")
	[ -n "$l" ] && args+=(-l "$l")
	[ "$(jq -r .pack <<<"$o")" = false ] && args+=(--no-pack)
	args+=(--bos-id "$(jq -r .bos_id <<<"$o")")
	[ "$(jq -r .loss_on_targets_only <<<"$o")" = false ] && args+=(--no-loss-on-targets-only)
	m=$(jq -r .mask_id <<<"$o")
	[ "$m" != null ] && args+=(--mask-id "$m")
	[ "$(jq -r .apply_length_check <<<"$o")" = false ] && args+=(--no-length-check)
	[ "$(jq -r .use_custom_packing_ops <<<"$o")" = true ] && args+=(--custom-ops)
	p=$(jq -r '.passthrough_features | join(",")' <<<"$o")
	[ -n "$p" ] && args+=(--passthrough "$p")
	;;
pack|pad)
	o=$(jq -c .options <<<"$c")
	args+=(-C "$kind" -l "$(jq -r '.feature_lengths | to_entries | map("\(.key)=\(.value)") | join(",")' <<<"$o")")
	[ "$(jq -r '.use_custom_ops // false' <<<"$o")" = true ] && args+=(--custom-ops)
	;;
*)
	echo "$id: kind $kind is not run through the tool"; exit 1;;
esac
to_records <"$dir/$(jq -r .input <<<"$c")" >"$out/$id.in.tfr" || { echo "$id: bad input"; exit 1; }
pack-encdec "${args[@]}" "$out/$id.in.tfr" >"$out/$id.out.tfr" 2>"$out/$id.err"
st=$?
if jq -e 'has("expected_error")' <<<"$c" >/dev/null; then
	[ $st = 1 ] || { echo "$id: exit $st, expected 1"; exit 1; }
	msg=$(jq -r '.expected_error.message // empty' <<<"$c")
	re=$(jq -r '.expected_error.message_regex // empty' <<<"$c")
	err=$(cat "$out/$id.err")
	[ "$(wc -l <"$out/$id.err")" = 1 ] || { echo "$id: stderr is not one line: $err"; exit 1; }
	case $err in pack-encdec:*) ;; *) echo "$id: diagnostic lacks the tool name: $err"; exit 1;; esac
	if [ -n "$msg" ]; then
		case $err in *"$msg"*) ;; *) echo "$id: message '$msg' not in: $err"; exit 1;; esac
	fi
	if [ -n "$re" ]; then
		grep -Eq -- "$re" "$out/$id.err" || { echo "$id: /$re/ not in: $err"; exit 1; }
	fi
	exit 0
fi
[ $st = 0 ] || { echo "$id: exit $st: $(cat "$out/$id.err")"; exit 1; }
[ -s "$out/$id.err" ] && { echo "$id: stderr not empty: $(cat "$out/$id.err")"; exit 1; }
to_json "$out/$id.out.tfr" >"$out/$id.got" || { echo "$id: unreadable output"; exit 1; }
jq -S -c . "$dir/$(jq -r .expected <<<"$c")" >"$out/$id.want"
jq -S -c . "$out/$id.got" >"$out/$id.got2"
if ! cmp -s "$out/$id.want" "$out/$id.got2"; then
	echo "$id: output differs"
	diff "$out/$id.want" "$out/$id.got2" | head -20
	exit 1
fi
exit 0
