/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bundle.c: the public API of SerioBundle, through the shared library
 *
 * Copyright 2026 The libserio authors
 */

#include <float.h>
#include <locale.h>
#include <math.h>
#include <string.h>

#include <serio.h>

#include "test-utils.h"

/* A bundle holding @values under @name, built through the public API. */
static SerioBundle *
bundle_of (const char   *name,
           const double *values,
           gsize         n_values)
{
  SerioBundle *bundle = serio_bundle_new ();

  serio_bundle_append (bundle, name, values, n_values);
  return bundle;
}

/* Asserts that get_bytes() of every array of @bundle holds exactly the
 * values of get_values(): a slice at the wrong offset of a block that
 * several arrays share would not. */
static void
assert_bytes_match_values (SerioBundle *bundle)
{
  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      g_autoptr(GBytes) bytes = serio_bundle_get_bytes (bundle, i);
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);

      g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                       values, n_values * sizeof (double));
    }
}

static SerioBundle *
parse_ok (const char *text)
{
  g_autoptr(GError) error = NULL;
  SerioBundle *bundle = serio_bundle_new_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (bundle);
  assert_bytes_match_values (bundle);
  return bundle;
}

/* Asserts that the array at @index of @bundle holds exactly @expected. */
static void
assert_array (SerioBundle   *bundle,
              guint          index,
              const char    *name,
              const guint64 *expected,
              gsize          n_expected)
{
  gsize n_values;
  const double *values = serio_bundle_get_values (bundle, index, &n_values);

  g_assert_cmpstr (serio_bundle_get_name (bundle, index), ==, name);
  g_assert_cmpuint (n_values, ==, n_expected);
  test_assert_same_bits (values, expected, n_values);
}

/* Writes @value as the only value of a record and checks the text; reads
 * the text and checks the value. */
static void
check_token (double      value,
             const char *token)
{
  g_autoptr(SerioBundle) bundle = bundle_of ("r", &value, 1);
  g_autoptr(SerioBundle) parsed = NULL;
  g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autofree char *expected = g_strconcat ("v1|r|1|", token, "\n", NULL);
  guint64 bits = test_canonical_bits (test_bits_of (value));

  g_assert_cmpstr (text, ==, expected);

  parsed = parse_ok (expected);
  g_assert_cmpuint (serio_bundle_get_n_arrays (parsed), ==, 1);
  assert_array (parsed, 0, "r", &bits, 1);
}

static void
test_reference_tokens (void)
{
  const struct
  {
    double      value;
    const char *token;
  } tokens[] = {
    { 0.5, "1p-1" },
    { 0.1, "3602879701896397p-55" },
    { DBL_MAX, "9007199254740991p971" },
    { DBL_TRUE_MIN, "1p-1074" },
    { 0x1p1023, "1p1023" },
    { 0x1p61, "2305843009213693952" },
    { 0x1p62, "1p62" },
    { 0.0, "0" },
    { -0.0, "-0" },
    { INFINITY, "inf" },
    { -INFINITY, "-inf" },
    { NAN, "nan" },
    { -NAN, "nan" },
    { -0.5, "-1p-1" },
    { -0.1, "-3602879701896397p-55" },
    { -DBL_MAX, "-9007199254740991p971" },
    { -DBL_TRUE_MIN, "-1p-1074" },
    { -0x1p61, "-2305843009213693952" },
    { -0x1p62, "-1p62" },
    { 1.0, "1" },
    { 0.75, "3p-2" },
    { 1.0 / 3.0, "6004799503160661p-54" },
    { DBL_MIN, "1p-1022" },
  };

  g_test_summary ("The reference tokens of spec section 3, in both directions.");

  for (gsize i = 0; i < G_N_ELEMENTS (tokens); i++)
    check_token (tokens[i].value, tokens[i].token);
}

static void
test_integer_boundaries (void)
{
  const struct
  {
    double      value;
    const char *token;
  } tokens[] = {
    { 0x1p53 - 1, "9007199254740991" },
    { 0x1p53, "9007199254740992" },
    { 0x1p53 + 2, "9007199254740994" },
    { 0x1p61, "2305843009213693952" },
    { 0x1p62 - 512, "4611686018427387392" },
    { 0x1p62, "1p62" },
    { 0x1p62 + 1024, "4503599627370497p10" },
    { 3 * 0x1p60, "3458764513820540928" },
    { 3 * 0x1p61, "3p61" },
    { 0x1p63 - 1024, "9007199254740991p10" },
    { 0x1p63, "1p63" },
    { 0x1p64, "1p64" },
    { 2.0, "2" },
    { 1024.0, "1024" },
  };
  static const char *out_of_domain[] = {
    "9007199254740993",
    "-9007199254740993",
    "4611686018427387904",
    "-4611686018427387904",
    "4611686018427387393",
    "-4611686018427388416",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (tokens); i++)
    {
      g_autofree char *negative = g_strconcat ("-", tokens[i].token, NULL);

      check_token (tokens[i].value, tokens[i].token);
      check_token (-tokens[i].value, negative);
    }

  /* 2^53 + 1 has no double; 2^62 and above must be written m p e. */
  for (gsize i = 0; i < G_N_ELEMENTS (out_of_domain); i++)
    {
      g_autofree char *text = g_strconcat ("v1|r|1|", out_of_domain[i], "\n", NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (text, &error);

      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
    }
}

/* The token the spec gives m·2^e (m odd, e ≠ 0 unless it is an integer). */
static char *
expected_token (gboolean negative,
                guint64  m,
                int      e)
{
  const char *sign = negative ? "-" : "";
  int length = 64 - __builtin_clzll (m);

  if (e >= 0 && e + length <= 62)
    return g_strdup_printf ("%s%" G_GUINT64_FORMAT, sign, m << e);

  return g_strdup_printf ("%s%" G_GUINT64_FORMAT "p%d", sign, m, e);
}

static void
test_exponent_sweep (void)
{
  g_autoptr(GArray) values = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) bits = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GString) expected = g_string_new ("v1|sweep|");
  g_autoptr(GString) tokens = g_string_new (NULL);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("Every exponent from -1074 to 971 with the odd "
                  "significands 1, 3, 2^53-1 and a random one, both signs: "
                  "each value is written as the spec's m p e or digits "
                  "token and read back bit for bit.");

  for (int e = -1074; e <= 971; e++)
    {
      const guint64 significands[] = {
        1, 3, (G_GUINT64_CONSTANT (1) << 53) - 1, test_rand_odd (g_test_rand_int_range (2, 54)),
      };

      for (gsize k = 0; k < G_N_ELEMENTS (significands); k++)
        for (int negative = 0; negative <= 1; negative++)
          {
            double value = ldexp ((double) significands[k], e) * (negative ? -1 : 1);
            guint64 pattern = test_bits_of (value);
            g_autofree char *token = expected_token (negative, significands[k], e);

            /* one value per bundle... */
            check_token (value, token);

            /* ...and all of them in one record */
            if (values->len > 0)
              g_string_append_c (tokens, ',');
            g_string_append (tokens, token);
            g_array_append_val (values, value);
            g_array_append_val (bits, pattern);
          }
    }

  g_string_append_printf (expected, "%u|%s\n", values->len, tokens->str);

  serio_bundle_append_array (bundle, "sweep", values);
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, expected->str);

  parsed = parse_ok (expected->str);
  assert_array (parsed, 0, "sweep", (const guint64 *) (gconstpointer) bits->data, bits->len);
  g_assert_true (serio_bundle_equal (bundle, parsed));

  g_test_message ("%u values", values->len);
}

/* Round-trips @n_values patterns through text and compares with memcmp. */
static void
check_round_trip (const guint64 *patterns,
                  gsize          n_values,
                  guint          n_arrays)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autofree guint64 *canonical = g_new (guint64, n_values);
  g_autofree char *text = NULL;
  g_autofree char *again = NULL;
  gsize per_array = (n_values + n_arrays - 1) / n_arrays;

  for (gsize i = 0; i < n_values; i++)
    canonical[i] = test_canonical_bits (patterns[i]);

  for (gsize start = 0; start < n_values; start += per_array)
    {
      g_autofree char *name = g_strdup_printf ("a%" G_GSIZE_FORMAT, start);

      serio_bundle_append (bundle, name, (const double *) (gconstpointer) (patterns + start),
                           MIN (per_array, n_values - start));
    }

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  parsed = parse_ok (text);
  g_assert_cmpuint (serio_bundle_get_n_arrays (parsed), ==, serio_bundle_get_n_arrays (bundle));

  for (guint a = 0; a < serio_bundle_get_n_arrays (parsed); a++)
    {
      gsize start = a * per_array;

      assert_array (parsed, a, serio_bundle_get_name (bundle, a),
                    canonical + start, MIN (per_array, n_values - start));
      /* append itself stores canonical NaNs */
      assert_array (bundle, a, serio_bundle_get_name (bundle, a),
                    canonical + start, MIN (per_array, n_values - start));
    }

  g_assert_true (serio_bundle_equal (bundle, parsed));
  again = serio_bundle_to_string (parsed, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (again, ==, text);
}

static void
test_random_patterns (void)
{
  guint n = test_iterations (1000000);
  const gsize chunk = 100000;
  g_autofree guint64 *patterns = g_new (guint64, chunk);

  g_test_summary ("Uniformly random 64-bit patterns survive to_string and "
                  "from_string bit for bit (NaNs as the default quiet NaN).");

  for (guint done = 0; done < n; done += chunk)
    {
      gsize count = MIN (chunk, n - done);

      for (gsize i = 0; i < count; i++)
        patterns[i] = test_rand_u64 ();
      check_round_trip (patterns, count, 10);
    }

  g_test_message ("%u patterns", n);
}

static void
test_interesting_patterns (void)
{
  guint n = test_iterations (200000);
  g_autofree guint64 *patterns = g_new (guint64, n);

  for (guint i = 0; i < n; i++)
    patterns[i] = test_rand_interesting ();
  check_round_trip (patterns, n, 7);

  g_test_message ("%u patterns", n);
}

static void
test_patterns_file (void)
{
  g_autoptr(GArray) patterns = test_load_patterns ();
  guint n = patterns->len;

  g_test_summary ("Every pattern of tests/data/f64_patterns.txt, and its "
                  "negation, round-trips bit for bit.");

  g_assert_cmpuint (n, ==, 44286);
  for (guint i = 0; i < n; i++)
    {
      guint64 negated = g_array_index (patterns, guint64, i) ^ TEST_SIGN_BIT;

      g_array_append_val (patterns, negated);
    }

  check_round_trip ((const guint64 *) (gconstpointer) patterns->data, patterns->len, 3);
  g_test_message ("%u patterns", patterns->len);
}

static void
test_names (void)
{
  static const struct
  {
    const char *name;
    const char *stored;
  } names[] = {
    { "a|b", "a_b" },
    { "line\nbreak\r", "line_break_" },
    { "\r\n|", "___" },
    { "größe", "größe" },
    { "名前", "名前" },
    { "🙂 emoji", "🙂 emoji" },
    { " tab\tand space ", " tab\tand space " },
    { "", "" },
    { "v1|x|1|2\n", "v1_x_1_2_" },
  };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *text = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      double value = (double) i;

      serio_bundle_append (bundle, names[i].name, &value, 1);
      g_assert_cmpstr (serio_bundle_get_name (bundle, i), ==, names[i].stored);
      g_string_append_printf (expected, "v1|%s|1|%" G_GSIZE_FORMAT "\n", names[i].stored, i);
    }

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, expected->str);

  parsed = parse_ok (text);
  g_assert_true (serio_bundle_equal (bundle, parsed));
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      guint index = G_MAXUINT;

      g_assert_cmpstr (serio_bundle_get_name (parsed, i), ==, names[i].stored);
      g_assert_true (serio_bundle_lookup (parsed, names[i].stored, &index));
      g_assert_cmpuint (index, ==, i);
    }

  /* Look-ups compare names as stored. */
  g_assert_false (serio_bundle_lookup (bundle, "a|b", NULL));
  g_assert_true (serio_bundle_lookup (bundle, "a_b", NULL));
}

static void
test_duplicate_names (void)
{
  const double first[] = { 1.0 };
  const double second[] = { 2.0, 3.0 };
  const guint64 first_bits[] = { test_bits_of (1.0) };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autofree char *text = NULL;
  guint index = G_MAXUINT;

  serio_bundle_append (bundle, "other", NULL, 0);
  serio_bundle_append (bundle, "w", first, G_N_ELEMENTS (first));
  serio_bundle_append (bundle, "w", second, G_N_ELEMENTS (second));
  serio_bundle_append (bundle, "", NULL, 0);
  serio_bundle_append (bundle, "", first, G_N_ELEMENTS (first));

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, "v1|other|0|\nv1|w|1|1\nv1|w|2|2,3\nv1||0|\nv1||1|1\n");

  parsed = parse_ok (text);
  g_assert_cmpuint (serio_bundle_get_n_arrays (parsed), ==, 5);
  g_assert_true (serio_bundle_lookup (parsed, "w", &index));
  g_assert_cmpuint (index, ==, 1);
  assert_array (parsed, index, "w", first_bits, 1);
  g_assert_true (serio_bundle_lookup (parsed, "", &index));
  g_assert_cmpuint (index, ==, 3);

  /* A failed look-up leaves the index alone. */
  index = 42;
  g_assert_false (serio_bundle_lookup (parsed, "missing", &index));
  g_assert_cmpuint (index, ==, 42);
  g_assert_false (serio_bundle_lookup (parsed, "W", NULL));
}

static void
test_invalid_name (void)
{
  const double value = 1.0;
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) bytes = g_bytes_new (&value, sizeof value);
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (double));

  g_test_summary ("A name that is not valid UTF-8 is a precondition failure "
                  "of every append function, and the bundle stays as it was.");

  g_array_append_val (array, value);

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append (bundle, "bad\xff", &value, 1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_bytes (bundle, "\xc3", bytes);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_array (bundle, "\xed\xa0\x80", array);
  g_test_assert_expected_messages ();

  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 0);
}

static void
test_empty_bundle (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(SerioBundle) blank = NULL;
  g_autoptr(SerioBundle) from_bytes = NULL;
  g_autoptr(GBytes) empty = g_bytes_new (NULL, 0);
  g_autoptr(GBytes) bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);

  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 0);
  g_assert_cmpstr (text, ==, "");
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);

  parsed = parse_ok ("");
  g_assert_cmpuint (serio_bundle_get_n_arrays (parsed), ==, 0);
  g_assert_true (serio_bundle_equal (bundle, parsed));

  from_bytes = serio_bundle_new_from_bytes (empty, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (serio_bundle_get_n_arrays (from_bytes), ==, 0);

  /* Blank lines alone make an empty bundle too. */
  blank = parse_ok ("\n\r\n\n");
  g_assert_cmpuint (serio_bundle_get_n_arrays (blank), ==, 0);
}

static void
test_empty_array (void)
{
  g_autoptr(SerioBundle) bundle = bundle_of ("e", NULL, 0);
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  gsize n_values = 99;
  const double *values;

  g_assert_cmpstr (text, ==, "v1|e|0|\n");

  parsed = parse_ok (text);
  values = serio_bundle_get_values (parsed, 0, &n_values);
  g_assert_cmpuint (n_values, ==, 0);
  /* NULL is what a failed precondition returns; an empty array is not one. */
  g_assert_nonnull (values);

  bytes = serio_bundle_get_bytes (parsed, 0);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);
  g_assert_true (serio_bundle_equal (bundle, parsed));
}

static void
test_equal (void)
{
  const double nan_a = test_double_of (G_GUINT64_CONSTANT (0x7FF8000000000000));
  const double nan_b = test_double_of (G_GUINT64_CONSTANT (0xFFF0000000000001));
  const double zero = 0.0, minus_zero = -0.0;
  const double pair[] = { 1.0, 2.0 };
  const double reversed[] = { 2.0, 1.0 };
  g_autoptr(SerioBundle) a = bundle_of ("x", &nan_a, 1);
  g_autoptr(SerioBundle) b = bundle_of ("x", &nan_b, 1);
  g_autoptr(SerioBundle) z = bundle_of ("x", &zero, 1);
  g_autoptr(SerioBundle) mz = bundle_of ("x", &minus_zero, 1);
  g_autoptr(SerioBundle) named = bundle_of ("y", &zero, 1);
  g_autoptr(SerioBundle) ordered = bundle_of ("x", pair, 2);
  g_autoptr(SerioBundle) reordered = bundle_of ("x", reversed, 2);
  g_autoptr(SerioBundle) prefix = bundle_of ("x", pair, 1);
  g_autoptr(SerioBundle) two = serio_bundle_new ();
  g_autoptr(SerioBundle) two_swapped = serio_bundle_new ();
  g_autoptr(SerioBundle) empty = serio_bundle_new ();
  g_autoptr(SerioBundle) other_empty = serio_bundle_new ();

  g_test_summary ("equal() compares names and bit patterns in order: NaN "
                  "equals NaN, 0 differs from -0.");

  g_assert_true (serio_bundle_equal (a, a));
  g_assert_true (serio_bundle_equal (a, b));
  g_assert_true (serio_bundle_equal (empty, other_empty));
  g_assert_false (serio_bundle_equal (z, mz));
  g_assert_false (serio_bundle_equal (mz, z));
  g_assert_false (serio_bundle_equal (z, named));
  g_assert_false (serio_bundle_equal (ordered, reordered));
  g_assert_false (serio_bundle_equal (ordered, prefix));
  g_assert_false (serio_bundle_equal (z, empty));
  g_assert_false (serio_bundle_equal (empty, z));

  serio_bundle_append (two, "p", &zero, 1);
  serio_bundle_append (two, "q", &zero, 1);
  serio_bundle_append (two_swapped, "q", &zero, 1);
  serio_bundle_append (two_swapped, "p", &zero, 1);
  g_assert_false (serio_bundle_equal (two, two_swapped));
  serio_bundle_append (two_swapped, "r", &zero, 1);
  g_assert_false (serio_bundle_equal (two, two_swapped));
}

static void
test_append_copies (void)
{
  double values[] = { 1.0, 2.0, 3.0 };
  const guint64 expected[] = { test_bits_of (1.0), test_bits_of (2.0), test_bits_of (3.0) };
  g_autoptr(SerioBundle) bundle = bundle_of ("c", values, G_N_ELEMENTS (values));

  values[1] = 42.0;
  assert_array (bundle, 0, "c", expected, G_N_ELEMENTS (expected));
}

static void
test_append_array (void)
{
  const guint64 patterns[] = {
    G_GUINT64_CONSTANT (0x3FB999999999999A),
    G_GUINT64_CONSTANT (0x8000000000000000),
    G_GUINT64_CONSTANT (0x7FF0000000000001),
    G_GUINT64_CONSTANT (0xFFFFFFFFFFFFFFFF),
  };
  guint64 canonical[G_N_ELEMENTS (patterns)];
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) floats = g_array_new (FALSE, FALSE, sizeof (float));
  g_autoptr(GArray) empty = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) direct = serio_bundle_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (patterns); i++)
    {
      double value = test_double_of (patterns[i]);

      g_array_append_val (array, value);
      canonical[i] = test_canonical_bits (patterns[i]);
    }

  serio_bundle_append_array (bundle, "a", array);
  serio_bundle_append_array (bundle, "e", empty);
  serio_bundle_append (direct, "a", (const double *) (gconstpointer) array->data, array->len);
  serio_bundle_append (direct, "e", NULL, 0);

  assert_array (bundle, 0, "a", canonical, G_N_ELEMENTS (canonical));
  assert_array (bundle, 1, "e", NULL, 0);
  g_assert_true (serio_bundle_equal (bundle, direct));

  /* The GArray is copied, not kept. */
  g_array_index (array, double, 0) = 7.0;
  assert_array (bundle, 0, "a", canonical, G_N_ELEMENTS (canonical));

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_array (bundle, "f", floats);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 2);
}

static void
test_append_bytes (void)
{
  const guint64 patterns[] = {
    G_GUINT64_CONSTANT (0x3FE0000000000000),
    G_GUINT64_CONSTANT (0x8000000000000000),  /* -0 is kept */
    G_GUINT64_CONSTANT (0x7FF0000000000001),  /* NaNs become canonical */
    G_GUINT64_CONSTANT (0xFFF8000000000000),
    G_GUINT64_CONSTANT (0x7FFFFFFFFFFFFFFF),
    G_GUINT64_CONSTANT (0x0000000000000001),
    G_GUINT64_CONSTANT (0xFFF0000000000000),
  };
  const gsize n = G_N_ELEMENTS (patterns);
  guint64 canonical[G_N_ELEMENTS (patterns)];
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) with_nans = g_bytes_new (patterns, sizeof patterns);
  g_autoptr(GBytes) clean = NULL;
  g_autoptr(GBytes) base = NULL;
  g_autoptr(GBytes) misaligned = NULL;
  g_autoptr(GBytes) empty = g_bytes_new (NULL, 0);
  g_autoptr(GBytes) odd_size = g_bytes_new (patterns, 12);
  g_autoptr(GBytes) got = NULL;
  guint8 *storage = g_malloc (sizeof patterns + 1);

  for (gsize i = 0; i < n; i++)
    canonical[i] = test_canonical_bits (patterns[i]);

  /* NaNs: copied and made canonical, the caller's bytes untouched */
  serio_bundle_append_bytes (bundle, "nans", with_nans);
  assert_array (bundle, 0, "nans", canonical, n);
  g_assert_cmpmem (g_bytes_get_data (with_nans, NULL), sizeof patterns, patterns, sizeof patterns);

  /* aligned and canonical: kept by reference, as documented */
  clean = g_bytes_new (canonical, sizeof canonical);
  serio_bundle_append_bytes (bundle, "clean", clean);
  got = serio_bundle_get_bytes (bundle, 1);
  g_assert_true (g_bytes_equal (got, clean));
  g_assert_true (g_bytes_get_data (got, NULL) == g_bytes_get_data (clean, NULL));
  g_clear_pointer (&got, g_bytes_unref);

  /* at an odd address: copied correctly */
  memcpy (storage + 1, patterns, sizeof patterns);
  base = g_bytes_new_take (storage, sizeof patterns + 1);
  misaligned = g_bytes_new_from_bytes (base, 1, sizeof patterns);
  g_assert_cmpuint ((guintptr) g_bytes_get_data (misaligned, NULL) % G_ALIGNOF (double), !=, 0);
  serio_bundle_append_bytes (bundle, "misaligned", misaligned);
  assert_array (bundle, 2, "misaligned", canonical, n);
  got = serio_bundle_get_bytes (bundle, 2);
  g_assert_cmpuint ((guintptr) g_bytes_get_data (got, NULL) % G_ALIGNOF (double), ==, 0);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), canonical, sizeof canonical);
  g_clear_pointer (&got, g_bytes_unref);

  /* zero length */
  serio_bundle_append_bytes (bundle, "empty", empty);
  assert_array (bundle, 3, "empty", NULL, 0);
  got = serio_bundle_get_bytes (bundle, 3);
  g_assert_cmpuint (g_bytes_get_size (got), ==, 0);

  /* a size that is not a multiple of 8 */
  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_bytes (bundle, "odd", odd_size);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 4);

  /* what went in by bytes comes out of the text the same */
  {
    g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
    g_autoptr(SerioBundle) parsed = parse_ok (text);

    g_assert_true (serio_bundle_equal (bundle, parsed));
    for (guint i = 0; i < 3; i++)
      {
        g_autoptr(GBytes) values = serio_bundle_get_bytes (parsed, i);

        g_assert_cmpmem (g_bytes_get_data (values, NULL), g_bytes_get_size (values),
                         canonical, sizeof canonical);
      }
  }
}

static void
test_get_bytes (void)
{
  const double values[] = { 0.1, -0.0, 1e300 };
  g_autoptr(SerioBundle) bundle = bundle_of ("g", values, G_N_ELEMENTS (values));
  g_autoptr(GBytes) bytes = serio_bundle_get_bytes (bundle, 0);
  gsize n_values;
  const double *direct = serio_bundle_get_values (bundle, 0, &n_values);

  g_assert_cmpuint (g_bytes_get_size (bytes), ==, sizeof values);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), sizeof values, values, sizeof values);
  g_assert_cmpmem (direct, n_values * sizeof (double), values, sizeof values);

  /* The bytes outlive the bundle. */
  g_clear_object (&bundle);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), sizeof values, values, sizeof values);
}

static void
test_get_bytes_parsed (void)
{
  static const guint64 expected[][2] = {
    { G_GUINT64_CONSTANT (0x3FF0000000000000), G_GUINT64_CONSTANT (0x4000000000000000) },
    { G_GUINT64_CONSTANT (0x4008000000000000), G_GUINT64_CONSTANT (0x4010000000000000) },
  };
  g_autoptr(SerioBundle) parsed = parse_ok ("v1|a|2|1,2\nv1|b|2|3,4\n");

  g_test_summary ("Issue 12: get_bytes() of each array of a parsed bundle of several "
                  "arrays, which share one block, holds that array's values.");

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr(GBytes) bytes = serio_bundle_get_bytes (parsed, i);
      guint64 got[2];

      g_assert_cmpuint (g_bytes_get_size (bytes), ==, sizeof got);
      memcpy (got, g_bytes_get_data (bytes, NULL), sizeof got);
      g_assert_cmphex (got[0], ==, expected[i][0]);
      g_assert_cmphex (got[1], ==, expected[i][1]);
    }
}

static void
test_negative_default_nan (void)
{
  const guint64 negative_nan = G_GUINT64_CONSTANT (0xFFF8000000000000);
  g_autoptr(GBytes) in = g_bytes_new (&negative_nan, sizeof negative_nan);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autofree char *text = NULL;
  guint64 bits;

  g_test_summary ("Issue 12: the negative default NaN appended with append_bytes() "
                  "is stored and written as the canonical nan, and to_string() "
                  "parses back to an equal bundle.");

  serio_bundle_append_bytes (bundle, "n", in);
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, "v1|n|1|nan\n");

  out = serio_bundle_get_bytes (bundle, 0);
  g_assert_cmpuint (g_bytes_get_size (out), ==, sizeof bits);
  memcpy (&bits, g_bytes_get_data (out, NULL), sizeof bits);
  g_assert_cmphex (bits, ==, G_GUINT64_CONSTANT (0x7FF8000000000000));

  parsed = parse_ok (text);
  g_assert_true (serio_bundle_equal (bundle, parsed));
  g_assert_true (serio_bundle_equal (parsed, bundle));
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    user_data)
{
  guint *count = user_data;

  g_assert_cmpstr (g_param_spec_get_name (pspec), ==, "n-arrays");
  (*count)++;
}

static void
test_n_arrays_property (void)
{
  const double value = 1.0;
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GBytes) bytes = g_bytes_new (&value, sizeof value);
  guint notified = 0;
  guint n_arrays = G_MAXUINT;

  g_object_get (bundle, "n-arrays", &n_arrays, NULL);
  g_assert_cmpuint (n_arrays, ==, 0);

  g_signal_connect (bundle, "notify::n-arrays", G_CALLBACK (count_notify), &notified);

  serio_bundle_append (bundle, "a", &value, 1);
  g_assert_cmpuint (notified, ==, 1);
  serio_bundle_append_array (bundle, "b", array);
  g_assert_cmpuint (notified, ==, 2);
  serio_bundle_append_bytes (bundle, "c", bytes);
  g_assert_cmpuint (notified, ==, 3);

  g_object_get (bundle, "n-arrays", &n_arrays, NULL);
  g_assert_cmpuint (n_arrays, ==, 3);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 3);

  /* A failed append notifies nothing. */
  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append (bundle, "\xff", &value, 1);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (notified, ==, 3);
}

static void
test_golden (void)
{
  /* Written from the rules of spec sections 2 and 3, not from the output:
   * 0.1 = 3602879701896397·2^-55, 1/3 = 6004799503160661·2^-54,
   * 0.75 = 3·2^-2, 3·2^70 is an integer above 2^62, 2^-1074 the smallest
   * subnormal, "a|b" is sanitized, NaN is "nan" whatever its sign. */
  static const char golden[] =
    "v1|dense.w|3|3602879701896397p-55,-0,inf\n"
    "v1|bias|6|6004799503160661p-54,-3p-2,1024,3p70,1p-1074,nan\n"
    "v1|empty|0|\n"
    "v1|a_b|2|-inf,-9007199254740991\n"
    "v1||1|0\n"
    "v1|名前 x|1|-4611686018427387392\n";
  const double dense[] = { 0.1, -0.0, INFINITY };
  const double bias[] = { 1.0 / 3.0, -0.75, 1024.0, 3 * 0x1p70, DBL_TRUE_MIN, -NAN };
  const double pipes[] = { -INFINITY, -(0x1p53 - 1) };
  const double zero = 0.0;
  const double below = -(0x1p62 - 512);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *text = NULL;

  serio_bundle_append (bundle, "dense.w", dense, G_N_ELEMENTS (dense));
  serio_bundle_append (bundle, "bias", bias, G_N_ELEMENTS (bias));
  serio_bundle_append (bundle, "empty", NULL, 0);
  serio_bundle_append (bundle, "a|b", pipes, G_N_ELEMENTS (pipes));
  serio_bundle_append (bundle, "", &zero, 1);
  serio_bundle_append (bundle, "名前 x", &below, 1);

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, golden);

  bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                   golden, sizeof golden - 1);

  parsed = parse_ok (golden);
  g_assert_true (serio_bundle_equal (bundle, parsed));
}

/* Calls that break a precondition warn and change nothing. */
static void
test_preconditions (void)
{
  const double value = 1.0;
  g_autoptr(SerioBundle) bundle = bundle_of ("x", &value, 1);
  gsize n_values = 99;

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_get_name (bundle, 1));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_get_values (bundle, 1, &n_values));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_get_bytes (bundle, G_MAXUINT));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append (bundle, "y", NULL, 3);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append (bundle, NULL, &value, 1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (serio_bundle_lookup (bundle, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_new_from_string (NULL, NULL));
  g_test_assert_expected_messages ();

  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  /* The environment's locale, so that the suite's runs under LC_ALL=de_DE
   * and the like check that nothing depends on it. */
  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/bundle/reference-tokens", test_reference_tokens);
  g_test_add_func ("/bundle/integer-boundaries", test_integer_boundaries);
  g_test_add_func ("/bundle/exponent-sweep", test_exponent_sweep);
  g_test_add_func ("/bundle/random-patterns", test_random_patterns);
  g_test_add_func ("/bundle/interesting-patterns", test_interesting_patterns);
  g_test_add_func ("/bundle/patterns-file", test_patterns_file);
  g_test_add_func ("/bundle/names", test_names);
  g_test_add_func ("/bundle/duplicate-names", test_duplicate_names);
  g_test_add_func ("/bundle/invalid-name", test_invalid_name);
  g_test_add_func ("/bundle/empty-bundle", test_empty_bundle);
  g_test_add_func ("/bundle/empty-array", test_empty_array);
  g_test_add_func ("/bundle/equal", test_equal);
  g_test_add_func ("/bundle/append-copies", test_append_copies);
  g_test_add_func ("/bundle/append-array", test_append_array);
  g_test_add_func ("/bundle/append-bytes", test_append_bytes);
  g_test_add_func ("/bundle/get-bytes", test_get_bytes);
  g_test_add_func ("/bundle/get-bytes-parsed", test_get_bytes_parsed);
  g_test_add_func ("/bundle/negative-default-nan", test_negative_default_nan);
  g_test_add_func ("/bundle/n-arrays-property", test_n_arrays_property);
  g_test_add_func ("/bundle/golden", test_golden);
  g_test_add_func ("/bundle/preconditions", test_preconditions);

  return g_test_run ();
}
