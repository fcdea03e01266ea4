#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# PID 1 of the systemd sandbox of package_sandbox.sh, run by `unshare --pid
# --mount --cgroup --uts --ipc --net --fork` inside its own cgroup:
#
#   package_sandbox_init.sh ROOT CGROUP STATE LOG UNITS
#
# builds a root for a real systemd in which every host filesystem is
# read-only, proves it with write probes, and only then execs systemd.
# Writable inside, and nothing else:
#   /run /tmp /var/tmp /var/lib /dev  private tmpfs, gone with the namespace
#   /var/lib/bpfprof                  the host directory STATE
#   /run/bpfprof-test                 the host directory LOG (logs, probes)
#   /dev/kmsg                         the host file LOG/systemd-kmsg.log
#   /sys/fs/cgroup                    the host cgroup CGROUP, ours alone
#   /proc                             this pid namespace's own (/proc/sys
#                                     and the other kernel knobs read-only)
# and, read-only, /run/host-proc: the host's /proc.
# ROOT is an empty host directory: the read-only view of / is mounted on it
# in this mount namespace only, then becomes our root. UNITS holds the
# sandbox's own units for /run/systemd/system; the units systemd must not run
# here (those that clean /tmp, write sysctls, load modules...) are masked.
# Why all this: systemd's boot units act on the machine they believe is
# theirs; a writable host root once let systemd-tmpfiles-setup empty the
# host's /tmp.

set -euo pipefail

die() {
	echo "sandbox-init: error: $*" >&2
	exit 1
}

[ $# -eq 5 ] || die "usage: $0 ROOT CGROUP STATE LOG UNITS"
root=$1 cgroup=$2 state=$3 log=$4 units=$5
[ $$ -eq 1 ] || die "must be PID 1 of a new pid namespace (run by unshare --pid --fork)"
for d in "$root" "$cgroup" "$state" "$log" "$units"; do
	[ -d "$d" ] || die "$d is not a directory"
done
[ -z "$(ls -A "$root")" ] || die "$root is not empty"

# No mount below may ever reach the host, whatever unshare's defaults.
mount --make-rprivate /

# The host's root filesystem, read-only. A non-recursive bind: the host's
# other mounts are not in it at all (only those mounted again below are).
mount --bind / "$root"
mount -o remount,bind,ro "$root"

# Our pid namespace's /proc. What in it acts on the whole machine stays
# read-only (the list of systemd's ProtectKernelTunables=), and reading
# /proc/kmsg would take messages from the host's log readers.
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
for p in acpi apm asound bus fs irq latency_stats mtrr scsi sys sysrq-trigger timer_stats; do
	[ -e "$root/proc/$p" ] || continue
	mount --bind "$root/proc/$p" "$root/proc/$p"
	mount -o remount,bind,ro "$root/proc/$p"
done
if [ -e "$root/proc/kmsg" ]; then
	mount --bind /dev/null "$root/proc/kmsg"
	mount -o remount,bind,ro "$root/proc/kmsg"
fi

# The host's sysfs, read-only (BTF, CPU lists), then our cgroup over
# /sys/fs/cgroup: systemd organizes its units below it and nowhere else.
mount --bind /sys "$root/sys"
mount -o remount,bind,ro,nosuid,nodev,noexec "$root/sys"
mount --bind "$cgroup" "$root/sys/fs/cgroup"

# A /dev of our own: the usual nodes, no disks, not the host's /dev/kmsg.
mount -t tmpfs -o nosuid,mode=0755,size=1m sandbox-dev "$root/dev"
mknod -m 0666 "$root/dev/null" c 1 3
mknod -m 0666 "$root/dev/zero" c 1 5
mknod -m 0666 "$root/dev/full" c 1 7
mknod -m 0666 "$root/dev/random" c 1 8
mknod -m 0666 "$root/dev/urandom" c 1 9
mknod -m 0666 "$root/dev/tty" c 5 0
mkdir "$root/dev/pts" "$root/dev/shm" "$root/dev/mqueue"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,nosuid,noexec sandbox-pts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o nosuid,nodev,mode=1777,size=16m sandbox-shm "$root/dev/shm"
# systemd's log goes to "kmsg", here a file in LOG: its console target
# wants a terminal, and the host's kernel log is no place for it.
: >"$log/systemd-kmsg.log"
: >"$root/dev/kmsg"
mount --bind "$log/systemd-kmsg.log" "$root/dev/kmsg"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"

for d in run tmp var/tmp var/lib; do
	mount -t tmpfs -o nosuid,nodev,mode=0755,size=64m "sandbox-${d//\//-}" "$root/$d"
done
chmod 1777 "$root/tmp" "$root/var/tmp"
mkdir "$root/var/lib/bpfprof" "$root/run/bpfprof-test" "$root/run/host-proc"
mount --bind "$state" "$root/var/lib/bpfprof"
mount --bind "$log" "$root/run/bpfprof-test"
# The host's /proc, read-only, for a unit that must see the host's processes
# (BindReadOnlyPaths=/run/host-proc:/proc): BPF reports host pids.
mount --bind /proc "$root/run/host-proc"
mount -o remount,bind,ro,nosuid,nodev,noexec "$root/run/host-proc"
if [ -e "$root/run/host-proc/kmsg" ]; then
	mount --bind /dev/null "$root/run/host-proc/kmsg"
	mount -o remount,bind,ro "$root/run/host-proc/kmsg"
fi

# The sandbox's units, and masks for every boot unit that could act on the
# machine: with --unit= naming a target of our own, none of them is wanted,
# the masks make sure.
mkdir -p "$root/run/systemd/system"
cp -r "$units"/. "$root/run/systemd/system/"
for u in sysinit.target basic.target local-fs.target remote-fs.target swap.target \
	sockets.target timers.target paths.target multi-user.target graphical.target \
	systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service \
	systemd-tmpfiles-setup-dev-early.service systemd-tmpfiles-clean.service \
	systemd-tmpfiles-clean.timer systemd-sysctl.service systemd-modules-load.service \
	modprobe@.service systemd-journald.service systemd-journald.socket \
	systemd-journald-dev-log.socket systemd-journald-audit.socket \
	systemd-journal-flush.service systemd-udevd.service systemd-udevd-control.socket \
	systemd-udevd-kernel.socket systemd-udev-trigger.service systemd-random-seed.service \
	systemd-remount-fs.service systemd-update-utmp.service systemd-machine-id-commit.service \
	systemd-binfmt.service systemd-sysusers.service systemd-firstboot.service \
	systemd-hwdb-update.service systemd-journal-catalog-update.service \
	systemd-update-done.service systemd-boot-system-token.service systemd-pstore.service \
	systemd-timesyncd.service systemd-networkd.service systemd-resolved.service \
	systemd-logind.service getty.target console-getty.service dbus.service dbus.socket \
	cron.service; do
	ln -sf /dev/null "$root/run/systemd/system/$u"
done

# The proof, before systemd exists: every mount but ours is read-only, and
# writing the host's directories and kernel knobs fails. access(W_OK) is the
# kernel's own read-only-mount test, with no side effect; the files are real
# attempts, under names nobody else uses.
writable_ok=" /proc /dev /dev/pts /dev/shm /run /tmp /var/tmp /var/lib /var/lib/bpfprof "
writable_ok+="/run/bpfprof-test /dev/kmsg /sys/fs/cgroup "
rw_mounts=0
while read -r _ _ _ _ mp opts _; do
	case $mp in
	"$root") rel=/ ;;
	"$root"/*) rel=${mp#"$root"} ;;
	*) continue ;;
	esac
	case ",$opts," in
	*,ro,*) continue ;;
	esac
	if [[ $writable_ok != *" $rel "* ]]; then
		echo "sandbox-init: mount $rel is writable ($opts)" >&2
		rw_mounts=$((rw_mounts + 1))
	fi
done </proc/self/mountinfo
[ "$rw_mounts" -eq 0 ] || die "$rw_mounts host mount(s) writable in the sandbox; not starting systemd"

probe=.bpfprof-sandbox-probe.$RANDOM$RANDOM
for d in / /etc /usr /var /var/log /var/cache /root /home /opt /srv /lib/systemd/system; do
	[ -d "$root$d" ] || continue
	[ ! -w "$root$d" ] || die "$d is writable in the sandbox"
	if (: >"$root$d/$probe") 2>/dev/null; then
		rm -f "$root$d/$probe"
		die "created a file in $d in the sandbox"
	fi
done
for f in "$root"/proc/sys/kernel/core_pattern "$root"/proc/sys/kernel/pid_max \
	"$root"/proc/sysrq-trigger "$root"/proc/irq/default_smp_affinity \
	"$root"/run/host-proc/sys/kernel/pid_max "$root"/run/host-proc/sysrq-trigger \
	"$root"/sys/kernel/mm/transparent_hugepage/enabled; do
	[ -e "$f" ] || continue
	[ ! -w "$f" ] || die "${f#"$root"} is writable in the sandbox"
done
[ -w "$root/var/lib/bpfprof" ] && [ -w "$root/tmp" ] && [ -w "$root/sys/fs/cgroup" ] ||
	die "the sandbox's own directories are not writable"
echo "sandbox-init: host filesystems read-only, probes failed as they must"

# Into the new root; the old one is detached for good.
cd "$root"
pivot_root . .
umount -l .
cd /

# systemd without the capabilities to touch what namespaces do not cover:
# the clock, kernel modules, reboot, raw I/O.
exec setpriv --bounding-set -sys_time,-wake_alarm,-sys_module,-sys_boot,-sys_rawio,-sys_tty_config,-mac_admin,-mac_override \
	env -i container=bpfprof-sandbox PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	/lib/systemd/systemd --unit=bpfprof-sandbox.target --show-status=no --log-target=kmsg --log-level=info
