/* The one option parser: every command lists its options as data
 * (cli.h: mo_cli_option) and this file turns the list into getopt_long's
 * tables, checks each value where it enters and stores it. A command's
 * getopt table holds only the options that command takes, so an
 * abbreviation (--ex for --explain) means the same as before the table. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Long-only options get getopt values above any letter. */
enum { MO_CLI_LONG_ONLY = 256, MO_CLI_MAX_OPTIONS = 64 };

int mo_cli_set_work_limit(mo_cli *c, void *own, const char *arg)
{
	char *end;

	(void)own;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || *end || arg[0] < '0' || arg[0] > '9' || v > 86400000ull)
		return -1;
	c->work_ms = v;
	c->work_set = true;
	return 0;
}

const mo_cli_option mo_cli_common_options[] = {
	MO_CLI_OPT_MODEL,
	MO_CLI_OPT_DEVICES,
	MO_CLI_OPT_JSON,
	MO_CLI_OPT_OUTPUT,
	{"paths", 0, MO_ARG_FLAG, false, offsetof(mo_cli, all_paths), 0, 0, NULL, NULL},
	MO_CLI_OPT_HELP,
	{"explain", 0, MO_ARG_FLAG, false, offsetof(mo_cli, explain), 0, 0, NULL, NULL},
	MO_CLI_OPT_WORK_LIMIT,
	MO_CLI_OPT_END};

static bool mo_cli_digits_first(const char *arg)
{
	return arg[0] >= '0' && arg[0] <= '9';
}

/* The value of one option, checked and stored. 0, or -1 when it is out of
 * its range or does not parse. */
static int mo_cli_store(mo_cli *c, const mo_cli_option *o, void *own, const char *arg)
{
	char *at = (char *)(o->own ? own : (void *)c) + o->offset;
	char *end = NULL;
	errno = 0;
	switch (o->kind) {
	case MO_ARG_FLAG: *(bool *)at = true; return 0;
	case MO_ARG_OFF: *(int *)at = 0; return 0;
	case MO_ARG_TEXT: *(const char **)at = arg; return 0;
	case MO_ARG_CALL: return o->call(c, own, arg);
	case MO_ARG_INT: {
		long long v = strtoll(arg, &end, 10);
		if (errno || *end || end == arg || v < o->lo || v > o->hi)
			return -1;
		*(int64_t *)at = v;
		return 0;
	}
	case MO_ARG_UINT:
	case MO_ARG_COUNT: {
		if (!mo_cli_digits_first(arg))
			return -1;
		unsigned long long v = strtoull(arg, &end, 10);
		if (errno || *end || v < o->lo || v > o->hi)
			return -1;
		if (o->kind == MO_ARG_UINT)
			*(unsigned *)at = (unsigned)v;
		else
			*(size_t *)at = (size_t)v;
		return 0;
	}
	case MO_ARG_REAL: {
		double v = strtod(arg, &end);
		if (errno || *end || end == arg || !(v >= o->lo && v <= o->hi))
			return -1;
		*(double *)at = v;
		return 0;
	}
	case MO_ARG_BYTES:
	case MO_ARG_BYTES_Z: {
		uint64_t v;
		if (mo_parse_size(&v, arg) != 0 || v < o->lo || v > o->hi)
			return -1;
		if (o->kind == MO_ARG_BYTES)
			*(uint64_t *)at = v;
		else
			*(size_t *)at = (size_t)v;
		return 0;
	}
	case MO_ARG_HELP: break;
	}
	return -1;
}

static void mo_cli_bad_value(const mo_cli *c, const mo_cli_option *o)
{
	fprintf(stderr, "memopt %s: --%s takes ", c->cmd, o->name);
	if (o->takes)
		fputs(o->takes, stderr);
	else
		fprintf(stderr, "a %s from %.15g to %.15g",
			o->kind == MO_ARG_REAL ? "number" : "count", o->lo, o->hi);
	fputc('\n', stderr);
}

/* getopt_long's tables for opts: longs[] and the short string. */
static int mo_cli_getopt_tables(const mo_cli_option *opts, struct option *longs,
				char *shorts)
{
	size_t n = 0, k = 0;
	for (; opts[n].name; n++) {
		if (n + 1 >= MO_CLI_MAX_OPTIONS)
			return -1;
		const mo_cli_option *o = &opts[n];
		int has_arg = o->kind == MO_ARG_HELP || o->kind == MO_ARG_FLAG || o->kind == MO_ARG_OFF
				      ? no_argument
				      : required_argument;
		longs[n] = (struct option){o->name, has_arg, NULL,
					   o->letter ? o->letter : MO_CLI_LONG_ONLY + (int)n};
		if (o->letter) {
			shorts[k++] = o->letter;
			if (has_arg == required_argument)
				shorts[k++] = ':';
		}
	}
	longs[n] = (struct option){NULL, 0, NULL, 0};
	shorts[k] = '\0';
	return 0;
}

static const mo_cli_option *mo_cli_option_of(const mo_cli_option *opts, int ch)
{
	for (size_t i = 0; opts[i].name; i++)
		if (ch == (opts[i].letter ? opts[i].letter : MO_CLI_LONG_ONLY + (int)i))
			return &opts[i];
	return NULL;
}

int mo_cli_parse(mo_cli *c, const mo_cli_option *opts, void *own, int argc, char **argv)
{
	struct option longs[MO_CLI_MAX_OPTIONS];
	char shorts[2 * MO_CLI_MAX_OPTIONS + 1];
	if (mo_cli_getopt_tables(opts, longs, shorts) != 0) {
		fprintf(stderr, "memopt %s: too many options in its table\n", c->cmd);
		return MO_EXIT_USAGE;
	}
	int ch;
	optind = 0; /* full re-initialisation (glibc) */
	while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const mo_cli_option *o = mo_cli_option_of(opts, ch);
		if (!o) {
			c->command->usage(stderr);
			return MO_EXIT_USAGE;
		}
		if (o->kind == MO_ARG_HELP) {
			c->command->usage(stdout);
			return MO_EXIT_OK;
		}
		if (mo_cli_store(c, o, own, optarg) != 0) {
			mo_cli_bad_value(c, o);
			return MO_EXIT_USAGE;
		}
	}
	return -1;
}
