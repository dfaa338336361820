/* memopt: the command's entry point. Exit status: 0 valid, 1 the config
 * has errors, 2 usage error or unreadable file. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Every command, in the order `memopt --help` lists them.
 *
 * Adding a command is one entry here: its name, its function (declared in
 * cli.h, written in its own cmd_NAME.c), the usage it prints for -h and
 * after a bad option, and its lines for `memopt --help`. The function gets
 * a zeroed mo_cli (main frees it afterwards) and argv from the command's
 * name on; it lists its options as a mo_cli_option array (cli.h) and calls
 * mo_cli_parse with it, the one option parser. Options that the common
 * ones already cover (-m -d -j -o ...) are reused from
 * mo_cli_common_options; a command's own values go in its own struct,
 * passed to mo_cli_parse as `own`. */
static const mo_cli_command mo_cli_commands[] = {
	{.name = "validate", .answer = mo_cli_validate_answer, .usage = mo_cli_usage, .help =
	 "  validate CONFIG   check every rule; diagnostics as FILE:LINE:COL\n"},
	{.name = "expand", .answer = mo_cli_expand_answer, .usage = mo_cli_usage, .help =
	 "  expand CONFIG     per layer, what each path does and which rule says so\n"},
	{.name = "export", .answer = mo_cli_export_answer, .usage = mo_cli_usage, .help =
	 "  export CONFIG     canonical YAML (a whole training YAML keeps every other byte)\n"},
	{.name = "migrate", .answer = mo_cli_migrate_answer, .usage = mo_cli_usage, .help =
	 "  migrate CONFIG    a graph-mode file's recompute_config rewritten as the\n"
	 "                    recompute / recompute_comm sections, every other byte kept\n"},
	{.name = "presets", .run = mo_cli_presets, .usage = mo_cli_usage, .help =
	 "  presets [NAME]    list the built-in models, or print one as a model file\n"},
	{.name = "import", .run = mo_cli_import, .usage = mo_cli_import_usage, .help =
	 "  import FILE       a model description as a memopt model file: Megatron-LM\n"
	 "                    arguments (launch line, arguments file, model_config.yaml),\n"
	 "                    a model file, a training YAML, a config.json\n"},
	{.name = "serve", .run = mo_cli_serve, .usage = mo_cli_serve_usage, .help =
	 "  serve             HTTP API and web UI (memopt serve --help)\n"},
	{.name = "launch", .run = mo_cli_launch, .usage = mo_cli_launch_usage, .help =
	 "  launch CONFIG [--max-memory SIZE] -- CMD ARGS...\n"
	 "                    validate, then run CMD with MEMOPT_PLAN and MEMOPT_CONFIG\n"
	 "                    (memopt launch --help)\n"},
	{.name = "estimate", .run = mo_cli_estimate, .usage = mo_cli_usage, .help =
	 "  estimate CONFIG   memory per stage and layer, the peak event, the cost\n"},
	{.name = "plan", .run = mo_cli_plan, .usage = mo_cli_plan_usage, .help =
	 "  plan [CONFIG]     the cheapest recompute / swap config that fits a budget\n"
	 "                    (memopt plan --help)\n"},
	{.name = "calibrate", .run = mo_cli_calibrate, .usage = mo_cli_calibrate_usage, .help =
	 "  calibrate RUNS    the time model's device constants fitted to measured step\n"
	 "                    times; writes a device: map (memopt calibrate --help)\n"},
	{.name = "size", .run = mo_cli_size, .usage = mo_cli_size_usage, .help =
	 "  size              the fastest parallel layouts and plans that fit N devices\n"
	 "                    (memopt size --help)\n"},
	{.name = "ledger", .run = mo_cli_ledger, .usage = mo_cli_ledger_usage, .help =
	 "  ledger TRACE [CONFIG]\n"
	 "                    a measured memory trace: peak, alive set, steps, layers;\n"
	 "                    with --model, beside the estimate (memopt ledger --help)\n"},
};

void mo_cli_usage(FILE *f)
{
	fputs("usage: memopt <command> [options] [CONFIG]\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < sizeof mo_cli_commands / sizeof mo_cli_commands[0]; i++)
		fputs(mo_cli_commands[i].help, f);
	fputs("\n"
	      "options:\n"
	      "  -m, --model M     a preset name or a model file (YAML/JSON, HF config.json,\n"
	      "                    training YAML); default: the model in CONFIG itself\n"
	      "  -d, --devices N   device count for files that lack it\n"
	      "  -j, --json        machine-readable output (the shapes of docs/api.md)\n"
	      "  -o, --output FILE write the export / migrate there instead of stdout\n"
	      "      --paths       expand: list every path's action\n"
	      "      --explain     estimate: the formula and tensors behind each figure, and\n"
	      "                    the model values the import assumed\n"
	      "      --work-limit MS  estimate: stop after MS milliseconds (exit 2,\n"
	      "                    error[work-limit]; default 10000, 0: no limit)\n"
	      "  -V, --version     print the version\n"
	      "CONFIG may be - for stdin. Exit: 0 valid, 1 errors in the config, 2 usage.\n",
	      f);
}

static const mo_cli_command *mo_cli_find(const char *name)
{
	for (size_t i = 0; i < sizeof mo_cli_commands / sizeof mo_cli_commands[0]; i++)
		if (strcmp(mo_cli_commands[i].name, name) == 0)
			return &mo_cli_commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	/* diagnostics can run to thousands of lines: buffer stderr (flushed
	 * at exit) instead of one write per character */
	static char errbuf[1 << 16];
	setvbuf(stderr, errbuf, _IOFBF, sizeof errbuf);
	if (argc < 2) {
		mo_cli_usage(stderr);
		return MO_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
		printf("memopt %s\n", MO_VERSION_STRING);
		return MO_EXIT_OK;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		mo_cli_usage(stdout);
		return MO_EXIT_OK;
	}
	const mo_cli_command *cmd = mo_cli_find(name);
	if (!cmd) {
		fprintf(stderr, "memopt: unknown command '%s'\n", name);
		mo_cli_usage(stderr);
		return MO_EXIT_USAGE;
	}
	mo_cli c = {.cmd = cmd->name, .command = cmd};
	int rc = cmd->run ? cmd->run(&c, argc - 1, argv + 1)
			  : mo_cli_one_config(&c, argc - 1, argv + 1, cmd->answer);
	mo_cli_free(&c);
	return rc;
}
