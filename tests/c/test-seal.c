/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-seal.c: sealed texts (serio-v1-files.md §2)
 *
 * Copyright 2026 The libserio authors
 *
 * The seal is recomputed here with xxHash directly, and the damage tests
 * use the plain reader as their oracle: a change that the plain reader
 * rejects must be rejected the same way in a sealed text, and a change that
 * leaves valid v1 must fail with SERIO_ERROR_INTEGRITY (or TRUNCATED where
 * the seal went missing). Nothing damaged may ever load.
 */

#include <string.h>

#include <serio.h>
#include <xxhash.h>

#include "test-utils.h"

#define OPENING "v1|serio.sealed|1|1\n"

/* A bundle of several arrays of varied tokens. */
static SerioBundle *
make_bundle (guint n_arrays,
             guint max_values)
{
  SerioBundle *bundle = serio_bundle_new ();

  for (guint a = 0; a < n_arrays; a++)
    {
      guint n = g_test_rand_int_range (0, max_values + 1);
      g_autofree double *values = g_new (double, MAX (n, 1));
      g_autofree char *name = g_strdup_printf ("layer%u.weight", a);

      for (guint i = 0; i < n; i++)
        values[i] = test_double_of (test_rand_interesting ());
      serio_bundle_append (bundle, name, values, n);
    }

  return bundle;
}

/* The plain text of @bundle as a NUL-terminated string, and its length. */
static char *
plain_text (SerioBundle *bundle,
            gsize       *len)
{
  char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);

  *len = strlen (text);
  return text;
}

/* Seals @plain independently of the library. */
static GString *
seal_by_hand (const char *plain,
              gsize       len)
{
  GString *out = g_string_new (OPENING);
  guint n_records = 1;
  guint64 hash;

  g_string_append_len (out, plain, len);
  /* A line is a record unless it is empty or a lone CR. */
  for (const char *line = plain, *nl; (nl = memchr (line, '\n', plain + len - line)) != NULL; line = nl + 1)
    {
      if (nl > line && !(nl == line + 1 && *line == '\r'))
        n_records++;
    }
  hash = XXH3_64bits (out->str, out->len);
  g_string_append_printf (out, "v1|serio.seal|3|%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n",
                          n_records, hash >> 32, hash & G_GUINT64_CONSTANT (0xffffffff));

  return out;
}

static SerioBundle *
parse (const char  *text,
       gsize        len,
       GError     **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new (text, len);

  return serio_bundle_new_from_bytes (bytes, error);
}

/* Asserts that @text fails to parse with @code (or with any SERIO_ERROR
 * code if @code is -1), and returns the error's message for more checks. */
static void
assert_rejected (const char *text,
                 gsize       len,
                 int         code,
                 const char *what)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = parse (text, len, &error);

  if (bundle != NULL)
    g_error ("%s: a damaged sealed text loaded", what);
  g_assert_error (error, SERIO_ERROR, error->code);
  if (code >= 0 && error->code != code)
    g_error ("%s: expected code %d, got %d (%s)", what, code, error->code, error->message);
}

static void
test_format (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (5, 40);
  g_autoptr(SerioBundle) empty = serio_bundle_new ();
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) sealed_empty = serio_bundle_to_bytes (empty, SERIO_SAVE_FLAGS_NONE);
  gsize len;
  g_autofree char *plain = plain_text (bundle, &len);
  g_autoptr(GString) expected = seal_by_hand (plain, len);
  g_autoptr(GString) expected_empty = seal_by_hand ("", 0);
  gsize sealed_len, empty_len;
  const char *data = g_bytes_get_data (sealed, &sealed_len);
  const char *empty_data = g_bytes_get_data (sealed_empty, &empty_len);

  g_test_summary ("to_sealed_bytes writes the opening record, the plain text and a closing "
                  "record with the record count and XXH3-64 of the bytes before it.");

  g_assert_cmpmem (data, sealed_len, expected->str, expected->len);
  g_assert_cmpmem (empty_data, empty_len, expected_empty->str, expected_empty->len);
  g_assert_true (g_str_has_prefix (empty_data, OPENING "v1|serio.seal|3|1,"));
}

static void
test_round_trip (void)
{
  guint iterations = test_iterations (200);

  g_test_summary ("Sealed texts of random bundles, and of every hard float64 pattern, read "
                  "back into equal bundles, bit for bit, with the seal stripped.");

  for (guint i = 0; i < iterations; i++)
    {
      g_autoptr(SerioBundle) bundle = make_bundle (g_test_rand_int_range (0, 6), 3000);
      g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) back = serio_bundle_new_from_bytes (sealed, &error);

      g_assert_no_error (error);
      g_assert_true (serio_bundle_equal (bundle, back));
      g_assert_cmpuint (serio_bundle_get_n_arrays (back), ==, serio_bundle_get_n_arrays (bundle));
    }

  {
    g_autoptr(GArray) patterns = test_load_patterns ();
    g_autoptr(SerioBundle) bundle = serio_bundle_new ();
    g_autoptr(GBytes) sealed = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(SerioBundle) back = NULL;
    g_autofree double *values = g_new (double, patterns->len * 2);
    const double *got;
    gsize n;

    for (guint i = 0; i < patterns->len; i++)
      {
        guint64 bits = g_array_index (patterns, guint64, i);

        values[2 * i] = test_double_of (bits);
        values[2 * i + 1] = test_double_of (bits ^ TEST_SIGN_BIT);
      }
    serio_bundle_append (bundle, "patterns", values, patterns->len * 2);
    sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
    back = serio_bundle_new_from_bytes (sealed, &error);
    g_assert_no_error (error);
    got = serio_bundle_get_values (back, 0, &n);
    g_assert_cmpuint (n, ==, patterns->len * 2);
    for (gsize i = 0; i < n; i++)
      {
        guint64 expected = test_canonical_bits (test_bits_of (values[i]));

        if (test_bits_of (got[i]) != expected)
          g_error ("pattern %" G_GSIZE_FORMAT ": bits differ", i);
      }
  }
}

/* Applies one substitution at @pos of the sealed text and checks it
 * against the plain reader's verdict on the same change. */
static void
check_substitution (const char *sealed,
                    gsize       sealed_len,
                    const char *plain,
                    gsize       plain_len,
                    gsize       pos,
                    char        byte)
{
  g_autofree char *damaged = g_memdup2 (sealed, sealed_len);
  g_autofree char *what = g_strdup_printf ("byte %" G_GSIZE_FORMAT " '%c' -> 0x%02X",
                                           pos, sealed[pos], (guchar) byte);
  gsize body = strlen (OPENING);
  g_autoptr(GError) plain_error = NULL;

  damaged[pos] = byte;

  /* The seal's own records, and the line feed that ends the last array
   * (in a plain text its loss is a truncation, here it merges the array
   * with the seal): any error will do, but there must be one. */
  if (pos < body || pos >= body + plain_len - 1)
    {
      assert_rejected (damaged, sealed_len, -1, what);
      return;
    }

  {
    g_autofree char *plain_damaged = g_memdup2 (plain, plain_len);
    g_autoptr(SerioBundle) plain_bundle = NULL;

    plain_damaged[pos - body] = byte;
    plain_bundle = parse (plain_damaged, plain_len, &plain_error);
  }

  /* Damage the plain reader sees is reported as it would be; damage that
   * leaves valid v1 is the seal's to catch. */
  assert_rejected (damaged, sealed_len,
                   plain_error != NULL ? plain_error->code : SERIO_ERROR_INTEGRITY, what);
}

static const char substitutes[] = "0123456789p-,|\n\rv1ainf.";

static void
test_substitution_every_byte (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double w[] = { 0.1, -0.0, 5e-324, -1.0 / 0.0, 3.0, 1e300 };
  const double b[] = { -0.25 };
  g_autoptr(GBytes) sealed = NULL;
  gsize plain_len, sealed_len;
  g_autofree char *plain = NULL;
  const char *data;
  guint checked = 0;

  g_test_summary ("In a small sealed file, every byte changed to each of a set of "
                  "likely bytes is rejected, with the code the plain reader gives or "
                  "SERIO_ERROR_INTEGRITY where the change leaves valid v1.");

  serio_bundle_append (bundle, "dense.w", w, G_N_ELEMENTS (w));
  serio_bundle_append (bundle, "dense.b", b, G_N_ELEMENTS (b));
  serio_bundle_append (bundle, "empty", NULL, 0);
  sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  data = g_bytes_get_data (sealed, &sealed_len);
  plain = plain_text (bundle, &plain_len);

  for (gsize pos = 0; pos < sealed_len; pos++)
    {
      for (const char *s = substitutes; *s != '\0'; s++)
        {
          if (*s == data[pos])
            continue;
          check_substitution (data, sealed_len, plain, plain_len, pos, *s);
          checked++;
        }
      /* One bit flipped, too. */
      check_substitution (data, sealed_len, plain, plain_len, pos, data[pos] ^ 0x01);
      checked++;
    }

  g_test_message ("%u substitutions in a %" G_GSIZE_FORMAT "-byte sealed text", checked, sealed_len);
}

static void
test_substitution_random (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (6, 2000);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  gsize plain_len, sealed_len;
  g_autofree char *plain = plain_text (bundle, &plain_len);
  const char *data = g_bytes_get_data (sealed, &sealed_len);
  guint n = test_iterations (10000);
  guint integrity = 0;

  g_test_summary ("In a sealed file of several arrays, single-byte substitutions at "
                  "10,000 random positions are all rejected with the expected code.");

  for (guint i = 0; i < n; i++)
    {
      gsize pos = g_test_rand_int_range (0, sealed_len);
      char byte;

      /* Mostly digits, which leave valid tokens: the seal's case. */
      do
        byte = g_test_rand_bit () ? '0' + g_test_rand_int_range (0, 10)
                                  : substitutes[g_test_rand_int_range (0, sizeof substitutes - 1)];
      while (byte == data[pos]);

      check_substitution (data, sealed_len, plain, plain_len, pos, byte);
      if (g_ascii_isdigit (byte) && g_ascii_isdigit (data[pos]))
        integrity++;
    }

  g_test_message ("%u substitutions, %u of a digit by a digit", n, integrity);
}

static void
test_truncation (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (4, 30);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  gsize len;
  const char *data = g_bytes_get_data (sealed, &len);

  g_test_summary ("A sealed text cut at any byte, record boundaries included, is "
                  "rejected as SERIO_ERROR_TRUNCATED (cut to nothing, it is the "
                  "empty plain text).");

  for (gsize cut = 1; cut < len; cut++)
    {
      g_autofree char *what = g_strdup_printf ("cut at %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT, cut, len);

      assert_rejected (data, cut, SERIO_ERROR_TRUNCATED, what);
    }
}

/* The lines of a text, each with its line feed. */
static GPtrArray *
split_lines (const char *text,
             gsize       len)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  const char *p = text;

  while (p < text + len)
    {
      const char *nl = memchr (p, '\n', text + len - p);

      g_ptr_array_add (lines, g_strndup (p, nl - p + 1));
      p = nl + 1;
    }

  return lines;
}

static char *
join_lines (GPtrArray *lines,
            gsize     *len)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < lines->len; i++)
    g_string_append (out, g_ptr_array_index (lines, i));
  *len = out->len;

  return g_string_free (out, FALSE);
}

static void
test_lines (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (5, 20);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  gsize len;
  const char *data = g_bytes_get_data (sealed, &len);
  g_autoptr(GPtrArray) lines = split_lines (data, len);
  guint n = lines->len;
  guint last = n - 1;

  g_test_summary ("Dropping, doubling or swapping any line of a sealed text, and "
                  "reordering its arrays, is rejected with the code for what the "
                  "reader meets first.");

  g_assert_cmpuint (n, ==, 7);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GPtrArray) dropped = split_lines (data, len);
      g_autoptr(GPtrArray) doubled = split_lines (data, len);
      g_autofree char *text = NULL;
      g_autofree char *what = NULL;
      gsize text_len;

      g_ptr_array_remove_index (dropped, i);
      text = join_lines (dropped, &text_len);
      what = g_strdup_printf ("line %u dropped", i + 1);
      /* Without the opening record the closing one is a reserved name out
       * of place; without the closing one the text ends unsealed. */
      assert_rejected (text, text_len,
                       i == 0 ? SERIO_ERROR_SYNTAX
                       : i == last ? SERIO_ERROR_TRUNCATED
                       : SERIO_ERROR_INTEGRITY, what);

      g_clear_pointer (&text, g_free);
      g_clear_pointer (&what, g_free);
      g_ptr_array_insert (doubled, i, g_strdup (g_ptr_array_index (lines, i)));
      text = join_lines (doubled, &text_len);
      what = g_strdup_printf ("line %u doubled", i + 1);
      assert_rejected (text, text_len,
                       i == 0 ? SERIO_ERROR_SYNTAX : SERIO_ERROR_INTEGRITY, what);

      for (guint j = i + 1; j < n; j++)
        {
          g_autoptr(GPtrArray) swapped = split_lines (data, len);
          g_autofree char *swapped_text = NULL;
          g_autofree char *swapped_what = g_strdup_printf ("lines %u and %u swapped", i + 1, j + 1);
          gsize swapped_len;
          int code;

          if (g_str_equal (g_ptr_array_index (lines, i), g_ptr_array_index (lines, j)))
            continue;
          g_free (g_ptr_array_index (swapped, i));
          g_free (g_ptr_array_index (swapped, j));
          g_ptr_array_index (swapped, i) = g_strdup (g_ptr_array_index (lines, j));
          g_ptr_array_index (swapped, j) = g_strdup (g_ptr_array_index (lines, i));
          swapped_text = join_lines (swapped, &swapped_len);

          /* The opening record moved is a reserved name out of place; the
           * seal moved before an array, or arrays reordered, fail the
           * seal's check. */
          code = i == 0 ? SERIO_ERROR_SYNTAX : SERIO_ERROR_INTEGRITY;
          assert_rejected (swapped_text, swapped_len, code, swapped_what);
        }
    }
}

static void
test_reserved_records (void)
{
  static const struct {
    const char *text;
    SerioError  code;
    guint       line;
  } cases[] = {
    /* The opening record anywhere but first. */
    { "v1|a|1|1\nv1|serio.sealed|1|1\n", SERIO_ERROR_SYNTAX, 2 },
    /* The closing record in a plain text. */
    { "v1|a|1|1\nv1|serio.seal|3|2,0,0\n", SERIO_ERROR_SYNTAX, 2 },
    { "v1|serio.seal|3|1,0,0\n", SERIO_ERROR_SYNTAX, 1 },
    /* Seal schemes this reader does not know. */
    { "v1|serio.sealed|1|2\nv1|serio.seal|3|1,0,0\n", SERIO_ERROR_VERSION, 1 },
    { "v1|serio.sealed|2|1,1\nv1|serio.seal|3|1,0,0\n", SERIO_ERROR_VERSION, 1 },
    { "v1|serio.sealed|0|\nv1|serio.seal|3|1,0,0\n", SERIO_ERROR_VERSION, 1 },
    /* A damaged token is reported where it is, before the seal. */
    { "v1|serio.sealed|1|1\nv1|a|1|01\nv1|serio.seal|3|2,0,0\n", SERIO_ERROR_SYNTAX, 2 },
    { "v1|serio.sealed|1|1\nv1|a|2|1\nv1|serio.seal|3|2,0,0\n", SERIO_ERROR_LENGTH, 2 },
    { "v1|serio.sealed|1|1\nv1|a|1|1\nv1|serio.seal|3|2,0,0x\n", SERIO_ERROR_SYNTAX, 3 },
    /* A seal of the wrong size, or that does not match. */
    { "v1|serio.sealed|1|1\nv1|serio.seal|2|1,0\n", SERIO_ERROR_INTEGRITY, 2 },
    { "v1|serio.sealed|1|1\nv1|serio.seal|4|1,0,0,0\n", SERIO_ERROR_INTEGRITY, 2 },
    { "v1|serio.sealed|1|1\nv1|serio.seal|3|2,0,0\n", SERIO_ERROR_INTEGRITY, 2 },
    { "v1|serio.sealed|1|1\nv1|serio.seal|3|1,0,0\n", SERIO_ERROR_INTEGRITY, 2 },
    /* No closing record. */
    { "v1|serio.sealed|1|1\n", SERIO_ERROR_TRUNCATED, 1 },
    { "v1|serio.sealed|1|1\nv1|a|1|1\n\n", SERIO_ERROR_TRUNCATED, 3 },
  };

  g_test_summary ("The reserved names are only valid in their places, and each way a "
                  "seal record can be wrong has its code and line.");

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (cases[i].text, &error);
      g_autofree char *prefix = g_strdup_printf ("Line %u", cases[i].line);

      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, (int) cases[i].code);
      if (!g_str_has_prefix (error->message, prefix) ||
          strchr (":,", error->message[strlen (prefix)]) == NULL)
        g_error ("case %" G_GSIZE_FORMAT ": “%s” does not start with “%s”", i, error->message, prefix);
    }
}

static void
test_after_the_seal (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (2, 5);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  gsize len;
  const char *data = g_bytes_get_data (sealed, &len);
  const char *tails[] = { "\n", "\r\n", "v1|a|1|1\n", OPENING, "v1|serio.seal|3|1,0,0\n" };

  g_test_summary ("Nothing may follow the seal: a blank line or any record after it is "
                  "SERIO_ERROR_INTEGRITY on the line after the seal.");

  for (gsize i = 0; i < G_N_ELEMENTS (tails); i++)
    {
      g_autoptr(GString) text = g_string_new_len (data, len);
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) back = NULL;

      g_string_append (text, tails[i]);
      back = parse (text->str, text->len, &error);
      g_assert_null (back);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_INTEGRITY);
      g_assert_true (g_str_has_prefix (error->message, "Line 5: "));
    }
}

static void
test_blank_lines_and_crlf (void)
{
  const char *plain = "\nv1|a|1|1\r\n\nv1|b|0|\n";
  g_autoptr(GString) sealed = seal_by_hand (plain, strlen (plain));
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = parse (sealed->str, sealed->len, &error);

  g_test_summary ("The seal covers the bytes as they are: blank lines and CR LF line ends "
                  "in a sealed text verify, and a blank line added or a line end "
                  "changed afterwards does not.");

  g_assert_no_error (error);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 2);

  {
    g_autoptr(GString) added = g_string_new (sealed->str);

    g_string_insert (added, strlen (OPENING), "\n");
    assert_rejected (added->str, added->len, SERIO_ERROR_INTEGRITY, "blank line added");
  }
  {
    g_autoptr(GString) changed = g_string_new (sealed->str);
    char *cr = strchr (changed->str, '\r');

    g_string_erase (changed, cr - changed->str, 1);
    assert_rejected (changed->str, changed->len, SERIO_ERROR_INTEGRITY, "CR removed");
  }
}

static void
test_large_record (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  guint n = 300000;
  g_autofree double *values = g_new (double, n);
  g_autoptr(GBytes) sealed = NULL;
  gsize len, plain_len;
  g_autofree char *plain = NULL;
  g_autoptr(GString) expected = NULL;
  const char *data;

  g_test_summary ("A record much longer than the hashing block is hashed whole: the "
                  "seal matches xxHash's, and a digit changed deep inside it is caught.");

  for (guint i = 0; i < n; i++)
    values[i] = test_double_of (test_rand_u64 ());
  serio_bundle_append (bundle, "big", values, n);
  serio_bundle_append (bundle, "small", values, 3);
  sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  data = g_bytes_get_data (sealed, &len);
  plain = plain_text (bundle, &plain_len);
  expected = seal_by_hand (plain, plain_len);
  g_assert_cmpmem (data, len, expected->str, expected->len);

  for (guint k = 0; k < 20; k++)
    {
      g_autofree char *damaged = g_memdup2 (data, len);
      gsize pos;

      /* A digit followed by a digit, so the token stays canonical. */
      do
        pos = g_test_rand_int_range (strlen (OPENING) + 20, len - 100);
      while (!g_ascii_isdigit (damaged[pos]) || !g_ascii_isdigit (damaged[pos + 1]) ||
             damaged[pos - 1] == ',' || damaged[pos - 1] == '-' || damaged[pos - 1] == '|');
      damaged[pos] = damaged[pos] == '9' ? '8' : damaged[pos] + 1;
      assert_rejected (damaged, len, -1, "digit in a large record");
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/seal/format", test_format);
  g_test_add_func ("/seal/round-trip", test_round_trip);
  g_test_add_func ("/seal/substitution/every-byte", test_substitution_every_byte);
  g_test_add_func ("/seal/substitution/random", test_substitution_random);
  g_test_add_func ("/seal/truncation", test_truncation);
  g_test_add_func ("/seal/lines", test_lines);
  g_test_add_func ("/seal/reserved-records", test_reserved_records);
  g_test_add_func ("/seal/after-the-seal", test_after_the_seal);
  g_test_add_func ("/seal/blank-lines-and-crlf", test_blank_lines_and_crlf);
  g_test_add_func ("/seal/large-record", test_large_record);

  return g_test_run ();
}
