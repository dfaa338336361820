/* Profiling driver for notes/http-uncached-profile.md: N requests through
 * mo_api_handle (no sockets) with a preset model cache and no response
 * cache, the last answer printed. Not built by the Makefile:
 *   cc -std=c11 -D_GNU_SOURCE -O2 -g -Icore/include -Icore/src -Iapi \
 *      -o api_drive tools/api_drive.c $BUILD/libmemopt_app.a $BUILD/libmemopt.a \
 *      $(pkg-config --libs yaml-0.1 libpcre2-8 jansson libmicrohttpd) -lpthread -lm
 *   valgrind --tool=callgrind ./api_drive 201 /api/v1/validate body.json
 * body.json: the JSON body bench/http.sh sends. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *route = argc > 2 ? argv[2] : "/api/v1/validate";
	FILE *f = fopen(argc > 3 ? argv[3] : "body.json", "rb");
	static char body[1 << 20];
	size_t len;
	mo_api_options opt;

	if (!f) {
		perror("body");
		return 2;
	}
	len = fread(body, 1, sizeof body, f);
	fclose(f);
	mo_api_options_default(&opt);
	if (mo_api_cache_new(&opt.models) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		mo_api_response r = {0};

		mo_api_handle(&r, "POST", route, "application/json", body, len, &opt);
		if (i == n - 1 && r.body)
			printf("%d %.*s\n", r.status, (int)r.len, r.body);
		mo_api_response_free(&r);
	}
	mo_api_cache_free(opt.models);
	return 0;
}
