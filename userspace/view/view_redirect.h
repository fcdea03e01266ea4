/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The link `bpfprof view` opens holds the profile's secret, and a command
 * line is readable by every user (/proc/PID/cmdline): the browser is given
 * a file instead, as Jupyter does, a page of the viewer's own that sends it
 * on to the link. The file is 0600 in a new 0700 directory of the viewer's,
 * made for it, and removed when view ends.
 */
#ifndef BPFPROF_VIEW_VIEW_REDIRECT_H
#define BPFPROF_VIEW_VIEW_REDIRECT_H

#include <limits.h>

struct view_redirect {
	char dir[PATH_MAX - 32]; /* the private directory; "" when none */
	char url[PATH_MAX];	 /* file:///.../open.html, for the browser */
};

/*
 * Write the page that redirects to `link` in a new directory under
 * $XDG_RUNTIME_DIR, $TMPDIR or /tmp. 0, or -errno after a one-line warning.
 */
int view_redirect_create(struct view_redirect *r, const char *link);
/* Remove the page and its directory. */
void view_redirect_remove(struct view_redirect *r);

#endif
