/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-i18n.c: binding the library's message catalogue
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "serio-i18n-private.h"

/*
 * _serio_i18n_init:
 *
 * Binds the library's gettext domain to its locale directory, once, before
 * the first translated message. The application's locale and default domain
 * are left alone: setlocale() and textdomain() belong to the program.
 */
void
_serio_i18n_init (void)
{
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
#ifdef HAVE_BIND_TEXTDOMAIN_CODESET
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
#endif
      g_once_init_leave (&initialized, 1);
    }
}
