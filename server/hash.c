/* The server's one hash: FNV-1a, 64 bits, unkeyed as the three copies it replaces were, for
 * the ETags of answers and static files (a tag only names a body) and the client table's
 * buckets. The API's response cache, whose keys any client chooses, keys a SipHash of its own
 * (api/rcache.c). */
#include "srv_internal.h"

MO_WRAPS uint64_t mo_srv_hash(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}
