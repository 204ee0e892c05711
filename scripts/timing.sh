# The one timing helper of the scripts/bench-* scripts (sourced: . "$dir/timing.sh").
#
#   measure CMD [ARG...]
#
# runs CMD $RUNS times (default 3; its stdout to $MEASURE_OUT, default
# /dev/null, so that a single run's output can be kept) and prints
# "WALL USER SYS MAXRSS_KB" of one run: the run with the least user+sys
# time, or with MEASURE_PICK=wall the run with the least wall time, or
# with MEASURE_PICK=median the run of median wall time (the lower one
# for an even RUNS).  Wall time is read with date +%s%N and printed with
# MEASURE_DIGITS decimals (default 2); CPU time in seconds to the
# millisecond, from bash's time (getrusage), as /usr/bin/time prints
# only hundredths, which is 10% of a 0.1 s run; /usr/bin/time gives the
# peak memory (its own few hundred microseconds, mostly system time, are
# counted with the run's).  MEASURE_PREP, when set, is run by the shell
# before each run, untimed (to remove what the run before wrote, say).
# A run that fails prints its stderr and exits the script with status 1.
measure() {
	_m_tmp=$(mktemp "${TMPDIR:-/tmp}/measure.XXXXXX")
	: >"$_m_tmp.runs"
	_m_i=0
	while [ "$_m_i" -lt "${RUNS:-3}" ]; do
		_m_i=$((_m_i + 1))
		[ -z "${MEASURE_PREP:-}" ] || eval "$MEASURE_PREP"
		_m_t0=$(date +%s%N)
		if ! bash -c 'TIMEFORMAT="%3U %3S"
		    { time /usr/bin/time -f %M -o "$1.rss" "${@:3}" \
			>"$2" 2>"$1.err"; } 2>"$1.cpu"' sh "$_m_tmp" \
		    "${MEASURE_OUT:-/dev/null}" "$@"; then
			echo "measure: $1 failed:" >&2
			cat "$_m_tmp.err" >&2
			rm -f "$_m_tmp" "$_m_tmp".*
			exit 1
		fi
		_m_t1=$(date +%s%N)
		echo "$((_m_t1 - _m_t0)) $(tail -n 1 "$_m_tmp.cpu")" \
		    "$(tail -n 1 "$_m_tmp.rss")" >>"$_m_tmp.runs"
	done
	awk -v pick="${MEASURE_PICK:-cpu}" -v digits="${MEASURE_DIGITS:-2}" '
	NF == 4 { n++; ns[n] = $1; cpu[n] = $2 + $3; line[n] = $2 " " $3 " " $4 }
	END {
		if (n == 0)
			exit 1
		k = 1
		if (pick == "median") {
			# Order the runs by wall time, then take the middle one.
			for (i = 1; i <= n; i++)
				o[i] = i
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && ns[o[j]] < ns[o[j - 1]]; j--) {
					t = o[j]; o[j] = o[j - 1]; o[j - 1] = t
				}
			k = o[int((n + 1) / 2)]
		} else
			for (i = 2; i <= n; i++)
				if (pick == "wall" ? ns[i] < ns[k] : cpu[i] < cpu[k])
					k = i
		printf "%." digits "f %s\n", ns[k] / 1e9, line[k]
	}' "$_m_tmp.runs"
	rm -f "$_m_tmp" "$_m_tmp".*
}
