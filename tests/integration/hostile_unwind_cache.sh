#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user against the unwind table cache of a root bpfprof (issue 38).
#
#   dir    the user controls the path given as --state-dir (an entry of a
#          sticky directory everyone may write, as /tmp): a link there to a
#          directory of the user's, then a directory of the user's, mode
#          0777. Root's run is not stopped, says the cache is off, and
#          writes nothing through the link or into the user's directory.
#   class  the user makes a copy of root's nofp with the same build-id and
#          size but no CFI (its index emptied), and root profiles it: its
#          table (none) is kept in the user's class. Root's next run of the
#          real nofp does not take it: nofp's table is built, kept in the
#          system's class, and its stacks are whole.
#
# Usage: hostile_unwind_cache.sh dir|class
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_unwind_cache.sh dir|class" "$@"
: "${NOFP:?NOFP is not set}"
make_hostile_user
name=$(basename "$NOFP")
bid=$(readelf -nW "$NOFP" | grep -o -m 1 'Build ID: [0-9a-f]*' | cut -d ' ' -f 3)
[ -n "$bid" ] || fail "$NOFP has no GNU build-id: nothing to key its table by"
size=$(stat -L -c %s "$NOFP")
# An entry's name: the build-id, then the file's size, device and inode (table_cache.h).
key_of() {
	printf '%s-%x-%x-%x.ut' "$bid" "$size" "$(stat -L -c %d "$1")" "$(stat -L -c %i "$1")"
}
key=$(key_of "$NOFP")

case $MODE in
dir)
	# A sticky directory all may write, as /tmp is, outside the build tree (a
	# checkout may be 0700, mktemp's: the user could not reach it there).
	SHARED=$(mktemp -d /var/tmp/bpfprof-shared.XXXXXX) || fail "mktemp -d failed"
	HOSTILE_CLEANUP+=("rm -rf '$SHARED'")
	chmod 1777 "$SHARED"
	"${as_user[@]}" mkdir -m 0777 "$USER_DIR/target" || fail "the user cannot make its directory"
	"${as_user[@]}" chmod 0777 "$USER_DIR/target"
	"${as_user[@]}" ln -s "$USER_DIR/target" "$SHARED/state" ||
		fail "the user cannot plant its link"
	for plant in link dir; do
		if [ "$plant" = dir ]; then
			"${as_user[@]}" rm "$SHARED/state" &&
				"${as_user[@]}" mkdir "$SHARED/state" &&
				"${as_user[@]}" chmod 0777 "$SHARED/state" ||
				fail "the user cannot make its directory at the state path"
		fi
		run_bpfprof 60 -v --unwind cfi --state-dir "$SHARED/state" \
			-o "$WORK/$plant.json.gz" -- "$NOFP" 1 50
		expect_success
		grep -q "^bpfprof: warning: unwind table cache off: $SHARED/state/unwind-cache: " \
			"$WORK/bpfprof.err" || fail "no warning that the cache is off with the user's $plant"
		[ -z "$(ls -A "$USER_DIR/target")" ] ||
			fail "root wrote into the user's directory: $(ls -A "$USER_DIR/target")"
		[ "$plant" = link ] || [ -z "$(ls -A "$SHARED/state")" ] ||
			fail "root wrote into the user's state directory: $(ls -A "$SHARED/state")"
		ok "a $plant of the user's at the state directory: not used, the cache off, the run whole"
	done
	;;
class)
	# The user's copy: nofp's bytes, its .eh_frame_hdr's FDE count set to 0.
	# Copied for the user, as it could copy a program it can read (the build
	# tree may be 0700, mktemp's), then its own.
	cp "$NOFP" "$USER_DIR/$name" && chown "$USER_UID:$USER_GID" "$USER_DIR/$name" ||
		fail "cannot copy $NOFP for the user"
	hdr=$(readelf -SW "$NOFP" | awk '$2 == ".eh_frame_hdr" { print $5 }')
	[ -n "$hdr" ] || fail "$NOFP has no .eh_frame_hdr"
	printf '\0\0\0\0' | "${as_user[@]}" dd of="$USER_DIR/$name" bs=1 seek=$((16#$hdr + 8)) \
		conv=notrunc status=none || fail "the user cannot change its copy"
	[ "$(stat -c %s "$USER_DIR/$name")" = "$size" ] || fail "the copy's size differs"
	run_bpfprof 60 -vv --unwind cfi --state-dir "$WORK/state" -o "$WORK/user.json.gz" \
		-- "${as_user[@]}" "$USER_DIR/$name" 1 50
	expect_success
	user_key=$(key_of "$USER_DIR/$name")
	[ -f "$WORK/state/unwind-cache/v1/u$USER_UID/$user_key" ] ||
		fail "the user's copy's table was not kept in its class: $(find "$WORK/state" | head -n 20)"
	[ -f "$WORK/state/unwind-cache/v1/system/$user_key" ] &&
		fail "the user's copy's table went to the system's class"
	ok "the user's copy (build-id $bid, no CFI) was kept in class u$USER_UID"

	run_bpfprof 60 -vv --unwind cfi --state-dir "$WORK/state" -o "$WORK/root.json.gz" \
		-- "$NOFP" 2 300
	expect_success
	if grep -q "^bpfprof: debug: .*/$name: unwind table from the cache" "$WORK/bpfprof.err"; then
		fail "root's $name took a table from the cache: the user's"
	fi
	grep -q "^bpfprof: debug: $NOFP: unwind table built" "$WORK/bpfprof.err" ||
		fail "root's $name's table was not built"
	[ -f "$WORK/state/unwind-cache/v1/system/$key" ] ||
		fail "root's $name's table was not kept in the system's class"
	read -r _ _ _ pid _ depth _ reader < <(grep -m 1 "^nofp: truth pid " "$WORK/bpfprof.out")
	[[ $pid =~ ^[0-9]+$ && $reader =~ ^[0-9]+$ ]] && [ "$depth" = 300 ] ||
		fail "nofp did not print 'nofp: truth pid P depth 300 reader T': $(head -n 3 "$WORK/bpfprof.out")"
	node_check unwind_checks.mjs --profile "$WORK/root.json.gz" --gzip --pid "$pid" \
		--depth 300 --reader "$reader" || fail "root's $name's stacks are not whole"
	ok "root's $name was built, kept in the system's class, its stacks whole"
	;;
*) fail "unknown mode $MODE" ;;
esac
