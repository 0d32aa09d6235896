/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-codec-avx2.c: the codec's kernels for CPUs with AVX2
 *
 * Copyright 2026 The libserio authors
 *
 * serio-codec-kernel.h again, compiled for AVX2, BMI1 and BMI2, which
 * serio-codec.c calls only when __builtin_cpu_supports() finds all three:
 * the same code as the SSE2 form, with VEX and BMI encodings and the
 * helpers that SERIO_CODEC_AVX2 selects (digit masks 32 bytes at a time,
 * SSSE3 multiply-adds for the digits). Same bytes, values and errors.
 */

#include "config.h"

#include "serio-codec-private.h"

#ifdef SERIO_CODEC_HAVE_AVX2

#include <string.h>

#include <glib.h>
#include <glib/gi18n-lib.h>
#include <immintrin.h>

#include "serio-dtype-private.h"
#include "serio-exponent-table.h"
#include "serio-error.h"

/* Everything below, the kernels included, for AVX2 CPUs only. */
#ifdef __clang__
# pragma clang attribute push (__attribute__ ((target ("avx2,bmi,bmi2"))), apply_to = function)
#else
# pragma GCC push_options
# pragma GCC target ("avx2,bmi,bmi2")
#endif

#define SERIO_CODEC_AVX2 1
#include "serio-codec-kernel.h"

SERIO_CODEC_DEFINE_KERNEL (avx2, TRUE);

#ifdef __clang__
# pragma clang attribute pop
#else
# pragma GCC pop_options
#endif

#else /* !SERIO_CODEC_HAVE_AVX2 */

/* Nothing to build here: ISO C wants a declaration in every unit. */
typedef int SerioCodecNoAvx2;

#endif
