/* A file a model names, read whole: the readers that open files beside the
 * one they were given (a CI recipe, a Hugging Face config.json) take its
 * text only when it is a regular file within the input size limit, so a
 * path the file supplies cannot make memopt read a device or a huge file. */
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *file_read_bounded(const char *path, size_t max, size_t *len, const char **why)
{
	const char *no = NULL;
	char *text = NULL;
	struct stat st;
	size_t size = 0;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		*why = strerror(errno);
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		no = "not a regular file";
	else if ((uintmax_t)st.st_size > max)
		no = "larger than the input size limit";
	else if ((text = malloc((size_t)st.st_size + 1)) == NULL)
		no = "out of memory";
	else if ((size = fread(text, 1, (size_t)st.st_size, f)) != (size_t)st.st_size)
		no = "a read error";
	fclose(f);
	if (no) {
		free(text);
		*why = no;
		return NULL;
	}
	text[size] = '\0';
	*len = size;
	*why = NULL;
	return text;
}
