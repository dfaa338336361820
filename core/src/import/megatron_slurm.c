/* Megatron-LM arguments: the device count of a run SLURM launches. Under
 * `srun` every task is one process, one device (Megatron's world size is
 * SLURM's task count): `--ntasks`, or `--nodes` x `--ntasks-per-node`, from
 * the srun line or else from the batch script's `#SBATCH` directives
 * (sbatch(1): directives before the first command; srun(1): a step takes the
 * allocation's counts unless it gives its own). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum megatron_slurm_count { SLURM_OTHER, SLURM_TASKS, SLURM_NODES, SLURM_PER_NODE };

static const struct {
	const char *name;
	enum megatron_slurm_count count;
} mo_megatron_slurm_flags[] = {
	{"--ntasks", SLURM_TASKS},	   {"-n", SLURM_TASKS},
	{"--nodes", SLURM_NODES},	   {"-N", SLURM_NODES},
	{"--ntasks-per-node", SLURM_PER_NODE},
};

static enum megatron_slurm_count megatron_slurm_flag_of(const char *word, size_t n)
{
	for (size_t i = 0; i < sizeof mo_megatron_slurm_flags / sizeof *mo_megatron_slurm_flags;
	     i++) {
		const char *name = mo_megatron_slurm_flags[i].name;
		if (strlen(name) == n && memcmp(word, name, n) == 0)
			return mo_megatron_slurm_flags[i].count;
	}
	return SLURM_OTHER;
}

/* One count: a positive integer (a node range `2-4` is its lower end, what
 * SLURM allocates at least); anything else (a placeholder, a variable)
 * leaves the count unknown. */
static void megatron_slurm_set(struct mo_megatron_slurm *s, enum megatron_slurm_count c,
			       const char *value, int line, int column)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	bool ok = !errno && end != value && (*end == '\0' || *end == '-') && v >= 1 &&
		  v <= MO_MODEL_MAX_DEGREE;
	int64_t *slot = c == SLURM_TASKS ? &s->tasks : c == SLURM_NODES ? &s->nodes : &s->per_node;
	*slot = ok ? v : 0;
	if (!ok)
		s->unknown = true;
	s->given = true;
	s->line = line;
	s->column = column;
}

/* The counts among words [0, n): `--flag=V`, `--flag V`, `-N V`, `-NV`. */
static void megatron_slurm_words(struct mo_megatron_slurm *s, const struct megatron_word *w,
				 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *t = w[i].text;
		const char *eq = strchr(t, '=');
		size_t len = eq ? (size_t)(eq - t) : strlen(t);
		enum megatron_slurm_count c = megatron_slurm_flag_of(t, len);
		const char *value = eq ? eq + 1 : i + 1 < n ? w[i + 1].text : "";
		if (c == SLURM_OTHER && t[0] == '-' && (t[1] == 'n' || t[1] == 'N') && t[2]) {
			c = t[1] == 'n' ? SLURM_TASKS : SLURM_NODES; /* -N128 */
			value = t + 2;
		}
		if (c != SLURM_OTHER)
			megatron_slurm_set(s, c, value, w[i].line, w[i].column);
	}
}

void megatron_read_srun(struct mo_megatron_import *g, const struct megatron_word *w, size_t n)
{
	megatron_slurm_words(&g->srun, w, n);
}

void megatron_read_sbatch_options(struct mo_megatron_import *g, const struct megatron_word *w,
				  size_t n)
{
	megatron_slurm_words(&g->sbatch, w, n);
}

/* `#SBATCH` lines: their words, split at blanks. The caller reports running out of memory
 * (megatron_fail is megatron_args.c's: this file takes nothing from it). */
int megatron_read_sbatch(struct mo_megatron_import *g, const char *text, size_t len,
			 int *oom_line)
{
	static const char tag[] = "#SBATCH";
	int line = 1;
	for (size_t i = 0; i < len; line++) {
		const char *eol = memchr(text + i, '\n', len - i);
		size_t end = eol ? (size_t)(eol - text) : len;
		if (end - i > sizeof tag - 1 && memcmp(text + i, tag, sizeof tag - 1) == 0 &&
		    (text[i + sizeof tag - 1] == ' ' || text[i + sizeof tag - 1] == '\t')) {
			struct megatron_word words[32];
			size_t n = 0;
			for (size_t k = i + sizeof tag - 1; k < end && n < 32;) {
				k += strspn(text + k, " \t\r");
				size_t wl = strcspn(text + k, " \t\r\n");
				if (k + wl > end)
					wl = end - k;
				if (wl == 0)
					break;
				char *copy = arena_strndup(g->arena, text + k, wl);
				if (!copy) {
					*oom_line = line;
					return -1;
				}
				words[n++] = (struct megatron_word){copy, line, (int)(k - i) + 1};
				k += wl;
			}
			megatron_slurm_words(&g->sbatch, words, n);
		}
		i = end + 1;
	}
	return 0;
}

/* One count: srun's when it gives it, else the allocation's. */
static int64_t megatron_slurm_pick(int64_t srun, int64_t sbatch)
{
	return srun > 0 ? srun : sbatch;
}

int64_t megatron_slurm_world(struct mo_megatron_import *g, int *line, int *column)
{
	const struct mo_megatron_slurm *r = &g->srun, *b = &g->sbatch;
	if (!g->srun_launch || r->unknown || b->unknown)
		return 0;
	const struct mo_megatron_slurm *at = r->given ? r : b;
	*line = at->line;
	*column = at->column;
	int64_t tasks = megatron_slurm_pick(r->tasks, r->given && (r->nodes || r->per_node)
							  ? 0 : b->tasks);
	if (tasks > 0)
		return tasks;
	int64_t nodes = megatron_slurm_pick(r->nodes, b->nodes);
	int64_t per = megatron_slurm_pick(r->per_node, b->per_node);
	if (nodes <= 0 && per <= 0)
		return 0;
	return model_mul(nodes > 0 ? nodes : 1, per > 0 ? per : 1);
}
