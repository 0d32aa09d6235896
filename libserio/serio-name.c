/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-name.c: what array names carry: the type marker, the shape
 * suffix (serio-v1-files.md §3) and the reserved names
 *
 * Copyright 2026 The libserio authors
 *
 * A stored name ending in "[" dims "]" carries a shape when dims is empty
 * (0-d) or d1xd2x…xdk with 1 ≤ k ≤ 32, each di a canonical decimal ("0",
 * or digits without a leading zero) that fits in 64 bits, and the product
 * of the dims equals the record's count. The product is the mathematical
 * one: 0 as soon as one dim is 0, and otherwise a product that overflows
 * 64 bits cannot equal a count. Every other name is a plain 1-D name.
 *
 * Before a valid suffix, `@` and the name of a type other than float64
 * (the last `@` counts) is the type marker, which is not part of the base
 * name: `w@float32[3]` is the float32 array `w`.
 *
 * Names that begin "serio." are reserved for metadata records, the two of
 * a seal among them (serio-name-private.h has the one list).
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <glib/gi18n-lib.h>

#include "serio-dtype-private.h"
#include "serio-i18n-private.h"
#include "serio-name-private.h"

/* Parses the canonical decimal at *p, up to the next 'x' or ']'. */
static gboolean
parse_dim (const char **p,
           guint64     *dim)
{
  const char *s = *p;
  guint64 value = 0;

  if (!g_ascii_isdigit (*s))
    return FALSE;
  if (*s == '0' && g_ascii_isdigit (s[1]))
    return FALSE;

  /* (no division a digit: a name is parsed for every record read) */
  for (; g_ascii_isdigit (*s); s++)
    {
      if (!g_uint64_checked_mul (&value, value, 10) ||
          !g_uint64_checked_add (&value, value, (guint64) (*s - '0')))
        return FALSE;
    }

  *dim = value;
  *p = s;
  return TRUE;
}

/*
 * _serio_shape_count:
 * @dims: (array length=n_dims): the dims
 * @n_dims: how many
 * @count: (out): the product
 *
 * Computes the product of @dims: 1 for no dims, 0 when any dim is 0.
 *
 * Returns: %FALSE if the product does not fit in 64 bits
 */
gboolean
_serio_shape_count (const guint64 *dims,
                    guint          n_dims,
                    guint64       *count)
{
  guint64 product = 1;

  for (guint i = 0; i < n_dims; i++)
    {
      if (dims[i] == 0)
        {
          *count = 0;
          return TRUE;
        }
    }

  for (guint i = 0; i < n_dims; i++)
    {
      if (!g_uint64_checked_mul (&product, product, dims[i]))
        return FALSE;
    }

  *count = product;
  return TRUE;
}

/* The last `[` of the @len bytes at @name, which end with `]`; %NULL
 * when there is none. */
static const char *
find_open (const char *name,
           gsize       len)
{
  for (gsize i = len - 1; i-- > 0;)
    {
      if (name[i] == '[')
        return name + i;
    }

  return NULL;
}

/* The §3 rule on the @len bytes at @name, which end with `]`, whose last
 * `[` is at @open: with a valid suffix, sets @dims to the shape. */
static gboolean
parse_suffix_at (const char *name,
                 gsize       len,
                 const char *open,
                 guint64     n_values,
                 guint64    *dims,
                 guint      *n_dims)
{
  const char *p = open + 1;
  guint n = 0;
  guint64 count;

  if (*p != ']')
    {
      for (;;)
        {
          guint64 dim;

          if (n == SERIO_SHAPE_MAX_DIMS || !parse_dim (&p, &dim))
            return FALSE;
          dims[n++] = dim;
          if (*p == ']')
            break;
          if (*p != 'x')
            return FALSE;
          p++;
        }
    }

  /* The ']' found must be the last byte. */
  if (p != name + len - 1)
    return FALSE;

  if (!_serio_shape_count (dims, n, &count) || count != n_values)
    return FALSE;

  *n_dims = n;
  return TRUE;
}

/* The longest type name, "bfloat16": a marker is '@' and at most this
 * many bytes. */
#define MARKER_MAX 8

/* With a valid suffix at @open_pos: the type its marker gives, and where
 * the marker starts. The last '@' before the suffix counts, and only a
 * type other than float64 makes a marker; one further back than
 * MARKER_MAX + 1 bytes is followed by too many to name a type, so the
 * look goes no further. */
static SerioDtype
parse_marker (const char *name,
              gsize       open_pos,
              gsize      *base_len)
{
  SerioDtype dtype;

  *base_len = open_pos;
  for (gsize i = open_pos; i-- > 0 && open_pos - i <= MARKER_MAX + 1;)
    {
      if (name[i] == '@')
        {
          if (_serio_dtype_from_text (name + i + 1, open_pos - i - 1, &dtype) &&
              dtype != SERIO_DTYPE_FLOAT64)
            {
              *base_len = i;
              return dtype;
            }
          break;
        }
    }

  return SERIO_DTYPE_FLOAT64;
}

/* _serio_name_parse() of a name whose last `[` is at @open (%NULL when
 * it has none, or does not end with `]`). */
static gboolean
parse_from (const char *name,
            gsize       len,
            const char *open,
            guint64     n_values,
            gsize      *base_len,
            SerioDtype *dtype,
            guint64    *dims,
            guint      *n_dims)
{
  if (open == NULL || !parse_suffix_at (name, len, open, n_values, dims, n_dims))
    {
      *base_len = len;
      *dtype = SERIO_DTYPE_FLOAT64;
      dims[0] = n_values;
      *n_dims = 1;
      return FALSE;
    }

  *dtype = parse_marker (name, open - name, base_len);
  return TRUE;
}

/*
 * _serio_name_parse:
 * @name: a stored name, not necessarily NUL-terminated
 * @len: its length in bytes
 * @n_values: the number of values of its array
 * @base_len: (out): the length in bytes of the base name
 * @dtype: (out): the element type
 * @dims: (out caller-allocates): room for %SERIO_SHAPE_MAX_DIMS dims
 * @n_dims: (out): the number of dims
 *
 * Applies the §3 rule and the type marker rule to @name. With a valid
 * suffix, sets @base_len to the length before the marker, if any, or
 * before the last `[`, and @dims to the shape; otherwise sets @base_len to
 * the whole length, @dtype to float64 and @dims to the one dim @n_values.
 *
 * Returns: %TRUE if @name has a valid shape suffix
 */
gboolean
_serio_name_parse (const char *name,
                   gsize       len,
                   guint64     n_values,
                   gsize      *base_len,
                   SerioDtype *dtype,
                   guint64    *dims,
                   guint      *n_dims)
{
  const char *open = len >= 2 && name[len - 1] == ']' ? find_open (name, len) : NULL;

  return parse_from (name, len, open, n_values, base_len, dtype, dims, n_dims);
}

/*
 * _serio_name_parse_if_typed:
 * @name: a stored name, not necessarily NUL-terminated
 * @len: its length in bytes
 * @n_values: the number of values of its array
 * @base_len: (out): the length in bytes of the base name
 * @dtype: (out): the element type
 * @dims: (out caller-allocates): room for %SERIO_SHAPE_MAX_DIMS dims
 * @n_dims: (out): the number of dims
 *
 * _serio_name_parse() for a name that may have a type marker. The names
 * of most float64 arrays are told from their last bytes (no suffix, or
 * no '@' just before it): for those, only @dtype is set, to float64, at
 * the cost of that look, and the caller parses the shape if it needs it.
 *
 * Returns: whether @base_len, @dims and @n_dims were set
 */
gboolean
_serio_name_parse_if_typed (const char *name,
                            gsize       len,
                            guint64     n_values,
                            gsize      *base_len,
                            SerioDtype *dtype,
                            guint64    *dims,
                            guint      *n_dims)
{
  const char *open, *from;

  *dtype = SERIO_DTYPE_FLOAT64;
  if (G_LIKELY (len < 2 || name[len - 1] != ']'))
    return FALSE;

  open = find_open (name, len);
  if (open == NULL)
    return FALSE;
  from = open - MIN ((gsize) (open - name), MARKER_MAX + 1);
  if (memchr (from, '@', open - from) == NULL)
    return FALSE;

  parse_from (name, len, open, n_values, base_len, dtype, dims, n_dims);
  return TRUE;
}

/*
 * _serio_name_get_dtype:
 * @name: a stored name, not necessarily NUL-terminated
 * @len: its length in bytes
 * @n_values: the number of values of its array
 *
 * Gets the element type of a record, as _serio_name_parse() does, at the
 * cost of a look at the last bytes for the names of float64 arrays: the
 * readers call it once a record.
 *
 * Returns: the element type
 */
SerioDtype
_serio_name_get_dtype (const char *name,
                       gsize       len,
                       guint64     n_values)
{
  guint64 dims[SERIO_SHAPE_MAX_DIMS];
  gsize base_len;
  guint n_dims;
  SerioDtype dtype;

  _serio_name_parse_if_typed (name, len, n_values, &base_len, &dtype, dims, &n_dims);
  return dtype;
}

/*
 * _serio_shape_parse:
 * @name: a stored name
 * @n_values: the number of values of its array
 * @base_len: (out): the length in bytes of the base name
 * @dims: (out caller-allocates): room for %SERIO_SHAPE_MAX_DIMS dims
 * @n_dims: (out): the number of dims
 *
 * _serio_name_parse() on a NUL-terminated name, without the type.
 *
 * Returns: %TRUE if @name has a valid shape suffix
 */
gboolean
_serio_shape_parse (const char *name,
                    guint64     n_values,
                    gsize      *base_len,
                    guint64    *dims,
                    guint      *n_dims)
{
  SerioDtype dtype;

  return _serio_name_parse (name, strlen (name), n_values, base_len, &dtype, dims, n_dims);
}

/*
 * _serio_shape_format_name:
 * @base_name: the base name
 * @dims: (array length=n_dims): the shape
 * @n_dims: at most %SERIO_SHAPE_MAX_DIMS
 *
 * Returns: (transfer full): @base_name followed by the shape suffix
 */
char *
_serio_shape_format_name (const char    *base_name,
                          const guint64 *dims,
                          guint          n_dims)
{
  GString *name = g_string_new (base_name);

  g_string_append_c (name, '[');
  for (guint i = 0; i < n_dims; i++)
    {
      if (i > 0)
        g_string_append_c (name, 'x');
      g_string_append_printf (name, "%" G_GUINT64_FORMAT, dims[i]);
    }
  g_string_append_c (name, ']');

  return g_string_free (name, FALSE);
}

/* The stored name of a typed array, with its number of values; %NULL
 * with a G_IO_ERROR_INVALID_ARGUMENT error when the shape has too many
 * values or the name would not read back as @dtype. For the bundle
 * and the writer. */
char *
_serio_typed_name (const char     *base_name,
                   SerioDtype      dtype,
                   const guint64  *shape,
                   guint           n_dims,
                   guint64        *n_values,
                   GError        **error)
{
  guint64 count;
  g_autofree char *name = NULL;
  guint64 dims[SERIO_SHAPE_MAX_DIMS];
  gsize base_len;
  guint n;
  SerioDtype parsed;

  if (!_serio_shape_count (shape, n_dims, &count))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("The shape has more values than 64 bits can count"));
      return NULL;
    }

  name = serio_name_compose (base_name, dtype, shape, n_dims);
  _serio_name_parse (name, strlen (name), count, &base_len, &parsed, dims, &n);
  if (parsed != dtype)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* TRANSLATORS: the placeholder is a base name such as
                    * w@int8 */
                   _("The base name “%s” ends in a type marker, which a float64 array cannot have"),
                   base_name);
      return NULL;
    }

  *n_values = count;
  return g_steal_pointer (&name);
}

/**
 * serio_name_is_metadata:
 * @name: a stored name
 *
 * Says whether @name is reserved for the records of the library and its
 * bindings rather than for arrays: every name that begins with `serio.`,
 * such as `serio.sealed` and `serio.seal` of a sealed text or
 * `serio.dtypes` of files from older Python bindings. Tools show such
 * records apart, never as arrays.
 *
 * Returns: %TRUE if @name is reserved for metadata
 */
gboolean
serio_name_is_metadata (const char *name)
{
  g_return_val_if_fail (name != NULL, FALSE);

  return g_str_has_prefix (name, SERIO_RESERVED_PREFIX);
}

/**
 * serio_name_compose:
 * @base_name: the base name, valid UTF-8
 * @dtype: the element type
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for
 *   a 0-d scalar
 *
 * Composes the stored name of an array: @base_name, then the type marker
 * (`@` and [func@Serio.Dtype.to_string]) unless @dtype is float64, then
 * the shape suffix. `w` of float32 and shape (2, 3) gives
 * `w@float32[2x3]`; of float64, `w[2x3]`; `step` of int64 and no
 * dimensions, `step@int64[]`.
 *
 * A float64 array whose base name itself ends in a marker (`x@int8`)
 * cannot be told from a typed one: its composed name reads back as that
 * of an int8 array. The typed appends refuse such a base name.
 *
 * Returns: (transfer full): the stored name
 */
char *
serio_name_compose (const char    *base_name,
                    SerioDtype     dtype,
                    const guint64 *shape,
                    guint          n_dims)
{
  g_autofree char *marked = NULL;

  g_return_val_if_fail (base_name != NULL, NULL);
  g_return_val_if_fail (dtype >= SERIO_DTYPE_FLOAT64 && dtype <= SERIO_DTYPE_LAST, NULL);
  g_return_val_if_fail (shape != NULL || n_dims == 0, NULL);
  g_return_val_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS, NULL);

  if (dtype == SERIO_DTYPE_FLOAT64)
    return _serio_shape_format_name (base_name, shape, n_dims);

  marked = g_strconcat (base_name, "@", serio_dtype_to_string (dtype), NULL);
  return _serio_shape_format_name (marked, shape, n_dims);
}

SerioNameKind
_serio_seal_name_kind (const char *name,
                       gsize       name_len)
{
  if (name_len == strlen (SERIO_SEAL_OPEN_NAME) &&
      memcmp (name, SERIO_SEAL_OPEN_NAME, name_len) == 0)
    return SERIO_NAME_SEAL_OPEN;
  if (name_len == strlen (SERIO_SEAL_CLOSE_NAME) &&
      memcmp (name, SERIO_SEAL_CLOSE_NAME, name_len) == 0)
    return SERIO_NAME_SEAL_CLOSE;

  return SERIO_NAME_ARRAY;
}
