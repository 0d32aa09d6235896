/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-error.h: the SERIO_ERROR domain
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
 * SERIO_ERROR:
 *
 * The error domain of libserio: errors in it carry a #SerioError code.
 */
#define SERIO_ERROR (serio_error_quark ())

/**
 * SerioError:
 * @SERIO_ERROR_VERSION: a record starts with a version tag other than `v1`
 *   (such as `v2|` or `V1|`)
 * @SERIO_ERROR_SYNTAX: the text is not in the canonical v1 form: a malformed
 *   record or token, a name that is not valid UTF-8, or a NUL byte
 * @SERIO_ERROR_LENGTH: a record's count differs from the number of values it
 *   holds, or is more values than the memory of the system can hold (a
 *   count of 2^29 on a 32-bit system)
 * @SERIO_ERROR_DOMAIN: a well-formed token does not denote exactly one finite
 *   64-bit float in its form's range (such as `1p1024` or
 *   `9007199254740993`), or a value of a typed array is not one that its
 *   element type holds (such as `1p-1` in an int8 array; see #SerioDtype);
 *   typed data given to a writer or a bundle fails with it too
 * @SERIO_ERROR_TRUNCATED: a non-empty input does not end with a line feed,
 *   so its last record may have been cut short; or a sealed text ends
 *   without its closing seal record
 * @SERIO_ERROR_INTEGRITY: a sealed text does not match its seal: its bytes,
 *   its number of records or what follows the seal differ from what was
 *   written, so it was changed or damaged after it was written (see
 *   the “Sealed texts” section of [the format](format.html))
 *
 * The ways in which reading v1 text can fail.
 *
 * Every error names the 1-based line and, for a value, the 1-based token
 * index and the token's text, in its message and as data: see
 * [func@Serio.Error.get_line] and [func@Serio.Error.get_value_index]. When
 * an input has several problems, the one reported is the first met reading
 * front to back (after the truncation check), but callers should not rely
 * on which.
 */
typedef enum {
  SERIO_ERROR_VERSION,
  SERIO_ERROR_SYNTAX,
  SERIO_ERROR_LENGTH,
  SERIO_ERROR_DOMAIN,
  SERIO_ERROR_TRUNCATED,
  SERIO_ERROR_INTEGRITY,
} SerioError;

SERIO_AVAILABLE_IN_ALL
GQuark      serio_error_quark           (void);

SERIO_AVAILABLE_IN_ALL
guint64     serio_error_get_line        (const GError *error);
SERIO_AVAILABLE_IN_ALL
guint64     serio_error_get_value_index (const GError *error);
SERIO_AVAILABLE_IN_ALL
const char *serio_error_get_detail      (const GError *error);


G_END_DECLS
