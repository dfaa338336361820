/* The public face of the ledger reader (memopt/ledger.h): open a trace
 * from a file or from memory, scan it, hand out what the scan found. */
#include "ledger/ledger.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static size_t ledger_max_line(const mo_ledger_options *opt)
{
	return opt && opt->max_line ? (size_t)opt->max_line : 65536;
}

static int ledger_read(mo_ledger **out, mo_ledger_reader *r, const mo_ledger_options *opt,
		      mo_error *err)
{
	mo_ledger *l = calloc(1, sizeof *l);
	if (!l) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (ledger_reader_start(r, err) != 0)
		goto out_free;
	l->format = r->format;
	if (ledger_scan(l, r, opt, err) != 0)
		goto out_free;
	*out = l;
	return 0;
out_free:
	mo_ledger_free(l);
	return -1;
}

int mo_ledger_read_file(mo_ledger **out, const char *path, const mo_ledger_options *opt,
			mo_error *err)
{
	mo_ledger_reader r;
	if (!out || !path) {
		error_set(err, MO_ERR_USAGE, 0, 0, "mo_ledger_read_file: NULL argument");
		return -1;
	}
	*out = NULL;
	if (ledger_reader_file(&r, path, ledger_max_line(opt), err) != 0)
		return -1;
	int rc = ledger_read(out, &r, opt, err);
	ledger_reader_close(&r);
	return rc;
}

int mo_ledger_read_buffer(mo_ledger **out, const char *data, size_t len,
			  const mo_ledger_options *opt, mo_error *err)
{
	mo_ledger_reader r;
	if (!out) {
		error_set(err, MO_ERR_USAGE, 0, 0, "mo_ledger_read_buffer: NULL argument");
		return -1;
	}
	*out = NULL;
	ledger_reader_memory(&r, data, len, ledger_max_line(opt), err);
	return ledger_read(out, &r, opt, err);
}

void mo_ledger_free(mo_ledger *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_names; i++)
		free(l->names[i]);
	free(l->names);
	for (int k = 0; k < 3; k++)
		free(l->groups[k].v);
	free(l->steps);
	free(l->layers);
	free(l);
}

const char *mo_ledger_format(const mo_ledger *l)
{
	return l && l->format == MO_LEDGER_JSONL ? "memopt-trace" : "mindspore-csv";
}

MO_ACCESSOR(uint64_t, mo_ledger_rows, mo_ledger, rows)

const mo_ledger_peak *mo_ledger_get_peak(const mo_ledger *l)
{
	return l ? &l->peak : NULL;
}

size_t mo_ledger_group_count(const mo_ledger *l, mo_ledger_grouping g)
{
	return l && (unsigned)g < 3 ? l->groups[g].n : 0;
}

const mo_ledger_group *mo_ledger_group_get(const mo_ledger *l, mo_ledger_grouping g, size_t i)
{
	return l && (unsigned)g < 3 && i < l->groups[g].n ? &l->groups[g].v[i] : NULL;
}

MO_ACCESSOR(size_t, mo_ledger_step_count, mo_ledger, n_steps)

const mo_ledger_step *mo_ledger_step_get(const mo_ledger *l, size_t i)
{
	return l && i < l->n_steps ? &l->steps[i] : NULL;
}

MO_ACCESSOR(size_t, mo_ledger_layer_count, mo_ledger, n_layers)

const mo_ledger_layer *mo_ledger_layer_get(const mo_ledger *l, size_t i)
{
	return l && i < l->n_layers ? &l->layers[i] : NULL;
}
