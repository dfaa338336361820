/* The vocabulary of a tokenizer on disk, counted as the trainer counts
 * it. A launch script that gives no --vocab-size takes its vocabulary
 * from the tokenizer it names, and Megatron pads that count to a multiple
 * of --make-vocab-size-divisible-by x TP
 * (megatron/training/tokenizer/tokenizer.py at core_v0.12.0: lines 104,
 * 109). The count is:
 *   - a Hugging Face tokenizer (MindSpeed-LLM's PretrainedFromHF,
 *     Megatron's HuggingFaceTokenizer): len(tokenizer)
 *     (mindspeed_llm/training/tokenizer/tokenizer.py:150 at c77308a1;
 *     tokenizer.py:144 at core_v0.12.0), every entry of the model's
 *     vocabulary and the added tokens. Its folder's tokenizer.json holds
 *     both (model.vocab, added_tokens, each with its id): the count is the
 *     largest id + 1. A folder with only SentencePiece's tokenizer.model
 *     counts its pieces and the added tokens tokenizer_config.json lists
 *     (added_tokens_decoder, by id) the same way. A folder with neither
 *     gives config.json's vocab_size: the model's embedding rows, which
 *     hold the tokenizer (said as such, not as its count).
 *   - Llama2Tokenizer: SentencePiece's vocab_size(), the pieces of its
 *     .model file (tokenizer.py:573-577 at core_v0.12.0).
 * A .model file is SentencePiece's ModelProto (sentencepiece_model.proto:
 * `repeated SentencePiece pieces = 1`), read by its wire format: a count
 * of field 1's records, nothing else. Files are opened only where the
 * caller says the run is launched from, each within MO_TOKENIZER_MAX_BYTES
 * (Gemma's tokenizer.json, the largest of the corpus's models, is 17 MB). */
#include "import/import_internal.h"
#include "util/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MO_TOKENIZER_MAX_BYTES (64u << 20)

/* end, or id + 1 when that is larger (ids past INT32_MAX are not token
 * ids, left out). */
static int64_t tokenizer_after(int64_t end, long long id)
{
	return id >= end && id < INT32_MAX ? id + 1 : end;
}

/* The largest id + 1 of a JSON object's integer values (a BPE / WordPiece
 * vocab: token -> id) or an array's length (a Unigram vocab: [token,
 * score] pairs, the index the id); 0 when neither. */
static int64_t tokenizer_vocab_ids(const json_t *vocab)
{
	if (json_is_array(vocab))
		return (int64_t)json_array_size(vocab);
	int64_t end = 0;
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)vocab, key, v) {
		(void)key;
		if (json_is_integer(v))
			end = tokenizer_after(end, json_integer_value(v));
	}
	return end;
}

/* The largest id + 1 of tokenizer.json's added_tokens ([{id, content}]). */
static int64_t tokenizer_added_ids(const json_t *added)
{
	int64_t end = 0;
	size_t i;
	const json_t *t;
	json_array_foreach(added, i, t) {
		const json_t *id = json_object_get(t, "id");
		if (json_is_integer(id))
			end = tokenizer_after(end, json_integer_value(id));
	}
	return end;
}

/* The largest id + 1 of tokenizer_config.json's added_tokens_decoder
 * (`"151643": {...}`: ids as keys). */
static int64_t tokenizer_decoder_ids(const json_t *decoder)
{
	int64_t end = 0;
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)decoder, key, v) {
		(void)v;
		char *stop = NULL;
		long long id = strtoll(key, &stop, 10);
		if (stop != key && !*stop)
			end = tokenizer_after(end, id);
	}
	return end;
}

/* A JSON file as a value (the caller decrefs), or NULL with *why. */
static json_t *tokenizer_json(const char *path, const char **why)
{
	size_t len = 0;
	enum file_read_status status;
	char *text = file_read_bounded(path, MO_TOKENIZER_MAX_BYTES, &len, &status, why);
	if (!text)
		return NULL;
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	if (!j)
		*why = "it is not JSON";
	else if (!json_is_object(j)) {
		json_decref(j);
		j = NULL;
		*why = "it is not a JSON object";
	}
	return j;
}

/* One base-128 varint at *p (below end) into *v; false past the end or
 * over 64 bits. */
static bool tokenizer_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The records of field 1 (pieces) in a ModelProto; -1 when the bytes are
 * not that wire format. */
static int64_t tokenizer_proto_pieces(const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	int64_t pieces = 0;
	while (p < end) {
		uint64_t key, n;
		if (!tokenizer_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case 0: /* varint */
			if (!tokenizer_varint(&p, end, &n))
				return -1;
			break;
		case 1: /* 64-bit */
			if ((size_t)(end - p) < 8)
				return -1;
			p += 8;
			break;
		case 2: /* length-delimited: a piece, a spec */
			if (!tokenizer_varint(&p, end, &n) || n > (uint64_t)(end - p))
				return -1;
			p += n;
			pieces += (key >> 3) == 1;
			break;
		case 5: /* 32-bit */
			if ((size_t)(end - p) < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
	}
	return pieces;
}

/* The pieces of a SentencePiece .model file, or -1 with *why. */
static int64_t tokenizer_sentencepiece(const char *path, const char **why)
{
	size_t len = 0;
	enum file_read_status status;
	char *bytes = file_read_bounded(path, MO_TOKENIZER_MAX_BYTES, &len, &status, why);
	if (!bytes)
		return -1;
	int64_t pieces = tokenizer_proto_pieces((const unsigned char *)bytes, len);
	free(bytes);
	if (pieces <= 0)
		*why = "it is not a SentencePiece model";
	return pieces > 0 ? pieces : -1;
}

/* "<dir>/<name>" in buf; false when it does not fit. */
static bool tokenizer_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	return n > 0 && (size_t)n < size;
}

static bool tokenizer_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A fast tokenizer's tokenizer.json: the largest id + 1 of its vocabulary
 * and added tokens. */
static bool tokenizer_read_fast(const char *path, struct tokenizer_vocab *out, const char **why)
{
	json_t *j = tokenizer_json(path, why);
	if (!j)
		return false;
	const json_t *model = json_object_get(j, "model");
	int64_t n = tokenizer_vocab_ids(json_object_get(model, "vocab"));
	int64_t added = tokenizer_added_ids(json_object_get(j, "added_tokens"));
	json_decref(j);
	if (n <= 0) {
		*why = "it has no model.vocab";
		return false;
	}
	out->entries = added > n ? added : n;
	out->basis = TOKENIZER_ENTRIES;
	return true;
}

/* A slow tokenizer's folder: tokenizer.model's pieces, with the added
 * tokens tokenizer_config.json lists by id. */
static bool tokenizer_read_slow(const char *dir, const char *model_path,
				struct tokenizer_vocab *out, const char **why)
{
	int64_t pieces = tokenizer_sentencepiece(model_path, why);
	if (pieces < 0)
		return false;
	char path[4096];
	int64_t added = 0;
	if (tokenizer_join(path, sizeof path, dir, "tokenizer_config.json") &&
	    tokenizer_exists(path)) {
		const char *ignored = NULL;
		json_t *j = tokenizer_json(path, &ignored);
		added = j ? tokenizer_decoder_ids(json_object_get(j, "added_tokens_decoder")) : 0;
		json_decref(j);
	}
	out->entries = added > pieces ? added : pieces;
	out->basis = TOKENIZER_ENTRIES;
	return true;
}

/* config.json's vocab_size: the model's rows, not the tokenizer's count. */
static bool tokenizer_read_rows(const char *path, struct tokenizer_vocab *out, const char **why)
{
	json_t *j = tokenizer_json(path, why);
	if (!j)
		return false;
	const json_t *v = json_object_get(j, "vocab_size");
	bool ok = json_is_integer(v) && json_integer_value(v) > 0 &&
		  json_integer_value(v) < INT32_MAX;
	if (ok) {
		out->entries = json_integer_value(v);
		out->basis = TOKENIZER_MODEL_ROWS;
	} else
		*why = "its config.json has no vocab_size";
	json_decref(j);
	return ok;
}

/* A Hugging Face tokenizer's folder, its files in the order of what they
 * say: the count, then the model's rows. */
static bool tokenizer_read_folder(const char *dir, struct tokenizer_vocab *out, const char **why)
{
	static const char *const files[] = {"tokenizer.json", "tokenizer.model", "config.json"};
	char path[4096];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		if (!tokenizer_join(path, sizeof path, dir, files[i])) {
			*why = "its path is too long";
			return false;
		}
		if (!tokenizer_exists(path))
			continue;
		out->file = files[i];
		switch (i) {
		case 0:
			return tokenizer_read_fast(path, out, why);
		case 1:
			return tokenizer_read_slow(dir, path, out, why);
		default:
			return tokenizer_read_rows(path, out, why);
		}
	}
	*why = "it holds no tokenizer.json, tokenizer.model or config.json";
	return false;
}

bool tokenizer_read(const char *path, enum tokenizer_kind kind, struct tokenizer_vocab *out,
		    const char **why)
{
	struct stat st;
	*out = (struct tokenizer_vocab){0};
	*why = NULL;
	if (stat(path, &st) != 0) {
		*why = "no such file or folder where the run is launched";
		return false;
	}
	if (kind == TOKENIZER_SENTENCEPIECE && S_ISREG(st.st_mode)) {
		out->file = "";
		out->entries = tokenizer_sentencepiece(path, why);
		out->basis = TOKENIZER_ENTRIES;
		return out->entries > 0;
	}
	if (S_ISDIR(st.st_mode))
		return tokenizer_read_folder(path, out, why);
	/* Hugging Face's from_pretrained takes a folder; a file beside
	 * its tokenizer (a tokenizer.model given as the tokenizer's path)
	 * names that folder */
	const char *slash = strrchr(path, '/');
	if (kind == TOKENIZER_HF && slash) {
		char dir[4096];
		size_t n = (size_t)(slash - path);
		if (n >= sizeof dir) {
			*why = "its path is too long";
			return false;
		}
		memcpy(dir, path, n);
		dir[n] = '\0';
		return tokenizer_read_folder(n ? dir : "/", out, why);
	}
	*why = "it is not a folder";
	return false;
}
