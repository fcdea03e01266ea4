// SPDX-License-Identifier: BSD-2-Clause
#include "option_targets.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "../util/option_values.h"

/* Map a pid (or a thread id) to its process id via /proc/PID/status. */
static int pid_to_tgid(unsigned long long pid, uint32_t *tgid)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%llu/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", tgid) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	return found ? 0 : -ESRCH;
}

int options_add_pids(struct options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long pid;
		uint32_t tgid, *np;

		if (parse_uint(tok, INT_MAX, &pid) || pid == 0) {
			log_error(
				"-p %s: '%s' is not a process id; give positive numbers separated "
				"by commas",
				arg, tok);
			err = -EINVAL;
			break;
		}
		if (pid_to_tgid(pid, &tgid)) {
			log_error("-p: no process with pid %llu is running; check the pid with ps",
				  pid);
			err = -ESRCH;
			break;
		}
		np = realloc(o->pids, (o->nr_pids + 1) * sizeof(*np));
		if (!np) {
			err = -ENOMEM;
			break;
		}
		o->pids = np;
		o->pids[o->nr_pids++] = tgid;
	}
	free(copy);
	return err;
}

char *options_join_args(char **argv, int argc)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	*p = '\0';
	return s;
}

int options_describe_target(struct options *o)
{
	size_t len = 64 + o->nr_pids * 12;
	char *s;

	if (o->command) {
		int n = 0;

		while (o->command[n])
			n++;
		char *cmd = options_join_args(o->command, n);

		if (!cmd)
			return -ENOMEM;
		s = malloc(strlen(cmd) + 16);
		if (s)
			sprintf(s, "command: %s", cmd);
		free(cmd);
	} else if (o->nr_cgroups) {
		size_t clen = 32;

		for (size_t i = 0; i < o->nr_cgroups; i++)
			clen += strlen(o->cgroups[i]) + 2;
		s = malloc(clen);
		if (s) {
			char *p = s + sprintf(s, "cgroup%s ", o->nr_cgroups > 1 ? "s" : "");

			for (size_t i = 0; i < o->nr_cgroups; i++)
				p += sprintf(p, "%s%s", i ? ", " : "", o->cgroups[i]);
		}
	} else if (o->all) {
		s = strdup("all processes");
	} else {
		s = malloc(len);
		if (s) {
			char *p = s + sprintf(s, "pid ");

			for (size_t i = 0; i < o->nr_pids; i++)
				p += sprintf(p, "%s%u", i ? "," : "", o->pids[i]);
		}
	}
	o->target_desc = s;
	return s ? 0 : -ENOMEM;
}

/*
 * The long option NAME (LEN bytes) names, the way argp (getopt_long) reads
 * it: the exact name, or else the one option it is an abbreviation of
 * ("--dur" for "--duration"). NULL with *ambiguous set when it abbreviates
 * several.
 */
