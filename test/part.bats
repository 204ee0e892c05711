# --part K/N over random inputs: for N = 1..7 the parts' outputs, put
# together in order, are one run's (the law stated in README "Scale").
load common
load tools/part-helpers

# text_file PATH SEED: text of a random shape: empty, short lines of every
# length (blank ones too), one line of 50000 bytes, with or without a
# final newline.
text_file() {
	awk -v seed="$2" 'BEGIN {
		srand(seed)
		shape = int(rand() * 5)
		if (shape == 0) exit
		n = shape == 1 ? 1 : int(rand() * 200)
		for (i = 0; i < n; i++) {
			len = int(rand() * rand() * 120)
			if (shape == 2 && i == int(n / 2)) len = 50000
			s = ""
			for (j = 0; j < len; j++) s = s (rand() < 0.15 ? " " : sprintf("%c", 97 + int(rand() * 26)))
			printf "%s", s
			if (i + 1 < n || rand() < 0.5) printf "\n"
		}
	}' >"$1"
}

# record_file PATH SEED: records of a random shape: empty, every size,
# one record of 100000 bytes, gzip.
record_file() {
	local shape=$(($2 % 5))
	case $shape in
	0) : >"$1" ;;
	1) raw_records $((1 + $2 % 60)) >"$1" ;;
	2) { raw_records 5; one_record 100000; raw_records 5; } >"$1" ;;
	3) raw_records $((1 + $2 % 40)) | gzip >"$1" ;;
	4) one_record $((1 + $2 % 3000)) >"$1" ;;
	esac
}

@test "part: subword-encode and subword-build --count-only over random text (5 rounds)" {
	local round i seed files
	printf 'the quick brown fox jumps over the lazy dog\n%.0s' $(seq 1 30) >"$T/c.txt"
	subword-build -q --min-count 2 -o "$T/v" "$T/c.txt"
	for round in 1 2 3 4 5; do
		files=()
		for i in 1 2 3 4; do
			seed=$((round * 100 + i * 7 + RANDOM % 1000))
			text_file "$T/t$i.txt" "$seed"
			files+=("$T/t$i.txt")
		done
		echo "# round $round: sizes $(stat -c %s "${files[@]}" | tr '\n' ' ')"
		part_law cat subword-encode -v "$T/v" --output-format id "${files[@]}"
		part_law cat subword-encode -v "$T/v" "${files[@]}"
		subword-build -q --count-only -b 1e9 -o "$T/one.counts" "${files[@]}"
		subword-build -q --min-count 1 --from-counts -o "$T/one.v" "$T/one.counts"
		for n in 2 5 7; do
			list=()
			for k in $(seq 0 $((n - 1))); do
				subword-build -q --count-only -b 1e9 --part "$k/$n" -o "$T/c$k" "${files[@]}"
				list+=("$T/c$k")
			done
			subword-build -q --min-count 1 --from-counts -o "$T/m.v" "${list[@]}"
			cmp "$T/one.v" "$T/m.v"
		done
	done
}

@test "part: tfr-cat -R and -c over random record files, gzip mixed in (5 rounds)" {
	local round i files
	for round in 1 2 3 4 5; do
		files=()
		for i in 1 2 3 4; do
			record_file "$T/r$i.tfr" $((round * 3 + i + RANDOM % 100))
			files+=("$T/r$i.tfr")
		done
		echo "# round $round: sizes $(stat -c %s "${files[@]}" | tr '\n' ' ')"
		part_law cat tfr-cat -R --type raw "${files[@]}"
		part_law sum tfr-cat -c "${files[@]}"
	done
}

@test "part: mmap-index build --raw-ids over random Example files, merged (3 rounds)" {
	local round n k list
	for round in 1 2 3; do
		tok_records $((RANDOM % 300)) "$RANDOM" docs >"$T/a.tfr"
		tok_records $((RANDOM % 50)) "$RANDOM" docs | gzip >"$T/b.tfr"
		tok_records $((RANDOM % 100)) "$RANDOM" >"$T/c.tfr"
		for fmt in fairseq megatron; do
			mmap-index build --raw-ids -q --format "$fmt" --vocab-size 30000 -o "$T/one" \
			    "$T/a.tfr" "$T/b.tfr" "$T/c.tfr"
			for n in 1 2 3 4 5 6 7; do
				list=()
				for k in $(seq 0 $((n - 1))); do
					mmap-index build --raw-ids -q --format "$fmt" --vocab-size 30000 \
					    --part "$k/$n" -o "$T/p$k" "$T/a.tfr" "$T/b.tfr" "$T/c.tfr"
					list+=("$T/p$k")
				done
				mmap-index merge -q -o "$T/m" "${list[@]}"
				cmp "$T/one.bin" "$T/m.bin"
				cmp "$T/one.idx" "$T/m.idx"
			done
		done
	done
}
