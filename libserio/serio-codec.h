/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-codec.h: the v1 text codec (private, no GObject)
 *
 * Copyright 2026 The libserio authors
 *
 * The kernel of libserio: it turns arrays of doubles into v1 records and v1
 * text back into arrays, on buffers with explicit lengths, with no
 * allocation of its own on the hot path and no locale-dependent call.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The longest token: "-9007199254740991p-1074". */
#define SERIO_CODEC_TOKEN_MAX 23

/* The writer stores whole 8-byte groups of digits; a buffer sized with
 * _serio_codec_record_bound() leaves room for them. */
#define SERIO_CODEC_WRITE_SLACK 8

/* The default quiet NaN: every NaN in a bundle has exactly these bits. */
#define SERIO_CANONICAL_NAN_BITS G_GUINT64_CONSTANT (0x7FF8000000000000)

guint64  _serio_fnv1a64              (const void   *data,
                                      gsize         len);

static inline guint32
_serio_fnv1a_fold (guint64 h)
{
  return (guint32) ((h >> 32) ^ (h & G_GUINT64_CONSTANT (0xffffffff)));
}

gboolean _serio_codec_is_canonical   (const double *values,
                                      gsize         n_values);
void     _serio_codec_canonicalize   (double       *values,
                                      gsize         n_values);

gsize    _serio_codec_record_bound   (gsize         name_len,
                                      gsize         n_values);
char    *_serio_codec_write_record   (char         *out,
                                      const char   *name,
                                      gsize         name_len,
                                      const double *values,
                                      gsize         n_values);
char    *_serio_codec_write_token    (char         *out,
                                      double        value);

/*
 * SerioCodecArrayFunc:
 * @name: the record's name (valid UTF-8, not NUL-terminated)
 * @name_len: its length in bytes
 * @n_values: the record's count, already checked to fit in the input
 * @user_data: the data given to _serio_codec_read()
 *
 * Called once per record, in order, before its values are parsed.
 *
 * Returns: room for @n_values doubles, which the reader fills in; it may
 *   be %NULL when @n_values is 0, and is %NULL for a nonzero @n_values
 *   that cannot be held in memory, which fails the read with
 *   %SERIO_ERROR_LENGTH
 */
typedef double *(*SerioCodecArrayFunc) (const char *name,
                                        gsize       name_len,
                                        gsize       n_values,
                                        gpointer    user_data);

gboolean _serio_codec_read           (const char          *text,
                                      gsize                len,
                                      SerioCodecArrayFunc  begin_array,
                                      gpointer             user_data,
                                      GError             **error);

G_END_DECLS
