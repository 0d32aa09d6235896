/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hostile-common.h: what the hostile-input tests share
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <serio.h>

/* An outcome: a SerioError code, or this for an accepted input. */
#define ACCEPTED (-1)

static inline const char *
result_name (int result)
{
  switch (result)
    {
    case ACCEPTED: return "accepted";
    case SERIO_ERROR_VERSION: return "VERSION";
    case SERIO_ERROR_SYNTAX: return "SYNTAX";
    case SERIO_ERROR_LENGTH: return "LENGTH";
    case SERIO_ERROR_DOMAIN: return "DOMAIN";
    case SERIO_ERROR_TRUNCATED: return "TRUNCATED";
    default: return "not a SerioError";
    }
}
