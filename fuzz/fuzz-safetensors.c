/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-safetensors.c: arbitrary bytes into serio convert's .safetensors
 * reader, and what it accepts through its writer's layout
 *
 * Copyright 2026 The libserio authors
 *
 * Compiled with tools/serio-safetensors.c (less serio convert's part).
 * The oracle: every failure sets an error whose message is valid UTF-8;
 * the sink sees the header, then begin, data adding up to the tensor's
 * bytes, then end, for each tensor in the order of the offsets, which
 * tile the data. The same bytes give the same outcome read from a stream
 * whose size is known and from one whose size is not. What is accepted,
 * laid out again by the writer (the reference order, a padded header)
 * with its data moved to match, reads back to the same tensors, bytes and
 * metadata, and lays out again to the same header. Any violation aborts.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serio-safetensors.h"

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

G_NORETURN static void
violation (const char *what)
{
  fprintf (stderr, "fuzz-safetensors: %s\n", what);
  abort ();
}

/* What the sink saw. */
typedef struct
{
  gboolean    had_header;
  GPtrArray  *tensors;    /* copies, in the order of the data */
  GPtrArray  *keys;
  GPtrArray  *values;
  GHashTable *data;       /* name → GByteArray of host-order bytes */
  GByteArray *current;
  guint64     expected;
  guint64     next_begin;
} Seen;

static void
tensor_copy_free (gpointer data)
{
  SerioSafetensorsTensor *tensor = data;

  g_free (tensor->name);
  g_free (tensor->shape);
  g_free (tensor);
}

static void
seen_init (Seen *seen)
{
  *seen = (Seen) { FALSE, };
  seen->tensors = g_ptr_array_new_with_free_func (tensor_copy_free);
  seen->keys = g_ptr_array_new_with_free_func (g_free);
  seen->values = g_ptr_array_new_with_free_func (g_free);
  seen->data = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                      (GDestroyNotify) g_byte_array_unref);
}

static void
seen_clear (Seen *seen)
{
  g_hash_table_unref (seen->data);
  g_ptr_array_unref (seen->tensors);
  g_ptr_array_unref (seen->keys);
  g_ptr_array_unref (seen->values);
}

static gboolean
seen_header (gpointer                      user_data,
             const SerioSafetensorsHeader *header,
             GError                      **error)
{
  Seen *seen = user_data;

  (void) error;
  if (seen->had_header)
    violation ("two headers");
  seen->had_header = TRUE;
  if (header->metadata_keys->len != header->metadata_values->len)
    violation ("metadata keys and values differ in number");
  for (guint i = 0; i < header->metadata_keys->len; i++)
    {
      g_ptr_array_add (seen->keys, g_strdup (header->metadata_keys->pdata[i]));
      g_ptr_array_add (seen->values, g_strdup (header->metadata_values->pdata[i]));
    }
  return TRUE;
}

static gboolean
seen_begin (gpointer                      user_data,
            const SerioSafetensorsTensor *tensor,
            GError                      **error)
{
  Seen *seen = user_data;
  SerioSafetensorsTensor *copy;
  guint64 n = 1;

  (void) error;
  if (!seen->had_header || seen->current != NULL)
    violation ("begin out of place");
  if (tensor->begin != seen->next_begin || tensor->end < tensor->begin)
    violation ("the offsets do not tile the data");
  if (tensor->dtype == NULL || tensor->dtype->serio_name == NULL || tensor->dtype->size == 0)
    violation ("a dtype that serio has not");
  if (tensor->n_dims > SERIO_SHAPE_MAX_DIMS)
    violation ("too many dimensions");
  for (guint k = 0; k < tensor->n_dims; k++)
    n *= tensor->shape[k];
  if (n != tensor->n_values || n * tensor->dtype->size != tensor->end - tensor->begin)
    violation ("the shape disagrees with the offsets");
  if (g_hash_table_contains (seen->data, tensor->name))
    violation ("a name twice");

  copy = g_memdup2 (tensor, sizeof *tensor);
  copy->name = g_strdup (tensor->name);
  copy->shape = g_memdup2 (tensor->shape, tensor->n_dims * sizeof (guint64));
  g_ptr_array_add (seen->tensors, copy);

  seen->current = g_byte_array_new ();
  g_hash_table_insert (seen->data, copy->name, seen->current);
  seen->expected = tensor->end - tensor->begin;
  seen->next_begin = tensor->end;
  return TRUE;
}

static gboolean
seen_data (gpointer    user_data,
           const void *data,
           gsize       len,
           GError    **error)
{
  Seen *seen = user_data;

  (void) error;
  if (seen->current == NULL || len == 0 || seen->current->len + len > seen->expected)
    violation ("data out of place");
  g_byte_array_append (seen->current, data, (guint) len);
  return TRUE;
}

static gboolean
seen_end (gpointer   user_data,
          GError   **error)
{
  Seen *seen = user_data;

  (void) error;
  if (seen->current == NULL || seen->current->len != seen->expected)
    violation ("a tensor ends short");
  seen->current = NULL;
  return TRUE;
}

static const SerioSafetensorsSink sink = { seen_header, seen_begin, seen_data, seen_end };

/* Reads @bytes into @seen; TRUE when accepted. */
static gboolean
read_once (GBytes   *bytes,
           gboolean  size_known,
           Seen     *seen)
{
  g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_bytes (bytes);
  g_autoptr(GError) error = NULL;
  gboolean io_failed = TRUE;
  gboolean ok;

  seen_init (seen);
  ok = serio_safetensors_read (stream, size_known ? (gint64) g_bytes_get_size (bytes) : -1,
                               &sink, seen, &io_failed, &error);
  if (ok != (error == NULL))
    violation ("a result and an error that disagree");
  if (io_failed)
    violation ("a memory stream failed");
  if (!ok && !g_utf8_validate (error->message, -1, NULL))
    violation ("an error message that is not UTF-8");
  if (ok && seen->current != NULL)
    violation ("accepted inside a tensor");
  return ok;
}

static void
same_result (Seen *a,
             Seen *b)
{
  if (a->tensors->len != b->tensors->len || a->keys->len != b->keys->len)
    violation ("different numbers of tensors or metadata");

  for (guint i = 0; i < a->tensors->len; i++)
    {
      const SerioSafetensorsTensor *x = g_ptr_array_index (a->tensors, i);
      GByteArray *x_data = g_hash_table_lookup (a->data, x->name);
      GByteArray *y_data = g_hash_table_lookup (b->data, x->name);
      const SerioSafetensorsTensor *y = NULL;

      for (guint k = 0; k < b->tensors->len && y == NULL; k++)
        if (strcmp (((SerioSafetensorsTensor *) b->tensors->pdata[k])->name, x->name) == 0)
          y = b->tensors->pdata[k];
      if (y == NULL || y_data == NULL)
        violation ("a tensor lost");
      if (x->dtype != y->dtype || x->n_dims != y->n_dims ||
          (x->n_dims > 0 && memcmp (x->shape, y->shape, x->n_dims * sizeof (guint64)) != 0))
        violation ("a tensor's dtype or shape changed");
      if (x_data->len != y_data->len ||
          (x_data->len > 0 && memcmp (x_data->data, y_data->data, x_data->len) != 0))
        violation ("a tensor's bytes changed");
    }

  for (guint i = 0; i < a->keys->len; i++)
    {
      gboolean found = FALSE;

      for (guint k = 0; k < b->keys->len; k++)
        if (strcmp (a->keys->pdata[i], b->keys->pdata[k]) == 0)
          {
            if (strcmp (a->values->pdata[i], b->values->pdata[k]) != 0)
              violation ("a metadata value changed");
            found = TRUE;
          }
      if (!found)
        violation ("a metadata key lost");
    }
}

/* The writer's layout of what @seen holds, with the data in its order. */
static GBytes *
lay_out (Seen *seen)
{
  g_autoptr(GPtrArray) tensors = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) header = NULL;
  GByteArray *file;
  gsize len;
  const guint8 *data;

  for (guint i = 0; i < seen->tensors->len; i++)
    g_ptr_array_add (tensors, seen->tensors->pdata[i]);
  header = serio_safetensors_layout (tensors, seen->keys, seen->values, &error);
  if (header == NULL)
    violation ("an accepted header has no layout");

  data = g_bytes_get_data (header, &len);
  if (len % 8 != 0 || (len > 8 && data[len - 1] != '}' && data[len - 1] != ' '))
    violation ("a header not padded to 8 bytes");

  file = g_byte_array_new ();
  g_byte_array_append (file, data, (guint) len);
  for (guint i = 0; i < tensors->len; i++)
    {
      const SerioSafetensorsTensor *tensor = g_ptr_array_index (tensors, i);
      GByteArray *bytes = g_hash_table_lookup (seen->data, tensor->name);
      guint at = file->len;

      if (i > 0 &&
          ((const SerioSafetensorsTensor *) tensors->pdata[i - 1])->dtype->rank < tensor->dtype->rank)
        violation ("not in the order of alignment");
      if (tensor->begin != at - len)
        violation ("an offset that is not where the data goes");
      g_byte_array_append (file, bytes->data, bytes->len);
      serio_safetensors_swap (file->data + at, bytes->len, tensor->dtype->size);
    }

  return g_byte_array_free_to_bytes (file);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr(GBytes) again = NULL;
  g_autoptr(GBytes) third = NULL;
  Seen known, unknown, back, back2;
  gboolean ok;

  ok = read_once (bytes, TRUE, &known);
  if (read_once (bytes, FALSE, &unknown) != ok)
    violation ("a known size and an unknown one give other outcomes");
  if (ok)
    {
      same_result (&known, &unknown);

      again = lay_out (&known);
      if (!read_once (again, TRUE, &back))
        violation ("the writer's layout is refused");
      same_result (&known, &back);
      same_result (&back, &known);

      third = lay_out (&back);
      if (!g_bytes_equal (again, third))
        violation ("a second layout differs");
      if (!read_once (third, FALSE, &back2))
        violation ("the writer's layout is refused from a stream");
      seen_clear (&back2);
      seen_clear (&back);
    }
  seen_clear (&known);
  seen_clear (&unknown);

  return 0;
}
