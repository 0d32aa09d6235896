/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-dtype-store.c: the one-pass check and conversion of parsed doubles
 * into typed elements against the two passes it replaces
 *
 * Copyright 2026 The libserio authors
 *
 * _serio_dtype_store_doubles() takes eight values at a time where all are
 * zeros or normal numbers of the type and a value at a time elsewhere;
 * here it meets _serio_dtype_find_misfit() and _serio_dtype_from_doubles()
 * on runs of every length up to a few blocks, with the values that leave
 * the fast path (subnormals of the type, infinities, NaN, zeros of either
 * sign) and the values the type does not hold at every place.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "serio-dtype-private.h"
#include "test-utils.h"

#ifdef TEST_HAVE_MXCSR
# include <xmmintrin.h>
#endif

#define MAX_RUN 40
#define FILL    0xA5

/* A random double that @dtype holds: a random element converted, mostly
 * normal numbers of the type, as weights are. */
static double
held_value (SerioDtype dtype)
{
  guint64 r = test_rand_u64 ();
  double value;
  gsize bad;

  if (dtype == SERIO_DTYPE_FLOAT32)
    {
      guint32 e = (guint32) r;

      g_assert_true (_serio_dtype_to_doubles (dtype, &e, 1, &value, &bad));
    }
  else if (dtype == SERIO_DTYPE_FLOAT16 || dtype == SERIO_DTYPE_BFLOAT16)
    {
      guint16 e = (guint16) r;

      g_assert_true (_serio_dtype_to_doubles (dtype, &e, 1, &value, &bad));
    }
  else
    {
      gint8 e = (gint8) r;

      g_assert_true (_serio_dtype_to_doubles (dtype, &e, 1, &value, &bad));
    }

  return value;
}

/* A value off the fast path that @dtype holds, or one it does not. */
static double
special_value (SerioDtype dtype,
               gboolean   held)
{
  double subnormal = dtype == SERIO_DTYPE_FLOAT32 ? 0x1p-149 :
                     dtype == SERIO_DTYPE_FLOAT16 ? 0x1p-24 : 0x1p-133;
  double largest = dtype == SERIO_DTYPE_FLOAT32 ? 0x1.fffffep127 :
                   dtype == SERIO_DTYPE_FLOAT16 ? 65504 : 0x1.fep127;
  const double holds[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, subnormal, -3 * subnormal,
                           largest, -largest };
  /* the first fraction bit past the type's, alone */
  double half_ulp = dtype == SERIO_DTYPE_FLOAT32 ? 0x1p-24 :
                    dtype == SERIO_DTYPE_FLOAT16 ? 0x1p-11 : 0x1p-8;
  const double lacks[] = { 0.1, -0.1, 2 * largest, subnormal / 2, 0x1p-1074, -1e300, 1e-300,
                           1 + half_ulp, -(1 + half_ulp), 1 + 0x1p-52, 0x1p-1022 };
  guint64 r = test_rand_u64 ();

  if (dtype == SERIO_DTYPE_INT8)
    return held ? (double) (gint8) r : 128 + (double) (r % 1000);

  return held ? holds[r % G_N_ELEMENTS (holds)] : lacks[r % G_N_ELEMENTS (lacks)];
}

static void
test_store_doubles_against_two_passes (gconstpointer data)
{
  SerioDtype dtype = GPOINTER_TO_INT (data);
  guint rounds = MAX (test_iterations (20000), 2000);

  g_test_summary ("Checking and storing typed elements in one pass gives the elements and "
                  "the first misfit that the check and the conversion give apart, for runs "
                  "of every length, and leaves the output past the misfit alone.");

  for (guint round = 0; round < rounds; round++)
    {
      gsize n = round % (MAX_RUN + 1);
      double values[MAX_RUN];
      guint8 got[MAX_RUN * 8], want[MAX_RUN * 8];
      gsize expected = n, stored;
      guint64 r = test_rand_u64 ();

      for (gsize i = 0; i < n; i++)
        values[i] = held_value (dtype);
      /* off the fast path: none, one or a few values the type holds */
      for (guint k = 0; k < r % 4 && n > 0; k++)
        values[test_rand_u64 () % n] = special_value (dtype, TRUE);
      /* and a misfit in half the runs, anywhere */
      if ((r >> 8) & 1 && n > 0)
        values[test_rand_u64 () % n] = special_value (dtype, FALSE);
      for (gsize i = 0; i < n; i++)
        {
          if (isnan (values[i]))
            values[i] = test_double_of (test_canonical_bits (test_bits_of (values[i])));
        }

      if (_serio_dtype_find_misfit (dtype, values, n, &expected))
        g_assert_false (serio_dtype_holds (dtype, values[expected]));
      memset (want, FILL, sizeof want);
      _serio_dtype_from_doubles (dtype, values, expected, want);

      memset (got, FILL, sizeof got);
      stored = _serio_dtype_store_doubles (dtype, values, n, got);

      g_assert_cmpuint (stored, ==, expected);
      g_assert_cmpmem (got, sizeof got, want, sizeof want);
      for (gsize i = 0; i < expected; i++)
        g_assert_true (serio_dtype_holds (dtype, values[i]));
    }
}

/* The fast path's own formula, apart from the scalar one: every float16
 * and bfloat16 element that is a zero or a normal number, eight at a
 * time, converts to a double and is stored back as itself. */
static void
test_store_doubles_every_half (gconstpointer data)
{
  SerioDtype dtype = GPOINTER_TO_INT (data);
  g_autofree guint16 *elements = g_new (guint16, 65536);
  g_autofree guint16 *back = g_new (guint16, 65536);
  g_autofree double *values = g_new (double, 65536);
  guint exp_shift = dtype == SERIO_DTYPE_FLOAT16 ? 10 : 7;
  guint exp_mask = dtype == SERIO_DTYPE_FLOAT16 ? 0x1F : 0xFF;
  gsize n = 0, bad;

  for (guint i = 0; i < 65536; i++)
    {
      guint e = (i >> exp_shift) & exp_mask;

      if ((e != 0 && e != exp_mask) || (i & 0x7FFF) == 0)
        elements[n++] = (guint16) i;
    }
  g_assert_true (_serio_dtype_to_doubles (dtype, elements, n, values, &bad));
  g_assert_cmpuint (_serio_dtype_store_doubles (dtype, values, n, back), ==, n);
  g_assert_cmpmem (back, n * 2, elements, n * 2);
}

/* Storing float32 elements gives what it gives in the default
 * floating-point environment, and raises no flag, in a thread that traps
 * every exception, flushes subnormals to zero, takes subnormal inputs as
 * zeros and rounds toward zero: the processor's conversions, where a
 * build has them, must not trap on a value that does not fit nor refuse
 * a subnormal that does. */
static void
test_store_float32_environment (void)
{
#ifdef TEST_HAVE_MXCSR
  enum { N = 64 };
  const double lacks[] = { 0.1, 1e300, -1e300, 0x1p-150, 1 + 0x1p-24, 0x1p-1074 };
  const double holds[] = { 0x1p-149, -0x1p-126, 0x1.fffffep127, INFINITY, -0.0, 1.5 };
  double values[N];
  guint8 want[N * 4], got[N * 4];
  unsigned int csr, during, after;

  g_test_summary ("Storing float32 elements, and checking them, in a thread that traps "
                  "every floating-point exception, flushes to zero and rounds toward zero "
                  "gives the elements and misfit of the default environment, and raises no "
                  "flag.");

  for (gsize misfit = 0; misfit <= N; misfit += 7)
    {
      gsize expected, stored, checked;

      for (gsize i = 0; i < N; i++)
        values[i] = i % 3 == 0 ? holds[i % G_N_ELEMENTS (holds)] : held_value (SERIO_DTYPE_FLOAT32);
      if (misfit < N)
        values[misfit] = lacks[misfit % G_N_ELEMENTS (lacks)];
      if (!_serio_dtype_find_misfit (SERIO_DTYPE_FLOAT32, values, N, &expected))
        expected = N;
      g_assert_cmpuint (expected, ==, MIN (misfit, (gsize) N));
      memset (want, FILL, sizeof want);
      _serio_dtype_from_doubles (SERIO_DTYPE_FLOAT32, values, expected, want);

      memset (got, FILL, sizeof got);
      csr = _mm_getcsr ();
      _mm_setcsr (test_hostile_mxcsr ());
      during = _mm_getcsr ();
      stored = _serio_dtype_store_doubles (SERIO_DTYPE_FLOAT32, values, N, got);
      if (!_serio_dtype_find_misfit (SERIO_DTYPE_FLOAT32, values, N, &checked))
        checked = N;
      after = _mm_getcsr ();
      _mm_setcsr (csr);

      /* the same register, so no flag raised either */
      g_assert_cmphex (after, ==, during);
      g_assert_cmpuint (stored, ==, expected);
      g_assert_cmpuint (checked, ==, expected);
      g_assert_cmpmem (got, sizeof got, want, sizeof want);
    }
#else
  g_test_skip ("no MXCSR here");
#endif
}

/* The double of the float32 element @e, as the library must make it: the
 * compiler's conversion (exact) in the default environment, the default
 * quiet NaN for every NaN. */
static guint64
widened_bits (guint32 e)
{
  float f;

  if ((e & 0x7FFFFFFF) > 0x7F800000)
    return TEST_CANONICAL_NAN_BITS;
  memcpy (&f, &e, 4);
  return test_bits_of ((double) f);
}

/* A float32 element of every class: mostly weights, and zeros,
 * subnormals, infinities and NaN (quiet and signaling, either sign). */
static guint32
any_float32 (void)
{
  static const guint32 specials[] = { 0, 0x80000000, 1, 0x807FFFFF, 0x00400000, 0x7F800000,
                                      0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
                                      0xFFBFFFFF, 0x7FFFFFFF, 0x7F7FFFFF, 0x00800000 };
  guint64 r = test_rand_u64 ();
  float weight = (float) ((double) (gint32) r / 4294967296.0);
  guint32 e;

  if ((r >> 40) % 4 == 0)
    return specials[(r >> 44) % G_N_ELEMENTS (specials)];
  memcpy (&e, &weight, 4);
  return e;
}

/* float32 elements to doubles, in runs of every length from an
 * unaligned start, with every class of element anywhere; and the same
 * in a thread that traps every exception and takes subnormal inputs as
 * zeros, raising no flag. */
static void
test_widen_float32 (void)
{
  enum { N = 67 };
  guint8 raw[N * 4 + 1];
  double got[N];
  guint32 elements[N];

  g_test_summary ("float32 elements become the doubles that the compiler's conversion "
                  "gives (every NaN the default quiet NaN), for runs of every length, "
                  "unaligned, and in a thread that traps every floating-point exception "
                  "and takes subnormals as zeros, raising no flag.");

  for (guint round = 0; round < (guint) MAX (test_iterations (3000), 300); round++)
    {
      gsize n = round % (N + 1), bad;
#ifdef TEST_HAVE_MXCSR
      gboolean hostile = round % 2 == 1;
      unsigned int csr = _mm_getcsr (), during = 0, after = 0;
#endif

      for (gsize i = 0; i < n; i++)
        elements[i] = any_float32 ();
      memcpy (raw + 1, elements, n * 4);
      memset (got, FILL, sizeof got);
#ifdef TEST_HAVE_MXCSR
      if (hostile)
        {
          _mm_setcsr (test_hostile_mxcsr ());
          during = _mm_getcsr ();
        }
#endif
      g_assert_true (_serio_dtype_to_doubles (SERIO_DTYPE_FLOAT32, raw + 1, n, got, &bad));
#ifdef TEST_HAVE_MXCSR
      if (hostile)
        {
          after = _mm_getcsr ();
          _mm_setcsr (csr);
          g_assert_cmphex (after, ==, during);
        }
#endif
      for (gsize i = 0; i < n; i++)
        g_assert_cmphex (test_bits_of (got[i]), ==, widened_bits (elements[i]));
    }
}

int
main (int    argc,
      char **argv)
{
  static const struct {
    const char    *path;
    SerioDtype     dtype;
    GTestDataFunc  func;
  } tests[] = {
    { "/dtype-store/float32", SERIO_DTYPE_FLOAT32, test_store_doubles_against_two_passes },
    { "/dtype-store/float16", SERIO_DTYPE_FLOAT16, test_store_doubles_against_two_passes },
    { "/dtype-store/bfloat16", SERIO_DTYPE_BFLOAT16, test_store_doubles_against_two_passes },
    { "/dtype-store/int8", SERIO_DTYPE_INT8, test_store_doubles_against_two_passes },
    { "/dtype-store/every-float16", SERIO_DTYPE_FLOAT16, test_store_doubles_every_half },
    { "/dtype-store/every-bfloat16", SERIO_DTYPE_BFLOAT16, test_store_doubles_every_half },
  };

  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (tests); i++)
    g_test_add_data_func (tests[i].path, GINT_TO_POINTER (tests[i].dtype), tests[i].func);
  g_test_add_func ("/dtype-store/float32/environment", test_store_float32_environment);
  g_test_add_func ("/dtype-store/float32/widen", test_widen_float32);

  return g_test_run ();
}
