/* The one hash of the core's tables and memos: FNV-1a, 64 bits, over bytes
 * or over 64-bit values, and for keys that may be long (pattern texts, map
 * keys) a sampled form that reads the length and the first and last eight
 * bytes (a collision there costs one memcmp). Arithmetic modulo 2^64 by
 * design (MO_WRAPS). */
#include "util/util.h"

#include <string.h>

#define MO_FNV_PRIME 1099511628211ull

MO_WRAPS uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return (h ^ v) * MO_FNV_PRIME;
}

MO_WRAPS uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * MO_FNV_PRIME;
	return h;
}

MO_WRAPS uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * MO_FNV_PRIME;
	return h;
}

MO_WRAPS uint64_t hash_sampled(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t a = 0, z = 0;
	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&z, s + n - 8, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			a = a << 8 | s[i];
	}
	return a * 0x9E3779B97F4A7C15ull ^ (z + n) * 0xC2B2AE3D27D4EB4Full;
}
