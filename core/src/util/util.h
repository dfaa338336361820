/* util: what every core module builds on: the per-document arena, the capped
 * growable buffer, diagnostics and errors, sizes. Depends on nothing but the
 * public header. */
#ifndef MEMOPT_UTIL_H
#define MEMOPT_UTIL_H

#include "memopt/memopt.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- arena: one per parsed document / model / plan ---------------------- */

typedef struct mo_arena mo_arena;
mo_arena *arena_new(void);
void arena_free(mo_arena *a);
/* The arena's layout, for the inline fast path below (arena.c owns it). */
#define MO_ARENA_ALIGN 16
struct mo_chunk {
	struct mo_chunk *next;
	size_t used, size; /* both multiples of MO_ARENA_ALIGN */
	_Alignas(MO_ARENA_ALIGN) unsigned char data[];
};
struct mo_arena {
	struct mo_chunk *head;
};
/* The out-of-line path of arena_alloc_raw (a new chunk, size 0, NULL a). */
void *arena_alloc_slow(mo_arena *a, size_t size);
/* Like arena_alloc, without the zeroing: for bytes about to be written.
 * Inline when the head chunk has room: the free space is a multiple of the
 * alignment, so 1 <= size <= free means the rounded size fits too. */
static inline void *arena_alloc_raw(mo_arena *a, size_t size)
{
	struct mo_chunk *c;
	if (a && (c = a->head) != NULL && size != 0 &&
	    size <= c->size - c->used) {
		void *p = c->data + c->used;
		c->used += (size + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
		return p;
	}
	return arena_alloc_slow(a, size);
}
/* Gives back the end of p's block (old bytes) past its first n bytes when
 * it is the arena's last allocation (else keeps it whole). */
static inline void arena_shrink(mo_arena *a, void *p, size_t old, size_t n)
{
	struct mo_chunk *c = a ? a->head : NULL;
	size_t ro = (old + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	size_t rn = (n + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	if (c && rn <= ro && (unsigned char *)p + ro == c->data + c->used)
		c->used -= ro - rn;
}
/* Zeroed memory; NULL on failure. Freed all at once with the arena. */
static inline void *arena_alloc(mo_arena *a, size_t size)
{
	void *p = arena_alloc_raw(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}
char *arena_strndup(mo_arena *a, const char *s, size_t n);
char *arena_strdup(mo_arena *a, const char *s);
/* The n parts (lens[i] bytes each) joined, NUL-terminated: the printf-free
 * way to build paths in hot code. */
char *arena_concat(mo_arena *a, const char *const *parts, const size_t *lens, size_t n);
/* "name[i]" (printf-free). */
char *arena_indexed(mo_arena *a, const char *name, size_t i);
char *arena_printf(mo_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- attachments ---------------------------------------------------------
 * A slot where one module keeps its cache on another module's object, with
 * the destructor that frees it: the owner frees what it does not know (the
 * model frees the estimator's and resolve's caches) without including those modules. */

typedef struct mo_attachment {
	void *data;
	void (*destroy)(void *data);
} mo_attachment;

/* Frees what is attached (if anything) and empties the slot. */
static inline void attachment_clear(mo_attachment *slot)
{
	if (slot->data && slot->destroy)
		slot->destroy(slot->data);
	slot->data = NULL;
	slot->destroy = NULL;
}

/* ---- growable buffer with a cap (curl's dynbuf) ------------------------ */

typedef struct mo_buf {
	char *data;
	size_t len, cap, max; /* max 0 = no cap */
	bool failed;          /* an append failed (cap or memory) */
} mo_buf;
void buf_init(mo_buf *b, size_t max);
void buf_free(mo_buf *b);
bool buf_append(mo_buf *b, const char *s, size_t n);
bool buf_puts(mo_buf *b, const char *s);
bool buf_printf(mo_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hands the NUL-terminated data to the caller (free()). */
char *buf_take(mo_buf *b, size_t *len);

/* ---- diagnostics -------------------------------------------------------- */

/* Adds a diagnostic; strings are copied. `path` may be NULL. Returns the
 * stored diagnostic (for adding a hint) or NULL on memory failure. */
mo_diag *diags_add(mo_diags *d, mo_severity sev, const char *code,
		      const char *file, int line, int column,
		      const char *path, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
void diag_set_hint(mo_diags *d, mo_diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The layers a diagnostic is about ("8-11, 14"), copied. */
void diag_set_layers(mo_diags *d, mo_diag *diag, const char *layers);

/* Levenshtein distance, capped: returns cap+1 when larger. */
size_t edit_distance(const char *a, const char *b, size_t cap);
/* Closest candidate within max(2, strlen(word)/3) edits, or NULL. */
const char *did_you_mean(const char *word, const char *const *cands,
			    size_t n);

void error_set(mo_error *err, mo_error_code code, int line, int column,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The va_list form of error_set (for modules with their own position helpers). */
void error_vset(mo_error *err, mo_error_code code, int line, int column, const char *fmt,
		va_list ap) __attribute__((format(printf, 5, 0)));

/* ---- saturating byte arithmetic ----------------------------------------------
 * Byte figures saturate instead of wrapping (or, from a double, instead of
 * an out-of-range conversion, undefined in C): a saturated figure is far
 * above MO_MAX_BYTES, and the estimate refuses any figure above that. */

#define MO_MAX_BYTES ((uint64_t)1 << 60) /* 1 EiB: above any device, any model */

/* A public accessor: one field of a handle, or zero (NULL, false) for a NULL handle, as the
 * public headers promise of every accessor; one definition keeps that promise alike everywhere. */
#define MO_ACCESSOR(type, name, handle, field)                                                   \
	type name(const handle *h) { return h ? h->field : 0; }

static inline uint64_t u64_of(double x)
{
	if (!(x > 0)) /* negative, zero, NaN */
		return 0;
	return x < 0x1p64 ? (uint64_t)x : UINT64_MAX;
}

static inline uint64_t u64_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t u64_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* a - b modulo 2^64 read as a signed difference: the closed form's unit
 * figures are differences of bucket states, and their range is checked
 * before any is used (estimate_schedule.c sched_figure_fits). */
static inline int64_t u64_diff(uint64_t a, uint64_t b)
{
	uint64_t r;
	(void)__builtin_sub_overflow(a, b, &r);
	return (int64_t)r;
}

/* ---- arithmetic that wraps on purpose ---------------------------------------
 * `make check` builds with clang's unsigned-integer-overflow and
 * unsigned-shift-base checks (build-ubsan), so an unsigned size that wraps
 * or loses bits to a shift stops the tests: sizes use the helpers above.
 * MO_WRAPS marks the few functions whose arithmetic is modulo 2^64 by
 * design (hashes: FNV-1a, multiplicative, SWAR sums) and nothing else.
 * GCC has neither check (and warns about the unknown names). */
#ifndef MO_WRAPS /* the faces' api.h has the same */
#if defined(__clang__)
#define MO_WRAPS                                                               \
	__attribute__((                                                        \
	    no_sanitize("unsigned-integer-overflow", "unsigned-shift-base")))
#else
#define MO_WRAPS
#endif
#endif

/* ---- hashing (hash.c): the one hash of the tables and memos ---------------- */

/* FNV-1a's offset basis: the h to start from. */
#define MO_HASH_SEED 1469598103934665603ull
/* One FNV-1a step over a 64-bit value (a count, an enum, two packed words). */
uint64_t hash_u64(uint64_t h, uint64_t v);
/* FNV-1a over n bytes / a NUL-terminated string, continuing from h. */
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t hash_str(uint64_t h, const char *s);
/* For keys that may be long: the length and the first and last eight bytes
 * only (equal keys hash equal; a collision costs a memcmp). Fold the high
 * bits down before masking (h ^ h >> 29). */
uint64_t hash_sampled(const void *p, size_t n);

/* ---- the thread's work budget (budget.c) -------------------------------- */

/* True once this thread's budget is spent (cheap: looks at the clock every
 * few hundred calls). Loops poll it and stop. */
bool budget_spent(void);
/* budget_spent looking at the clock and the callback on every call:
 * for a poll before work that may take milliseconds (a PCRE2 match). */
bool budget_spent_now(void);
/* A PCRE2 match ran into its per-call limit: counted against the budget,
 * which is spent after a few dozen. */
void budget_limit_hit(void);
/* Fills err (MO_ERR_BUDGET when its deadline passed or patterns used it up,
 * MO_ERR_CANCELLED when the callback stopped it) and returns true when the
 * budget is spent. */
bool budget_error(mo_error *err);

/* The va_list form of diags_add (for modules that add their own
 * position helpers, e.g. yaml's diags_add_at). */
mo_diag *diags_vadd(mo_diags *d, mo_severity sev, const char *code,
		       const char *file, int line, int column, const char *path,
		       const char *fmt, va_list ap) __attribute__((format(printf, 8, 0)));

/* ---- files a model names (file.c) ------------------------------------------ */

enum file_read_status {
	FILE_READ_DONE,
	FILE_READ_UNOPENED,  /* no such file, no permission, ... (errno's words) */
	FILE_READ_IRREGULAR, /* a folder, a device, a FIFO */
	FILE_READ_TOO_LARGE, /* over max */
	FILE_READ_NOMEM,
	FILE_READ_FAILED /* a read error */
};
/* The whole text of a regular file of at most max bytes, NUL-terminated,
 * for the caller to free; NULL otherwise, with *status and *why (the
 * reason in words, a static text). */
char *file_read_bounded(const char *path, size_t max, size_t *len, enum file_read_status *status,
			const char **why);
/* A path a file names, as the program that reads it opens it: `path` as
 * given when absolute or when `dir` is NULL or empty, else under `dir`;
 * then `name` inside it (with one '/' between) when `name` is not NULL.
 * malloc'd; NULL when out of memory. */
char *file_join(const char *dir, const char *path, const char *name);

/* ---- JSON errors ------------------------------------------------------------ */

/* jansson's message for a failed decode, or memopt's own words where
 * jansson's name its decoding flags (json_words.c). */
struct json_error_t;
const char *json_error_words(const struct json_error_t *je);

#endif
