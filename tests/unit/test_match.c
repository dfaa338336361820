/* The comparisons match.c puts in front of PCRE2 (EXACT and SUFFIX shapes)
 * must answer exactly like PCRE2 full-match: every pattern below against
 * every subject, both ways (patterns of other shapes go to PCRE2 itself and
 * must agree too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include "match/match.h"

#include <pcre2.h>
#include <string.h>

static int pcre2_full(const char *pattern, const char *subject)
{
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pattern, strlen(pattern),
				      PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_UCP,
				      &ec, &eo, NULL);
	assert_non_null(c);
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	int rc = pcre2_match(c, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(c);
	return rc >= 0;
}

static const char *const patterns[] = {
	".*mlp", "mlp.*", "mlp", ".*", "", ".", "..", ".*.*", ".*a.*", "self_attention.linear_proj",
	"self_attention\\.linear_proj", ".*\\.allgather", ".*allgather", "mlp.linear_fc.",
	"m.p", ".*_.*", "a.*b.*c", ".*\\-x", "layers.*.self_attention.*", "add", ".*add",
	"mlp.experts.*.alltoall.*", "x\\.y", ".*.", "...*", "mlp\\.", "\\.\\*",
	/* other shapes: these go to PCRE2 */
	"(mlp|self_attention)", "mlp.+", ".*?mlp", ".*+mlp", "[a-z_]+", "mlp.linear_fc[12]",
	"\\w+", "mlp$", "^mlp", "a{2}", ".*(allgather|reducescatter)", "mlp.linear_fc\\d",
	/* alternations, and near misses */
	"(?:self_attention|mlp)\\..*allgather", ".*(?:allgather|reducescatter)", "a|b", "mlp|",
	"|mlp", "(?:a|)b", "()", "(?:)", "(?:x)(?:y|z)", "(mlp|self_attention)\\..*",
	"(?:mlp|add).*|x\\.y", "(?:a|b)*", "(?:a|(b))", "(?:a\\|b)", "(?:.|x)+", "x(?:.|y)",
	"(?:a|b)(?:a|b)(?:a|b)(?:a|b)", "(?i:mlp)", "(?:mlp)?", "a(?:|b)c",
	/* wildcards past the start */
	".*input.*", "mlp\\.experts\\..*", ".*.*", "a.*", ".*a", "a.*.*", ".*.*a.*",
};

static const char *const subjects[] = {
	"", "mlp", "mlpx", "xmlp", "mlp.linear_fc1", "mlp.linear_fc2", "self_attention",
	"self_attention.linear_proj", "self_attentionXlinear_proj",
	"self_attention.linear_proj.output.reducescatter",
	"self_attention.linear_qkv.input.allgather", "add", "mlp.add", "mlp.", ".*", "a-x", "abc",
	"aXbYc", "ab", "x.y", "xzy", "mlp.experts.input.alltoallsingle", "aa",
	"mlp.experts.expert_counts.alltoall", "m\xc3\xa9p", "mlp\n", "a\nb", "b", "x", "xy", "xz",
	"a|b", "ac", "abc", "abab", "aaaa", "MLP", "a\xc3\xa9", "self_attention.cast",
	"mlp.experts.input.alltoallsingle.input", "input", "mlp.experts.",
};

static void test_simple_equals_pcre2(void **state)
{
	(void)state;
	mo_limits lim;
	mo_limits_default(&lim);
	mo_arena *a = arena_new();
	mo_matcher *mt = mo_matcher_new();
	for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
		const char *msg;
		size_t off;
		mo_regex *re = regex_compile(patterns[i], strlen(patterns[i]), &lim, a, &msg, &off);
		assert_non_null(re);
		for (size_t j = 0; j < sizeof subjects / sizeof *subjects; j++) {
			int want = pcre2_full(patterns[i], subjects[j]);
			int got = matcher_match(mt, re, subjects[j], strlen(subjects[j]));
			if (want != got)
				fail_msg("pattern '%s' subject '%s': pcre2 %d, memopt %d", patterns[i],
					 subjects[j], want, got);
		}
		regex_free(re);
	}
	mo_matcher_free(mt);
	arena_free(a);
}

/* regex_ends only rules out subjects that PCRE2 does not match. */
static void test_ends_filter(void **state)
{
	(void)state;
	mo_limits lim;
	mo_limits_default(&lim);
	mo_arena *a = arena_new();
	size_t ruled_out = 0;
	for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
		const char *msg;
		size_t off;
		mo_regex *re = regex_compile(patterns[i], strlen(patterns[i]), &lim, a, &msg, &off);
		assert_non_null(re);
		int first, last;
		regex_ends(re, &first, &last);
		for (size_t j = 0; j < sizeof subjects / sizeof *subjects; j++) {
			const char *sj = subjects[j];
			size_t n = strlen(sj);
			bool out = (first >= 0 && (!n || (unsigned char)sj[0] != first)) ||
				   (last >= 0 && (!n || (unsigned char)sj[n - 1] != last));
			if (out && pcre2_full(patterns[i], sj))
				fail_msg("pattern '%s' rules out '%s', which it matches", patterns[i], sj);
			ruled_out += out;
		}
		regex_free(re);
	}
	assert_true(ruled_out > 100);
	arena_free(a);
}

static void test_errors_and_limits(void **state)
{
	(void)state;
	mo_limits lim;
	mo_limits_default(&lim);
	mo_arena *a = arena_new();
	const char *msg;
	size_t off;
	assert_null(regex_compile("(", 1, &lim, a, &msg, &off));
	assert_non_null(strstr(msg, "missing closing parenthesis"));
	assert_int_equal(off, 1);
	/* pieces of an alternation are checked alone: '.' + '*a' is no '.*a' */
	assert_null(regex_compile(".(?:*a|b)", 9, &lim, a, &msg, &off));
	assert_null(regex_compile("a|*b", 4, &lim, a, &msg, &off));
	/* catastrophic backtracking ends at the match limit, not in a hang */
	lim.match_limit = 10000;
	const char *bad = "(\\w+\\s?)*";
	mo_regex *re = regex_compile(bad, strlen(bad), &lim, a, &msg, &off);
	assert_non_null(re);
	const char *subject = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!";
	assert_int_equal(regex_match(re, subject, strlen(subject)), -1);
	regex_free(re);
	arena_free(a);
}

/* Shapes that backtrack exponentially are found, at the repeat that makes
 * them so; shapes real configs write, and polynomial or possessive ones,
 * are not. */
static void test_shape_check(void **state)
{
	(void)state;
	static const struct {
		const char *p;
		size_t offset;
	} bad[] = {{"(.*)*x", 4},
		   {"(a+)+$", 4},
		   {"(?:.*.*.*.*.*.*.*.*.*.*)*z00001", 24},
		   {"(.*a){20}", 5},
		   {"(.*.*)*\\.(.*.*)*z", 6},
		   {"((ab)+)+", 7},
		   {"(\\w+)+", 5},
		   {"(x+|y)+", 6},
		   {"([^.]+)*mlp", 7},
		   {"(?:\\S+\\.)+x", 9},
		   {"mlp\\.(a{1,5})+", 13}};
	static const char *const good[] = {
		".*mlp", "mlp\\.linear_fc1", "(\\.\\d+)+", "(\\w+\\.)+mlp", "(a|aa)+$",
		"(.*)(.*)\\2\\1x", "layers\\.[0-9]+\\.attention", "(?>.*)*x", "(a++)+", "(.*)++x",
		".*\\.(w1|w2|w3)", "(?:feed_forward|attention)\\.w[0-9]+", "[(]+a", "\\Q(.*)*\\E",
		"(?#(.*)*)x", "(\\d{2})+", "a{2,}", ".*.*.*.*.*x", "mlp\\.(shared_experts\\.)?mul",
		"[)(]*(ab)+", "x{,3}(.)"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t off = 0;
		const char *why = regex_shape_check(bad[i].p, strlen(bad[i].p), &off);
		if (!why || off != bad[i].offset)
			fail_msg("'%s': %s at %zu, want refused at %zu", bad[i].p,
				 why ? why : "accepted", off, bad[i].offset);
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		size_t off = 0;
		if (regex_shape_check(good[i], strlen(good[i]), &off))
			fail_msg("'%s' refused at %zu", good[i], off);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_equals_pcre2),
		cmocka_unit_test(test_ends_filter),
		cmocka_unit_test(test_errors_and_limits),
		cmocka_unit_test(test_shape_check),
	};
	return cmocka_run_group_tests_name("match", tests, NULL, NULL);
}
