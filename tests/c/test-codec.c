/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-codec.c: the v1 token writer and reader against a reference
 *
 * Copyright 2026 The libserio authors
 *
 * This program is built twice: against the library as shipped (on x86-64,
 * the writer's SSE2 path) and against the codec built with
 * SERIO_CODEC_SCALAR (the portable path). Both are checked against the
 * reference below, a deliberately plain transcription of spec section 3
 * that uses nothing but integer arithmetic, one bit or one digit at a time.
 */

#include <locale.h>
#include <string.h>

#include "serio-codec-private.h"
#include "serio-dtype-private.h"
#include "serio-error.h"
#include "serio-reader.h"

#include "test-utils.h"

#define TWO_POW_52 (G_GUINT64_CONSTANT (1) << 52)
#define TWO_POW_53 (G_GUINT64_CONSTANT (1) << 53)
#define TWO_POW_62 (G_GUINT64_CONSTANT (1) << 62)

/* Decimal numbers in the reference saturate here: anything this large is
 * out of every range of the format. */
#define REF_HUGE   (G_GUINT64_CONSTANT (1) << 63)

/* ------------------------------------------------------------------ */
/* The reference                                                      */
/* ------------------------------------------------------------------ */

static void
ref_append_decimal (GString *out,
                    guint64  v)
{
  char digits[20];
  int n = 0;

  do
    {
      digits[n++] = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v != 0);

  while (n > 0)
    g_string_append_c (out, digits[--n]);
}

/* Whether m·2^e is below 2^62, doubling one step at a time. */
static gboolean
ref_below_2_62 (guint64 m,
                gint64  e)
{
  for (gint64 i = 0; i < e; i++)
    {
      m *= 2;
      if (m >= TWO_POW_62)
        return FALSE;
    }

  return m < TWO_POW_62;
}

/* The canonical token of @bits, from the table of spec section 3. */
static char *
ref_write (guint64 bits)
{
  gboolean negative = (bits >> 63) != 0;
  guint64 biased = (bits >> 52) & 0x7FF;
  guint64 frac = bits & (TWO_POW_52 - 1);
  GString *out = g_string_new (NULL);
  guint64 m;
  gint64 e;

  if (biased == 0x7FF && frac != 0)
    {
      g_string_append (out, "nan");
      return g_string_free (out, FALSE);
    }

  if (negative)
    g_string_append_c (out, '-');

  if (biased == 0x7FF)
    {
      g_string_append (out, "inf");
      return g_string_free (out, FALSE);
    }

  if (biased == 0 && frac == 0)
    {
      g_string_append_c (out, '0');
      return g_string_free (out, FALSE);
    }

  if (biased == 0)
    {
      m = frac;
      e = -1074;
    }
  else
    {
      m = frac + TWO_POW_52;
      e = (gint64) biased - 1075;
    }

  while (m % 2 == 0)
    {
      m /= 2;
      e++;
    }

  if (e >= 0 && ref_below_2_62 (m, e))
    {
      for (gint64 i = 0; i < e; i++)
        m *= 2;
      ref_append_decimal (out, m);
    }
  else
    {
      ref_append_decimal (out, m);
      g_string_append_c (out, 'p');
      if (e < 0)
        g_string_append_c (out, '-');
      ref_append_decimal (out, (guint64) ABS (e));
    }

  return g_string_free (out, FALSE);
}

/* The bits of m·2^e (m ≥ 1), or FALSE if that is not exactly one finite
 * double: the significand is moved one bit at a time until it has 53 bits
 * or the exponent reaches the subnormal floor. */
static gboolean
ref_assemble (guint64  m,
              gint64   e,
              guint64 *bits)
{
  while (m % 2 == 0)
    {
      m /= 2;
      e++;
    }

  if (e < -1074 || m >= TWO_POW_53)
    return FALSE;

  while (m < TWO_POW_52 && e > -1074)
    {
      m *= 2;
      e--;
    }

  if (m < TWO_POW_52)
    {
      *bits = m;
      return TRUE;
    }

  if (e + 1075 > 2046)
    return FALSE;

  *bits = ((guint64) (e + 1075) << 52) | (m - TWO_POW_52);
  return TRUE;
}

/* Reads a run of decimal digits starting at @p, saturating at REF_HUGE. */
static const char *
ref_read_decimal (const char *p,
                  const char *end,
                  guint64    *value)
{
  guint64 v = 0;

  while (p < end && *p >= '0' && *p <= '9')
    {
      v = v >= REF_HUGE / 10 ? REF_HUGE : MIN (v * 10 + (guint64) (*p - '0'), REF_HUGE);
      p++;
    }

  *value = v;
  return p;
}

#define REF_SYNTAX (1u << SERIO_ERROR_SYNTAX)
#define REF_DOMAIN (1u << SERIO_ERROR_DOMAIN)

/* Reads one token. Returns 0 and its bits when the token is accepted, or
 * the set of error codes (as 1 << code) of every rule it breaks: a token
 * breaking several rules may be reported with any of their codes. */
static guint
ref_read (const char *token,
          gsize       len,
          guint64    *bits)
{
  const char *p = token;
  const char *end = token + len;
  guint64 sign = 0, m, e_abs;
  gint64 e;
  gboolean e_negative = FALSE;
  guint broken = 0;

  if (len == 3 && memcmp (token, "nan", 3) == 0)
    {
      *bits = TEST_CANONICAL_NAN_BITS;
      return 0;
    }

  if (p < end && *p == '-')
    {
      sign = TEST_SIGN_BIT;
      p++;
    }

  if (end - p == 1 && *p == '0')
    {
      *bits = sign;
      return 0;
    }
  if (end - p == 3 && memcmp (p, "inf", 3) == 0)
    {
      *bits = sign | G_GUINT64_CONSTANT (0x7FF0000000000000);
      return 0;
    }

  /* What is left must be [1-9][0-9]* with an optional p-?[1-9][0-9]*. */
  if (p == end || *p < '1' || *p > '9')
    return REF_SYNTAX;
  p = ref_read_decimal (p, end, &m);

  if (p == end)
    {
      if (m >= TWO_POW_62 || !ref_assemble (m, 0, bits))
        return REF_DOMAIN;
      *bits |= sign;
      return 0;
    }

  if (*p != 'p')
    return REF_SYNTAX;
  if ((p[-1] - '0') % 2 == 0)
    broken |= REF_SYNTAX;
  p++;
  if (p < end && *p == '-')
    {
      e_negative = TRUE;
      p++;
    }
  if (p == end || *p < '1' || *p > '9')
    return REF_SYNTAX;
  p = ref_read_decimal (p, end, &e_abs);
  if (p != end)
    return REF_SYNTAX;

  e = e_negative ? -(gint64) MIN (e_abs, 100000) : (gint64) MIN (e_abs, 100000);

  /* An integer below 2^62 has its own spelling. */
  if (e > 0 && m < TWO_POW_53 && ref_below_2_62 (m, e))
    broken |= REF_SYNTAX;
  if (m >= TWO_POW_53 || !ref_assemble (m, e, bits))
    broken |= REF_DOMAIN;

  if (broken == 0)
    *bits |= sign;

  return broken;
}

/* ------------------------------------------------------------------ */
/* Driving the codec                                                  */
/* ------------------------------------------------------------------ */

typedef struct
{
  char    *name;
  gsize    n_values;
  double  *values;
} Record;

static void
record_free (gpointer data)
{
  Record *record = data;

  g_free (record->name);
  g_free (record->values);
  g_free (record);
}

/* Reads @len bytes of @text through a SerioReader over them, which
 * parses them in place, from a heap copy of exactly @len bytes (no
 * terminating NUL), so that an over-read shows up under valgrind and
 * ASan. Each array is read in one call, so that its values take the
 * parallel path when they are many. Returns the records, or NULL with
 * @error. */
static GPtrArray *
codec_read (const char  *text,
            gsize        len,
            GError     **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_memdup2 (text, len), len);
  g_autoptr(SerioReader) reader = serio_reader_new_for_bytes (bytes);
  g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func (record_free);
  GError *local_error = NULL;

  while (serio_reader_next (reader, NULL, &local_error))
    {
      Record *record = g_new0 (Record, 1);
      /* n values take at least 2n - 1 bytes: no more room than that,
       * whatever the count says. */
      gsize room = (gsize) MIN (serio_reader_get_n_values (reader), len / 2 + 1);
      gsize got = 0, n;

      record->name = g_strdup (serio_reader_get_name (reader));
      record->values = room > 0 ? g_new (double, room) : NULL;
      g_ptr_array_add (records, record);
      do
        {
          if (!serio_reader_read_values (reader, room > 0 ? record->values + got : NULL, room - got, &n,
                                         NULL, &local_error))
            break;
          got += n;
        }
      while (n > 0 && got < room);
      if (local_error != NULL)
        break;
      record->n_values = got;
    }

  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  return g_steal_pointer (&records);
}

/* The codec's token for @bits, written into a heap buffer of exactly the
 * size the API promises to be enough. */
static char *
codec_write (guint64 bits)
{
  char *buffer = g_malloc (SERIO_CODEC_TOKEN_MAX + SERIO_CODEC_WRITE_SLACK);
  char *end = _serio_codec_write_token (buffer, test_double_of (bits));
  gsize len = end - buffer;
  char *token;

  g_assert_cmpuint (len, >=, 1);
  g_assert_cmpuint (len, <=, SERIO_CODEC_TOKEN_MAX);
  token = g_strndup (buffer, len);
  g_free (buffer);

  return token;
}

/* Reads @token as the only value of a record. Returns 0 and the value's
 * bits, or the error code as 1 << code. */
static guint
codec_read_token (const char *token,
                  gsize       len,
                  guint64    *bits)
{
  g_autoptr(GString) line = g_string_new ("v1|t|1|");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = NULL;
  Record *record;

  g_string_append_len (line, token, len);
  g_string_append_c (line, '\n');

  records = codec_read (line->str, line->len, &error);
  if (records == NULL)
    {
      g_assert_nonnull (error);
      g_assert_true (error->domain == SERIO_ERROR);
      return 1u << error->code;
    }

  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 1);
  record = g_ptr_array_index (records, 0);
  g_assert_cmpstr (record->name, ==, "t");
  g_assert_cmpuint (record->n_values, ==, 1);
  *bits = test_bits_of (record->values[0]);

  return 0;
}

/* ------------------------------------------------------------------ */
/* Tests                                                              */
/* ------------------------------------------------------------------ */

/* The reference itself, on the spec's own examples, so that a mistake in
 * it cannot hide a mistake in the codec. */
static void
test_reference_self_check (void)
{
  static const struct
  {
    guint64     bits;
    const char *token;
  } examples[] = {
    { G_GUINT64_CONSTANT (0x3FE0000000000000), "1p-1" },
    { G_GUINT64_CONSTANT (0x3FB999999999999A), "3602879701896397p-55" },
    { G_GUINT64_CONSTANT (0x7FEFFFFFFFFFFFFF), "9007199254740991p971" },
    { G_GUINT64_CONSTANT (0x0000000000000001), "1p-1074" },
    { G_GUINT64_CONSTANT (0x7FE0000000000000), "1p1023" },
    { G_GUINT64_CONSTANT (0x43C0000000000000), "2305843009213693952" },
    { G_GUINT64_CONSTANT (0x43D0000000000000), "1p62" },
    { G_GUINT64_CONSTANT (0x0000000000000000), "0" },
    { G_GUINT64_CONSTANT (0x8000000000000000), "-0" },
    { G_GUINT64_CONSTANT (0x7FF0000000000000), "inf" },
    { G_GUINT64_CONSTANT (0xFFF0000000000000), "-inf" },
    { G_GUINT64_CONSTANT (0x7FF8000000000000), "nan" },
    { G_GUINT64_CONSTANT (0x3FF0000000000000), "1" },
    { G_GUINT64_CONSTANT (0xC008000000000000), "-3" },
  };
  static const struct
  {
    const char *token;
    guint       broken;
  } rejected[] = {
    { "+1", REF_SYNTAX }, { "01", REF_SYNTAX }, { "1.5", REF_SYNTAX },
    { "1e3", REF_SYNTAX }, { "0x1p3", REF_SYNTAX }, { "2p-1", REF_SYNTAX },
    { "1p0", REF_SYNTAX }, { "1p-0", REF_SYNTAX }, { "1p1", REF_SYNTAX },
    { "1p+3", REF_SYNTAX }, { "1p-01", REF_SYNTAX }, { "-nan", REF_SYNTAX },
    { "NaN", REF_SYNTAX }, { "Inf", REF_SYNTAX }, { "1 ", REF_SYNTAX },
    { "1p1024", REF_DOMAIN }, { "1p-1075", REF_DOMAIN }, { "3p-1075", REF_DOMAIN },
    { "9007199254740993p1", REF_DOMAIN }, { "4611686018427387904", REF_DOMAIN },
    { "9007199254740993", REF_DOMAIN }, { "1p99999999999999999999", REF_DOMAIN },
    { "2p1024", REF_SYNTAX | REF_DOMAIN },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (examples); i++)
    {
      g_autofree char *token = ref_write (examples[i].bits);
      guint64 bits = 0;

      g_assert_cmpstr (token, ==, examples[i].token);
      g_assert_cmpuint (ref_read (token, strlen (token), &bits), ==, 0);
      g_assert_cmphex (bits, ==, examples[i].bits);
    }

  for (gsize i = 0; i < G_N_ELEMENTS (rejected); i++)
    {
      guint64 bits;

      g_test_message ("token “%s”", rejected[i].token);
      g_assert_cmpuint (ref_read (rejected[i].token, strlen (rejected[i].token), &bits),
                        ==, rejected[i].broken);
    }
}

/* Writes @bits with the codec and the reference, and reads the token back
 * with both. */
static void
check_pattern (guint64 bits)
{
  g_autofree char *expected = ref_write (bits);
  g_autofree char *token = codec_write (bits);
  guint64 from_codec = 0, from_ref = 0;

  if (g_strcmp0 (token, expected) != 0)
    {
      g_test_message ("pattern 0x%016" G_GINT64_MODIFIER "X", bits);
      g_assert_cmpstr (token, ==, expected);
    }

  g_assert_cmpuint (codec_read_token (token, strlen (token), &from_codec), ==, 0);
  g_assert_cmpuint (ref_read (token, strlen (token), &from_ref), ==, 0);
  g_assert_cmphex (from_codec, ==, test_canonical_bits (bits));
  g_assert_cmphex (from_ref, ==, test_canonical_bits (bits));
}

static void
test_write_random (void)
{
  guint n = test_iterations (1000000);

  g_test_summary ("Random bit patterns, uniform and weighted to edge cases, "
                  "give the reference's token and read back bit for bit.");

  for (guint i = 0; i < n; i++)
    check_pattern (i % 2 ? test_rand_u64 () : test_rand_interesting ());

  g_test_message ("%u patterns", n);
}

static void
test_write_patterns_file (void)
{
  g_autoptr(GArray) patterns = test_load_patterns ();
  guint step = test_slow_tool () ? 50 : 1;
  guint n = 0;

  for (guint i = 0; i < patterns->len; i += step)
    {
      guint64 bits = g_array_index (patterns, guint64, i);

      check_pattern (bits);
      check_pattern (bits ^ TEST_SIGN_BIT);
      n += 2;
    }

  g_test_message ("%u patterns", n);
}

/* Every exponent with significands of every length, through the longest
 * decimal runs the writer has (16 digits with SSE2, 17 to 19 in three
 * 8-digit groups). */
static void
test_write_every_exponent (void)
{
  int step = test_slow_tool () ? 13 : 1;
  guint n = 0;

  for (int biased = 0; biased <= 0x7FF; biased++)
    for (int length = 1; length <= 53; length += step)
      {
        guint64 frac = (test_rand_odd (length) << (53 - length)) & (TWO_POW_52 - 1);
        guint64 bits = ((guint64) biased << 52) | frac;

        check_pattern (bits);
        check_pattern (bits ^ TEST_SIGN_BIT);
        n += 2;
      }

  g_test_message ("%u patterns", n);
}

/* A token made of pieces that are each almost right: significands and
 * exponents at every boundary of the format (and exponents that wrap at 32
 * or 64 bits), sometimes one off, sometimes with a leading zero, sometimes
 * even. */
static GString *
random_structured_token (void)
{
  GString *out = g_string_new (NULL);
  int length = g_test_rand_int_range (1, 56);
  guint64 m = test_rand_odd (length) - (guint64) g_test_rand_int_range (0, 2);
  gint64 e;

  switch (g_test_rand_int_range (0, 6))
    {
    case 0: e = -1074 + g_test_rand_int_range (-2, 3); break;
    case 1: e = 1023 - length + 1 + g_test_rand_int_range (-2, 3); break;
    case 2: e = 62 - length + g_test_rand_int_range (-2, 3); break;
    case 3: e = g_test_rand_int_range (-2, 3); break;
    case 4: e = g_test_rand_int_range (-1200, 1200); break;
    default:
      /* |e| = 2^k + d, which a 32- or 64-bit exponent would wrap */
      e = (gint64) ((G_GUINT64_CONSTANT (1) << g_test_rand_int_range (31, 63)) +
                    (guint64) g_test_rand_int_range (-2, 3));
      if (g_test_rand_bit ())
        e = -e;
      break;
    }

  if (g_test_rand_bit ())
    g_string_append_c (out, '-');
  if (g_test_rand_int_range (0, 50) == 0)
    g_string_append_c (out, '0');

  if (e >= 0 && e + length <= 64 && g_test_rand_bit ())
    {
      /* the same number as plain digits */
      ref_append_decimal (out, m << e);
      return out;
    }

  ref_append_decimal (out, m);
  g_string_append_c (out, 'p');
  if (e < 0)
    g_string_append_c (out, '-');
  if (g_test_rand_int_range (0, 50) == 0)
    g_string_append_c (out, '0');
  ref_append_decimal (out, (guint64) ABS (e));

  return out;
}

/* A valid token with one byte deleted, replaced, inserted or doubled. */
static GString *
random_mutated_token (void)
{
  static const char alphabet[] = "0123456789p-+.eEinfaxNI |\t\0";
  g_autofree char *valid = ref_write (test_rand_interesting ());
  GString *out = g_string_new (valid);
  gsize at = g_test_rand_int_range (0, (gint32) out->len + 1);
  char c = alphabet[g_test_rand_int_range (0, sizeof alphabet - 1)];

  switch (g_test_rand_int_range (0, 4))
    {
    case 0:
      if (at < out->len)
        g_string_erase (out, at, 1);
      break;
    case 1:
      if (at < out->len)
        out->str[at] = c;
      break;
    case 2:
      g_string_insert_len (out, at, &c, 1);
      break;
    default:
      if (at < out->len)
        g_string_insert_len (out, at, out->str + at, 1);
      break;
    }

  return out;
}

/* Checks the codec's verdict on @token against the reference's. */
static void
check_read (const char *token,
            gsize       len)
{
  guint64 from_codec = 0, from_ref = 0;
  guint codec_code, ref_broken;

  /* Empty tokens and separators belong to the record tests. */
  if (len == 0 || memchr (token, ',', len) || memchr (token, '\n', len) || memchr (token, '\r', len))
    return;

  codec_code = codec_read_token (token, len, &from_codec);
  ref_broken = ref_read (token, len, &from_ref);

  if (ref_broken == 0 ? codec_code != 0 || from_codec != from_ref
                      : (codec_code & ref_broken) == 0)
    {
      g_autofree char *copy = g_strndup (token, len);
      g_autofree char *shown = g_strescape (copy, NULL);

      g_test_message ("token “%s”: codec %#x / 0x%016" G_GINT64_MODIFIER "X, "
                      "reference %#x / 0x%016" G_GINT64_MODIFIER "X",
                      shown, codec_code, from_codec, ref_broken, from_ref);
      g_test_fail ();
    }
}

static void
test_read_random (void)
{
  guint n = test_iterations (300000);

  g_test_summary ("Near-valid tokens (boundary significands and exponents, "
                  "non-canonical spellings, one-byte mutations of valid "
                  "tokens) are accepted or rejected as the reference does, "
                  "with the same value or an error code the spec allows.");

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GString) token = i % 2 ? random_structured_token () : random_mutated_token ();

      check_read (token->str, token->len);
      if (g_test_failed ())
        return;
    }

  g_test_message ("%u tokens", n);
}

/* Decimal runs of every length around the limits the reader tracks
 * (19 exact digits, 16 significand digits) and past 64 bits. */
static void
test_read_long_digits (void)
{
  guint n = 0;

  for (int digits = 1; digits <= 45; digits++)
    for (int trial = 0; trial < 40; trial++)
      {
        g_autoptr(GString) run = g_string_new (NULL);
        const char *suffixes[] = { "", "p-1", "p1", "p-1074", "p971", "p-1100" };

        g_string_append_c (run, (char) ('1' + g_test_rand_int_range (0, 9)));
        for (int i = 1; i < digits; i++)
          g_string_append_c (run, (char) (trial == 0 ? '9' : trial == 1 ? '0' : '0' + g_test_rand_int_range (0, 10)));

        for (gsize s = 0; s < G_N_ELEMENTS (suffixes); s++)
          {
            g_autofree char *token = g_strconcat (run->str, suffixes[s], NULL);

            check_read (token, strlen (token));
            n++;
          }
      }

  g_test_message ("%u tokens", n);
}

/* A record written by the codec equals the reference's, and reads back. */
static void
test_write_record (void)
{
  guint n_records = test_iterations (2000);
  gsize n_checked = 0;

  for (guint r = 0; r < n_records; r++)
    {
      static const char *names[] = { "w", "", "dense.weight", "größe 名前", "tab\there" };
      const char *name = names[r % G_N_ELEMENTS (names)];
      gsize n_values = r % 7 == 0 ? 0 : (gsize) g_test_rand_int_range (1, 300);
      g_autofree double *values = g_new (double, MAX (n_values, 1));
      g_autoptr(GString) expected = g_string_new ("v1|");
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) records = NULL;
      gsize bound = _serio_codec_record_bound (strlen (name), n_values);
      g_autofree char *buffer = g_malloc (bound);
      char *end;
      Record *record;

      g_string_append_printf (expected, "%s|%" G_GSIZE_FORMAT "|", name, n_values);
      for (gsize i = 0; i < n_values; i++)
        {
          g_autofree char *token = NULL;

          values[i] = test_double_of (test_rand_interesting ());
          token = ref_write (test_bits_of (values[i]));
          if (i > 0)
            g_string_append_c (expected, ',');
          g_string_append (expected, token);
        }
      g_string_append_c (expected, '\n');

      end = _serio_codec_write_record (buffer, name, strlen (name), values, n_values);
      g_assert_cmpuint (end - buffer, <=, bound);
      g_assert_cmpmem (buffer, end - buffer, expected->str, expected->len);

      records = codec_read (buffer, end - buffer, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (records->len, ==, 1);
      record = g_ptr_array_index (records, 0);
      g_assert_cmpstr (record->name, ==, name);
      g_assert_cmpuint (record->n_values, ==, n_values);
      for (gsize i = 0; i < n_values; i++)
        g_assert_cmphex (test_bits_of (record->values[i]), ==,
                         test_canonical_bits (test_bits_of (values[i])));
      n_checked += n_values;
    }

  g_test_message ("%u records, %" G_GSIZE_FORMAT " values", n_records, n_checked);
}

/* The name is taken by length, not up to a NUL, and the count is written
 * in decimal whatever its size. */
static void
test_write_record_name_length (void)
{
  const double values[] = { 0.5, -0.0 };
  gsize bound = _serio_codec_record_bound (3, G_N_ELEMENTS (values));
  g_autofree char *buffer = g_malloc (bound);
  char *end = _serio_codec_write_record (buffer, "abcdef", 3, values, G_N_ELEMENTS (values));
  static const char expected[] = "v1|abc|2|1p-1,-0\n";

  g_assert_cmpmem (buffer, end - buffer, expected, sizeof expected - 1);

  end = _serio_codec_write_record (buffer, "abc", 3, NULL, 0);
  g_assert_cmpmem (buffer, end - buffer, "v1|abc|0|\n", 10);
}

/* The callback sees each record once, in order, with its name and count,
 * before the values; blank lines and CR LF ends are skipped. */
static void
test_read_records (void)
{
  static const char text[] =
    "\n"
    "v1|a|2|1,2\r\n"
    "\r\n"
    "v1||0|\n"
    "v1|名前|1|-inf\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = codec_read (text, sizeof text - 1, &error);
  Record *record;

  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 3);

  record = g_ptr_array_index (records, 0);
  g_assert_cmpstr (record->name, ==, "a");
  g_assert_cmpuint (record->n_values, ==, 2);
  g_assert_cmphex (test_bits_of (record->values[0]), ==, test_bits_of (1.0));
  g_assert_cmphex (test_bits_of (record->values[1]), ==, test_bits_of (2.0));

  record = g_ptr_array_index (records, 1);
  g_assert_cmpstr (record->name, ==, "");
  g_assert_cmpuint (record->n_values, ==, 0);

  record = g_ptr_array_index (records, 2);
  g_assert_cmpstr (record->name, ==, "名前");
  g_assert_cmpuint (record->n_values, ==, 1);
  g_assert_cmphex (test_bits_of (record->values[0]), ==, G_GUINT64_CONSTANT (0xFFF0000000000000));

  g_clear_pointer (&records, g_ptr_array_unref);
  records = codec_read ("", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 0);
}

/* Hostile counts are refused before the callback is asked for room (the
 * callback itself asserts that), and a count is never taken modulo 2^32
 * or 2^64. */
static void
test_read_hostile_counts (void)
{
  static const char *inputs[] = {
    "v1|w|99999999999999999999999|\n",
    "v1|w|4000000000|1\n",
    "v1|w|4294967297|1\n",
    "v1|w|4294967296|\n",
    "v1|w|18446744073709551617|1\n",
    "v1|w|18446744073709551616|\n",
    "v1|w|18446744073709551615|1\n",
    "v1|w|2305843009213693952|\n",
    "v1|w|2305843009213693953|1\n",
    "v1|w|3|1,2\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) records = codec_read (inputs[i], strlen (inputs[i]), &error);

      g_assert_null (records);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
    }
}

/* Every token kind as the very last bytes of an exactly sized buffer: the
 * reader looks ahead by whole 8-byte groups and must stay inside. */
static void
test_read_buffer_end (void)
{
  static const char *tokens[] = {
    "0", "-0", "inf", "-inf", "nan", "1", "7", "12345678", "123456789",
    "9007199254740991", "4611686018427387392", "1p-1074", "-9007199254740991p-1074",
    "3p61", "1p1023", "1p-1", "i", "in", "n", "na", "-", "1p", "1p-", "01",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (tokens); i++)
    for (gsize pad = 0; pad < 8; pad++)
      {
        /* Padding the name moves the token across 8-byte boundaries. */
        g_autofree char *name = g_strnfill (pad, 'n');
        g_autofree char *line = g_strdup_printf ("v1|%s|1|%s\n", name, tokens[i]);
        g_autofree char *line_crlf = g_strdup_printf ("v1|%s|1|%s\r\n", name, tokens[i]);
        guint64 expected;
        guint ref_broken = ref_read (tokens[i], strlen (tokens[i]), &expected);
        const char *variants[] = { line, line_crlf };

        for (gsize v = 0; v < G_N_ELEMENTS (variants); v++)
          {
            g_autoptr(GError) error = NULL;
            g_autoptr(GPtrArray) records = codec_read (variants[v], strlen (variants[v]), &error);

            if (ref_broken != 0)
              {
                g_assert_null (records);
                g_assert_nonnull (error);
                g_assert_cmpuint ((1u << error->code) & ref_broken, !=, 0);
              }
            else
              {
                Record *record;

                g_assert_no_error (error);
                record = g_ptr_array_index (records, 0);
                g_assert_cmphex (test_bits_of (record->values[0]), ==, expected);
              }
          }
      }
}

static void
test_canonicalize (void)
{
  static const guint64 patterns[] = {
    G_GUINT64_CONSTANT (0x7FF0000000000001),
    G_GUINT64_CONSTANT (0xFFF8000000000000),
    G_GUINT64_CONSTANT (0x7FFFFFFFFFFFFFFF),
    G_GUINT64_CONSTANT (0xFFF0000000000001),
    G_GUINT64_CONSTANT (0x7FF8000000000001),
    G_GUINT64_CONSTANT (0x7FF8000000000000),
    G_GUINT64_CONSTANT (0x7FF0000000000000),
    G_GUINT64_CONSTANT (0xFFF0000000000000),
    G_GUINT64_CONSTANT (0x8000000000000000),
    G_GUINT64_CONSTANT (0x0000000000000001),
  };
  double values[G_N_ELEMENTS (patterns)];
  guint64 expected[G_N_ELEMENTS (patterns)];

  for (gsize i = 0; i < G_N_ELEMENTS (patterns); i++)
    {
      double one = test_double_of (patterns[i]);

      values[i] = one;
      expected[i] = test_canonical_bits (patterns[i]);
      g_assert_cmpint (_serio_float64_is_canonical (&one, 1), ==, expected[i] == patterns[i]);
    }

  g_assert_false (_serio_float64_is_canonical (values, G_N_ELEMENTS (values)));
  g_assert_true (_serio_float64_is_canonical (values + 5, G_N_ELEMENTS (values) - 5));

  _serio_float64_canonicalize (values, G_N_ELEMENTS (values));
  test_assert_same_bits (values, expected, G_N_ELEMENTS (values));
  g_assert_true (_serio_float64_is_canonical (values, G_N_ELEMENTS (values)));
}

/* A token made to land on the edges of the reader's fast path: 1 to 20
 * digits (sometimes a leading 0), an optional exponent of 0 to 6 digits
 * (sometimes a sign or a leading 0), now and then one stray byte. */
static char *
make_edge_token (GRand *rand)
{
  static const char stray[] = "pP-+.e,x0 \r";
  GString *token = g_string_new (NULL);
  int n_digits = g_rand_int_range (rand, 1, 21);

  if (g_rand_boolean (rand))
    g_string_append_c (token, '-');
  for (int i = 0; i < n_digits; i++)
    g_string_append_c (token, (char) ('0' + g_rand_int_range (rand, i == 0 ? (g_rand_int_range (rand, 0, 8) == 0 ? 0 : 1) : 0, 10)));
  if (g_rand_int_range (rand, 0, 3) != 0)
    {
      int e_digits = g_rand_int_range (rand, 0, 7);

      g_string_append_c (token, 'p');
      if (g_rand_boolean (rand))
        g_string_append_c (token, '-');
      for (int i = 0; i < e_digits; i++)
        g_string_append_c (token, (char) ('0' + g_rand_int_range (rand, i == 0 ? (g_rand_int_range (rand, 0, 8) == 0 ? 0 : 1) : 0, 10)));
    }
  if (g_rand_int_range (rand, 0, 16) == 0)
    {
      guint at = (guint) g_rand_int_range (rand, 0, (gint32) token->len + 1);

      g_string_insert_c (token, at, stray[g_rand_int_range (rand, 0, sizeof stray - 1)]);
    }

  return g_string_free (token, FALSE);
}

/* The tokens that the fast path takes (32 readable bytes after them) give
 * the reference's bits, and those it hands on give the same code and
 * reason as the general parse alone (_serio_codec_parse_long_token, which
 * never takes the fast path), whatever follows: more digits after a comma,
 * a line feed, a carriage return. */
static void
test_read_fast_path (void)
{
  static const char *const tails[] = {
    ",123456789012345678901234567890123456789\n",
    "\nv1|x|1|1234567890123456789012345678901234\n",
    "\r\n99999999999999999999999999999999999999\n",
  };
  g_autoptr(GRand) rand = g_rand_new_with_seed (2126);
  int n = g_test_slow () ? 400000 : 60000;

  for (int i = 0; i < n; i++)
    {
      g_autofree char *token = make_edge_token (rand);
      gsize len = strlen (token);
      const char *tail = tails[i % G_N_ELEMENTS (tails)];
      g_autofree char *text = g_strconcat (token, tail, NULL);
      /* the line ends at the last byte, or at the token's end */
      const char *seg_end = tail[0] == ',' ? text + strlen (text) - 1 : text + len;
      const char *s = text;
      const char *general_end;
      SerioCodecProblem problem, general;
      gboolean ended;
      double value;
      guint64 expected;
      guint broken;
      gsize got;

      /* a stray comma ends the token early: the reference reads it alone */
      const char *comma = memchr (token, ',', len);
      gsize token_len = comma != NULL ? (gsize) (comma - token) : len;

      broken = ref_read (token, token_len, &expected);
      got = _serio_codec_parse_tokens (&s, seg_end, text + strlen (text), &value, 1, &ended, &problem);
      _serio_codec_parse_long_token (token, token_len, &general_end, &general);

      if (broken == 0)
        {
          g_assert_cmpuint (got, ==, 1);
          g_assert_cmphex (test_bits_of (value), ==, expected);
          g_assert_null (general.reason);
        }
      else
        {
          g_assert_cmpuint (got, ==, 0);
          g_assert_nonnull (problem.reason);
          g_assert_cmpuint ((1u << problem.code) & broken, !=, 0);
          g_assert_cmpint (problem.code, ==, general.code);
          g_assert_cmpstr (problem.reason, ==, general.reason);
        }
    }
}

/* SERIO_CODEC=portable takes the portable forms; otherwise a library
 * built with SSE2 takes a SIMD form (SSE2, or AVX2 where the CPU has it:
 * test-codec-paths.c checks which). */
static void
test_codec_path (void)
{
  gboolean portable = g_strcmp0 (g_getenv ("SERIO_CODEC"), "portable") == 0;

#if defined(__SSE2__) && !defined(SERIO_CODEC_SCALAR)
  g_assert_true (_serio_codec_uses_simd () == !portable);
#else
  (void) portable;
  g_assert_false (_serio_codec_uses_simd ());
#endif
}

int
main (int   argc,
      char *argv[])
{
  /* The environment's locale: the suite also runs under LC_ALL=de_DE and
   * the like, where a printf or strtod in the codec would show. */
  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/codec/reference-self-check", test_reference_self_check);
  g_test_add_func ("/codec/write/random", test_write_random);
  g_test_add_func ("/codec/write/patterns-file", test_write_patterns_file);
  g_test_add_func ("/codec/write/every-exponent", test_write_every_exponent);
  g_test_add_func ("/codec/write/record", test_write_record);
  g_test_add_func ("/codec/write/record-name-length", test_write_record_name_length);
  g_test_add_func ("/codec/read/random", test_read_random);
  g_test_add_func ("/codec/read/long-digits", test_read_long_digits);
  g_test_add_func ("/codec/read/records", test_read_records);
  g_test_add_func ("/codec/read/hostile-counts", test_read_hostile_counts);
  g_test_add_func ("/codec/read/buffer-end", test_read_buffer_end);
  g_test_add_func ("/codec/read/fast-path", test_read_fast_path);
  g_test_add_func ("/codec/path", test_codec_path);
  g_test_add_func ("/codec/canonicalize", test_canonicalize);

  return g_test_run ();
}
