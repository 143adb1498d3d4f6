// SPDX-License-Identifier: Apache-2.0
/* The JSON pull reader: documents walked member by member, strings decoded
 * (escapes, surrogate pairs, UTF-8), numbers by JSON's grammar and int64's
 * range, marks to come back to, and each kind of broken document refused
 * with what and where. */
#include "check.h"

#include "../../lib/grow.c"
#include "../../lib/json_pull.c"

/* Whether the whole of doc is one valid JSON value; why gets the error. */
static bool valid(const char *doc, char *why, size_t whylen)
{
    struct json_pull j;
    json_pull_init(&j, doc, strlen(doc));
    bool ok = json_pull_skip(&j) && json_pull_end(&j);
    json_pull_error(&j, why, whylen);
    json_pull_free(&j);
    return ok;
}

TEST(an_object_walked_member_by_member)
{
    const char *doc = "{\"name\": \"main\", \"line\": 12, \"tags\": [1, 2.5, true, null],"
                      " \"inner\": {\"a\": {}}, \"empty\": []}";
    struct json_pull j;
    json_pull_init(&j, doc, strlen(doc));
    CHECK_INT(json_pull_kind(&j), JSON_PULL_OBJECT);
    CHECK(json_pull_object(&j));
    const char *key, *s = NULL;
    size_t len = 0;
    int64_t line = 0;
    double sum = 0;
    int members = 0, elements = 0;
    while (json_pull_member(&j, &key)) {
        members++;
        if (!strcmp(key, "name")) {
            CHECK(json_pull_string(&j, &s, &len));
            CHECK_STR(s, "main");
            CHECK_INT(len, 4);
        } else if (!strcmp(key, "line")) {
            CHECK(json_pull_integer(&j, &line));
        } else if (!strcmp(key, "tags")) {
            CHECK(json_pull_array(&j));
            while (json_pull_element(&j)) {
                double v;
                elements++;
                if (json_pull_kind(&j) == JSON_PULL_NUMBER && json_pull_number(&j, &v))
                    sum += v;
                else
                    CHECK(json_pull_skip(&j));
            }
        } else {
            CHECK(json_pull_skip(&j));
        }
    }
    CHECK(!json_pull_failed(&j));
    CHECK(json_pull_end(&j));
    CHECK_INT(members, 5);
    CHECK_INT(elements, 4);
    CHECK_INT(line, 12);
    CHECK(sum == 3.5);
    json_pull_free(&j);
}

/* A reader of another kind reads the value all the same and says no. */
TEST(readers_of_another_kind_read_past_the_value)
{
    const char *doc = "[\"x\", 1.5, {\"a\": [1]}, 7]";
    struct json_pull j;
    json_pull_init(&j, doc, strlen(doc));
    const char *s;
    int64_t i;
    double d;
    CHECK(json_pull_array(&j));
    CHECK(json_pull_element(&j));
    CHECK(!json_pull_number(&j, &d));   /* "x" */
    CHECK(json_pull_element(&j));
    CHECK(!json_pull_integer(&j, &i));   /* 1.5 has a fraction */
    CHECK(json_pull_element(&j));
    CHECK(!json_pull_string(&j, &s, NULL));   /* the object */
    CHECK(json_pull_element(&j));
    CHECK(json_pull_integer(&j, &i));
    CHECK_INT(i, 7);
    CHECK(!json_pull_element(&j));
    CHECK(!json_pull_failed(&j));
    CHECK(json_pull_end(&j));
    json_pull_free(&j);
}

TEST(strings_decoded)
{
    static const struct {
        const char *json, *want;
        size_t len;
    } cases[] = {
        {"\"\"", "", 0},
        {"\"a\\\"b\\\\c\\/d\"", "a\"b\\c/d", 7},
        {"\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t", 5},
        {"\"\\u00e9\\u20AC\"", "\xc3\xa9\xe2\x82\xac", 5},   /* e acute, euro */
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},         /* a surrogate pair */
        {"\"caf\xc3\xa9 \xe2\x82\xac\"", "caf\xc3\xa9 \xe2\x82\xac", 9},
        {"\"\\u0041\"", "A", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct json_pull j;
        json_pull_init(&j, cases[i].json, strlen(cases[i].json));
        const char *s = NULL;
        size_t len = 99;
        CHECK(json_pull_string(&j, &s, &len));
        CHECK_STR(s, cases[i].want);
        CHECK_INT(len, cases[i].len);
        CHECK(json_pull_end(&j));
        json_pull_free(&j);
    }
}

TEST(numbers_by_the_grammar_and_int64s_range)
{
    static const struct {
        const char *json;
        bool integer;
        int64_t want;
    } ints[] = {
        {"0", true, 0},
        {"-0", true, 0},
        {"9223372036854775807", true, INT64_MAX},
        {"-9223372036854775808", true, INT64_MIN},
        {"9223372036854775808", false, 0},
        {"-9223372036854775809", false, 0},
        {"18446744073709551616", false, 0},
        {"1e3", false, 0},
        {"1.0", false, 0},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(*ints); i++) {
        struct json_pull j;
        json_pull_init(&j, ints[i].json, strlen(ints[i].json));
        int64_t v = 0;
        CHECK_INT(json_pull_integer(&j, &v), ints[i].integer);
        if (ints[i].integer)
            CHECK_INT(v, ints[i].want);
        CHECK(json_pull_end(&j));   /* a number all the same */
        json_pull_free(&j);
    }
    static const struct {
        const char *json;
        double want;
    } reals[] = {{"1.5", 1.5},
                 {"-2e-3", -0.002},
                 {"6.25E+2", 625},
                 {"12345678901234567890", 1.2345678901234567e19}};
    for (size_t i = 0; i < sizeof(reals) / sizeof(*reals); i++) {
        struct json_pull j;
        json_pull_init(&j, reals[i].json, strlen(reals[i].json));
        double v = 0;
        CHECK(json_pull_number(&j, &v));
        CHECK(v == reals[i].want);
        json_pull_free(&j);
    }
}

/* A mark at a value brings the reader back to it, inside containers too:
 * two arrays read side by side. */
TEST(marks_bring_the_reader_back)
{
    const char *doc = "{\"a\": [1, 2, 3], \"b\": [10, 20, 30]}";
    struct json_pull j;
    json_pull_init(&j, doc, strlen(doc));
    const char *key;
    struct json_mark a = {0}, b = {0};
    CHECK(json_pull_object(&j));
    while (json_pull_member(&j, &key)) {
        if (!strcmp(key, "a"))
            a = json_pull_mark(&j);
        else
            b = json_pull_mark(&j);
        CHECK(json_pull_skip(&j));
    }
    struct json_mark after = json_pull_mark(&j);
    json_pull_seek(&j, a);
    CHECK(json_pull_array(&j));
    a = json_pull_mark(&j);
    json_pull_seek(&j, b);
    CHECK(json_pull_array(&j));
    b = json_pull_mark(&j);
    int64_t sums[3], x, y;
    for (int i = 0; i < 3; i++) {
        json_pull_seek(&j, a);
        CHECK(json_pull_element(&j) && json_pull_integer(&j, &x));
        a = json_pull_mark(&j);
        json_pull_seek(&j, b);
        CHECK(json_pull_element(&j) && json_pull_integer(&j, &y));
        b = json_pull_mark(&j);
        sums[i] = x + y;
    }
    json_pull_seek(&j, a);
    CHECK(!json_pull_element(&j));   /* both at their ends */
    json_pull_seek(&j, b);
    CHECK(!json_pull_element(&j));
    CHECK_INT(sums[0], 11);
    CHECK_INT(sums[2], 33);
    json_pull_seek(&j, after);
    CHECK(json_pull_end(&j));
    json_pull_free(&j);
}

#define BAD_ESCAPE "an escape JSON does not have, or \\u0000, in a string"

TEST(broken_documents_say_what_and_where)
{
    static const struct {
        const char *json, *why;
    } cases[] = {
        {"", "unexpected end of the document at line 1, column 1"},
        {"{\"a\": 1,}", "expected a member name in quotes at line 1, column 9"},
        {"{\"a\" 1}", "expected ':' after a member name at line 1, column 6"},
        {"[1 2]", "expected ',' or ']' at line 1, column 4"},
        {"{\"a\": 1\n \"b\": 2}", "expected ',' or '}' at line 2, column 2"},
        {"[1,]", "expected a value at line 1, column 4"},
        {"[01]", "expected ',' or ']' at line 1, column 3"},
        {"[1.]", "expected a digit after a decimal point at line 1, column 4"},
        {"[1e+]", "expected a digit in an exponent at line 1, column 5"},
        {"[-]", "expected a value at line 1, column 2"},
        {"[tru]", "expected a value at line 1, column 2"},
        {"\"abc", "a string without its closing quote at line 1, column 5"},
        {"\"a\tb\"", "a control character in a string at line 1, column 3"},
        {"\"\\x\"", BAD_ESCAPE " at line 1, column 2"},
        {"\"\\u0000\"", BAD_ESCAPE " at line 1, column 2"},
        {"\"\\ud800x\"", BAD_ESCAPE " at line 1, column 2"},   /* a high surrogate alone */
        {"\"\\udc00\"", BAD_ESCAPE " at line 1, column 2"},    /* a low one first */
        {"\"\\u12\"", BAD_ESCAPE " at line 1, column 2"},
        {"\"\xc3\x28\"", "a string that is not UTF-8 at line 1, column 2"},
        {"\"\xed\xa0\x80\"", "a string that is not UTF-8 at line 1, column 2"},
        {"{} {}", "more after the end of the document at line 1, column 4"},
        {"[1", "unexpected end of the document at line 1, column 3"},
        {"{\"a\":", "unexpected end of the document at line 1, column 6"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char why[160];
        CHECK(!valid(cases[i].json, why, sizeof(why)));
        CHECK_STR(why, cases[i].why);
    }
}

/* Nesting is bounded, so no document can run the reader out of stack. */
TEST(nesting_is_bounded)
{
    size_t deep = JSON_PULL_MAX_DEPTH + 1;
    char *doc = must_malloc(2 * deep + 1);
    memset(doc, '[', deep);
    memset(doc + deep, ']', deep);
    doc[2 * deep] = '\0';
    char why[160];
    CHECK(!valid(doc, why, sizeof(why)));
    CHECK_CONTAINS(why, "nested too deep");
    doc[deep - 1] = ' ';   /* one less */
    doc[deep] = ' ';
    CHECK(valid(doc, why, sizeof(why)));
    free(doc);
}

/* After the first error every call says no, and the error stays the
 * first. */
TEST(the_first_error_stops_the_reader)
{
    const char *doc = "[1, ?, 3]";
    struct json_pull j;
    json_pull_init(&j, doc, strlen(doc));
    int64_t v;
    CHECK(json_pull_array(&j));
    CHECK(json_pull_element(&j) && json_pull_integer(&j, &v));
    CHECK(json_pull_element(&j));
    CHECK(!json_pull_skip(&j));
    CHECK(!json_pull_element(&j));
    CHECK(!json_pull_end(&j));
    CHECK_INT(json_pull_kind(&j), JSON_PULL_NONE);
    char why[160];
    json_pull_error(&j, why, sizeof(why));
    CHECK_STR(why, "expected a value at line 1, column 5");
    json_pull_free(&j);
}

RUN_TESTS()
