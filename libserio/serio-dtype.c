/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-dtype.c: the element types of arrays
 *
 * Copyright 2026 The libserio authors
 *
 * A typed array is stored as doubles, each exactly a value of its type, so
 * that the readers and writers of float64 arrays serve typed ones as they
 * are. What is here decides whether a double is a value of a type (by its
 * bits, with no rounding: 1 + 2^-10 is not a bfloat16) and converts
 * between doubles and typed elements, which is exact both ways for the
 * values a type holds.
 */

#include "config.h"

#include <math.h>
#include <string.h>

/* SERIO_CODEC_SCALAR (the library built for the portable path's tests)
 * has no SSE2 here either. */
#if defined(__SSE2__) && !defined(SERIO_CODEC_SCALAR)
# define SERIO_DTYPE_SSE2 1
# include <emmintrin.h>
#endif

#include <gio/gio.h>
#include <glib/gi18n-lib.h>

#include "serio-dtype-private.h"
#include "serio-error.h"
#include "serio-i18n-private.h"
#include "serio-name-private.h"

typedef struct
{
  char        name[9];  /* "bfloat16" the longest; the rest zeros */
  gsize       name_len;
  gsize       size;
  const char *range;    /* of an integer type, for messages */
} DtypeInfo;

#define DTYPE(name, size, range) { name, sizeof name - 1, size, range }

static const DtypeInfo dtypes[] = {
  [SERIO_DTYPE_FLOAT64]  = DTYPE ("float64",  8, NULL),
  [SERIO_DTYPE_FLOAT32]  = DTYPE ("float32",  4, NULL),
  [SERIO_DTYPE_FLOAT16]  = DTYPE ("float16",  2, NULL),
  [SERIO_DTYPE_BFLOAT16] = DTYPE ("bfloat16", 2, NULL),
  [SERIO_DTYPE_INT8]     = DTYPE ("int8",     1, "-128 … 127"),
  [SERIO_DTYPE_INT16]    = DTYPE ("int16",    2, "-32768 … 32767"),
  [SERIO_DTYPE_INT32]    = DTYPE ("int32",    4, "-2147483648 … 2147483647"),
  [SERIO_DTYPE_INT64]    = DTYPE ("int64",    8, "-9223372036854775808 … 9223372036854775807"),
  [SERIO_DTYPE_UINT8]    = DTYPE ("uint8",    1, "0 … 255"),
  [SERIO_DTYPE_UINT16]   = DTYPE ("uint16",   2, "0 … 65535"),
  [SERIO_DTYPE_UINT32]   = DTYPE ("uint32",   4, "0 … 4294967295"),
  [SERIO_DTYPE_UINT64]   = DTYPE ("uint64",   8, "0 … 18446744073709551615"),
  [SERIO_DTYPE_BOOL]     = DTYPE ("bool",     1, NULL),
};

#undef DTYPE

G_STATIC_ASSERT (G_N_ELEMENTS (dtypes) == SERIO_DTYPE_LAST + 1);

#define FRAC_BITS 52
#define FRAC_MASK ((G_GUINT64_CONSTANT (1) << FRAC_BITS) - 1)
#define ONE_BITS  G_GUINT64_CONSTANT (0x3FF0000000000000)
#define SIGN_BIT  G_GUINT64_CONSTANT (0x8000000000000000)

/* 2^63 and 2^64, the first doubles beyond int64 and uint64. */
#define TWO_63 9223372036854775808.0
#define TWO_64 18446744073709551616.0

G_GNUC_UNUSED static inline gboolean
dtype_is_valid (SerioDtype dtype)
{
  return (guint) dtype <= SERIO_DTYPE_LAST;
}

static inline gboolean
is_nan_bits (guint64 bits)
{
  return (bits & ~SIGN_BIT) > G_GUINT64_CONSTANT (0x7FF0000000000000);
}

/* A binary floating-point format: @mant fraction bits, exponents of normal
 * numbers from 1 - @bias to @bias. */
typedef struct
{
  int mant;
  int ebits;
  int bias;
} BinaryFormat;

static const BinaryFormat float32_format  = { 23, 8, 127 };
static const BinaryFormat float16_format  = { 10, 5, 15 };
static const BinaryFormat bfloat16_format = { 7, 8, 127 };

/* Whether the double of @bits is exactly a value of @f: infinities, NaN
 * and zeros of either sign are; a finite nonzero value is when its
 * exponent is in range and the fraction bits @f lacks are zero (for a
 * subnormal of @f, more of them). */
static inline gboolean
fits_binary (guint64             bits,
             const BinaryFormat *f)
{
  int biased = (int) ((bits >> FRAC_BITS) & 0x7FF);
  guint64 frac = bits & FRAC_MASK;
  int e, shift;

  if (biased == 0x7FF)
    return TRUE;
  /* Zeros; the subnormals of float64 are below the range of every type. */
  if (biased == 0)
    return frac == 0;

  e = biased - 1023;
  if (e > f->bias)
    return FALSE;
  shift = FRAC_BITS - f->mant;
  if (e < 1 - f->bias)
    {
      shift += (1 - f->bias) - e;
      if (shift > FRAC_BITS)
        return FALSE;
    }

  return (frac & ((G_GUINT64_CONSTANT (1) << shift) - 1)) == 0;
}

/* The bits in @f of the double of @bits, which @f holds; NaN becomes the
 * quiet NaN with no payload. */
static inline guint32
binary_from_bits (guint64             bits,
                  const BinaryFormat *f)
{
  guint32 sign = (guint32) (bits >> 63) << (f->mant + f->ebits);
  guint32 exp_mask = (1u << f->ebits) - 1;
  int biased = (int) ((bits >> FRAC_BITS) & 0x7FF);
  guint64 frac = bits & FRAC_MASK;
  int e;

  if (biased == 0x7FF)
    {
      if (frac != 0)
        return (exp_mask << f->mant) | (1u << (f->mant - 1));
      return sign | (exp_mask << f->mant);
    }
  if (biased == 0)
    return sign;

  e = biased - 1023;
  if (e >= 1 - f->bias)
    return sign | ((guint32) (e + f->bias) << f->mant) | (guint32) (frac >> (FRAC_BITS - f->mant));

  return sign | (guint32) ((frac | (G_GUINT64_CONSTANT (1) << FRAC_BITS)) >>
                           (FRAC_BITS - f->mant + (1 - f->bias) - e));
}

/* The fast paths of the float types, for the values that weights almost
 * all are: zeros and normal numbers of @f. A double of @bits is a normal
 * number of @f when its biased exponent is within
 * [1023 + 1 - bias, 1023 + bias] and the fraction bits @f lacks are
 * zero. Integer operations only (and no branch in the check's loop): the
 * floating-point unit's state (rounding, flush-to-zero) plays no part. */
static inline guint64
normal_min_biased (const BinaryFormat *f)
{
  return (guint64) (1023 + 1 - f->bias);
}

static inline guint64
normal_span (const BinaryFormat *f)
{
  return (guint64) (2 * f->bias - 1);
}

static inline guint64
lacking_mask (const BinaryFormat *f)
{
  return (G_GUINT64_CONSTANT (1) << (FRAC_BITS - f->mant)) - 1;
}

/* Two doubles' bits at a time, as GCC's and Clang's generic vectors: on
 * x86-64 these are SSE2 operations, elsewhere the target's own or pairs
 * of scalar ones. The checks below use only shifts, masks, additions and
 * subtractions, which every target has for 64-bit lanes (unlike compares). */
typedef guint64 Bits2 __attribute__ ((vector_size (16)));

/* 1 in a lane whose biased exponent lies outside [@min, @min + @span], 0
 * in the others: t = biased - min and span - t are both below 2^63 only
 * inside. */
static inline Bits2
outside_range2 (Bits2   b,
                guint64 min,
                guint64 span)
{
  Bits2 t = ((b >> FRAC_BITS) & 0x7FF) - min;

  return (t | (span - t)) >> 63;
}

/* 1 in a lane that is not a zero of either sign, 0 in the others: x | -x
 * has its top bit set for every x but 0. */
static inline Bits2
nonzero2 (Bits2 b)
{
  Bits2 x = b << 1;

  return (x | -x) >> 63;
}

/* Nonzero in a lane that is neither a zero nor a normal number of @f,
 * given nonzero2() of @b. */
static inline Bits2
off_fast_path2 (Bits2               b,
                Bits2               nonzero,
                const BinaryFormat *f)
{
  return (b & lacking_mask (f)) |
         (outside_range2 (b, normal_min_biased (f), normal_span (f)) & nonzero);
}

/* Whether each of the @n_values doubles at @values is a zero or a normal
 * number of @f: then @f holds them all. %FALSE says nothing about any
 * one value (a subnormal of @f, an infinity or a NaN is held too). No
 * branch in the loop. */
static inline gboolean
all_zero_or_normal (const double       *values,
                    gsize               n_values,
                    const BinaryFormat *f)
{
  Bits2 bad = { 0, 0 };
  gsize i = 0;

  for (; i + 2 <= n_values; i += 2)
    {
      Bits2 b;

      memcpy (&b, values + i, sizeof b);
      bad |= off_fast_path2 (b, nonzero2 (b), f);
    }
  if (i < n_values)
    {
      /* the other lane a zero, which adds nothing */
      Bits2 b = { _serio_bits_of (values[i]), 0 };

      bad |= off_fast_path2 (b, nonzero2 (b), f);
    }

  return (bad[0] | bad[1]) == 0;
}

/* binary_from_bits() of a double of @f, with a shortcut for the normal
 * numbers of @f. */
static inline guint32
binary_from_bits_fast (guint64             bits,
                       const BinaryFormat *f)
{
  guint64 biased = (bits >> FRAC_BITS) & 0x7FF;

  if (G_LIKELY (biased - normal_min_biased (f) <= normal_span (f)))
    return (guint32) (bits >> 63) << (f->mant + f->ebits) |
           (guint32) (biased - (guint64) (1023 - f->bias)) << f->mant |
           (guint32) ((bits & FRAC_MASK) >> (FRAC_BITS - f->mant));

  return binary_from_bits (bits, f);
}

/* Stores @element at @out as an element of @size bytes (4 or 2). */
static inline void
put_element (guint8  *out,
             guint32  element,
             gsize    size)
{
  guint16 half = (guint16) element;

  if (size == 4)
    memcpy (out, &element, 4);
  else
    memcpy (out, &half, 2);
}

/* Stores the elements of @f of the 8 doubles at @values at @out, as
 * elements of @size bytes (4 or 2), when all are zeros or normal numbers
 * of @f, as weights almost always are, with binary_from_bits_fast()'s
 * formula (a zero keeps only its sign); otherwise stores nothing and
 * returns %FALSE. No branch but the last. */
G_ALWAYS_INLINE static inline gboolean
narrow8 (const double       *values,
         const BinaryFormat *f,
         gpointer            out,
         gsize               size)
{
  Bits2 b[4], r[4], bad = { 0, 0 };
  guint8 o[8 * 4];

  memcpy (b, values, sizeof b);
  _Pragma ("GCC unroll 4")
  for (int k = 0; k < 4; k++)
    {
      Bits2 nonzero = nonzero2 (b[k]);

      bad |= off_fast_path2 (b[k], nonzero, f);
      r[k] = ((((b[k] >> FRAC_BITS) & 0x7FF) - (guint64) (1023 - f->bias)) << f->mant |
              (b[k] & FRAC_MASK) >> (FRAC_BITS - f->mant)) & -nonzero;
      r[k] |= (b[k] >> 63) << (f->mant + f->ebits);
    }
  if (G_UNLIKELY ((bad[0] | bad[1]) != 0))
    return FALSE;

  _Pragma ("GCC unroll 4")
  for (int k = 0; k < 4; k++)
    {
      put_element (o + 2 * k * size, (guint32) r[k][0], size);
      put_element (o + (2 * k + 1) * size, (guint32) r[k][1], size);
    }
  memcpy (out, o, 8 * size);
  return TRUE;
}

/* Stores the elements of @f of the 8 doubles at @values at @out, as
 * elements of @size bytes, when it can take them all, as narrow8() does;
 * %FALSE, with nothing stored, otherwise. */
typedef gboolean (*Narrow8) (const double       *values,
                             const BinaryFormat *f,
                             gpointer            out,
                             gsize               size);

/* _serio_dtype_store_doubles() for a float type of @size bytes: eight
 * values at a time through @narrow (narrow8(), or narrow8_float32()),
 * a value at a time in the eight where it declines. Always inlined with
 * a constant @narrow, which is then inlined too. */
G_ALWAYS_INLINE static inline gsize
store_binary (const double       *values,
              gsize               n_values,
              const BinaryFormat *f,
              gpointer            out,
              gsize               size,
              Narrow8             narrow)
{
  guint8 *o = out;
  gsize i = 0;

  while (i < n_values)
    {
      gsize end;

      if (n_values - i >= 8 && narrow (values + i, f, o + i * size, size))
        {
          i += 8;
          continue;
        }
      end = i + MIN (n_values - i, 8);
      for (; i < end; i++)
        {
          guint64 bits = _serio_bits_of (values[i]);

          if (!fits_binary (bits, f))
            return i;
          put_element (o + i * size, binary_from_bits_fast (bits, f), size);
        }
    }

  return n_values;
}

/* The double of the element @b of @f; a NaN gives the default quiet NaN. */
static inline double
binary_to_double (guint32             b,
                  const BinaryFormat *f)
{
  guint64 sign = (guint64) ((b >> (f->mant + f->ebits)) & 1) << 63;
  guint32 exp_mask = (1u << f->ebits) - 1;
  guint32 biased = (b >> f->mant) & exp_mask;
  guint64 frac = b & ((1u << f->mant) - 1);

  if (biased == exp_mask)
    return _serio_double_of (frac != 0 ? SERIO_CANONICAL_NAN_BITS : sign | G_GUINT64_CONSTANT (0x7FF0000000000000));
  if (biased == 0)
    {
      /* A subnormal, frac × 2^(1 - bias - mant), is a normal double: its
       * top bit becomes the implicit one. */
      int top;

      if (frac == 0)
        return _serio_double_of (sign);
      top = 63 - __builtin_clzll (frac);
      return _serio_double_of (sign | ((guint64) (top + 1 - f->bias - f->mant + 1023) << FRAC_BITS) |
                        ((frac << (FRAC_BITS - top)) & FRAC_MASK));
    }

  return _serio_double_of (sign | ((guint64) ((int) biased - f->bias + 1023) << FRAC_BITS) |
                    (frac << (FRAC_BITS - f->mant)));
}

#ifdef SERIO_DTYPE_SSE2
/* The float32 elements of the 8 doubles at @values, at @out, when each
 * converts to a float32 exactly and none is a NaN: the processor's
 * conversion, checked by converting each back and comparing the bits;
 * otherwise stores nothing and returns %FALSE. An exact conversion has
 * one result, the element that binary_from_bits() makes; a NaN is left
 * to it, for its payload. Needs the MXCSR of begin_conversions(). */
G_ALWAYS_INLINE static inline gboolean
narrow8_float32 (const double       *values,
                 const BinaryFormat *f G_GNUC_UNUSED,
                 gpointer            out,
                 gsize               size G_GNUC_UNUSED)
{
  __m128 narrowed[4];
  __m128i same = _mm_set1_epi32 (-1);

  _Pragma ("GCC unroll 4")
  for (int k = 0; k < 4; k++)
    {
      __m128d d = _mm_loadu_pd (values + 2 * k);
      __m128d back;

      narrowed[k] = _mm_cvtpd_ps (d);
      back = _mm_cvtps_pd (narrowed[k]);
      same = _mm_and_si128 (same, _mm_cmpeq_epi32 (_mm_castpd_si128 (back), _mm_castpd_si128 (d)));
      same = _mm_and_si128 (same, _mm_castpd_si128 (_mm_cmpord_pd (d, d)));
    }
  if (G_UNLIKELY (_mm_movemask_epi8 (same) != 0xFFFF))
    return FALSE;

  _mm_storeu_ps ((float *) out, _mm_movelh_ps (narrowed[0], narrowed[1]));
  _mm_storeu_ps ((float *) out + 4, _mm_movelh_ps (narrowed[2], narrowed[3]));
  return TRUE;
}

/* MXCSR: the exception masks, the rounding control, flush to zero and
 * denormals are zero. */
#define MXCSR_MASKS     0x1F80u
#define MXCSR_ROUNDING  0x6000u
#define MXCSR_FTZ       0x8000u
#define MXCSR_DAZ       0x0040u

/* Sets the calling thread's MXCSR for the conversions below, and returns
 * its own, for the caller to put back with _mm_setcsr(): every exception
 * masked, rounding to nearest, neither flush to zero nor denormals are
 * zero. */
static inline unsigned int
begin_conversions (void)
{
  unsigned int csr = _mm_getcsr ();

  _mm_setcsr ((csr | MXCSR_MASKS) & ~(MXCSR_ROUNDING | MXCSR_FTZ | MXCSR_DAZ));
  return csr;
}

/* store_binary() of float32 elements, eight at a time through
 * narrow8_float32(). Its conversions run with every floating-point
 * exception masked, rounding to nearest and neither flush to zero nor
 * denormals are zero, whatever the calling thread set (a program that
 * traps on overflow must not trap on a value that does not fit, and a
 * subnormal flushed to zero would leave the fast path); the thread's
 * MXCSR, its flags included, is then put back, so that the call raises
 * no flag (begin_conversions()). */
static gsize
store_float32 (const double *values,
               gsize         n_values,
               gpointer      out)
{
  unsigned int csr;
  gsize stored;

  if (n_values < 8)
    return store_binary (values, n_values, &float32_format, out, 4, narrow8);

  csr = begin_conversions ();
  stored = store_binary (values, n_values, &float32_format, out, 4, narrow8_float32);
  _mm_setcsr (csr);

  return stored;
}

/* Whether float32 holds each of the @n_values doubles at @values, none a
 * NaN, by the conversions of narrow8_float32(), two at a time; %FALSE
 * says nothing about any one value, as all_zero_or_normal() does. */
static gboolean
all_float32 (const double *values,
             gsize         n_values)
{
  __m128i same = _mm_set1_epi32 (-1);
  unsigned int csr;
  gsize i = 0;

  if (n_values < 2)
    return all_zero_or_normal (values, n_values, &float32_format);

  csr = begin_conversions ();
  for (; i + 2 <= n_values; i += 2)
    {
      __m128d d = _mm_loadu_pd (values + i);
      __m128d back = _mm_cvtps_pd (_mm_cvtpd_ps (d));

      same = _mm_and_si128 (same, _mm_cmpeq_epi32 (_mm_castpd_si128 (back), _mm_castpd_si128 (d)));
      same = _mm_and_si128 (same, _mm_castpd_si128 (_mm_cmpord_pd (d, d)));
    }
  _mm_setcsr (csr);

  return _mm_movemask_epi8 (same) == 0xFFFF &&
         (i == n_values || all_zero_or_normal (values + i, 1, &float32_format));
}

/* The doubles of the @n_values float32 elements at @p (unaligned) at
 * @out, as binary_to_double() makes them: four at a time by the
 * processor's conversion, which is exact, where none of the four is a
 * NaN (found by their bits, with no floating-point compare); a NaN, which
 * becomes the default quiet NaN, and its three go one at a time. The
 * conversions run in the MXCSR of begin_conversions(): denormals are zero
 * would make a subnormal 0, and a trap on a denormal operand must not
 * fire. */
static void
widen_float32 (const guint8 *p,
               gsize         n_values,
               double       *out)
{
  const __m128i magnitude = _mm_set1_epi32 (0x7FFFFFFF);
  const __m128i infinity = _mm_set1_epi32 (0x7F800000);
  unsigned int csr = 0;
  gsize i = 0;

  if (n_values >= 4)
    csr = begin_conversions ();
  for (; i + 4 <= n_values; i += 4)
    {
      __m128i bits = _mm_loadu_si128 ((const __m128i *) (gconstpointer) (p + i * 4));
      __m128 f = _mm_castsi128_ps (bits);

      if (G_UNLIKELY (_mm_movemask_epi8 (_mm_cmpgt_epi32 (_mm_and_si128 (bits, magnitude),
                                                          infinity)) != 0))
        {
          for (gsize k = i; k < i + 4; k++)
            {
              guint32 element;

              memcpy (&element, p + k * 4, 4);
              out[k] = binary_to_double (element, &float32_format);
            }
          continue;
        }
      _mm_storeu_pd (out + i, _mm_cvtps_pd (f));
      _mm_storeu_pd (out + i + 2, _mm_cvtps_pd (_mm_movehl_ps (f, f)));
    }
  if (n_values >= 4)
    _mm_setcsr (csr);
  for (; i < n_values; i++)
    {
      guint32 element;

      memcpy (&element, p + i * 4, 4);
      out[i] = binary_to_double (element, &float32_format);
    }
}
#endif

/* Whether @value is an integer in [@lo, @hi) other than -0; @hi is a
 * power of two, so that the cast below is defined. */
/* Whether a 64-bit float holds the integer of this magnitude exactly:
 * its odd part has at most 53 bits. Decided on the integer, since a
 * conversion to double and back can keep excess precision (x87 on i686)
 * and find every integer exact. */
static inline gboolean
magnitude_is_double (guint64 magnitude)
{
  return magnitude == 0 ||
         (magnitude >> __builtin_ctzll (magnitude)) < (G_GUINT64_CONSTANT (1) << 53);
}

static inline gboolean
fits_integer (double value,
              double lo,
              double hi)
{
  if (!(value >= lo && value < hi))
    return FALSE;
  if (hi > TWO_63)
    return (double) (guint64) value == value && _serio_bits_of (value) != SIGN_BIT;

  return (double) (gint64) value == value && _serio_bits_of (value) != SIGN_BIT;
}

#ifdef SERIO_DTYPE_SSE2
/* Whether each of the @n_values doubles at @values is an integer of
 * [@lo, @hi), none of them -0, two at a time: each less @bias is
 * converted to int32 (truncated) by the processor and back, @bias added,
 * and the result must have the bits of the value, which only an integer
 * of the int32 range moved by @bias gives back (a fraction, a NaN, an
 * infinity, anything out of that range, -0 come back as another
 * integer, or +0); then the range. @bias is 0, or 2^31 for uint32, whose
 * range is int32's moved by 2^31; [@lo, @hi) lies within that range. The
 * conversions run in the MXCSR of begin_conversions(). %FALSE says
 * nothing about any one value: FIND_MISFIT() then looks for the first. */
static gboolean
all_integers (const double *values,
              gsize         n_values,
              double        lo,
              double        hi,
              double        bias)
{
  const __m128d low = _mm_set1_pd (lo);
  const __m128d high = _mm_set1_pd (hi);
  const __m128d shift = _mm_set1_pd (bias);
  __m128i same = _mm_set1_epi32 (-1);
  __m128d inside = _mm_castsi128_pd (same);
  unsigned int csr;
  gsize i = 0;

  csr = begin_conversions ();
  for (; i + 2 <= n_values; i += 2)
    {
      __m128d d = _mm_loadu_pd (values + i);
      __m128d back = _mm_add_pd (_mm_cvtepi32_pd (_mm_cvttpd_epi32 (_mm_sub_pd (d, shift))), shift);

      same = _mm_and_si128 (same, _mm_cmpeq_epi32 (_mm_castpd_si128 (back), _mm_castpd_si128 (d)));
      inside = _mm_and_pd (inside, _mm_and_pd (_mm_cmpge_pd (d, low), _mm_cmplt_pd (d, high)));
    }
  _mm_setcsr (csr);

  return _mm_movemask_epi8 (same) == 0xFFFF && _mm_movemask_pd (inside) == 3 &&
         (i == n_values || fits_integer (values[i], lo, hi));
}

/* Whether each of the @n_values doubles at @values has the bits of 0 or
 * of 1, two at a time: each 32-bit half the half of one of them (the low
 * halves of both are 0). */
static gboolean
all_bools (const double *values,
           gsize         n_values)
{
  const __m128i one = _mm_set_epi32 (0x3FF00000, 0, 0x3FF00000, 0);
  __m128i good = _mm_set1_epi32 (-1);
  gsize i = 0;

  for (; i + 2 <= n_values; i += 2)
    {
      __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) (values + i));

      good = _mm_and_si128 (good, _mm_or_si128 (_mm_cmpeq_epi32 (v, _mm_setzero_si128 ()),
                                                _mm_cmpeq_epi32 (v, one)));
    }

  return _mm_movemask_epi8 (good) == 0xFFFF &&
         (i == n_values || _serio_bits_of (values[i]) == 0 ||
          _serio_bits_of (values[i]) == ONE_BITS);
}
#endif

static inline gboolean
holds (SerioDtype dtype,
       double     value)
{
  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      return TRUE;
    case SERIO_DTYPE_FLOAT32:
      return fits_binary (_serio_bits_of (value), &float32_format);
    case SERIO_DTYPE_FLOAT16:
      return fits_binary (_serio_bits_of (value), &float16_format);
    case SERIO_DTYPE_BFLOAT16:
      return fits_binary (_serio_bits_of (value), &bfloat16_format);
    case SERIO_DTYPE_INT8:
      return fits_integer (value, -128.0, 128.0);
    case SERIO_DTYPE_INT16:
      return fits_integer (value, -32768.0, 32768.0);
    case SERIO_DTYPE_INT32:
      return fits_integer (value, -2147483648.0, 2147483648.0);
    case SERIO_DTYPE_INT64:
      return fits_integer (value, -TWO_63, TWO_63);
    case SERIO_DTYPE_UINT8:
      return fits_integer (value, 0.0, 256.0);
    case SERIO_DTYPE_UINT16:
      return fits_integer (value, 0.0, 65536.0);
    case SERIO_DTYPE_UINT32:
      return fits_integer (value, 0.0, 4294967296.0);
    case SERIO_DTYPE_UINT64:
      return fits_integer (value, 0.0, TWO_64);
    case SERIO_DTYPE_BOOL:
      return _serio_bits_of (value) == 0 || _serio_bits_of (value) == ONE_BITS;
    default:
      return FALSE;
    }
}

/**
 * serio_dtype_to_string:
 * @dtype: a #SerioDtype
 *
 * Gets the name of @dtype as its marker writes it: `float32`, `int64`,
 * `bool`; `float64` for %SERIO_DTYPE_FLOAT64, which has no marker.
 *
 * Returns: (transfer none): the name, a static string
 */
const char *
serio_dtype_to_string (SerioDtype dtype)
{
  g_return_val_if_fail (dtype_is_valid (dtype), NULL);

  return dtypes[dtype].name;
}

gboolean
_serio_dtype_from_text (const char *text,
                        gsize       len,
                        SerioDtype *dtype)
{
  guint64 word = 0;

  /* The text and each name as eight bytes, zeros after it (and the
   * lengths, for a text with a NUL): the readers look up the type of
   * every typed record, with no call to memcmp(). */
  if (len > 8)
    return FALSE;
  if (len > 0)
    memcpy (&word, text, len);
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      guint64 name;

      memcpy (&name, dtypes[i].name, 8);
      if (dtypes[i].name_len == len && name == word)
        {
          *dtype = (SerioDtype) i;
          return TRUE;
        }
    }

  return FALSE;
}

/**
 * serio_dtype_from_string:
 * @name: the name of a type, such as `float32`
 * @dtype: (out): return location for the type
 *
 * Finds the type of a name that [func@Serio.Dtype.to_string] gives;
 * `float64` is one of them. Names are compared exactly: `Float32` is not
 * a type.
 *
 * Returns: %TRUE if @name is the name of a type, %FALSE otherwise (and
 *   @dtype is left as it was)
 */
gboolean
serio_dtype_from_string (const char *name,
                         SerioDtype *dtype)
{
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (dtype != NULL, FALSE);

  return _serio_dtype_from_text (name, strlen (name), dtype);
}

/**
 * serio_dtype_get_size:
 * @dtype: a #SerioDtype
 *
 * Gets the size of one element of @dtype in typed bytes (see
 * [method@Serio.Bundle.get_typed_bytes]): 8 for float64, 2 for float16
 * and bfloat16, 1 for bool.
 *
 * Returns: the size in bytes of an element
 */
gsize
serio_dtype_get_size (SerioDtype dtype)
{
  g_return_val_if_fail (dtype_is_valid (dtype), 0);

  return dtypes[dtype].size;
}

/**
 * serio_dtype_holds:
 * @dtype: a #SerioDtype
 * @value: a 64-bit float
 *
 * Says whether an array of @dtype can hold @value exactly, which is what
 * every reader requires of the values of a typed record and every writer
 * of the values it is given.
 *
 * For float32, float16 and bfloat16, @value must be exactly a value of
 * that format, as its infinities, NaN and both zeros are; 0.1 is not, nor is 1 +
 * 2<sup>-10</sup> a bfloat16 (no rounding takes place). For the integer
 * types, @value must be an integer of the type's range, not -0, infinite
 * or NaN; int64 and uint64 hold those of their integers that a 64-bit
 * float holds. For bool, @value must be 0 or 1. Every value fits
 * float64.
 *
 * Returns: %TRUE if @dtype holds @value exactly
 */
gboolean
serio_dtype_holds (SerioDtype dtype,
                   double     value)
{
  g_return_val_if_fail (dtype_is_valid (dtype), FALSE);

  return holds (dtype, value);
}

/* One tight loop a type: the per-record check of typed values. */
#define FIND_MISFIT(test) \
  G_STMT_START { \
    for (gsize i = 0; i < n_values; i++) \
      { \
        double value = values[i]; \
        if (G_UNLIKELY (!(test))) \
          { \
            *bad = i; \
            return TRUE; \
          } \
      } \
  } G_STMT_END

gboolean
_serio_dtype_find_misfit (SerioDtype    dtype,
                          const double *values,
                          gsize         n_values,
                          gsize        *bad)
{
  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      break;
    case SERIO_DTYPE_FLOAT32:
#ifdef SERIO_DTYPE_SSE2
      if (all_float32 (values, n_values))
        break;
#else
      if (all_zero_or_normal (values, n_values, &float32_format))
        break;
#endif
      FIND_MISFIT (fits_binary (_serio_bits_of (value), &float32_format));
      break;
    case SERIO_DTYPE_FLOAT16:
      if (all_zero_or_normal (values, n_values, &float16_format))
        break;
      FIND_MISFIT (fits_binary (_serio_bits_of (value), &float16_format));
      break;
    case SERIO_DTYPE_BFLOAT16:
      if (all_zero_or_normal (values, n_values, &bfloat16_format))
        break;
      FIND_MISFIT (fits_binary (_serio_bits_of (value), &bfloat16_format));
      break;
    case SERIO_DTYPE_INT8:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, -128.0, 128.0, 0.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, -128.0, 128.0));
      break;
    case SERIO_DTYPE_INT16:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, -32768.0, 32768.0, 0.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, -32768.0, 32768.0));
      break;
    case SERIO_DTYPE_INT32:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, -2147483648.0, 2147483648.0, 0.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, -2147483648.0, 2147483648.0));
      break;
    case SERIO_DTYPE_INT64:
      FIND_MISFIT (fits_integer (value, -TWO_63, TWO_63));
      break;
    case SERIO_DTYPE_UINT8:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, 0.0, 256.0, 0.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, 0.0, 256.0));
      break;
    case SERIO_DTYPE_UINT16:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, 0.0, 65536.0, 0.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, 0.0, 65536.0));
      break;
    case SERIO_DTYPE_UINT32:
#ifdef SERIO_DTYPE_SSE2
      if (all_integers (values, n_values, 0.0, 4294967296.0, 2147483648.0))
        break;
#endif
      FIND_MISFIT (fits_integer (value, 0.0, 4294967296.0));
      break;
    case SERIO_DTYPE_UINT64:
      FIND_MISFIT (fits_integer (value, 0.0, TWO_64));
      break;
    case SERIO_DTYPE_BOOL:
#ifdef SERIO_DTYPE_SSE2
      if (all_bools (values, n_values))
        break;
#endif
      FIND_MISFIT (_serio_bits_of (value) == 0 || _serio_bits_of (value) == ONE_BITS);
      break;
    default:
      g_assert_not_reached ();
    }

  return FALSE;
}

char *
_serio_dtype_misfit_reason (SerioDtype dtype,
                            double     value)
{
  const char *name = dtypes[dtype].name;

  _serio_i18n_init ();

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT32:
    case SERIO_DTYPE_FLOAT16:
    case SERIO_DTYPE_BFLOAT16:
      /* TRANSLATORS: the placeholder is a type name such as float32 */
      return g_strdup_printf (_("the value is not exactly a value of type %s, which an array of that type must hold"),
                              name);
    case SERIO_DTYPE_BOOL:
      /* TRANSLATORS: the placeholder is the type name bool */
      return g_strdup_printf (_("the value is neither 0 nor 1, which an array of type %s must hold"),
                              name);
    case SERIO_DTYPE_FLOAT64:
      g_assert_not_reached ();
    default:
      break;
    }

  /* Every double of 2^63 or more is an integer. */
  if (!isfinite (value) || (fabs (value) < TWO_63 && (double) (gint64) value != value))
    /* TRANSLATORS: the placeholder is a type name such as int32 */
    return g_strdup_printf (_("the value is not an integer, which an array of type %s must hold"), name);
  if (_serio_bits_of (value) == SIGN_BIT)
    /* TRANSLATORS: the placeholder is a type name such as int32 */
    return g_strdup_printf (_("the value is -0, which an array of type %s cannot hold"), name);

  /* TRANSLATORS: a type name such as int8, then its range such as
   * “-128 … 127” */
  return g_strdup_printf (_("the value is outside the range of type %s (%s)"), name, dtypes[dtype].range);
}

gsize
_serio_dtype_store_doubles (SerioDtype    dtype,
                            const double *values,
                            gsize         n_values,
                            gpointer      out)
{
  gsize bad;

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT32:
#ifdef SERIO_DTYPE_SSE2
      return store_float32 (values, n_values, out);
#else
      return store_binary (values, n_values, &float32_format, out, 4, narrow8);
#endif
    case SERIO_DTYPE_FLOAT16:
      return store_binary (values, n_values, &float16_format, out, 2, narrow8);
    case SERIO_DTYPE_BFLOAT16:
      return store_binary (values, n_values, &bfloat16_format, out, 2, narrow8);
    default:
      if (_serio_dtype_find_misfit (dtype, values, n_values, &bad))
        n_values = bad;
      _serio_dtype_from_doubles (dtype, values, n_values, out);
      return n_values;
    }
}

void
_serio_dtype_from_doubles (SerioDtype    dtype,
                           const double *values,
                           gsize         n_values,
                           gpointer      out)
{
#define CONVERT(ctype, expr) \
  G_STMT_START { \
    ctype *o = out; \
    for (gsize i = 0; i < n_values; i++) \
      { \
        double value = values[i]; \
        o[i] = (expr); \
      } \
  } G_STMT_END

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      if (n_values > 0)
        memcpy (out, values, n_values * sizeof (double));
      break;
    case SERIO_DTYPE_FLOAT32:
      {
        guint32 *o = out;

        for (gsize i = 0; i < n_values; i++)
          o[i] = binary_from_bits_fast (_serio_bits_of (values[i]), &float32_format);
      }
      break;
    case SERIO_DTYPE_FLOAT16:
      CONVERT (guint16, (guint16) binary_from_bits_fast (_serio_bits_of (value), &float16_format));
      break;
    case SERIO_DTYPE_BFLOAT16:
      CONVERT (guint16, (guint16) binary_from_bits_fast (_serio_bits_of (value), &bfloat16_format));
      break;
    case SERIO_DTYPE_INT8:
      CONVERT (gint8, (gint8) value);
      break;
    case SERIO_DTYPE_INT16:
      CONVERT (gint16, (gint16) value);
      break;
    case SERIO_DTYPE_INT32:
      CONVERT (gint32, (gint32) value);
      break;
    case SERIO_DTYPE_INT64:
      CONVERT (gint64, (gint64) value);
      break;
    case SERIO_DTYPE_UINT8:
      CONVERT (guint8, (guint8) value);
      break;
    case SERIO_DTYPE_UINT16:
      CONVERT (guint16, (guint16) value);
      break;
    case SERIO_DTYPE_UINT32:
      CONVERT (guint32, (guint32) value);
      break;
    case SERIO_DTYPE_UINT64:
      CONVERT (guint64, (guint64) value);
      break;
    case SERIO_DTYPE_BOOL:
      CONVERT (guint8, value != 0.0);
      break;
    default:
      g_assert_not_reached ();
    }

#undef CONVERT
}

gboolean
_serio_dtype_to_doubles (SerioDtype     dtype,
                         gconstpointer  data,
                         gsize          n_values,
                         double        *out,
                         gsize         *bad)
{
  const guint8 *p = data;
  gsize size = dtypes[dtype].size;

/* Elements are loaded with memcpy: @data may be unaligned. */
#define LOAD(ctype, expr) \
  G_STMT_START { \
    for (gsize i = 0; i < n_values; i++) \
      { \
        ctype element; \
        memcpy (&element, p + i * sizeof (ctype), sizeof (ctype)); \
        expr; \
      } \
  } G_STMT_END

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      if (n_values > 0)
        memcpy (out, data, n_values * size);
      _serio_float64_canonicalize (out, n_values);
      break;
    case SERIO_DTYPE_FLOAT32:
#ifdef SERIO_DTYPE_SSE2
      widen_float32 (p, n_values, out);
#else
      LOAD (guint32, out[i] = binary_to_double (element, &float32_format));
#endif
      break;
    case SERIO_DTYPE_FLOAT16:
      LOAD (guint16, out[i] = binary_to_double (element, &float16_format));
      break;
    case SERIO_DTYPE_BFLOAT16:
      LOAD (guint16, out[i] = binary_to_double (element, &bfloat16_format));
      break;
    case SERIO_DTYPE_INT8:
      LOAD (gint8, out[i] = element);
      break;
    case SERIO_DTYPE_INT16:
      LOAD (gint16, out[i] = element);
      break;
    case SERIO_DTYPE_INT32:
      LOAD (gint32, out[i] = element);
      break;
    case SERIO_DTYPE_INT64:
      LOAD (gint64,
            {
              guint64 magnitude = element < 0 ? -(guint64) element : (guint64) element;

              if (G_UNLIKELY (!magnitude_is_double (magnitude)))
                {
                  *bad = i;
                  return FALSE;
                }
              out[i] = (double) element;
            });
      break;
    case SERIO_DTYPE_UINT8:
      LOAD (guint8, out[i] = element);
      break;
    case SERIO_DTYPE_UINT16:
      LOAD (guint16, out[i] = element);
      break;
    case SERIO_DTYPE_UINT32:
      LOAD (guint32, out[i] = element);
      break;
    case SERIO_DTYPE_UINT64:
      LOAD (guint64,
            {
              if (G_UNLIKELY (!magnitude_is_double (element)))
                {
                  *bad = i;
                  return FALSE;
                }
              out[i] = (double) element;
            });
      break;
    case SERIO_DTYPE_BOOL:
      LOAD (guint8,
            {
              if (G_UNLIKELY (element > 1))
                {
                  *bad = i;
                  return FALSE;
                }
              out[i] = element;
            });
      break;
    default:
      g_assert_not_reached ();
    }

#undef LOAD

  return TRUE;
}

void
_serio_dtype_set_element_error (GError       **error,
                                SerioDtype     dtype,
                                gconstpointer  data,
                                gsize          index)
{
  const guint8 *p = (const guint8 *) data + index * dtypes[dtype].size;
  g_autofree char *shown = NULL;
  g_autofree char *position = g_strdup_printf ("%" G_GSIZE_FORMAT, index);

  _serio_i18n_init ();

  if (dtype == SERIO_DTYPE_BOOL)
    {
      shown = g_strdup_printf ("%u", (guint) *p);
      g_set_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN,
                   /* TRANSLATORS: a 0-based element index and the byte
                    * found there */
                   _("Element %s: the bool byte is %s, not 0 or 1"),
                   position, shown);
      return;
    }

  if (dtype == SERIO_DTYPE_INT64)
    {
      gint64 element;

      memcpy (&element, p, sizeof element);
      shown = g_strdup_printf ("%" G_GINT64_FORMAT, element);
    }
  else
    {
      guint64 element;

      memcpy (&element, p, sizeof element);
      shown = g_strdup_printf ("%" G_GUINT64_FORMAT, element);
    }

  g_set_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN,
               /* TRANSLATORS: a 0-based element index, its value, and a
                * type name (int64 or uint64) */
               _("Element %s: the value %s of type %s has no exact 64-bit float, "
                 "which a v1 text needs"),
               position, shown, dtypes[dtype].name);
}

/* Whether no value of @values is a NaN other than the canonical one. */
gboolean
_serio_float64_is_canonical (const double *values,
                             gsize         n_values)
{
  for (gsize i = 0; i < n_values; i++)
    {
      guint64 bits = _serio_bits_of (values[i]);

      if (G_UNLIKELY (is_nan_bits (bits) && bits != SERIO_CANONICAL_NAN_BITS))
        return FALSE;
    }

  return TRUE;
}

/* Makes every NaN of @values the canonical one. */
void
_serio_float64_canonicalize (double *values,
                             gsize   n_values)
{
  static const guint64 canonical_nan = SERIO_CANONICAL_NAN_BITS;

  for (gsize i = 0; i < n_values; i++)
    {
      if (G_UNLIKELY (is_nan_bits (_serio_bits_of (values[i]))))
        memcpy (&values[i], &canonical_nan, sizeof canonical_nan);
    }
}

/* Whether typed data of @size bytes holds @count elements of @dtype;
 * %FALSE with a G_IO_ERROR_INVALID_ARGUMENT error otherwise. For the bundle
 * and the writer. */
gboolean
_serio_typed_size_matches (SerioDtype   dtype,
                           guint64      count,
                           gsize        size,
                           GError     **error)
{
  gsize element = serio_dtype_get_size (dtype);

  if (count <= G_MAXSIZE / element && count * element == size)
    return TRUE;

  {
    g_autofree char *taken = g_strdup_printf ("%" G_GSIZE_FORMAT, size);

    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                 /* TRANSLATORS: a number of bytes and a type name such
                  * as float32 */
                 _("The data takes %s bytes, which is not the size of an array of type %s "
                   "of the shape given"),
                 taken, serio_dtype_to_string (dtype));
    return FALSE;
  }
}
