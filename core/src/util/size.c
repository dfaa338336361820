/* Sizes as users write them: 58GiB, 64GB, 512MiB, 1.5TB, 1024 (bytes). */
#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *unit;
	double factor;
} mo_units[] = {
	{"", 1},          {"B", 1},
	{"KB", 1e3},      {"MB", 1e6},          {"GB", 1e9},            {"TB", 1e12},
	{"KiB", 1024.0},  {"MiB", 1048576.0},   {"GiB", 1073741824.0},  {"TiB", 1099511627776.0},
	{"K", 1024.0},    {"M", 1048576.0},     {"G", 1073741824.0},    {"T", 1099511627776.0},
};

int mo_parse_size(uint64_t *out, const char *text)
{
	if (!text)
		return -1;
	while (isspace((unsigned char)*text))
		text++;
	if (!isdigit((unsigned char)*text) && *text != '.')
		return -1;
	char *end;
	double v = strtod(text, &end);
	while (isspace((unsigned char)*end))
		end++;
	size_t ulen = strlen(end);
	while (ulen && isspace((unsigned char)end[ulen - 1]))
		ulen--;
	for (size_t i = 0; i < sizeof mo_units / sizeof mo_units[0]; i++) {
		if (strlen(mo_units[i].unit) != ulen || strncasecmp(end, mo_units[i].unit, ulen) != 0)
			continue;
		/* "b" alone would read as bits elsewhere; case-insensitive is fine here */
		double bytes = v * mo_units[i].factor;
		if (!isfinite(bytes) || bytes < 0 || bytes >= 18446744073709551615.0)
			return -1;
		*out = (uint64_t)llround(bytes);
		return 0;
	}
	return -1;
}
