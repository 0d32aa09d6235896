/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-npy.c: reading and writing NumPy .npy files of 64-bit floats
 *
 * Copyright 2026 The libserio authors
 *
 * The format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 * The magic "\x93NUMPY", a major and a minor version byte, the header length
 * (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then the
 * header: a Python dict literal with the keys 'descr', 'fortran_order' and
 * 'shape', padded with spaces and ended by a newline. The data follows.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "serio-save.h"
#include "serio-tool.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

/* NumPy allows 64 dimensions (32 before NumPy 2.0). */
#define MAX_DIMS 64

/* The most of a hostile descr shown in a message. */
#define MAX_SHOWN_DESCR 32

typedef struct
{
  const char *p;
  const char *end;
} Scanner;

typedef struct
{
  char     *descr;        /* NULL for a structured (list) dtype */
  gboolean  has_descr;
  gboolean  fortran_order;
  gboolean  has_fortran_order;
  guint64   shape[MAX_DIMS];
  guint     n_dims;
  gboolean  has_shape;
} Header;

static gboolean
malformed (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("the .npy header is malformed"));
  return FALSE;
}

static void
skip_spaces (Scanner *s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

/* Skips spaces, then consumes @c if it is next. */
static gboolean
accept (Scanner *s,
        char     c)
{
  skip_spaces (s);
  if (s->p < s->end && *s->p == c)
    {
      s->p++;
      return TRUE;
    }

  return FALSE;
}

/* A Python string literal without escapes, in single or double quotes. */
static char *
parse_string (Scanner *s)
{
  const char *start;
  char quote;

  skip_spaces (s);
  if (s->p == s->end || (*s->p != '\'' && *s->p != '"'))
    return NULL;
  quote = *s->p++;
  start = s->p;
  while (s->p < s->end && *s->p != quote)
    {
      if (*s->p == '\\' || *s->p == '\n')
        return NULL;
      s->p++;
    }
  if (s->p == s->end)
    return NULL;

  return g_strndup (start, s->p++ - start);
}

static gboolean
accept_word (Scanner    *s,
             const char *word)
{
  gsize len = strlen (word);

  skip_spaces (s);
  if ((gsize) (s->end - s->p) >= len && memcmp (s->p, word, len) == 0)
    {
      s->p += len;
      return TRUE;
    }

  return FALSE;
}

/* A non-negative integer; Python 2 wrote long integers with an L. */
static gboolean
parse_dimension (Scanner *s,
                 guint64 *value)
{
  const char *start, *digits_end;

  skip_spaces (s);
  start = s->p;
  *value = 0;
  while (s->p < s->end && g_ascii_isdigit (*s->p))
    {
      guint digit = *s->p - '0';

      if (*value > (G_MAXUINT64 - digit) / 10)
        return FALSE;
      *value = *value * 10 + digit;
      s->p++;
    }
  digits_end = s->p;
  if (s->p < s->end && *s->p == 'L')
    s->p++;

  return digits_end > start && (digits_end - start == 1 || *start != '0');
}

/* "()", "(3,)", "(2, 3)", "(2, 3,)" */
static gboolean
parse_shape (Scanner *s,
             Header  *header)
{
  if (!accept (s, '('))
    return FALSE;
  if (accept (s, ')'))
    return TRUE;

  for (;;)
    {
      if (header->n_dims == MAX_DIMS || !parse_dimension (s, &header->shape[header->n_dims]))
        return FALSE;
      header->n_dims++;

      if (accept (s, ')'))
        return header->n_dims > 1;    /* "(3)" is an integer, not a tuple */
      if (!accept (s, ','))
        return FALSE;
      if (accept (s, ')'))
        return TRUE;
    }
}

static gboolean
parse_header (const char  *text,
              gsize        len,
              Header      *header,
              GError     **error)
{
  Scanner s = { text, text + len };

  if (!accept (&s, '{'))
    return malformed (error);

  for (gboolean done = accept (&s, '}'); !done;)
    {
      g_autofree char *key = parse_string (&s);

      if (key == NULL || !accept (&s, ':'))
        return malformed (error);

      if (g_str_equal (key, "descr") && !header->has_descr)
        {
          header->has_descr = TRUE;
          if (accept (&s, '['))
            {
              g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                   _("structured data types are not supported: only arrays of "
                                     "64-bit floats (“<f8” or “>f8”) can be converted"));
              return FALSE;
            }
          header->descr = parse_string (&s);
          if (header->descr == NULL)
            return malformed (error);
        }
      else if (g_str_equal (key, "fortran_order") && !header->has_fortran_order)
        {
          header->has_fortran_order = TRUE;
          if (accept_word (&s, "True"))
            header->fortran_order = TRUE;
          else if (!accept_word (&s, "False"))
            return malformed (error);
        }
      else if (g_str_equal (key, "shape") && !header->has_shape)
        {
          header->has_shape = TRUE;
          if (!parse_shape (&s, header))
            return malformed (error);
        }
      else
        {
          /* An unknown or repeated key: NumPy refuses those too. */
          return malformed (error);
        }

      /* Entries are separated by commas, and the last may have one. */
      if (accept (&s, ','))
        done = accept (&s, '}');
      else if (accept (&s, '}'))
        done = TRUE;
      else
        return malformed (error);
    }

  skip_spaces (&s);
  if (s.p != s.end || !header->has_descr || !header->has_fortran_order || !header->has_shape)
    return malformed (error);

  return TRUE;
}

static char *
shape_to_string (const Header *header)
{
  GString *out = g_string_new ("(");

  for (guint k = 0; k < header->n_dims; k++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? ", " : "", header->shape[k]);
  g_string_append (out, header->n_dims == 1 ? ",)" : ")");

  return g_string_free (out, FALSE);
}

/* The number of elements, or FALSE if it does not fit in a gsize. */
static gboolean
count_elements (const Header *header,
                gsize        *n_elements)
{
  gsize n = 1;

  for (guint k = 0; k < header->n_dims; k++)
    {
      if (header->shape[k] == 0)
        {
          *n_elements = 0;
          return TRUE;
        }
    }

  for (guint k = 0; k < header->n_dims; k++)
    {
      if (header->shape[k] > G_MAXSIZE / n)
        return FALSE;
      n *= header->shape[k];
    }

  *n_elements = n;
  return TRUE;
}

static double
load_double (const char *p,
             gboolean    big_endian)
{
  guint64 bits;
  double value;

  memcpy (&bits, p, sizeof bits);
  bits = big_endian ? GUINT64_FROM_BE (bits) : GUINT64_FROM_LE (bits);
  memcpy (&value, &bits, sizeof value);

  return value;
}

/* Copies the elements in C order (the last index varying fastest), from
 * data laid out in Fortran order (the first index varying fastest). */
static void
transpose_fortran (const Header *header,
                   const char   *data,
                   gboolean      big_endian,
                   double       *values,
                   gsize         n_values)
{
  guint64 index[MAX_DIMS] = { 0, };
  guint64 stride[MAX_DIMS];
  guint64 offset = 0;

  for (guint k = 0; k < header->n_dims; k++)
    stride[k] = k == 0 ? 1 : stride[k - 1] * header->shape[k - 1];

  for (gsize i = 0; i < n_values; i++)
    {
      values[i] = load_double (data + offset * sizeof (double), big_endian);

      for (guint k = header->n_dims; k-- > 0;)
        {
          if (++index[k] < header->shape[k])
            {
              offset += stride[k];
              break;
            }
          offset -= (header->shape[k] - 1) * stride[k];
          index[k] = 0;
        }
    }
}

static char *
describe_descr (const char *descr)
{
  GString *out = g_string_new (NULL);

  for (const char *p = descr; *p != '\0'; p++)
    {
      if (out->len == MAX_SHOWN_DESCR)
        {
          g_string_append (out, "…");
          break;
        }
      g_string_append_c (out, g_ascii_isprint (*p) ? *p : '?');
    }

  return g_string_free (out, FALSE);
}

/*
 * serio_tool_npy_read:
 * @bytes: the contents of a .npy file
 * @values: (out): its elements in C order, native-endian
 * @n_values: (out): their number
 * @shape: (out) (nullable): the shape as a Python tuple, unless the array
 *   is a vector
 *
 * Only float64 arrays ("<f8", ">f8") are read. Nothing is allocated before
 * the shape is checked against the size of the data.
 */
gboolean
serio_tool_npy_read (GBytes  *bytes,
                     double **values,
                     gsize   *n_values,
                     char   **shape,
                     GError **error)
{
  gsize size, header_len, data_offset, n;
  const guchar *data = g_bytes_get_data (bytes, &size);
  Header header = { 0, };
  g_autofree char *descr = NULL;
  gboolean big_endian;
  double *out;
  guint major;

  if (size < MAGIC_LEN + 2 || memcmp (data, MAGIC, MAGIC_LEN) != 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("not a NumPy .npy file"));
      return FALSE;
    }

  major = data[6];
  if (major < 1 || major > 3 || data[7] != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("unsupported .npy format version %u.%u"), major, (guint) data[7]);
      return FALSE;
    }

  if (major == 1)
    {
      if (size < 10)
        return malformed (error);
      header_len = data[8] | (gsize) data[9] << 8;
      data_offset = 10;
    }
  else
    {
      if (size < 12)
        return malformed (error);
      header_len = data[8] | (gsize) data[9] << 8 | (gsize) data[10] << 16 | (gsize) data[11] << 24;
      data_offset = 12;
    }

  if (header_len > size - data_offset)
    return malformed (error);

  if (!parse_header ((const char *) data + data_offset, header_len, &header, error))
    {
      g_free (header.descr);
      return FALSE;
    }
  descr = g_steal_pointer (&header.descr);
  data_offset += header_len;

  if (g_str_equal (descr, "<f8"))
    big_endian = FALSE;
  else if (g_str_equal (descr, ">f8"))
    big_endian = TRUE;
  else
    {
      g_autofree char *shown = describe_descr (descr);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("the data type “%s” is not supported: only arrays of 64-bit floats "
                     "(“<f8” or “>f8”) can be converted"), shown);
      return FALSE;
    }

  if (!count_elements (&header, &n) || n > (size - data_offset) / sizeof (double))
    {
      g_autofree char *shape_text = shape_to_string (&header);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("the data is shorter than the shape %s requires"), shape_text);
      return FALSE;
    }
  if (n * sizeof (double) != size - data_offset)
    {
      g_autofree char *shape_text = shape_to_string (&header);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("the data is longer than the shape %s requires"), shape_text);
      return FALSE;
    }

  out = g_try_new (double, MAX (n, 1));
  if (out == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("not enough memory for the array"));
      return FALSE;
    }

  if (header.fortran_order && header.n_dims > 1)
    transpose_fortran (&header, (const char *) data + data_offset, big_endian, out, n);
  else
    {
      for (gsize i = 0; i < n; i++)
        out[i] = load_double ((const char *) data + data_offset + i * sizeof (double), big_endian);
    }

  *values = out;
  *n_values = n;
  *shape = header.n_dims != 1 ? shape_to_string (&header) : NULL;

  return TRUE;
}

static gboolean
write_npy (GOutputStream  *stream,
           const double   *values,
           gsize           n_values,
           GError        **error)
{
  guchar prefix[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 };
  g_autoptr(GString) header = g_string_new (NULL);
  guint64 chunk[8192];

  g_string_printf (header, "{'descr': '<f8', 'fortran_order': False, 'shape': (%"
                   G_GSIZE_FORMAT ",), }", n_values);

  /* Spaces and a newline up to a multiple of 64 bytes, as NumPy writes. */
  while ((sizeof prefix + header->len + 1) % 64 != 0)
    g_string_append_c (header, ' ');
  g_string_append_c (header, '\n');
  prefix[8] = header->len & 0xff;
  prefix[9] = header->len >> 8;

  if (!g_output_stream_write_all (stream, prefix, sizeof prefix, NULL, NULL, error) ||
      !g_output_stream_write_all (stream, header->str, header->len, NULL, NULL, error))
    return FALSE;

  for (gsize done = 0; done < n_values;)
    {
      gsize n = MIN (n_values - done, G_N_ELEMENTS (chunk));

      for (gsize i = 0; i < n; i++)
        {
          guint64 bits;

          memcpy (&bits, &values[done + i], sizeof bits);
          chunk[i] = GUINT64_TO_LE (bits);
        }
      if (!g_output_stream_write_all (stream, chunk, n * sizeof (guint64), NULL, NULL, error))
        return FALSE;
      done += n;
    }

  return TRUE;
}

/*
 * serio_tool_npy_write:
 *
 * Writes a version 1.0 .npy file of one little-endian float64 vector,
 * replacing @file atomically through the library's save helper, as
 * serio_bundle_save_to_file() does: on failure @file is left as it was (or
 * absent, if it did not exist), the mode of an existing file is kept, and
 * errors name @file.
 */
gboolean
serio_tool_npy_write (GFile         *file,
                      const double  *values,
                      gsize          n_values,
                      GError       **error)
{
  g_autoptr(SerioSave) save = _serio_save_begin (file, NULL, error);

  if (save == NULL ||
      !write_npy (_serio_save_get_stream (save), values, n_values, error))
    return FALSE;

  return _serio_save_commit (g_steal_pointer (&save), NULL, error);
}
