/* Light answers for the web UI: gzip when the client accepts it. An
 * expand or estimate answer of a deep model is hundreds of KB of JSON
 * whose keys repeat on every layer; gzip takes it to a tenth or less. Only
 * answers of at least MO_SRV_GZIP_MIN bytes are compressed (below that the
 * gzip header and a thread's time cost more than they save), at level 1
 * (the fastest: most of the gain, a few ms per MB). */
#include "srv_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define MO_SRV_GZIP_MIN 1024

/* The q value of a coding in an Accept-Encoding item starting at p (up to
 * its comma): 1 unless ";q=0" (or 0.0, 0.00, 0.000) says otherwise. */
static bool mo_srv_q_zero(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && (q = memchr(q, ';', (size_t)(end - q))) != NULL) {
		q++;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (end - q >= 2 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
			q += 2;
			if (q < end && *q == '0') {
				for (q++; q < end && (*q == '.' || *q == '0'); q++)
					;
				return q >= end || *q == ' ' || *q == ';' || *q == '\t';
			}
			return false;
		}
	}
	return false;
}

bool mo_srv_accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n;

		if (!end)
			end = p + strlen(p);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		n = strcspn(p, " \t;,");
		if (((n == 4 && strncasecmp(p, "gzip", 4) == 0) || (n == 1 && *p == '*')) &&
		    !mo_srv_q_zero(p, end))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

bool mo_srv_gzip_worth(size_t len)
{
	return len >= MO_SRV_GZIP_MIN;
}

int mo_srv_gzip(char **body, size_t *len)
{
	z_stream z;
	uLong cap;
	char *out;
	int rc;

	memset(&z, 0, sizeof z);
	/* 15 + 16: a gzip wrapper (RFC 1952), the window zlib defaults to */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&z, (uLong)*len);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)*body;
	z.avail_in = (uInt)*len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END || z.total_out >= *len) {
		free(out); /* no smaller: sent as it is */
		return -1;
	}
	free(*body);
	*body = out;
	*len = z.total_out;
	return 0;
}
