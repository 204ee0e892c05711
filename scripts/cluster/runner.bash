# shellcheck shell=bash
# What the build runners (parallel-build, slurm-build, mpi-build) share:
# the recipe contract's plan (`make -s -f recipe stages`), OUT and BIN
# checked as make will read them, the one-runner lock of an output
# directory, the handling of signals, and the report of the products.
# Sourced by each runner, which sets prog (its name) and defines usage()
# first.

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage_error() {
	echo "$prog: $*" >&2
	usage >&2
	exit 2
}

# on_signal HANDLER: when SIGINT, SIGTERM or SIGHUP arrives, run
# `HANDLER SIGNAME STATUS` (STATUS 128 + the signal's number), then exit
# STATUS.  From the first signal on, all three are ignored, by this shell
# and by every command HANDLER starts: a second one (make forwards its
# own; a second ^C reaches the whole process group) cannot cut the
# stopping short.  The EXIT trap (the lock) still runs.
on_signal() {
	# the handler's name now, the rest when the signal comes
	# shellcheck disable=SC2064
	trap "_on_signal $1 SIGINT 130" INT
	# shellcheck disable=SC2064
	trap "_on_signal $1 SIGTERM 143" TERM
	# shellcheck disable=SC2064
	trap "_on_signal $1 SIGHUP 129" HUP
}

_on_signal() {
	trap '' INT TERM HUP
	"$1" "$2" "$3"
	exit "$3"
}

hms() {
	printf '%02d:%02d:%02d' $(($1 / 3600)) $(($1 / 60 % 60)) $(($1 % 60))
}

# make_name OPTION NAME: OUT and BIN go to make as names of files in
# rules: make would split them at white space or read its own syntax
# in them.
make_name() {
	local bad='*[[:space:][:cntrl:]$:;%#\\*?[\]()=,|\&]*'
	# shellcheck disable=SC2254
	case $2 in
	$bad)
		printf '%s: %s %q: a name with white space or one of $ : ; %% # \\ * ? [ ] ( ) = , | & cannot be given to make\n' "$prog" "$1" "$2" >&2
		exit 2 ;;
	esac
}

# runner_plan RECIPE PARTS OUT BIN VAR=value...: check the operands and
# read the recipe's plan.  Sets recipe (absolute), name, out (absolute,
# default build/NAME), bin, workdir, logs, common (the make arguments
# every job gets), and stages[] with kinds[] (parts or once), cpus[] and
# mems[] (what the recipe asks for each stage's task: cpus=N, mem=SIZE
# after the kind; empty when it does not say).
runner_plan() {
	local v s k a extra plan c m parts=$2
	recipe=$1 out=$3 bin=$4
	shift 4
	vars=("$@")
	for v in "${vars[@]}"; do
		case $v in
		[A-Za-z_]*=*) ;;
		*) usage_error "not VAR=value: $v" ;;
		esac
	done
	case $parts in
	''|*[!0-9]*|0*) usage_error "parts must be a number >= 1: $parts" ;;
	esac
	[ -f "$recipe" ] || die "$recipe: no such recipe"
	name=$(basename "$recipe" .mk)
	recipe=$(realpath "$recipe")
	[ -n "$out" ] || out=build/$name
	out=$(realpath -m "$out")
	workdir=$(pwd -P)
	[ -z "$bin" ] || bin=$(realpath -m "$bin")
	make_name -o "$out"
	[ -z "$bin" ] || make_name --bin "$bin"
	common=(OUT="$out")
	[ -z "$bin" ] || common+=(BIN="$bin")
	common+=("${vars[@]}")
	plan=$($makecmd -s -f "$recipe" stages "${common[@]}") || die "$recipe: make stages failed"
	stages=()
	kinds=()
	cpus=()
	mems=()
	while read -r s k extra; do
		[ -n "$s" ] || continue
		case $k in
		parts|once) ;;
		*) die "$recipe: stages: not \"NAME parts|once [cpus=N] [mem=SIZE]\": $s $k $extra" ;;
		esac
		c='' m=''
		set -f
		for a in $extra; do
			case $a in
			cpus=*) c=${a#*=}; is_cpus "$c" || a=bad ;;
			mem=*) m=${a#*=}; is_mem "$m" || a=bad ;;
			*) a=bad ;;
			esac
			[ "$a" != bad ] || { set +f; die "$recipe: stages: not \"NAME parts|once [cpus=N] [mem=SIZE]\": $s $k $extra"; }
		done
		set +f
		stages+=("$s")
		kinds+=("$k")
		cpus+=("$c")
		mems+=("$m")
	done <<<"$plan"
	[ ${#stages[@]} -gt 0 ] || die "$recipe: make stages printed no stage"
	logs=$out/logs
}

# is_cpus N, is_mem SIZE: a number of CPUs (1 or more); an amount of
# memory as sbatch --mem takes it (a number, and K, M, G or T; megabytes
# without).
is_cpus() {
	case $1 in
	''|*[!0-9]*|0*) return 1 ;;
	esac
}
is_mem() {
	is_cpus "${1%[KMGT]}"
}

# What a task of a stage gets: -c [STAGE=]N and --mem [STAGE=]SIZE, kept
# by resource_opt in cpus_opts and mem_opts as "STAGE=value", or
# "=value" for every stage; then, by stage_cpus and stage_mem, the value
# for a stage: the last STAGE=value, else the last =value, else what the
# recipe's stages line says (cpus=N, mem=SIZE), else the default.  The
# same for every runner (slurm-build sends both to sbatch;
# parallel-build and mpi-build give the CPUs to their jobs and ranks).
cpus_opts=() mem_opts=()
default_cpus=1 default_mem=2G

# resource_opt OPTION [STAGE=]VALUE: -c/--cpus-per-task or --mem
resource_opt() {
	local v=$2
	case $v in *=*) ;; *) v="=$v" ;; esac
	case $1 in
	--mem)
		is_mem "${v#*=}" || usage_error "$1: not a size as sbatch --mem takes it (500M, 4G): ${v#*=}"
		mem_opts+=("$v") ;;
	*)
		is_cpus "${v#*=}" || usage_error "$1: not a number of CPUs (1 or more): ${v#*=}"
		cpus_opts+=("$v") ;;
	esac
}

# resource STAGE RECIPE'S DEFAULT OPTION...: the value for STAGE: of the
# last STAGE=value option, else of the last =value, else the recipe's,
# else the default.
resource() {
	local s=$1 v=${2:-$3} all='' one='' o
	shift 3
	for o; do
		case $o in
		"$s"=*) one=${o#*=} ;;
		=*) all=${o#=} ;;
		esac
	done
	echo "${one:-${all:-$v}}"
}

# resource_stages: every STAGE= of -c and --mem is a stage of the recipe
# (after runner_plan), else a usage error.
resource_stages() {
	local o s
	for o in "${cpus_opts[@]}" "${mem_opts[@]}"; do
		case $o in
		=*) continue ;;
		esac
		for s in "${stages[@]}" ''; do
			[ "$s" != "${o%%=*}" ] || break
		done
		[ -n "$s" ] || usage_error "no stage ${o%%=*} in $recipe (its stages: ${stages[*]})"
	done
}

# stage_cpus I MAX WHERE: the CPUs of a task of stage I.  A recipe's
# cpus=N above MAX (when MAX > 0: the most a task can have, as WHERE
# says, e.g. "the nodes have") is cut to MAX, with a note on stderr;
# what -c asks for is kept as it is.
stage_cpus() {
	local s=${stages[$1]} c
	c=$(resource "$s" "${cpus[$1]}" "$default_cpus" "${cpus_opts[@]}")
	if [ -z "$(resource "$s" "" "" "${cpus_opts[@]}")" ] && [ "$2" -gt 0 ] && [ "$c" -gt "$2" ]; then
		echo "$prog: stage $s: the recipe asks for $c CPUs a task, $3 $2 at most: $2 (-c $s=N to choose)" >&2
		c=$2
	fi
	echo "$c"
}

# stage_mem I: the memory of a task of stage I
stage_mem() {
	resource "${stages[$1]}" "${mems[$1]}" "$default_mem" "${mem_opts[@]}"
}

# local_cpus: the CPUs this process may use (its affinity mask, as
# sched_getaffinity gives it; nproc would read OMP_NUM_THREADS too)
local_cpus() {
	env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1
}

# take_lock: one runner at a time in an output directory: the lock
# out/logs/lock (a directory, made or not at once) holds "HOST PID
# TIME" of its runner; a lock whose runner on this host is gone is
# taken over.  Removed when the runner exits.
take_lock() {
	local host pid since try
	lock=$logs/lock
	for try in 1 2; do
		if mkdir "$lock" 2>/dev/null; then
			printf '%s %s %s\n' "$(hostname)" "$$" "$(date +%Y-%m-%dT%H:%M:%S)" >"$lock/owner"
			trap 'rm -rf "$lock"' EXIT
			return
		fi
		host='' pid='' since=''
		read -r host pid since <"$lock/owner" 2>/dev/null
		if [ "$host" = "$(hostname)" ] && [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
			rm -rf "$lock"
			continue
		fi
		die "$out: another runner is building here (pid ${pid:-?} on ${host:-?} since ${since:-now}); if it is gone, remove $lock"
	done
	die "$lock: cannot take the lock"
}

# log_tail LOG: the end of a failed task's log, indented, on stderr.
log_tail() {
	if [ -s "$1" ]; then
		tail -n 15 "$1" | sed 's/^/    /' >&2
	else
		echo "    (no log)" >&2
	fi
}

# report_products T0: the products of the recipe, after every stage
# completed; exits 0, or 1 when one is missing.
report_products() {
	local products nprod missing=0 shown=0 p
	products=$($makecmd -s -f "$recipe" products "${common[@]}") || die "$recipe: make products failed"
	nprod=$(grep -c . <<<"$products")
	echo "$prog: all stages completed in $(hms $(($(date +%s) - $1))); $nprod products under $out:"
	while read -r p; do
		[ -n "$p" ] || continue
		if [ ! -f "$out/$p" ]; then
			echo "$prog: product $out/$p is missing" >&2
			missing=1
		elif [ $shown -lt 10 ] || [ "$nprod" -le 12 ]; then
			echo "  $p"
		elif [ $shown = 10 ]; then
			echo "  ... and $((nprod - 10)) more (make -s -f $recipe products)"
		fi
		shown=$((shown + 1))
	done <<<"$products"
	exit $missing
}
