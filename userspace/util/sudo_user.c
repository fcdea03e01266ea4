// SPDX-License-Identifier: BSD-2-Clause
#include "sudo_user.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

bool sudo_user_ids(uid_t *uid, gid_t *gid)
{
	const char *uid_s = getenv("SUDO_UID"), *gid_s = getenv("SUDO_GID");
	unsigned long u, g = (unsigned long)-1;
	char *end;

	if (geteuid() != 0 || !uid_s || !uid_s[0])
		return false;
	errno = 0;
	u = strtoul(uid_s, &end, 10);
	if (errno || *end || u >= UINT_MAX)
		return false;
	if (gid_s && gid_s[0]) {
		g = strtoul(gid_s, &end, 10);
		if (errno || *end || g >= UINT_MAX)
			g = (unsigned long)-1;
	}
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return true;
}
