/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-reject.c: what the reader refuses, with which code and message
 *
 * Copyright 2026 The libserio authors
 */

#include <float.h>
#include <locale.h>
#include <math.h>
#include <string.h>

#include <serio.h>

#include "test-utils.h"

typedef struct
{
  const char *input;
  gsize       len;
  int         code;
  int         alt_code;   /* another code the spec allows, or -1 */
  guint       line;       /* the physical line the message must name */
  guint       index;      /* the 1-based value index, 0 for a line error */
  const char *text;       /* text the message must quote, or NULL */
} Rejection;

/* A literal and its length, NUL bytes included. */
#define IN(s) s, sizeof (s) - 1

#define SYNTAX    SERIO_ERROR_SYNTAX
#define DOMAIN    SERIO_ERROR_DOMAIN
#define LENGTH    SERIO_ERROR_LENGTH
#define VERSION   SERIO_ERROR_VERSION
#define TRUNCATED SERIO_ERROR_TRUNCATED

/* One malformed token as the only value of a record. */
#define TOKEN(t, code) { IN ("v1|x|1|" t "\n"), code, -1, 1, 1, t }
#define TOKEN2(t, code, alt) { IN ("v1|x|1|" t "\n"), code, alt, 1, 1, t }
/* A whole line that is wrong, not one of its values. */
#define LINE(s, code, line) { IN (s), code, -1, line, 0, NULL }

/* Spec 3.2: non-canonical spellings. */
static const Rejection syntax_tokens[] = {
  TOKEN ("+1", SYNTAX),
  TOKEN ("01", SYNTAX),
  TOKEN ("1.5", SYNTAX),
  TOKEN ("1e3", SYNTAX),
  TOKEN ("0x1p3", SYNTAX),
  TOKEN ("2p-1", SYNTAX),
  TOKEN ("1p0", SYNTAX),
  TOKEN ("1p-0", SYNTAX),
  TOKEN ("1p1", SYNTAX),
  TOKEN ("1p+3", SYNTAX),
  TOKEN ("1p-01", SYNTAX),
  TOKEN ("-nan", SYNTAX),
  TOKEN ("NaN", SYNTAX),
  TOKEN ("Inf", SYNTAX),
  TOKEN ("1 ", SYNTAX),
  TOKEN (" 1", SYNTAX),
  { IN ("v1|x|1|1\t\n"), SYNTAX, -1, 1, 1, NULL },   /* shown escaped */
  TOKEN ("- 1", SYNTAX),
  TOKEN ("1 p-1", SYNTAX),
  TOKEN ("00", SYNTAX),
  TOKEN ("-00", SYNTAX),
  TOKEN ("+0", SYNTAX),
  TOKEN ("0.0", SYNTAX),
  TOKEN ("1P-1", SYNTAX),
  TOKEN ("infinity", SYNTAX),
  TOKEN ("-", SYNTAX),
  TOKEN ("p-1", SYNTAX),
  TOKEN ("1p", SYNTAX),
  TOKEN ("1p-", SYNTAX),
  TOKEN ("3p60", SYNTAX),
  TOKEN ("1p61", SYNTAX),
  TOKEN ("4503599627370497p9", SYNTAX),
  TOKEN ("0p1", SYNTAX),
  TOKEN ("1|", SYNTAX),
  TOKEN ("1\xc3\xa9", SYNTAX),
  TOKEN2 ("2p1024", SYNTAX, DOMAIN),
  TOKEN2 ("4p-1076", SYNTAX, DOMAIN),
  TOKEN2 ("9007199254740994p1", SYNTAX, DOMAIN),
  /* empty tokens and a trailing comma */
  { IN ("v1|x|3|1,,2\n"), SYNTAX, -1, 1, 2, NULL },
  { IN ("v1|x|2|1,\n"), SYNTAX, -1, 1, 2, NULL },
  { IN ("v1|x|2|,1\n"), SYNTAX, -1, 1, 1, NULL },
  { IN ("v1|x|2|1,1p0\n"), SYNTAX, -1, 1, 2, "1p0" },
};

/* Spec 3.2: counts with a sign, leading zero or blank; records without
 * their fields. */
static const Rejection syntax_records[] = {
  LINE ("v1|x|+1|1\n", SYNTAX, 1),
  LINE ("v1|x|-1|1\n", SYNTAX, 1),
  LINE ("v1|x|01|1\n", SYNTAX, 1),
  LINE ("v1|x|00|\n", SYNTAX, 1),
  LINE ("v1|x| 1|1\n", SYNTAX, 1),
  LINE ("v1|x|1 |1\n", SYNTAX, 1),
  LINE ("v1|x|\t1|1\n", SYNTAX, 1),
  LINE ("v1|x||\n", SYNTAX, 1),
  LINE ("v1|x|0x1|1\n", SYNTAX, 1),
  LINE ("v1|x|1e0|1\n", SYNTAX, 1),
  LINE ("v1|x|1\n", SYNTAX, 1),
  LINE ("v1|x\n", SYNTAX, 1),
  LINE ("v1|\n", SYNTAX, 1),
  LINE ("v1\n", SYNTAX, 1),
  LINE ("x\n", SYNTAX, 1),
  LINE ("v1|a\rb|0|\n", SYNTAX, 1),
};

/* Spec 3.1: well-formed but not exactly one finite double. */
static const Rejection domain[] = {
  TOKEN ("1p1024", DOMAIN),
  TOKEN ("-1p1024", DOMAIN),
  TOKEN ("3p1023", DOMAIN),
  TOKEN ("9007199254740991p972", DOMAIN),
  TOKEN ("1p-1075", DOMAIN),
  TOKEN ("3p-1075", DOMAIN),
  TOKEN ("1p-1076", DOMAIN),
  TOKEN ("4503599627370497p-1075", DOMAIN),
  TOKEN ("9007199254740993p1", DOMAIN),
  TOKEN ("9007199254740993p-1", DOMAIN),
  TOKEN ("18014398509481985p-3", DOMAIN),
  TOKEN ("4611686018427387904", DOMAIN),
  TOKEN ("-4611686018427387904", DOMAIN),
  TOKEN ("9007199254740993", DOMAIN),
  TOKEN ("4611686018427387393", DOMAIN),
  /* no overflow may wrap into range */
  TOKEN ("18446744073709551617", DOMAIN),
  TOKEN ("18446744073709551617p-70", DOMAIN),
  TOKEN ("1p4294967296", DOMAIN),
  TOKEN ("1p4294967297", DOMAIN),
  TOKEN ("1p-4294967295", DOMAIN),
  TOKEN ("1p18446744073709551617", DOMAIN),
  TOKEN ("1p99999999999999999999", DOMAIN),
  TOKEN ("1p-99999999999999999999", DOMAIN),
  { IN ("v1|x|3|1,1p1024,1p0\n"), DOMAIN, -1, 1, 2, "1p1024" },
};

/* Spec 3.3: count and tokens disagree; hostile counts. */
static const Rejection lengths[] = {
  LINE ("v1|x|1|\n", LENGTH, 1),
  LINE ("v1|x|2|1\n", LENGTH, 1),
  LINE ("v1|x|0|1\n", LENGTH, 1),
  LINE ("v1|x|1|1,2\n", LENGTH, 1),
  LINE ("v1|x|3|1,2\n", LENGTH, 1),
  LINE ("v1|w|99999999999999999999999|\n", LENGTH, 1),
  LINE ("v1|w|4000000000|1\n", LENGTH, 1),
  LINE ("v1|w|4294967297|1\n", LENGTH, 1),            /* 2^32 + 1 */
  LINE ("v1|w|4294967296|\n", LENGTH, 1),             /* 2^32 */
  LINE ("v1|w|18446744073709551617|1\n", LENGTH, 1),  /* 2^64 + 1 */
  LINE ("v1|w|18446744073709551616|\n", LENGTH, 1),   /* 2^64 */
  LINE ("v1|w|2305843009213693952|\n", LENGTH, 1),    /* 2^61: 8·n wraps to 0 */
  LINE ("v1|w|2305843009213693953|1\n", LENGTH, 1),   /* 8·n wraps to 8 */
  LINE ("v1|w|9223372036854775808|\n", LENGTH, 1),
  LINE ("v1|a|1|1\nv1|b|1|2\nv1|c|2|3\n", LENGTH, 3),
};

/* Spec 3.3: a missing final LF comes first, whatever else is wrong. */
static const Rejection truncated[] = {
  LINE ("v1|x|1|345", TRUNCATED, 1),
  LINE ("v1|a|0|\nv1|x|1|34", TRUNCATED, 2),
  LINE ("v1|x|1|1\r", TRUNCATED, 1),
  LINE ("v1|x|1|1\n\r", TRUNCATED, 2),
  LINE ("v1|x|1|1\r\n\r", TRUNCATED, 2),
  LINE ("v1|x|1|1\n ", TRUNCATED, 2),
  LINE ("v1|x|1|1\n\0", TRUNCATED, 2),
  LINE ("\0", SYNTAX, 1),         /* not a serio file: before truncation (issue 20) */
  LINE ("v2|x|1|1", TRUNCATED, 1),
  LINE ("garbage", SYNTAX, 1),     /* not a serio file: before truncation (issue 20) */
  LINE ("v1|x|1|01", TRUNCATED, 1),
  LINE ("v1|x|5|1", TRUNCATED, 1),
  LINE ("v1|\xff|0|", TRUNCATED, 1),
  LINE ("\n\nv1|x|1|1p0", TRUNCATED, 3),
  LINE ("v2|x|0|\nv1|x|1|", TRUNCATED, 2),
};

/* Spec 3.3: a version tag is v or V, digits and "|"; anything else that
 * is not "v1|" is a syntax error. */
static const Rejection versions[] = {
  LINE ("v2|x|0|\n", VERSION, 1),
  LINE ("V1|x|0|\n", VERSION, 1),
  LINE ("v10|x|0|\n", VERSION, 1),
  LINE ("v0|x|0|\n", VERSION, 1),
  LINE ("v01|x|0|\n", VERSION, 1),
  LINE ("V2|\n", VERSION, 1),
  LINE ("v99999999999999999999|x|0|\n", VERSION, 1),
  LINE ("v1x|x|0|\n", SYNTAX, 1),
  LINE ("\xef\xbb\xbfv1|x|0|\n", SYNTAX, 1),
  LINE (" v1|x|0|\n", SYNTAX, 1),
  LINE ("\tv1|x|0|\n", SYNTAX, 1),
  LINE ("v|x|0|\n", SYNTAX, 1),
  LINE ("vv1|x|0|\n", SYNTAX, 1),
  LINE ("v1 |x|0|\n", SYNTAX, 1),
  LINE ("1|x|0|\n", SYNTAX, 1),
  LINE ("v-1|x|0|\n", SYNTAX, 1),
  LINE ("v2\n", SYNTAX, 1),
};

/* Spec 3.3: NUL bytes anywhere, and names that are not UTF-8. */
static const Rejection bad_bytes[] = {
  LINE ("v1|a\0b|0|\n", SYNTAX, 1),
  { IN ("v1|x|1|1\0\n"), SYNTAX, -1, 1, 1, NULL },
  { IN ("v1|x|2|1,\0\n"), SYNTAX, -1, 1, 2, NULL },
  LINE ("v1|x|1\0|1\n", SYNTAX, 1),
  LINE ("\0\n", SYNTAX, 1),
  LINE ("v1\0|x|0|\n", SYNTAX, 1),
  LINE ("v1|x|0|\n\0\n", SYNTAX, 2),
  LINE ("v1|\xff|0|\n", SYNTAX, 1),
  LINE ("v1|\xc3|0|\n", SYNTAX, 1),
  LINE ("v1|a\xc3(|0|\n", SYNTAX, 1),
  LINE ("v1|\xed\xa0\x80|0|\n", SYNTAX, 1),
  LINE ("v1|\xc0\xaf|0|\n", SYNTAX, 1),
  LINE ("v1|\xf4\x90\x80\x80|0|\n", SYNTAX, 1),
  LINE ("v1|\xf8\x88\x80\x80\x80|0|\n", SYNTAX, 1),
  LINE ("v1|ok|0|\nv1|\xfe|0|\n", SYNTAX, 2),
};

/* Messages name the physical line: blank lines and CR LF ends count, and
 * the first problem from the front is the one reported. */
static const Rejection line_numbers[] = {
  { IN ("\n\nv1|x|1|1p0\n"), SYNTAX, -1, 3, 1, "1p0" },
  { IN ("v1|a|0|\r\n\r\nv1|b|2|1,1p0\r\n"), SYNTAX, -1, 3, 2, "1p0" },
  LINE ("v1|a|0|\n\n\n\nv2|b|0|\n", VERSION, 5),
  LINE ("v1|a|1|1\r\n\r\n\r\nv1|\xff|0|\r\n", SYNTAX, 4),
  LINE ("v1|a|0|\n\r\nv1|b|2|1\r\n", LENGTH, 3),
  { IN ("v1|a|1|1p0\nv2|b|0|\n"), SYNTAX, -1, 1, 1, "1p0" },
  LINE ("v2|b|0|\nv1|a|1|1p0\n", VERSION, 1),
  { IN ("v1|a|1|1\nv1|b|1|1p1024\nv1|c|1|1p0\n"), DOMAIN, -1, 2, 1, "1p1024" },
  { IN ("v1|a|1|1\r\r\n"), SYNTAX, -1, 1, 1, NULL },
  LINE ("v1|a|0|\n\r\r\n", SYNTAX, 2),
};

/* The numbers in @message, in order: the line comes first, then the value
 * index (the C locale's wording, "Line 3, value 2 “…”: …"). */
static void
assert_message (const char      *message,
                const Rejection *r)
{
  guint64 numbers[2] = { 0, 0 };
  guint n = 0;

  g_test_message ("message: %s", message);

  for (const char *p = message; *p != '\0' && n < G_N_ELEMENTS (numbers); )
    {
      if (g_ascii_isdigit (*p))
        {
          char *end;

          numbers[n++] = g_ascii_strtoull (p, &end, 10);
          p = end;
        }
      else
        {
          p++;
        }
    }

  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpuint (numbers[0], ==, r->line);
  if (r->index > 0)
    {
      g_assert_cmpuint (n, ==, 2);
      g_assert_cmpuint (numbers[1], ==, r->index);
    }
  if (r->text != NULL)
    g_assert_nonnull (strstr (message, r->text));
}

static void
assert_code (const GError    *error,
             const Rejection *r)
{
  g_assert_nonnull (error);
  g_assert_true (error->domain == SERIO_ERROR);
  if (error->code != r->code && error->code != r->alt_code)
    g_assert_cmpint (error->code, ==, r->code);

  /* The location is data too, the same as the message's, and the detail
   * is the message without it. */
  g_assert_cmpuint (serio_error_get_line (error), ==, r->line);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, r->index);
  g_assert_nonnull (serio_error_get_detail (error));
  g_assert_true (g_str_has_suffix (error->message, serio_error_get_detail (error)));
  g_assert_null (strstr (serio_error_get_detail (error), "Line"));
  g_assert_cmpuint (strlen (serio_error_get_detail (error)), <, strlen (error->message));
}

static void
test_rejection (gconstpointer data)
{
  const Rejection *r = data;
  g_autoptr(GBytes) bytes = g_bytes_new (r->input, r->len);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_bytes (bytes, &error);

  g_assert_null (bundle);
  assert_code (error, r);
  assert_message (error->message, r);

  /* Without a GError, the result is still NULL. */
  bundle = serio_bundle_new_from_bytes (bytes, NULL);
  g_assert_null (bundle);

  /* The same through from_string, where the input has no NUL. */
  if (memchr (r->input, '\0', r->len) == NULL)
    {
      g_autoptr(GError) string_error = NULL;

      bundle = serio_bundle_new_from_string (r->input, &string_error);
      g_assert_null (bundle);
      g_assert_nonnull (string_error);
      g_assert_cmpint (string_error->code, ==, error->code);
      g_assert_cmpstr (string_error->message, ==, error->message);
    }
}

static void
add_rejections (const char      *category,
                const Rejection *table,
                gsize            n_rows)
{
  for (gsize i = 0; i < n_rows; i++)
    {
      g_autofree char *path = g_strdup_printf ("/reject/%s/%" G_GSIZE_FORMAT, category, i);

      g_test_add_data_func (path, &table[i], test_rejection);
    }
}

/* Rejects @text with @code, with a message no longer than a few lines. */
static void
check_long_token (const char *token,
                  SerioError  code)
{
  g_autofree char *text = g_strconcat ("v1|x|1|", token, "\n", NULL);
  g_autofree char *prefix = g_strndup (token, 20);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (text, &error);
  Rejection r = { text, strlen (text), code, -1, 1, 1, prefix };

  g_assert_null (bundle);
  assert_code (error, &r);
  assert_message (error->message, &r);
  g_assert_cmpuint (strlen (error->message), <, 300);
}

static void
test_long_tokens (void)
{
  g_autofree char *zeros = g_strnfill (399, '0');
  g_autofree char *ones = g_strnfill (400, '1');
  g_autofree char *nines = g_strnfill (400, '9');
  g_autofree char *integer = g_strconcat ("1", zeros, NULL);
  g_autofree char *significand = g_strconcat (ones, "p-1", NULL);
  g_autofree char *exponent = g_strconcat ("1p", nines, NULL);
  g_autofree char *negative_exponent = g_strconcat ("1p-", nines, NULL);
  g_autofree char *leading_zeros = g_strconcat (zeros, "1", NULL);

  g_test_summary ("400-digit integers, significands and exponents are out of "
                  "domain (nothing wraps into range); the message quotes the "
                  "token shortened.");

  check_long_token (integer, SERIO_ERROR_DOMAIN);
  check_long_token (ones, SERIO_ERROR_DOMAIN);
  check_long_token (significand, SERIO_ERROR_DOMAIN);
  check_long_token (exponent, SERIO_ERROR_DOMAIN);
  check_long_token (negative_exponent, SERIO_ERROR_DOMAIN);
  check_long_token (leading_zeros, SERIO_ERROR_SYNTAX);
}

static void
test_far_line (void)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  Rejection r = { NULL, 0, SERIO_ERROR_DOMAIN, -1, 3001, 2, "1p-1075" };

  for (guint i = 0; i < 1000; i++)
    g_string_append (text, "v1|a|1|1\n\r\n\n");
  g_string_append (text, "v1|b|2|1,1p-1075\n");

  bundle = serio_bundle_new_from_string (text->str, &error);
  g_assert_null (bundle);
  assert_code (error, &r);
  assert_message (error->message, &r);
}

/* from_string reads up to the first NUL; from_bytes reads every byte. */
static void
test_string_stops_at_nul (void)
{
  static const char text[] = "v1|x|0|\n\0garbage";
  g_autoptr(GBytes) bytes = g_bytes_new (text, sizeof text - 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);
  g_clear_object (&bundle);

  bundle = serio_bundle_new_from_bytes (bytes, &error);
  g_assert_null (bundle);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_TRUNCATED);
}

/* ------------------------------------------------------------------ */
/* A sample cut at every byte                                         */
/* ------------------------------------------------------------------ */

static const struct
{
  const char *line;
  guint       n_records;   /* records complete once this line is read */
} sample_lines[] = {
  { "v1|alpha|3|1p-1,-0,inf\n", 1 },
  { "\n", 1 },
  { "v1|beta|2|3602879701896397p-55,nan\r\n", 2 },
  { "v1||0|\n", 3 },
  { "\r\n", 3 },
  { "v1|γ δ|4|-9007199254740991p971,1p-1074,2305843009213693952,-1p62\n", 4 },
  { "v1|last|1|12345\n", 5 },
};

/* The bundle the sample's first @n_records records hold, built from the
 * values, not from the text. */
static SerioBundle *
sample_prefix (guint n_records)
{
  const double alpha[] = { 0.5, -0.0, INFINITY };
  const double beta[] = { 0.1, NAN };
  const double gamma_[] = { -DBL_MAX, DBL_TRUE_MIN, 0x1p61, -0x1p62 };
  const double last[] = { 12345.0 };
  const struct
  {
    const char   *name;
    const double *values;
    gsize         n_values;
  } records[] = {
    { "alpha", alpha, G_N_ELEMENTS (alpha) },
    { "beta", beta, G_N_ELEMENTS (beta) },
    { "", NULL, 0 },
    { "γ δ", gamma_, G_N_ELEMENTS (gamma_) },
    { "last", last, G_N_ELEMENTS (last) },
  };
  SerioBundle *bundle = serio_bundle_new ();

  for (guint i = 0; i < n_records; i++)
    serio_bundle_append (bundle, records[i].name, records[i].values, records[i].n_values);

  return bundle;
}

static void
test_cut_every_byte (void)
{
  g_autoptr(GString) sample = g_string_new (NULL);
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GArray) line_ends = g_array_new (FALSE, FALSE, sizeof (gsize));
  guint accepted = 0;

  g_test_summary ("The sample cut after every byte: a cut on a line end "
                  "gives exactly the records before it; any other cut is "
                  "TRUNCATED and names the cut line.");

  for (gsize i = 0; i < G_N_ELEMENTS (sample_lines); i++)
    {
      g_string_append (sample, sample_lines[i].line);
      g_array_append_val (line_ends, sample->len);
    }
  whole = g_bytes_new (sample->str, sample->len);

  for (gsize cut = 0; cut <= sample->len; cut++)
    {
      g_autoptr(GBytes) slice = g_bytes_new_from_bytes (whole, 0, cut);
      g_autofree char *string = g_strndup (sample->str, cut);
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) string_error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_bytes (slice, &error);
      g_autoptr(SerioBundle) from_string = serio_bundle_new_from_string (string, &string_error);
      gssize complete = -1;

      if (cut == 0)
        complete = 0;
      for (guint i = 0; i < line_ends->len; i++)
        if (g_array_index (line_ends, gsize, i) == cut)
          complete = sample_lines[i].n_records;

      g_test_message ("cut at %" G_GSIZE_FORMAT, cut);
      if (complete >= 0)
        {
          g_autoptr(SerioBundle) expected = sample_prefix (complete);

          g_assert_no_error (error);
          g_assert_no_error (string_error);
          g_assert_true (serio_bundle_equal (bundle, expected));
          g_assert_true (serio_bundle_equal (from_string, expected));
          accepted++;
        }
      else
        {
          guint line = 1;
          Rejection r = { NULL, 0, SERIO_ERROR_TRUNCATED, -1, 0, 0, NULL };

          for (gsize i = 0; i < cut; i++)
            line += sample->str[i] == '\n';
          r.line = line;

          g_assert_null (bundle);
          g_assert_null (from_string);
          assert_code (error, &r);
          assert_message (error->message, &r);
          g_assert_error (string_error, SERIO_ERROR, SERIO_ERROR_TRUNCATED);
        }
    }

  g_assert_cmpuint (accepted, ==, G_N_ELEMENTS (sample_lines) + 1);
  g_test_message ("%" G_GSIZE_FORMAT " cuts", sample->len + 1);
}

/* ------------------------------------------------------------------ */
/* The canonical invariant                                            */
/* ------------------------------------------------------------------ */

/* @text with CR LF turned into LF and blank lines dropped. */
static char *
normalize (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GString *out = g_string_new (NULL);

  /* the piece after the last LF is empty in accepted input */
  for (guint i = 0; lines[i] != NULL && lines[i + 1] != NULL; i++)
    {
      gsize len = strlen (lines[i]);

      if (len > 0 && lines[i][len - 1] == '\r')
        len--;
      if (len > 0)
        {
          g_string_append_len (out, lines[i], len);
          g_string_append_c (out, '\n');
        }
    }

  return g_string_free (out, FALSE);
}

static void
check_canonical (const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (text, &error);
  g_autofree char *expected = normalize (text);
  g_autofree char *again = NULL;

  g_assert_no_error (error);
  again = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (again, ==, expected);
}

static const char *accepted_corpus[] = {
  "",
  "\n",
  "\r\n\r\n",
  "v1|x|0|\n",
  "v1|x|0|\r\n",
  "\nv1|x|1|nan\n\n",
  "v1|a b\tc|3|0,-0,inf\r\n\r\nv1|名前|1|-inf\n",
  "v1|x|4|1p-1074,-1p-1074,9007199254740991p971,-9007199254740991p971\n",
  "v1|x|5|2305843009213693952,1p62,4611686018427387392,-4503599627370497p10,3p61\n",
  "v1|x|3|1,-1,9007199254740991\n",
  "v1|p|1|3602879701896397p-55\nv1|p|1|3602879701896397p-55\n",
  "v1| |0|\n",
  "v1|v2|0|\n",
  "v1|1p0|1|1p-1022\n",
  "v1|x|1|1\n\r\n\r\n\n",
  "v1|😀|2|-3p-2,6004799503160661p-54\r\n",
  "v1|\x7f\x01|1|0\n",
};

static void
test_canonical_corpus (void)
{
  g_test_summary ("to_string (from_string (s)) is s with CR LF made LF and "
                  "blank lines dropped, for a corpus of accepted inputs.");

  for (gsize i = 0; i < G_N_ELEMENTS (accepted_corpus); i++)
    check_canonical (accepted_corpus[i]);
}

/* Random bundles, their text roughened with CR LF ends and blank lines. */
static void
test_canonical_random (void)
{
  static const char *names[] = { "w", "", "größe", "名前 ", "a\tb", "v1" };
  guint n_inputs = test_iterations (2000);
  gsize n_values_total = 0;

  for (guint k = 0; k < n_inputs; k++)
    {
      g_autoptr(SerioBundle) bundle = serio_bundle_new ();
      g_autoptr(GString) rough = g_string_new (NULL);
      g_autofree char *text = NULL;
      guint n_arrays = g_test_rand_int_range (0, 6);

      for (guint a = 0; a < n_arrays; a++)
        {
          gsize n_values = g_test_rand_int_range (0, 40);
          g_autofree double *values = g_new (double, MAX (n_values, 1));

          for (gsize i = 0; i < n_values; i++)
            values[i] = test_double_of (test_rand_interesting ());
          serio_bundle_append (bundle, names[g_test_rand_int_range (0, G_N_ELEMENTS (names))],
                               values, n_values);
          n_values_total += n_values;
        }

      text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
      for (const char *p = text; *p != '\0'; p++)
        {
          if (*p == '\n' && g_test_rand_bit ())
            g_string_append_c (rough, '\r');
          g_string_append_c (rough, *p);
          if (*p == '\n' && g_test_rand_int_range (0, 4) == 0)
            g_string_append (rough, g_test_rand_bit () ? "\n" : "\r\n");
        }

      check_canonical (rough->str);
      {
        g_autofree char *normal = normalize (rough->str);

        g_assert_cmpstr (normal, ==, text);
      }
    }

  g_test_message ("%u inputs, %" G_GSIZE_FORMAT " values", n_inputs, n_values_total);
}

/* What spec 3.3 makes of a name's bytes: the reason its record is
 * refused, as the reader's message gives it, or %NULL when it is a name. */
static const char *
name_problem (const char *name,
              gsize       len)
{
  if (memchr (name, '\0', len) != NULL)
    return "contains a NUL byte";
  if (memchr (name, '\r', len) != NULL)
    return "contains a carriage return";
  if (!g_utf8_validate_len (name, len, NULL))
    return "is not valid UTF-8";
  return NULL;
}

/* Reads "v1|<name>|0|" and checks that it is refused for @problem, or read
 * with @name as its name. */
static void
check_name_bytes (const char *name,
                  gsize       len,
                  const char *problem)
{
  g_autoptr(GString) text = g_string_new ("v1|");
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GError) error = NULL;

  g_string_append_len (text, name, len);
  g_string_append (text, "|0|\n");
  bytes = g_bytes_new (text->str, text->len);
  bundle = serio_bundle_new_from_bytes (bytes, &error);
  if (problem != NULL)
    {
      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
      g_assert_nonnull (strstr (error->message, problem));
      g_assert_true (g_str_has_prefix (error->message, "Line 1: "));
    }
  else
    {
      g_assert_no_error (error);
      g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);
      g_assert_cmpmem (serio_bundle_get_name (bundle, 0), strlen (serio_bundle_get_name (bundle, 0)),
                       name, len);
    }
}

/* Spec 3.3 on every byte of a name, as the reader looks at eight bytes
 * at a time: each kind of bad byte at each place in names of 1 to 24
 * bytes (in each lane of a word, and in the bytes after the last whole
 * word), a good UTF-8 sequence at each place, then random names of
 * ASCII, control characters and bytes of UTF-8, good and bad. */
static void
test_name_bytes (void)
{
  static const struct { char byte; const char *problem; } bad[] = {
    { '\0', "contains a NUL byte" },
    { '\r', "contains a carriage return" },
    { (char) 0xff, "is not valid UTF-8" },
    { (char) 0x80, "is not valid UTF-8" },
    { (char) 0xc3, "is not valid UTF-8" },
  };
  static const char alphabet[] = "aZ09 .\t\x01\x0c\x0e\x1f\x7f\x8d\x80\xc3\xa9\xe5\x90\x8d\xff\r";
  guint n_random = test_iterations (20000), n_refused = 0;

  for (gsize len = 1; len <= 24; len++)
    {
      for (gsize at = 0; at < len; at++)
        {
          char name[32];

          memset (name, 'n', len);
          for (guint k = 0; k < G_N_ELEMENTS (bad); k++)
            {
              name[at] = bad[k].byte;
              check_name_bytes (name, len, bad[k].problem);
            }
          /* "é" in two bytes */
          memset (name, 'n', len + 1);
          memcpy (name + at, "\xc3\xa9", 2);
          check_name_bytes (name, len + 1, NULL);
        }
    }

  for (guint k = 0; k < n_random; k++)
    {
      char name[40];
      gsize len = g_test_rand_int_range (1, sizeof name);
      const char *problem;

      for (gsize i = 0; i < len; i++)
        name[i] = g_test_rand_int_range (0, 4) != 0 ? 'a' :
                  alphabet[g_test_rand_int_range (0, sizeof alphabet - 1)];
      problem = name_problem (name, len);
      n_refused += problem != NULL;
      check_name_bytes (name, len, problem);
    }
  /* Names of both kinds were read. */
  g_assert_cmpuint (n_refused, >, n_random / 4);
  g_assert_cmpuint (n_refused, <, n_random);
}

int
main (int   argc,
      char *argv[])
{
  /* Numbers follow the environment's locale (the suite also runs under
   * LC_ALL=de_DE and the like); the messages checked here are the
   * untranslated ones. */
  setlocale (LC_ALL, "");
  setlocale (LC_MESSAGES, "C");
  g_test_init (&argc, &argv, NULL);

  add_rejections ("syntax-token", syntax_tokens, G_N_ELEMENTS (syntax_tokens));
  add_rejections ("syntax-record", syntax_records, G_N_ELEMENTS (syntax_records));
  add_rejections ("domain", domain, G_N_ELEMENTS (domain));
  add_rejections ("length", lengths, G_N_ELEMENTS (lengths));
  add_rejections ("truncated", truncated, G_N_ELEMENTS (truncated));
  add_rejections ("version", versions, G_N_ELEMENTS (versions));
  add_rejections ("bad-bytes", bad_bytes, G_N_ELEMENTS (bad_bytes));
  add_rejections ("lines", line_numbers, G_N_ELEMENTS (line_numbers));

  g_test_add_func ("/reject/name-bytes", test_name_bytes);
  g_test_add_func ("/reject/long-tokens", test_long_tokens);
  g_test_add_func ("/reject/far-line", test_far_line);
  g_test_add_func ("/reject/string-stops-at-nul", test_string_stops_at_nul);
  g_test_add_func ("/reject/cut-every-byte", test_cut_every_byte);
  g_test_add_func ("/reject/canonical/corpus", test_canonical_corpus);
  g_test_add_func ("/reject/canonical/random", test_canonical_random);

  return g_test_run ();
}
