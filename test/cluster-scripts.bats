#!/usr/bin/env bats
# scripts/cluster/slurm-build, parallel-build and mpi-build without a cluster: help,
# usage errors, the plan they would submit (dry run), and parallel-build
# on this machine when GNU parallel is installed, and slurm-build over a
# fake Slurm that runs each job at once.  The Slurm runs themselves are
# make check-cluster's (test/cluster/run).

load common

SB="$BATS_TEST_DIRNAME/../scripts/cluster/slurm-build"
PB="$BATS_TEST_DIRNAME/../scripts/cluster/parallel-build"
MB="$BATS_TEST_DIRNAME/../scripts/cluster/mpi-build"
FIXMK="$BATS_TEST_DIRNAME/cluster/fixture.mk"

text() {
	local i
	for ((i = 0; i < 400; i++)); do
		echo "line $((i % 17)) of the text, word$((i % 29)) 東京$((i % 5))"
	done >"$T/text.txt"
}

@test "cluster scripts: --help prints the usage and every option" {
	run "$SB" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: slurm-build "* ]]
	for o in --parts --out --bin --partition --account --time --cpus-per-task --mem --sbatch --poll --dry-run --no-wait --status --no-check; do
		[[ $output == *"$o"* ]] || { echo "no $o"; return 1; }
	done
	run "$PB" --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: parallel-build "* ]]
	for o in --parts --out --bin --jobs --cpus-per-task --sshlogin --parallel --dry-run; do
		[[ $output == *"$o"* ]] || { echo "no $o"; return 1; }
	done
}

@test "cluster scripts: usage errors exit 2 and say what is wrong" {
	for s in "$SB" "$PB"; do
		run "$s"
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == *": no recipe" ]]
		run "$s" --bogus "$FIXMK"
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == *": unknown option --bogus" ]]
		run "$s" -N 0 "$FIXMK"
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == *": parts must be a number >= 1: 0" ]]
		run "$s" "$FIXMK" notavar
		[ "$status" -eq 2 ]
		[[ ${lines[0]} == *": not VAR=value: notavar" ]]
		run "$s" "$T/none.mk"
		[ "$status" -eq 1 ]
		[[ ${lines[0]} == *"none.mk: no such recipe" ]]
	done
}

@test "slurm-build -n: a job array per parts stage, each stage after the one before" {
	text
	run "$SB" -n -N 3 -o "$T/out" -p short -A proj -t 10 --sbatch=--mem=1G \
		"$FIXMK" TEXT="$T/text.txt"
	[ "$status" -eq 0 ]
	# a shell script: JOBi=$(sbatch ...) for stage i
	grep -q -- '^JOB0=$(sbatch .*--array=0-2 --output=.*/logs/count-%a.log' <<<"$output"
	grep -q -- '^JOB1=$(sbatch .*--job-name=fixture-vocab .*--output=.*/logs/vocab.log --dependency=afterok:$JOB0 ' <<<"$output"
	grep -q -- '^JOB2=$(sbatch .*--array=0-2 .*--dependency=afterok:$JOB1 ' <<<"$output"
	grep -q -- '--partition=short --account=proj --time=10 --mem=1G' <<<"$output"
	# what the fixture's stages ask for a task: count 2 CPUs, vocab 1G
	grep -q -- '^JOB0=.* --cpus-per-task=2 --mem=2G ' <<<"$output"
	grep -q -- '^JOB1=.* --cpus-per-task=1 --mem=1G ' <<<"$output"
	# the job script of a part: the stage with N and the array task as K
	grep -q "fixture.mk count .* N=3 K=\"\$SLURM_ARRAY_TASK_ID\"$" "$T/out/logs/count.sh"
	! grep -q 'K=' "$T/out/logs/vocab.sh" || false
	[ "$(grep -c '^JOB[0-9]=' <<<"$output")" -eq 4 ]
}

@test "slurm-build: a recipe whose stages are not NAME parts|once is refused" {
	printf 'stages:\n\t@echo count sometimes\n' >"$T/bad.mk"
	run "$SB" -n "$T/bad.mk"
	[ "$status" -eq 1 ]
	[[ $output == *"stages: not \"NAME parts|once [cpus=N] [mem=SIZE]\": count sometimes"* ]]
}

@test "parallel-build: the products are those of the one-process run" {
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	text
	make -s -f "$FIXMK" OUT="$T/one" BIN="$RECPIPE_BIN" TEXT="$T/text.txt" VOCAB_SIZE=100
	run "$PB" -N 3 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" VOCAB_SIZE=100
	[ "$status" -eq 0 ]
	[[ $output == *"all stages completed"* ]]
	for p in vocab train-00000-of-00002 train-00001-of-00002; do
		cmp "$T/one/$p" "$T/par/$p"
	done
	[ -s "$T/par/logs/encode-2.log" ]
}

@test "parallel-build: a failed part is named with the end of its log, exit 1" {
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	text
	run "$PB" -N 3 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" FAIL_PART=1
	[ "$status" -eq 1 ]
	[[ $output == *"stage count task 1 of 3 failed: exit 2;"* ]]
	[[ $output == *"fixture: part 1 fails as FAIL_PART=1 asks"* ]]
	[ ! -e "$T/par/parts/vocab-of-3" ]
}

@test "cluster scripts: a parent make's MAKEFLAGS (-w) does not garble the stages" {
	text
	MAKEFLAGS=w MAKELEVEL=2 run "$SB" -n -N 2 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^JOB[0-9]=' <<<"$output")" -eq 4 ]
	MAKEFLAGS=w MAKELEVEL=2 run "$PB" -n -N 2 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^parallel ' <<<"$output")" -eq 4 ]
}

# run_procs PATTERN: the pids and command lines of the processes whose
# command line holds PATTERN.
run_procs() {
	ps -e -o pid= -o args= | grep -F -- "$1" | grep -v -F -e 'grep -F' || true
}

@test "parallel-build: terminated or hung up, it stops parallel and the running parts" {
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	text
	local sig pid i left st
	for sig in TERM HUP; do
		rm -rf "$T/par"
		"$PB" -N 3 -j 3 -c 1 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" SLEEP=37.31 \
			>"$T/pb.out" 2>&1 &
		pid=$!
		for ((i = 0; i < 200; i++)); do
			[ "$(run_procs 'sleep 37.31' | wc -l)" -lt 3 ] || break
			sleep 0.1
		done
		[ "$(run_procs 'sleep 37.31' | wc -l)" -eq 3 ]
		kill -"$sig" "$pid"
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ]
		left=$(run_procs "$T/par"; run_procs 'sleep 37.31')
		# (what an unfixed runner leaves is stopped here, by pid)
		[ -z "$left" ] || { kill $(awk '{ print $1 }' <<<"$left"); echo "left: $left"; return 1; }
		grep -q "parallel-build: SIG$sig received; stopping the jobs of stage count" "$T/pb.out"
		sleep 1
		[ ! -e "$T/par/logs/vocab.log" ]
		[ -z "$(run_procs "$T/par")" ]
	done
}

@test "cluster scripts: an OUT that make would split or expand is refused before anything is written" {
	cd "$T"
	local s o
	for s in "$SB" "$PB"; do
		for o in 'dir with space' "$T/o\$(X)y" "$T/a;b" "$(printf 'new\nline')"; do
			run -2 "$s" -n -o "$o" "$FIXMK" TEXT="$T/text.txt"
			[ "${#lines[@]}" -eq 1 ]
			[[ ${lines[0]} == *": -o "*": a name with white space or one of \$ : ; % # \\ * ? [ ] ( ) = , | & cannot be given to make" ]]
		done
		run -2 "$s" -n --bin "$T/b in" "$FIXMK" TEXT="$T/text.txt"
		[[ ${lines[0]} == *": --bin $T/b\\ in: a name with white space"* ]]
	done
	[ -z "$(ls -A "$T")" ]
}

# Two languages of 40 lines for the Open-NLLB recipe.
nllb_text() {
	local i
	mkdir -p "$T/text"
	for i in $(seq 1 40); do
		printf 'the cat %d sat on the mat\n' "$i"
	done >"$T/text/aa.txt"
	rev "$T/text/aa.txt" >"$T/text/bb.txt"
	NLLB=(TEXT="$T/text" PAIRS=aa-bb SHARDS=2 VOCAB_SIZE=200 MAX_TOKENS=256 LINES_gu-lv=)
}

@test "parallel-build: a rerun with a changed value remakes what uses it; OUT may hold quotes" {
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	nllb_text
	local r=$BATS_TEST_DIRNAME/../scripts/builds/nllb.mk out="$T/it's\"q\"" p
	make -s -f "$r" OUT="$T/one" BIN="$RECPIPE_BIN" "${NLLB[@]}"
	make -s -f "$r" OUT="$T/hot" BIN="$RECPIPE_BIN" "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128
	run -0 "$PB" -N 2 -o "$out" --bin "$RECPIPE_BIN" "$r" "${NLLB[@]}"
	[[ $output == *"all stages completed"* ]]
	for p in $(make -s -f "$r" products "${NLLB[@]}"); do
		cmp "$T/one/$p" "$out/$p"
	done
	run -0 "$PB" -N 2 -o "$out" --bin "$RECPIPE_BIN" "$r" "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128
	for p in $(make -s -f "$r" products "${NLLB[@]}"); do
		cmp "$T/hot/$p" "$out/$p"
	done
	! cmp -s "$T/one/batches.jsonl" "$out/batches.jsonl"
}

@test "cluster scripts: a second runner into the same output directory is refused" {
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	text
	local pid i st=0
	"$PB" -N 2 -j 2 -c 1 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" SLEEP=3 \
		>"$T/pb.out" 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[ ! -e "$T/par/logs/lock/owner" ] || break
		sleep 0.1
	done
	run -1 "$PB" -N 2 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[[ $output == "parallel-build: $T/par: another runner is building here (pid $pid on $(hostname) since "*"); if it is gone, remove $T/par/logs/lock" ]]
	run -1 "$SB" -n -N 2 -o "$T/par" "$FIXMK" TEXT="$T/text.txt"
	[[ $output == "slurm-build: $T/par: another runner is building here (pid $pid on "* ]]
	wait "$pid" || st=$?
	[ "$st" -eq 0 ]
	[ ! -e "$T/par/logs/lock" ]
	# the lock of a runner that is gone is taken over
	mkdir "$T/par/logs/lock"
	sleep 30 &
	i=$!
	kill "$i"
	wait "$i" || true
	echo "$(hostname) $i 2026-01-01T00:00:00" >"$T/par/logs/lock/owner"
	run -0 "$PB" -N 2 -o "$T/par" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ ! -e "$T/par/logs/lock" ]
}

# fake_slurm: sbatch, squeue, scontrol and scancel on PATH that run each
# job at once, in order (task K of an array with SLURM_ARRAY_TASK_ID=K),
# and report it as Slurm's do: enough for slurm-build without a cluster.
# sbatch keeps the arguments of job ID in FAKE_JOBS/ID.args, one a line.
fake_slurm() {
	local d=$T/fakebin
	mkdir -p "$d" "$T/fakejobs"
	echo 0 >"$T/fakejobs/last"
	cat >"$d/sbatch" <<'SH'
#!/bin/bash
jobs=${FAKE_JOBS:?}
array='' output='' dep='' script=
for a; do
	case $a in
	--array=*) array=${a#*=} ;;
	--output=*) output=${a#*=} ;;
	--dependency=afterok:*) dep=${a#*:} ;;
	--*) ;;
	*) script=$a ;;
	esac
done
id=$(($(cat "$jobs/last") + 1))
echo "$id" >"$jobs/last"
: >"$jobs/$id"
printf '%s\n' "$@" >"$jobs/$id.args"
if [ -n "$array" ]; then tasks=$(seq "${array%-*}" "${array#*-}"); else tasks=-; fi
for k in $tasks; do
	if [ -n "$dep" ] && grep -qv ' 0$' "$jobs/$dep"; then
		echo "$k CANCELLED 1" >>"$jobs/$id"
		continue
	fi
	SLURM_ARRAY_TASK_ID=${k#-} bash "$script" >"${output//%a/$k}" 2>&1
	rc=$?
	[ $rc = 0 ] && st=COMPLETED || st=FAILED
	echo "$k $st $rc" >>"$jobs/$id"
done
echo "$id"
SH
	cat >"$d/scontrol" <<'SH'
#!/bin/bash
id=${4:?}
while read -r k st rc; do
	t=
	[ "$k" = - ] || t=" ArrayTaskId=$k"
	echo "JobId=$id$t JobState=$st ExitCode=$rc:0 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01"
done <"${FAKE_JOBS:?}/$id"
SH
	# srun runs the command once for each node (node1 ...), sinfo says
	# FAKE_NODES nodes (default 1); srun keeps its arguments in
	# FAKE_JOBS/srun
	cat >"$d/srun" <<'SH'
#!/bin/bash
echo "$*" >>"${FAKE_JOBS:?}/srun"
nodes=1
while [ $# -gt 0 ]; do
	case $1 in
	--nodes=*) nodes=${1#*=} ;;
	--*) ;;
	*) break ;;
	esac
	shift
done
rc=0
for ((i = 1; i <= nodes; i++)); do
	SLURMD_NODENAME=node$i "$@" || { echo "srun: error: node$i: task $((i - 1)): Exited with exit code $?" >&2; rc=1; }
done
exit $rc
SH
	# sinfo: the CPUs of a node (%c), the partitions (%P, check the
	# default), else the nodes (node1 ... of FAKE_NODES, default 1) and
	# their states (idle, or as FAKE_DOWN says: "NAME STATE ..."), one a
	# line; it keeps its arguments in FAKE_JOBS/sinfo
	cat >"$d/sinfo" <<'SH'
#!/bin/bash
echo "$*" >>"${FAKE_JOBS:?}/sinfo"
case "$*" in
*%c*) echo "${FAKE_CPUS:-64}" ;;
*%P*) printf '%s\n' 'check*' other ;;
*)
	down=(${FAKE_DOWN:-})
	for ((i = 1; i <= ${FAKE_NODES:-1}; i++)); do
		st=idle
		for ((j = 0; j < ${#down[@]}; j += 2)); do
			[ "${down[$j]}" != node$i ] || st=${down[$((j + 1))]}
		done
		echo "node$i $st"
	done ;;
esac
SH
	printf '#!/bin/sh\nexit 0\n' >"$d/squeue"
	printf '#!/bin/sh\nexit 0\n' >"$d/scancel"
	chmod +x "$d"/*
	export FAKE_JOBS=$T/fakejobs PATH="$d:$PATH"
}

@test "slurm-build: a rerun with a changed value remakes what uses it (a fake Slurm)" {
	fake_slurm
	nllb_text
	local r=$BATS_TEST_DIRNAME/../scripts/builds/nllb.mk p
	make -s -f "$r" OUT="$T/one" BIN="$RECPIPE_BIN" "${NLLB[@]}"
	make -s -f "$r" OUT="$T/hot" BIN="$RECPIPE_BIN" "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128 VOCAB_SIZE=150
	run -0 "$SB" --poll 0 -N 3 -o "$T/sb" --bin "$RECPIPE_BIN" "$r" "${NLLB[@]}"
	[[ $output == *"all stages completed"* ]]
	for p in $(make -s -f "$r" products "${NLLB[@]}"); do
		cmp "$T/one/$p" "$T/sb/$p"
	done
	run -0 "$SB" --poll 0 -N 3 -o "$T/sb" --bin "$RECPIPE_BIN" "$r" "${NLLB[@]}" TEMPERATURE=5 MAX_TOKENS=128 VOCAB_SIZE=150
	[[ $output == *"all stages completed"* ]]
	for p in $(make -s -f "$r" products "${NLLB[@]}"); do
		cmp "$T/hot/$p" "$T/sb/$p"
	done
	! cmp -s "$T/one/batches.jsonl" "$T/sb/batches.jsonl"
}

# job_has ID ARG...: each ARG is an argument of fake job ID's sbatch
job_has() {
	local id=$1 a
	shift
	for a; do
		grep -qxF -- "$a" "$FAKE_JOBS/$id.args" || { echo "job $id: no $a in:"; cat "$FAKE_JOBS/$id.args"; return 1; }
	done
}

@test "slurm-build: CPUs and memory a task, per stage: the command line's, the recipe's, else 1 and 2G" {
	fake_slurm
	text
	# the fixture's stages: count parts cpus=2, vocab once mem=1G
	run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	job_has 1 --cpus-per-task=2 --mem=2G
	job_has 2 --cpus-per-task=1 --mem=1G
	job_has 3 --cpus-per-task=1 --mem=2G
	job_has 4 --cpus-per-task=1 --mem=2G
	[[ $output == *"stage count (parts): job 1 submitted (2 CPU(s), 2G a task)"* ]]
	# for every stage, then for one: the stage's wins, whatever the order
	run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" -c vocab=6 -c 3 --mem 500M \
		--mem encode=4G --cpus-per-task=shards=1 "$FIXMK" TEXT="$T/text.txt"
	job_has 5 --cpus-per-task=3 --mem=500M
	job_has 6 --cpus-per-task=6 --mem=500M
	job_has 7 --cpus-per-task=3 --mem=4G
	job_has 8 --cpus-per-task=1 --mem=500M
	# --sbatch comes after, and so wins in sbatch
	run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" --sbatch=--mem=3G "$FIXMK" TEXT="$T/text.txt"
	[ "$(grep -n -e '^--mem=' "$FAKE_JOBS/9.args" | cut -d: -f2 | tr '\n' ' ')" = "--mem=2G --mem=3G " ]
	# what a stages line or an option may not say
	run -2 "$SB" -n -c 0 "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "slurm-build: -c: not a number of CPUs (1 or more): 0" ]]
	run -2 "$SB" -n --mem=vocab=4g "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "slurm-build: --mem: not a size as sbatch --mem takes it (500M, 4G): 4g" ]]
	run -2 "$SB" -n -c nosuch=2 "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "slurm-build: no stage nosuch in $FIXMK (its stages: count vocab encode shards)" ]]
	printf 'stages:\n\t@echo count parts cpus=x\n' >"$T/bad.mk"
	run -1 "$SB" -n "$T/bad.mk"
	[[ $output == *"stages: not \"NAME parts|once [cpus=N] [mem=SIZE]\": count parts cpus=x"* ]]
}

@test "slurm-build: a recipe's cpus=N above what the nodes have is cut to it, with a note; -c is kept" {
	fake_slurm
	text
	# the fixture's count stage asks for cpus=2; the nodes have 1
	FAKE_CPUS=1 run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	job_has 1 --cpus-per-task=1
	[[ $output == *"stage count: the recipe asks for 2 CPUs a task, the nodes have 1 at most: 1 (-c count=N to choose)"* ]]
	# what the command line asks for is sent as it is
	FAKE_CPUS=1 run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" -c count=2 "$FIXMK" TEXT="$T/text.txt"
	job_has 5 --cpus-per-task=2
	[[ $output != *"the recipe asks for"* ]]
	# "4+" (nodes of several sizes) counts as 4
	FAKE_CPUS=4+ run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	job_has 9 --cpus-per-task=2
}

# stage_is NAME KIND ID STATE DONE WANT: the --status line of a stage
stage_is() {
	grep -qE "^slurm-build: stage $1 +$2 +job $3 +$4 +$5 of $6 done\$" <<<"$output" ||
		{ echo "no line for stage $1 $4 $5 of $6 in:"; echo "$output"; return 1; }
}

@test "slurm-build --no-wait submits and exits; --status says where each stage stands" {
	fake_slurm
	text
	local d=$T/sb i
	run -0 --separate-stderr "$SB" --no-wait -N 2 -o "$d" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ "${lines[0]}" = "slurm-build: submitted jobs 1 2 3 4; they run on their own" ]
	[ "${lines[1]}" = "slurm-build: where the build stands: $SB --status $d" ]
	[ "${#lines[@]}" -eq 2 ]
	[[ $stderr == *"stage shards (once): job 4 submitted"* ]]
	[ ! -e "$d/logs/lock" ]
	run -0 "$SB" --status "$d"
	[[ ${lines[0]} == "slurm-build: $d: fixture.mk, 2 parts, submitted 20"* ]]
	stage_is count parts 1 done 2 2
	stage_is vocab once 2 done 1 1
	stage_is encode parts 3 done 2 2
	stage_is shards once 4 done 1 1
	[ "${lines[-1]}" = "slurm-build: $d: done: every stage completed" ]
	# Slurm says: encode's task 0 runs, task 1 waits, and shards waits
	printf '0 RUNNING 0\n1 PENDING 0\n' >"$FAKE_JOBS/3"
	echo '- PENDING 0' >"$FAKE_JOBS/4"
	rm "$d"/logs/encode-*.status "$d/logs/shards.status"
	run -3 "$SB" --status "$d"
	stage_is count parts 1 done 2 2
	stage_is encode parts 3 running 0 2
	stage_is shards once 4 pending 0 1
	[ "${lines[-1]}" = "slurm-build: $d: running (stage encode)" ]
	# a part failed; the stages after it were cancelled
	printf '0 COMPLETED 0\n1 FAILED 2\n' >"$FAKE_JOBS/1"
	echo 2 >"$d/logs/count-1.status"
	for i in 2 3 4; do echo '- CANCELLED 0' >"$FAKE_JOBS/$i"; done
	run -1 "$SB" --status "$d"
	stage_is count parts 1 failed 1 2
	stage_is vocab once 2 cancelled 1 1
	[ "${lines[-1]}" = "slurm-build: $d: failed (stage count: failed); logs in $d/logs" ]
	# Slurm has forgotten the jobs: the exit statuses the tasks wrote
	for i in 1 2 3 4; do : >"$FAKE_JOBS/$i"; done
	for i in count-1 encode-0 encode-1 shards; do echo 0 >"$d/logs/$i.status"; done
	run -0 "$SB" --status "$d"
	stage_is encode parts 3 done 2 2
	[ "${lines[-1]}" = "slurm-build: $d: done: every stage completed" ]
	rm "$d/logs/encode-1.status"
	run -1 "$SB" --status "$d"
	stage_is encode parts 3 unknown 1 2
	[[ $output == *"slurm-build: stage encode: Slurm no longer knows job 3, and not every task wrote its exit status"* ]]
	# while its jobs are queued, the build is not submitted again
	printf '#!/bin/sh\necho 3\n' >"$T/fakebin/squeue"
	run -1 "$SB" -N 2 -o "$d" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[[ $output == "slurm-build: $d: the build submitted here on 20"*" still has jobs in the queue (1,2,3,4): $SB --status $d shows where it stands; scancel them to start again" ]]
	[ "$(cat "$FAKE_JOBS/last")" = 4 ]
	# usage
	run -2 "$SB" --status "$d" "$FIXMK"
	[[ ${lines[0]} == "slurm-build: --status takes no recipe: $FIXMK" ]]
	run -1 "$SB" --status "$T"
	[ "$output" = "slurm-build: $T: no build submitted by slurm-build here (no $T/logs/jobs)" ]
}

@test "slurm-build: the tools must run on the nodes before a stage is queued; what is missing is said" {
	fake_slurm
	text
	export FAKE_NODES=3
	# tools that need a library node2 lacks
	local t
	mkdir "$T/bin"
	for t in tfr-cat subword-build subword-encode; do
		cat >"$T/bin/$t" <<'SH'
#!/bin/sh
if [ "$SLURMD_NODENAME" = node2 ]; then
	echo "$0: error while loading shared libraries: libjansson.so.4: cannot open shared object file: No such file or directory" >&2
	exit 127
fi
echo "${0##*/} 1.0"
SH
		chmod +x "$T/bin/$t"
	done
	run -1 --separate-stderr "$SB" --poll 0 -N 4 -o "$T/sb" --bin "$T/bin" "$FIXMK" TEXT="$T/text.txt"
	[ "${stderr_lines[0]}" = "slurm-build: checking that the tools run on 3 node(s) of partition check" ]
	[ "${stderr_lines[1]}" = "slurm-build: the tools do not run on every node; no stage queued:" ]
	[ "${stderr_lines[2]}" = "  node2: $T/bin/tfr-cat: error while loading shared libraries: libjansson.so.4: cannot open shared object file: No such file or directory" ]
	[ "${stderr_lines[4]}" = "  node2: $T/bin/subword-encode: error while loading shared libraries: libjansson.so.4: cannot open shared object file: No such file or directory" ]
	[ "${stderr_lines[5]}" = "slurm-build: a library the tools need is missing there: make static builds tools that need none (build/static/bin); give them with --bin build/static/bin" ]
	[ "$(cat "$FAKE_JOBS/last")" = 0 ]
	grep -q -- '^--nodes=3 --ntasks-per-node=1 --job-name=fixture-check ' "$FAKE_JOBS/srun"
	[ ! -e "$T/sb/logs/lock" ]
	# tools that run: on every node, then the stages
	rm "$FAKE_JOBS/srun"
	run -0 "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- '^--nodes=3 --ntasks-per-node=1 ' "$FAKE_JOBS/srun"
	[[ $output == *"all stages completed"* ]]
	# --no-check: no srun
	rm "$FAKE_JOBS/srun"
	run -0 "$SB" --no-check --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ ! -e "$FAKE_JOBS/srun" ]
}

# wait_for FILE PATTERN: until FILE holds a line matching PATTERN (20 s)
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		! grep -q -- "$2" "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "$1: no line $2"
	return 1
}

@test "slurm-build: terminated, then again while it cancels, it cancels every job once, to the end" {
	fake_slurm
	text
	# the jobs stay queued, and scancel takes a while
	printf '#!/bin/sh\necho RUNNING\n' >"$T/fakebin/squeue"
	cat >"$T/fakebin/scancel" <<'SH'
#!/bin/sh
echo "start $*" >>"$FAKE_JOBS/scancel"
sleep 1
echo "done $*" >>"$FAKE_JOBS/scancel"
SH
	local pid st=0
	# a process group of its own: the second SIGTERM goes to the whole
	# group, scancel included, as a second ^C does
	setsid "$SB" --poll 0.1 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" \
		>"$T/sb.out" 2>&1 &
	pid=$!
	wait_for "$T/sb.out" 'stage shards (once): job 4 submitted'
	kill -TERM -- -"$pid"
	wait_for "$FAKE_JOBS/scancel" '^start'
	kill -TERM -- -"$pid"
	wait "$pid" || st=$?
	cat "$T/sb.out" "$FAKE_JOBS/scancel"
	[ "$st" -eq 143 ]
	grep -q 'slurm-build: SIGTERM received; cancelling jobs 1 2 3 4' "$T/sb.out"
	[ "$(cat "$FAKE_JOBS/scancel")" = "start 1 2 3 4
done 1 2 3 4" ]
	[ ! -e "$T/sb/logs/lock" ]
}

@test "mpi-build: --help, usage errors and the dry run" {
	run -0 "$MB" --help
	[[ ${lines[0]} == "usage: mpi-build "* ]]
	for o in --parts --out --bin --hostfile --cpus-per-task --mpirun --make --dry-run; do
		[[ $output == *"$o"* ]] || { echo "no $o"; return 1; }
	done
	run -2 "$MB"
	[[ ${lines[0]} == "mpi-build: no recipe" ]]
	run -2 "$MB" -N 0 "$FIXMK"
	[[ ${lines[0]} == "mpi-build: parts must be a number >= 1: 0" ]]
	run -2 "$MB" -o "$T/a b" "$FIXMK" TEXT=x
	[[ ${lines[0]} == "mpi-build: -o $T/a\\ b: a name with white space"* ]]
	text
	run -0 "$MB" -n -N 3 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	# a parts stage is one launch of N ranks, a once stage one make
	[ "$(grep -c '^mpirun .* -n 3 bash -c ' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^cd .* make -f .* vocab ' <<<"$output")" -eq 1 ]
	[ ! -e "$T/out" ]
}

@test "mpi-build: the products are those of the one-process run; a failed rank is named" {
	command -v mpirun >/dev/null || skip "mpirun not installed (openmpi-bin)"
	text
	make -s -f "$FIXMK" OUT="$T/one" BIN="$RECPIPE_BIN" TEXT="$T/text.txt"
	run -0 "$MB" -N 3 -o "$T/mpi" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ "$(grep -c '^mpi-build: stage ' <<<"$output")" -eq 4 ]
	for p in $(make -s -f "$FIXMK" products OUT="$T/one" TEXT=x); do
		cmp "$T/one/$p" "$T/mpi/$p"
	done
	run -1 --separate-stderr "$MB" -N 3 -o "$T/fail" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt" FAIL_PART=1
	[[ $stderr == *"mpi-build: stage count task 1 of 3 failed: exit 2; $T/fail/logs/count-1.log ends:"* ]]
	[[ $stderr == *"fixture: part 1 fails as FAIL_PART=1 asks"* ]]
	[ ! -e "$T/fail/parts/vocab-of-3" ]
	[ ! -e "$T/fail/logs/lock" ]
}

# cpus_mk: a recipe of two stages that writes what SLURM_CPUS_PER_TASK
# each job had: one (parts, cpus=3) to OUT/one-K (and the CPUs its
# affinity mask allows to OUT/one-K.mask), two (once) to OUT/two
cpus_mk() {
	cat >"$T/cpus.mk" <<'MK'
OUT ?= out
K ?= 0
stages: ; @printf '%s\n' 'one parts cpus=3' 'two once'
products: ; @echo two
one: ; @mkdir -p $(OUT) && echo "$$SLURM_CPUS_PER_TASK" >$(OUT)/one-$(K) && env -u OMP_NUM_THREADS nproc >$(OUT)/one-$(K).mask
two: ; @echo "$$SLURM_CPUS_PER_TASK" >$(OUT)/two
MK
}

@test "parallel-build: a stage's cpus=: CPUs / cpus parts at a time, each with that many threads; -c wins" {
	text
	# -j 4: count (cpus=2) two at a time, encode (1 CPU) four
	run -0 --separate-stderr "$PB" -n -N 4 -j 4 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- '^parallel --jobs=2 .* env SLURM_CPUS_PER_TASK=2 make -f .* count .* K={} ' <<<"${output//\\/}"
	grep -q -- '^parallel --jobs=4 .* env SLURM_CPUS_PER_TASK=1 make -f .* encode .* K={} ' <<<"${output//\\/}"
	grep -q -- '^parallel -N0 .* env SLURM_CPUS_PER_TASK=1 make -f .* vocab ' <<<"${output//\\/}"
	# -c for every stage, then for one; --parallel comes after, and wins
	run -0 "$PB" -n -N 4 -j 8 -c 3 -c count=8 --parallel=--jobs=5 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- '^parallel --jobs=1 .*--jobs=5 .* SLURM_CPUS_PER_TASK=8 make -f .* count ' <<<"${output//\\/}"
	grep -q -- '^parallel --jobs=2 .* SLURM_CPUS_PER_TASK=3 make -f .* encode ' <<<"${output//\\/}"
	# the recipe's cpus= above the CPUs is cut to them, with a note
	run -0 --separate-stderr "$PB" -n -N 4 -j 1 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- '^parallel --jobs=1 .* SLURM_CPUS_PER_TASK=1 make -f .* count ' <<<"${output//\\/}"
	[[ $stderr == *"parallel-build: stage count: the recipe asks for 2 CPUs a task, -j gives 1 at most: 1 (-c count=N to choose)"* ]]
	# without -j, the CPUs this process may use
	run -0 taskset -c 0 "$PB" -n -N 4 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- '^parallel --jobs=1 .* SLURM_CPUS_PER_TASK=1 make -f .* count ' <<<"${output//\\/}"
	run -2 "$PB" -n -c nosuch=2 "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "parallel-build: no stage nosuch in $FIXMK (its stages: count vocab encode shards)" ]]
	run -2 "$PB" -n -j 0 "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "parallel-build: -j: not a number of CPUs (1 or more): 0" ]]
	# the jobs get their threads
	command -v parallel >/dev/null || skip "GNU parallel not installed"
	cpus_mk
	run -0 --separate-stderr "$PB" -N 3 -j 6 -o "$T/par" "$T/cpus.mk"
	[ "$(cat "$T/par/one-0" "$T/par/one-1" "$T/par/one-2" "$T/par/two" | tr '\n' ' ')" = "3 3 3 1 " ]
	[[ $stderr == *"parallel-build: stage one (parts): 3 jobs, 2 at a time, 3 CPU(s) each"* ]]
}

@test "mpi-build: a stage's cpus= are the threads of each rank, each bound to as many cores" {
	text
	run -0 "$MB" -n -N 3 -c count=2 -o "$T/out" "$FIXMK" TEXT="$T/text.txt"
	grep -q -- "^mpirun .* --map-by slot:PE=2 -n 3 bash -c .* env SLURM_CPUS_PER_TASK=2 make -f .* count " <<<"$output"
	grep -q -- "^mpirun .* -n 3 bash -c .* env SLURM_CPUS_PER_TASK=1 make -f .* encode " <<<"$output"
	! grep -q -- "PE=.* encode " <<<"$output" || false
	grep -q -- "^cd .* env SLURM_CPUS_PER_TASK=1 make -f .* vocab " <<<"$output"
	run -2 "$MB" -n -c count=x "$FIXMK" TEXT="$T/text.txt"
	[[ ${lines[0]} == "mpi-build: -c: not a number of CPUs (1 or more): x" ]]
	command -v mpirun >/dev/null || skip "mpirun not installed (openmpi-bin)"
	cpus_mk
	# cpus=3, cut to the CPUs of this machine when it has fewer
	local n
	n=$(nproc)
	[ "$n" -le 3 ] || n=3
	run -0 --separate-stderr "$MB" -N 2 -o "$T/mpi" "$T/cpus.mk"
	[ "$(cat "$T/mpi/one-0" "$T/mpi/one-1" "$T/mpi/two" | tr '\n' ' ')" = "$n $n 1 " ]
	# each rank bound to as many cores (--map-by slot:PE=N)
	[ "$(cat "$T/mpi/one-0.mask" "$T/mpi/one-1.mask" | tr '\n' ' ')" = "$n $n " ]
	run -0 "$MB" -N 2 -c one=1 -c two=2 -o "$T/mpi" "$T/cpus.mk"
	[ "$(cat "$T/mpi/one-0" "$T/mpi/one-1" "$T/mpi/two" | tr '\n' ' ')" = "1 1 2 " ]
}

@test "slurm-build --status: exit 0 when done, 3 while a stage is pending or running, 1 when one failed" {
	fake_slurm
	text
	local d=$T/sb
	run -0 "$SB" --no-wait -N 2 -o "$d" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	rm "$d"/logs/*.status
	run -0 "$SB" --status "$d"
	# only pending
	printf '0 PENDING 0\n1 PENDING 0\n' >"$FAKE_JOBS/3"
	echo '- PENDING 0' >"$FAKE_JOBS/4"
	run -3 "$SB" --status "$d"
	[ "${lines[-1]}" = "slurm-build: $d: pending (stage encode)" ]
	# running
	printf '0 RUNNING 0\n1 COMPLETED 0\n' >"$FAKE_JOBS/3"
	run -3 "$SB" --status "$d"
	[ "${lines[-1]}" = "slurm-build: $d: running (stage encode)" ]
	# a failure wins over a stage still running
	printf '0 FAILED 2\n1 RUNNING 0\n' >"$FAKE_JOBS/3"
	run -1 "$SB" --status "$d"
	# cancelled
	printf '0 COMPLETED 0\n1 COMPLETED 0\n' >"$FAKE_JOBS/3"
	echo '- CANCELLED 0' >"$FAKE_JOBS/4"
	run -1 "$SB" --status "$d"
	[ "${lines[-1]}" = "slurm-build: $d: failed (stage shards: cancelled); logs in $d/logs" ]
}

@test "slurm-build: the tools are checked on every node of the partition the stages may run on" {
	fake_slurm
	text
	# 3 nodes, 2 parts: all 3 are checked
	FAKE_NODES=3 run -0 --separate-stderr "$SB" --poll 0 -N 2 -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ "${stderr_lines[0]}" = "slurm-build: checking that the tools run on 3 node(s) of partition check" ]
	grep -q -- '^--nodes=3 --ntasks-per-node=1 ' "$FAKE_JOBS/srun"
	# a drained or down node runs no stage and is not asked for; the
	# nodes of the partition given, each once
	rm "$FAKE_JOBS/srun" "$FAKE_JOBS/sinfo"
	FAKE_NODES=4 FAKE_DOWN='node2 drain node4 down*' run -0 --separate-stderr "$SB" --poll 0 -N 8 -p other -o "$T/sb" --bin "$RECPIPE_BIN" "$FIXMK" TEXT="$T/text.txt"
	[ "${stderr_lines[0]}" = "slurm-build: checking that the tools run on 2 node(s) of partition other" ]
	grep -q -- '^--nodes=2 --ntasks-per-node=1 .* --partition=other ' "$FAKE_JOBS/srun"
	grep -q -- '-p other' "$FAKE_JOBS/sinfo"
	! grep -q -- '-p check' "$FAKE_JOBS/sinfo" || false
}
