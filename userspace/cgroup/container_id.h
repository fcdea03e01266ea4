/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which container a cgroup v2 path belongs to, from the names container
 * runtimes give their cgroups. No runtime is asked: a profile made on a
 * host with no daemon socket (or after the container is gone) still names
 * the container.
 */
#ifndef BPFPROF_CONTAINER_ID_H
#define BPFPROF_CONTAINER_ID_H

#include <stdbool.h>
#include <stddef.h>

/* A full hex container id (64 digits) and its NUL. */
#define CONTAINER_ID_MAX   65
/* How much of a hex id labels a process, as `docker ps` shows it. */
#define CONTAINER_ID_SHORT 12

/*
 * The container a cgroup v2 path (as /proc/PID/cgroup writes it) is in,
 * recognised from the usual runtime naming:
 *   docker      "/system.slice/docker-<64hex>.scope", "/docker/<64hex>"
 *   containerd  ".../cri-containerd-<64hex>.scope"
 *   kubernetes  "/kubepods/<qos>/pod<uid>/<64hex>" (cgroupfs driver, any runtime)
 *   cri-o       ".../crio-<64hex>.scope" (not "crio-conmon-": the monitor)
 *   podman      ".../libpod-<64hex>.scope" (not "libpod-conmon-")
 *   nspawn      "/machine.slice/machine-<name>.scope" (systemd-machined; \x2d
 *               unescaped to '-'), "/machine.slice/systemd-nspawn@<name>.service"
 *   libvirt     a machine scope named "qemu-<n>-<name>" or "lxc-<n>-<name>"
 *   lxc         "/lxc.payload.<name>" (not "lxc.monitor."), "/lxc/<name>"
 * A container inside another (docker in LXC, docker in docker) is named by
 * its innermost match. Writes the id (all 64 digits for hex ids, the name
 * otherwise, cut to outlen - 1) into out and the runtime name into
 * *runtime; returns true when recognised, else false with out "" and
 * *runtime NULL.
 */
bool cgroup_container_id(const char *path, char *out, size_t outlen, const char **runtime);

/* Whether the id is a runtime's hex id (shortened in labels) rather than a name. */
bool container_id_is_hex(const char *id);

#endif
