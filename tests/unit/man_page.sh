#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The man page (packaging/bpfprof.1, installed by the .deb) documents
# exactly the long options the commands take: every option that
# `bpfprof --help`, `bpfprof view --help` or `bpfprof report --help` lists
# has an entry (a .TP heading naming it), and every entry is an option one
# of them lists. Usage: man_page.sh BPFPROF MAN_PAGE
set -u
BPFPROF=$1
MAN=$2
status=0

help_options() {
	{
		"$BPFPROF" --help
		"$BPFPROF" view --help
		"$BPFPROF" report --help
	} | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | sed 's/.*--//' | sort -u
}

# The line after each .TP is its heading: the options named there.
man_options() {
	grep -A1 '^\.TP' "$MAN" | grep -v '^\.TP\|^--$' | sed 's/\\-/-/g' |
		grep -oE -- '--[a-z0-9-]+' | sed 's/^--//' | sort -u
}

help=$(help_options)
man=$(man_options)
[ -n "$help" ] || { echo "FAIL $BPFPROF --help lists no long options"; exit 1; }
[ -n "$man" ] || { echo "FAIL $MAN has no option entries"; exit 1; }
missing=$(comm -23 <(echo "$help") <(echo "$man"))
extra=$(comm -13 <(echo "$help") <(echo "$man"))
if [ -n "$missing" ]; then
	echo "FAIL in --help but not in $MAN: $(echo $missing)"
	status=1
fi
if [ -n "$extra" ]; then
	echo "FAIL in $MAN but in no --help: $(echo $extra)"
	status=1
fi
[ "$status" -eq 0 ] && echo "ok   the man page and --help list the same $(echo "$help" | wc -l) long options"
exit $status
