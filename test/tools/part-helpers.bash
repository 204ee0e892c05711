# Helpers for the --part tests: inputs of every shape, and the law.

# raw_records N: N records of every size from 0 up (a few of 40000
# bytes), random payloads, framed, on stdout.
raw_records() {
	local i s
	for i in $(seq 0 $(($1 - 1))); do
		s=$(((i * i * 37 + i * 13) % 700))
		[ $((i % 41)) = 5 ] && s=40000
		printf '"%s"\n' "$(head -c "$s" /dev/urandom | base64 -w0)"
	done | tfr-cat --from-json --type raw -R
}

# one_record BYTES: one record of that many random bytes.
one_record() {
	head -c "$1" /dev/urandom | base64 -w0 | sed 's/.*/"&"/' |
	    tfr-cat --from-json --type raw -R
}

# part_law SUM CMD ARGS...: for N = 1..7 the outputs of CMD --part K/N
# ARGS, K = 0..N-1, concatenated (SUM=sum: added up, for counts) equal
# the output of CMD ARGS.  Says which N differs.  A count is the first
# field of the last line (the total, when a count per file comes first).
part_law() {
	local sum=$1 n k cmd=$2
	shift 2
	"$cmd" "$@" >"$T/law.one" || return 1
	if [ "$sum" = sum ]; then
		awk 'END { print $1 }' "$T/law.one" >"$T/law.sum"
		mv "$T/law.sum" "$T/law.one"
	fi
	for n in 1 2 3 4 5 6 7; do
		: >"$T/law.cat"
		for k in $(seq 0 $((n - 1))); do
			"$cmd" --part "$k/$n" "$@" >"$T/law.part" || {
				echo "part $k/$n failed"
				return 1
			}
			if [ "$sum" = sum ]; then
				awk 'END { print $1 }' "$T/law.part" >>"$T/law.cat"
			else
				cat "$T/law.part" >>"$T/law.cat"
			fi
		done
		if [ "$sum" = sum ]; then
			awk '{ s += $1 } END { print s }' "$T/law.cat" >"$T/law.sum"
			mv "$T/law.sum" "$T/law.cat"
		fi
		cmp "$T/law.one" "$T/law.cat" || {
			echo "N=$n: the parts differ from one run"
			return 1
		}
	done
}

# tok_records N SEED [DOCS]: N Example records with a 'targets' list of
# 1..300 ids (now and then 30000), about one in ten an empty Example
# (a document end) when DOCS is given.
tok_records() {
	awk -v n="$1" -v seed="$2" -v docs="${3:-}" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++) {
			if (docs != "" && rand() < 0.1) { print "{}"; continue }
			len = 1 + int(rand() * rand() * 300)
			if (rand() < 0.01) len = 30000
			s = "{\"targets\":["
			for (j = 0; j < len; j++) s = s (j ? "," : "") int(rand() * 30000)
			print s "]}"
		}
	}' | tfr-cat --from-json -R
}

# flip_byte FILE OFFSET: invert the bits of one byte, so that it changes
# whatever it held (writing a fixed byte over random data leaves it as it
# was one time in 256).
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - b)))" |
	    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
