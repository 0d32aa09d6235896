/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-version.c: the version of the library in use, at run time
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "serio-i18n-private.h"
#include "serio-version.h"
#include "serio-version-info.h"

/**
 * serio_get_major_version:
 *
 * Gets the major version of the libserio that the program runs with,
 * which can differ from %SERIO_MAJOR_VERSION, the version of the headers
 * it was compiled with: 1 for 1.2.3. Bindings, which have no macros, use
 * this.
 *
 * Returns: the major version of the library
 */
guint
serio_get_major_version (void)
{
  return SERIO_MAJOR_VERSION;
}

/**
 * serio_get_minor_version:
 *
 * Gets the minor version of the libserio that the program runs with: 2
 * for 1.2.3 (see [func@Serio.get_major_version]).
 *
 * Returns: the minor version of the library
 */
guint
serio_get_minor_version (void)
{
  return SERIO_MINOR_VERSION;
}

/**
 * serio_get_micro_version:
 *
 * Gets the micro version of the libserio that the program runs with: 3
 * for 1.2.3 (see [func@Serio.get_major_version]).
 *
 * Returns: the micro version of the library
 */
guint
serio_get_micro_version (void)
{
  return SERIO_MICRO_VERSION;
}

/**
 * serio_check_version:
 * @required_major: the major version required
 * @required_minor: the minor version required
 * @required_micro: the micro version required
 *
 * Checks that the libserio the program runs with is compatible with the
 * version required: of the same major version, and at least
 * @required_major.@required_minor.@required_micro, as gtk_check_version()
 * does. Unlike %SERIO_CHECK_VERSION, which tests the headers at compile
 * time, this tests the library at run time.
 *
 * Returns: (nullable): %NULL if the library is compatible, or a
 *   translated message saying why not, owned by the library
 */
const char *
serio_check_version (guint required_major,
                     guint required_minor,
                     guint required_micro)
{
  _serio_i18n_init ();

  if (required_major > SERIO_MAJOR_VERSION)
    return _("libserio version too old (major mismatch)");
  if (required_major < SERIO_MAJOR_VERSION)
    return _("libserio version too new (major mismatch)");
  if (required_minor > SERIO_MINOR_VERSION ||
      (required_minor == SERIO_MINOR_VERSION && required_micro > SERIO_MICRO_VERSION))
    return _("libserio version too old (minor or micro mismatch)");

  return NULL;
}
