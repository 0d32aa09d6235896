/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-error.c: the SERIO_ERROR domain
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include "serio-error.h"

/**
 * serio_error_quark:
 *
 * The quark of the libserio error domain, `SERIO_ERROR` in C, whose codes
 * are the values of [error@Serio.Error].
 *
 * Test an error with `g_error_matches (error, SERIO_ERROR,
 * SERIO_ERROR_LENGTH)` in C, `error.matches(Serio.error_quark(),
 * Serio.Error.LENGTH)` in Python and `error.matches(Serio.Error,
 * Serio.Error.LENGTH)` in GJS; in Vala, catch `Serio.Error.LENGTH`.
 *
 * Returns: the error domain quark, named `serio-error-quark`
 */
G_DEFINE_QUARK (serio-error-quark, serio_error)
