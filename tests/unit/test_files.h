/* Reading a test's data file whole, for the unit tests that load fixtures
 * from tests/data: a missing or unreadable file fails the test. Include
 * after <cmocka.h>. */
#ifndef MEMOPT_TEST_FILES_H
#define MEMOPT_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes with a NUL after them (free() it); *len gets the
 * length when len is not NULL. */
static char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	assert_true(size >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	char *text = malloc((size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	text[size] = '\0';
	if (len)
		*len = (size_t)size;
	return text;
}

#endif
