/* Megatron-LM arguments: the files a training script sources (`source
 * FILE`, `. FILE`), found beside it. MindSpeed-LLM and older Megatron-LM
 * scripts keep shared arguments in such a file (`source ./args.sh`, then
 * `torchrun ... $GPT_ARGS`). Read only when the caller read the script
 * from disk and says its folder (the CLI does; the server never does), and
 * only a relative path inside that folder: no absolute path, no `..`, no
 * link out of it (both resolved with realpath and compared); at most
 * MO_MG_MAX_SOURCE_DEPTH files deep, never a file already being read (a
 * cycle), and all files together within the input size limit. Anything
 * else is a warning at the `source` statement saying why it was not read. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>

/* The variable a `$NAME` / `${NAME}` at p names, when the script assigns
 * it a text. */
static const char *megatron_source_var(const struct mo_megatron_import *g, const char *p)
{
	bool brace = p[1] == '{';
	const char *name = p + 1 + brace;
	size_t n = 0;
	while (name[n] == '_' || (name[n] >= 'A' && name[n] <= 'Z') ||
	       (name[n] >= 'a' && name[n] <= 'z') || (n && name[n] >= '0' && name[n] <= '9'))
		n++;
	for (size_t i = 0; n && i < g->n_vars; i++)
		if (!g->vars[i].array && strlen(g->vars[i].name) == n &&
		    memcmp(g->vars[i].name, name, n) == 0)
			return g->vars[i].value;
	return NULL;
}

/* Does text (a `$( ... )` body) name the running script: $0 or
 * BASH_SOURCE, directly or through one variable the script assigns
 * (`SCRIPT_PATH="${BASH_SOURCE[0]}"` ... `$(dirname $SCRIPT_PATH)`)? */
static bool megatron_names_script(const struct mo_megatron_import *g, const char *text, size_t n,
				  bool via_var)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (text[i] != '$')
			continue;
		if (text[i + 1] == '0' || strncmp(text + i + 1, "{0}", 3) == 0 ||
		    strncmp(text + i + 1, "{BASH_SOURCE", 12) == 0 ||
		    strncmp(text + i + 1, "BASH_SOURCE", 11) == 0)
			return true;
		const char *v = via_var ? megatron_source_var(g, text + i) : NULL;
		if (v && megatron_names_script(g, v, strlen(v), false))
			return true;
	}
	return false;
}

/* The length of a leading `$(dirname ...)` that names the script's own
 * folder (`$(dirname "$(readlink -f "$0")")`, `$(dirname $0)`,
 * `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`), with the `/` after
 * it; 0 when name does not start with one. */
static size_t megatron_script_dir_prefix(const struct mo_megatron_import *g, const char *name)
{
	if (name[0] != '$' || name[1] != '(')
		return 0;
	size_t i = 2;
	for (int depth = 1; name[i] && depth > 0; i++)
		depth += name[i] == '(' ? 1 : name[i] == ')' ? -1 : 0;
	if (name[i - 1] != ')' || name[i] != '/' || !strstr(name, "dirname") ||
	    (size_t)(strstr(name, "dirname") - name) > i ||
	    !megatron_names_script(g, name + 2, i - 3, true))
		return 0;
	return i + 1;
}

/* Why a name cannot be read from the script's folder, NULL when it may. */
static const char *megatron_source_refusal(const char *name)
{
	if (!*name)
		return "an empty path";
	if (strchr(name, '$') || strchr(name, '`'))
		return "its path is a shell expansion this reader does not know";
	if (name[0] == '/' || name[0] == '~')
		return "an absolute path: only files beside the script are read";
	for (const char *p = name; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return "a path out of the script's folder: only files beside it are read";
		p += n + (slash != NULL);
	}
	return NULL;
}

static void megatron_source_skip(struct mo_megatron_import *g, int line, int column,
				 const char *name, const char *why)
{
	megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
		      "'source %.200s' is not read (%s): the variables and arguments it sets are "
		      "left out",
		      name, why);
}

/* The resolved path of name inside g->dir, or NULL (reported); *rel_out:
 * name relative to the folder. */
static char *megatron_source_path(struct mo_megatron_import *g, int line, int column,
				  const char *name, const char **rel_out)
{
	const char *rel = name + megatron_script_dir_prefix(g, name);
	*rel_out = rel;
	const char *why = megatron_source_refusal(rel);
	if (why) {
		megatron_source_skip(g, line, column, name, why);
		return NULL;
	}
	char *dir = realpath(g->dir, NULL);
	size_t dn = dir ? strlen(dir) : 0, nn = strlen(rel);
	char *joined = dir ? malloc(dn + nn + 2) : NULL;
	char *path = NULL;
	if (joined) {
		memcpy(joined, dir, dn);
		joined[dn] = '/';
		memcpy(joined + dn + 1, rel, nn + 1);
		path = realpath(joined, NULL);
	}
	if (!path)
		megatron_source_skip(g, line, column, name,
				     dir ? "no such file beside the script" : "the script's folder is not found");
	else if (strncmp(path, dir, dn) != 0 || path[dn] != '/') {
		megatron_source_skip(g, line, column, name, "it leads out of the script's folder");
		free(path);
		path = NULL;
	}
	free(joined);
	free(dir);
	return path;
}

/* The file's text in the arena, or NULL (reported). */
static char *megatron_source_read(struct mo_megatron_import *g, int line, int column,
				  const char *name, const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		megatron_source_skip(g, line, column, name, strerror(errno));
		return NULL;
	}
	struct stat st;
	size_t room = g->max_bytes > g->source_bytes ? g->max_bytes - g->source_bytes : 0;
	const char *why = NULL;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((uintmax_t)st.st_size > room)
		why = "the script and its sourced files exceed the input size limit";
	size_t size = why ? 0 : (size_t)st.st_size;
	char *text = why ? NULL : arena_alloc(g->arena, size + 1);
	if (!why && !text) {
		fclose(f);
		megatron_fail(g, MO_ERR_NOMEM, line, column, "out of memory");
		return NULL;
	}
	if (!why && fread(text, 1, size, f) != size)
		why = "a read error";
	fclose(f);
	if (why) {
		megatron_source_skip(g, line, column, name, why);
		return NULL;
	}
	text[size] = '\0';
	g->source_bytes += size;
	*len = size;
	return text;
}

char *megatron_source_open(struct mo_megatron_import *g, int line, int column, const char *name,
			   size_t *len, const char **shown)
{
	const char *rel = name;
	if (!g->dir) {
		megatron_source_skip(g, line, column, name,
				     "this reader was given one text, not the script's folder");
		return NULL;
	}
	if (g->n_sourcing >= MO_MG_MAX_SOURCE_DEPTH) {
		megatron_source_skip(g, line, column, name, "sourced files nest too deep");
		return NULL;
	}
	char *path = megatron_source_path(g, line, column, name, &rel);
	if (!path)
		return NULL;
	for (int i = 0; i < g->n_sourcing; i++)
		if (strcmp(g->sourcing[i], path) == 0) {
			megatron_source_skip(g, line, column, name, "it is already being read (a cycle)");
			free(path);
			return NULL;
		}
	char *text = megatron_source_read(g, line, column, name, path, len);
	const char *kept = text ? arena_strdup(g->arena, path) : NULL;
	*shown = text ? arena_strdup(g->arena, rel) : NULL;
	free(path);
	if (text && (!kept || !*shown)) {
		megatron_fail(g, MO_ERR_NOMEM, line, column, "out of memory");
		return NULL;
	}
	if (text)
		g->sourcing[g->n_sourcing++] = kept;
	return text;
}

void megatron_source_close(struct mo_megatron_import *g)
{
	if (g->n_sourcing > 0)
		g->n_sourcing--;
}
