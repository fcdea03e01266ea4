// SPDX-License-Identifier: BSD-2-Clause
#include "view_redirect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"

#define PAGE "open.html"

/* Where the private directory goes: the viewer's runtime directory when there is one. */
static const char *parent_dir(void)
{
	const char *dirs[] = { getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (dirs[i] && dirs[i][0] == '/' && !stat(dirs[i], &st) && S_ISDIR(st.st_mode) &&
		    !access(dirs[i], W_OK | X_OK))
			return dirs[i];
	return "/tmp";
}

/* `link` with the characters that end an HTML attribute or start an entity escaped. */
static void put_attr(FILE *f, const char *link)
{
	for (const char *c = link; *c; c++) {
		if (*c == '&')
			fputs("&amp;", f);
		else if (*c == '"')
			fputs("&quot;", f);
		else if (*c == '<')
			fputs("&lt;", f);
		else
			fputc(*c, f);
	}
}

static int write_page(int fd, const char *link)
{
	FILE *f = fdopen(fd, "w");
	int err;

	if (!f) {
		close(fd);
		return -errno;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
	      "<meta name=\"referrer\" content=\"no-referrer\">"
	      "<meta http-equiv=\"refresh\" content=\"0;url=",
	      f);
	put_attr(f, link);
	fputs("\"><title>bpfprof view</title></head>\n<body><p><a href=\"", f);
	put_attr(f, link);
	fputs("\">Open the profile in the Firefox Profiler</a></p></body></html>\n", f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* The page's file:// URL: the directory's characters outside [A-Za-z0-9/._-] escaped. */
static void page_url(struct view_redirect *r)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t at = (size_t)snprintf(r->url, sizeof(r->url), "file://");

	for (const char *c = r->dir; *c && at + 4 < sizeof(r->url); c++) {
		unsigned char u = (unsigned char)*c;

		if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
		    strchr("/._-", u)) {
			r->url[at++] = (char)u;
		} else {
			r->url[at++] = '%';
			r->url[at++] = hex[u >> 4];
			r->url[at++] = hex[u & 15];
		}
	}
	snprintf(r->url + at, sizeof(r->url) - at, "/" PAGE);
}

int view_redirect_create(struct view_redirect *r, const char *link)
{
	struct stat st;
	int dir, fd, err;

	if (snprintf(r->dir, sizeof(r->dir), "%s/bpfprof-view-XXXXXX", parent_dir()) >=
	    (int)sizeof(r->dir)) {
		r->dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	/* mkdtemp: a new directory, 0700, or none (never one another user made). */
	if (!mkdtemp(r->dir)) {
		err = -errno;
		log_warn("cannot make a private directory for the page that opens the link (%s): "
			 "open the link yourself",
			 strerror(-err));
		r->dir[0] = '\0';
		return err;
	}
	dir = open(r->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = dir < 0 ? -errno : -EPERM;
		goto fail;
	}
	fd = openat(dir, PAGE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : write_page(fd, link);
	if (err)
		goto fail;
	close(dir);
	page_url(r);
	return 0;
fail:
	log_warn("cannot write the page that opens the link in %s (%s): open the link yourself",
		 r->dir, strerror(-err));
	if (dir >= 0)
		close(dir);
	view_redirect_remove(r);
	return err;
}

void view_redirect_remove(struct view_redirect *r)
{
	int dir;

	if (!r->dir[0])
		return;
	dir = open(r->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0) {
		unlinkat(dir, PAGE, 0);
		close(dir);
	}
	rmdir(r->dir);
	r->dir[0] = '\0';
}
