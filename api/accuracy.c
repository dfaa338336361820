/* The measured accuracy of the estimate's rules: the rows of
 * api/accuracy.tsv (built into the binary) for the rules an estimate used,
 * with their median and worst error, so that every answer says which runs
 * back its figure and by how much they missed. */
#include "api_internal.h"
#include "json.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MO_ACC_FIELDS 7
#define MO_ACC_MAX_RUNS 256

/* Splits one line of the table in place into its tab-separated fields;
 * the number of fields, or 0 for a comment or the header. */
static size_t mo_acc_fields(char *line, char **f)
{
	size_t n = 0;

	if (line[0] == '#' || strncmp(line, "rules\t", 6) == 0)
		return 0;
	for (char *p = line; n < MO_ACC_FIELDS; n++) {
		f[n] = p;
		p = strchr(p, '\t');
		if (!p) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	return n;
}

static json_t *mo_acc_row(char **f)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "run", json_string(f[1]));
	json_object_set_new(o, "set", json_string(f[2]));
	json_object_set_new(o, "measured_mib", json_real(strtod(f[3], NULL)));
	json_object_set_new(o, "estimated_mib", json_real(strtod(f[4], NULL)));
	json_object_set_new(o, "error_percent", json_real(strtod(f[5], NULL)));
	json_object_set_new(o, "source", json_string(f[6]));
	return o;
}

static int mo_acc_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median and worst |error| of the runs, and the worst run's name. */
static void mo_acc_summary(json_t *o, json_t *runs, double *abs_err, size_t n)
{
	size_t worst = 0;

	for (size_t i = 1; i < n; i++)
		if (fabs(json_real_value(json_object_get(json_array_get(runs, i), "error_percent"))) >
		    fabs(json_real_value(json_object_get(json_array_get(runs, worst), "error_percent"))))
			worst = i;
	qsort(abs_err, n, sizeof *abs_err, mo_acc_cmp);
	double median = n % 2 ? abs_err[n / 2] : (abs_err[n / 2 - 1] + abs_err[n / 2]) / 2;
	json_object_set_new(o, "median_abs_error_percent", json_real(median));
	json_object_set_new(o, "max_abs_error_percent", json_real(abs_err[n - 1]));
	json_object_set(o, "worst_run", json_object_get(json_array_get(runs, worst), "run"));
}

/* Adds the table's rows for `rules` to runs; their |errors| to abs_err. */
static size_t mo_acc_read(json_t *runs, double *abs_err, const char *rules)
{
	size_t size = 0, n = 0;
	const unsigned char *tsv = mo_api_embedded("api/accuracy.tsv", &size);
	char *text = tsv ? malloc(size + 1) : NULL;

	if (!text)
		return 0;
	memcpy(text, tsv, size);
	text[size] = '\0';
	for (char *line = text, *next; line && *line && n < MO_ACC_MAX_RUNS; line = next) {
		char *f[MO_ACC_FIELDS];
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (mo_acc_fields(line, f) != MO_ACC_FIELDS || strcmp(f[0], rules) != 0)
			continue;
		json_t *row = mo_acc_row(f);
		if (!row || json_array_append_new(runs, row) != 0)
			break;
		abs_err[n++] = fabs(strtod(f[5], NULL));
	}
	free(text);
	return n;
}

/* The table is built in and never changes: a summary answer's figures are
 * kept per rule set after the first (reading the rows into JSON to find
 * the median costs more than the rest of a summary estimate answer). */
#define MO_ACC_CACHED 8
typedef struct {
	char rules[32];
	char worst[256];
	json_int_t runs;
	double median, max;
} mo_acc_figures;

static mo_acc_figures mo_acc_cache[MO_ACC_CACHED];
static size_t mo_acc_cached;
static pthread_mutex_t mo_acc_lock = PTHREAD_MUTEX_INITIALIZER;

static int mo_acc_lookup(const char *rules, mo_acc_figures *out)
{
	int hit = 0;

	pthread_mutex_lock(&mo_acc_lock);
	for (size_t i = 0; i < mo_acc_cached && !hit; i++)
		if (strcmp(mo_acc_cache[i].rules, rules) == 0) {
			*out = mo_acc_cache[i];
			hit = 1;
		}
	pthread_mutex_unlock(&mo_acc_lock);
	return hit;
}

/* Keeps the figures of a full answer o (when its names fit). */
static void mo_acc_remember(const char *rules, const json_t *o)
{
	mo_acc_figures f = {0};
	const char *worst = json_string_value(json_object_get(o, "worst_run"));

	if (strlen(rules) >= sizeof f.rules || (worst && strlen(worst) >= sizeof f.worst))
		return;
	strcpy(f.rules, rules);
	strcpy(f.worst, worst ? worst : "");
	f.runs = json_integer_value(json_object_get(o, "run_count"));
	f.median = json_real_value(json_object_get(o, "median_abs_error_percent"));
	f.max = json_real_value(json_object_get(o, "max_abs_error_percent"));
	pthread_mutex_lock(&mo_acc_lock);
	if (mo_acc_cached < MO_ACC_CACHED)
		mo_acc_cache[mo_acc_cached++] = f;
	pthread_mutex_unlock(&mo_acc_lock);
}

static json_t *mo_acc_from_figures(const mo_acc_figures *f, const char *note)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "rules", json_string(f->rules));
	json_object_set_new(o, "note", json_string(note ? note : ""));
	json_object_set_new(o, "run_count", json_integer(f->runs));
	if (f->runs) {
		json_object_set_new(o, "median_abs_error_percent", json_real(f->median));
		json_object_set_new(o, "max_abs_error_percent", json_real(f->max));
		json_object_set_new(o, "worst_run", json_string(f->worst));
	}
	return o;
}

json_t *mo_json_accuracy(const mo_estimate *e)
{
	return mo_json_accuracy_parts(e, 1);
}

json_t *mo_json_accuracy_parts(const mo_estimate *e, int with_runs)
{
	mo_acc_figures known;
	if (!with_runs && mo_estimate_framework(e) && mo_acc_lookup(mo_estimate_framework(e), &known))
		return mo_acc_from_figures(&known, mo_estimate_rules_note(e));

	const char *rules = mo_estimate_framework(e);
	const char *note = mo_estimate_rules_note(e);
	json_t *o = json_object(), *runs = json_array();
	double *abs_err = malloc(MO_ACC_MAX_RUNS * sizeof *abs_err);

	if (!o || !runs || !abs_err || !rules) {
		free(abs_err);
		json_decref(runs);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "rules", json_string(rules));
	json_object_set_new(o, "note", json_string(note ? note : ""));
	size_t n = mo_acc_read(runs, abs_err, rules);
	json_object_set_new(o, "run_count", json_integer((json_int_t)n));
	if (n)
		mo_acc_summary(o, runs, abs_err, n);
	mo_acc_remember(rules, o);
	if (with_runs)
		json_object_set_new(o, "runs", runs);
	else
		json_decref(runs);
	free(abs_err);
	return o;
}
