/* Standalone driver for the libFuzzer targets (libgit2's
 * fuzzers/standalone_driver.c idea): runs LLVMFuzzerTestOneInput over every
 * regular file of the directories and files given as arguments, so the
 * targets build with gcc and run under ASan/UBSan in `make check`.
 * Exit 0 when every input ran, 1 when an argument could not be read. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		uint8_t *p = realloc(buf, cap * 2);
		if (!p) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = p;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		free(buf);
		fprintf(stderr, "replay: %s: read failed\n", path);
		return -1;
	}
	/* an exact-size copy, so ASan sees reads past the input's end */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	(*count)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path, size_t *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, count);
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(names, cap * sizeof *names);
			if (!p) {
				rc = -1;
				break;
			}
			names = p;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n]) {
			rc = -1;
			break;
		}
		snprintf(names[n], len, "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    replay_file(names[i], count) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	size_t count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) != 0)
			rc = 1;
	printf("replayed %zu inputs\n", count);
	return rc;
}
