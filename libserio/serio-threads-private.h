/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-threads-private.h: how many threads libserio uses (private, not
 * installed)
 *
 * Copyright 2026 The libserio authors
 *
 * The one reading of SERIO_THREADS, for the library's workers and for the
 * serio tool, which includes this header, so that both obey the same cap.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The most threads libserio uses. */
#define SERIO_MAX_THREADS 64

/* The threads to use when @requested (0 for one per processor) are asked
 * for, capped by the environment variable SERIO_THREADS when it holds a
 * positive number, and by SERIO_MAX_THREADS. */
static inline guint
_serio_threads_capped (guint requested)
{
  const char *cap = g_getenv ("SERIO_THREADS");
  guint n = requested != 0 ? requested : g_get_num_processors ();

  if (cap != NULL && *cap != '\0')
    {
      guint64 limit = g_ascii_strtoull (cap, NULL, 10);

      if (limit >= 1)
        n = (guint) MIN ((guint64) n, limit);
    }

  return CLAMP (n, 1, SERIO_MAX_THREADS);
}

G_END_DECLS
