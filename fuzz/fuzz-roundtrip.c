/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-roundtrip.c: names and raw bit patterns through a bundle, its text,
 * and a bundle again
 *
 * Copyright 2026 The libserio authors
 *
 * The input is a sequence of arrays, each laid out as
 *
 *   header   1 byte: bits 0-4 the name length, bits 5-7 the way the values
 *            are appended (append, append_array, append_bytes from an
 *            aligned or a misaligned buffer)
 *   name     that many bytes, made valid UTF-8 (invalid bytes and NULs
 *            become U+FFFD)
 *   count    1 byte
 *   values   count 64-bit little-endian bit patterns (fewer if the input
 *            ends first)
 *
 * Every name must come back with `|`, CR and LF replaced by `_`, every
 * non-NaN pattern bit for bit and every NaN as 0x7FF8000000000000, both in
 * the bundle and after to_string() and from_string(); and the two bundles
 * must be equal (an array named serio.sealed or serio.seal, which append
 * refuses, is left out). The same holds through the sealed text, and one
 * single-byte change of the sealed text, chosen from the input, must be
 * rejected. Any violation aborts.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <serio.h>

#define CANONICAL_NAN G_GUINT64_CONSTANT (0x7FF8000000000000)

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

typedef struct
{
  char    *name;       /* as the bundle must hold it */
  guint64 *bits;       /* as the bundle must hold them */
  gsize    n_values;
} Expected;

static void
expected_clear (gpointer data)
{
  Expected *expected = data;

  g_free (expected->name);
  g_free (expected->bits);
}

G_GNUC_PRINTF (1, 2) G_NORETURN static void
violation (const char *format,
           ...)
{
  va_list args;

  va_start (args, format);
  fputs ("fuzz-roundtrip: ", stderr);
  vfprintf (stderr, format, args);
  fputc ('\n', stderr);
  va_end (args);
  abort ();
}

static gboolean
is_nan (guint64 bits)
{
  return (bits & G_GUINT64_CONSTANT (0x7FFFFFFFFFFFFFFF)) > G_GUINT64_CONSTANT (0x7FF0000000000000);
}

static void
append (SerioBundle   *bundle,
        guint          method,
        const char    *name,
        const double  *values,
        gsize          n_values)
{
  switch (method)
    {
    case 4:
    case 5:
      {
        g_autoptr(GArray) array = g_array_sized_new (FALSE, FALSE, sizeof (double), n_values);

        g_array_append_vals (array, values, n_values);
        serio_bundle_append_array (bundle, name, array);
      }
      break;

    case 6:
      {
        g_autoptr(GBytes) bytes = g_bytes_new (values, n_values * sizeof (double));

        serio_bundle_append_bytes (bundle, name, bytes);
      }
      break;

    case 7:
      {
        guint8 *buffer = g_malloc (n_values * sizeof (double) + 1);
        g_autoptr(GBytes) bytes = NULL;

        if (n_values > 0)
          memcpy (buffer + 1, values, n_values * sizeof (double));
        bytes = g_bytes_new_with_free_func (buffer + 1, n_values * sizeof (double), g_free, buffer);
        serio_bundle_append_bytes (bundle, name, bytes);
      }
      break;

    default:
      serio_bundle_append (bundle, name, values, n_values);
      break;
    }
}

static void
check_bundle (SerioBundle *bundle,
              GArray      *expected)
{
  if (serio_bundle_get_n_arrays (bundle) != expected->len)
    violation ("%u arrays instead of %u", serio_bundle_get_n_arrays (bundle), expected->len);

  for (guint i = 0; i < expected->len; i++)
    {
      const Expected *e = &g_array_index (expected, Expected, i);
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);

      if (strcmp (serio_bundle_get_name (bundle, i), e->name) != 0)
        violation ("array %u: the name changed", i);
      if (n_values != e->n_values)
        violation ("array %u: the number of values changed", i);
      if (n_values > 0 && memcmp (values, e->bits, n_values * sizeof (guint64)) != 0)
        violation ("array %u: a bit pattern changed", i);
    }
}

/* The sealed text reads back into the same arrays, and every single-byte
 * change of it (one, chosen from the input) is rejected: none loads. */
static void
check_sealed (SerioBundle   *bundle,
              GArray        *expected,
              const uint8_t *data,
              size_t         size)
{
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(SerioBundle) back = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;
  const char *text = g_bytes_get_data (sealed, &len);
  guint32 choice = 2166136261u;
  g_autofree char *damaged = g_memdup2 (text, len);
  g_autoptr(GBytes) damaged_bytes = NULL;
  gsize pos;
  char byte;

  for (size_t i = 0; i < size; i++)
    choice = (choice ^ data[i]) * 16777619u;
  pos = choice % len;
  byte = (char) (choice >> 24);

  back = serio_bundle_new_from_bytes (sealed, &error);
  if (back == NULL)
    violation ("the sealed text does not parse: %s", error->message);
  check_bundle (back, expected);

  if (byte == damaged[pos])
    byte ^= 0x20;
  damaged[pos] = byte;
  damaged_bytes = g_bytes_new_static (damaged, len);
  g_clear_object (&back);
  g_clear_error (&error);
  back = serio_bundle_new_from_bytes (damaged_bytes, &error);
  if (back != NULL)
    violation ("a sealed text with byte %" G_GSIZE_FORMAT " changed loaded", pos);
  if (error == NULL || error->domain != SERIO_ERROR)
    violation ("a damaged sealed text failed without a SERIO_ERROR");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) again = NULL;
  g_autoptr(GArray) expected = g_array_new (FALSE, FALSE, sizeof (Expected));
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text_again = NULL;
  size_t pos = 0;

  g_array_set_clear_func (expected, expected_clear);

  while (pos < size)
    {
      guint header = data[pos++];
      size_t name_len = MIN (header & 0x1F, size - pos);
      g_autofree char *name = g_utf8_make_valid ((const char *) data + pos, name_len);
      g_autofree double *values = NULL;
      Expected e;

      pos += name_len;
      e.n_values = pos < size ? MIN (data[pos], (size - pos - 1) / 8) : 0;
      pos++;

      e.name = g_strdelimit (g_strdup (name), "|\r\n", '_');
      e.bits = g_new (guint64, e.n_values);
      values = g_new (double, e.n_values);
      for (gsize i = 0; i < e.n_values; i++, pos += 8)
        {
          guint64 le;

          memcpy (&le, data + pos, sizeof le);
          e.bits[i] = GUINT64_FROM_LE (le);
          memcpy (&values[i], &e.bits[i], sizeof (double));
          if (is_nan (e.bits[i]))
            e.bits[i] = CANONICAL_NAN;
        }
      /* The seal's reserved names are refused (a programmer error, with a
       * critical): such an array is left out. */
      if (strcmp (name, "serio.sealed") == 0 || strcmp (name, "serio.seal") == 0)
        {
          expected_clear (&e);
          continue;
        }
      g_array_append_val (expected, e);

      append (bundle, header >> 5, name, values, e.n_values);
    }

  check_bundle (bundle, expected);

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  again = serio_bundle_new_from_string (text, &error);
  if (again == NULL)
    violation ("the text does not parse: %s", error->message);
  check_bundle (again, expected);
  if (!serio_bundle_equal (bundle, again))
    violation ("the bundles differ after to_string and from_string");

  text_again = serio_bundle_to_string (again, SERIO_SAVE_FLAGS_PLAIN);
  if (strcmp (text, text_again) != 0)
    violation ("equal bundles give different texts");

  check_sealed (bundle, expected, data, size);

  return 0;
}
