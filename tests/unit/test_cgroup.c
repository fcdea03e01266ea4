// SPDX-License-Identifier: BSD-2-Clause
/*
 * The cgroup library: mountinfo parsing, /proc/PID/cgroup parsing, path
 * containment and container ids from written fixtures; --cgroup resolution
 * against this machine's real cgroup v2 mount (creating a cgroup needs
 * root: those cases are skipped, and say so, without it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup_fs.h"
#include "cgroup/container_id.h"
#include "test.h"
#include "write_file.h"

#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static char tmpdir[64];

/* A mountinfo fixture in the temporary directory; returns its path (static). */
static const char *mountinfo(const char *name, const char *text)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	write_file_text(path, text);
	return path;
}

/* ==== mountinfo ============================================================ */

/* This machine's kind: v1 controllers, a tmpfs at /sys/fs/cgroup, v2 at .../unified. */
static const char hybrid_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char v1_only_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n";

static void test_mountinfo_hybrid(void)
{
	char out[PATH_MAX];

	CHECK_EQ_INT(cgroup2_mount_from_mountinfo(mountinfo("hybrid", hybrid_mountinfo), out,
						  sizeof(out)),
		     0);
	CHECK_EQ_STR(out, "/sys/fs/cgroup/unified");
}

static void test_mountinfo_pure_v2(void)
{
	/* Optional fields (shared:, master:) sit between the options and the "-". */
	const char *mi = mountinfo(
		"pure", "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
			"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 "
			"master:3 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
			"90 35 0:30 / /mnt/second rw,relatime - cgroup2 cgroup2 rw\n");
	char out[PATH_MAX];

	CHECK_EQ_INT(cgroup2_mount_from_mountinfo(mi, out, sizeof(out)), 0);
	/* The first of several. */
	CHECK_EQ_STR(out, "/sys/fs/cgroup");
	/* Too small a buffer is an error, not a cut path. */
	CHECK_EQ_INT(cgroup2_mount_from_mountinfo(mi, out, 10), -ENAMETOOLONG);
}

static void test_mountinfo_v1_only(void)
{
	char out[PATH_MAX] = "untouched";

	CHECK_EQ_INT(
		cgroup2_mount_from_mountinfo(mountinfo("v1", v1_only_mountinfo), out, sizeof(out)),
		-ENOENT);
	CHECK_EQ_INT(cgroup2_mount_from_mountinfo(mountinfo("empty", ""), out, sizeof(out)),
		     -ENOENT);
}

static void test_mountinfo_escapes_and_junk(void)
{
	/*
	 * A mount point with a space, a tab and a backslash (\040 \011 \134);
	 * a truncated line, a line without the separator and one that names
	 * cgroup2 only as its source come first and must be skipped.
	 */
	const char *mi = mountinfo(
		"escaped",
		"41 31 0:38 / /sys/fs/cgroup\n"
		"42 31 0:38 / /nosep rw,relatime cgroup2 cgroup2 rw\n"
		"43 31 0:39 / /tmp/x rw - tmpfs cgroup2 rw\n"
		"44 31 0:38 / /mnt/my\\040cg\\011roup\\134v2 rw,relatime - cgroup2 none rw\n");
	char out[PATH_MAX];

	CHECK_EQ_INT(cgroup2_mount_from_mountinfo(mi, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/mnt/my cg\troup\\v2");
}

/* ==== /proc/PID/cgroup ===================================================== */

static char proc_root[PATH_MAX];

static void fake_proc(uint32_t pid, const char *cgroup_text)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	write_file_text(path, cgroup_text);
}

static void test_proc_path(void)
{
	char *path = NULL;

	snprintf(proc_root, sizeof(proc_root), "%s/proc", tmpdir);
	mkdir(proc_root, 0755);
	/* Hybrid: v1 lines around the v2 one. */
	fake_proc(100, "9:name=systemd:/user.slice/x\n"
		       "4:memory:/process_api/797355aa\n"
		       "0::/system.slice/docker-" HEX_A ".scope\n"
		       "1:cpu:/\n");
	fake_proc(101, "12:pids:/a\n3:cpuset:/\n");
	/* A zombie in a removed cgroup; no newline at the end. */
	fake_proc(102, "0::/test/gone (deleted)");
	/* Colons belong to the path after the second one. */
	fake_proc(103, "0::/a:b/c\n");
	/* A v1 hierarchy without controllers is not the v2 one. */
	fake_proc(104, "1:name=x:/v1\n0::/\n");

	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 100, &path), 0);
	CHECK_EQ_STR(path, "/system.slice/docker-" HEX_A ".scope");
	free(path);
	path = NULL;
	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 101, &path), -ENODATA);
	CHECK(path == NULL);
	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 999, &path), -ENOENT);
	CHECK(path == NULL);
	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 102, &path), 0);
	CHECK_EQ_STR(path, "/test/gone (deleted)");
	free(path);
	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 103, &path), 0);
	CHECK_EQ_STR(path, "/a:b/c");
	free(path);
	CHECK_EQ_INT(cgroup_read_proc_path(proc_root, 104, &path), 0);
	CHECK_EQ_STR(path, "/");
	free(path);
}

/* The real /proc agrees with its own "0::" line. */
static void test_proc_path_self(void)
{
	char *path = NULL, line[PATH_MAX], want[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f) {
		fprintf(stderr, "  skipped: no /proc/self/cgroup\n");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(want, sizeof(want), "%s", line + 3);
		}
	fclose(f);
	if (!want[0]) {
		CHECK_EQ_INT(cgroup_read_proc_path("/proc", (uint32_t)getpid(), &path), -ENODATA);
		return;
	}
	CHECK_EQ_INT(cgroup_read_proc_path("/proc", (uint32_t)getpid(), &path), 0);
	CHECK_EQ_STR(path, want);
	free(path);
}

/* ==== path containment ===================================================== */

static void test_path_within(void)
{
	CHECK(cgroup_path_within("/a/b", "/a/b"));
	CHECK(cgroup_path_within("/a/b/c", "/a/b"));
	CHECK(cgroup_path_within("/a/b/c/d", "/a/b/"));
	CHECK(!cgroup_path_within("/a/bc", "/a/b"));
	CHECK(!cgroup_path_within("/a", "/a/b"));
	CHECK(!cgroup_path_within("/b/a", "/a"));
	CHECK(cgroup_path_within("/", "/"));
	CHECK(cgroup_path_within("/anything/at/all", "/"));
	CHECK(cgroup_path_within("/x", "//"));
	/* A removed cgroup's suffix makes a different last component. */
	CHECK(!cgroup_path_within("/a/b (deleted)", "/a/b"));
	CHECK(cgroup_path_within("/a/b/c (deleted)", "/a/b"));
}

/* ==== container ids ======================================================== */

struct id_case {
	const char *path;
	const char *id;	     /* NULL: not a container */
	const char *runtime; /* when id */
};

static const struct id_case id_cases[] = {
	/* docker, systemd and cgroupfs drivers */
	{ "/system.slice/docker-" HEX_A ".scope", HEX_A, "docker" },
	{ "/docker/" HEX_A, HEX_A, "docker" },
	/* containerd through the CRI, systemd driver, inside a pod slice */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_"
	  "7182_93a4_b5c6d7e8f901.slice/cri-containerd-" HEX_A ".scope",
	  HEX_A, "containerd" },
	/* kubepods with the cgroupfs driver: the pod uid is no container id */
	{ "/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" HEX_B, HEX_B,
	  "kubernetes" },
	{ "/kubepods/besteffort/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901", NULL, NULL },
	{ "/kubepods.slice/kubepods-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice", NULL, NULL },
	/* CRI-O, and its conmon monitor which is no container */
	{ "/kubepods.slice/kubepods-pod1.slice/crio-" HEX_A ".scope", HEX_A, "cri-o" },
	{ "/kubepods.slice/kubepods-pod1.slice/crio-conmon-" HEX_A ".scope", NULL, NULL },
	{ "/kubepods/pod1/crio-" HEX_B, HEX_B, "cri-o" },
	/* podman, and its conmon */
	{ "/machine.slice/libpod-" HEX_A ".scope", HEX_A, "podman" },
	{ "/machine.slice/libpod-" HEX_A ".scope/container", HEX_A, "podman" },
	{ "/machine.slice/libpod-conmon-" HEX_A ".scope", NULL, NULL },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" HEX_B ".scope", HEX_B,
	  "podman" },
	/* systemd-nspawn via machined, name unescaped */
	{ "/machine.slice/machine-my\\x2dbox.scope", "my-box", "nspawn" },
	{ "/machine.slice/machine-web.scope/payload/system.slice/nginx.service", "web", "nspawn" },
	{ "/machine.slice/systemd-nspawn@deb\\x2d12.service/payload", "deb-12", "nspawn" },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dfedora.scope", "qemu-1-fedora", "libvirt" },
	/* "machine-" outside machine.slice is nothing */
	{ "/system.slice/machine-x.scope", NULL, NULL },
	/* LXC */
	{ "/lxc.payload.mail/system.slice/postfix.service", "mail", "lxc" },
	{ "/lxc.monitor.mail", NULL, NULL },
	{ "/lxc/101/ns/init.scope", "101", "lxc" },
	{ "/system.slice/lxc/x", NULL, NULL },
	/* innermost wins: docker inside LXC, docker in docker */
	{ "/lxc.payload.ci/system.slice/docker-" HEX_B ".scope", HEX_B, "docker" },
	{ "/docker/" HEX_A "/docker/" HEX_B, HEX_B, "docker" },
	/* not containers */
	{ "/", NULL, NULL },
	{ "", NULL, NULL },
	{ "/system.slice/docker.service", NULL, NULL },
	{ "/user.slice/user-1000.slice/session-3.scope", NULL, NULL },
	{ "/system.slice/docker-" HEX_A "0.scope", NULL, NULL }, /* 65 digits */
	{ "/system.slice/docker-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	  ".scope",
	  NULL, NULL },			     /* upper case */
	{ "/somewhere/" HEX_A, NULL, NULL }, /* a bare id under nothing known */
	{ "/system.slice/docker-.scope", NULL, NULL },
};

static void test_container_ids(void)
{
	for (size_t i = 0; i < sizeof(id_cases) / sizeof(id_cases[0]); i++) {
		const struct id_case *c = &id_cases[i];
		char out[CONTAINER_ID_MAX] = "junk";
		const char *runtime = "junk";
		bool found = cgroup_container_id(c->path, out, sizeof(out), &runtime);

		if (found != (c->id != NULL))
			fprintf(stderr, "  case %zu: %s\n", i, c->path);
		CHECK_EQ_INT(found, c->id != NULL);
		if (c->id) {
			CHECK_EQ_STR(out, c->id);
			CHECK_EQ_STR(runtime, c->runtime);
		} else {
			CHECK_EQ_STR(out, "");
			CHECK(runtime == NULL);
		}
	}
}

static void test_container_id_small_buffer(void)
{
	char out[13];
	const char *runtime;

	CHECK(cgroup_container_id("/docker/" HEX_A, out, sizeof(out), &runtime));
	CHECK_EQ_STR(out, "0123456789ab");
	CHECK(cgroup_container_id("/machine.slice/machine-a\\x2dvery\\x2dlong\\x2dname.scope", out,
				  sizeof(out), &runtime));
	CHECK_EQ_STR(out, "a-very-long-");
	CHECK(!cgroup_container_id("/docker/" HEX_A, out, 0, &runtime));
	CHECK(container_id_is_hex(HEX_A));
	CHECK(!container_id_is_hex("my-box"));
}

/* ==== --cgroup against this machine's cgroup v2 mount ======================= */

static bool have_v2(char *mnt, size_t len)
{
	if (cgroup2_mount_from_mountinfo("/proc/self/mountinfo", mnt, len)) {
		fprintf(stderr, "  skipped: no cgroup v2 mount on this machine\n");
		return false;
	}
	return true;
}

static void test_target_errors(void)
{
	struct cgroup_target t;
	char mnt[PATH_MAX], err[3 * PATH_MAX], want[3 * PATH_MAX];
	int r;

	if (!have_v2(mnt, sizeof(mnt)))
		return;
	r = cgroup_target_open(&t, "/proc/self/mountinfo", "/bpfprof-no-such-cgroup", err,
			       sizeof(err));
	CHECK_EQ_INT(r, -ENOENT);
	snprintf(want, sizeof(want),
		 "--cgroup /bpfprof-no-such-cgroup: no such cgroup under the cgroup v2 mount %s; "
		 "list them with: ls %s",
		 mnt, mnt);
	CHECK_EQ_STR(err, want);
	CHECK(t.fd == -1 && t.dir == NULL && t.path == NULL);
	cgroup_target_close(&t);

	/* The same, absolute inside the mount, and relative without a slash. */
	snprintf(want, sizeof(want), "%s/bpfprof-no-such-cgroup/x", mnt);
	CHECK_EQ_INT(cgroup_target_open(&t, "/proc/self/mountinfo", want, err, sizeof(err)),
		     -ENOENT);
	CHECK(strstr(err, "no such cgroup under the cgroup v2 mount") != NULL);
	CHECK_EQ_INT(
		cgroup_target_open(&t, "/proc/self/mountinfo", "bpfprof-no-such", err, sizeof(err)),
		-ENOENT);

	r = cgroup_target_open(&t, "/proc/self/mountinfo", "/proc", err, sizeof(err));
	CHECK_EQ_INT(r, -EINVAL);
	snprintf(want, sizeof(want),
		 "--cgroup /proc: not a cgroup v2 directory (filesystem is proc); give a "
		 "directory under %s",
		 mnt);
	CHECK_EQ_STR(err, want);

	r = cgroup_target_open(&t, "/proc/self/mountinfo", "/tmp", err, sizeof(err));
	CHECK_EQ_INT(r, -EINVAL);
	CHECK(!strncmp(err, "--cgroup /tmp: not a cgroup v2 directory (filesystem is ",
		       strlen("--cgroup /tmp: not a cgroup v2 directory (filesystem is ")));
	CHECK(strstr(err, "; give a directory under ") != NULL);
	CHECK(strchr(err, '\n') == NULL);

	/* A file inside a cgroup: the root's cgroup.procs. */
	r = cgroup_target_open(&t, "/proc/self/mountinfo", "/cgroup.procs", err, sizeof(err));
	CHECK_EQ_INT(r, -ENOTDIR);
	snprintf(want, sizeof(want),
		 "--cgroup /cgroup.procs: a file inside a cgroup, not a cgroup; give the "
		 "cgroup's directory, %s",
		 mnt);
	CHECK_EQ_STR(err, want);

	r = cgroup_target_open(&t, "/proc/self/mountinfo", "", err, sizeof(err));
	CHECK_EQ_INT(r, -EINVAL);
	CHECK(!strncmp(err, "--cgroup needs a cgroup", strlen("--cgroup needs a cgroup")));
	cgroup_target_close(&t);
}

static void test_target_v1_only(void)
{
	struct cgroup_target t;
	char err[512];

	CHECK_EQ_INT(cgroup_target_open(&t, mountinfo("v1", v1_only_mountinfo), "/test", err,
					sizeof(err)),
		     -EOPNOTSUPP);
	CHECK_EQ_STR(err, "this host has no cgroup v2 hierarchy mounted (cgroup v1 only); mount "
			  "one (mount -t cgroup2 none /sys/fs/cgroup/unified) or boot with "
			  "systemd.unified_cgroup_hierarchy=1");
	/* No error buffer is fine too. */
	CHECK_EQ_INT(cgroup_target_open(&t, mountinfo("v1", v1_only_mountinfo), "/test", NULL, 0),
		     -EOPNOTSUPP);
	cgroup_target_close(&t);
}

static uint64_t handle_id(const char *dir)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	int mount_id;
	uint64_t id = 0;

	h.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0) == 0 &&
	    h.fh.handle_bytes == sizeof(id))
		memcpy(&id, h.fh.f_handle, sizeof(id));
	return id;
}

/* One opened target: its dir, path, level and an id that matches the kernel's. */
static void check_target(const char *arg, const char *want_dir, const char *want_path,
			 uint32_t want_level)
{
	struct cgroup_target t;
	char err[512] = "";
	struct stat st, fst;
	int r = cgroup_target_open(&t, "/proc/self/mountinfo", arg, err, sizeof(err));

	if (r)
		fprintf(stderr, "  %s: %s\n", arg, err);
	CHECK_EQ_INT(r, 0);
	if (r)
		return;
	CHECK_EQ_STR(err, "");
	CHECK_EQ_STR(t.dir, want_dir);
	CHECK_EQ_STR(t.path, want_path);
	CHECK_EQ_INT(t.level, want_level);
	CHECK(stat(want_dir, &st) == 0);
	CHECK_EQ_INT(t.id, handle_id(want_dir));
	CHECK_EQ_INT(t.id, st.st_ino);
	CHECK(t.fd >= 0);
	CHECK(fstat(t.fd, &fst) == 0 && fst.st_ino == st.st_ino && S_ISDIR(fst.st_mode));
	CHECK(fcntl(t.fd, F_GETFD) & FD_CLOEXEC);
	cgroup_target_close(&t);
	CHECK_EQ_INT(t.fd, -1);
	CHECK(t.dir == NULL && t.path == NULL);
	cgroup_target_close(&t);
}

static void test_target_real(void)
{
	char mnt[PATH_MAX], top[PATH_MAX + 64], child[PATH_MAX + 128], arg[2 * PATH_MAX], name[64];
	char rel[128];

	if (!have_v2(mnt, sizeof(mnt)))
		return;
	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: creating a cgroup needs root\n");
		return;
	}
	snprintf(name, sizeof(name), "bpfprof-test-%d", (int)getpid());
	snprintf(top, sizeof(top), "%s/%s", mnt, name);
	snprintf(child, sizeof(child), "%s/child", top);
	CHECK(mkdir(top, 0755) == 0);
	CHECK(mkdir(child, 0755) == 0);
	snprintf(rel, sizeof(rel), "/%s/child", name);

	/* Absolute inside the mount, relative with and without the slash. */
	check_target(child, child, rel, 2);
	check_target(rel, child, rel, 2);
	check_target(rel + 1, child, rel, 2);
	/* Canonicalised: "..", doubled and trailing slashes. */
	snprintf(arg, sizeof(arg), "%s/child/..//", name);
	snprintf(rel, sizeof(rel), "/%s", name);
	check_target(arg, top, rel, 1);
	/* The root, by "/" and by the mount point. */
	check_target("/", mnt, "/", 0);
	check_target(mnt, mnt, "/", 0);

	/* A file of a real child cgroup. */
	{
		struct cgroup_target t;
		char err[512];

		snprintf(arg, sizeof(arg), "%s/child/cgroup.procs", name);
		CHECK_EQ_INT(cgroup_target_open(&t, "/proc/self/mountinfo", arg, err, sizeof(err)),
			     -ENOTDIR);
		CHECK(strstr(err, child) != NULL);
	}

	/* Another mount of the hierarchy, and a bind mount of a subtree (mountinfo root). */
	{
		char second[128], bind[128];

		snprintf(second, sizeof(second), "%s/second", tmpdir);
		snprintf(bind, sizeof(bind), "%s/bind", tmpdir);
		mkdir(second, 0755);
		mkdir(bind, 0755);
		if (mount("none", second, "cgroup2", 0, NULL) == 0) {
			snprintf(arg, sizeof(arg), "%s/%s/child", second, name);
			snprintf(rel, sizeof(rel), "/%s/child", name);
			check_target(arg, arg, rel, 2);
			umount(second);
		} else {
			fprintf(stderr, "  skipped: cannot mount cgroup2 again: %s\n",
				strerror(errno));
		}
		if (mount(top, bind, NULL, MS_BIND, NULL) == 0) {
			snprintf(arg, sizeof(arg), "%s/child", bind);
			snprintf(rel, sizeof(rel), "/%s/child", name);
			check_target(arg, arg, rel, 2);
			umount(bind);
		} else {
			fprintf(stderr, "  skipped: cannot bind-mount a cgroup: %s\n",
				strerror(errno));
		}
		rmdir(second);
		rmdir(bind);
	}

	CHECK(rmdir(child) == 0);
	CHECK(rmdir(top) == 0);
}

/* Closing a zero-filled target must not close fd 0. */
static void test_close_zeroed(void)
{
	struct cgroup_target t;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), dup0 = -1;

	/* Make sure fd 0 is open, whatever ctest gave us, then check it stays so. */
	if (fcntl(0, F_GETFD) < 0 && fd >= 0) {
		dup0 = dup2(fd, 0);
		CHECK_EQ_INT(dup0, 0);
	}
	memset(&t, 0, sizeof(t));
	cgroup_target_close(&t);
	CHECK(fcntl(0, F_GETFD) >= 0);
	CHECK_EQ_INT(t.fd, -1);
	if (fd >= 0)
		close(fd);
}

static void remove_tree(const char *dir)
{
	char cmd[128];

	/* Only our own mkdtemp directory. */
	if (strncmp(dir, "/tmp/bpfprof-cgroup-", 20))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "  could not remove %s\n", dir);
}

/*
 * Who could have named a cgroup: root when its directory and every one above
 * it are root's; the owner of the lowest that is not (a delegated subtree,
 * where a user may call a cgroup "docker-<id>.scope").
 */
static void test_path_owner(void)
{
	char mount[] = "/tmp/bpfprof-cgmount.XXXXXX", p[PATH_MAX], q[PATH_MAX];

	CHECK(mkdtemp(mount) != NULL);
	snprintf(p, sizeof(p), "%s/user.slice", mount);
	CHECK_EQ_INT(mkdir(p, 0755), 0);
	snprintf(q, sizeof(q), "%s/user.slice/docker-0123.scope", mount);
	CHECK_EQ_INT(mkdir(q, 0755), 0);
	if (geteuid() == 0) {
		CHECK_EQ_INT(cgroup_path_owner(mount, "/user.slice/docker-0123.scope"), 0);
		CHECK_EQ_INT(cgroup_path_owner(mount, "/"), 0);
		/* Delegated: the user's subtree, and anything they made below it. */
		CHECK_EQ_INT(chown(p, 4242, 4242), 0);
		CHECK_EQ_INT(cgroup_path_owner(mount, "/user.slice/docker-0123.scope"), 4242);
		CHECK_EQ_INT(chown(q, 4343, 4343), 0);
		CHECK_EQ_INT(cgroup_path_owner(mount, "/user.slice/docker-0123.scope"), 4343);
	} else {
		CHECK_EQ_INT(cgroup_path_owner(mount, "/user.slice/docker-0123.scope"), geteuid());
	}
	CHECK_EQ_INT(cgroup_path_owner(mount, "/user.slice/gone.scope"), UINT32_MAX);
	rmdir(q);
	rmdir(p);
	rmdir(mount);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/bpfprof-cgroup-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_mountinfo_hybrid);
	RUN(test_mountinfo_pure_v2);
	RUN(test_mountinfo_v1_only);
	RUN(test_mountinfo_escapes_and_junk);
	RUN(test_proc_path);
	RUN(test_proc_path_self);
	RUN(test_path_within);
	RUN(test_container_ids);
	RUN(test_container_id_small_buffer);
	RUN(test_target_errors);
	RUN(test_target_v1_only);
	RUN(test_target_real);
	RUN(test_close_zeroed);
	RUN(test_path_owner);
	remove_tree(tmpdir);
	return test_summary();
}
