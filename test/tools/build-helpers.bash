# Build the test-only helper that runs seqio's helper functions
# (seqio-unit) into $1 from the library the tools under test were built
# with ($RECPIPE_BIN/../lib).  A sanitizer build needs the sanitizer at
# link time, so try that when the plain link fails.
build_helpers() {
	local out=$1 top=$BATS_TEST_DIRNAME/.. lib t
	lib=$RECPIPE_BIN/../lib/librecpipe.a
	[ -f "$lib" ] || return 1
	mkdir -p "$out"
	for t in seqio-unit; do
		[ -x "$out/$t" ] && continue
		cc -std=c11 -D_DEFAULT_SOURCE -I"$top/lib" -O1 -o "$out/$t" \
		    "$top/test/tools/$t.c" "$lib" -ljansson -lz -lsodium -lm 2>/dev/null ||
		cc -std=c11 -D_DEFAULT_SOURCE -I"$top/lib" -O1 \
		    -fsanitize=address,undefined -o "$out/$t" \
		    "$top/test/tools/$t.c" "$lib" -ljansson -lz -lsodium -lm || return 1
	done
}
