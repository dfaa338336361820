/* application/problem+json answers (RFC 9457) and response helpers. */
#include "api.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	int status;
	const char *text;
} mo_api_statuses[] = {
	{200, "OK"},
	{204, "No Content"},
	{304, "Not Modified"},
	{400, "Bad Request"},
	{403, "Forbidden"},
	{404, "Not Found"},
	{405, "Method Not Allowed"},
	{408, "Request Timeout"},
	{413, "Content Too Large"},
	{414, "URI Too Long"},
	{415, "Unsupported Media Type"},
	{421, "Misdirected Request"},
	{422, "Unprocessable Content"},
	{429, "Too Many Requests"},
	{431, "Request Header Fields Too Large"},
	{500, "Internal Server Error"},
	{501, "Not Implemented"},
	{503, "Service Unavailable"},
};

const char *mo_api_status_text(int status)
{
	for (size_t i = 0; i < sizeof mo_api_statuses / sizeof mo_api_statuses[0]; i++)
		if (mo_api_statuses[i].status == status)
			return mo_api_statuses[i].text;
	return "Unknown";
}

void mo_api_response_free(mo_api_response *r)
{
	if (!r)
		return;
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->problem = NULL;
}

static json_t *mo_api_problem_object(int status, const char *code,
				     const char *detail)
{
	char type[128];
	json_t *o;

	snprintf(type, sizeof type, "urn:memopt:problem:%s", code);
	o = json_pack("{s:s, s:s, s:i}", "type", type, "title",
		      mo_api_status_text(status), "status", status);
	if (!o)
		return NULL;
	/* detail may carry bytes from the request: json_string refuses
	 * invalid UTF-8, and then the problem simply has no detail. */
	if (detail)
		json_object_set_new(o, "detail", json_string(detail));
	return o;
}

static int mo_api_set_problem(mo_api_response *out, int status, const char *code, json_t *o)
{
	out->status = status;
	out->problem = code;
	out->content_type = "application/problem+json";
	out->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	out->len = out->body ? strlen(out->body) : 0;
	json_decref(o);
	return out->body ? 0 : -1;
}

int mo_api_problem(mo_api_response *out, int status, const char *code,
		   const char *detail)
{
	return mo_api_set_problem(out, status, code, mo_api_problem_object(status, code, detail));
}

int mo_api_problem_at(mo_api_response *out, int status, const char *code,
		      const char *detail, int line, int column)
{
	return mo_api_problem_hint(out, status, code, detail, line, column, NULL, NULL);
}

int mo_api_problem_hint(mo_api_response *out, int status, const char *code,
			const char *detail, int line, int column, const char *hint,
			const char *path)
{
	json_t *o = mo_api_problem_object(status, code, detail);

	if (o && line > 0) {
		json_object_set_new(o, "line", json_integer(line));
		json_object_set_new(o, "column", json_integer(column > 0 ? column : 1));
	}
	if (o && hint)
		json_object_set_new(o, "hint", json_string(hint));
	if (o && path)
		json_object_set_new(o, "path", json_string(path));
	return mo_api_set_problem(out, status, code, o);
}
