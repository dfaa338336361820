/* steplog: measured per-iteration times read from training logs
 * (memopt/steplog.h). steplog_line.c reads the fields of one line;
 * steplog.c walks the lines, keeps the times and works out the statistic. */
#ifndef MEMOPT_STEPLOG_INTERNAL_H
#define MEMOPT_STEPLOG_INTERNAL_H

#include "util/util.h"

#include <memopt/steplog.h>

#include <stdbool.h>
#include <stdint.h>

/* One line of the log: its bytes (no newline) and its 1-based number. */
typedef struct steplog_span {
	const char *p;
	size_t len;
	int64_t no;
} steplog_span;

/* Reads the time line in s into *t. Returns 1 when s is a time line, 0
 * when it is not, -1 with err (MO_ERR_INVALID at the bad field's line and
 * column) when it is one with a malformed field. */
int steplog_line(mo_steplog_time *t, const steplog_span *s, mo_error *err);

#endif
