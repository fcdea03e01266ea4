// SPDX-License-Identifier: BSD-2-Clause
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* openat2 fails with EAGAIN when a rename raced its ".." checks: try again a few times. */
#define OPENAT2_RETRIES 8

/* Keep `fd` only if it is a regular file. */
static int keep_if_regular(int fd)
{
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int open_regular(const char *path, int extra)
{
	return keep_if_regular(open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | extra));
}

int open_regular_in_root(const char *proc_root, pid_t pid, const char *path, int extra)
{
#ifdef SYS_openat2
	struct open_how how = {
		.flags = (unsigned long long)(O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | extra),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root_path[PATH_MAX];
	int root, fd = -1, err;

	if (snprintf(root_path, sizeof(root_path), "%s/%d/root", proc_root, (int)pid) >=
	    (int)sizeof(root_path))
		return -ENAMETOOLONG;
	/* The magic link itself is ours to follow: it is the process's root. */
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	/* Absolute paths are taken relative to `root` under RESOLVE_IN_ROOT. */
	for (int i = 0; i < OPENAT2_RETRIES; i++) {
		fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	err = fd < 0 ? -errno : 0;
	close(root);
	if (err)
		return err;
	return keep_if_regular(fd);
#else
	(void)proc_root;
	(void)pid;
	(void)path;
	(void)extra;
	return -ENOSYS;
#endif
}
