/* memopt migrate: a graph-mode file's recompute_config
 * rewritten as the recompute / recompute_comm sections that mean the same
 * plan. The plan is the one graph.c read from the block (the config's
 * recompute fields); export.c writes it in canonical form in the block's
 * place, so every byte outside the block stays as it was. Keys of the block
 * with no equivalent in the sections are dropped with a warning naming
 * them; swap_config has no equivalent (memopt does not read it) and stays,
 * with a warning. docs/cli.md and man/memopt-migrate.1 state the rules. */
#include "config/config.h"

#include <stdio.h>
#include <string.h>

/* Keys whose meaning the sections carry (graph.c reads them). */
static const char *const mo_migrate_carried[] = {"recompute", "select_recompute",
						 "select_comm_recompute", NULL};

/* False, null, an empty list or mapping: the key asks for nothing. */
static bool migrate_is_off(const mo_node *v)
{
	bool b = true;
	if (!v)
		return true;
	if (v->kind == MO_NODE_SCALAR)
		return scalar_resolve(v) == MO_SCALAR_NULL || (scalar_bool(v, &b) && !b);
	return v->n == 0;
}

static bool migrate_is_carried(const mo_node *k)
{
	for (size_t i = 0; mo_migrate_carried[i]; i++)
		if (k->kind == MO_NODE_SCALAR && k->value && strcmp(k->value, mo_migrate_carried[i]) == 0)
			return true;
	return false;
}

/* A warning for each key of the block that asks for something the
 * sections cannot say. */
static void migrate_report_dropped(mo_diags *diags, const mo_config *c, const mo_node *val)
{
	for (size_t i = 0; i + 1 < val->n; i += 2) {
		const mo_node *k = val->items[i], *v = val->items[i + 1];
		if (migrate_is_carried(k) || migrate_is_off(v))
			continue;
		const char *name = k->kind == MO_NODE_SCALAR && k->value ? k->value : "?";
		char path[160];
		snprintf(path, sizeof path, "recompute_config.%s", name);
		mo_diag *d = diags_add_at(diags, MO_SEV_WARNING, "no-equivalent", c->doc->name, k,
					     path,
					     "migrate: recompute_config.%s has no equivalent in the "
					     "recompute / recompute_comm sections; dropped with the block",
					     name);
		diag_set_hint(diags, d, "see docs/mindformers.md, 'Not modelled'");
	}
}

static int migrate_check_input(const mo_config *c, const mo_node *key, const mo_node *val,
				  mo_error *err)
{
	if (!c->training_yaml || !c->doc || !c->doc->root || !c->doc->src ||
	    c->doc->root->kind != MO_NODE_MAP || !val) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			     "migrate: the file has no top-level recompute_config");
		return -1;
	}
	if (c->recompute_val || c->comm_val) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			     "migrate: the file already has a recompute or recompute_comm "
			     "section beside recompute_config; keep one of them by hand");
		return -1;
	}
	if (!c->recompute_config_read) {
		error_set(err, MO_ERR_INVALID, key->line, key->column,
			     "migrate: recompute_config is not applied to this file (a "
			     "PyNative file, or the layers cannot be placed): validate's "
			     "warnings say which; nothing to migrate");
		return -1;
	}
	return 0;
}

int mo_migrate(char **out, size_t *out_len, mo_diags *diags, const mo_config *c, mo_error *err)
{
	const mo_node *key = NULL, *val = NULL;

	if (!out || !c || !diags) {
		error_set(err, MO_ERR_USAGE, 0, 0, "migrate: NULL argument");
		return -1;
	}
	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (c->doc && c->doc->root && c->doc->root->kind == MO_NODE_MAP)
		val = map_get_kv(c->doc->root, "recompute_config", &key);
	if (migrate_check_input(c, key, val, err) != 0)
		return -1;
	/* recompute always (`mode: None` when the block switches nothing on) */
	unsigned mask = 1u << 0;
	if (c->comm_enable)
		mask |= 1u << 1; /* recompute_comm */
	if (export_splice_block(out, out_len, c, key, val, "recompute_config", mask, err) != 0)
		return -1;
	migrate_report_dropped(diags, c, val);
	const mo_node *skey = NULL;
	if (map_get_kv(c->doc->root, "swap_config", &skey)) {
		mo_diag *d = diags_add_at(diags, MO_SEV_WARNING, "no-equivalent", c->doc->name,
					     skey, "swap_config",
					     "migrate: swap_config is left as it is: memopt does not "
					     "read it, so no swap section is written for it");
		diag_set_hint(diags, d, "write the 'swap' section by hand if the run needs one");
	}
	return 0;
}
