/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bench-peers.h: the C++ peers of serio-bench, callable from C
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes @n doubles as their shortest round-trip decimal forms (fmt's
 * "{}", that is Dragonbox), separated by commas, into a buffer from
 * malloc() that ends with a NUL, and stores its length, without the NUL,
 * in @size. Returns NULL when memory runs out. */
char   *serio_bench_dragonbox_write (const double *values,
                                     size_t        n,
                                     size_t       *size);

/* Reads what serio_bench_dragonbox_write() wrote (@size bytes of @text)
 * into @n doubles with fast_float::from_chars. Returns @n on success, or
 * the index of the first token that is missing, does not parse or is not
 * followed by a comma (or, after the last one, by the end). */
size_t  serio_bench_fastfloat_read  (const char   *text,
                                     size_t        size,
                                     double       *values,
                                     size_t        n);

/* "fmt 9.1.0 (Dragonbox), fast_float": what the peers were built with. */
const char *serio_bench_peers_versions (void);

#ifdef __cplusplus
}
#endif
