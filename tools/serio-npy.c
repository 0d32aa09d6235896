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

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>
#include <zlib.h>

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
                                     "floats, integers or booleans can be converted"));
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

/* The shape as a Python tuple: "()", "(3,)", "(2, 3)". */
char *
serio_tool_shape_to_string (const guint64 *shape,
                            guint          n_dims)
{
  GString *out = g_string_new ("(");

  for (guint k = 0; k < n_dims; k++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? ", " : "", shape[k]);
  g_string_append (out, n_dims == 1 ? ",)" : ")");

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

typedef enum
{
  KIND_FLOAT,
  KIND_INT,
  KIND_UINT,
  KIND_BOOL,
} Kind;

typedef struct
{
  Kind        kind;
  guint       size;
  gboolean    big_endian;
  const char *type_name;
} Dtype;

/* "<f8", ">f4", "<f2", "|i1", "<u4", "|b1", …: the byte order, the kind
 * and the size in bytes. "=" (native) is never written by NumPy and is
 * refused, as are all other kinds and sizes. */
static gboolean
parse_descr (const char *descr,
             Dtype      *dtype)
{
  static const struct
  {
    const char *code;
    Kind        kind;
    guint       size;
    const char *type_name;
  } known[] = {
    { "f8", KIND_FLOAT, 8, "float64" },
    { "f4", KIND_FLOAT, 4, "float32" },
    { "f2", KIND_FLOAT, 2, "float16" },
    { "i8", KIND_INT, 8, "int64" },
    { "i4", KIND_INT, 4, "int32" },
    { "i2", KIND_INT, 2, "int16" },
    { "i1", KIND_INT, 1, "int8" },
    { "u8", KIND_UINT, 8, "uint64" },
    { "u4", KIND_UINT, 4, "uint32" },
    { "u2", KIND_UINT, 2, "uint16" },
    { "u1", KIND_UINT, 1, "uint8" },
    { "b1", KIND_BOOL, 1, "bool" },
  };

  if (strlen (descr) != 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '|'))
    return FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
    {
      if (strcmp (descr + 1, known[i].code) != 0)
        continue;
      /* Only one-byte types have no byte order. */
      if ((descr[0] == '|') != (known[i].size == 1))
        return FALSE;
      *dtype = (Dtype) { known[i].kind, known[i].size, descr[0] == '>', known[i].type_name };
      return TRUE;
    }

  return FALSE;
}

static guint64
load_bits (const guchar *p,
           const Dtype  *dtype)
{
  guint64 bits = 0;

  for (guint i = 0; i < dtype->size; i++)
    {
      guint shift = dtype->big_endian ? 8 * (dtype->size - 1 - i) : 8 * i;

      bits |= (guint64) p[i] << shift;
    }

  return bits;
}

/* Every binary16 value is a double: sign, 5 exponent bits, 10 fraction
 * bits. A NaN keeps its sign and payload, as a float to double cast does. */
static double
half_to_double (guint bits)
{
  guint exponent = (bits >> 10) & 0x1f;
  guint fraction = bits & 0x3ff;
  gboolean negative = (bits & 0x8000) != 0;
  double value;

  if (exponent == 0x1f)
    {
      guint64 wide = (negative ? G_GUINT64_CONSTANT (1) << 63 : 0) |
                     G_GUINT64_CONSTANT (0x7ff) << 52 | (guint64) fraction << 42;

      memcpy (&value, &wide, sizeof value);
      return value;
    }

  if (exponent == 0)
    value = ldexp (fraction, -24);
  else
    value = ldexp (fraction | 0x400, (int) exponent - 25);

  return negative ? -value : value;
}

/* Converts one element to a double, or fails if the double would not be
 * the same number (a 64-bit integer beyond 2^53 that is not a multiple of
 * the spacing of doubles there). */
static gboolean
load_element (const guchar *p,
              const Dtype  *dtype,
              double       *value)
{
  guint64 bits = load_bits (p, dtype);

  switch (dtype->kind)
    {
    case KIND_FLOAT:
      if (dtype->size == 8)
        {
          memcpy (value, &bits, sizeof *value);
        }
      else if (dtype->size == 4)
        {
          guint32 narrow = (guint32) bits;
          float f;

          memcpy (&f, &narrow, sizeof f);
          *value = f;
        }
      else
        {
          *value = half_to_double ((guint) bits);
        }
      return TRUE;

    case KIND_INT:
      {
        guint shift = 64 - 8 * dtype->size;
        gint64 n = (gint64) (bits << shift) >> shift;   /* sign-extended */

        *value = (double) n;
        /* 2^63 is the one double that a gint64 rounds to and cannot hold. */
        return *value < 9223372036854775808.0 && (gint64) *value == n;
      }

    case KIND_UINT:
      *value = (double) bits;
      return *value < 18446744073709551616.0 && (guint64) *value == bits;

    case KIND_BOOL:
      *value = bits != 0 ? 1.0 : 0.0;
      return bits <= 1;

    default:
      g_assert_not_reached ();
    }
}

static gboolean
inexact_element (const guchar *p,
                 const Dtype  *dtype,
                 gsize         index,
                 GError      **error)
{
  guint64 bits = load_bits (p, dtype);
  char text[32];

  if (dtype->kind == KIND_INT)
    g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, (gint64) bits);
  else
    g_snprintf (text, sizeof text, "%" G_GUINT64_FORMAT, bits);

  if (dtype->kind == KIND_BOOL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: a byte value and an index in an array */
                 _("the boolean byte %s at index %lu is neither 0 nor 1"),
                 text, (gulong) index);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: an integer, an index in an array, and the
                  * array's data type such as “int64” */
                 _("the value %s at index %lu has no exact double: a %s beyond 2^53 "
                   "must be a multiple of the spacing of doubles there"),
                 text, (gulong) index, dtype->type_name);
  return FALSE;
}

/* Copies the elements in C order (the last index varying fastest), from
 * data laid out in Fortran order (the first index varying fastest) when
 * @fortran_order is set. */
static gboolean
load_elements (const Header *header,
               const guchar *data,
               const Dtype  *dtype,
               double       *values,
               gsize         n_values,
               GError      **error)
{
  guint64 index[MAX_DIMS] = { 0, };
  guint64 stride[MAX_DIMS];
  guint64 offset = 0;
  gboolean fortran = header->fortran_order && header->n_dims > 1;

  if (!fortran)
    {
      for (gsize i = 0; i < n_values; i++)
        {
          if (!load_element (data + i * dtype->size, dtype, &values[i]))
            return inexact_element (data + i * dtype->size, dtype, i, error);
        }
      return TRUE;
    }

  for (guint k = 0; k < header->n_dims; k++)
    stride[k] = k == 0 ? 1 : stride[k - 1] * header->shape[k - 1];

  for (gsize i = 0; i < n_values; i++)
    {
      const guchar *p = data + offset * dtype->size;

      if (!load_element (p, dtype, &values[i]))
        return inexact_element (p, dtype, i, error);

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

  return TRUE;
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

void
serio_tool_array_clear (SerioToolArray *array)
{
  g_clear_pointer (&array->name, g_free);
  g_clear_pointer (&array->values, g_free);
  g_clear_pointer (&array->shape, g_free);
  array->n_values = 0;
  array->n_dims = 0;
}

void
serio_tool_array_free (SerioToolArray *array)
{
  serio_tool_array_clear (array);
  g_free (array);
}

/*
 * serio_tool_npy_read:
 * @data: the contents of a .npy file
 * @size: their size
 * @array: (out caller-allocates): the array, its elements as doubles in C
 *   order, native-endian, and its shape; its name is left %NULL
 *
 * Reads arrays of floats (float64, float32, float16), integers (8 to 64
 * bits, signed or not) and booleans, in either byte order and in C or
 * Fortran order. Nothing is allocated before the shape is checked against
 * the size of the data.
 */
gboolean
serio_tool_npy_read (const guchar    *data,
                     gsize            size,
                     SerioToolArray  *array,
                     GError         **error)
{
  gsize header_len, data_offset, n;
  Header header = { 0, };
  g_autofree char *descr = NULL;
  g_autofree double *values = NULL;
  Dtype dtype;
  guint major;

  *array = (SerioToolArray) { 0, };

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

  if (!parse_descr (descr, &dtype))
    {
      g_autofree char *shown = describe_descr (descr);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("the data type “%s” is not supported: only floats (float64, float32, "
                     "float16), integers and booleans can be converted"), shown);
      return FALSE;
    }

  if (!count_elements (&header, &n) || n > (size - data_offset) / dtype.size)
    {
      g_autofree char *shape_text = serio_tool_shape_to_string (header.shape, header.n_dims);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("the data is shorter than the shape %s requires"), shape_text);
      return FALSE;
    }
  if (n * dtype.size != size - data_offset)
    {
      g_autofree char *shape_text = serio_tool_shape_to_string (header.shape, header.n_dims);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("the data is longer than the shape %s requires"), shape_text);
      return FALSE;
    }

  values = g_try_new (double, MAX (n, 1));
  if (values == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           _("not enough memory for the array"));
      return FALSE;
    }

  if (!load_elements (&header, data + data_offset, &dtype, values, n, error))
    return FALSE;

  array->values = g_steal_pointer (&values);
  array->n_values = n;
  array->n_dims = header.n_dims;
  array->shape = g_memdup2 (header.shape, MAX (header.n_dims, 1) * sizeof (guint64));
  array->type_name = dtype.type_name;

  return TRUE;
}

/* The prefix and header of a version 1.0 .npy file of little-endian
 * float64 in C order, padded to a multiple of 64 bytes as NumPy does. */
static GByteArray *
npy_header (const SerioToolArray *array)
{
  static const guchar prefix[8] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 };
  g_autofree char *shape = serio_tool_shape_to_string (array->shape, array->n_dims);
  g_autoptr(GString) header = g_string_new (NULL);
  GByteArray *out = g_byte_array_new ();
  guint8 length[2];

  g_string_printf (header, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape);
  while ((sizeof prefix + sizeof length + header->len + 1) % 64 != 0)
    g_string_append_c (header, ' ');
  g_string_append_c (header, '\n');
  length[0] = header->len & 0xff;
  length[1] = header->len >> 8;

  g_byte_array_append (out, prefix, sizeof prefix);
  g_byte_array_append (out, length, sizeof length);
  g_byte_array_append (out, (const guint8 *) header->str, header->len);

  return out;
}

/* Calls @func on the values of @array as little-endian bytes, in pieces. */
static gboolean
foreach_data_chunk (const SerioToolArray  *array,
                    gboolean             (*func) (const void *data,
                                                  gsize       size,
                                                  gpointer    user_data,
                                                  GError    **error),
                    gpointer               user_data,
                    GError               **error)
{
  guint64 chunk[8192];

  for (gsize done = 0; done < array->n_values;)
    {
      gsize n = MIN (array->n_values - done, G_N_ELEMENTS (chunk));

      for (gsize i = 0; i < n; i++)
        {
          guint64 bits;

          memcpy (&bits, &array->values[done + i], sizeof bits);
          chunk[i] = GUINT64_TO_LE (bits);
        }
      if (!func (chunk, n * sizeof (guint64), user_data, error))
        return FALSE;
      done += n;
    }

  return TRUE;
}

typedef struct
{
  GOutputStream *stream;
  guint64        written;
} Writer;

static gboolean
writer_write (const void  *data,
              gsize        size,
              gpointer     user_data,
              GError     **error)
{
  Writer *writer = user_data;

  if (!g_output_stream_write_all (writer->stream, data, size, NULL, NULL, error))
    return FALSE;
  writer->written += size;

  return TRUE;
}

static gboolean
crc_update (const void  *data,
            gsize        size,
            gpointer     user_data,
            GError     **error)
{
  uLong *crc = user_data;

  *crc = crc32 (*crc, data, (uInt) size);
  return TRUE;
}

static gboolean
write_npy (Writer                *writer,
           const SerioToolArray  *array,
           GError               **error)
{
  g_autoptr(GByteArray) header = npy_header (array);

  return writer_write (header->data, header->len, writer, error) &&
         foreach_data_chunk (array, writer_write, writer, error);
}

/* Sizes and offsets of ZIP without its ZIP64 extension. */
#define ZIP_LIMIT G_GUINT64_CONSTANT (0xffffffff)
#define ZIP_MAX_ENTRIES 0xffff

/* 1980-01-01 00:00, the earliest DOS date: archives do not depend on when
 * they were written. */
#define ZIP_DOS_DATE 0x21
#define ZIP_DOS_TIME 0

static void
put16 (GByteArray *out,
       guint       value)
{
  guint8 b[2] = { value & 0xff, (value >> 8) & 0xff };

  g_byte_array_append (out, b, sizeof b);
}

static void
put32 (GByteArray *out,
       guint64     value)
{
  guint8 b[4] = { value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >> 24) & 0xff };

  g_byte_array_append (out, b, sizeof b);
}

static gboolean
is_ascii (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      if ((guchar) *p >= 0x80)
        return FALSE;
    }

  return TRUE;
}

static gboolean
too_large (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       _("the arrays are too large for a .npz file without ZIP64 "
                         "(4 GiB, 65535 arrays), which is not supported"));
  return FALSE;
}

typedef struct
{
  z_stream    z;
  GByteArray *out;
} Deflater;

static gboolean
deflate_chunk (const void  *data,
               gsize        size,
               gpointer     user_data,
               GError     **error)
{
  Deflater *d = user_data;

  d->z.next_in = (Bytef *) data;
  d->z.avail_in = (uInt) size;
  while (d->z.avail_in > 0)
    {
      guint8 buffer[65536];

      d->z.next_out = buffer;
      d->z.avail_out = sizeof buffer;
      if (deflate (&d->z, Z_NO_FLUSH) == Z_STREAM_ERROR)
        return FALSE;
      g_byte_array_append (d->out, buffer, sizeof buffer - d->z.avail_out);
    }

  return TRUE;
}

/* A member's .npy bytes compressed with raw deflate, as
 * numpy.savez_compressed() writes them. */
static GByteArray *
deflate_member (const GByteArray     *header,
                const SerioToolArray *array)
{
  Deflater d = { { 0, }, g_byte_array_new () };
  int ret;

  if (deflateInit2 (&d.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                    Z_DEFAULT_STRATEGY) != Z_OK)
    g_error ("deflateInit2 failed: out of memory");

  deflate_chunk (header->data, header->len, &d, NULL);
  foreach_data_chunk (array, deflate_chunk, &d, NULL);
  do
    {
      guint8 buffer[65536];

      d.z.next_out = buffer;
      d.z.avail_out = sizeof buffer;
      ret = deflate (&d.z, Z_FINISH);
      g_byte_array_append (d.out, buffer, sizeof buffer - d.z.avail_out);
    }
  while (ret == Z_OK);
  deflateEnd (&d.z);

  return d.out;
}

/* A ZIP archive of "NAME.npy" members, stored as numpy.savez() writes it,
 * or compressed with deflate as numpy.savez_compressed() does. Member
 * names are UTF-8, flagged as such when they are not ASCII. */
static gboolean
write_npz (Writer                *writer,
           const SerioToolArray  *arrays,
           guint                  n_arrays,
           gboolean               compress,
           GError               **error)
{
  g_autoptr(GByteArray) central = g_byte_array_new ();
  g_autoptr(GByteArray) end = g_byte_array_new ();
  guint method = compress ? 8 : 0;
  guint64 central_offset;

  if (n_arrays > ZIP_MAX_ENTRIES)
    return too_large (error);

  for (guint i = 0; i < n_arrays; i++)
    {
      g_autoptr(GByteArray) header = npy_header (&arrays[i]);
      g_autoptr(GByteArray) local = g_byte_array_new ();
      g_autoptr(GByteArray) compressed = NULL;
      g_autofree char *member = g_strconcat (arrays[i].name, ".npy", NULL);
      gsize name_len = strlen (member);
      guint flags = is_ascii (member) ? 0 : 1 << 11;
      guint64 offset = writer->written;
      guint64 size, stored_size;
      uLong crc = crc32 (0, NULL, 0);

      if (arrays[i].n_values > (ZIP_LIMIT - header->len) / sizeof (double) ||
          name_len > 0xffff)
        return too_large (error);
      size = header->len + (guint64) arrays[i].n_values * sizeof (double);

      crc = crc32 (crc, header->data, header->len);
      foreach_data_chunk (&arrays[i], crc_update, &crc, NULL);
      if (compress)
        compressed = deflate_member (header, &arrays[i]);
      stored_size = compress ? compressed->len : size;
      if (stored_size > ZIP_LIMIT || offset > ZIP_LIMIT - 30 - name_len - stored_size)
        return too_large (error);

      put32 (local, 0x04034b50);
      put16 (local, 20);                /* version needed: 2.0 */
      put16 (local, flags);
      put16 (local, method);
      put16 (local, ZIP_DOS_TIME);
      put16 (local, ZIP_DOS_DATE);
      put32 (local, crc);
      put32 (local, stored_size);
      put32 (local, size);
      put16 (local, name_len);
      put16 (local, 0);                 /* no extra field */
      g_byte_array_append (local, (const guint8 *) member, name_len);

      put32 (central, 0x02014b50);
      put16 (central, 0x0300 | 20);     /* made by: Unix, 2.0 */
      put16 (central, 20);
      put16 (central, flags);
      put16 (central, method);
      put16 (central, ZIP_DOS_TIME);
      put16 (central, ZIP_DOS_DATE);
      put32 (central, crc);
      put32 (central, stored_size);
      put32 (central, size);
      put16 (central, name_len);
      put16 (central, 0);               /* extra field */
      put16 (central, 0);               /* comment */
      put16 (central, 0);               /* disk */
      put16 (central, 0);               /* internal attributes */
      put32 (central, (guint64) 0100644 << 16);   /* a regular file, rw-r--r-- */
      put32 (central, offset);
      g_byte_array_append (central, (const guint8 *) member, name_len);

      if (!writer_write (local->data, local->len, writer, error))
        return FALSE;
      if (compress)
        {
          if (!writer_write (compressed->data, compressed->len, writer, error))
            return FALSE;
        }
      else if (!writer_write (header->data, header->len, writer, error) ||
               !foreach_data_chunk (&arrays[i], writer_write, writer, error))
        {
          return FALSE;
        }
    }

  central_offset = writer->written;
  if (central_offset > ZIP_LIMIT - central->len)
    return too_large (error);

  put32 (end, 0x06054b50);
  put16 (end, 0);                       /* this disk */
  put16 (end, 0);                       /* the disk of the central directory */
  put16 (end, n_arrays);
  put16 (end, n_arrays);
  put32 (end, central->len);
  put32 (end, central_offset);
  put16 (end, 0);                       /* comment */

  return writer_write (central->data, central->len, writer, error) &&
         writer_write (end->data, end->len, writer, error);
}

static gboolean
write_output (GOutputStream         *stream,
              const SerioToolArray  *arrays,
              guint                  n_arrays,
              SerioToolNumpyFormat   format,
              GError               **error)
{
  Writer writer = { stream, 0 };

  if (format != SERIO_TOOL_NPY)
    return write_npz (&writer, arrays, n_arrays, format == SERIO_TOOL_NPZ_COMPRESSED, error);

  g_return_val_if_fail (n_arrays == 1, FALSE);
  return write_npy (&writer, &arrays[0], error);
}

/*
 * serio_tool_npy_write:
 * @arrays: the arrays to write; in a .npz archive, their names are those
 *   of the members, less ".npy"
 * @format: a .npy file of the one array, or a .npz archive of all
 *   @arrays, stored or compressed
 *
 * Writes a version 1.0 .npy file of one little-endian float64 array of its
 * shape, or a .npz archive of such files, replacing @file atomically
 * through the library's save helper, as serio_bundle_save_to_file() does:
 * on failure @file is left as it was (or absent, if it did not exist), the
 * mode of an existing file is kept, and errors name @file.
 */
gboolean
serio_tool_npy_write (GFile                 *file,
                      const SerioToolArray  *arrays,
                      guint                  n_arrays,
                      SerioToolNumpyFormat   format,
                      GError               **error)
{
  g_autoptr(SerioSave) save = _serio_save_begin (file, NULL, error);

  if (save == NULL ||
      !write_output (_serio_save_get_stream (save), arrays, n_arrays, format, error))
    return FALSE;

  return _serio_save_commit (g_steal_pointer (&save), NULL, error);
}
