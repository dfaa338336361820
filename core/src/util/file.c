/* A file a model names, read whole: the readers that open files beside the
 * one they were given (a CI recipe, a Hugging Face config.json) take its
 * text only when it is a regular file within the input size limit, so a
 * path the file supplies cannot make memopt read a device or a huge file. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *file_read_bounded(const char *path, size_t max, size_t *len, enum file_read_status *status,
			const char **why)
{
	const char *no = NULL;
	enum file_read_status st_no = FILE_READ_DONE;
	char *text = NULL;
	struct stat st;
	size_t size = 0;
	*len = 0;
	/* O_NONBLOCK: a FIFO named by a file must not hang the open; a regular
	 * file reads the same without it */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		*status = FILE_READ_UNOPENED;
		*why = strerror(errno);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		st_no = FILE_READ_IRREGULAR;
		no = "not a regular file";
	} else if ((uintmax_t)st.st_size > max) {
		st_no = FILE_READ_TOO_LARGE;
		no = "larger than the input size limit";
	} else if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		st_no = FILE_READ_NOMEM;
		no = "out of memory";
	} else if ((size = fread(text, 1, (size_t)st.st_size, f)) != (size_t)st.st_size) {
		st_no = FILE_READ_FAILED;
		no = "a read error";
	}
	fclose(f);
	*status = st_no;
	*why = no;
	if (no) {
		free(text);
		return NULL;
	}
	text[size] = '\0';
	*len = size;
	return text;
}

char *file_join(const char *dir, const char *path, const char *name)
{
	bool under = dir && dir[0] && path[0] != '/';
	size_t pn = strlen(path);
	bool slash = name && (pn == 0 || path[pn - 1] != '/');
	size_t n = (under ? strlen(dir) + 1 : 0) + pn + (slash ? 1 : 0) +
		   (name ? strlen(name) : 0) + 1;
	char *p = malloc(n);
	if (!p)
		return NULL;
	snprintf(p, n, "%s%s%s%s%s", under ? dir : "", under ? "/" : "", path,
		 slash ? "/" : "", name ? name : "");
	return p;
}
