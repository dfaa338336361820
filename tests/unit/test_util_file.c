/* util/file.c: the paths files name, joined as the program that reads them
 * opens them, and files read whole within a size. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

static void expect_join(const char *dir, const char *path, const char *name, const char *want)
{
	char *got = file_join(dir, path, name);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* A relative path is under the launch folder, an absolute one as given;
 * a name goes inside the folder with one '/' between, whether or not the
 * folder as written ends in one (os.path.join's result). */
static void test_file_join(void **state)
{
	(void)state;
	expect_join(".", "model_from_hf/qwen", "config.json", "./model_from_hf/qwen/config.json");
	expect_join(".", "model_from_hf/qwen/", "config.json", "./model_from_hf/qwen/config.json");
	expect_join("/run", "/data/Qwen3-8B/", "config.json", "/data/Qwen3-8B/config.json");
	expect_join("/run", "examples/fsdp2/a.yaml", NULL, "/run/examples/fsdp2/a.yaml");
	expect_join("/run", "/abs/a.yaml", NULL, "/abs/a.yaml");
	expect_join(NULL, "tok", NULL, "tok");
	expect_join("", "tok", "tokenizer.json", "tok/tokenizer.json");
}

/* A folder is not read as a file, a file over the limit is refused, one
 * within it is read whole and NUL-terminated. */
static void test_file_read_bounded(void **state)
{
	(void)state;
	char dir[] = "/tmp/memopt-files-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = file_join(dir, "config.json", NULL);
	assert_non_null(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"vocab_size\": 8}", f);
	fclose(f);
	size_t len = 0;
	enum file_read_status status;
	const char *why = NULL;
	char *text = file_read_bounded(path, 64, &len, &status, &why);
	assert_non_null(text);
	assert_int_equal(status, FILE_READ_DONE);
	assert_int_equal(len, 17);
	assert_string_equal(text, "{\"vocab_size\": 8}");
	free(text);
	assert_null(file_read_bounded(path, 16, &len, &status, &why));
	assert_int_equal(status, FILE_READ_TOO_LARGE);
	assert_non_null(why);
	assert_null(file_read_bounded(dir, 64, &len, &status, &why));
	assert_int_equal(status, FILE_READ_IRREGULAR);
	unlink(path);
	free(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_join),
		cmocka_unit_test(test_file_read_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
