#!/usr/bin/env bats
# Staged builds that survive a crash: a part of a recipe's staged build
# killed (kill -9, its whole process group) at a random moment of a
# random parts stage, then the build run again, gives products
# byte-identical to an undisturbed run, and the rerun redoes no more
# than the killed part (the other parts' files keep their times).  Ten
# rounds for each of the T2T and Open-NLLB recipes, from a fixed seed;
# the moment is a random share of the time the stage took undisturbed.

load common

BUILDS="$BATS_TEST_DIRNAME/../scripts/builds"
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

# run_stages RECIPE OUT N KILL_STAGE KILL_PART DELAY VAR=value...: the
# stages in order, the parts of a parts stage side by side, each part in
# a process group of its own; in stage KILL_STAGE, part KILL_PART is
# killed with its group after DELAY seconds, and the run stops after
# that stage as a runner stops (a stage with a failed part ends it).
run_stages() {
	local r=$BUILDS/$1.mk out=$2 n=$3 ks=$4 kp=$5 delay=$6 name kind k pids fail t0
	shift 6
	while read -r name kind _; do
		if [ "$kind" = parts ]; then
			t0=$(date +%s%N)
			pids=()
			for ((k = 0; k < n; k++)); do
				setsid make -s -f "$r" "$name" BIN="$RECPIPE_BIN" OUT="$out" \
				    N="$n" K="$k" "$@" >/dev/null 2>&1 &
				pids+=($!)
			done
			if [ "$name" = "$ks" ]; then
				sleep "$delay"
				kill -KILL -- "-${pids[$kp]}" 2>/dev/null || true
			fi
			fail=0
			for ((k = 0; k < n; k++)); do
				wait "${pids[$k]}" && continue
				fail=1
				# killed in the middle of its work, not after it
				[ "$name" != "$ks" ] || [ "$k" != "$kp" ] || KILLED=$((KILLED + 1))
			done
			[ "$name" != "$ks" ] || return 0
			[ "$fail" -eq 0 ] || return 1
			STAGE_MS[$name]=$((($(date +%s%N) - t0) / 1000000))
		else
			make -s -f "$r" "$name" BIN="$RECPIPE_BIN" OUT="$out" N="$n" "$@" >/dev/null 2>&1 || return 1
		fi
	done < <(make -s -f "$r" stages "$@")
}

# times DIR: every file but the records and temporaries, with its time.
times() {
	(cd "$1" && find . -type f ! -path '*/records/*' ! -path './tmp/*' ! -path './logs/*' \
	    ! -name '*.tmp' ! -name '*.XXXXXX' ! -name '*.rp-*' -printf '%p %T@\n' | sort)
}

# crash_rounds RECIPE ROUNDS VAR=value...
crash_rounds() {
	local recipe=$1 rounds=$2 n=3 round ks kp delay p redone bad made ms
	local -a parts_stages
	shift 2
	declare -gA STAGE_MS=()
	run_stages "$recipe" "$T/ref" "$n" none 0 0 "$@"
	mapfile -t parts_stages < <(make -s -f "$BUILDS/$recipe.mk" stages "$@" | awk '$2 == "parts" { print $1 }')
	RANDOM=42
	KILLED=0
	for ((round = 1; round <= rounds; round++)); do
		ks=${parts_stages[$((RANDOM % ${#parts_stages[@]}))]}
		kp=$((RANDOM % n))
		# a moment inside the stage, as long as it took undisturbed
		ms=$((STAGE_MS[$ks] * (5 + RANDOM % 70) / 100))
		delay=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
		rm -rf "$T/run"
		run_stages "$recipe" "$T/run" "$n" "$ks" "$kp" "$delay" "$@"
		times "$T/run" >"$T/before"
		# the rerun: every stage again, as a runner reruns a build
		run_stages "$recipe" "$T/run" "$n" none 0 0 "$@" || {
			echo "round $round: the rerun after killing $ks part $kp failed"
			return 1
		}
		for p in $(make -s -f "$BUILDS/$recipe.mk" products OUT="$T/ref" "$@"); do
			cmp "$T/ref/$p" "$T/run/$p" || {
				echo "round $round ($ks part $kp killed after ${delay}s): $p differs"
				return 1
			}
		done
		# files that were there and changed: the killed part's only
		times "$T/run" >"$T/after"
		redone=$(comm -13 "$T/after" "$T/before" | cut -d' ' -f1 | sort -u)
		bad=$(grep -v -E "(^|[.-])$kp-of-$n([.-]|$)" <<<"$redone" | grep . || true)
		if [ -n "$bad" ]; then
			echo "round $round ($ks part $kp killed after ${delay}s) also redid: $bad"
			return 1
		fi
		made=$(comm -13 "$T/before" "$T/after" | grep -c -E "(^|[.-])$kp-of-$n([.-]|$)" || true)
		echo "# round $round: $ks part $kp killed after ${delay}s; remade: $(grep -c . <<<"$redone" || true) file(s) of it, $made file(s) of part $kp made in all" >&3
	done
	echo "# $KILLED of $rounds kills came in the middle of the part's work" >&3
	# kills must have cut parts short, or the test proves little
	[ "$KILLED" -ge $((rounds / 3)) ]
}

@test "crash: T2T staged build, a part killed at a random moment, rerun: the same products, only the killed part redone" {
	local i
	for i in $(seq 1 6000); do
		printf 'The cat number %d sat on the mat, and the dog ran %d times.\n' "$i" "$((i * 7 % 13))"
	done >"$T/train.en"
	for i in $(seq 1 6000); do
		printf '第%d只猫坐在垫子上，狗跑了%d次。\n' "$i" "$((i * 7 % 13))"
	done >"$T/train.zh"
	head -20 "$T/train.en" >"$T/dev.en"
	head -20 "$T/train.zh" >"$T/dev.zh"
	crash_rounds t2t-translate-enzh 10 SRC="$T/train.en" TGT="$T/train.zh" \
	    DEV_SRC="$T/dev.en" DEV_TGT="$T/dev.zh"
}

@test "crash: Open-NLLB staged build, a part killed at a random moment, rerun: the same products, only the killed part redone" {
	local i
	mkdir -p "$T/text"
	for i in $(seq 1 3000); do
		printf 'the cat %d sat on the mat and the dog ran %d times\n' "$i" "$((i * 7 % 13))"
	done >"$T/text/aa.txt"
	rev "$T/text/aa.txt" >"$T/text/bb.txt"
	crash_rounds nllb 10 TEXT="$T/text" PAIRS="aa-bb" SHARDS=2 VOCAB_SIZE=200 MAX_TOKENS=256
}
