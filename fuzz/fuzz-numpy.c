/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-numpy.c: arbitrary bytes into serio convert's NumPy readers
 *
 * Copyright 2026 The libserio authors
 *
 * Built twice: fuzz-npy (FUZZ_NPZ 0) reads the input as a .npy file,
 * fuzz-npz (FUZZ_NPZ 1) as a .npz archive, with the tool's own
 * tools/serio-npy.c and tools/serio-npz.c.
 *
 * The oracle: every failure sets an error whose message is valid UTF-8
 * (a reader never fails without one); the sink sees begin, values that
 * add up to the header's count, then end, for each array, and nothing
 * after an error is reported to it as whole. The same bytes read two ways
 * give the same result: a .npy file from a source of known size that can
 * seek and from a stream of unknown size that cannot; a .npz archive
 * with its size given and found by seeking. Any violation aborts.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serio-numpy.h"

#ifndef FUZZ_NPZ
#error "FUZZ_NPZ must be 0 (.npy) or 1 (.npz)"
#endif

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

G_NORETURN static void
violation (const char *what)
{
  fprintf (stderr, "fuzz-numpy: %s\n", what);
  abort ();
}

/* What the sink saw: a digest of every array's header and values. */
typedef struct
{
  gboolean  in_array;
  guint64   n_expected;
  guint64   n_seen;
  gsize     item_size;
  SerioDtype dtype;
  guint     n_arrays;
  GChecksum *digest;
} Seen;

static gboolean
seen_begin (gpointer                user_data,
            const SerioNumpyHeader *header,
            GError                **error)
{
  Seen *seen = user_data;
  guint64 n = 1;

  if (seen->in_array)
    violation ("begin inside an array");
  if (header->n_dims > SERIO_NUMPY_MAX_DIMS)
    violation ("too many dimensions");
  for (guint k = 0; k < header->n_dims; k++)
    {
      /* The reader refuses what NumPy cannot make. */
      if (header->shape[k] > G_MAXINT64)
        violation ("a dimension above 2^63 - 1");
      n = header->shape[k] == 0 || n == 0 ? 0 : n * header->shape[k];
    }
  if (n != header->n_values)
    violation ("the count is not the product of the shape");
  if (header->type_name == NULL ||
      strcmp (header->type_name, serio_dtype_to_string (header->dtype)) != 0)
    violation ("the type name is not the dtype's");

  seen->in_array = TRUE;
  seen->n_expected = header->n_values;
  seen->n_seen = 0;
  seen->item_size = serio_dtype_get_size (header->dtype);
  seen->dtype = header->dtype;
  g_checksum_update (seen->digest, (const guchar *) header->shape,
                     header->n_dims * sizeof (guint64));
  if (header->name != NULL)
    g_checksum_update (seen->digest, (const guchar *) header->name, -1);
  g_checksum_update (seen->digest, (const guchar *) header->type_name, -1);
  return TRUE;
}

static gboolean
seen_values (gpointer     user_data,
             const void  *elements,
             gsize        n_values,
             GError     **error)
{
  Seen *seen = user_data;

  if (!seen->in_array || n_values == 0 || n_values > SERIO_NUMPY_CHUNK_VALUES ||
      n_values > seen->n_expected - seen->n_seen)
    violation ("values out of place");
  seen->n_seen += n_values;
  /* Every element is one that its serio type holds: booleans are 0 or
   * 1, 64-bit integers doubles. */
  for (gsize i = 0; i < n_values; i++)
    {
      const guchar *p = (const guchar *) elements + i * seen->item_size;
      gint64 n;
      guint64 u;

      switch (seen->dtype)
        {
        case SERIO_DTYPE_BOOL:
          if (*p > 1)
            violation ("a boolean other than 0 and 1");
          break;
        case SERIO_DTYPE_INT64:
          memcpy (&n, p, sizeof n);
          if (!serio_dtype_holds (SERIO_DTYPE_INT64, (double) n) ||
              (double) n >= 9223372036854775808.0 || (gint64) (double) n != n)
            violation ("an int64 that no double holds");
          break;
        case SERIO_DTYPE_UINT64:
          memcpy (&u, p, sizeof u);
          if ((double) u >= 18446744073709551616.0 || (guint64) (double) u != u)
            violation ("a uint64 that no double holds");
          break;
        default:
          break;
        }
    }
  g_checksum_update (seen->digest, elements, n_values * seen->item_size);
  return TRUE;
}

static gboolean
seen_end (gpointer   user_data,
          GError   **error)
{
  Seen *seen = user_data;

  if (!seen->in_array || seen->n_seen != seen->n_expected)
    violation ("end before every value");
  seen->in_array = FALSE;
  seen->n_arrays++;
  return TRUE;
}

static const SerioNumpySink sink = { seen_begin, seen_values, seen_end };

/* The outcome of one read: NULL on failure, else the digest. */
static char *
outcome (gboolean  ok,
         GError   *error,
         Seen     *seen)
{
  if (!ok)
    {
      if (error == NULL)
        violation ("failed without an error");
      if (!g_utf8_validate (error->message, -1, NULL))
        violation ("the message is not UTF-8");
      return NULL;
    }
  if (error != NULL)
    violation ("succeeded with an error");
  if (seen->in_array)
    violation ("succeeded inside an array");

  return g_strdup (g_checksum_get_string (seen->digest));
}

static char *
read_once (GBytes   *bytes,
           gboolean  other_way,
           GError  **error)
{
  g_autoptr(GInputStream) stream = NULL;
  Seen seen = { FALSE, 0, 0, 0, SERIO_DTYPE_FLOAT64, 0, g_checksum_new (G_CHECKSUM_SHA256) };
  gboolean ok;
  char *result;

#if FUZZ_NPZ
  {
    gboolean io_failed = FALSE;

    stream = g_memory_input_stream_new_from_bytes (bytes);
    ok = serio_numpy_read_npz (stream, other_way ? -1 : (gint64) g_bytes_get_size (bytes),
                               &sink, &seen, &io_failed, error);
    if (io_failed)
      violation ("an I/O failure of a memory stream");
  }
#else
  {
    SerioNumpyFileSource source;

    stream = g_memory_input_stream_new_from_bytes (bytes);
    if (other_way)
      {
        serio_numpy_file_source_init (&source, stream, (gint64) g_bytes_get_size (bytes));
      }
    else
      {
        /* As from a pipe: no size, no reading by offset. */
        serio_numpy_file_source_init (&source, stream, -1);
        source.source.read_at = NULL;
      }
    ok = serio_numpy_read_npy (&source.source, NULL, &sink, &seen, error);
    if (source.source.io_failed)
      violation ("an I/O failure of a memory stream");
  }
#endif

  result = outcome (ok, error != NULL ? *error : NULL, &seen);
  g_checksum_free (seen.digest);
  return result;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) other_error = NULL;
  g_autofree char *result = read_once (bytes, FALSE, &error);
  g_autofree char *other = read_once (bytes, TRUE, &other_error);

  if ((result == NULL) != (other == NULL))
    violation ("the two ways of reading disagree on success");
  if (result != NULL && strcmp (result, other) != 0)
    violation ("the two ways of reading give different arrays");

  return 0;
}
