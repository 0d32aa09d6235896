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
 * The quark of the #SERIO_ERROR domain, which bindings expose as
 * `Serio.Error` (in Python, compare `GLib.Error.domain` with
 * `Serio.error_quark()`).
 *
 * Returns: the error domain quark, named `serio-error-quark`
 */
G_DEFINE_QUARK (serio-error-quark, serio_error)
