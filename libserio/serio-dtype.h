/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-dtype.h: the element types of arrays
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib.h>

#include "serio-version-macros.h"

G_BEGIN_DECLS

/**
 * SerioDtype:
 * @SERIO_DTYPE_FLOAT64: 64-bit IEEE 754 floats, the type of a record
 *   whose name has no type marker
 * @SERIO_DTYPE_FLOAT32: 32-bit IEEE 754 floats (`@float32`)
 * @SERIO_DTYPE_FLOAT16: 16-bit IEEE 754 floats (`@float16`)
 * @SERIO_DTYPE_BFLOAT16: bfloat16, the upper half of a float32
 *   (`@bfloat16`)
 * @SERIO_DTYPE_INT8: signed 8-bit integers (`@int8`)
 * @SERIO_DTYPE_INT16: signed 16-bit integers (`@int16`)
 * @SERIO_DTYPE_INT32: signed 32-bit integers (`@int32`)
 * @SERIO_DTYPE_INT64: signed 64-bit integers (`@int64`), of which a v1
 *   text holds those that a 64-bit float holds exactly
 * @SERIO_DTYPE_UINT8: unsigned 8-bit integers (`@uint8`)
 * @SERIO_DTYPE_UINT16: unsigned 16-bit integers (`@uint16`)
 * @SERIO_DTYPE_UINT32: unsigned 32-bit integers (`@uint32`)
 * @SERIO_DTYPE_UINT64: unsigned 64-bit integers (`@uint64`), of which a
 *   v1 text holds those that a 64-bit float holds exactly
 * @SERIO_DTYPE_BOOL: booleans, the values 0 and 1 (`@bool`)
 *
 * The element type of an array. It travels in the array's stored name,
 * as a marker between the base name and the shape suffix:
 * `conv1.weight@float32[16x3x3x3]` holds float32 values, `step@int64[]` a
 * 0-d int64 scalar. A name without a marker is that of a float64 array.
 * See the “Element types” section of [the format](format.html).
 *
 * The values of a typed array are still v1 tokens, each the exact value:
 * every reader refuses, with %SERIO_ERROR_DOMAIN, a value that the type
 * cannot hold exactly, and every writer refuses to write one.
 *
 * Typed bytes (see [method@Serio.Bundle.get_typed_bytes]) hold the
 * elements in host byte order, in C order: a bool is one byte, 0 or 1; a
 * float16 or bfloat16 is its 16-bit pattern.
 */
typedef enum {
  SERIO_DTYPE_FLOAT64 = 0,
  SERIO_DTYPE_FLOAT32,
  SERIO_DTYPE_FLOAT16,
  SERIO_DTYPE_BFLOAT16,
  SERIO_DTYPE_INT8,
  SERIO_DTYPE_INT16,
  SERIO_DTYPE_INT32,
  SERIO_DTYPE_INT64,
  SERIO_DTYPE_UINT8,
  SERIO_DTYPE_UINT16,
  SERIO_DTYPE_UINT32,
  SERIO_DTYPE_UINT64,
  SERIO_DTYPE_BOOL,
} SerioDtype;

SERIO_AVAILABLE_IN_ALL
const char *serio_dtype_to_string   (SerioDtype     dtype);
SERIO_AVAILABLE_IN_ALL
gboolean    serio_dtype_from_string (const char    *name,
                                     SerioDtype    *dtype);
SERIO_AVAILABLE_IN_ALL
gsize       serio_dtype_get_size    (SerioDtype     dtype);
SERIO_AVAILABLE_IN_ALL
gboolean    serio_dtype_holds       (SerioDtype     dtype,
                                     double         value);

G_END_DECLS
