/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-legacy.c: the legacy table of types, serio.dtypes, that the
 * first Python package wrote as a file's first record
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>

#include "serio-tool.h"

/* The codes of docs/format.md, in order; SERIO_TOOL_LEGACY_CODE_STR
 * follows them. */
static const SerioDtype legacy_dtypes[] = {
  SERIO_DTYPE_FLOAT64, SERIO_DTYPE_FLOAT32, SERIO_DTYPE_FLOAT16, SERIO_DTYPE_BFLOAT16,
  SERIO_DTYPE_INT64, SERIO_DTYPE_INT32, SERIO_DTYPE_INT16, SERIO_DTYPE_INT8,
  SERIO_DTYPE_UINT64, SERIO_DTYPE_UINT32, SERIO_DTYPE_UINT16, SERIO_DTYPE_UINT8,
  SERIO_DTYPE_BOOL,
};

G_STATIC_ASSERT (G_N_ELEMENTS (legacy_dtypes) == SERIO_TOOL_LEGACY_CODE_STR);

/*
 * serio_tool_legacy_code_get_dtype:
 * @code: a value of the table
 * @dtype: (out): the type it stands for
 *
 * Returns: whether @code is the code of a type (not of a text, not
 *   unknown)
 */
gboolean
serio_tool_legacy_code_get_dtype (double      code,
                                  SerioDtype *dtype)
{
  if (!(code >= 0 && code < G_N_ELEMENTS (legacy_dtypes) && code == floor (code)))
    return FALSE;

  *dtype = legacy_dtypes[(gsize) code];
  return TRUE;
}
