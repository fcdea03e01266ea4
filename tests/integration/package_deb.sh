#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The Debian package and its service, end to end, as an administrator meets
# them: build the .deb from this source tree (cmake --build --target
# package), check what it holds, dpkg -i it, run the installed unit under a
# real systemd, dpkg --purge it and check that nothing is left.
#
# The unit runs in the sandbox of package_sandbox.sh (systemd as PID 1 of its
# own namespaces, every host filesystem read-only inside), booted into a
# target of its own with the unit's boot dependencies dropped, its options
# those of the installed /etc/default/bpfprof with a 6 s interval at 199 Hz,
# /var/lib/bpfprof a directory of this test, and /proc the host's (read-only:
# BPF reports host pids, which the sandbox's own /proc does not know). There
# it must: reach active, attach its BPF programs, write a snapshot per
# interval into a 0700 directory, end a snapshot early on `systemctl reload`,
# write the last one on `systemctl stop` and end inactive (not failed), and
# be stopped by the package's prerm. Its profiles are judged by check.mjs,
# and what the hardening could take away must still be there: kernel frames
# named (CAP_SYSLOG, /proc/kallsyms); the burner's frames, run by another
# user from a 0700 directory and deleted after its start (only
# /proc/PID/map_files reaches it); node's JIT frames, from a perf map that
# exists only in its private /tmp (/proc/PID/root, CAP_SYS_PTRACE).
#
# The machine is left as it was, even on failure: the package is purged and
# the sandbox killed by the EXIT trap. The test refuses to run where a
# bpfprof package or its files already exist, except its own package left by
# a run killed at its timeout; an empty /var/lib/bpfprof is put back after the
# purge.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/package_sandbox.sh"
require_root
make_workdir

SRC=$(cd "$(dirname "$0")/../.." && pwd)
INTERVAL_S=6
SNAPSHOT_RE='^bpfprof-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.json\.gz$'
INSTALLED_FILES=(/usr/bin/bpfprof /usr/share/man/man1/bpfprof.1.gz /lib/systemd/system/bpfprof.service
	/etc/default/bpfprof /usr/share/bpfprof/listen.conf)
WANTS_LINK=/etc/systemd/system/multi-user.target.wants/bpfprof.service
INSTALLED=0
HIDDEN=
JIT_PID=
PRE_STATE_DIR= # "mode uid gid" of an empty /var/lib/bpfprof found at the start

# After the purge, an empty /var/lib/bpfprof that was there before returns.
restore_state_dir() {
	[ -n "$PRE_STATE_DIR" ] && [ ! -e /var/lib/bpfprof ] || return 0
	# shellcheck disable=SC2086 # three words
	set -- $PRE_STATE_DIR
	install -d -m "$1" -o "$2" -g "$3" /var/lib/bpfprof ||
		log "WARNING: could not put back the empty /var/lib/bpfprof (mode $1, owner $2:$3)"
}

stop_jit() {
	if [ -n "$JIT_PID" ]; then
		kill "$JIT_PID" 2>/dev/null
		wait "$JIT_PID" 2>/dev/null
		JIT_PID=
	fi
}

cleanup() {
	sandbox_stop
	stop_burner
	stop_jit
	[ -z "$HIDDEN" ] || rm -rf "$HIDDEN"
	if [ "$INSTALLED" = 1 ]; then
		if dpkg --purge bpfprof >"$WORK/cleanup-purge.log" 2>&1; then
			rm -f "$LEFTOVER"
		else
			log "WARNING: dpkg --purge bpfprof failed: $(tail -n 3 "$WORK/cleanup-purge.log")"
		fi
		INSTALLED=0
	fi
	restore_state_dir
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for tool in dpkg dpkg-deb dpkg-query cmake readelf ldd python3 systemd-analyze; do
	command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh --test installs it)"
done
NODE_BIN=$(command -v "$NODE") || fail "node ($NODE) is not installed; it runs the JIT workload and the checks"
JIT_HOT=${JIT_HOT:-$(cd "$(dirname "$0")/../workloads" && pwd)/jit_hot.js}
[ -r "$JIT_HOT" ] || fail "the JIT workload $JIT_HOT is missing"

# --- Nothing of bpfprof may be installed already ------------------------------
# A run of this test killed at its timeout (SIGKILL: no EXIT trap) leaves its
# package installed, with this marker: the installed binary's checksum. Only
# that package, unchanged, is purged here; anyone else's is refused below.
LEFTOVER=/var/tmp/bpfprof-package-test.installed
if [ -f "$LEFTOVER" ] && [ -f /usr/bin/bpfprof ] &&
	[ "$(cat "$LEFTOVER")" = "$(sha256sum </usr/bin/bpfprof)" ]; then
	log "a killed run of this test left its package installed: dpkg --purge bpfprof"
	dpkg --purge bpfprof >"$WORK/leftover-purge.log" 2>&1 ||
		fail "dpkg --purge of the package a killed run left failed: $(tail -n 3 "$WORK/leftover-purge.log")"
fi
rm -f "$LEFTOVER"
status=$(dpkg-query -W -f='${Status}' bpfprof 2>/dev/null)
case $status in
"" | *" not-installed") ;;
*) fail "a bpfprof package is already installed ($status); this test installs and purges its own, so it will not run here: remove it with dpkg --purge bpfprof first" ;;
esac
for f in "${INSTALLED_FILES[@]}" "$WANTS_LINK"; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f exists without a bpfprof package; the test would replace or delete it: move it away first"
done
if [ -e /var/lib/bpfprof ] || [ -L /var/lib/bpfprof ]; then
	[ -d /var/lib/bpfprof ] && [ ! -L /var/lib/bpfprof ] && [ -z "$(ls -A /var/lib/bpfprof)" ] ||
		fail "/var/lib/bpfprof exists without a bpfprof package and is not an empty directory; the purge would delete it: move it away first"
	PRE_STATE_DIR=$(stat -c '%a %u %g' /var/lib/bpfprof)
	log "/var/lib/bpfprof exists, empty: it is put back after the purge"
fi

# --- Build ---------------------------------------------------------------------
BUILD=$WORK/build
# Without the tests: a package build compiles bpfprof alone, as a packager's does.
log "\$ cmake -B $BUILD -S $SRC -DBPFPROF_TESTS=OFF && cmake --build $BUILD --target package"
cmake -B "$BUILD" -S "$SRC" -DBPFPROF_TESTS=OFF >"$WORK/configure.log" 2>&1 ||
	{ tail -n 20 "$WORK/configure.log" | indent; fail "cmake configure failed"; }
cmake --build "$BUILD" -j "$(nproc)" --target package >"$WORK/build.log" 2>&1 ||
	{ tail -n 30 "$WORK/build.log" | indent; fail "building the package failed"; }
ARCH=$(dpkg --print-architecture)
mapfile -t debs < <(find "$BUILD" -maxdepth 1 -name '*.deb')
[ "${#debs[@]}" -eq 1 ] || fail "expected one .deb in $BUILD, found ${#debs[@]}: ${debs[*]}"
DEB=${debs[0]}
VERSION=$(dpkg-deb -f "$DEB" Version)
[ "$(basename "$DEB")" = "bpfprof_${VERSION}_${ARCH}.deb" ] ||
	fail "package file $(basename "$DEB"), expected bpfprof_${VERSION}_${ARCH}.deb"
ok "built $(basename "$DEB") ($(stat -c %s "$DEB") bytes)"

# --- What the package holds ----------------------------------------------------
[ "$(dpkg-deb -f "$DEB" Package)" = bpfprof ] || fail "Package: is not bpfprof"
[ "$(dpkg-deb -f "$DEB" Architecture)" = "$ARCH" ] || fail "Architecture: is not $ARCH"

# Every file, its mode and owner, and nothing else (directories aside).
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $1, $2, $6 }' | sort >"$WORK/files.txt"
sort >"$WORK/files.expected" <<EOF
-rw-r--r-- root/root ./etc/default/bpfprof
-rw-r--r-- root/root ./lib/systemd/system/bpfprof.service
-rw-r--r-- root/root ./usr/share/man/man1/bpfprof.1.gz
-rw-r--r-- root/root ./usr/share/bpfprof/listen.conf
-rwxr-xr-x root/root ./usr/bin/bpfprof
EOF
diff -u "$WORK/files.expected" "$WORK/files.txt" | indent
cmp -s "$WORK/files.expected" "$WORK/files.txt" || fail "the package's files or their modes are not as expected (diff above)"
ok "files: /usr/bin/bpfprof 0755, man page, unit and /etc/default/bpfprof 0644, all root's"

CTRL=$WORK/control
dpkg-deb -e "$DEB" "$CTRL" || fail "dpkg-deb -e failed"
[ "$(cat "$CTRL/conffiles")" = /etc/default/bpfprof ] ||
	fail "conffiles is '$(cat "$CTRL/conffiles" 2>/dev/null)', expected /etc/default/bpfprof"
for s in postinst prerm postrm; do
	[ "$(stat -c %a "$CTRL/$s" 2>/dev/null)" = 755 ] || fail "maintainer script $s missing or not 0755"
	sh -n "$CTRL/$s" || fail "maintainer script $s is not valid sh"
done
# Installing must never start the profiler: no enable or start in postinst.
if grep -wE 'enable|start' "$CTRL/postinst" | grep -v '^[[:space:]]*#' | grep -q .; then
	fail "postinst enables or starts the service: $(grep -wE 'enable|start' "$CTRL/postinst")"
fi
ok "conffiles: /etc/default/bpfprof; postinst, prerm, postrm 0755"

# Depends: the packages of every library the binary needs, and the ones
# bpfprof is known to link.
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
log "Depends: $DEPENDS"
has_dep() {
	[[ ", $DEPENDS," =~ ,\ $1[\ ,] ]]
}
for p in libc6 libbpf1 libelf1 libdw1 zlib1g; do
	has_dep "$p" || fail "Depends lacks $p"
done
dpkg-deb -x "$DEB" "$WORK/root" || fail "dpkg-deb -x failed"
BIN=$WORK/root/usr/bin/bpfprof
while read -r lib; do
	path=$(ldd "$BIN" | awk -v l="$lib" '$1 == l { print $3 }')
	[ -n "$path" ] || fail "the packaged bpfprof needs $lib, which is not installed"
	owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null)
	owner=${owner%%:*}
	[ -n "$owner" ] || fail "no package owns $path ($lib)"
	has_dep "$owner" || fail "bpfprof needs $lib from $owner, which Depends lacks"
done < <(readelf -d "$BIN" | awk '$2 == "(NEEDED)" { gsub(/[][]/, "", $5); print $5 }')
ok "Depends covers every library the binary needs"

# The BPF object is inside the binary (the skeleton embeds it): an ELF image
# for machine EM_BPF (247), and no .o file beside it.
python3 - "$BIN" <<'EOF' || fail "no embedded BPF object in /usr/bin/bpfprof"
import struct, sys
data = open(sys.argv[1], 'rb').read()
at = data.find(b'\x7fELF', 1)
while at >= 0:
    if data[at + 4] == 2 and data[at + 5] == 1 and struct.unpack_from('<H', data, at + 18)[0] == 247:
        print(f'     | embedded BPF ELF object at offset {at}')
        sys.exit(0)
    at = data.find(b'\x7fELF', at + 1)
sys.exit(1)
EOF
readelf -S "$BIN" | grep -q '\.debug_info' && fail "the packaged binary still carries debug info"
readelf -s "$BIN" | grep -qw main || fail "the packaged binary lost its symbol table (its own frames would be unnamed)"
ok "the BPF object is embedded; debug info stripped, symbols kept"

# --- Install -------------------------------------------------------------------
log "\$ dpkg -i $(basename "$DEB")"
INSTALLED=1
dpkg -i "$DEB" >"$WORK/install.log" 2>&1 || { indent <"$WORK/install.log"; fail "dpkg -i failed"; }
sha256sum </usr/bin/bpfprof >"$LEFTOVER"
for f in "${INSTALLED_FILES[@]}"; do
	[ -f "$f" ] || fail "$f is missing after dpkg -i"
done
[ -n "$PRE_STATE_DIR" ] || [ ! -e /var/lib/bpfprof ] ||
	fail "dpkg -i created /var/lib/bpfprof (the unit's StateDirectory= does)"
got=$(/usr/bin/bpfprof --version) || fail "/usr/bin/bpfprof --version failed"
[ "$got" = "bpfprof $VERSION" ] || fail "/usr/bin/bpfprof --version says '$got', expected 'bpfprof $VERSION'"
ok "installed; /usr/bin/bpfprof --version: $got"

# The man page: found by man, renders cleanly, and names every option the
# program's help lists, for record and for continuous.
MAN_SRC=$WORK/bpfprof.1
zcat /usr/share/man/man1/bpfprof.1.gz >"$MAN_SRC" || fail "the man page is not gzip"
if command -v man >/dev/null; then
	[ "$(man -w bpfprof)" = /usr/share/man/man1/bpfprof.1.gz ] || fail "man -w bpfprof: $(man -w bpfprof 2>&1)"
fi
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww -z "$MAN_SRC" 2>&1)
	[ -z "$warn" ] || fail "the man page has groff warnings: $warn"
fi
for section in NAME SYNOPSIS OPTIONS SIGNALS FILES EXAMPLES "OUTPUT FORMAT"; do
	grep -q "^\.SH \"\\?$section\"\\?\$" "$MAN_SRC" || fail "the man page has no $section section"
done
grep -q '^\.B continuous' "$MAN_SRC" || fail "the man page's SYNOPSIS lacks continuous"
help=$( (/usr/bin/bpfprof --help && /usr/bin/bpfprof continuous --help) 2>&1) || fail "bpfprof --help failed"
nopts=0
while read -r opt; do
	grep -qF -- "${opt//-/\\-}" "$MAN_SRC" || fail "the man page does not document $opt (from bpfprof --help)"
	nopts=$((nopts + 1))
done < <(grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' <<<"$help" | grep -oE -- '--?[a-zA-Z][a-z-]*' | sort -u)
[ "$nopts" -ge 20 ] || fail "only $nopts options found in bpfprof --help; the help format changed?"
ok "man page: found by man, every section, all $nopts options of --help"

# The unit as systemd reads it, and its exposure score.
if ! systemd-analyze verify /lib/systemd/system/bpfprof.service >"$WORK/verify.log" 2>&1 ||
	[ -s "$WORK/verify.log" ]; then
	indent <"$WORK/verify.log"
	fail "systemd-analyze verify found problems in bpfprof.service"
fi
systemd-analyze security --offline=true /lib/systemd/system/bpfprof.service >"$WORK/security.log" 2>&1
score=$(sed -n 's/.*Overall exposure level for bpfprof.service: \([0-9.]*\).*/\1/p' "$WORK/security.log")
[ -n "$score" ] || { indent <"$WORK/security.log"; fail "no score from systemd-analyze security"; }
awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' ||
	fail "systemd-analyze security rates the unit $score, above 3.0: hardening was lost"
ok "systemd-analyze verify: clean; security: exposure $score"

# --- The unit under a real systemd --------------------------------------------
SBX=$WORK/sandbox
mkdir -p "$SBX/units/bpfprof.service.d" "$SBX/state" "$SBX/log" || fail "cannot create $SBX"
# Made 0755 here, so that 0700 later is the unit's StateDirectoryMode= at work.
chmod 0755 "$SBX/state"
printf '[Unit]\nDescription=bpfprof package test sandbox\n' >"$SBX/units/bpfprof-sandbox.target"
cat >"$SBX/units/bpfprof.service.d/sandbox.conf" <<'EOF'
[Unit]
# The sandbox boots nothing else: no sysinit.target, no basic.target.
DefaultDependencies=no

[Service]
# The installed options with a short interval (bpfprof.env), and the output
# where the test reads it.
EnvironmentFile=
EnvironmentFile=/run/bpfprof-test/bpfprof.env
StandardOutput=append:/run/bpfprof-test/bpfprof.log
StandardError=append:/run/bpfprof-test/bpfprof.log
# The host's processes, as a service on the host sees them.
BindReadOnlyPaths=/run/host-proc:/proc
EOF
# A short interval, and 199 Hz so that one interval has enough samples of
# each workload thread to judge (sharing 2 CPUs with 4 busy threads).
sed -E "s/--interval [^ \"]+/--interval ${INTERVAL_S}s -F 199/" /etc/default/bpfprof >"$SBX/log/bpfprof.env"
grep -qE "^BPFPROF_OPTS=\"-a .*--interval ${INTERVAL_S}s" "$SBX/log/bpfprof.env" ||
	fail "/etc/default/bpfprof has no BPFPROF_OPTS=\"-a ... --interval TIME\" to shorten: $(grep BPFPROF_OPTS= /etc/default/bpfprof)"

# The harness's own proof, with a unit that tries to write the host.
PROBE=bpfprof-sandbox-probe-$$
cat >"$SBX/log/probe.sh" <<EOF
for d in /etc /tmp /var/tmp; do
	touch "\$d/$PROBE" 2>/dev/null && echo "\$d written" || echo "\$d refused"
done
v=\$(sysctl -n kernel.pid_max)
sysctl -q -w kernel.pid_max="\$v" 2>/dev/null && echo "sysctl written" || echo "sysctl refused"
EOF
cat >"$SBX/units/bpfprof-sandbox-probe.service" <<'EOF'
[Unit]
DefaultDependencies=no
[Service]
Type=oneshot
ExecStart=/bin/sh /run/bpfprof-test/probe.sh
StandardOutput=file:/run/bpfprof-test/probe.out
EOF

bpfprof_log() {
	log "   bpfprof's output (last 20 lines):"
	tail -n 20 "$SBX/log/bpfprof.log" 2>/dev/null | indent
	sandbox_ctl status --no-pager bpfprof.service 2>&1 | tail -n 12 | indent
	sandbox_dump_log
}

snapshots() {
	find "$SBX/state" -maxdepth 1 -type f -printf '%f\n' | grep -E "$SNAPSHOT_RE" | sort
}

# wait_snapshots N SECONDS: until N snapshots exist.
wait_snapshots() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(snapshots | wc -l)" -ge "$1" ] && return 0
		sleep 0.1
	done
	bpfprof_log
	fail "$(snapshots | wc -l) snapshot(s) in /var/lib/bpfprof after $2 s, expected $1"
}

# wait_attached: the service's main process holds BPF links.
wait_attached() {
	local i links
	for ((i = 0; i < 100; i++)); do
		links=$(sandbox_exec sh -c 'pid=$(systemctl show -p MainPID --value bpfprof.service)
			[ "${pid:-0}" -gt 0 ] && grep -l "^link_type:" /proc/$pid/fdinfo/* 2>/dev/null | wc -l')
		[ "${links:-0}" -gt 0 ] && break
		sleep 0.1
	done
	[ "${links:-0}" -gt 0 ] || { bpfprof_log; fail "bpfprof.service holds no BPF link after 10 s"; }
	ok "bpfprof.service attached: its main process holds $links BPF links"
}

expect_state() {
	local got
	got=$(sandbox_ctl is-active bpfprof.service)
	[ "$got" = "$1" ] || { bpfprof_log; fail "bpfprof.service is $got, expected $1"; }
}

sandbox_start "$SBX"
sandbox_ctl start bpfprof-sandbox-probe.service || fail "the probe unit failed"
# /tmp and /var/tmp are the sandbox's own tmpfs: writing them is fine.
for want in "/etc refused" "/tmp written" "/var/tmp written" "sysctl refused"; do
	grep -qx "$want" "$SBX/log/probe.out" || fail "probe: expected '$want', got: $(tr '\n' ';' <"$SBX/log/probe.out")"
done
for d in /etc /tmp /var/tmp; do
	[ ! -e "$d/$PROBE" ] || { rm -f "$d/$PROBE"; fail "the probe unit wrote the host's $d"; }
done
sandbox_exec test -e "/tmp/$PROBE" || fail "the probe's /tmp file is not in the sandbox's /tmp"
ok "probe unit: host /etc and sysctls refused, its /tmp and /var/tmp private"

# The maintainer scripts dpkg installed, where the sandbox sees them (its
# /var/lib is its own).
for s in postinst prerm; do
	cmp -s "$CTRL/$s" "/var/lib/dpkg/info/bpfprof.$s" || fail "dpkg's bpfprof.$s differs from the package's"
	install -m 0755 "$CTRL/$s" "$SBX/log/$s" || fail "cannot copy $s"
done

# postinst with systemd running: daemon-reload, and nothing started.
sandbox_exec /run/bpfprof-test/postinst configure >"$WORK/postinst.log" 2>&1 ||
	{ indent <"$WORK/postinst.log"; fail "postinst configure failed under systemd"; }
expect_state inactive
[ "$(sandbox_ctl is-enabled bpfprof.service)" = disabled ] || fail "bpfprof.service is enabled after postinst"
ok "postinst under systemd: the unit stays inactive and disabled"

# Workloads the service must symbolize, each reachable only one way. Their
# files are in a directory of our own that user nobody can reach, outside
# /tmp, which the JIT replaces with its own.
HIDDEN=$(mktemp -d /var/tmp/bpfprof-pkg.XXXXXX) || fail "mktemp -d failed"
chmod 0755 "$HIDDEN"
install -d -m 0700 -o 65534 -g 65534 "$HIDDEN/private" &&
	install -m 0755 -o 65534 -g 65534 "$BURNER" "$HIDDEN/private/burner" &&
	install -m 0644 "$JIT_HOT" "$HIDDEN/jit_hot.js" || fail "cannot set up the workloads in $HIDDEN"
as_nobody=(setpriv --reuid 65534 --regid 65534 --clear-groups)
"${as_nobody[@]}" "$HIDDEN/private/burner" 90 >"$WORK/burner.out" 2>"$WORK/burner.err" &
BURNER_PID=$!
for ((i = 0; i < 100; i++)); do
	[ "$(wc -l <"$WORK/burner.out")" -ge 4 ] && break
	kill -0 "$BURNER_PID" 2>/dev/null || fail "burner exited early: $(cat "$WORK/burner.err")"
	sleep 0.05
done
rm "$HIDDEN/private/burner"
BURNER_CHECK_PID=$BURNER_PID # stop_burner clears BURNER_PID
[[ $(readlink "/proc/$BURNER_PID/exe") == *" (deleted)" ]] || fail "the burner's executable is not deleted"
log "burner running as nobody, pid $BURNER_PID, its executable deleted from a 0700 directory"
# The JIT in a private /tmp: its perf map is only in its mount namespace.
unshare --mount --propagation private -- bash -c \
	'mount -t tmpfs -o mode=1777,size=16m jit-tmp /tmp && exec "$@"' jit \
	"${as_nobody[@]}" "$NODE_BIN" --perf-basic-prof "$HIDDEN/jit_hot.js" 60 >"$WORK/jit.out" 2>"$WORK/jit.err" &
JIT_PID=$!
for ((i = 0; i < 100; i++)); do
	[ -s "/proc/$JIT_PID/root/tmp/perf-$JIT_PID.map" ] && break
	kill -0 "$JIT_PID" 2>/dev/null || fail "the JIT exited early: $(cat "$WORK/jit.err")"
	sleep 0.05
done
[ "$(cat "/proc/$JIT_PID/comm")" = node ] || fail "pid $JIT_PID is not node but $(cat "/proc/$JIT_PID/comm")"
[ -s "/proc/$JIT_PID/root/tmp/perf-$JIT_PID.map" ] || fail "node wrote no perf map in its /tmp"
[ ! -e "/tmp/perf-$JIT_PID.map" ] || fail "the host's /tmp has perf-$JIT_PID.map; the JIT was to be private"
JIT_CHECK_PID=$JIT_PID
log "JIT running as nobody, pid $JIT_PID, its perf map only in its own /tmp"

log "\$ systemctl start bpfprof (interval ${INTERVAL_S}s)"
sandbox_ctl start bpfprof.service || { bpfprof_log; fail "systemctl start bpfprof failed"; }
expect_state active
wait_attached
wait_snapshots 1 $((INTERVAL_S + 15))
[ "$(stat -c %a "$SBX/state")" = 700 ] || fail "/var/lib/bpfprof has mode $(stat -c %a "$SBX/state"), expected 700"
first=$(snapshots | head -n 1)
# The directory keeps the profiles private; the files are root's and no one
# else may write them.
mode=$(stat -c %a "$SBX/state/$first")
[ "$(stat -c %U "$SBX/state/$first")" = root ] && [ $((8#$mode & 8#022)) -eq 0 ] ||
	fail "$first has mode $mode and owner $(stat -c %U "$SBX/state/$first"), expected root's, not group or other writable"
ok "first snapshot $first; /var/lib/bpfprof 0700, the snapshot $mode"

# start_ms NAME: a snapshot's window start, from its name (UTC, ms).
start_ms() {
	local n=${1#bpfprof-}
	date -u -d "${n:0:4}-${n:4:2}-${n:6:2} ${n:9:2}:${n:11:2}:${n:13:2}.${n:16:3}" +%s%3N
}

# When the reload is sent (wall clock, as the names). The window it falls in
# must end off the timer's grid: SIGHUP cut it, not the interval. However
# long a snapshot took to write on this machine, only the order of these
# times is asserted; the newest snapshot's start tells when the reload's
# cut is written (a window starting at or after the send).
reload_ms=$(date +%s%3N)
sandbox_ctl reload bpfprof.service || fail "systemctl reload bpfprof failed"
for ((i = 0; i < 600; i++)); do
	newest=$(snapshots | tail -n 1)
	[ -n "$newest" ] && [ "$(start_ms "$newest")" -ge $((reload_ms - 1)) ] && break
	sleep 0.1
done
[ "$(start_ms "$(snapshots | tail -n 1)")" -ge $((reload_ms - 1)) ] ||
	{ bpfprof_log; fail "no window ended at the reload within 60 s: $(snapshots | tr '\n' ' ')"; }
expect_state active
ok "systemctl reload: a snapshot cut, the service still active"

before_stop=$(snapshots | wc -l)
sandbox_ctl stop bpfprof.service || fail "systemctl stop bpfprof failed"
expect_state inactive
result=$(sandbox_ctl show -p Result --value bpfprof.service)
status=$(sandbox_ctl show -p ExecMainStatus --value bpfprof.service)
[ "$result" = success ] && [ "$status" = 0 ] || fail "after stop: Result=$result ExecMainStatus=$status, expected success and 0"
mapfile -t snaps < <(snapshots)
# At least the window in progress (a timer's cut just before the stop may still have been on its way to disk).
[ "${#snaps[@]}" -gt "$before_stop" ] ||
	fail "${#snaps[@]} snapshots after stop, as before it: the last window was not written: ${snaps[*]}"
ok "systemctl stop: a final snapshot, inactive with Result=success and exit status 0"

# The windows, from the names (UTC start of each): those before the reload
# are one interval each; the one the reload fell in ends after the send and
# off the grid (its length is no whole number of intervals from the first start).
starts=()
for n in "${snaps[@]}"; do starts+=("$(start_ms "$n")"); done
log "window starts: ${starts[*]}; reload sent at $reload_ms"
cut=
for ((i = 1; i < ${#starts[@]}; i++)); do
	if [ "${starts[i]}" -ge $((reload_ms - 1)) ]; then
		cut=$i
		break
	fi
	[ $((starts[i] - starts[i - 1])) -ge $((INTERVAL_S * 1000 - 500)) ] &&
		[ $((starts[i] - starts[i - 1])) -le $((INTERVAL_S * 1000 + 500)) ] ||
		fail "window $i before the reload lasted $((starts[i] - starts[i - 1])) ms, expected the ${INTERVAL_S}s interval"
done
[ -n "$cut" ] || fail "no window ends after the reload was sent"
# A name's time is truncated to the millisecond: the cut may read 1 ms before the send.
len=$((starts[cut] - starts[cut - 1]))
[ "$len" -lt $((INTERVAL_S * 1000)) ] && [ $(((starts[cut] - starts[0]) % (INTERVAL_S * 1000))) -ne 0 ] ||
	fail "the window the reload fell in lasted $len ms and ended on the timer's grid: SIGHUP did not end it"
ok "windows before the reload last one interval; the reload ended its window after $len ms, $((starts[cut] - reload_ms)) ms after it was sent"

# prerm remove with the service running: stopped, its last snapshot written.
sandbox_ctl start bpfprof.service || { bpfprof_log; fail "systemctl start bpfprof (again) failed"; }
wait_attached
sandbox_exec /run/bpfprof-test/prerm remove >"$WORK/prerm.log" 2>&1 ||
	{ indent <"$WORK/prerm.log"; fail "prerm remove failed under systemd"; }
expect_state inactive
[ "$(snapshots | wc -l)" -gt "${#snaps[@]}" ] ||
	fail "prerm's stop left $(snapshots | wc -l) snapshots, as many as before the service started again"
ok "prerm remove: the running service stopped and wrote its last snapshot"

# The opt-in drop-in for --listen, as the admin installs it: the hardened
# unit serves a scrape on loopback, and the drop-in leaves with no trace.
sandbox_exec install -m 644 /usr/share/bpfprof/listen.conf /run/systemd/system/bpfprof.service.d/listen.conf ||
	fail "cannot install the listen drop-in in the sandbox"
sandbox_exec ip link set lo up || fail "cannot bring up the sandbox's loopback"
sandbox_ctl daemon-reload || fail "systemctl daemon-reload failed"
sandbox_ctl start bpfprof.service || { bpfprof_log; fail "systemctl start bpfprof with the listen drop-in failed"; }
wait_attached
code=
for ((i = 0; i < 50; i++)); do
	code=$(sandbox_exec curl -sS -o /run/bpfprof-test/scrape.pb.gz -w '%{http_code}' \
		"http://127.0.0.1:6060/debug/pprof/profile?seconds=2" 2>/dev/null) && break
	sleep 0.2
done
if [ "$code" != 200 ]; then
	bpfprof_log
	sandbox_ctl cat bpfprof.service 2>&1 | tail -n 40 | indent
	fail "a scrape of the service with the drop-in: answered '$code'"
fi
GOCACHE=$WORK/gocache HOME=${HOME:-$WORK} go tool pprof -raw "$SBX/log/scrape.pb.gz" >"$WORK/scrape.raw" 2>"$WORK/scrape.err" ||
	fail "go tool pprof cannot read the service's scrape: $(cat "$WORK/scrape.err")"
grep -q "process_name:\[bpfprof-burner\]" "$WORK/scrape.raw" ||
	fail "the service's scrape has no burner samples: $(head -n 20 "$WORK/scrape.raw")"
ok "the listen drop-in: the hardened service answers a 2 s scrape on 127.0.0.1:6060 with the burner in it"
sandbox_ctl stop bpfprof.service || fail "systemctl stop bpfprof failed"
sandbox_exec rm /run/systemd/system/bpfprof.service.d/listen.conf || fail "cannot remove the listen drop-in"
sandbox_ctl daemon-reload || fail "systemctl daemon-reload failed"

sandbox_canary_ok || fail "the host's /tmp lost the sandbox's canary file"
sandbox_stop
stop_burner
stop_jit
ok "sandbox gone; the host's /tmp canary intact"

# --- The snapshots --------------------------------------------------------------
for s in $(snapshots); do
	run_check valid --profile "$SBX/state/$s" --gzip --min-samples 1
done
"$NODE" --input-type=module -e "
import { Profile, CATEGORY_KERNEL } from '$CHECK_DIR/profile.mjs';
const p = Profile.fromFile(process.argv[1]);
const ft = p.shared.frameTable;
let kernel = 0;
const unnamed = [];
for (let f = 0; f < ft.length; f++) {
	if (ft.category[f] !== CATEGORY_KERNEL) continue;
	kernel++;
	const name = p.frameFuncName(f);
	if (/^0x[0-9a-f]+$|\+0x[0-9a-f]+$/i.test(name)) unnamed.push(name);
}
console.log('     | kernel frames: ' + kernel + ', unnamed: ' + unnamed.length + ' ' + unnamed.slice(0, 3).join(' '));
process.exit(kernel > 0 && unnamed.length === 0 ? 0 : 1);
" "$SBX/state/$first" || fail "kernel frames missing or unnamed in the service's profile: CAP_SYSLOG or /proc/kallsyms lost"
log "\$ jit_checks.mjs --profile $first --pid $BURNER_CHECK_PID (the deleted burner)"
node_check jit_checks.mjs --profile "$SBX/state/$first" --gzip --pid "$BURNER_CHECK_PID" \
	--func alpha_heavy --func alpha_light --func beta_spin --func sysc_loop --min-percent 50 ||
	fail "the service did not name the deleted burner's functions: /proc/PID/map_files lost (CAP_CHECKPOINT_RESTORE, CAP_SYS_PTRACE)"
log "\$ jit_checks.mjs --profile $first --pid $JIT_CHECK_PID (node's JIT)"
node_check jit_checks.mjs --profile "$SBX/state/$first" --gzip --pid "$JIT_CHECK_PID" --category JavaScript --js ||
	fail "the service did not name node's JIT functions: /proc/PID/root perf maps lost (CAP_SYS_PTRACE)"
ok "the service's profiles load and name kernel, deleted-binary and JIT frames"

# --- Purge ----------------------------------------------------------------------
# As after a real run: snapshots in /var/lib/bpfprof, the unit enabled.
install -d -m 0700 /var/lib/bpfprof && cp "$SBX/state/$first" /var/lib/bpfprof/ ||
	fail "cannot populate /var/lib/bpfprof"
systemctl enable bpfprof.service >"$WORK/enable.log" 2>&1 ||
	{ indent <"$WORK/enable.log"; fail "systemctl enable bpfprof failed"; }
[ -L "$WANTS_LINK" ] || fail "systemctl enable made no $WANTS_LINK"
log "\$ dpkg --purge bpfprof"
dpkg --purge bpfprof >"$WORK/purge.log" 2>&1 || { indent <"$WORK/purge.log"; fail "dpkg --purge failed"; }
INSTALLED=0
rm -f "$LEFTOVER"
status=$(dpkg-query -W -f='${Status}' bpfprof 2>/dev/null)
case $status in
"" | *" not-installed") ;;
*) fail "after purge, dpkg still knows bpfprof: $status" ;;
esac
for f in "${INSTALLED_FILES[@]}" /var/lib/bpfprof "$WANTS_LINK"; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is still there after dpkg --purge"
done
ok "dpkg --purge: binary, man page, unit, /etc/default/bpfprof, /var/lib/bpfprof and the enablement gone"
restore_state_dir
