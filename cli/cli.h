/* The memopt command: subcommands share these helpers. */
#ifndef MEMOPT_CLI_H
#define MEMOPT_CLI_H

#include <memopt/memopt.h>
#include <stdbool.h>
#include <stdio.h>

enum { MO_EXIT_OK = 0, MO_EXIT_INVALID = 1, MO_EXIT_USAGE = 2 };

int mo_cli_serve(int argc, char **argv);

#endif
