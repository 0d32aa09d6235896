/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-shape.c: the shape suffix of array names (serio-v1-files.md §3)
 *
 * Copyright 2026 The libserio authors
 *
 * A stored name ending in "[" dims "]" carries a shape when dims is empty
 * (0-d) or d1xd2x…xdk with 1 ≤ k ≤ 32, each di a canonical decimal ("0",
 * or digits without a leading zero) that fits in 64 bits, and the product
 * of the dims equals the record's count. The product is the mathematical
 * one: 0 as soon as one dim is 0, and otherwise a product that overflows
 * 64 bits cannot equal a count. Every other name is a plain 1-D name.
 */

#include "config.h"

#include <string.h>

#include "serio-shape.h"

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

  for (; g_ascii_isdigit (*s); s++)
    {
      guint digit = (guint) (*s - '0');

      if (value > (G_MAXUINT64 - digit) / 10)
        return FALSE;
      value = value * 10 + digit;
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
      if (product > G_MAXUINT64 / dims[i])
        return FALSE;
      product *= dims[i];
    }

  *count = product;
  return TRUE;
}

/*
 * _serio_shape_parse:
 * @name: a stored name
 * @n_values: the number of values of its array
 * @base_len: (out): the length in bytes of the base name
 * @dims: (out caller-allocates): room for %SERIO_SHAPE_MAX_DIMS dims
 * @n_dims: (out): the number of dims
 *
 * Applies the §3 rule to @name. With a valid suffix, sets @base_len to the
 * length before the last `[` and @dims to the shape; otherwise sets
 * @base_len to the whole length and @dims to the one dim @n_values.
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
  gsize len = strlen (name);
  const char *open;
  const char *p;
  guint n = 0;
  guint64 count;

  *base_len = len;
  dims[0] = n_values;
  *n_dims = 1;

  if (len < 2 || name[len - 1] != ']')
    return FALSE;

  open = strrchr (name, '[');
  if (open == NULL)
    return FALSE;

  p = open + 1;
  if (*p != ']')
    {
      for (;;)
        {
          guint64 dim;

          if (n == SERIO_SHAPE_MAX_DIMS || !parse_dim (&p, &dim))
            goto plain;
          dims[n++] = dim;
          if (*p == ']')
            break;
          if (*p != 'x')
            goto plain;
          p++;
        }
    }

  /* The ']' found must be the last byte. */
  if (p != name + len - 1)
    goto plain;

  if (!_serio_shape_count (dims, n, &count) || count != n_values)
    goto plain;

  *base_len = (gsize) (open - name);
  *n_dims = n;
  return TRUE;

plain:
  dims[0] = n_values;
  return FALSE;
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
