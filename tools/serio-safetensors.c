/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-safetensors.c: reading and writing Hugging Face .safetensors
 * files as streams, and serio convert between them and serio files
 *
 * Copyright 2026 The libserio authors
 *
 * The format: https://huggingface.co/docs/safetensors/index (see
 * serio-safetensors.h). The header is parsed here by a small JSON parser
 * of its own, which accepts only the object the format describes and
 * refuses what the reference parser (serde_json) lets through: a
 * duplicate name or field, an unknown field, whitespace before the
 * object, anything but the spaces of the padding after it. The data is
 * then checked against the header before anything is read: every tensor's
 * bytes are its shape's product times its element size, and the tensors
 * tile the data from its first byte to its last, without a hole or an
 * overlap. docs/from-other-formats.md lists every rule.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "serio-json-private.h"
#include "serio-save-private.h"
#include "serio-safetensors.h"

/* The reference writer's Dtype enum is in order of alignment: its rank is
 * the position there (safetensors/src/tensor.rs), by which it sorts the
 * tensors it writes, largest first. Types serio has not are listed to be
 * refused by name. */
static const SerioSafetensorsDtype dtypes[] = {
  { "BOOL", 1, 0, "bool" },
  { "U8", 1, 1, "uint8" },
  { "I8", 1, 2, "int8" },
  { "I16", 2, 5, "int16" },
  { "U16", 2, 6, "uint16" },
  { "F16", 2, 7, "float16" },
  { "BF16", 2, 8, "bfloat16" },
  { "I32", 4, 9, "int32" },
  { "U32", 4, 10, "uint32" },
  { "F32", 4, 11, "float32" },
  { "F64", 8, 12, "float64" },
  { "I64", 8, 13, "int64" },
  { "U64", 8, 14, "uint64" },
  { "F8_E5M2", 0, 3, NULL },
  { "F8_E4M3", 0, 4, NULL },
  { "F8_E8M0", 0, 0, NULL },
  { "F4", 0, 0, NULL },
  { "F6_E2M3", 0, 0, NULL },
  { "F6_E3M2", 0, 0, NULL },
  { "C64", 0, 0, NULL },
};

const SerioSafetensorsDtype *
serio_safetensors_dtype_lookup (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (strcmp (dtypes[i].name, name) == 0)
      return &dtypes[i];
  return NULL;
}

const SerioSafetensorsDtype *
serio_safetensors_dtype_from_serio (const char *serio_name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (dtypes[i].serio_name != NULL && strcmp (dtypes[i].serio_name, serio_name) == 0)
      return &dtypes[i];
  return NULL;
}

/* Swaps each element of @size bytes between little-endian and the host's
 * order (nothing to do on a little-endian host). */
void
serio_safetensors_swap (void  *data,
                        gsize  len,
                        guint  size)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
  guchar *p = data;

  for (gsize i = 0; i + size <= len; i += size)
    for (guint k = 0; k < size / 2; k++)
      {
        guchar t = p[i + k];

        p[i + k] = p[i + size - 1 - k];
        p[i + size - 1 - k] = t;
      }
#else
  (void) data;
  (void) len;
  (void) size;
#endif
}

static void
tensor_free (gpointer data)
{
  SerioSafetensorsTensor *tensor = data;

  g_free (tensor->name);
  g_free (tensor->shape);
  g_free (tensor);
}

void
serio_safetensors_header_free (SerioSafetensorsHeader *header)
{
  if (header == NULL)
    return;

  g_ptr_array_unref (header->tensors);
  g_ptr_array_unref (header->metadata_keys);
  g_ptr_array_unref (header->metadata_values);
  g_free (header);
}

/* ------------------------------------------------------------------ */
/* The header's JSON                                                  */
/* ------------------------------------------------------------------ */

/* The most of a hostile string shown in a message, in characters. */
#define MAX_SHOWN 64

/* A name or string from the header, as a message shows it. */
static char *
shown (const char *text)
{
  g_autofree char *escaped = serio_tool_escape_name (text);
  glong n = g_utf8_strlen (escaped, -1);

  if (n <= MAX_SHOWN)
    return g_steal_pointer (&escaped);

  *g_utf8_offset_to_pointer (escaped, MAX_SHOWN) = '\0';
  return g_strconcat (escaped, "…", NULL);
}

/* A shape as the header writes it: [2,3]. */
static char *
shape_to_string (const guint64 *shape,
                 guint          n_dims)
{
  GString *out = g_string_new ("[");

  for (guint k = 0; k < n_dims; k++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? "," : "", shape[k]);
  g_string_append_c (out, ']');
  return g_string_free (out, FALSE);
}

static gboolean
tensor_error (const char  *name,
              const char  *what,
              GError     **error)
{
  g_autofree char *name_shown = shown (name);

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               /* TRANSLATORS: a tensor's name, then what is wrong with it */
               _("tensor “%s”: %s"), name_shown, what);
  return FALSE;
}

/* "__metadata__": an object of strings, each key once. */
static gboolean
json_metadata (SerioJson                *j,
               SerioSafetensorsHeader  *header,
               GError                 **error)
{
  g_autoptr(GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);

  serio_json_skip_spaces (j);
  if (j->p == j->end || *j->p != '{')
    return serio_json_error (j, _("“__metadata__” must be an object of strings"), error);
  j->p++;
  if (serio_json_accept (j, '}'))
    return TRUE;

  do
    {
      char *key, *value;

      key = serio_json_string (j, error);
      if (key == NULL)
        return FALSE;
      g_ptr_array_add (header->metadata_keys, key);
      if (!g_hash_table_add (keys, key))
        {
          g_autofree char *key_shown = shown (key);
          g_autofree char *what = g_strdup_printf (_("the metadata key “%s” is given twice"),
                                                   key_shown);

          return serio_json_error (j, what, error);
        }
      if (!serio_json_expect (j, ':', error))
        return FALSE;
      serio_json_skip_spaces (j);
      if (j->p == j->end || *j->p != '"')
        return serio_json_error (j, _("a metadata value must be a string"), error);
      value = serio_json_string (j, error);
      if (value == NULL)
        return FALSE;
      g_ptr_array_add (header->metadata_values, value);
    }
  while (serio_json_accept (j, ','));

  return serio_json_expect (j, '}', error);
}

/* A tensor's entry: an object of exactly "dtype", "shape" and
 * "data_offsets", each once, in any order. */
static gboolean
json_tensor (SerioJson                *j,
             SerioSafetensorsTensor  *tensor,
             GError                 **error)
{
  g_autoptr(GArray) shape = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autofree char *dtype_name = NULL;
  gboolean has_offsets = FALSE, has_shape = FALSE;
  guint64 n_values = 1;
  gboolean overflow = FALSE;

  serio_json_skip_spaces (j);
  if (j->p == j->end || *j->p != '{')
    return tensor_error (tensor->name, _("its entry is not a JSON object"), error);
  j->p++;

  if (!serio_json_accept (j, '}'))
    do
      {
        g_autofree char *field = serio_json_string (j, error);

        if (field == NULL)
          return FALSE;
        if (!serio_json_expect (j, ':', error))
          return FALSE;

        if ((strcmp (field, "dtype") == 0 && dtype_name != NULL) ||
            (strcmp (field, "shape") == 0 && has_shape) ||
            (strcmp (field, "data_offsets") == 0 && has_offsets))
          {
            g_autofree char *what = g_strdup_printf (_("the field “%s” is given twice"), field);

            return tensor_error (tensor->name, what, error);
          }

        if (strcmp (field, "dtype") == 0)
          {
            serio_json_skip_spaces (j);
            if (j->p == j->end || *j->p != '"')
              return tensor_error (tensor->name, _("its dtype is not a string"), error);
            dtype_name = serio_json_string (j, error);
            if (dtype_name == NULL)
              return FALSE;
          }
        else if (strcmp (field, "shape") == 0)
          {
            has_shape = TRUE;
            if (!serio_json_expect (j, '[', error))
              return FALSE;
            if (!serio_json_accept (j, ']'))
              {
                do
                  {
                    guint64 dim;

                    if (!serio_json_uint (j, &dim, error))
                      return FALSE;
                    if (shape->len == SERIO_SHAPE_MAX_DIMS)
                      {
                        g_autofree char *what =
                          g_strdup_printf (_("its shape has more than %u dimensions, the most "
                                             "a serio shape has"),
                                           (guint) SERIO_SHAPE_MAX_DIMS);

                        return tensor_error (tensor->name, what, error);
                      }
                    g_array_append_val (shape, dim);
                    if (dim == 0)
                      n_values = 0, overflow = FALSE;
                    else if (n_values != 0 && n_values > G_MAXUINT64 / dim)
                      overflow = TRUE;
                    else
                      n_values *= dim;
                  }
                while (serio_json_accept (j, ','));
                if (!serio_json_expect (j, ']', error))
                  return FALSE;
              }
          }
        else if (strcmp (field, "data_offsets") == 0)
          {
            has_offsets = TRUE;
            if (!serio_json_expect (j, '[', error) ||
                !serio_json_uint (j, &tensor->begin, error) ||
                !serio_json_expect (j, ',', error) ||
                !serio_json_uint (j, &tensor->end, error))
              return FALSE;
            if (!serio_json_accept (j, ']'))
              return tensor_error (tensor->name, _("its data_offsets are not two integers"), error);
          }
        else
          {
            g_autofree char *field_shown = shown (field);
            g_autofree char *what = g_strdup_printf (_("unknown field “%s”"), field_shown);

            return tensor_error (tensor->name, what, error);
          }
      }
    while (serio_json_accept (j, ','));

  if (!serio_json_expect (j, '}', error))
    return FALSE;

  if (dtype_name == NULL || !has_shape || !has_offsets)
    {
      g_autofree char *what =
        g_strdup_printf (_("its entry has no “%s”"),
                         dtype_name == NULL ? "dtype" : !has_shape ? "shape" : "data_offsets");

      return tensor_error (tensor->name, what, error);
    }

  tensor->dtype = serio_safetensors_dtype_lookup (dtype_name);
  if (tensor->dtype == NULL)
    {
      g_autofree char *dtype_shown = shown (dtype_name);
      g_autofree char *what = g_strdup_printf (_("unknown dtype “%s”"), dtype_shown);

      return tensor_error (tensor->name, what, error);
    }
  if (tensor->dtype->serio_name == NULL)
    {
      g_autofree char *what =
        g_strdup_printf (_("the dtype %s has no serio element type"), tensor->dtype->name);

      return tensor_error (tensor->name, what, error);
    }

  /* The shape's bytes must be the offsets' (a product beyond 64 bits is
   * more than any offsets). */
  if (tensor->end < tensor->begin)
    return tensor_error (tensor->name, _("its data_offsets end before they begin"), error);
  if (overflow || n_values > (tensor->end - tensor->begin) / tensor->dtype->size ||
      n_values * tensor->dtype->size != tensor->end - tensor->begin)
    {
      g_autofree char *shape_text = shape_to_string ((guint64 *) (gpointer) shape->data, shape->len);
      g_autofree char *bytes = g_strdup_printf ("%" G_GUINT64_FORMAT, tensor->end - tensor->begin);
      g_autofree char *what =
        /* TRANSLATORS: a shape such as “2x3”, a dtype such as “F32” and
         * a number of bytes */
        g_strdup_printf (_("its shape %s of %s takes other than the %s bytes of its data_offsets"),
                         shape_text, tensor->dtype->name, bytes);

      return tensor_error (tensor->name, what, error);
    }

  tensor->n_values = n_values;
  tensor->n_dims = shape->len;
  tensor->shape = (guint64 *) (gpointer) g_array_free (g_steal_pointer (&shape), FALSE);
  return TRUE;
}

static int
compare_offsets (gconstpointer a,
                 gconstpointer b)
{
  const SerioSafetensorsTensor *x = *(SerioSafetensorsTensor * const *) a;
  const SerioSafetensorsTensor *y = *(SerioSafetensorsTensor * const *) b;

  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* The tensors, in the order of their offsets, must tile the data. */
static gboolean
check_tiling (SerioSafetensorsHeader  *header,
              GError                 **error)
{
  guint64 at = 0;

  g_ptr_array_sort (header->tensors, compare_offsets);
  for (guint i = 0; i < header->tensors->len; i++)
    {
      SerioSafetensorsTensor *tensor = g_ptr_array_index (header->tensors, i);

      if (tensor->begin > at)
        {
          g_autofree char *begin = g_strdup_printf ("%" G_GUINT64_FORMAT, tensor->begin);
          g_autofree char *hole = g_strdup_printf ("%" G_GUINT64_FORMAT, at);
          g_autofree char *what =
            /* TRANSLATORS: %s are byte offsets in the data */
            g_strdup_printf (_("its data begins at byte %s, leaving a hole from byte %s "
                               "that no tensor covers"),
                             begin, hole);

          return tensor_error (tensor->name, what, error);
        }
      if (tensor->begin < at)
        {
          SerioSafetensorsTensor *before = g_ptr_array_index (header->tensors, i - 1);
          g_autofree char *before_shown = shown (before->name);
          g_autofree char *what =
            g_strdup_printf (_("its data overlaps that of tensor “%s”"), before_shown);

          return tensor_error (tensor->name, what, error);
        }
      at = tensor->end;
    }

  header->data_size = at;
  return TRUE;
}

/*
 * serio_safetensors_header_parse:
 * @json: the header's bytes, less the 8 of its length
 * @len: their number
 *
 * Parses and checks the header, but not against the size of the data
 * that follows it (header->data_size is the size it needs).
 *
 * Returns: (transfer full): the header, or %NULL with @error set
 */
SerioSafetensorsHeader *
serio_safetensors_header_parse (const char  *json,
                                gsize        len,
                                GError     **error)
{
  g_autoptr(SerioSafetensorsHeader) header = g_new0 (SerioSafetensorsHeader, 1);
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  SerioJson j;
  const char *start;
  const char *bad;

  serio_json_init (&j, json, len, SERIO_JSON_HEADER);
  start = j.start;
  header->tensors = g_ptr_array_new_with_free_func (tensor_free);
  header->metadata_keys = g_ptr_array_new_with_free_func (g_free);
  header->metadata_values = g_ptr_array_new_with_free_func (g_free);

  if (!g_utf8_validate_len (start, len, &bad))
    {
      g_autofree char *at = g_strdup_printf ("%" G_GSIZE_FORMAT, (gsize) (bad - start));

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a byte offset in the header */
                   _("the header is not valid UTF-8 (byte %s)"), at);
      return NULL;
    }

  if (len == 0 || *j.p != '{')
    {
      if (len > 0 && (*j.p == ' ' || *j.p == '\t' || *j.p == '\n' || *j.p == '\r'))
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                             _("the header starts with whitespace, not with the “{” of a JSON object"));
      else
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                             _("the header is not a JSON object"));
      return NULL;
    }
  j.p++;

  if (!serio_json_accept (&j, '}'))
    {
      do
        {
          g_autofree char *name = serio_json_string (&j, error);

          if (name == NULL)
            return NULL;
          if (!serio_json_expect (&j, ':', error))
            return NULL;

          if (strcmp (name, "__metadata__") == 0)
            {
              if (header->has_metadata)
                {
                  serio_json_error (&j, _("“__metadata__” is given twice"), error);
                  return NULL;
                }
              header->has_metadata = TRUE;
              if (!json_metadata (&j, header, error))
                return NULL;
            }
          else
            {
              SerioSafetensorsTensor *tensor = g_new0 (SerioSafetensorsTensor, 1);

              tensor->name = g_steal_pointer (&name);
              g_ptr_array_add (header->tensors, tensor);
              if (!g_hash_table_add (names, tensor->name))
                {
                  tensor_error (tensor->name, _("the name is given twice"), error);
                  return NULL;
                }
              if (!json_tensor (&j, tensor, error))
                return NULL;
            }
        }
      while (serio_json_accept (&j, ','));

      if (!serio_json_expect (&j, '}', error))
        return NULL;
    }

  /* The reference writer pads the header with spaces. */
  for (; j.p < j.end; j.p++)
    if (*j.p != ' ')
      {
        serio_json_error (&j, _("only the spaces of padding may follow the header's object"), error);
        return NULL;
      }

  if (!check_tiling (header, error))
    return NULL;

  return g_steal_pointer (&header);
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

/* The bytes read at a time: a multiple of every element size. */
#define CHUNK (1024 * 1024)

static gboolean
read_all (GInputStream  *stream,
          void          *buffer,
          gsize          len,
          gsize         *got,
          gboolean      *io_failed,
          GError       **error)
{
  if (!g_input_stream_read_all (stream, buffer, len, got, NULL, error))
    {
      *io_failed = TRUE;
      return FALSE;
    }
  return TRUE;
}

static char *
format_u64 (guint64 n)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

/* The header, read whole: from a file of known size into a buffer of its
 * length, checked against the size first; from a stream of unknown size
 * in pieces, so that memory follows what arrives, not what the length
 * says. */
static GByteArray *
read_header (GInputStream  *stream,
             gint64         size,
             gboolean      *io_failed,
             GError       **error)
{
  g_autoptr(GByteArray) json = NULL;
  guint8 prefix[8];
  guint64 len;
  gsize got;

  if (!read_all (stream, prefix, sizeof prefix, &got, io_failed, error))
    return NULL;
  if (got < sizeof prefix)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("the file is shorter than the 8 bytes of its header's length"));
      return NULL;
    }

  memcpy (&len, prefix, sizeof len);
  len = GUINT64_FROM_LE (len);
  if (len > SERIO_SAFETENSORS_MAX_HEADER)
    {
      g_autofree char *len_text = format_u64 (len);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a number of bytes, then the most allowed */
                   _("the header's length, %s bytes, is over the %s bytes that the format allows"),
                   len_text, "100000000");
      return NULL;
    }
  if (size >= 0 && len > (guint64) size - sizeof prefix)
    {
      g_autofree char *len_text = format_u64 (len);
      g_autofree char *left = format_u64 ((guint64) size - sizeof prefix);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: two numbers of bytes */
                   _("the header's length, %s bytes, is longer than the %s bytes of the file "
                     "after it"),
                   len_text, left);
      return NULL;
    }

  json = g_byte_array_sized_new (size >= 0 ? (guint) len : (guint) MIN (len, CHUNK));
  while (json->len < len)
    {
      gsize want = (gsize) MIN (len - json->len, CHUNK);
      guint at = json->len;

      g_byte_array_set_size (json, at + want);
      if (!read_all (stream, json->data + at, want, &got, io_failed, error))
        return NULL;
      g_byte_array_set_size (json, at + got);
      if (got < want)
        {
          g_autofree char *len_text = format_u64 (len);
          g_autofree char *left = format_u64 (json->len);

          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("the header's length, %s bytes, is longer than the %s bytes of the file "
                         "after it"),
                       len_text, left);
          return NULL;
        }
    }

  return g_steal_pointer (&json);
}

static gboolean
bytes_after (guint64   n_after,
             GError  **error)
{
  g_autofree char *n_text = format_u64 (n_after);

  if (n_after == G_MAXUINT64)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                         _("bytes follow the data of the last tensor"));
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: a number of bytes */
                 _("%s bytes follow the data of the last tensor"), n_text);
  return FALSE;
}

static gboolean
data_shorter (const SerioSafetensorsTensor  *tensor,
              GError                       **error)
{
  return tensor_error (tensor->name, _("the file ends inside its data"), error);
}

/*
 * serio_safetensors_read:
 * @stream: a .safetensors file, read front to back
 * @size: its size, or -1 when it is not known (a pipe)
 * @sink: what the header and each tensor go to, in the order of the data
 * @io_failed: (out): whether the error set is one of the stream
 * @error: errors about a tensor start with its name
 *
 * Reads and checks the header, then hands each tensor's data over in
 * pieces of at most 1 MiB. A file of known size is checked against the
 * header before any tensor is handed over; a stream of unknown size is
 * checked as it goes, and must end where the last tensor does.
 *
 * Returns: %TRUE when every tensor was read, %FALSE with @error set
 */
gboolean
serio_safetensors_read (GInputStream                *stream,
                        gint64                       size,
                        const SerioSafetensorsSink  *sink,
                        gpointer                     user_data,
                        gboolean                    *io_failed,
                        GError                     **error)
{
  g_autoptr(GByteArray) json = NULL;
  g_autoptr(SerioSafetensorsHeader) header = NULL;
  g_autofree guchar *buffer = NULL;
  guchar extra;
  gsize got;

  *io_failed = FALSE;
  json = read_header (stream, size, io_failed, error);
  if (json == NULL)
    return FALSE;

  header = serio_safetensors_header_parse ((const char *) json->data, json->len, error);
  if (header == NULL)
    return FALSE;

  /* A file of known size is checked whole before its data is read. */
  if (size >= 0)
    {
      guint64 data_size = (guint64) size - 8 - json->len;

      if (data_size > header->data_size)
        return bytes_after (data_size - header->data_size, error);
      if (data_size < header->data_size)
        {
          g_autofree char *need = format_u64 (header->data_size);
          g_autofree char *have = format_u64 (data_size);

          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       /* TRANSLATORS: two numbers of bytes */
                       _("the tensors take %s bytes of data, and the file holds %s"),
                       need, have);
          return FALSE;
        }
    }
  g_clear_pointer (&json, g_byte_array_unref);

  if (!sink->header (user_data, header, error))
    return FALSE;

  buffer = g_malloc (CHUNK);
  for (guint i = 0; i < header->tensors->len; i++)
    {
      const SerioSafetensorsTensor *tensor = g_ptr_array_index (header->tensors, i);
      guint64 left = tensor->end - tensor->begin;

      if (!sink->begin (user_data, tensor, error))
        return FALSE;
      while (left > 0)
        {
          gsize want = (gsize) MIN (left, CHUNK);

          if (!read_all (stream, buffer, want, &got, io_failed, error))
            return FALSE;
          if (got < want)
            return data_shorter (tensor, error);
          serio_safetensors_swap (buffer, got, tensor->dtype->size);
          if (!sink->data (user_data, buffer, got, error))
            return FALSE;
          left -= got;
        }
      if (!sink->end (user_data, error))
        return FALSE;
    }

  if (!read_all (stream, &extra, 1, &got, io_failed, error))
    return FALSE;
  if (got > 0)
    return bytes_after (G_MAXUINT64, error);

  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

/* The reference writer's order: alignment (its Dtype enum) descending,
 * then name, byte by byte. */
static int
compare_layout (gconstpointer a,
                gconstpointer b)
{
  const SerioSafetensorsTensor *x = *(SerioSafetensorsTensor * const *) a;
  const SerioSafetensorsTensor *y = *(SerioSafetensorsTensor * const *) b;

  if (x->dtype->rank != y->dtype->rank)
    return x->dtype->rank > y->dtype->rank ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* Indexes into a GPtrArray of strings, by their strings. */
static int
compare_keys (gconstpointer a,
              gconstpointer b,
              gpointer      keys)
{
  GPtrArray *array = keys;

  return strcmp (array->pdata[*(const guint *) a], array->pdata[*(const guint *) b]);
}

/*
 * serio_safetensors_layout:
 * @tensors: (element-type SerioSafetensorsTensor): their names, dtypes
 *   and shapes; sorted here into the order of their data, and given their
 *   offsets
 * @metadata_keys: (nullable): the keys of "__metadata__", written in the
 *   order of their bytes (the reference writer's is that of a hash table)
 * @metadata_values: (nullable): their values
 *
 * Returns: (transfer full): the 8 bytes of the header's length and the
 *   header, or %NULL with @error set when the header would be larger
 *   than the format allows
 */
GBytes *
serio_safetensors_layout (GPtrArray  *tensors,
                          GPtrArray  *metadata_keys,
                          GPtrArray  *metadata_values,
                          GError    **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  guint64 offset = 0, len;
  gboolean first = TRUE;

  g_ptr_array_sort (tensors, compare_layout);

  /* Eight bytes for the length, filled in at the end. */
  g_string_append_len (out, "\0\0\0\0\0\0\0\0", 8);
  g_string_append_c (out, '{');

  if (metadata_keys != NULL && metadata_keys->len > 0)
    {
      g_autofree guint *order = g_new (guint, metadata_keys->len);

      for (guint i = 0; i < metadata_keys->len; i++)
        order[i] = i;
      g_qsort_with_data (order, (gint) metadata_keys->len, sizeof (guint),
                         compare_keys, metadata_keys);

      g_string_append (out, "\"__metadata__\":{");
      for (guint i = 0; i < metadata_keys->len; i++)
        {
          if (i > 0)
            g_string_append_c (out, ',');
          serio_tool_append_json_string (out, metadata_keys->pdata[order[i]]);
          g_string_append_c (out, ':');
          serio_tool_append_json_string (out, metadata_values->pdata[order[i]]);
        }
      g_string_append_c (out, '}');
      first = FALSE;
    }

  for (guint i = 0; i < tensors->len; i++)
    {
      SerioSafetensorsTensor *tensor = g_ptr_array_index (tensors, i);
      guint64 n_bytes = tensor->n_values * tensor->dtype->size;

      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;

      tensor->begin = offset;
      tensor->end = offset + n_bytes;
      offset = tensor->end;

      serio_tool_append_json_string (out, tensor->name);
      g_string_append_printf (out, ":{\"dtype\":\"%s\",\"shape\":", tensor->dtype->name);
      g_string_append_c (out, '[');
      for (guint k = 0; k < tensor->n_dims; k++)
        g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? "," : "", tensor->shape[k]);
      g_string_append_printf (out, "],\"data_offsets\":[%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "]}",
                              tensor->begin, tensor->end);

      if (out->len > 8 + SERIO_SAFETENSORS_MAX_HEADER)
        break;
    }
  g_string_append_c (out, '}');

  /* Padded with spaces to a multiple of 8 bytes, so that the data is
   * aligned. */
  while ((out->len - 8) % 8 != 0)
    g_string_append_c (out, ' ');

  len = out->len - 8;
  if (len > SERIO_SAFETENSORS_MAX_HEADER)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: the most bytes a header may have */
                   _("the header would be over the %s bytes that the format allows"),
                   "100000000");
      return NULL;
    }
  len = GUINT64_TO_LE (len);
  memcpy (out->str, &len, 8);

  return g_string_free_to_bytes (g_steal_pointer (&out));
}

/* ------------------------------------------------------------------ */
/* serio convert                                                      */
/* ------------------------------------------------------------------ */

/* Whether a serio record can be named @name: v1 names hold no “|”, CR or
 * LF (NUL was refused in the header). */
static gboolean
name_is_storable (const char *name)
{
  return strpbrk (name, "|\r\n") == NULL;
}

/* A float64 array's stored name has no type marker, so that a base name
 * ending in one (“w@int8”) would read back as another type. */
static gboolean
name_is_ambiguous (const char *name,
                   SerioDtype  dtype)
{
  const char *at = strrchr (name, '@');
  SerioDtype other;

  return dtype == SERIO_DTYPE_FLOAT64 && at != NULL &&
         serio_dtype_from_string (at + 1, &other) && other != SERIO_DTYPE_FLOAT64;
}

/* The NaNs of a piece of a float tensor that are not the default quiet
 * NaN of their type, which serio stores instead. */
static guint64
count_special_nans (const void *data,
                    gsize       len,
                    SerioDtype  dtype)
{
  guint64 n = 0;

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      for (gsize i = 0; i + 8 <= len; i += 8)
        {
          guint64 bits;

          memcpy (&bits, (const guchar *) data + i, 8);
          n += (bits & G_GUINT64_CONSTANT (0x7FF0000000000000)) == G_GUINT64_CONSTANT (0x7FF0000000000000) &&
               (bits & G_GUINT64_CONSTANT (0x000FFFFFFFFFFFFF)) != 0 &&
               bits != G_GUINT64_CONSTANT (0x7FF8000000000000);
        }
      break;
    case SERIO_DTYPE_FLOAT32:
      for (gsize i = 0; i + 4 <= len; i += 4)
        {
          guint32 bits;

          memcpy (&bits, (const guchar *) data + i, 4);
          n += (bits & 0x7F800000) == 0x7F800000 && (bits & 0x007FFFFF) != 0 && bits != 0x7FC00000;
        }
      break;
    case SERIO_DTYPE_FLOAT16:
    case SERIO_DTYPE_BFLOAT16:
      {
        guint16 exponent = dtype == SERIO_DTYPE_FLOAT16 ? 0x7C00 : 0x7F80;
        guint16 quiet = dtype == SERIO_DTYPE_FLOAT16 ? 0x7E00 : 0x7FC0;

        for (gsize i = 0; i + 2 <= len; i += 2)
          {
            guint16 bits;

            memcpy (&bits, (const guchar *) data + i, 2);
            n += (bits & exponent) == exponent && (bits & (0x7FFF & ~exponent)) != 0 && bits != quiet;
          }
      }
      break;
    default:
      break;
    }

  return n;
}

/* The serio file being written, as the sink of the safetensors reader. */
typedef struct
{
  const char     *display;
  SerioWriter    *writer;
  GError         *write_error;  /* the output failed (the sink stopped) */
  const SerioSafetensorsTensor *tensor;
  SerioDtype      dtype;
  guint64         n_special;
  GPtrArray      *notes;        /* of char *, printed at the end */
} ToSerio;

/* The sink's error when the writer failed: a value that the element type
 * cannot hold (SERIO_ERROR) is a problem of the input, named after the
 * tensor; any other is the output's, kept in @c to be reported, and the
 * reader fails with a copy. */
static gboolean
write_failed (ToSerio  *c,
              GError   *write_error,
              GError  **error)
{
  if (write_error->domain == SERIO_ERROR && c->tensor != NULL)
    {
      g_autofree char *name = shown (c->tensor->name);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a tensor's name, then an error message */
                   _("tensor “%s”: %s"), name, write_error->message);
      g_error_free (write_error);
      return FALSE;
    }

  c->write_error = write_error;
  g_propagate_error (error, g_error_copy (write_error));
  return FALSE;
}

/* Every name is checked before anything is written; the metadata goes
 * first, as uint8 records of its strings' UTF-8 bytes. */
static gboolean
to_serio_header (gpointer                      user_data,
                 const SerioSafetensorsHeader *header,
                 GError                      **error)
{
  ToSerio *c = user_data;

  for (guint i = 0; i < header->tensors->len; i++)
    {
      const SerioSafetensorsTensor *tensor = g_ptr_array_index (header->tensors, i);
      const char *problem = NULL;
      SerioDtype dtype;

      if (!serio_dtype_from_string (tensor->dtype->serio_name, &dtype))
        g_assert_not_reached ();

      if (!name_is_storable (tensor->name))
        problem = _("a serio name cannot hold “|”, CR or LF");
      else if (serio_name_is_metadata (tensor->name))
        problem = _("names beginning “serio.” are reserved for the metadata of serio files");
      else if (name_is_ambiguous (tensor->name, dtype))
        problem = _("the serio name of a float64 array cannot end in a type marker "
                    "(“@int8”, …), which would give it that type");
      if (problem != NULL)
        return tensor_error (tensor->name, problem, error);
    }

  for (guint i = 0; i < header->metadata_keys->len; i++)
    {
      const char *key = header->metadata_keys->pdata[i];
      const char *value = header->metadata_values->pdata[i];
      g_autofree char *base_name = g_strconcat (SERIO_TOOL_METADATA_PREFIX, key, NULL);
      g_autoptr(GBytes) bytes = g_bytes_new_static (value, strlen (value));
      guint64 shape[1] = { strlen (value) };
      GError *write_error = NULL;

      if (!name_is_storable (key))
        {
          g_autofree char *key_shown = shown (key);

          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       /* TRANSLATORS: a key of the header's metadata */
                       _("metadata key “%s”: a serio name cannot hold “|”, CR or LF"), key_shown);
          return FALSE;
        }
      if (!serio_writer_write_typed (c->writer, base_name, SERIO_DTYPE_UINT8, shape, 1, bytes,
                                     NULL, &write_error))
        return write_failed (c, write_error, error);
    }

  return TRUE;
}

static gboolean
to_serio_begin (gpointer                      user_data,
                const SerioSafetensorsTensor *tensor,
                GError                      **error)
{
  ToSerio *c = user_data;
  GError *write_error = NULL;

  c->tensor = tensor;
  c->n_special = 0;
  if (!serio_dtype_from_string (tensor->dtype->serio_name, &c->dtype))
    g_assert_not_reached ();
  if (!serio_writer_begin_typed_array (c->writer, tensor->name, c->dtype, tensor->shape,
                                       tensor->n_dims, NULL, &write_error))
    return write_failed (c, write_error, error);

  return TRUE;
}

static gboolean
to_serio_data (gpointer    user_data,
               const void *data,
               gsize       len,
               GError    **error)
{
  ToSerio *c = user_data;
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, len);
  GError *write_error = NULL;

  c->n_special += count_special_nans (data, len, c->dtype);
  if (!serio_writer_add_typed_bytes (c->writer, bytes, NULL, &write_error))
    return write_failed (c, write_error, error);

  return TRUE;
}

static gboolean
to_serio_end (gpointer   user_data,
              GError   **error)
{
  ToSerio *c = user_data;

  (void) error;
  if (c->n_special > 0)
    {
      g_autofree char *name = shown (c->tensor->name);
      gulong n = (gulong) MIN (c->n_special, G_MAXULONG);

      g_ptr_array_add (c->notes,
                       g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                     /* TRANSLATORS: a file name, a number
                                                      * and a tensor's name */
                                                     "%s: note: %lu NaN with a sign or payload "
                                                     "in “%s” is stored as the default NaN",
                                                     "%s: note: %lu NaNs with a sign or payload "
                                                     "in “%s” are stored as the default NaN",
                                                     n),
                                        c->display, n, name));
    }
  c->tensor = NULL;

  return TRUE;
}

static const SerioSafetensorsSink to_serio_sink = {
  to_serio_header,
  to_serio_begin,
  to_serio_data,
  to_serio_end,
};

/*
 * serio_safetensors_to_serio:
 *
 * serio convert IN.safetensors OUT: the metadata, then the tensors in the
 * order of their data, each a typed array of its dtype and shape. Read
 * front to back in pieces (standard input too) and written as it comes
 * by a writer on OUT's temporary file, which replaces OUT only once the
 * whole input was read without a problem.
 */
int
serio_safetensors_to_serio (const char *in,
                            const char *out,
                            gboolean    plain)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioToolInput) input = NULL;
  g_autoptr(SerioWriter) writer = NULL;
  g_autofree char *display = g_filename_display_name (in);
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  ToSerio c = { display, NULL, NULL, NULL, 0, 0, notes };
  gboolean io_failed = FALSE;
  gboolean read;

  if (!serio_tool_open_to_serio (in, out, plain, &input, &writer))
    return SERIO_TOOL_EXIT_ERROR;
  c.writer = writer;

  read = serio_safetensors_read (G_INPUT_STREAM (input), serio_tool_input_get_size (input),
                                 &to_serio_sink, &c, &io_failed, &error);
  /* The reading may stop before the end of the file. */
  serio_tool_input_end_progress (input);

  /* On any failure, the writer is dropped unclosed: OUT stays. */
  if (!read)
    return serio_tool_to_serio_failed (in, out, &c.write_error, &error, io_failed);

  for (guint i = 0; i < notes->len; i++)
    {
      g_printerr ("%s", (const char *) notes->pdata[i]);
      g_printerr ("\n");
    }

  if (!serio_writer_close (writer, NULL, &error))
    {
      serio_tool_print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}

/* Reads the values of the reader's current array in the dtype's bytes,
 * little-endian, onto @spool, or nowhere when it is %NULL (every value
 * is parsed all the same: an array skipped would not be checked in a
 * plain text). FALSE only when the input failed. */
static gboolean
spool_array (SerioReader     *reader,
             guint            size,
             SerioToolSpool  *spool,
             guchar          *buffer,
             GError         **error,
             GError         **spool_error)
{
  for (;;)
    {
      gsize n;

      if (!serio_reader_read_typed (reader, buffer, CHUNK / size, &n, NULL, error))
        return FALSE;
      if (n == 0)
        return TRUE;
      if (spool != NULL && *spool_error == NULL)
        {
          serio_safetensors_swap (buffer, n * size, size);
          serio_tool_spool_append (spool, (const char *) buffer, (gssize) (n * size), spool_error);
        }
    }
}

/* The metadata record of a key: a vector of uint8, the UTF-8 bytes of a
 * string without U+0000. A message saying why not, or NULL. */
static char *
read_metadata (SerioReader  *reader,
               const char   *base_name,
               GPtrArray    *keys,
               GPtrArray    *values,
               GHashTable   *seen,
               GError      **error)
{
  const char *key = base_name + strlen (SERIO_TOOL_METADATA_PREFIX);
  g_autofree char *name = shown (serio_reader_get_name (reader));
  g_autofree guint64 *shape = NULL;
  g_autoptr(GBytes) bytes = NULL;
  const char *data;
  guint n_dims;
  gsize len;

  shape = serio_reader_get_shape (reader, &n_dims);
  if (serio_reader_get_dtype (reader) != SERIO_DTYPE_UINT8 || n_dims != 1)
    return g_strdup_printf (_("the metadata record “%s” is not a vector of uint8"), name);
  if (serio_reader_get_n_values (reader) > SERIO_SAFETENSORS_MAX_HEADER)
    return g_strdup_printf (_("the metadata record “%s” is longer than a header can be"), name);
  if (g_hash_table_contains (seen, key))
    return g_strdup_printf (_("more than one metadata record is called “%s”"), name);

  bytes = serio_reader_read_typed_bytes (reader, SERIO_SAFETENSORS_MAX_HEADER, NULL, error);
  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  if (!g_utf8_validate_len (data, len, NULL))
    return g_strdup_printf (_("the metadata record “%s” is not the UTF-8 of a string without U+0000"),
                            name);

  g_ptr_array_add (keys, g_strdup (key));
  g_ptr_array_add (values, len > 0 ? g_strndup (data, len) : g_strdup (""));
  g_hash_table_add (seen, keys->pdata[keys->len - 1]);
  return NULL;
}

/* Writes the header, then each tensor's bytes from the spool, in the
 * order of the layout. */
static gboolean
write_safetensors (GOutputStream   *stream,
                   GBytes          *header,
                   GPtrArray       *tensors,
                   SerioToolSpool  *spool,
                   guchar          *buffer,
                   GError         **error)
{
  gsize len;
  const void *data = g_bytes_get_data (header, &len);

  if (!g_output_stream_write_all (stream, data, len, NULL, NULL, error))
    return FALSE;

  for (guint i = 0; i < tensors->len; i++)
    {
      const SerioSafetensorsTensor *tensor = g_ptr_array_index (tensors, i);
      guint64 at = tensor->source, end = tensor->source + (tensor->end - tensor->begin);

      while (at < end)
        {
          gsize want = (gsize) MIN (end - at, CHUNK);

          if (!serio_tool_spool_read (spool, at, buffer, want, error) ||
              !g_output_stream_write_all (stream, buffer, want, NULL, NULL, error))
            return FALSE;
          at += want;
        }
    }

  return TRUE;
}

/*
 * serio_safetensors_from_serio:
 *
 * serio convert IN OUT.safetensors: every array of IN, a tensor named
 * after its base name, of its dtype and shape; the metadata records
 * serio.metadata.KEY become "__metadata__". IN is read once, front to
 * back (standard input too), its values spooled as little-endian bytes
 * (in memory up to 256 KiB, then in a temporary file), since the
 * reference order of the tensors is not theirs; OUT is replaced only once
 * the whole input was read without a problem.
 */
int
serio_safetensors_from_serio (const char *in,
                              const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) spool_error = NULL;
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(SerioToolSpool) spool = NULL;
  g_autoptr(GPtrArray) tensors = g_ptr_array_new_with_free_func (tensor_free);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) seen_keys = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) left_out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) header = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(SerioSave) save = NULL;
  g_autofree guchar *buffer = g_malloc (CHUNK);
  g_autofree char *display = g_filename_display_name (in);
  g_autofree char *problem = NULL;

  reader = serio_tool_open_reader (in, SERIO_TOOL_INPUT_DEFAULT, &error);
  if (reader == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }
  spool = serio_tool_spool_new ("serio-convert-XXXXXX");

  while (serio_reader_next (reader, NULL, &error))
    {
      g_autofree char *base_name = serio_reader_get_base_name (reader);
      SerioDtype dtype = serio_reader_get_dtype (reader);
      guint size = (guint) serio_dtype_get_size (dtype);
      SerioSafetensorsTensor *tensor;

      if (serio_name_is_metadata (base_name))
        {
          if (problem == NULL && g_str_has_prefix (base_name, SERIO_TOOL_METADATA_PREFIX))
            {
              problem = read_metadata (reader, base_name, keys, values, seen_keys, &error);
              if (error != NULL)
                break;
              if (problem != NULL && !spool_array (reader, size, NULL, buffer, &error, &spool_error))
                break;
            }
          else
            {
              if (!g_str_has_prefix (base_name, SERIO_TOOL_METADATA_PREFIX))
                g_ptr_array_add (left_out, shown (serio_reader_get_name (reader)));
              if (!spool_array (reader, size, NULL, buffer, &error, &spool_error))
                break;
            }
          continue;
        }

      if (problem == NULL)
        {
          g_autofree char *name = shown (base_name);

          if (strcmp (base_name, "__metadata__") == 0)
            problem = g_strdup (_("an array is called “__metadata__”, which a .safetensors file "
                                  "reserves for its metadata"));
          else if (g_hash_table_contains (names, base_name))
            problem = g_strdup_printf (_("more than one array is called “%s”, and a .safetensors "
                                         "file holds one tensor per name"),
                                       name);
        }
      if (problem != NULL)
        {
          if (!spool_array (reader, size, NULL, buffer, &error, &spool_error))
            break;
          continue;
        }

      tensor = g_new0 (SerioSafetensorsTensor, 1);
      tensor->name = g_steal_pointer (&base_name);
      tensor->dtype = serio_safetensors_dtype_from_serio (serio_dtype_to_string (dtype));
      g_assert (tensor->dtype != NULL && tensor->dtype->size == size);
      tensor->shape = serio_reader_get_shape (reader, &tensor->n_dims);
      tensor->n_values = serio_reader_get_n_values (reader);
      tensor->source = serio_tool_spool_get_size (spool);
      g_ptr_array_add (tensors, tensor);
      g_hash_table_add (names, tensor->name);

      if (!spool_array (reader, size, spool, buffer, &error, &spool_error))
        break;
    }
  /* The reading may have stopped before the end of the file. */
  serio_tool_input_end_progress (serio_tool_reader_get_input (reader));

  if (error != NULL)
    return serio_tool_report_read_error (in, error);
  if (problem != NULL)
    {
      /* TRANSLATORS: the program, a file name and an error message */
      g_printerr (_("%s: %s: %s"), g_get_prgname (), display, problem);
      g_printerr ("\n");
      return SERIO_TOOL_EXIT_FAILURE;
    }
  if (spool_error != NULL)
    {
      serio_tool_print_error (spool_error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  header = serio_safetensors_layout (tensors, keys, values, &error);
  if (header == NULL)
    {
      serio_tool_print_file_error (out, &error);
      return SERIO_TOOL_EXIT_FAILURE;
    }

  for (guint i = 0; i < left_out->len; i++)
    {
      g_printerr (_("%s: note: the record “%s” is serio metadata, which a .safetensors file "
                    "has no place for: it is left out"),
                  display, (const char *) left_out->pdata[i]);
      g_printerr ("\n");
    }

  file = g_file_new_for_path (out);
  save = _serio_save_begin (file, NULL, &error);
  if (save == NULL ||
      !write_safetensors (_serio_save_get_stream (save), header, tensors, spool, buffer, &error) ||
      !_serio_save_commit (g_steal_pointer (&save), NULL, &error))
    {
      serio_tool_print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}
