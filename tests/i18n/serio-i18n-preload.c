/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-i18n-preload.c: an LD_PRELOAD module for the translation tests
 *
 * Copyright 2026 The libserio authors
 *
 * The library and the serio tool bind the serio-1.0 domain to LOCALEDIR,
 * which only holds the catalogues once they are installed. Loaded with
 * LD_PRELOAD, this module sends that binding to the catalogues built in the
 * build tree, SERIO_TEST_LOCALEDIR, so that the tool and the library can be
 * tested as built, each still making its own bindtextdomain() call. Other
 * domains (glib20 for GOption's own messages) are left alone. GLib's tests
 * use the same technique (glib/tests/getpwuid-preload.c).
 */

#define _GNU_SOURCE   /* RTLD_NEXT */

#include "config.h"

#include <dlfcn.h>
#include <libintl.h>
#include <string.h>

char *
bindtextdomain (const char *domainname,
                const char *dirname)
{
  static char *(*real_bindtextdomain) (const char *, const char *);

  if (real_bindtextdomain == NULL)
    real_bindtextdomain = (char *(*) (const char *, const char *)) dlsym (RTLD_NEXT, "bindtextdomain");

  /* A NULL dirname asks for the current binding: that is passed through. */
  if (dirname != NULL && domainname != NULL && strcmp (domainname, GETTEXT_PACKAGE) == 0)
    dirname = SERIO_TEST_LOCALEDIR;

  return real_bindtextdomain (domainname, dirname);
}
