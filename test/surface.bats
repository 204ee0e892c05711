#!/usr/bin/env bats
# One surface across the suite: what every tool does the same way.

load common

TOOLS="tfr-cat subword-build subword-encode pack-encdec mmap-index batch-sample"

@test "every tool: SYNOPSIS, --help and the man page name the same options" {
	command -v mandoc >/dev/null || skip "mandoc not installed"
	local t bad=0
	for t in $TOOLS; do
		options_agree "$t" || { echo "^ $t"; bad=1; }
	done
	[ "$bad" = 0 ]
}
