#!/usr/bin/env bats
# scripts/bench (make bench): the collector, run over stand-in
# benchmarks that print RESULT lines, as the real scripts/bench-* do.

load common

BENCH="$BATS_TEST_DIRNAME/../scripts/bench"

setup() {
	mkdir -p "$T/s" "$T/build/bin"
	cp "$BENCH" "$T/s/bench"
	# A stand-in: its figures come from the environment, so that a
	# second run can differ from the first.
	cat >"$T/s/bench-aa" <<'S'
#!/bin/sh
echo "aa: human output, BINDIR $1"
echo "RESULT workload=aa.copy recpipe_s=${A_S:-0.5} recpipe_cpu=0.4 peer=\"cat -v\" peer_s=2.0 peer_cpu=1.0 goal=0.3"
echo "RESULT workload=aa.alone recpipe_s=${B_S:-3} goal_s=2"
echo "RESULT workload=aa.quoted recpipe_s=1 peer=published peer_s=4 quoted=1"
S
	cat >"$T/s/bench-bb" <<'S'
#!/bin/sh
echo "RESULT workload=bb.first recpipe_s=1 peer=x peer_s=1 goal=1"
echo "bb: broken" >&2
exit 3
S
	printf '#!/bin/sh\necho should not run\n' >"$T/s/bench-cc"	# not executable
	chmod +x "$T/s/bench" "$T/s/bench-aa" "$T/s/bench-bb"
}

# The table row of workload $1 in $output, squeezed to single spaces.
row() {
	grep "^$1 " <<<"$output" | tr -s ' '
}

@test "bench: one table of every workload, its ratio, goal and verdict, and the JSON" {
	run "$T/s/bench" "$T/build/bin"
	[ "$status" -eq 1 ]	# bench-bb failed
	[[ "$output" == *"aa: human output, BINDIR $T/build/bin"* ]]
	[[ "$output" == *"bb: broken"* ]]
	[[ "$output" != *"should not run"* ]]
	[ "$(row aa.copy)" = "aa.copy 0.500 cat -v 2.000 0.25 0.4 <= 0.3x - met" ]
	[ "$(row aa.alone)" = "aa.alone 3.000 - - - - <= 2 s - MISSED" ]
	[ "$(row aa.quoted)" = "aa.quoted 1.000 published * 4.000 0.25 - - -" ]
	[ "$(row bb.first)" = "bb.first 1.000 x 1.000 1 - <= 1x - met" ]
	[[ "$output" == *"FAILED: bench-bb (exit status 3)"* ]]
	[[ "$output" == *"written: $T/build/bench.json"* ]]
	local j="$T/build/bench.json"
	[ "$(jq -r '.results | map(.workload) | join(",")' "$j")" = aa.copy,aa.alone,aa.quoted,bb.first ]
	[ "$(jq -c '.results[0] | [.script, .recpipe_s, .peer, .peer_s, .ratio, .cpu_ratio, .goal_ratio, .met, .peer_measured]' "$j")" = \
	    '["bench-aa",0.5,"cat -v",2,0.25,0.4,0.3,true,true]' ]
	[ "$(jq -c '.results[1] | [.ratio, .goal_s, .met]' "$j")" = '[null,2,false]' ]
	[ "$(jq -c '.results[2] | [.peer_measured, .met]' "$j")" = '[false,null]' ]
	[ "$(jq -c '.failed' "$j")" = '["bench-bb"]' ]
	[ "$(jq -r .quick "$j")" = false ]
}

@test "bench: a second run shows the last run's ratio (or time) beside the new one" {
	"$T/s/bench" "$T/build/bin" >/dev/null 2>&1 || true
	A_S=1.0 B_S=1.5 run "$T/s/bench" "$T/build/bin"
	[ "$(row aa.copy)" = "aa.copy 1.000 cat -v 2.000 0.5 0.4 <= 0.3x 0.25 MISSED" ]
	[ "$(row aa.alone)" = "aa.alone 1.500 - - - - <= 2 s 3.000 s met" ]
	[ "$(jq -c '.results[0] | [.ratio, .last_ratio]' "$T/build/bench.json")" = '[0.5,0.25]' ]
	[ "$(jq -c '.results[1] | [.recpipe_s, .last_recpipe_s]' "$T/build/bench.json")" = '[1.5,3]' ]
}

@test "bench: BENCH picks benchmarks, BENCH_JSON moves the JSON, -q is recorded" {
	BENCH=aa BENCH_JSON="$T/other.json" run "$T/s/bench" -q "$T/build/bin"
	[ "$status" -eq 0 ]
	[[ "$output" != *bb.first* ]]
	[ ! -e "$T/build/bench.json" ]
	[ "$(jq -r .quick "$T/other.json")" = true ]
	[[ "$output" == *"quick run (-q)"* ]]
}

@test "bench: a missing BINDIR is refused" {
	run "$T/s/bench" "$T/nowhere"
	[ "$status" -eq 2 ]
	[ "$output" = "bench: $T/nowhere: no such directory" ]
}
