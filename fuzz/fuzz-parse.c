/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-parse.c: arbitrary bytes into serio_bundle_new_from_bytes()
 *
 * Copyright 2026 The libserio authors
 *
 * The oracle is the format's canonical invariant: whatever the parser
 * accepts, the writer gives back byte for byte once CR LF has become LF and
 * blank lines are gone (and, for a sealed text, the seal's two records).
 * Whatever it rejects, it rejects with a SERIO_ERROR whose message is valid
 * UTF-8 and names the line of the first problem; a plain text without the
 * seal's reserved names fails on that line alone with the same code, and
 * only a sealed text can be truncated at a line feed or fail its seal.
 * A SerioReader that reads the text in small batches of records
 * (serio_reader_read_records(), with a buffer too small for some of them)
 * gives the bundle's arrays, or its error. Any violation aborts.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <serio.h>

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

#define OPENING "v1|serio.sealed|1|1\n"

G_NORETURN static void
violation (const char *what)
{
  fprintf (stderr, "fuzz-parse: %s\n", what);
  abort ();
}

/* The input with every CR LF turned into LF and every blank line dropped,
 * computed here rather than by the library. @data ends with LF. */
static GByteArray *
normalize (const uint8_t *data,
           size_t         size)
{
  GByteArray *out = g_byte_array_sized_new (size);
  size_t start = 0;

  while (start < size)
    {
      const uint8_t *nl = memchr (data + start, '\n', size - start);
      size_t end = nl - data;
      size_t content_end = end;

      if (content_end > start && data[content_end - 1] == '\r')
        content_end--;
      if (content_end > start)
        {
          g_byte_array_append (out, data + start, content_end - start);
          g_byte_array_append (out, (const guint8 *) "\n", 1);
        }
      start = end + 1;
    }

  return out;
}

static void
check_bundle (SerioBundle   *bundle,
              const uint8_t *data,
              size_t         size)
{
  g_autoptr(GBytes) text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GByteArray) expected = NULL;
  g_autoptr(SerioBundle) again = NULL;
  gsize text_len;
  const guint8 *text_data = g_bytes_get_data (text, &text_len);
  gboolean sealed = FALSE;

  if (size > 0 && data[size - 1] != '\n')
    violation ("accepted an input that does not end with LF");
  if (size > 0 && memchr (data, '\0', size) != NULL)
    violation ("accepted an input with a NUL byte");

  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      const char *name = serio_bundle_get_name (bundle, i);

      if (!g_utf8_validate (name, -1, NULL) || strpbrk (name, "|\r\n") != NULL)
        violation ("a parsed name is not valid UTF-8 or holds | CR LF");
    }

  expected = normalize (data, size);
  /* A sealed text reads as its arrays: the seal's two records go. */
  if (expected->len >= strlen (OPENING) &&
      memcmp (expected->data, OPENING, strlen (OPENING)) == 0)
    {
      const guint8 *last = expected->data + expected->len - 1;

      while (last > expected->data && last[-1] != '\n')
        last--;
      if (strncmp ((const char *) last, "v1|serio.seal|", strlen ("v1|serio.seal|")) != 0)
        violation ("accepted a sealed text that does not end with its seal");
      g_byte_array_set_size (expected, last - expected->data);
      g_byte_array_remove_range (expected, 0, strlen (OPENING));
      sealed = TRUE;
    }
  else if (size > 0 && g_strstr_len ((const char *) data, size, "|serio.seal") != NULL &&
           serio_bundle_get_n_arrays (bundle) > 0)
    {
      for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
        {
          const char *name = serio_bundle_get_name (bundle, i);

          if (strcmp (name, "serio.seal") == 0 || strcmp (name, "serio.sealed") == 0)
            violation ("a plain text gave an array with a reserved name");
        }
    }
  if (text_len != expected->len ||
      (text_len > 0 && memcmp (text_data, expected->data, text_len) != 0))
    violation ("to_bytes (from_bytes (s)) differs from s with CR LF → LF and blank lines dropped");

  again = serio_bundle_new_from_bytes (text, NULL);
  if (again == NULL || !serio_bundle_equal (bundle, again))
    violation ("the canonical text does not read back into an equal bundle");

  if (sealed)
    {
      g_autoptr(GBytes) resealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
      g_autoptr(SerioBundle) from_sealed = serio_bundle_new_from_bytes (resealed, NULL);

      if (from_sealed == NULL || !serio_bundle_equal (bundle, from_sealed))
        violation ("a sealed text, sealed again, does not read back into an equal bundle");
    }
}

static SerioBundle *
parse (const uint8_t  *data,
       size_t          size,
       GError        **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);

  return serio_bundle_new_from_bytes (bytes, error);
}

/* The error is the first problem met reading front to back, and records
 * are independent: so the lines before the one the message names must
 * parse on their own, and that line alone must fail with the same code.
 * The fuzzer runs in the C locale, where messages begin "Line N". */
/* Whether the first record of the text (after its blank lines, LF or
 * CR LF) cannot start a record: neither "v1|" nor a version tag ("v" or
 * "V", digits, "|"), nor all of the input cut short inside one, nor a lone
 * CR at its end (docs/format.md, "not a serio file"); @line is its line. */
static gboolean
first_record_is_foreign (const guint8 *data,
                         gsize         size,
                         guint        *line)
{
  static const char v1[] = "v1|";
  const guint8 *r;
  gsize p = 0, len, i;

  *line = 1;
  for (;;)
    {
      if (p < size && data[p] == '\n')
        p += 1;
      else if (p + 1 < size && data[p] == '\r' && data[p + 1] == '\n')
        p += 2;
      else
        break;
      (*line)++;
    }
  r = data + p;
  len = size - p;
  for (i = 0; i < len && i < 3 && r[i] == (guint8) v1[i]; i++)
    ;
  if (i == 3 || i == len || (len == 1 && r[0] == '\r'))
    return FALSE;
  if (r[0] != 'v' && r[0] != 'V')
    return TRUE;
  for (i = 1; i < len && g_ascii_isdigit (r[i]); i++)
    ;
  if (i == len)
    return FALSE;
  return !(i > 1 && r[i] == '|');
}

static void
check_error_line (const GError  *error,
                  const uint8_t *data,
                  size_t         size)
{
  g_autoptr(SerioBundle) before = NULL;
  g_autoptr(SerioBundle) alone = NULL;
  g_autoptr(GError) line_error = NULL;
  unsigned long line;
  size_t start = 0, end;

  if (sscanf (error->message, "Line %lu", &line) != 1 || line == 0)
    violation ("the error message does not name a line");

  for (unsigned long i = 1; i < line; i++)
    {
      const uint8_t *nl = memchr (data + start, '\n', size - start);

      if (nl == NULL || (size_t) (nl - data) + 1 == size)
        violation ("the error names a line past the end of the input");
      start = nl - data + 1;
    }
  {
    /* A line without its LF (a text that is not v1 at all) runs to the end. */
    const uint8_t *nl = memchr (data + start, '\n', size - start);

    end = nl != NULL ? (size_t) (nl - data) + 1 : size;
  }

  before = parse (data, start, NULL);
  if (before == NULL)
    violation ("the lines before the one in the error do not parse");

  alone = parse (data + start, end - start, &line_error);
  if (alone != NULL || line_error->code != error->code)
    violation ("the line in the error does not fail alone with the same code");
}

static void
check_error (const GError  *error,
             const uint8_t *data,
             size_t         size)
{
  if (error == NULL)
    violation ("from_bytes failed without setting an error");
  if (error->domain != SERIO_ERROR)
    violation ("the error is not in the SERIO_ERROR domain");
  if (error->code < SERIO_ERROR_VERSION || error->code > SERIO_ERROR_INTEGRITY)
    violation ("the error code is not a SerioError");
  if (error->message == NULL || error->message[0] == '\0' ||
      !g_utf8_validate (error->message, -1, NULL))
    violation ("the error message is empty or not valid UTF-8");

  /* Truncation is checked before anything else, but for a text whose
   * first record cannot start a v1 record ("not a serio file", SYNTAX at
   * its line); otherwise only a sealed text without its seal is
   * truncated. */
  if (data[size - 1] != '\n')
    {
      guint first_line;

      if (first_record_is_foreign (data, size, &first_line))
        {
          if (error->code != SERIO_ERROR_SYNTAX ||
              serio_error_get_line (error) != first_line)
            violation ("a text whose first record is not v1 is not SERIO_ERROR_SYNTAX at its line");
        }
      else if (error->code != SERIO_ERROR_TRUNCATED)
        violation ("a missing final LF is not SERIO_ERROR_TRUNCATED");
    }
  if (error->code == SERIO_ERROR_TRUNCATED && data[size - 1] == '\n')
    {
      g_autoptr(GByteArray) normal = normalize (data, size);

      if (normal->len < strlen (OPENING) || memcmp (normal->data, OPENING, strlen (OPENING)) != 0)
        violation ("SERIO_ERROR_TRUNCATED for a text that ends in LF and is not sealed");
    }
  if (error->code == SERIO_ERROR_INTEGRITY &&
      g_strstr_len ((const char *) data, size, "v1|serio.seal|") == NULL)
    violation ("SERIO_ERROR_INTEGRITY for a text without a seal");

  /* Records are independent unless the text uses the seal's reserved
   * names, which tie them together. */
  if (error->code != SERIO_ERROR_TRUNCATED &&
      g_strstr_len ((const char *) data, size, "serio.seal") == NULL)
    check_error_line (error, data, size);
}

/* Checks that a record read in a batch, or on its own after one, is
 * array @index of @bundle (if there is one): the same base name and
 * type, and the @size bytes at @elements its elements. */
static void
check_record (SerioBundle *bundle,
              guint        index,
              const char  *base_name,
              SerioDtype   dtype,
              const void  *elements,
              gsize        size)
{
  g_autofree char *expected_name = NULL;
  g_autoptr(GBytes) expected = NULL;

  if (bundle == NULL)
    return;
  if (index >= serio_bundle_get_n_arrays (bundle))
    violation ("a batch of records gave more arrays than the bundle holds");
  expected_name = serio_bundle_get_base_name (bundle, index);
  expected = serio_bundle_get_typed_bytes (bundle, index);
  if (strcmp (base_name, expected_name) != 0 || dtype != serio_bundle_get_dtype (bundle, index) ||
      size != g_bytes_get_size (expected) ||
      (size > 0 && memcmp (elements, g_bytes_get_data (expected, NULL), size) != 0))
    violation ("a batch of records differs from the bundle's array");
}

/* Reads the text with serio_reader_read_records() in batches of at most
 * 3 records and 64 bytes, and each record too long for a batch on its own
 * (in pieces, so that a hostile count allocates nothing): they must be the
 * arrays of @bundle, or fail with @error when @bundle is %NULL. */
static void
check_batches (const uint8_t *data,
               size_t         size,
               SerioBundle   *bundle,
               const GError  *error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr(SerioReader) reader = serio_reader_new_for_bytes (bytes);
  g_autoptr(GError) local_error = NULL;
  SerioRecordInfo records[3];
  guint64 buffer[8];
  guint index = 0;

  for (;;)
    {
      gsize n;

      if (!serio_reader_read_records (reader, buffer, sizeof buffer, records,
                                      G_N_ELEMENTS (records), &n, NULL, &local_error))
        break;
      for (gsize i = 0; i < n; i++)
        check_record (bundle, index++, records[i].name, records[i].dtype,
                      (const char *) buffer + records[i].offset,
                      records[i].n_values * serio_dtype_get_size (records[i].dtype));
      if (n == G_N_ELEMENTS (records))
        continue;
      if (serio_reader_get_n_left (reader) == 0)
        break;
      {
        g_autoptr(GByteArray) all = g_byte_array_new ();
        g_autofree char *base_name = serio_reader_get_base_name (reader);
        SerioDtype dtype = serio_reader_get_dtype (reader);

        for (;;)
          {
            g_autoptr(GBytes) piece = serio_reader_read_typed_bytes (reader, 1 << 16, NULL,
                                                                     &local_error);

            if (piece == NULL || g_bytes_get_size (piece) == 0)
              break;
            g_byte_array_append (all, g_bytes_get_data (piece, NULL), g_bytes_get_size (piece));
          }
        if (local_error != NULL)
          break;
        check_record (bundle, index++, base_name, dtype, all->data, all->len);
      }
    }

  if (bundle != NULL)
    {
      if (local_error != NULL)
        violation ("a batch of records failed where from_bytes succeeded");
      if (index != serio_bundle_get_n_arrays (bundle) || !serio_reader_get_finished (reader))
        violation ("batches of records gave fewer arrays than the bundle holds");
    }
  else if (local_error == NULL || local_error->code != error->code ||
           strcmp (local_error->message, error->message) != 0)
    violation ("batches of records do not fail as from_bytes does");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = parse (data, size, &error);

  if (bundle != NULL)
    {
      if (error != NULL)
        violation ("from_bytes returned a bundle and set an error");
      check_bundle (bundle, data, size);
    }
  else
    {
      if (size == 0)
        violation ("the empty input was rejected");
      check_error (error, data, size);
    }
  check_batches (data, size, bundle, error);

  return 0;
}
