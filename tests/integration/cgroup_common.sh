# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the tests of `bpfprof --cgroup` (cgroup.sh, error_case.sh):
# where the cgroup hierarchies are mounted, found the way bpfprof finds them.

# cgroup_mounts TYPE: the mount points of filesystems of TYPE (cgroup2, or
# cgroup for v1), one a line, from /proc/self/mountinfo. The filesystem type
# is the first field after the " - " separator and the mount point is field
# 5; the optional fields between them vary in number, hence the search.
cgroup_mounts() {
	awk -v type="$1" '{
		for (i = 7; i <= NF; i++) {
			if ($i == "-") {
				if ($(i + 1) == type)
					print $5
				break
			}
		}
	}' /proc/self/mountinfo
}

# cgroup_v2_mount: the cgroup v2 mount point (the first, if mounted twice);
# fails when there is none.
cgroup_v2_mount() {
	local m
	m=$(cgroup_mounts cgroup2 | head -n 1)
	[ -n "$m" ] && [ -f "$m/cgroup.procs" ] || return 1
	printf '%s\n' "$m"
}

# require_cgroup_v2: sets V2 (read by the sourcing test) to the v2 mount, or skips the test (exit 77;
# a failure when CI is set) on a host without one.
# shellcheck disable=SC2034
require_cgroup_v2() {
	if V2=$(cgroup_v2_mount); then
		return
	fi
	if in_ci; then
		fail "no cgroup v2 hierarchy is mounted (no cgroup2 line in /proc/self/mountinfo) and CI=$CI is set"
	fi
	log "SKIP no cgroup v2 hierarchy is mounted (no cgroup2 line in /proc/self/mountinfo)"
	exit 77
}

# cgroup_of PID: PID's cgroup v2 path relative to the v2 root ("/..."), from
# the "0::" line of /proc/PID/cgroup.
cgroup_of() {
	sed -n 's/^0:://p' "/proc/$1/cgroup"
}
