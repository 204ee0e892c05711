# The one timing helper of the scripts/bench-* scripts (sourced: . "$dir/timing.sh").
#
#   measure CMD [ARG...]
#
# runs CMD $RUNS times (default 3; its stdout to $MEASURE_OUT, default
# /dev/null) and prints "WALL USER SYS MAXRSS_KB" of the run with the
# least user+sys time (wall and CPU in seconds, to the hundredth).  A run
# that fails prints its stderr and exits the script with status 1.
measure() {
	_m_tmp=$(mktemp "${TMPDIR:-/tmp}/measure.XXXXXX")
	_m_best=""
	_m_i=0
	while [ "$_m_i" -lt "${RUNS:-3}" ]; do
		_m_i=$((_m_i + 1))
		if ! /usr/bin/time -f '%e %U %S %M' -o "$_m_tmp" "$@" \
		    >"${MEASURE_OUT:-/dev/null}" 2>"$_m_tmp.err"; then
			echo "measure: $1 failed:" >&2
			cat "$_m_tmp.err" >&2
			rm -f "$_m_tmp" "$_m_tmp.err"
			exit 1
		fi
		_m_run=$(tail -n 1 "$_m_tmp")
		_m_best=$(printf '%s\n%s\n' "$_m_best" "$_m_run" |
		    awk 'NF == 4 && (best == "" || $2 + $3 < cpu) { best = $0; cpu = $2 + $3 }
			END { print best }')
	done
	rm -f "$_m_tmp" "$_m_tmp.err"
	echo "$_m_best"
}
