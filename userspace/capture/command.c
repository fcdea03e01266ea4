// SPDX-License-Identifier: BSD-2-Clause
#include "command.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/log.h"

int command_prepare(struct command *c, char **argv)
{
	int go[2], errp[2];
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->go_fd = c->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char byte;
		int e;

		close(go[1]);
		close(errp[0]);
		/* bpfprof gone before it released us: do not run unprofiled. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		/* The profiler's own signal mask and handlers must not leak into the command. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, 0);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = errp[0];
	return 0;
}

int command_start(struct command *c, char **argv)
{
	char byte = 1;
	int child_errno;
	ssize_t n;

	if (write(c->go_fd, &byte, 1) != 1) {
		log_error("cannot start '%s': the held child is gone (%s)", argv[0],
			  strerror(errno));
		return -errno;
	}
	close(c->go_fd);
	c->go_fd = -1;
	/* EOF means exec succeeded (the pipe was close-on-exec). */
	do {
		n = read(c->err_fd, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(child_errno)) {
		waitpid(c->pid, &c->status, 0);
		c->exited = true;
		log_error("cannot run '%s': %s; check the command name and PATH", argv[0],
			  strerror(child_errno));
		return child_errno > 0 ? -child_errno : -EIO;
	}
	return 0;
}

bool command_poll_exit(struct command *c)
{
	if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
		c->exited = true;
	return c->exited;
}

void command_abort(struct command *c)
{
	if (c->pid > 0 && !c->exited) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->status, 0);
		c->exited = true;
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
}
