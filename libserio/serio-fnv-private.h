/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-fnv-private.h: FNV-1a 64, whole or piece by piece (private, not
 * installed)
 *
 * Copyright 2026 The libserio authors
 *
 * The one copy of the checksum's hash: serio_compute_checksum() hashes a whole
 * text with it, and the serio tool, which includes this header, hashes a
 * file piece by piece as it streams through, with the same result.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The FNV-1a 64 offset basis: the hash of no bytes. */
#define SERIO_FNV1A64_INIT G_GUINT64_CONSTANT (0xcbf29ce484222325)

/* Hashes @len more bytes into @h, the hash of the bytes before them. */
static inline guint64
_serio_fnv1a64_update (guint64     h,
                       const void *data,
                       gsize       len)
{
  const guint8 *p = data;

  for (gsize i = 0; i < len; i++)
    {
      h ^= p[i];
      h *= G_GUINT64_CONSTANT (0x100000001b3);
    }

  return h;
}

/* The 32-bit checksum of a hash: (h >> 32) ^ (h & 0xffffffff). */
static inline guint32
_serio_fnv1a_fold (guint64 h)
{
  return (guint32) ((h >> 32) ^ (h & G_GUINT64_CONSTANT (0xffffffff)));
}

G_END_DECLS
