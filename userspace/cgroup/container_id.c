// SPDX-License-Identifier: BSD-2-Clause
/*
 * Container ids from cgroup names. Where the names come from (checked in
 * the runtimes' sources, LXC's in tools that parse its cgroups):
 *  - docker: moby's newCgroupParent uses parent "docker" with the cgroupfs
 *    driver and "system.slice:docker:" with systemd, which runc turns into
 *    "<prefix>-<id>.scope" (runc docs/systemd.md);
 *  - containerd's CRI plugin (getCgroupsPath): "<slice>:cri-containerd:<id>"
 *    under a .slice parent, else "<parent>/<id>" (kubepods cgroupfs);
 *  - CRI-O: "crio-<id>[.scope]" per container and "crio-conmon-<id>" for its
 *    conmon monitor, which is no container;
 *  - podman: "libpod-<id>.scope" and the monitor's "libpod-conmon-<id>.scope";
 *  - systemd-machined (machine_start_scope): "machine-" + unit_name_escape(name)
 *    + ".scope" in machine.slice; libvirt registers "qemu-<n>-<name>";
 *  - LXC 4+: "lxc.payload.<name>" for the container, "lxc.monitor.<name>" for
 *    its monitor; older LXC and Proxmox: "/lxc/<name>".
 */
#include "container_id.h"
#include "../util/hex.h"

#include <string.h>

#define HEX_ID_LEN 64

struct component {
	const char *s;
	size_t len;
};

static bool is_hex_id(const char *s, size_t len)
{
	if (len != HEX_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool container_id_is_hex(const char *id)
{
	return is_hex_id(id, strlen(id));
}

static bool comp_is(struct component c, const char *name)
{
	return c.len == strlen(name) && !memcmp(c.s, name, c.len);
}

static bool comp_starts(struct component c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.len >= n && !memcmp(c.s, prefix, n);
}

/* Drop `suffix` from c when it ends with it. */
static bool strip_suffix(struct component *c, const char *suffix)
{
	size_t n = strlen(suffix);

	if (c->len < n || memcmp(c->s + c->len - n, suffix, n))
		return false;
	c->len -= n;
	return true;
}

/* Copy a systemd-escaped unit name part, "\x2d" back to '-', cut to fit. */
static void copy_unescaped(struct component c, char *out, size_t outlen)
{
	size_t n = 0;

	for (size_t i = 0; i < c.len && n + 1 < outlen; i++) {
		if (c.s[i] == '\\' && i + 3 < c.len && c.s[i + 1] == 'x' &&
		    hex_digit(c.s[i + 2]) >= 0 && hex_digit(c.s[i + 3]) >= 0) {
			out[n++] = (char)(hex_digit(c.s[i + 2]) << 4 | hex_digit(c.s[i + 3]));
			i += 3;
			continue;
		}
		out[n++] = c.s[i];
	}
	out[n] = '\0';
}

static void copy_plain(struct component c, char *out, size_t outlen)
{
	size_t n = c.len < outlen - 1 ? c.len : outlen - 1;

	memcpy(out, c.s, n);
	out[n] = '\0';
}

/* "<prefix><64hex>" with an optional ".scope", as runc's systemd driver and cgroupfs name them. */
static const struct {
	const char *prefix, *runtime;
} hex_prefixes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "libpod-", "podman" },
};

struct walk {
	struct component parent; /* len 0 for the first component */
	bool parent_is_top_lxc;	 /* the parent is a first component "lxc" */
	bool in_kubepods;	 /* below a kubelet "kubepods*" cgroup */
};

/*
 * A machine of systemd-machined, in machine.slice: "machine-<name>.scope"
 * (escaped), or the unit of systemd-nspawn@.service when it keeps its own.
 */
static bool match_machine(struct component c, char *out, size_t outlen, const char **runtime)
{
	struct component name = c;

	if (strip_suffix(&name, ".scope") && comp_starts(name, "machine-")) {
		name.s += strlen("machine-");
		name.len -= strlen("machine-");
	} else if (strip_suffix(&name, ".service") && comp_starts(name, "systemd-nspawn@")) {
		name.s += strlen("systemd-nspawn@");
		name.len -= strlen("systemd-nspawn@");
	} else {
		return false;
	}
	if (!name.len)
		return false;
	copy_unescaped(name, out, outlen);
	/* libvirt's machine names are "<driver>-<id>-<name>", escaped like any other. */
	*runtime = !strncmp(out, "qemu-", 5) || !strncmp(out, "lxc-", 4) ? "libvirt" : "nspawn";
	return true;
}

/* Whether one component names a container; fills out and *runtime when it does. */
static bool match_component(struct component c, const struct walk *w, char *out, size_t outlen,
			    const char **runtime)
{
	struct component base = c;

	strip_suffix(&base, ".scope");

	for (size_t i = 0; i < sizeof(hex_prefixes) / sizeof(hex_prefixes[0]); i++) {
		struct component id = base;
		size_t n = strlen(hex_prefixes[i].prefix);

		if (!comp_starts(base, hex_prefixes[i].prefix))
			continue;
		id.s += n;
		id.len -= n;
		/* The conmon monitors' "crio-conmon-<id>" / "libpod-conmon-<id>" fail here. */
		if (!is_hex_id(id.s, id.len))
			return false;
		copy_plain(id, out, outlen);
		*runtime = hex_prefixes[i].runtime;
		return true;
	}
	if (comp_is(w->parent, "machine.slice") && match_machine(c, out, outlen, runtime))
		return true;
	if (comp_starts(c, "lxc.payload.") && c.len > strlen("lxc.payload.")) {
		struct component name = { c.s + strlen("lxc.payload."),
					  c.len - strlen("lxc.payload.") };

		copy_plain(name, out, outlen);
		*runtime = "lxc";
		return true;
	}
	/* Older LXC and Proxmox: "/lxc/<name>", only at the top. */
	if (w->parent_is_top_lxc) {
		copy_plain(c, out, outlen);
		*runtime = "lxc";
		return true;
	}
	if (is_hex_id(c.s, c.len) && (comp_is(w->parent, "docker") || w->in_kubepods)) {
		copy_plain(c, out, outlen);
		*runtime = w->in_kubepods ? "kubernetes" : "docker";
		return true;
	}
	return false;
}

bool cgroup_container_id(const char *path, char *out, size_t outlen, const char **runtime)
{
	struct walk w = { { path, 0 }, false, false };
	bool found = false, first = true;
	const char *s = path;

	*runtime = NULL;
	if (!outlen)
		return false;
	out[0] = '\0';
	while (*s) {
		struct component c;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		c.s = s;
		c.len = strcspn(s, "/");
		s += c.len;
		/* Innermost wins: a later match overwrites an earlier one. */
		if (match_component(c, &w, out, outlen, runtime))
			found = true;
		w.parent_is_top_lxc = first && comp_is(c, "lxc");
		if (comp_starts(c, "kubepods"))
			w.in_kubepods = true;
		w.parent = c;
		first = false;
	}
	if (!found)
		out[0] = '\0';
	return found;
}
