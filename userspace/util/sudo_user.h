/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The user who ran `sudo bpfprof`: files and directories bpfprof creates
 * for them are given to them, or at 0700 they could not even list them.
 */
#ifndef BPFPROF_SUDO_USER_H
#define BPFPROF_SUDO_USER_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * When running as root under sudo: true, with SUDO_UID in *uid and SUDO_GID
 * in *gid ((gid_t)-1, "unchanged", when it is missing or malformed).
 * False otherwise, or when SUDO_UID is malformed.
 */
bool sudo_user_ids(uid_t *uid, gid_t *gid);

#endif
