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
 * serio_compute_checksum:
 * @text: a NUL-terminated string, usually the output of
 *   [method@Serio.Bundle.to_string]
 *
 * Computes the libserio checksum of @text: the 64-bit FNV-1a hash of its
 * bytes (without the terminating NUL), folded to 32 bits as
 * `(h >> 32) ^ (h & 0xffffffff)`.
 *
 * The checksum detects accidental changes and makes short receipts for
 * audit logs; it is not a cryptographic hash and gives no protection
 * against deliberate tampering. Use
 * [func@Serio.compute_checksum_for_bytes] for data that may hold NUL
 * bytes. A checksum is usually shown as 8 lowercase hexadecimal digits
 * (`%08x`). For data that comes in pieces, use a [struct@Serio.Checksum].
 * (Before 1.0 this was `serio_checksum()`, a name that the checksum type
 * now has as its prefix.)
 *
 * Returns: the folded FNV-1a checksum of @text
 */
guint32
serio_compute_checksum (const char *text)
{
  g_return_val_if_fail (text != NULL, 0);

  return _serio_fnv1a_fold (_serio_fnv1a64_update (SERIO_FNV1A64_INIT, text, strlen (text)));
}

/**
 * serio_compute_checksum_for_bytes:
 * @bytes: the data to checksum, for instance from
 *   [method@Serio.Bundle.to_bytes]
 *
 * Computes the same checksum as [func@Serio.compute_checksum] over every byte of
 * @bytes, NUL bytes included.
 *
 * Returns: the folded FNV-1a checksum of @bytes
 */
guint32
serio_compute_checksum_for_bytes (GBytes *bytes)
{
  gconstpointer data;
  gsize size;

  g_return_val_if_fail (bytes != NULL, 0);

  data = g_bytes_get_data (bytes, &size);

  return _serio_fnv1a_fold (_serio_fnv1a64_update (SERIO_FNV1A64_INIT, data, size));
}

struct _SerioChecksum
{
  guint64 hash;
};

G_DEFINE_BOXED_TYPE (SerioChecksum, serio_checksum, serio_checksum_copy, serio_checksum_free)

/**
 * serio_checksum_new:
 *
 * Creates a checksum of no bytes yet.
 *
 * Returns: (transfer full): a new #SerioChecksum; free it with
 *   [method@Serio.Checksum.free]
 */
SerioChecksum *
serio_checksum_new (void)
{
  SerioChecksum *self = g_new (SerioChecksum, 1);

  self->hash = SERIO_FNV1A64_INIT;

  return self;
}

/**
 * serio_checksum_copy:
 * @self: a #SerioChecksum
 *
 * Copies a checksum with the bytes fed to it so far: feeding both the same
 * bytes then gives the same value.
 *
 * Returns: (transfer full): a copy of @self
 */
SerioChecksum *
serio_checksum_copy (const SerioChecksum *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_memdup2 (self, sizeof *self);
}

/**
 * serio_checksum_free:
 * @self: (nullable): a #SerioChecksum
 *
 * Frees a checksum.
 */
void
serio_checksum_free (SerioChecksum *self)
{
  g_free (self);
}

/**
 * serio_checksum_reset:
 * @self: a #SerioChecksum
 *
 * Forgets the bytes fed so far: @self is then the checksum of no bytes.
 */
void
serio_checksum_reset (SerioChecksum *self)
{
  g_return_if_fail (self != NULL);

  self->hash = SERIO_FNV1A64_INIT;
}

/**
 * serio_checksum_update:
 * @self: a #SerioChecksum
 * @data: (array length=length): the next bytes
 * @length: the number of bytes in @data, or -1 if @data is a
 *   NUL-terminated string (its NUL is then not fed)
 *
 * Feeds the next bytes of the data, as g_checksum_update() does: the
 * value after feeding the parts of some data in order does not depend on
 * how it was split.
 */
void
serio_checksum_update (SerioChecksum *self,
                       const guint8  *data,
                       gssize         length)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (data != NULL || length == 0);

  if (length < 0)
    length = strlen ((const char *) data);

  self->hash = _serio_fnv1a64_update (self->hash, data, (gsize) length);
}

/**
 * serio_checksum_get_value:
 * @self: a #SerioChecksum
 *
 * Gets the libserio checksum of the bytes fed so far: the 32-bit value of
 * [func@Serio.compute_checksum_for_bytes]. More bytes may be fed afterwards.
 *
 * Returns: the folded FNV-1a checksum of the bytes fed so far
 */
guint32
serio_checksum_get_value (const SerioChecksum *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return _serio_fnv1a_fold (self->hash);
}

/**
 * serio_checksum_get_value64:
 * @self: a #SerioChecksum
 *
 * Gets the 64-bit FNV-1a hash of the bytes fed so far, before it is folded
 * to the 32 bits of [method@Serio.Checksum.get_value]: for comparing with
 * other FNV-1a 64 implementations.
 *
 * Returns: the FNV-1a 64 hash of the bytes fed so far
 */
guint64
serio_checksum_get_value64 (const SerioChecksum *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->hash;
}
