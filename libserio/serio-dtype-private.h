/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-dtype-private.h: element types inside the library
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <string.h>

#include <glib.h>

#include "serio-dtype.h"

G_BEGIN_DECLS

#define SERIO_DTYPE_LAST SERIO_DTYPE_BOOL

/* The bits of a double, and the double of bits. */
static inline guint64
_serio_bits_of (double value)
{
  guint64 bits;

  memcpy (&bits, &value, sizeof bits);
  return bits;
}

static inline double
_serio_double_of (guint64 bits)
{
  double value;

  memcpy (&value, &bits, sizeof value);
  return value;
}

/* The default quiet NaN: every NaN in a bundle has exactly these bits. */
#define SERIO_CANONICAL_NAN_BITS G_GUINT64_CONSTANT (0x7FF8000000000000)

/* Whether no value of @values is a NaN other than the canonical one. */
gboolean    _serio_float64_is_canonical (const double *values,
                                         gsize         n_values);
/* Makes every NaN of @values the canonical one. */
void        _serio_float64_canonicalize (double       *values,
                                         gsize         n_values);

/* The name of @dtype for marker parsing: its text and length. */
gboolean    _serio_dtype_from_text     (const char    *text,
                                        gsize          len,
                                        SerioDtype    *dtype);

/* The first of @n_values (canonical) doubles that @dtype cannot hold:
 * %TRUE with *@bad set when there is one. */
gboolean    _serio_dtype_find_misfit   (SerioDtype     dtype,
                                        const double  *values,
                                        gsize          n_values,
                                        gsize         *bad);

/* Why @dtype cannot hold @value (which it cannot), translated: a new
 * string that names the type. */
char       *_serio_dtype_misfit_reason (SerioDtype     dtype,
                                        double         value);

/* _serio_dtype_find_misfit() and _serio_dtype_from_doubles() in one pass:
 * stores at @out the elements of @dtype of the (canonical) doubles at
 * @values before the first that @dtype cannot hold, and returns their
 * number (@n_values when it holds them all). */
gsize       _serio_dtype_store_doubles (SerioDtype     dtype,
                                        const double  *values,
                                        gsize          n_values,
                                        gpointer       out);

/* Converts @n_values doubles that @dtype holds into its elements at @out. */
void        _serio_dtype_from_doubles  (SerioDtype     dtype,
                                        const double  *values,
                                        gsize          n_values,
                                        gpointer       out);

/* Converts @n_values elements of @dtype at @data into canonical doubles at
 * @out; returns %FALSE at the first element that a double cannot hold
 * exactly (an int64 or uint64 beyond 2^53 that float64 lacks) or that is
 * not an element (a bool byte other than 0 and 1), with *@bad its index,
 * the elements before it converted. @data needs no alignment. */
gboolean    _serio_dtype_to_doubles    (SerioDtype     dtype,
                                        gconstpointer  data,
                                        gsize          n_values,
                                        double        *out,
                                        gsize         *bad);

/* Sets a %SERIO_ERROR_DOMAIN error naming element @index (0-based) of
 * typed data that _serio_dtype_to_doubles() refused, and its value. */
void        _serio_dtype_set_element_error (GError       **error,
                                            SerioDtype     dtype,
                                            gconstpointer  data,
                                            gsize          index);


/* Whether typed data of @size bytes holds @count elements of @dtype;
 * %FALSE with a %G_IO_ERROR_INVALID_ARGUMENT error otherwise. */
gboolean    _serio_typed_size_matches  (SerioDtype      dtype,
                                        guint64         count,
                                        gsize           size,
                                        GError        **error);

G_END_DECLS
