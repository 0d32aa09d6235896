/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-npy.c: reading and writing NumPy .npy files of the types that
 * serio arrays have, as streams
 *
 * Copyright 2026 The libserio authors
 *
 * The format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 * The magic "\x93NUMPY", a major and a minor version byte, the header length
 * (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then the
 * header: a Python dict literal with the keys 'descr', 'fortran_order' and
 * 'shape', padded with spaces and ended by a newline. The data follows.
 *
 * The reader takes the header, checks it against the size of the data,
 * then hands the data in pieces to a sink (serio-numpy.h), as elements of
 * the serio type of the same name in the host's byte order.
 * Fortran-order data is put in C order through a block of bounded size.
 * The writer writes each array as its values come, to a .npy file or to a
 * member of a .npz archive (serio-npz.c reads and writes the archives).
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-numpy.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

#define MAX_DIMS SERIO_NUMPY_MAX_DIMS

/* The longest header read: NumPy's own are a few hundred bytes. */
#define MAX_HEADER_LEN (1024 * 1024)

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


/* Whether NumPy can make an array of this shape, with elements of
 * @item_size bytes: every dimension is a (64-bit) npy_intp, and so is the
 * size in bytes of the elements, the dimensions of size 0 left out
 * (numpy.empty((0, 2**63 - 1)) is "too big"). A shape that NumPy refuses
 * would make names that nothing else reads. */
static gboolean
numpy_allows (const Header *header,
              guint         item_size)
{
  guint64 n_bytes = item_size;

  for (guint k = 0; k < header->n_dims; k++)
    {
      if (header->shape[k] > G_MAXINT64)
        return FALSE;
      if (header->shape[k] == 0)
        continue;
      if (header->shape[k] > G_MAXINT64 / n_bytes)
        return FALSE;
      n_bytes *= header->shape[k];
    }

  return TRUE;
}

/* The number of elements, or FALSE if it does not fit in 64 bits. */
static gboolean
count_elements (const Header *header,
                guint64      *n_elements)
{
  guint64 n = 1;

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
      if (header->shape[k] > G_MAXUINT64 / n)
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
  SerioDtype  serio_dtype;
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
    SerioDtype  serio_dtype;
  } known[] = {
    { "f8", KIND_FLOAT, 8, SERIO_DTYPE_FLOAT64 },
    { "f4", KIND_FLOAT, 4, SERIO_DTYPE_FLOAT32 },
    { "f2", KIND_FLOAT, 2, SERIO_DTYPE_FLOAT16 },
    { "i8", KIND_INT, 8, SERIO_DTYPE_INT64 },
    { "i4", KIND_INT, 4, SERIO_DTYPE_INT32 },
    { "i2", KIND_INT, 2, SERIO_DTYPE_INT16 },
    { "i1", KIND_INT, 1, SERIO_DTYPE_INT8 },
    { "u8", KIND_UINT, 8, SERIO_DTYPE_UINT64 },
    { "u4", KIND_UINT, 4, SERIO_DTYPE_UINT32 },
    { "u2", KIND_UINT, 2, SERIO_DTYPE_UINT16 },
    { "u1", KIND_UINT, 1, SERIO_DTYPE_UINT8 },
    { "b1", KIND_BOOL, 1, SERIO_DTYPE_BOOL },
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
      *dtype = (Dtype) { known[i].kind, known[i].size, descr[0] == '>',
                         serio_dtype_to_string (known[i].serio_dtype), known[i].serio_dtype };
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

/* Whether a double holds the integer of this magnitude exactly: its odd
 * part has at most 53 bits. Decided on the integer, since converting to
 * double and back can keep excess precision (x87 on i686) and find every
 * integer exact. */
static inline gboolean
magnitude_is_double (guint64 magnitude)
{
  return magnitude == 0 ||
         (magnitude >> __builtin_ctzll (magnitude)) < (G_GUINT64_CONSTANT (1) << 53);
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
        return magnitude_is_double (n < 0 ? -(guint64) n : (guint64) n);
      }

    case KIND_UINT:
      *value = (double) bits;
      return magnitude_is_double (bits);

    case KIND_BOOL:
      *value = bits != 0 ? 1.0 : 0.0;
      return bits <= 1;

    default:
      g_assert_not_reached ();
    }
}

/* An element that no double holds; @index is its index in C order. */
static gboolean
inexact_element (const guchar *p,
                 const Dtype  *dtype,
                 guint64       index,
                 GError      **error)
{
  guint64 bits = load_bits (p, dtype);
  /* Formatted here: an unsigned long has 32 bits on i686. */
  g_autofree char *at = g_strdup_printf ("%" G_GUINT64_FORMAT, index);
  char text[32];

  if (dtype->kind == KIND_INT)
    g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, (gint64) bits);
  else
    g_snprintf (text, sizeof text, "%" G_GUINT64_FORMAT, bits);

  if (dtype->kind == KIND_BOOL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: a byte value and an index in an array */
                 _("the boolean byte %s at index %s is neither 0 nor 1"),
                 text, at);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: an integer, an index in an array, and the
                  * array's data type such as “int64” */
                 _("the value %s at index %s has no exact double: a %s beyond 2^53 "
                   "must be a multiple of the spacing of doubles there"),
                 text, at, dtype->type_name);
  return FALSE;
}

/* Checks @n_values elements at @raw and copies them to @out in the
 * host's byte order, as typed bytes of their serio type; @first_index is
 * the C order index of the first, for the message about one that a serio
 * array cannot hold (a 64-bit integer that no double holds, a boolean
 * byte other than 0 and 1: every float and every narrower integer is
 * exactly a double). */
static gboolean
convert_elements (const guchar *raw,
                  const Dtype  *dtype,
                  guchar       *out,
                  gsize         n_values,
                  guint64       first_index,
                  GError      **error)
{
  gboolean swap = dtype->size > 1 && dtype->big_endian != (G_BYTE_ORDER == G_BIG_ENDIAN);

  if (dtype->kind == KIND_BOOL || (dtype->kind != KIND_FLOAT && dtype->size == 8))
    {
      for (gsize i = 0; i < n_values; i++)
        {
          const guchar *p = raw + i * dtype->size;
          double value;

          if (!load_element (p, dtype, &value))
            return inexact_element (p, dtype, first_index + i, error);
        }
    }

  if (!swap)
    {
      memcpy (out, raw, n_values * dtype->size);
      return TRUE;
    }

  for (gsize i = 0; i < n_values; i++)
    {
      for (guint k = 0; k < dtype->size; k++)
        out[i * dtype->size + k] = raw[i * dtype->size + dtype->size - 1 - k];
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

static gboolean
data_shorter (const Header  *header,
              GError       **error)
{
  g_autofree char *shape_text = serio_tool_shape_to_string (header->shape, header->n_dims);

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               _("the data is shorter than the shape %s requires"), shape_text);
  return FALSE;
}

static gboolean
data_longer (const Header  *header,
             GError       **error)
{
  g_autofree char *shape_text = serio_tool_shape_to_string (header->shape, header->n_dims);

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               _("the data is longer than the shape %s requires"), shape_text);
  return FALSE;
}

/* Reads @size bytes, fewer only at the end of the source. */
static gboolean
read_fully (SerioNumpySource  *source,
            void              *buffer,
            gsize              size,
            gsize             *n_read,
            GError           **error)
{
  gsize done = 0;

  while (done < size)
    {
      gssize n = source->read (source, (guchar *) buffer + done, size - done, error);

      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += n;
    }

  *n_read = done;
  return TRUE;
}

/* What a .npy file is being read into: the sink, and the conversion of
 * its elements. */
typedef struct
{
  SerioNumpySource      *source;
  const SerioNumpySink  *sink;
  gpointer               user_data;
  const Header          *header;
  Dtype                  dtype;
  guint64                n_values;
  guint64                data_offset;     /* in the source */
  guint64                emitted;         /* values handed to the sink */
  guchar                *elements;        /* SERIO_NUMPY_CHUNK_VALUES, in host order */
} Npy;

/* Converts @n_values elements in C order at @raw and hands them to the
 * sink, in pieces. */
static gboolean
emit_elements (Npy           *npy,
               const guchar  *raw,
               guint64        n_values,
               GError       **error)
{
  while (n_values > 0)
    {
      gsize n = (gsize) MIN (n_values, SERIO_NUMPY_CHUNK_VALUES);

      if (!convert_elements (raw, &npy->dtype, npy->elements, n, npy->emitted, error))
        return FALSE;
      if (!npy->sink->values (npy->user_data, npy->elements, n, error))
        return FALSE;
      npy->emitted += n;
      raw += n * npy->dtype.size;
      n_values -= n;
    }

  return TRUE;
}

static gboolean
read_c_order (Npy     *npy,
              GError **error)
{
  gsize chunk_size = SERIO_NUMPY_CHUNK_VALUES * npy->dtype.size;
  g_autofree guchar *raw = g_malloc (chunk_size);

  while (npy->emitted < npy->n_values)
    {
      gsize n = (gsize) MIN (npy->n_values - npy->emitted, SERIO_NUMPY_CHUNK_VALUES);
      gsize got;

      if (!read_fully (npy->source, raw, n * npy->dtype.size, &got, error))
        return FALSE;
      if (got < n * npy->dtype.size)
        return data_shorter (npy->header, error);
      if (!emit_elements (npy, raw, n, error))
        return FALSE;
    }

  return TRUE;
}

/* Fortran-order data is transposed to C order through a bounded block:
 * data of up to FORTRAN_IN_MEMORY bytes is read whole, larger data is read
 * where it lies, by offset (from a .npy file, or from a temporary file
 * that a compressed .npz member is first inflated into). */
#define FORTRAN_IN_MEMORY (8 * 1024 * 1024)
#define FORTRAN_BLOCK_VALUES (1024 * 1024)
#define WINDOW_SIZE (256 * 1024)

typedef struct _Fetcher Fetcher;

struct _Fetcher
{
  /* The data in memory, or read by offset through a window */
  const guchar  *data;
  gboolean     (*read_at) (Fetcher  *fetcher,
                           guint64   offset,
                           void     *buffer,
                           gsize     size,
                           gsize    *n_read,
                           GError  **error);
  SerioNumpySource *source;
  guint64        base;            /* of the data, for read_at */
  GFileIOStream *spill;
  guint64        size;            /* of the data */
  const Header  *header;
  guchar        *window;
  guint64        window_offset;
  gsize          window_len;
};

static gboolean
fetcher_read_source (Fetcher  *fetcher,
                     guint64   offset,
                     void     *buffer,
                     gsize     size,
                     gsize    *n_read,
                     GError  **error)
{
  return fetcher->source->read_at (fetcher->source, fetcher->base + offset, buffer, size,
                                   n_read, error);
}

static gboolean
fetcher_read_spill (Fetcher  *fetcher,
                    guint64   offset,
                    void     *buffer,
                    gsize     size,
                    gsize    *n_read,
                    GError  **error)
{
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (fetcher->spill));

  if (!g_seekable_seek (G_SEEKABLE (fetcher->spill), (goffset) offset, G_SEEK_SET, NULL, error) ||
      !g_input_stream_read_all (in, buffer, size, n_read, NULL, error))
    {
      fetcher->source->io_failed = TRUE;
      return FALSE;
    }

  return TRUE;
}

/* Copies @size bytes of the data at @offset to @dest. With @ahead, the
 * bytes that follow are likely wanted next: a window of them is read. */
static gboolean
fetch (Fetcher   *fetcher,
       guint64    offset,
       void      *dest,
       gsize      size,
       gboolean   ahead,
       GError   **error)
{
  gsize got;

  if (fetcher->data != NULL)
    {
      memcpy (dest, fetcher->data + offset, size);
      return TRUE;
    }

  if (offset >= fetcher->window_offset &&
      offset - fetcher->window_offset <= fetcher->window_len &&
      size <= fetcher->window_len - (offset - fetcher->window_offset))
    {
      memcpy (dest, fetcher->window + (offset - fetcher->window_offset), size);
      return TRUE;
    }

  if (!ahead || size >= WINDOW_SIZE)
    {
      if (!fetcher->read_at (fetcher, offset, dest, size, &got, error))
        return FALSE;
      if (got < size)
        return data_shorter (fetcher->header, error);
      return TRUE;
    }

  fetcher->window_offset = offset;
  fetcher->window_len = 0;
  if (!fetcher->read_at (fetcher, offset, fetcher->window,
                         (gsize) MIN (WINDOW_SIZE, fetcher->size - offset), &got, error))
    return FALSE;
  fetcher->window_len = got;
  if (got < size)
    return data_shorter (fetcher->header, error);
  memcpy (dest, fetcher->window, size);

  return TRUE;
}

/* Copies the data of a compressed member (which cannot seek) to an
 * unlinked temporary file, which can. */
static gboolean
spill (Npy      *npy,
       Fetcher  *fetcher,
       GError  **error)
{
  g_autoptr(GFile) file = NULL;
  g_autofree guchar *buffer = g_malloc (WINDOW_SIZE);
  GOutputStream *out;

  file = g_file_new_tmp ("serio-convert-XXXXXX", &fetcher->spill, error);
  if (file == NULL)
    {
      npy->source->io_failed = TRUE;
      return FALSE;
    }
  g_file_delete (file, NULL, NULL);

  out = g_io_stream_get_output_stream (G_IO_STREAM (fetcher->spill));
  for (guint64 done = 0; done < fetcher->size;)
    {
      gsize n = (gsize) MIN (fetcher->size - done, WINDOW_SIZE);
      gsize got;

      if (!read_fully (npy->source, buffer, n, &got, error))
        return FALSE;
      if (got < n)
        return data_shorter (npy->header, error);
      if (!g_output_stream_write_all (out, buffer, n, NULL, NULL, error))
        {
          npy->source->io_failed = TRUE;
          return FALSE;
        }
      done += n;
    }

  fetcher->read_at = fetcher_read_spill;
  return TRUE;
}

/*
 * The data holds element (i0, …, ik-1) at the offset Σ it·St (Fortran
 * order: St the product of the dimensions before t), the output wants it
 * at Σ it·Ct (C order: Ct the product of those after t). The output is
 * made in blocks that are contiguous in C order: with j the first
 * dimension such that Cj elements fit in a block, a block has i0 … ij-1
 * fixed, ij in a range [a, a + b) and every value of the indices after j.
 * Its elements are fetched in Fortran order, that is at increasing
 * offsets, and put in place in C order.
 */
static gboolean
read_fortran_order (Npy     *npy,
                    GError **error)
{
  const guint64 *d = npy->header->shape;
  guint k = npy->header->n_dims;
  gsize elem = npy->dtype.size;
  guint64 S[SERIO_NUMPY_MAX_DIMS], C[SERIO_NUMPY_MAX_DIMS];
  guint64 prefix[SERIO_NUMPY_MAX_DIMS] = { 0, };
  guint64 prefix_offset = 0;
  guint64 q[SERIO_NUMPY_MAX_DIMS];
  g_autofree guchar *raw = NULL;
  g_autofree guchar *block = NULL;
  g_autofree guchar *run = NULL;
  g_autofree guchar *window = NULL;
  Fetcher fetcher = { 0, };
  guint64 b_max;
  gboolean ahead, ok = FALSE;
  guint j;

  fetcher.source = npy->source;
  fetcher.header = npy->header;
  fetcher.size = npy->n_values * elem;

  if (fetcher.size <= FORTRAN_IN_MEMORY)
    {
      gsize got;

      raw = g_malloc (MAX (fetcher.size, 1));
      if (!read_fully (npy->source, raw, (gsize) fetcher.size, &got, error))
        return FALSE;
      if (got < fetcher.size)
        return data_shorter (npy->header, error);
      fetcher.data = raw;
    }
  else
    {
      window = g_malloc (WINDOW_SIZE);
      fetcher.window = window;
      /* Without a known size, the data is read through to check its end. */
      if (npy->source->read_at != NULL && npy->source->size >= 0)
        {
          fetcher.read_at = fetcher_read_source;
          fetcher.base = npy->data_offset;
        }
      else if (!spill (npy, &fetcher, error))
        {
          g_clear_object (&fetcher.spill);
          return FALSE;
        }
    }

  /* The shape has no 0 dimension (there are values), and its product
   * does not overflow. */
  for (guint t = 0; t < k; t++)
    S[t] = t == 0 ? 1 : S[t - 1] * d[t - 1];
  for (guint t = k; t-- > 0;)
    C[t] = t == k - 1 ? 1 : C[t + 1] * d[t + 1];
  for (j = 0; C[j] > FORTRAN_BLOCK_VALUES; j++)
    ;
  b_max = MIN (FORTRAN_BLOCK_VALUES / C[j], d[j]);
  block = g_malloc ((gsize) (b_max * C[j]) * elem);
  if (j == 0)
    run = g_malloc ((gsize) b_max * elem);

  /* Successive fetches are this far apart: a window is worth reading
   * when they are close. */
  if (j == 0)
    ahead = k < 2 || S[1] * elem <= WINDOW_SIZE / 4;
  else
    ahead = S[j] * elem <= WINDOW_SIZE / 4;

  for (;;)
    {
      gboolean advanced = FALSE;

      for (guint64 a = 0; a < d[j]; a += b_max)
        {
          guint64 b = MIN (b_max, d[j] - a);
          guint64 f_offset = 0, c_offset = 0;

          memset (q, 0, sizeof q);
          for (guint64 m = 0; m < C[j]; m++)
            {
              guint64 start = prefix_offset + a * S[j] + f_offset;

              if (j == 0)
                {
                  if (!fetch (&fetcher, start * elem, run, (gsize) b * elem, ahead, error))
                    goto out;
                  for (guint64 r = 0; r < b; r++)
                    memcpy (block + (gsize) (r * C[j] + c_offset) * elem, run + (gsize) r * elem,
                            elem);
                }
              else
                {
                  for (guint64 r = 0; r < b; r++)
                    if (!fetch (&fetcher, (start + r * S[j]) * elem,
                                block + (gsize) (r * C[j] + c_offset) * elem, elem, ahead, error))
                      goto out;
                }

              /* The next indices after j, in Fortran order. */
              for (guint t = j + 1; t < k; t++)
                {
                  if (++q[t] < d[t])
                    {
                      f_offset += S[t];
                      c_offset += C[t];
                      break;
                    }
                  f_offset -= (d[t] - 1) * S[t];
                  c_offset -= (d[t] - 1) * C[t];
                  q[t] = 0;
                }
            }

          if (!emit_elements (npy, block, b * C[j], error))
            goto out;
        }

      /* The next indices before j, in C order. */
      for (guint t = j; t-- > 0;)
        {
          if (++prefix[t] < d[t])
            {
              prefix_offset += S[t];
              advanced = TRUE;
              break;
            }
          prefix_offset -= (d[t] - 1) * S[t];
          prefix[t] = 0;
        }
      if (!advanced)
        break;
    }
  ok = TRUE;

out:
  g_clear_object (&fetcher.spill);
  return ok;
}

/*
 * serio_numpy_read_npy:
 * @source: the bytes of a .npy file
 * @name: (nullable): the name of the array, for the sink
 * @sink: what the array goes to
 *
 * Reads arrays of floats (float64, float32, float16), integers (8 to 64
 * bits, signed or not) and booleans, in either byte order and in C or
 * Fortran order, and hands their values to @sink in C order as elements
 * of their serio type (SerioNumpyHeader:dtype) in the host's byte order,
 * in pieces. The header is checked against the size of the data, when it
 * is known, before the sink sees it; nothing is allocated from a size
 * that the file gives.
 *
 * Returns: %TRUE when the whole array was read; %FALSE with @error set
 *   when the data is not valid or cannot be read (see
 *   SerioNumpySource:io_failed), or when the sink stopped
 */
gboolean
serio_numpy_read_npy (SerioNumpySource      *source,
                      const char            *name,
                      const SerioNumpySink  *sink,
                      gpointer               user_data,
                      GError               **error)
{
  guchar prefix[12];
  g_autofree char *text = NULL;
  g_autofree char *descr = NULL;
  g_autofree guchar *elements = NULL;
  Header header = { 0, };
  SerioNumpyHeader info = { 0, };
  Npy npy = { 0, };
  guint64 header_len, data_offset, n;
  gsize got, length_size;
  guint major;

  if (!read_fully (source, prefix, MAGIC_LEN + 2, &got, error))
    return FALSE;
  if (got < MAGIC_LEN + 2 || memcmp (prefix, MAGIC, MAGIC_LEN) != 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("not a NumPy .npy file"));
      return FALSE;
    }

  major = prefix[6];
  if (major < 1 || major > 3 || prefix[7] != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("unsupported .npy format version %u.%u"), major, (guint) prefix[7]);
      return FALSE;
    }

  length_size = major == 1 ? 2 : 4;
  if (!read_fully (source, prefix + 8, length_size, &got, error))
    return FALSE;
  if (got < length_size)
    return malformed (error);
  header_len = prefix[8] | (guint64) prefix[9] << 8;
  if (major > 1)
    header_len |= (guint64) prefix[10] << 16 | (guint64) prefix[11] << 24;
  data_offset = 8 + length_size;

  /* A header is a few hundred bytes; NumPy itself refuses those above
   * 10000 bytes unless told otherwise. */
  if ((source->size >= 0 && header_len > (guint64) source->size - MIN ((guint64) source->size, data_offset)) ||
      header_len > MAX_HEADER_LEN)
    return malformed (error);

  text = g_malloc (MAX (header_len, 1));
  if (!read_fully (source, text, (gsize) header_len, &got, error))
    return FALSE;
  if (got < header_len)
    return malformed (error);
  data_offset += header_len;

  if (!parse_header (text, (gsize) header_len, &header, error))
    {
      g_free (header.descr);
      return FALSE;
    }
  descr = g_steal_pointer (&header.descr);

  if (!parse_descr (descr, &npy.dtype))
    {
      g_autofree char *shown = describe_descr (descr);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("the data type “%s” is not supported: only floats (float64, float32, "
                     "float16), integers and booleans can be converted"), shown);
      return FALSE;
    }

  if (!numpy_allows (&header, npy.dtype.size))
    {
      g_autofree char *shape_text = serio_tool_shape_to_string (header.shape, header.n_dims);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a shape, as “(2, 3)” */
                   _("the shape %s is larger than NumPy allows (a dimension or the size in bytes "
                     "above 2^63 − 1)"), shape_text);
      return FALSE;
    }
  if (!count_elements (&header, &n) || n > G_MAXUINT64 / npy.dtype.size)
    return data_shorter (&header, error);
  if (source->size >= 0)
    {
      guint64 data_size = (guint64) source->size - MIN ((guint64) source->size, data_offset);

      if (n > data_size / npy.dtype.size)
        return data_shorter (&header, error);
      if (n * npy.dtype.size != data_size)
        return data_longer (&header, error);
    }

  info.name = name;
  memcpy (info.shape, header.shape, sizeof info.shape);
  info.n_dims = header.n_dims;
  info.n_values = n;
  info.type_name = npy.dtype.type_name;
  info.dtype = npy.dtype.serio_dtype;
  if (!sink->begin (user_data, &info, error))
    return FALSE;

  elements = g_malloc (SERIO_NUMPY_CHUNK_VALUES * (gsize) npy.dtype.size);
  npy.source = source;
  npy.sink = sink;
  npy.user_data = user_data;
  npy.header = &header;
  npy.n_values = n;
  npy.data_offset = data_offset;
  npy.elements = elements;

  if (header.fortran_order && header.n_dims > 1 && n > 0)
    {
      if (!read_fortran_order (&npy, error))
        return FALSE;
    }
  else if (!read_c_order (&npy, error))
    {
      return FALSE;
    }

  if (source->size < 0)
    {
      guchar extra;

      if (!read_fully (source, &extra, 1, &got, error))
        return FALSE;
      if (got > 0)
        return data_longer (&header, error);
    }

  return sink->end (user_data, error);
}

static gssize
file_source_read (SerioNumpySource  *source,
                  void              *buffer,
                  gsize              size,
                  GError           **error)
{
  SerioNumpyFileSource *file_source = (SerioNumpyFileSource *) source;
  gssize n = g_input_stream_read (file_source->stream, buffer, MIN (size, G_MAXSSIZE),
                                  NULL, error);

  if (n < 0)
    source->io_failed = TRUE;
  return n;
}

static gboolean
file_source_read_at (SerioNumpySource  *source,
                     guint64            offset,
                     void              *buffer,
                     gsize              size,
                     gsize             *n_read,
                     GError           **error)
{
  SerioNumpyFileSource *file_source = (SerioNumpyFileSource *) source;
  GSeekable *seekable = G_SEEKABLE (file_source->stream);
  goffset position = g_seekable_tell (seekable);

  *n_read = 0;
  if (offset > G_MAXINT64)
    return TRUE;
  if (!g_seekable_seek (seekable, (goffset) offset, G_SEEK_SET, NULL, error) ||
      !g_input_stream_read_all (file_source->stream, buffer, size, n_read, NULL, error) ||
      !g_seekable_seek (seekable, position, G_SEEK_SET, NULL, error))
    {
      source->io_failed = TRUE;
      return FALSE;
    }

  return TRUE;
}

/* A source on @stream, a whole .npy file of @size bytes (-1 if unknown);
 * it reads by offset when the stream can seek. */
void
serio_numpy_file_source_init (SerioNumpyFileSource *file_source,
                              GInputStream         *stream,
                              gint64                size)
{
  *file_source = (SerioNumpyFileSource) { { 0, }, stream };
  file_source->source.read = file_source_read;
  if (G_IS_SEEKABLE (stream) && g_seekable_can_seek (G_SEEKABLE (stream)))
    file_source->source.read_at = file_source_read_at;
  file_source->source.size = size;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

/* The NumPy type of a serio type, little-endian: every type but bfloat16,
 * which NumPy does not have. */
static const char *
descr_of (SerioDtype dtype)
{
  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64: return "<f8";
    case SERIO_DTYPE_FLOAT32: return "<f4";
    case SERIO_DTYPE_FLOAT16: return "<f2";
    case SERIO_DTYPE_INT8: return "|i1";
    case SERIO_DTYPE_INT16: return "<i2";
    case SERIO_DTYPE_INT32: return "<i4";
    case SERIO_DTYPE_INT64: return "<i8";
    case SERIO_DTYPE_UINT8: return "|u1";
    case SERIO_DTYPE_UINT16: return "<u2";
    case SERIO_DTYPE_UINT32: return "<u4";
    case SERIO_DTYPE_UINT64: return "<u8";
    case SERIO_DTYPE_BOOL: return "|b1";
    case SERIO_DTYPE_BFLOAT16:
    default:
      return NULL;
    }
}

/* The prefix and header of a version 1.0 .npy file of @descr in C order,
 * padded to a multiple of 64 bytes as NumPy does. */
static GByteArray *
npy_header (const char    *descr,
            const guint64 *shape,
            guint          n_dims)
{
  static const guchar prefix[8] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 };
  g_autofree char *shape_text = serio_tool_shape_to_string (shape, n_dims);
  g_autoptr(GString) header = g_string_new (NULL);
  GByteArray *out = g_byte_array_new ();
  guint8 length[2];

  g_string_printf (header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
                   shape_text);
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

/* An array too large for any file. */
gboolean
serio_numpy_too_large (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       /* TRANSLATORS: an array declares more values than
                        * any file can hold */
                       _("the array is too large for a .npy file"));
  return FALSE;
}

/* The .npy bytes go to the stream, or into the archive's current member
 * (serio-npz.c). */
struct _SerioNumpyWriter
{
  GOutputStream       *stream;
  SerioNumpyZipWriter *zip;            /* a .npz archive's, or NULL */
  guint64              n_arrays;
  guint64             *chunk;          /* SERIO_NUMPY_CHUNK_VALUES, little-endian */
  gsize                item_size;      /* of the array being written */
  gboolean             in_array;
  guint64              n_left;
};

/*
 * serio_numpy_writer_new:
 * @stream: where the file goes
 * @format: a .npy file of one array, or a .npz archive, stored or
 *   compressed with deflate
 *
 * Writes a version 1.0 .npy file of one little-endian array of its type
 * and shape, or a .npz archive of such files (serio-npz.c), as the values
 * come: each array between serio_numpy_writer_begin_array() and
 * serio_numpy_writer_end_array(), the file completed by
 * serio_numpy_writer_finish(). The output does not depend on when it was
 * written.
 */
SerioNumpyWriter *
serio_numpy_writer_new (GOutputStream    *stream,
                        SerioNumpyFormat  format)
{
  SerioNumpyWriter *writer = g_new0 (SerioNumpyWriter, 1);

  writer->stream = g_object_ref (stream);
  if (format != SERIO_NUMPY_NPY)
    writer->zip = serio_numpy_zip_writer_new (stream, format == SERIO_NUMPY_NPZ_COMPRESSED);
  writer->chunk = g_new (guint64, SERIO_NUMPY_CHUNK_VALUES);

  return writer;
}

void
serio_numpy_writer_free (SerioNumpyWriter *writer)
{
  g_clear_pointer (&writer->zip, serio_numpy_zip_writer_free);
  g_object_unref (writer->stream);
  g_free (writer->chunk);
  g_free (writer);
}

/* The bytes of the current array's .npy file. */
static gboolean
write_npy_bytes (SerioNumpyWriter  *writer,
                 const void        *data,
                 gsize              size,
                 GError           **error)
{
  if (writer->zip != NULL)
    return serio_numpy_zip_writer_write (writer->zip, data, size, error);

  return g_output_stream_write_all (writer->stream, data, size, NULL, NULL, error);
}

/*
 * serio_numpy_writer_begin_array:
 * @name: the member's name less ".npy", for a .npz archive
 * @dtype: the type of the elements, any but bfloat16
 * @shape: (array length=n_dims): the shape
 * @n_values: the product of the dimensions: the values to add
 */
gboolean
serio_numpy_writer_begin_array (SerioNumpyWriter  *writer,
                                const char        *name,
                                SerioDtype         dtype,
                                const guint64     *shape,
                                guint              n_dims,
                                guint64            n_values,
                                GError           **error)
{
  g_autoptr(GByteArray) header = NULL;

  g_return_val_if_fail (!writer->in_array, FALSE);
  g_return_val_if_fail (writer->zip != NULL || writer->n_arrays == 0, FALSE);
  g_return_val_if_fail (descr_of (dtype) != NULL, FALSE);

  header = npy_header (descr_of (dtype), shape, n_dims);
  writer->item_size = serio_dtype_get_size (dtype);
  if (n_values > (G_MAXUINT64 - header->len) / writer->item_size)
    return serio_numpy_too_large (error);
  writer->n_left = n_values;

  if (writer->zip != NULL &&
      !serio_numpy_zip_writer_begin_member (writer->zip, name,
                                            header->len + n_values * writer->item_size, error))
    return FALSE;
  writer->in_array = TRUE;

  return write_npy_bytes (writer, header->data, header->len, error);
}

/* The next @n_values elements of the array, in the host's byte order,
 * at most those left. */
gboolean
serio_numpy_writer_add_elements (SerioNumpyWriter  *writer,
                                 const void        *elements,
                                 gsize              n_values,
                                 GError           **error)
{
  gsize size = writer->item_size;

  g_return_val_if_fail (writer->in_array, FALSE);
  g_return_val_if_fail (n_values <= writer->n_left, FALSE);

  for (gsize done = 0; done < n_values;)
    {
      gsize n = MIN (n_values - done, SERIO_NUMPY_CHUNK_VALUES);
      const guchar *p = (const guchar *) elements + done * size;

      if (G_BYTE_ORDER == G_BIG_ENDIAN && size > 1)
        {
          guchar *out = (guchar *) writer->chunk;

          for (gsize i = 0; i < n * size; i += size)
            for (gsize k = 0; k < size; k++)
              out[i + k] = p[i + size - 1 - k];
          p = out;
        }
      if (!write_npy_bytes (writer, p, n * size, error))
        return FALSE;
      writer->n_left -= n;
      done += n;
    }

  return TRUE;
}

/* Ends the array, once all its values were added. */
gboolean
serio_numpy_writer_end_array (SerioNumpyWriter  *writer,
                              GError           **error)
{
  g_return_val_if_fail (writer->in_array, FALSE);
  g_return_val_if_fail (writer->n_left == 0, FALSE);

  writer->in_array = FALSE;
  writer->n_arrays++;
  if (writer->zip != NULL)
    return serio_numpy_zip_writer_end_member (writer->zip, error);

  return TRUE;
}

/* Completes the file: for a .npz archive, its central directory. */
gboolean
serio_numpy_writer_finish (SerioNumpyWriter  *writer,
                           GError           **error)
{
  g_return_val_if_fail (!writer->in_array, FALSE);

  if (writer->zip != NULL)
    return serio_numpy_zip_writer_finish (writer->zip, error);

  g_return_val_if_fail (writer->n_arrays == 1, FALSE);
  return TRUE;
}
