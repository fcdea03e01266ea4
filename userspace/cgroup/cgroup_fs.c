// SPDX-License-Identifier: BSD-2-Clause
/*
 * The cgroup v2 hierarchy through the file system: its mount point from
 * mountinfo, --cgroup arguments resolved to directories with their id and
 * depth, and the "0::" line of /proc/PID/cgroup.
 */
#include "cgroup_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* One line of mountinfo (proc(5)), the fields this file needs, escapes decoded. */
struct mount_row {
	char root[PATH_MAX];  /* field 4: the directory of the file system mounted here */
	char point[PATH_MAX]; /* field 5: the mount point */
	char fstype[64];      /* the first field after the " - " separator */
};

/*
 * Decode mountinfo's octal escapes (space is \040, tab \011, newline \012,
 * backslash \134) of `src` into `dst`; false when it does not fit.
 */
static bool unescape_octal(const char *src, char *dst, size_t cap)
{
	size_t n = 0;

	while (*src) {
		char c = *src++;

		if (c == '\\' && src[0] >= '0' && src[0] <= '3' && src[1] >= '0' && src[1] <= '7' &&
		    src[2] >= '0' && src[2] <= '7') {
			c = (char)((src[0] - '0') << 6 | (src[1] - '0') << 3 | (src[2] - '0'));
			src += 3;
		}
		if (n + 1 >= cap)
			return false;
		dst[n++] = c;
	}
	dst[n] = '\0';
	return true;
}

/* Split one mountinfo line (modified in place); false when it is malformed or too long. */
static bool parse_mount_row(char *line, struct mount_row *r)
{
	char *fields[6], *save = NULL, *tok;
	size_t nf = 0;

	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok && nf < 6; tok = strtok_r(NULL, " ", &save))
		fields[nf++] = tok;
	if (nf < 6)
		return false;
	/* Optional fields ("shared:1", ...) come after the options, up to a lone "-". */
	while (tok && strcmp(tok, "-"))
		tok = strtok_r(NULL, " ", &save);
	tok = tok ? strtok_r(NULL, " ", &save) : NULL;
	if (!tok)
		return false;
	return unescape_octal(fields[3], r->root, sizeof(r->root)) &&
	       unescape_octal(fields[4], r->point, sizeof(r->point)) &&
	       unescape_octal(tok, r->fstype, sizeof(r->fstype));
}

/*
 * Call `fn` on every well-formed row until it returns true. 0 (whether or
 * not it stopped), or -errno when the file cannot be read.
 */
static int mountinfo_each(const char *path, bool (*fn)(const struct mount_row *r, void *ctx),
			  void *ctx)
{
	struct mount_row *r = malloc(sizeof(*r));
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!r || !f) {
		err = !r ? -ENOMEM : -errno;
		goto out;
	}
	while (getline(&line, &cap, f) >= 0)
		if (parse_mount_row(line, r) && fn(r, ctx))
			goto out;
	if (ferror(f))
		err = -EIO;
out:
	free(line);
	free(r);
	if (f)
		fclose(f);
	return err;
}

struct first_cgroup2 {
	struct mount_row *out;
	bool found;
};

static bool take_first_cgroup2(const struct mount_row *r, void *vctx)
{
	struct first_cgroup2 *ctx = vctx;

	if (strcmp(r->fstype, "cgroup2"))
		return false;
	*ctx->out = *r;
	ctx->found = true;
	return true;
}

/* The first cgroup2 mount: 0, -ENOENT for none, or -errno. */
static int cgroup2_mount_row(const char *mountinfo_path, struct mount_row *out)
{
	struct first_cgroup2 ctx = { out, false };
	int err = mountinfo_each(mountinfo_path, take_first_cgroup2, &ctx);

	if (err)
		return err;
	return ctx.found ? 0 : -ENOENT;
}

int cgroup2_mount_from_mountinfo(const char *mountinfo_path, char *out, size_t len)
{
	struct mount_row *r = malloc(sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	err = cgroup2_mount_row(mountinfo_path, r);
	if (!err && strlen(r->point) >= len)
		err = -ENAMETOOLONG;
	if (!err)
		strcpy(out, r->point);
	free(r);
	return err;
}

bool cgroup_path_within(const char *path, const char *ancestor)
{
	size_t n = strlen(ancestor);

	while (n && ancestor[n - 1] == '/')
		n--;
	if (!n)
		return true;
	return !strncmp(path, ancestor, n) && (path[n] == '\0' || path[n] == '/');
}

struct containing_mount {
	const char *path;
	struct mount_row *out;
	size_t best_len;
	bool found;
};

/* The deepest mount point above the path; of equal ones the last, which is on top. */
static bool take_containing(const struct mount_row *r, void *vctx)
{
	struct containing_mount *ctx = vctx;
	size_t len = strlen(r->point);

	if (cgroup_path_within(ctx->path, r->point) && (!ctx->found || len >= ctx->best_len)) {
		*ctx->out = *r;
		ctx->best_len = len;
		ctx->found = true;
	}
	return false;
}

static bool mount_containing(const char *mountinfo_path, const char *path, struct mount_row *out)
{
	struct containing_mount ctx = { path, out, 0, false };

	return !mountinfo_each(mountinfo_path, take_containing, &ctx) && ctx.found;
}

static uint32_t path_depth(const char *path)
{
	uint32_t n = 0;

	for (const char *s = path; *s; s++)
		if (*s != '/' && (s == path || s[-1] == '/'))
			n++;
	return n;
}

/*
 * The cgroup id, as bpf_get_current_cgroup_id() gives it: cgroup2 file
 * handles are the 8-byte kernfs node id (kernfs_encode_fh), which is also
 * st_ino on 64-bit kernels; st_ino serves when handles are not supported.
 */
static uint64_t cgroup_id_of(int fd, const struct stat *st)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	int mount_id;
	uint64_t id;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes == sizeof(id)) {
		memcpy(&id, h.fh.f_handle, sizeof(id));
		return id;
	}
	return (uint64_t)st->st_ino;
}

struct resolve_ctx {
	const char *arg;
	const char *mnt; /* the v2 mount point */
	char *err;
	size_t errlen;
};

static int fail(const struct resolve_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct resolve_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!c->err || !c->errlen)
		return code;
	if (c->arg)
		n = snprintf(c->err, c->errlen, "--cgroup %s: ", c->arg);
	if (n < 0 || (size_t)n >= c->errlen)
		return code;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

static int fail_missing(const struct resolve_ctx *c)
{
	return fail(c, -ENOENT,
		    "no such cgroup under the cgroup v2 mount %s; list them with: ls %s", c->mnt,
		    c->mnt);
}

/* "is proc", "is cgroup (a cgroup v1 hierarchy)": what the directory is instead. */
static int fail_not_cgroup2(const struct resolve_ctx *c, const char *mountinfo_path,
			    const char *canon, unsigned long f_type)
{
	struct mount_row *r = malloc(sizeof(*r));
	char fs[96];

	if (r && mount_containing(mountinfo_path, canon, r))
		snprintf(fs, sizeof(fs), "%s%s", r->fstype,
			 strcmp(r->fstype, "cgroup") ? "" : ", a cgroup v1 hierarchy");
	else
		snprintf(fs, sizeof(fs), "type 0x%lx", f_type);
	free(r);
	return fail(c, -EINVAL,
		    "not a cgroup v2 directory (filesystem is %s); give a directory "
		    "under %s",
		    fs, c->mnt);
}

/* Which directory the argument names, by the rule in cgroup_fs.h; 0 or a failure. */
static int candidate_dir(const struct resolve_ctx *c, char *out, size_t cap)
{
	const char *rel = c->arg;
	struct stat st;
	int n;

	if (c->arg[0] == '/' && cgroup_path_within(c->arg, c->mnt)) {
		n = snprintf(out, cap, "%s", c->arg);
	} else {
		while (*rel == '/')
			rel++;
		n = snprintf(out, cap, "%s%s%s", c->mnt, *rel ? "/" : "", rel);
		if (n >= 0 && (size_t)n < cap && lstat(out, &st) && c->arg[0] == '/' &&
		    !lstat(c->arg, &st))
			n = snprintf(out, cap, "%s", c->arg);
	}
	if (n < 0 || (size_t)n >= cap)
		return fail(c, -ENAMETOOLONG, "the path is too long");
	return 0;
}

/*
 * t->path and t->level from t->dir: the root of the cgroup2 mount holding
 * it (mountinfo's field 4: "/" unless it is a bind mount of a sub-cgroup)
 * plus the part below its mount point. That mount is the deepest one above
 * the directory; `v2`, the first cgroup2 mount, when mountinfo has no
 * better answer. 0, -ENOENT when it is on no cgroup2 mount, or -ENOMEM.
 */
static int set_cgroup_path(struct cgroup_target *t, const char *mountinfo_path,
			   const struct mount_row *v2)
{
	struct mount_row *own = malloc(sizeof(*own));
	const struct mount_row *mnt = v2;
	const char *below, *root;
	int err = 0;

	if (!own)
		return -ENOMEM;
	if (mount_containing(mountinfo_path, t->dir, own) && !strcmp(own->fstype, "cgroup2"))
		mnt = own;
	else if (!cgroup_path_within(t->dir, v2->point))
		err = -ENOENT;
	if (!err) {
		below = t->dir + (strcmp(mnt->point, "/") ? strlen(mnt->point) : 0);
		root = strcmp(mnt->root, "/") ? mnt->root : "";
		if (asprintf(&t->path, "%s%s", root, *root || *below ? below : "/") < 0) {
			t->path = NULL;
			err = -ENOMEM;
		}
	}
	free(own);
	if (!err)
		t->level = path_depth(t->path);
	return err;
}

/* Everything after the v2 mount is known: canonicalise, check, open, identify. */
static int open_dir(struct cgroup_target *t, const struct resolve_ctx *c,
		    const char *mountinfo_path, const char *cand, const struct mount_row *v2)
{
	char canon[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	int err;

	if (!realpath(cand, canon)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return fail_missing(c);
		return fail(c, -errno, "cannot resolve %s: %s", cand, strerror(errno));
	}
	t->fd = open(canon, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->fd < 0) {
		err = -errno;
		if (err != -ENOTDIR)
			return fail(c, err, "cannot open %s: %s", canon, strerror(-err));
		if (!statfs(canon, &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC) {
			char *slash = strrchr(canon, '/');

			if (slash && slash != canon)
				*slash = '\0';
			return fail(c, -ENOTDIR,
				    "a file inside a cgroup, not a cgroup; give the cgroup's "
				    "directory, %s",
				    canon);
		}
		if (statfs(canon, &sfs))
			sfs.f_type = 0;
		return fail_not_cgroup2(c, mountinfo_path, canon, (unsigned long)sfs.f_type);
	}
	if (fstatfs(t->fd, &sfs) || fstat(t->fd, &st))
		return fail(c, -errno, "cannot stat %s: %s", canon, strerror(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return fail_not_cgroup2(c, mountinfo_path, canon, (unsigned long)sfs.f_type);
	t->dir = strdup(canon);
	if (!t->dir)
		return fail(c, -ENOMEM, "out of memory");
	err = set_cgroup_path(t, mountinfo_path, v2);
	if (err == -ENOENT)
		return fail(c, err,
			    "%s is on no cgroup2 mount listed in %s; give a directory under %s",
			    canon, mountinfo_path, c->mnt);
	if (err)
		return fail(c, err, "out of memory");
	t->id = cgroup_id_of(t->fd, &st);
	return 0;
}

int cgroup_target_open(struct cgroup_target *t, const char *mountinfo_path, const char *arg,
		       char *err, size_t errlen)
{
	struct resolve_ctx c = { arg, NULL, err, errlen };
	struct mount_row *row;
	char *cand;
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (err && errlen)
		err[0] = '\0';
	if (!arg || !arg[0]) {
		c.arg = NULL;
		return fail(&c, -EINVAL,
			    "--cgroup needs a cgroup: a path below the cgroup v2 "
			    "mount, or relative to it (e.g. /system.slice)");
	}
	row = malloc(sizeof(*row));
	cand = malloc(PATH_MAX);
	if (!row || !cand) {
		ret = fail(&c, -ENOMEM, "out of memory");
		goto out;
	}
	ret = cgroup2_mount_row(mountinfo_path, row);
	if (ret == -ENOENT) {
		c.arg = NULL;
		ret = fail(
			&c, -EOPNOTSUPP,
			"this host has no cgroup v2 hierarchy mounted (cgroup v1 only); mount one "
			"(mount -t cgroup2 none /sys/fs/cgroup/unified) or boot with "
			"systemd.unified_cgroup_hierarchy=1");
		goto out;
	}
	if (ret) {
		ret = fail(&c, ret, "cannot read the mount table %s: %s", mountinfo_path,
			   strerror(-ret));
		goto out;
	}
	c.mnt = row->point;
	ret = candidate_dir(&c, cand, PATH_MAX);
	if (!ret)
		ret = open_dir(t, &c, mountinfo_path, cand, row);
out:
	if (ret) {
		/* open_dir may have opened it before failing; fd 0 included. */
		if (t->fd >= 0)
			close(t->fd);
		t->fd = -1;
		cgroup_target_close(t);
	}
	free(cand);
	free(row);
	return ret;
}

void cgroup_target_close(struct cgroup_target *t)
{
	/* fd is only ours once open_dir ran: a zero-filled struct must not close stdin. */
	if (t->fd > 0 || (t->fd == 0 && t->dir))
		close(t->fd);
	t->fd = -1;
	free(t->dir);
	free(t->path);
	t->dir = t->path = NULL;
}

/* The whole of a small /proc file; -ENOENT when the process is gone. */
static int read_whole(const char *path, char **out, size_t *len)
{
	size_t cap = 1024, n = 0;
	char *buf = malloc(cap + 1);
	int fd, err = 0;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return errno == ESRCH ? -ENOENT : -errno;
	}
	while ((r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0) {
			err = errno == ESRCH ? -ENOENT : -errno;
			break;
		}
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + 1);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int cgroup_read_proc_path(const char *proc_root, uint32_t pid, char **out)
{
	char path[PATH_MAX], *buf = NULL, *line, *end;
	size_t len = 0;
	int err;

	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	err = read_whole(path, &buf, &len);
	if (err)
		return err;
	err = -ENODATA;
	/* The v2 line is hierarchy 0 with no controllers; v1 lines have a nonzero id. */
	for (line = buf; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len;
		if (end - line >= 3 && !memcmp(line, "0::", 3)) {
			*out = strndup(line + 3, (size_t)(end - line - 3));
			err = *out ? 0 : -ENOMEM;
			break;
		}
	}
	free(buf);
	return err;
}

uint32_t cgroup_path_owner(const char *mount, const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t base;
	int n;

	n = snprintf(dir, sizeof(dir), "%s%s%s", mount, path[0] == '/' ? "" : "/", path);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return UINT32_MAX;
	base = strlen(mount);
	/* From the cgroup up to the mount: the lowest directory that is not root's names it. */
	for (;;) {
		char *slash;

		if (lstat(dir, &st) || !S_ISDIR(st.st_mode))
			return UINT32_MAX;
		if (st.st_uid != 0)
			return (uint32_t)st.st_uid;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < base)
			return 0;
		*slash = '\0';
	}
}
