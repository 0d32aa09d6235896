/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-sniff-private.h: saying what a file that is not serio text is
 * (private, not installed)
 *
 * Copyright 2026 The libserio authors
 *
 * A text whose first record does not start like a record (“v1|”, or a
 * version tag “v<digits>|” such as “v2|”, which is SERIO_ERROR_VERSION)
 * is not serio text at all: another format (a NumPy .npz or .npy, a
 * PyTorch .pt, safetensors, GGUF, HDF5, compressed data, a pickle, a
 * program) rather than a damaged serio file. Every reader reports it as
 * SERIO_ERROR_SYNTAX “Line N: not a serio file”, with what the leading
 * bytes look like where they are those of a known format, before any
 * other problem (a text that does not end with a line feed included).
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The leading bytes of a record that the description looks at: enough
 * for a zip archive's first member name. */
#define SERIO_SNIFF_BYTES 512

typedef enum
{
  SERIO_SNIFF_RECORD,       /* starts “v1|” or with a version tag */
  SERIO_SNIFF_NOT_SERIO,    /* cannot be the start of a record */
  SERIO_SNIFF_UNDECIDED,    /* all of its @len bytes could start one, or
                             * a blank line (a lone CR) */
} SerioSniffVerdict;

/* Whether the @len bytes at @p, the start of a text's first record (and
 * what follows, as far as it is known), start like a record. */
SerioSniffVerdict _serio_sniff_first_record (const char *p,
                                             gsize       len);

/* Sets @error to SERIO_ERROR_SYNTAX at @line: “not a serio file”, and
 * what the @len bytes at @p (up to SERIO_SNIFF_BYTES are looked at) look
 * like where they are the start of a known format. */
void              _serio_sniff_set_error    (GError    **error,
                                             const char *p,
                                             gsize       len,
                                             gulong      line);

/* For a whole text in memory: finds its first record (past blank lines)
 * and, if it cannot be one, sets @error as _serio_sniff_set_error() and
 * returns %FALSE. */
gboolean          _serio_sniff_check_text   (const char *text,
                                             gsize       len,
                                             GError    **error);

G_END_DECLS
