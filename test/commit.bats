#!/usr/bin/env bats
# Named outputs, as every tool commits them (cmd/common.c, recpipe(5)
# "Named outputs"): groups that are all-or-nothing under signals and
# crashes, one writer at a time, stale temporaries removed, and the
# mode and symbolic link of the file replaced kept.

load common

# can_inject: strace is here and may trace (kills at chosen system calls).
can_inject() {
	command -v strace >/dev/null || skip "strace not installed"
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# LeakSanitizer cannot run under a tracer (the sanitizer build)
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# at_call SYSCALL N SIGNAL CMD...: run CMD with SIGNAL sent to it at its
# Nth call of SYSCALL (before the call is made).
at_call() {
	local call=$1 n=$2 sig=$3
	shift 3
	strace -f -o /dev/null -e trace="$call" \
		-e inject="$call":signal="$sig":when="$n" "$@" 2>/dev/null
}

# The ids of the dataset at prefix $1, one sequence a line.
ids_of() {
	mmap-index cat --output-format id "$1"
}

pair_inputs() {
	seq 1 40 | awk '{ print $1, $1 + 1 }' >"$T/a.txt"
	seq 100 130 | awk '{ print $1, $1 * 2, 7 }' >"$T/b.txt"
}

@test "commit: SIGTERM or SIGINT at either rename of a .bin/.idx pair leaves a whole pair" {
	can_inject
	pair_inputs
	for sig in SIGTERM SIGINT; do
		for n in 1 2; do
			mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/a.txt"
			run at_call rename "$n" "$sig" mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/b.txt"
			[ "$status" -ne 0 ]
			# the signal waited for the group: the new pair, whole
			run -0 mmap-index verify "$T/p"
			[ "$(ids_of "$T/p")" = "$(cat "$T/b.txt")" ]
			run ls "$T"
			[[ $output != *.rp-* && $output != *.lock* ]]
		done
	done
}

@test "commit: mmap-index merge commits its pair as one group too" {
	can_inject
	pair_inputs
	mmap-index build --raw-ids -q --input-format id -o "$T/a" "$T/a.txt"
	mmap-index build --raw-ids -q --input-format id -o "$T/b" "$T/b.txt"
	mmap-index merge -o "$T/m" "$T/a"
	run at_call rename 1 SIGTERM mmap-index merge -o "$T/m" "$T/a" "$T/b"
	run -0 mmap-index verify "$T/m"
	[ "$(ids_of "$T/m")" = "$(cat "$T/a.txt" "$T/b.txt")" ]
}

@test "commit: kill -9 at any rename of a pair never leaves an old and a new file together; a rerun repairs it" {
	can_inject
	pair_inputs
	for n in 1 2; do
		mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/a.txt"
		run at_call rename "$n" SIGKILL mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/b.txt"
		[ "$status" -ne 0 ]
		# no .idx: the pair is refused, not taken for a good one
		[ ! -e "$T/p.idx" ]
		run -1 mmap-index verify "$T/p"
		run -1 batch-sample batches -p "$T/p" --max-tokens 100
		# the rerun makes the pair and removes what the killed run left
		run -0 mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/b.txt"
		[ "$(ids_of "$T/p")" = "$(cat "$T/b.txt")" ]
		run ls "$T"
		[[ $output != *.rp-* && $output != *.lock* ]]
	done
}

@test "commit: kill -9 at any rename of tfr-cat --split never mixes old and new shards" {
	can_inject
	seq 1 30 | sed 's/.*/{"x":[&]}/' | tfr-cat -R --from-json >"$T/old.tfr"
	seq 31 60 | sed 's/.*/{"x":[&]}/' | tfr-cat -R --from-json >"$T/new.tfr"
	for n in 1 2 3; do
		rm -f "$T"/sh-*
		tfr-cat --split 3 -o "$T/sh-%d" "$T/old.tfr"
		for k in 0 1 2; do cp "$T/sh-$k" "$T/old-$k"; done
		tfr-cat --split 3 -o "$T/new-%d" "$T/new.tfr"
		run at_call rename "$n" SIGKILL tfr-cat --split 3 -o "$T/sh-%d" "$T/new.tfr"
		[ "$status" -ne 0 ]
		old=0 new=0
		for k in 0 1 2; do
			if [ -e "$T/sh-$k" ]; then
				if cmp -s "$T/sh-$k" "$T/old-$k"; then
					old=$((old + 1))
				else
					cmp "$T/sh-$k" "$T/new-$k"
					new=$((new + 1))
				fi
			fi
		done
		[ "$old" -eq 0 ] || [ "$new" -eq 0 ]
		[ "$old" -eq 0 ] || [ "$old" -eq 3 ]
		# a rerun gives the whole new set, and nothing of the killed run stays
		tfr-cat --split 3 -o "$T/sh-%d" "$T/new.tfr"
		for k in 0 1 2; do cmp "$T/sh-$k" "$T/new-$k"; done
		run ls "$T"
		[[ $output != *.rp-* && $output != *.lock* ]]
	done
}

@test "commit: a second writer of an output that is being written fails with one line" {
	pair_inputs
	sleep 60 &
	local holder=$!
	printf '%d %s\n' "$holder" "$(hostname)" >"$T/p.bin.lock"
	run -1 --separate-stderr mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/a.txt"
	[ "$stderr" = "mmap-index: $T/p.bin: another process ($holder) is writing it; its lock is $T/p.bin.lock" ]
	[ ! -e "$T/p.bin" ] && [ ! -e "$T/p.idx" ] && [ ! -e "$T/p.idx.lock" ]
	printf '%d %s\n' "$holder" "$(hostname)" >"$T/out.tfr.lock"
	run -1 --separate-stderr tfr-cat -R -o "$T/out.tfr" /dev/null
	[[ $stderr == "tfr-cat: $T/out.tfr: another process ($holder) is writing it;"* ]]
	# a lock from another host is not taken over: it names the host
	printf '%d %s\n' 1 "elsewhere.example" >"$T/out.tfr.lock"
	run -1 --separate-stderr tfr-cat -R -o "$T/out.tfr" /dev/null
	[ "$stderr" = "tfr-cat: $T/out.tfr: locked by process 1 on host elsewhere.example ($T/out.tfr.lock); remove the lock if that process has ended" ]
	kill "$holder"
	wait "$holder" || true
	# the holder is gone: its lock is stale and taken over
	printf '%d %s\n' "$holder" "$(hostname)" >"$T/p.bin.lock"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/a.txt"
	[ ! -e "$T/p.bin.lock" ]
	run -0 mmap-index verify "$T/p"
}

@test "commit: two writers at once never leave a mixed pair" {
	pair_inputs
	local i st1 st2
	for i in $(seq 1 25); do
		mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/a.txt" 2>"$T/e1" &
		mmap-index build --raw-ids -q --input-format id -o "$T/p" "$T/b.txt" 2>"$T/e2" &
		st1=0 st2=0
		wait %1 || st1=$?
		wait %2 || st2=$?
		[ "$st1" -eq 0 ] || [ "$st2" -eq 0 ]
		for e in 1 2; do
			[ ! -s "$T/e$e" ] || grep -q 'is writing it; its lock is' "$T/e$e"
		done
		run -0 mmap-index verify "$T/p"
		got=$(ids_of "$T/p")
		[ "$got" = "$(cat "$T/a.txt")" ] || [ "$got" = "$(cat "$T/b.txt")" ]
	done
	run ls "$T"
	[[ $output != *.rp-* && $output != *.lock* ]]
}

@test "commit: temporaries of a dead run are removed; a live run's and other files are not" {
	printf '{"a":[1]}\n' | tfr-cat -R --from-json >"$T/in.tfr"
	sh -c 'exit 0' &
	local dead=$!
	wait "$dead"
	sleep 60 &
	local live=$!
	touch "$T/out.tfr.rp-$dead-AbC123" "$T/out.tfr.rp-$dead-xYz789.old" \
		"$T/out.tfr.rp-$live-LiVe00" "$T/out.tfr.backup" "$T/other.tfr.rp-$dead-OtHeR1"
	run -0 tfr-cat -R -o "$T/out.tfr" "$T/in.tfr"
	kill "$live"
	[ ! -e "$T/out.tfr.rp-$dead-AbC123" ]
	[ ! -e "$T/out.tfr.rp-$dead-xYz789.old" ]
	[ -e "$T/out.tfr.rp-$live-LiVe00" ]
	[ -e "$T/out.tfr.backup" ]
	# another output's temporaries are its own writer's to remove
	[ -e "$T/other.tfr.rp-$dead-OtHeR1" ]
	cmp "$T/out.tfr" "$T/in.tfr"
}

@test "commit: replacing a file keeps its mode" {
	printf '{"a":[1]}\n' | tfr-cat -R --from-json >"$T/in.tfr"
	: >"$T/keep.tfr"
	chmod 0600 "$T/keep.tfr"
	run -0 tfr-cat -R -o "$T/keep.tfr" "$T/in.tfr"
	[ "$(stat -c %a "$T/keep.tfr")" = 600 ]
	chmod 0640 "$T/keep.tfr"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/keep" /dev/null
	: >"$T/k2.bin"
	chmod 0604 "$T/k2.bin"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/k2" /dev/null
	[ "$(stat -c %a "$T/k2.bin")" = 604 ]
	# a new file gets 0666 less the umask
	(umask 027 && tfr-cat -R -o "$T/new.tfr" "$T/in.tfr")
	[ "$(stat -c %a "$T/new.tfr")" = 640 ]
}

@test "commit: an output that is a symbolic link is written through to its target" {
	printf '{"a":[1]}\n' | tfr-cat -R --from-json >"$T/in.tfr"
	mkdir -p "$T/real" "$T/d"
	printf 'old' >"$T/real/out.tfr"
	ln -s ../real/out.tfr "$T/d/out.tfr"
	run -0 tfr-cat -R -o "$T/d/out.tfr" "$T/in.tfr"
	[ -L "$T/d/out.tfr" ]
	cmp "$T/real/out.tfr" "$T/in.tfr"
	# a chain of links, and a link to a file not yet made
	ln -s out.tfr "$T/real/alias.tfr"
	ln -s ../real/alias.tfr "$T/d/two.tfr"
	ln -s ../real/fresh.tfr "$T/d/fresh.tfr"
	run -0 tfr-cat -R -o "$T/d/two.tfr" "$T/in.tfr"
	run -0 tfr-cat -R -o "$T/d/fresh.tfr" "$T/in.tfr"
	[ -L "$T/d/two.tfr" ] && [ -L "$T/real/alias.tfr" ] && [ -L "$T/d/fresh.tfr" ]
	cmp "$T/real/fresh.tfr" "$T/in.tfr"
	# the pair of a dataset spread over disks by links
	mkdir -p "$T/disk2"
	ln -s ../disk2/p.bin "$T/d/p.bin"
	ln -s ../disk2/p.idx "$T/d/p.idx"
	run -0 mmap-index build --raw-ids -q --input-format id -o "$T/d/p" <(seq 1 5)
	[ -L "$T/d/p.bin" ] && [ -L "$T/d/p.idx" ] && [ -f "$T/disk2/p.bin" ]
	run -0 mmap-index verify "$T/d/p"
	# a loop of links is refused, naming the output
	ln -s loop2 "$T/loop1"
	ln -s loop1 "$T/loop2"
	run -1 --separate-stderr tfr-cat -R -o "$T/loop1" "$T/in.tfr"
	[[ $stderr == *"$T/loop1"* ]]
}

@test "commit: the data goes to disk before the rename, the directory after; RECPIPE_FSYNC=0 skips both" {
	can_inject
	printf '{"a":[1]}\n' | tfr-cat -R --from-json >"$T/in.tfr"
	strace -f -o "$T/st" -e trace=fsync,rename,openat tfr-cat -R -o "$T/out.tfr" "$T/in.tfr"
	# fsync of the temporary, then the rename, then an fsync of the directory
	run -0 awk '/^[0-9]+ +fsync/ { e = e "F" } /^[0-9]+ +rename/ { e = e "R" } END { print e }' "$T/st"
	[ "$output" = FRF ]
	RECPIPE_FSYNC=0 strace -f -o "$T/st" -e trace=fsync,rename tfr-cat -R -o "$T/out.tfr" "$T/in.tfr"
	run -1 grep -c fsync "$T/st"
	[ "$output" = 0 ]
	cmp "$T/out.tfr" "$T/in.tfr"
}

@test "commit: a lock whose writer is a zombie (killed, never reaped) is taken over" {
	printf '{"a":[1]}\n' | tfr-cat -R --from-json >"$T/in.tfr"
	run -0 python3 - "$T" "$(command -v tfr-cat)" <<'PY'
import os, subprocess, sys, time
t, tool = sys.argv[1], sys.argv[2]
pid = os.fork()
if pid == 0:
    os._exit(0)
time.sleep(0.2)  # the child is a zombie: this parent does not reap it yet
with open(t + "/out.tfr.lock", "w") as f:
    f.write("%d %s\n" % (pid, os.uname().nodename))
r = subprocess.run([tool, "-R", "-o", t + "/out.tfr", t + "/in.tfr"])
os.waitpid(pid, 0)
sys.exit(r.returncode)
PY
	cmp "$T/out.tfr" "$T/in.tfr"
	[ ! -e "$T/out.tfr.lock" ]
}
