#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user truncates a file of theirs while root's bpfprof reads it
# (issue 27). libelf mapped every binary whole at its fstat size; only execve
# makes a file busy, so a file a user mapped with mmap(PROT_EXEC) (or
# dlopen'd, or a memfd) may be truncated at any time, and root's next touch
# of a page past the new end was a SIGBUS: the profiler and its whole
# recording gone.
#
#   truncate_mapped  the user maps fresh copies of a big library (libLLVM:
#                    ~120 MB, 5 MB of .eh_frame) with PROT_EXEC, spins, and
#                    over and over cuts each copy off where its .eh_frame
#                    starts (what a table build reads) for a millisecond and
#                    puts it back: `bpfprof -a -d 3` exits 0 and writes its
#                    profile (it died of SIGBUS, 135, 3 runs out of 3).
#
# Usage: hostile_files.sh MODE
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: hostile_files.sh truncate_mapped}
. "$(dirname "$0")/hostile_common.sh"

# The biggest shared library at hand: the longer its tables take, the wider the race.
big_library() {
	local f
	for f in /usr/lib/x86_64-linux-gnu/libLLVM*.so.* /usr/lib/x86_64-linux-gnu/libclang-cpp.so.* \
		/usr/lib/x86_64-linux-gnu/libpython3*.so.* /usr/lib/*/libc.so.6; do
		[ -f "$f" ] && ! [ -L "$f" ] && echo "$(stat -c %s "$f") $f"
	done | sort -n | tail -n 1 | cut -d' ' -f2-
}

# The user's racer: map copies, spin, cut them short and put them back.
write_racer() {
	cat >"$USER_DIR/racer.py" <<'PY'
import ctypes, mmap, os, select, sys, time

src, out_dir, seconds, cut = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4], 16)
image = open(src, "rb").read()
size = len(image)
# From .eh_frame on (what a table build reads), cut off for a moment at a
# time and put back, on every copy still mapped.
cut = min(max(cut, 4096), size - 4096)
tail = image[cut:]
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN = 0x20
ino = libc.inotify_init1(os.O_NONBLOCK)
live = []  # (fd, mapping) of the copies being cut and put back
n = 0
end = time.monotonic() + seconds
next_copy = 0.0


def spin(seconds):  # so that this process is sampled
    t = time.monotonic() + seconds
    while time.monotonic() < t:
        pass


while time.monotonic() < end:
    now = time.monotonic()
    if now >= next_copy:
        # A new file each time (kept, at size 0, so no inode comes back):
        # bpfprof reads each new one it sees mapped.
        path = os.path.join(out_dir, "copy%d.so" % n)
        n += 1
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o755)
        os.pwrite(fd, image, 0)
        libc.inotify_add_watch(ino, path.encode(), IN_OPEN)
        live.append((fd, mmap.mmap(fd, size, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)))
        if len(live) > 2:
            old_fd, old_map = live.pop(0)
            old_map.close()
            os.ftruncate(old_fd, 0)
            os.close(old_fd)
        next_copy = now + 1.0
    if select.select([ino], [], [], 0)[0]:
        os.read(ino, 4096)
        print("opened while cut and put back", flush=True)
    spin(0.02)
    for fd, _ in live:
        os.ftruncate(fd, cut)
    spin(0.001)
    for fd, _ in live:
        os.pwrite(fd, tail, cut)
PY
	chmod 0644 "$USER_DIR/racer.py"
}

case $MODE in
truncate_mapped)
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is not installed"
	make_hostile_user
	lib=$(big_library)
	[ -n "$lib" ] || fail "no library to copy"
	log "the user maps, cuts and puts back copies of $lib ($(stat -c %s "$lib") bytes)"
	write_racer
	# Until bpfprof is done: its symbolizer, after the 3 s, reads the copies too.
	eh_frame=$(readelf -SW "$lib" | awk '$2 == ".eh_frame" { print $5 }')
	"${as_user[@]}" /usr/bin/python3 "$USER_DIR/racer.py" "$lib" "$USER_DIR" 120 "${eh_frame:-0}" \
		>"$WORK/racer.out" 2>&1 &
	RACER=$!
	HOSTILE_CLEANUP+=("kill -KILL $RACER 2>/dev/null")
	sleep 0.5
	run_bpfprof 120 -a -d 3 -o "$WORK/out.json"
	kill -KILL "$RACER"
	wait "$RACER" 2>/dev/null
	log "racer: copies opened by someone $(grep -c '^opened' "$WORK/racer.out") times"
	grep -v '^opened' "$WORK/racer.out" | head -n 5 | indent
	[ "$STATUS" -eq 135 ] && fail "bpfprof died of SIGBUS (status 135): a truncated mapping"
	[ "$STATUS" -gt 128 ] && fail "bpfprof was killed by signal $((STATUS - 128))"
	expect_success
	[ -s "$WORK/out.json" ] || fail "no profile written"
	grep -q "^opened" "$WORK/racer.out" ||
		fail "bpfprof never opened a copy while the racer watched: nothing was tested"
	ok "root's bpfprof survived a user truncating what it read, and wrote its profile"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
