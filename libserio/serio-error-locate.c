/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-error-locate.c: the location of a reading error as plain values,
 * for bindings whose errors lose the data of extended error domains
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include "serio-bundle.h"
#include "serio-error.h"

/**
 * serio_error_locate:
 * @text: v1 text, such as the contents of a file that failed to read
 * @code: (out) (optional): return location for the code of the error
 * @line: (out) (optional): return location for its line, as
 *   [func@Serio.Error.get_line] gives it
 * @value_index: (out) (optional): return location for its value index, as
 *   [func@Serio.Error.get_value_index] gives it
 *
 * Reads @text as [ctor@Serio.Bundle.from_bytes] does and, if that fails,
 * gives the location of the error as plain values rather than in a
 * #GError.
 *
 * This is for bindings in which an error keeps only its domain, code and
 * message: PyGObject raises a `GLib.Error` made from those three, so
 * [func@Serio.Error.get_line] gives 0 for every error caught in Python.
 * There, after `from_bytes(text)` has raised a `SERIO_ERROR`,
 * `failed, code, line, value_index = Serio.error_locate(text)` gives its
 * location (reading the text a second time, which stops at the same
 * error). C, Vala and GJS code reads the error itself instead.
 *
 * Returns: %TRUE if reading @text fails, with the return locations set;
 *   %FALSE if @text is valid, with them set to 0
 */
gboolean
serio_error_locate (GBytes     *text,
                    SerioError *code,
                    guint64    *line,
                    guint64    *value_index)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = NULL;

  if (code != NULL)
    *code = 0;
  if (line != NULL)
    *line = 0;
  if (value_index != NULL)
    *value_index = 0;

  g_return_val_if_fail (text != NULL, FALSE);

  bundle = serio_bundle_from_bytes (text, &error);
  if (bundle != NULL)
    return FALSE;

  g_assert (error != NULL && error->domain == SERIO_ERROR);
  if (code != NULL)
    *code = error->code;
  if (line != NULL)
    *line = serio_error_get_line (error);
  if (value_index != NULL)
    *value_index = serio_error_get_value_index (error);

  return TRUE;
}
