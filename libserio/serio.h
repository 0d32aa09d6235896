/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio.h: the libserio umbrella header
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#define SERIO_INSIDE

#include "serio-version.h"
#include "serio-version-macros.h"
#include "serio-version-info.h"

#include "serio-bundle.h"
#include "serio-checksum.h"
#include "serio-dtype.h"
#include "serio-enums.h"
#include "serio-error.h"
#include "serio-flags.h"
#include "serio-name.h"
#include "serio-reader.h"
#include "serio-writer.h"

#undef SERIO_INSIDE
