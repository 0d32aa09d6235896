/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-version-macros.h: availability and deprecation markers
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib.h>

#include "serio-version.h"

/* Set by config.h while the library itself is built, so that only symbols
 * marked with these macros are exported; consumers see plain extern. */
#ifndef _SERIO_EXTERN
# define _SERIO_EXTERN extern
#endif

#define SERIO_VERSION_CUR_STABLE \
  (G_ENCODE_VERSION (SERIO_MAJOR_VERSION, SERIO_MINOR_VERSION))

#define SERIO_VERSION_1_0 (G_ENCODE_VERSION (1, 0))

#ifndef SERIO_VERSION_MIN_REQUIRED
# define SERIO_VERSION_MIN_REQUIRED (SERIO_VERSION_CUR_STABLE)
#endif

#ifndef SERIO_VERSION_MAX_ALLOWED
# if SERIO_VERSION_MIN_REQUIRED > SERIO_VERSION_CUR_STABLE
#  define SERIO_VERSION_MAX_ALLOWED (SERIO_VERSION_MIN_REQUIRED)
# else
#  define SERIO_VERSION_MAX_ALLOWED (SERIO_VERSION_CUR_STABLE)
# endif
#endif

#define SERIO_AVAILABLE_IN_ALL _SERIO_EXTERN
#define SERIO_DEPRECATED _SERIO_EXTERN G_DEPRECATED
#define SERIO_DEPRECATED_FOR(f) _SERIO_EXTERN G_DEPRECATED_FOR (f)
#define SERIO_UNAVAILABLE(maj,min) _SERIO_EXTERN G_UNAVAILABLE (maj, min)

#if SERIO_VERSION_MAX_ALLOWED < SERIO_VERSION_1_0
# define SERIO_AVAILABLE_IN_1_0 SERIO_UNAVAILABLE (1, 0)
#else
# define SERIO_AVAILABLE_IN_1_0 _SERIO_EXTERN
#endif
