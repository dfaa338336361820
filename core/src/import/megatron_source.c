/* Megatron-LM arguments: the files a training script sources (`source
 * FILE`, `. FILE`), found beside it. MindSpeed-LLM and older Megatron-LM
 * scripts keep shared arguments in such a file (`source ./args.sh`, then
 * `torchrun ... $GPT_ARGS`). Read only when the caller read the script
 * from disk and says its folder (the CLI does; the server never does), and
 * only a relative path inside that folder: no absolute path, no `..`, no
 * link out of it (both resolved with realpath and compared); at most
 * MO_MG_MAX_SOURCE_DEPTH files deep, never a file already being read (a
 * cycle), and all files together within the input size limit. Anything
 * else is said (the caller's warning at the `source` statement). */
#include "import/megatron_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
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
	/* what follows the `$` of the running script's own path */
	static const char *const script_refs[] = {"0", "{0}", "{BASH_SOURCE", "BASH_SOURCE"};
	for (size_t i = 0; i + 1 < n; i++) {
		if (text[i] != '$')
			continue;
		for (size_t r = 0; r < sizeof script_refs / sizeof *script_refs; r++)
			if (strncmp(text + i + 1, script_refs[r], strlen(script_refs[r])) == 0)
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

const char megatron_source_nomem[] = "out of memory";

/* The resolved path of name inside g->dir into *path (the caller frees
 * it), or why not; *rel_out: name relative to the folder. */
static const char *megatron_source_path(const struct mo_megatron_import *g, const char *name,
					const char **rel_out, char **path_out)
{
	const char *rel = name + megatron_script_dir_prefix(g, name);
	*rel_out = rel;
	*path_out = NULL;
	const char *why = megatron_source_refusal(rel);
	if (why)
		return why;
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
		why = !dir ? "the script's folder is not found"
		      : dir && !joined ? megatron_source_nomem
				       : "no such file beside the script";
	else if (strncmp(path, dir, dn) != 0 || path[dn] != '/') {
		why = "it leads out of the script's folder";
		free(path);
		path = NULL;
	}
	free(joined);
	free(dir);
	*path_out = path;
	return why;
}

/* The file's text into *text (in the arena), or why not. */
static const char *megatron_source_read(struct mo_megatron_import *g, const char *path,
					char **text_out, size_t *len)
{
	size_t room = g->max_bytes > g->source_bytes ? g->max_bytes - g->source_bytes : 0;
	const char *why = NULL;
	enum file_read_status status;
	char *whole = file_read_bounded(path, room, len, &status, &why);
	if (!whole)
		return status == FILE_READ_TOO_LARGE
			       ? "the script and its sourced files exceed the input size limit"
			       : why;
	char *text = arena_strndup(g->arena, whole, *len);
	free(whole);
	if (!text)
		return megatron_source_nomem;
	g->source_bytes += *len;
	*text_out = text;
	return NULL;
}

const char *megatron_source_open(struct mo_megatron_import *g, const char *name, char **text,
				 size_t *len, const char **shown)
{
	const char *rel = name;
	char *path = NULL;
	*text = NULL;
	if (!g->dir)
		return "this reader was given one text, not the script's folder";
	if (g->n_sourcing >= MO_MG_MAX_SOURCE_DEPTH)
		return "sourced files nest too deep";
	const char *why = megatron_source_path(g, name, &rel, &path);
	for (int i = 0; !why && i < g->n_sourcing; i++)
		if (strcmp(g->sourcing[i], path) == 0)
			why = "it is already being read (a cycle)";
	if (!why)
		why = megatron_source_read(g, path, text, len);
	const char *kept = why ? NULL : arena_strdup(g->arena, path);
	*shown = why ? NULL : arena_strdup(g->arena, rel);
	free(path);
	if (!why && (!kept || !*shown))
		why = megatron_source_nomem;
	if (why) {
		*text = NULL;
		return why;
	}
	g->sourcing[g->n_sourcing++] = kept;
	return NULL;
}

void megatron_source_close(struct mo_megatron_import *g)
{
	if (g->n_sourcing > 0)
		g->n_sourcing--;
}
