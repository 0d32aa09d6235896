/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-codec-paths.c: every form of the codec that this CPU runs
 * (portable, SSE2, AVX2) gives the same bytes, values and errors
 *
 * Copyright 2026 The libserio authors
 *
 * The other suites run once per form (SERIO_CODEC, see tests/c/meson.build)
 * and compare each with a reference; here the forms meet each other in one
 * process, on the same inputs, through the kernels of each that
 * _serio_codec_kernel_on() gives: the portable form is the yardstick.
 */

#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "serio-codec-private.h"
#include "test-utils.h"

#ifdef TEST_HAVE_MXCSR
# include <xmmintrin.h>
#endif

/* Bytes after a line in a buffer: digits, so that a kernel that reads past
 * the end of its line would see more of a number there. */
#define TAIL "12345678901234567890123456789012345678901234567890"

static const SerioCodecPath all_paths[] = {
  SERIO_CODEC_PATH_PORTABLE, SERIO_CODEC_PATH_SSE2, SERIO_CODEC_PATH_AVX2,
};

/* The forms that this build and CPU run, the portable one first. */
static GArray *
available_paths (void)
{
  GArray *paths = g_array_new (FALSE, FALSE, sizeof (SerioCodecPath));

  for (gsize i = 0; i < G_N_ELEMENTS (all_paths); i++)
    if (_serio_codec_path_available (all_paths[i]))
      g_array_append_val (paths, all_paths[i]);

  g_assert_cmpint (g_array_index (paths, SerioCodecPath, 0), ==, SERIO_CODEC_PATH_PORTABLE);
  return paths;
}

/* The tokens of @values as @path writes them, with a leading comma or
 * not, then a line feed and TAIL. */
static GString *
write_on (SerioCodecPath  path,
          const double   *values,
          gsize           n_values,
          gboolean        leading_comma)
{
  gsize bound = _serio_codec_record_bound (0, n_values) + sizeof TAIL;
  GString *text = g_string_sized_new (bound);
  char *end;

  end = _serio_codec_kernel_on (path)->write_tokens (text->str, values, n_values, leading_comma);
  g_assert_cmpuint ((gsize) (end - text->str) + SERIO_CODEC_WRITE_SLACK, <=, bound);
  *end++ = '\n';
  g_string_set_size (text, end - text->str);
  g_string_append (text, TAIL);

  return text;
}

/* What one call of the parser did: how many tokens, where it stopped,
 * whether it reached the line's end, and its error. */
typedef struct
{
  gsize       n;
  gsize       stop;
  gboolean    ended;
  int         code;
  const char *reason;
} ParseResult;

/* Parses @text from @start, whose line ends at @line_end, with @buf_len
 * readable bytes; the values go to @values (room for @max). */
static ParseResult
parse_on (SerioCodecPath  path,
          const char     *text,
          gsize           start,
          gsize           line_end,
          gsize           buf_len,
          double         *values,
          gsize           max)
{
  const char *s = text + start;
  SerioCodecProblem problem = { 0, NULL };
  ParseResult result = { 0, 0, FALSE, 0, NULL };

  result.n = _serio_codec_kernel_on (path)->parse_tokens (&s, text + line_end, text + buf_len,
                                                          values, max, &result.ended, &problem);
  result.stop = (gsize) (s - text);
  result.code = problem.reason != NULL ? problem.code : -1;
  result.reason = problem.reason;

  return result;
}

static void
assert_same_result (const ParseResult *got,
                    const ParseResult *expected)
{
  g_assert_cmpuint (got->n, ==, expected->n);
  g_assert_cmpuint (got->stop, ==, expected->stop);
  g_assert_cmpint (got->ended, ==, expected->ended);
  g_assert_cmpint (got->code, ==, expected->code);
  g_assert_cmpstr (got->reason, ==, expected->reason);
}

/* Writes @values on every form, checks that the texts are the same bytes,
 * then reads them back on every form: same values (bit for bit), same
 * stops. */
static void
check_values (const double *values,
              gsize         n_values)
{
  g_autoptr(GArray) paths = available_paths ();

  for (int leading = 0; leading <= 1; leading++)
    {
      g_autoptr(GString) expected = write_on (SERIO_CODEC_PATH_PORTABLE, values, n_values, leading);
      gsize line_end = expected->len - strlen (TAIL) - 1;
      g_autofree double *want = g_new0 (double, n_values);
      ParseResult reference;

      reference = parse_on (SERIO_CODEC_PATH_PORTABLE, expected->str, leading, line_end,
                            expected->len, want, n_values);
      g_assert_cmpuint (reference.n, ==, n_values);
      g_assert_true (reference.ended);
      g_assert_null (reference.reason);

      for (guint p = 0; p < paths->len; p++)
        {
          SerioCodecPath path = g_array_index (paths, SerioCodecPath, p);
          g_autoptr(GString) text = write_on (path, values, n_values, leading);
          g_autofree double *got = g_new0 (double, n_values);
          ParseResult result;

          g_test_message ("path %s, %s leading comma", _serio_codec_path_name (path),
                          leading ? "with" : "without");
          g_assert_cmpuint (text->len, ==, expected->len);
          g_assert_cmpmem (text->str, text->len, expected->str, expected->len);

          result = parse_on (path, text->str, leading, line_end, text->len, got, n_values);
          assert_same_result (&result, &reference);
          g_assert_cmpmem (got, n_values * sizeof (double), want, n_values * sizeof (double));
        }
    }
}

static void
test_paths_patterns (void)
{
  g_autoptr(GArray) patterns = test_load_patterns ();
  g_autofree double *values = g_new (double, patterns->len);

  g_test_summary ("Every pattern of f64_patterns.txt is written to the same bytes "
                  "and read back to the same bits by every form of the codec.");

  g_assert_cmpuint (patterns->len, ==, 44286);
  for (guint i = 0; i < patterns->len; i++)
    values[i] = test_double_of (g_array_index (patterns, guint64, i));

  check_values (values, patterns->len);
  /* and in short runs, where the loops' tails and the buffer's end meet */
  for (gsize n = 1; n <= 9; n++)
    for (gsize at = 0; at + n <= patterns->len; at += 997)
      check_values (values + at, n);
}

static void
test_paths_random (void)
{
  guint n = test_iterations (200000);
  g_autofree double *values = g_new (double, n);

  g_test_summary ("Random 64-bit patterns, patterns weighted to the edge cases, "
                  "normal(0, 0.05) weights and integers: the same bytes and bits "
                  "on every form.");

  for (int kind = 0; kind < 4; kind++)
    {
      for (guint i = 0; i < n; i++)
        {
          switch (kind)
            {
            case 0:
              values[i] = test_double_of (test_rand_u64 ());
              break;
            case 1:
              values[i] = test_double_of (test_rand_interesting ());
              break;
            case 2:
              {
                /* Box-Muller */
                double u = g_test_rand_double_range (DBL_MIN, 1.0);
                double v = g_test_rand_double_range (0.0, 2 * G_PI);

                values[i] = 0.05 * sqrt (-2 * log (u)) * cos (v);
              }
              break;
            default:
              values[i] = (double) (gint64) (test_rand_u64 () >> g_test_rand_int_range (0, 64));
              break;
            }
        }
      check_values (values, n);
    }
}

static void
test_paths_environment (void)
{
#ifdef TEST_HAVE_MXCSR
  g_autoptr(GArray) patterns = test_load_patterns ();
  g_autoptr(GArray) paths = available_paths ();
  gsize n_values = patterns->len + 4096;
  g_autofree double *values = g_new (double, n_values);
  static const char *const inexact[] = {
    "9007199254740993", "9999999999999999", "-9007199254740995", "9007199254740993p1",
    "9999999999999999p-1000",
  };

  g_test_summary ("Every form writes and reads the patterns of f64_patterns.txt and "
                  "integers up to 2^54 to the same bytes and bits with an MXCSR that traps "
                  "every exception, flushes to zero, takes denormals as zero and rounds "
                  "toward zero, and raises no exception flag: the reader's conversions of "
                  "integers to doubles are exact.");

  for (guint i = 0; i < patterns->len; i++)
    values[i] = test_double_of (g_array_index (patterns, guint64, i));
  /* integers of every length to 2^54, the odd ones below 2^53 */
  for (gsize i = 0; i < 4096; i++)
    {
      guint64 v = test_rand_u64 () >> g_test_rand_int_range (10, 64);

      values[patterns->len + i] = (double) (v >= (G_GUINT64_CONSTANT (1) << 53) ? v & ~G_GUINT64_CONSTANT (1) : v);
    }

  for (guint p = 0; p < paths->len; p++)
    {
      SerioCodecPath path = g_array_index (paths, SerioCodecPath, p);
      g_autoptr(GString) expected = write_on (path, values, n_values, FALSE);
      g_autoptr(GString) text = NULL;
      gsize line_end = expected->len - strlen (TAIL) - 1;
      g_autofree double *want = g_new0 (double, n_values);
      g_autofree double *got = g_new0 (double, n_values);
      ParseResult reference, result;
      unsigned int csr, during, after;

      reference = parse_on (path, expected->str, 0, line_end, expected->len, want, n_values);
      g_assert_cmpuint (reference.n, ==, n_values);

      csr = _mm_getcsr ();
      _mm_setcsr (test_hostile_mxcsr ());
      during = _mm_getcsr ();
      text = write_on (path, values, n_values, FALSE);
      result = parse_on (path, text->str, 0, line_end, text->len, got, n_values);
      after = _mm_getcsr ();
      _mm_setcsr (csr);

      g_test_message ("path %s", _serio_codec_path_name (path));
      /* the same register (as valgrind, which keeps no other, gives it
       * back too), so no flag raised either */
      g_assert_cmphex (after, ==, during);
      g_assert_cmpmem (text->str, text->len, expected->str, expected->len);
      assert_same_result (&result, &reference);
      g_assert_cmpmem (got, n_values * sizeof (double), want, n_values * sizeof (double));

      /* and significands that a double does not hold: refused, exactly so */
      for (gsize i = 0; i < G_N_ELEMENTS (inexact); i++)
        {
          gsize len = strlen (inexact[i]);
          g_autofree char *line = g_strconcat (inexact[i], "\n" TAIL, NULL);
          double value[1];

          reference = parse_on (path, line, 0, len, strlen (line), value, 1);
          g_assert_nonnull (reference.reason);
          csr = _mm_getcsr ();
          _mm_setcsr (test_hostile_mxcsr ());
          during = _mm_getcsr ();
          result = parse_on (path, line, 0, len, strlen (line), value, 1);
          after = _mm_getcsr ();
          _mm_setcsr (csr);
          g_assert_cmphex (after, ==, during);
          assert_same_result (&result, &reference);
        }
    }
#else
  g_test_skip ("no MXCSR here");
#endif
}

/* Parses @token (with @before and @after around it on its line) on every
 * form; all must stop at the same place with the same value or error. */
static void
check_token (GArray     *paths,
             const char *before,
             const char *token,
             gsize       token_len,
             const char *after)
{
  g_autoptr(GString) text = g_string_new (before);
  gsize line_end, short_len;

  g_string_append_len (text, token, token_len);
  g_string_append (text, after);
  line_end = text->len;
  /* no line feed in @token: its line ends here */
  g_string_append_c (text, '\n');
  short_len = text->len;
  g_string_append (text, TAIL);

  /* with bytes to spare after the line, and with the buffer ending at the
   * line feed, where the kernels must not load past it */
  for (int tight = 0; tight <= 1; tight++)
    {
      gsize buf_len = tight ? short_len : text->len;
      double want[4] = { 0 };
      ParseResult reference = parse_on (SERIO_CODEC_PATH_PORTABLE, text->str, 0, line_end,
                                        buf_len, want, G_N_ELEMENTS (want));

      for (guint p = 1; p < paths->len; p++)
        {
          SerioCodecPath path = g_array_index (paths, SerioCodecPath, p);
          double got[4] = { 0 };
          ParseResult result = parse_on (path, text->str, 0, line_end, buf_len, got, G_N_ELEMENTS (got));

          if (result.n != reference.n || result.stop != reference.stop ||
              result.code != reference.code || g_strcmp0 (result.reason, reference.reason) != 0 ||
              memcmp (got, want, sizeof got) != 0)
            {
              g_autofree char *shown = g_strescape (text->str, NULL);

              g_test_message ("path %s, line “%s”, buffer of %" G_GSIZE_FORMAT " bytes",
                              _serio_codec_path_name (path), shown, buf_len);
            }
          assert_same_result (&result, &reference);
          g_assert_cmpmem (got, sizeof got, want, sizeof want);
        }
    }
}

/* Each token alone, first, last and in the middle of a line. */
static void
check_token_everywhere (GArray     *paths,
                        const char *token,
                        gsize       len)
{
  check_token (paths, "", token, len, "");
  check_token (paths, "", token, len, ",1");
  check_token (paths, "1,", token, len, "");
  check_token (paths, "-1,", token, len, ",3602879701896397p-55");
}

static void
test_paths_rejections (void)
{
  /* valid tokens at the edges of the fast paths, to be mutated */
  static const char *const seeds[] = {
    "0", "-0", "1", "-3", "inf", "-inf", "nan", "1p-1", "1p-1074", "1p1023",
    "3602879701896397p-55", "-9007199254740991p971", "9007199254740991p-1074",
    "4503599627370497p-52", "1234567890123456", "12345678901234567",
    "2305843009213693952", "4611686018427387903", "9007199254740992", "1p62",
    "9999999999999999p-1000", "12345678p-30", "7p-1022",
  };
  /* the bytes that a mutation puts in */
  static const char mutations[] = "0159p-+.e ,x/:\r\t\x80";
  g_autoptr(GArray) paths = available_paths ();
  guint n_checked = 0;

  g_test_summary ("Every one-byte deletion, replacement, insertion and doubling "
                  "of tokens at the edges of the fast paths, and long digit runs, "
                  "are read to the same value or the same error, at the same "
                  "place, on every form.");

  for (gsize i = 0; i < G_N_ELEMENTS (seeds); i++)
    {
      gsize len = strlen (seeds[i]);

      check_token_everywhere (paths, seeds[i], len);
      for (gsize at = 0; at <= len; at++)
        {
          g_autoptr(GString) deleted = g_string_new (seeds[i]);
          g_autoptr(GString) doubled = g_string_new (seeds[i]);

          if (at < len)
            {
              g_string_erase (deleted, at, 1);
              check_token_everywhere (paths, deleted->str, deleted->len);
              g_string_insert_c (doubled, at, seeds[i][at]);
              check_token_everywhere (paths, doubled->str, doubled->len);
              n_checked += 2;
            }

          for (gsize m = 0; m < sizeof mutations - 1; m++)
            {
              g_autoptr(GString) replaced = g_string_new (seeds[i]);
              g_autoptr(GString) inserted = g_string_new (seeds[i]);

              if (at < len)
                {
                  replaced->str[at] = mutations[m];
                  check_token_everywhere (paths, replaced->str, replaced->len);
                  n_checked++;
                }
              g_string_insert_c (inserted, at, mutations[m]);
              check_token_everywhere (paths, inserted->str, inserted->len);
              n_checked++;
            }
        }
    }

  /* runs of 1 to 40 digits, plain and with exponents of 1 to 6 digits */
  for (gsize digits = 1; digits <= 40; digits++)
    for (gsize e_digits = 0; e_digits <= 6; e_digits++)
      {
        g_autoptr(GString) token = g_string_new (NULL);

        for (gsize d = 0; d < digits; d++)
          g_string_append_c (token, (char) ('1' + (d * 7) % 9));
        if (e_digits > 0)
          {
            g_string_append (token, "p-");
            for (gsize d = 0; d < e_digits; d++)
              g_string_append_c (token, (char) ('1' + d % 9));
          }
        check_token_everywhere (paths, token->str, token->len);
        n_checked++;
      }

  g_test_message ("%u tokens on %u forms", n_checked, paths->len);
}

/* The form that the library takes follows SERIO_CODEC, falling back to
 * the best form below the one asked for that this build and CPU run. */
static void
test_paths_choice (void)
{
  const char *forced = g_getenv ("SERIO_CODEC");
  SerioCodecPath expected = SERIO_CODEC_PATH_AVX2;

  if (g_strcmp0 (forced, "portable") == 0)
    expected = SERIO_CODEC_PATH_PORTABLE;
  else if (g_strcmp0 (forced, "sse2") == 0)
    expected = SERIO_CODEC_PATH_SSE2;
  while (!_serio_codec_path_available (expected))
    expected--;

  g_test_message ("SERIO_CODEC=%s: %s", forced ? forced : "(unset)",
                  _serio_codec_path_name (_serio_codec_get_path ()));
  g_assert_cmpint (_serio_codec_get_path (), ==, expected);
  g_assert_cmpstr (_serio_codec_path_name (_serio_codec_get_path ()), ==,
                   _serio_codec_path_name (expected));
  g_assert_true (_serio_codec_uses_simd () == (expected != SERIO_CODEC_PATH_PORTABLE));
#ifdef SERIO_CODEC_HAVE_AVX2
  g_assert_true (_serio_codec_path_available (SERIO_CODEC_PATH_SSE2));
  g_assert_true (_serio_codec_path_available (SERIO_CODEC_PATH_AVX2) ==
                 (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("bmi") &&
                  __builtin_cpu_supports ("bmi2")));
#else
  g_assert_false (_serio_codec_path_available (SERIO_CODEC_PATH_AVX2));
#endif
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/codec-paths/choice", test_paths_choice);
  g_test_add_func ("/codec-paths/patterns", test_paths_patterns);
  g_test_add_func ("/codec-paths/random", test_paths_random);
  g_test_add_func ("/codec-paths/rejections", test_paths_rejections);
  g_test_add_func ("/codec-paths/environment", test_paths_environment);

  return g_test_run ();
}
