/* jansson's error texts, in words a user of memopt can act on.
 *
 * Most of jansson's messages describe the text ("'[' or '{' expected near
 * 'x'") and stand as they are. A few name jansson's own decoding flags, which
 * no memopt user can pass: a NUL character is refused "without
 * JSON_ALLOW_NUL". Those are told apart by jansson's error code, never by
 * their text. */
#include "util.h"

#include <jansson.h>

const char *json_error_words(const struct json_error_t *je)
{
	switch (json_error_code(je)) {
	case json_error_null_character:
		return "a NUL character (\\u0000) is not allowed in JSON text";
	case json_error_null_byte_in_key:
		return "a NUL character (\\u0000) is not allowed in an object key";
	default:
		return je->text;
	}
}
