/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-utils.h: helpers shared by the C test programs
 *
 * Copyright 2026 The libserio authors
 *
 * Only GLib is used here, so that the codec tests, which link the codec
 * without GObject, can share these helpers with the bundle tests.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TEST_CANONICAL_NAN_BITS G_GUINT64_CONSTANT (0x7FF8000000000000)
#define TEST_SIGN_BIT           (G_GUINT64_CONSTANT (1) << 63)

guint64  test_bits_of             (double         value);
double   test_double_of           (guint64        bits);
guint64  test_canonical_bits      (guint64        bits);

guint64  test_rand_u64            (void);
guint64  test_rand_interesting    (void);
guint64  test_rand_odd            (int            bit_length);

gboolean test_slow_tool           (void);
guint    test_iterations          (guint          normal);

char    *test_data_filename       (const char    *basename);
GByteArray *test_decode_hex       (const char    *hex);
GArray  *test_load_patterns       (void);

void     test_assert_same_bytes   (GBytes        *actual,
                                   GBytes        *expected);
void     test_assert_same_bits    (const double  *actual,
                                   const guint64 *expected,
                                   gsize          n_values);

long     test_status_kib          (const char    *field);

#ifdef __SSE2__
/* An MXCSR that unmasks every exception, flushes to zero, takes denormals
 * as zero and rounds toward zero, its flags clear: the hostile
 * environment in which the library's conversions must neither trap nor
 * change their results. */
# define TEST_HAVE_MXCSR 1
unsigned int test_hostile_mxcsr   (void);
#endif

#ifdef G_OS_UNIX
gboolean test_wait_child          (GPid           pid,
                                   guint          deadline_s,
                                   int           *status);
#endif

G_END_DECLS
