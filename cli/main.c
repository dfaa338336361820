/* memopt: the command's entry point. Exit status: 0 valid, 1 the config
 * has errors, 2 usage error or unreadable file. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void mo_cli_usage(FILE *f)
{
	fputs("usage: memopt <command> [options] [CONFIG]\n"
	      "\n"
	      "commands:\n"
	      "  validate CONFIG   check every rule; diagnostics as FILE:LINE:COL\n"
	      "  expand CONFIG     per layer, what each path does and which rule says so\n"
	      "  export CONFIG     canonical YAML (a whole training YAML keeps every other byte)\n"
	      "  migrate CONFIG    a graph-mode file's recompute_config rewritten as the\n"
	      "                    recompute / recompute_comm sections, every other byte kept\n"
	      "  presets [NAME]    list the built-in models, or print one as a model file\n"
	      "  import FILE       a model description as a memopt model file: Megatron-LM\n"
	      "                    arguments (launch line, arguments file, model_config.yaml),\n"
	      "                    a model file, a training YAML, a config.json\n"
	      "  serve             HTTP API and web UI (memopt serve --help)\n"
	      "  launch CONFIG [--max-memory SIZE] -- CMD ARGS...\n"
	      "                    validate, then run CMD with MEMOPT_PLAN and MEMOPT_CONFIG\n"
	      "                    (memopt launch --help)\n"
	      "  estimate CONFIG   memory per stage and layer, the peak event, the cost\n"
	      "  plan [CONFIG]     the cheapest recompute / swap config that fits a budget\n"
	      "                    (memopt plan --help)\n"
	      "  ledger TRACE [CONFIG]\n"
	      "                    a measured memory trace: peak, alive set, steps, layers;\n"
	      "                    with --model, beside the estimate (memopt ledger --help)\n"
	      "\n"
	      "options:\n"
	      "  -m, --model M     a preset name or a model file (YAML/JSON, HF config.json,\n"
	      "                    training YAML); default: the model in CONFIG itself\n"
	      "  -d, --devices N   device count for files that lack it\n"
	      "  -j, --json        machine-readable output (SPEC 5 shapes)\n"
	      "  -o, --output FILE write the export / migrate there instead of stdout\n"
	      "      --paths       expand: list every path's action\n"
	      "      --explain     estimate: the formula and tensors behind each figure, and\n"
	      "                    the model values the import assumed\n"
	      "      --work-limit MS  estimate: stop after MS milliseconds (exit 2,\n"
	      "                    error[work-limit]; default: no limit)\n"
	      "  -V, --version     print the version\n"
	      "CONFIG may be - for stdin. Exit: 0 valid, 1 errors in the config, 2 usage.\n",
	      f);
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
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
		printf("memopt %s\n", MO_VERSION_STRING);
		return MO_EXIT_OK;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		mo_cli_usage(stdout);
		return MO_EXIT_OK;
	}
	if (!strcmp(cmd, "serve"))
		return mo_cli_serve(argc - 1, argv + 1);
	if (!strcmp(cmd, "launch"))
		return mo_cli_launch(argc - 1, argv + 1);
	if (!strcmp(cmd, "estimate")) {
		mo_cli c = {.cmd = cmd};
		int rc = mo_cli_estimate(&c, argc - 1, argv + 1);
		mo_cli_free(&c);
		return rc;
	}
	if (!strcmp(cmd, "ledger")) {
		mo_cli c = {.cmd = cmd};
		int rc = mo_cli_ledger(&c, argc - 1, argv + 1);
		mo_cli_free(&c);
		return rc;
	}
	if (!strcmp(cmd, "import")) {
		mo_cli c = {.cmd = cmd};
		int rc = mo_cli_import(&c, argc - 1, argv + 1);
		mo_cli_free(&c);
		return rc;
	}
	if (!strcmp(cmd, "plan")) {
		mo_cli c = {.cmd = cmd};
		int rc = mo_cli_plan(&c, argc - 1, argv + 1);
		mo_cli_free(&c);
		return rc;
	}
	if (strcmp(cmd, "validate") && strcmp(cmd, "expand") && strcmp(cmd, "export") &&
	    strcmp(cmd, "migrate") && strcmp(cmd, "presets")) {
		fprintf(stderr, "memopt: unknown command '%s'\n", cmd);
		mo_cli_usage(stderr);
		return MO_EXIT_USAGE;
	}
	mo_cli c = {.cmd = cmd};
	int rc = mo_cli_check_command(&c, argc - 1, argv + 1);
	mo_cli_free(&c);
	return rc;
}
