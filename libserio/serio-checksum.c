/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-checksum.c: FNV-1a checksums for receipts and audit logs
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-checksum.h"
#include "serio-fnv-private.h"

/**
 * serio_checksum:
 * @text: a NUL-terminated string, usually the output of
 *   [method@Serio.Bundle.to_string]
 *
 * Computes the libserio checksum of @text: the 64-bit FNV-1a hash of its
 * bytes (without the terminating NUL), folded to 32 bits as
 * `(h >> 32) ^ (h & 0xffffffff)`.
 *
 * The checksum detects accidental changes and makes short receipts for audit
 * logs; it is not a cryptographic hash and gives no protection against
 * deliberate tampering. Use [func@Serio.checksum_bytes] for data that may
 * hold NUL bytes. A checksum is usually shown as 8 lowercase hexadecimal
 * digits (`%08x`).
 *
 * Returns: the folded FNV-1a checksum of @text
 */
guint32
serio_checksum (const char *text)
{
  g_return_val_if_fail (text != NULL, 0);

  return _serio_fnv1a_fold (_serio_fnv1a64_update (SERIO_FNV1A64_INIT, text, strlen (text)));
}

/**
 * serio_checksum_bytes:
 * @bytes: the data to checksum, for instance from
 *   [method@Serio.Bundle.to_bytes]
 *
 * Computes the same checksum as [func@Serio.checksum] over every byte of
 * @bytes, NUL bytes included.
 *
 * Returns: the folded FNV-1a checksum of @bytes
 */
guint32
serio_checksum_bytes (GBytes *bytes)
{
  gconstpointer data;
  gsize size;

  g_return_val_if_fail (bytes != NULL, 0);

  data = g_bytes_get_data (bytes, &size);

  return _serio_fnv1a_fold (_serio_fnv1a64_update (SERIO_FNV1A64_INIT, data, size));
}
