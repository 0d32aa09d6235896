/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-ryu.c: the shortest decimal that reads back to a double, a
 * float32, a float16 or a bfloat16
 *
 * Copyright 2026 The libserio authors
 *
 * Ryū, by Ulf Adams ("Ryū: fast float-to-string conversion", PLDI 2018;
 * reference code under the Apache License 2.0 or the Boost Software
 * License 1.0), written anew for this tool: the interval of decimals that
 * read back to the double is scaled by a 128-bit power of 5 so that its
 * shortest member falls out of a few integer divisions, with no bignum and
 * no trial conversion. The tables come from tools/gen-ryu-tables.py. The
 * decimal is the one nearest the double among the shortest, ties to even,
 * as Python's repr() and every correct shortest printer choose it.
 *
 * The narrower IEEE formats go through the same code with their own
 * mantissa and exponent widths: their values and the bounds of their
 * rounding intervals are a few bits wide, well inside what the double's
 * tables compute exactly, so this is Ryū's f2s in result (the shortest
 * decimal in the interval, nearest, ties to even) without f2s's smaller
 * tables. tests/cli/test-ryu.c compares every float16 and bfloat16 and a
 * sample of float32 with a brute-force search for the shortest decimal.
 * No locale is consulted: the digits and the point are written here.
 */

#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

/* The 32-bit build that tests/cli/test-ryu.c links beside the native one
 * renames its functions. */
#ifdef SERIO_RYU_NO_INT128
#define serio_tool_write_double serio_tool_write_double_portable
#define serio_tool_format_double serio_tool_format_double_portable
#define serio_tool_write_float32 serio_tool_write_float32_portable
#define serio_tool_write_float16 serio_tool_write_float16_portable
#define serio_tool_write_bfloat16 serio_tool_write_bfloat16_portable
#define serio_tool_write_typed serio_tool_write_typed_portable
#define serio_tool_format_typed serio_tool_format_typed_portable
#define serio_tool_float16_bits serio_tool_float16_bits_portable
#define serio_tool_float32_bits serio_tool_float32_bits_portable
#endif

#include "serio-ryu-tables.h"
#include "serio-ryu.h"

/* floor (e × log10 (2)), floor (e × log10 (5)), ceil (e × log2 (5)) for
 * the exponents that occur. */
static inline guint32
log10_pow2 (gint32 e)
{
  return (guint32) (((guint32) e * 78913) >> 18);
}

static inline guint32
log10_pow5 (gint32 e)
{
  return (guint32) (((guint32) e * 732923) >> 20);
}

static inline gint32
pow5_bits (gint32 e)
{
  return (gint32) ((((guint32) e * 1217359) >> 19) + 1);
}

static inline guint32
pow5_factor (guint64 value)
{
  guint32 count = 0;

  while (value % 5 == 0)
    {
      value /= 5;
      count++;
    }

  return count;
}

static inline gboolean
multiple_of_pow5 (guint64 value,
                  guint32 p)
{
  return pow5_factor (value) >= p;
}

static inline gboolean
multiple_of_pow2 (guint64 value,
                  guint32 p)
{
  return (value & ((G_GUINT64_CONSTANT (1) << p) - 1)) == 0;
}

/* (m × mul) >> j, for a 128-bit mul, m below 2^55 and 64 < j < 128. */
#if defined (__SIZEOF_INT128__) && !defined (SERIO_RYU_NO_INT128)
static inline guint64
mul_shift (guint64        m,
           const guint64 *mul,
           gint32         j)
{
  unsigned __int128 low = (unsigned __int128) m * mul[0];
  unsigned __int128 high = (unsigned __int128) m * mul[1];

  return (guint64) (((low >> 64) + high) >> (j - 64));
}
#else
/* Without a 128-bit integer type (32-bit targets): 64 × 64 bits in four
 * 32 × 32-bit products. Returns the low half, *high the high half. */
static inline guint64
mul_128 (guint64  a,
         guint64  b,
         guint64 *high)
{
  guint64 a_low = (guint32) a, a_high = a >> 32;
  guint64 b_low = (guint32) b, b_high = b >> 32;
  guint64 ll = a_low * b_low, lh = a_low * b_high, hl = a_high * b_low, hh = a_high * b_high;
  guint64 middle1 = hl + (ll >> 32);
  guint64 middle2 = lh + (guint32) middle1;

  *high = hh + (middle1 >> 32) + (middle2 >> 32);
  return (middle2 << 32) | (guint32) ll;
}

static inline guint64
mul_shift (guint64        m,
           const guint64 *mul,
           gint32         j)
{
  guint64 high0, high1, low1, sum;

  mul_128 (m, mul[0], &high0);
  low1 = mul_128 (m, mul[1], &high1);
  sum = high0 + low1;
  if (sum < high0)
    high1++;

  /* The 128 bits high1:sum shifted right by j - 64, between 1 and 63. */
  return (high1 << (128 - j)) | (sum >> (j - 64));
}
#endif

/* The number of decimal digits of v, below 10^17: compared, not divided,
 * most likely first (a double has 15 to 17 significant digits). */
static inline guint32
decimal_length (guint64 v)
{
  static const guint64 powers[] = {
    G_GUINT64_CONSTANT (10000000000000000), G_GUINT64_CONSTANT (1000000000000000),
    G_GUINT64_CONSTANT (100000000000000), G_GUINT64_CONSTANT (10000000000000),
    G_GUINT64_CONSTANT (1000000000000), G_GUINT64_CONSTANT (100000000000),
    G_GUINT64_CONSTANT (10000000000), G_GUINT64_CONSTANT (1000000000),
    100000000, 10000000, 1000000, 100000, 10000, 1000, 100, 10,
  };

  for (guint32 i = 0; i < G_N_ELEMENTS (powers); i++)
    {
      if (v >= powers[i])
        return 17 - i;
    }

  return 1;
}

/* "00" to "99": two digits per division. */
static const char two_digits[200] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
  "8081828384858687888990919293949596979899";

/* Writes the @n_digits decimal digits of v (below 10^17) to @out: eight at
 * a time split off in 64 bits, then pairs in 32 bits, from the right. */
static inline void
write_digits (guint64  v,
              guint32  n_digits,
              char    *out)
{
  char *p = out + n_digits;
  guint32 low;

  if ((v >> 32) != 0)
    {
      guint64 high = v / 100000000;
      guint32 eight = (guint32) (v - high * 100000000);
      guint32 c = eight % 10000, d = eight / 10000;

      memcpy (p - 2, two_digits + 2 * (c % 100), 2);
      memcpy (p - 4, two_digits + 2 * (c / 100), 2);
      memcpy (p - 6, two_digits + 2 * (d % 100), 2);
      memcpy (p - 8, two_digits + 2 * (d / 100), 2);
      p -= 8;
      v = high;
    }

  low = (guint32) v;
  while (low >= 10000)
    {
      guint32 c = low % 10000;

      low /= 10000;
      memcpy (p - 2, two_digits + 2 * (c % 100), 2);
      memcpy (p - 4, two_digits + 2 * (c / 100), 2);
      p -= 4;
    }
  if (low >= 100)
    {
      memcpy (p - 2, two_digits + 2 * (low % 100), 2);
      low /= 100;
      p -= 2;
    }
  if (low >= 10)
    memcpy (p - 2, two_digits + 2 * low, 2);
  else
    p[-1] = (char) ('0' + low);
}

/* The shortest decimal output × 10^exponent in the rounding interval of
 * the finite, nonzero value of these IEEE fields, in a format of
 * @mantissa_bits stored mantissa bits and exponent bias @bias (at most a
 * double's). Inlined, so that each format gets its constants folded. */
static inline G_ALWAYS_INLINE void
shortest_decimal (guint64  ieee_mantissa,
                  guint32  ieee_exponent,
                  guint32  mantissa_bits,
                  gint32   bias,
                  guint64 *output,
                  gint32  *exponent)
{
  gint32 e2, e10;
  guint64 m2, mv, vr, vp, vm;
  guint32 mm_shift;
  gboolean even, vm_trailing_zeros = FALSE, vr_trailing_zeros = FALSE;
  gint32 removed = 0;
  guint8 last_removed_digit = 0;

  /* Two more bits than the double, for the bounds of the interval. */
  if (ieee_exponent == 0)
    {
      e2 = 1 - bias - (gint32) mantissa_bits - 2;
      m2 = ieee_mantissa;
    }
  else
    {
      e2 = (gint32) ieee_exponent - bias - (gint32) mantissa_bits - 2;
      m2 = (G_GUINT64_CONSTANT (1) << mantissa_bits) | ieee_mantissa;
    }
  even = (m2 & 1) == 0;

  /* The interval is [mm, mp] × 2^e2 around mv × 2^e2, bounds included
   * when the mantissa is even (round half to even reads them back). Below
   * a power of two the lower neighbour is closer: mm_shift. */
  mv = 4 * m2;
  mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;

  if (e2 >= 0)
    {
      guint32 q = log10_pow2 (e2) - (e2 > 3);
      gint32 k = RYU_POW5_INV_BITCOUNT + pow5_bits ((gint32) q) - 1;
      gint32 i = -e2 + (gint32) q + k;

      e10 = (gint32) q;
      vr = mul_shift (4 * m2, RYU_POW5_INV_SPLIT[q], i);
      vp = mul_shift (4 * m2 + 2, RYU_POW5_INV_SPLIT[q], i);
      vm = mul_shift (4 * m2 - 1 - mm_shift, RYU_POW5_INV_SPLIT[q], i);

      if (q <= 21)
        {
          /* Only one of mp, mv and mm can be a multiple of 5, if any. */
          if (mv % 5 == 0)
            vr_trailing_zeros = multiple_of_pow5 (mv, q);
          else if (even)
            vm_trailing_zeros = multiple_of_pow5 (mv - 1 - mm_shift, q);
          else
            vp -= multiple_of_pow5 (mv + 2, q);
        }
    }
  else
    {
      guint32 q = log10_pow5 (-e2) - (-e2 > 1);
      gint32 i = -e2 - (gint32) q;
      gint32 k = pow5_bits (i) - RYU_POW5_BITCOUNT;
      gint32 j = (gint32) q - k;

      e10 = (gint32) q + e2;
      vr = mul_shift (4 * m2, RYU_POW5_SPLIT[i], j);
      vp = mul_shift (4 * m2 + 2, RYU_POW5_SPLIT[i], j);
      vm = mul_shift (4 * m2 - 1 - mm_shift, RYU_POW5_SPLIT[i], j);

      if (q <= 1)
        {
          /* mv = 4 × m2 has at least two trailing zero bits. */
          vr_trailing_zeros = TRUE;
          if (even)
            vm_trailing_zeros = mm_shift == 1;   /* mm = mv - 1 - mm_shift */
          else
            vp--;                               /* mp = mv + 2 */
        }
      else if (q < 63)
        {
          vr_trailing_zeros = multiple_of_pow2 (mv, q);
        }
    }

  /* Removes digits while the interval still holds a number with fewer,
   * but stops short of a scale where the interval's lower end falls
   * below one unit while the value is below it too (vm and vr below 10
   * before the removal). Removing would give 1 × 10^scale, a single
   * digit, while a single digit of the scale below (9 of 9.2, say) can be
   * nearer: the interval then straddles a power of ten, which only the
   * few-bit values (a bfloat16's smallest subnormals) have. The rounding
   * below picks the nearest digit there, 10 meaning the power of ten. */
  if (vm_trailing_zeros || vr_trailing_zeros)
    {
      /* The rare general case (about 0.7 %): exact ties matter. */
      while (vp / 10 > vm / 10 && !(vr < 10 && vm < 10 && removed > 0))
        {
          vm_trailing_zeros &= vm % 10 == 0;
          vr_trailing_zeros &= last_removed_digit == 0;
          last_removed_digit = (guint8) (vr % 10);
          vr /= 10;
          vp /= 10;
          vm /= 10;
          removed++;
        }
      if (vm_trailing_zeros)
        {
          while (vm % 10 == 0)
            {
              vr_trailing_zeros &= last_removed_digit == 0;
              last_removed_digit = (guint8) (vr % 10);
              vr /= 10;
              vp /= 10;
              vm /= 10;
              removed++;
            }
        }
      /* Half way exactly: round to even. */
      if (vr_trailing_zeros && last_removed_digit == 5 && vr % 2 == 0)
        last_removed_digit = 4;
      *output = vr + ((vr == vm && (!even || !vm_trailing_zeros)) || last_removed_digit >= 5);
    }
  else
    {
      gboolean round_up = FALSE;

      if (vp / 100 > vm / 100 && vr >= 100)
        {
          round_up = vr % 100 >= 50;
          vr /= 100;
          vp /= 100;
          vm /= 100;
          removed += 2;
        }
      while (vp / 10 > vm / 10 && !(vr < 10 && vm < 10 && removed > 0))
        {
          round_up = vr % 10 >= 5;
          vr /= 10;
          vp /= 10;
          vm /= 10;
          removed++;
        }
      *output = vr + (vr == vm || round_up);
    }

  /* Only after stopping short: 9 rounded up. */
  if (*output == 10)
    {
      *output = 1;
      removed++;
    }

  *exponent = e10 + removed;
}

/* Writes the IEEE value of @bits, in a format of @mantissa_bits stored
 * mantissa bits, @exponent_bits exponent bits and bias @bias, as
 * serio_tool_write_double() describes. */
static inline G_ALWAYS_INLINE gsize
write_ieee (guint64  bits,
            guint32  mantissa_bits,
            guint32  exponent_bits,
            gint32   bias,
            char    *buf)
{
  guint64 ieee_mantissa, output;
  guint32 ieee_exponent;
  gboolean negative;
  char digits[20] = { 0, };
  guint32 n_digits;
  gint32 exponent, point;
  char *p = buf;

  negative = ((bits >> (mantissa_bits + exponent_bits)) & 1) != 0;
  ieee_mantissa = bits & ((G_GUINT64_CONSTANT (1) << mantissa_bits) - 1);
  ieee_exponent = (guint32) ((bits >> mantissa_bits) & ((1u << exponent_bits) - 1));

  if (ieee_exponent == (1u << exponent_bits) - 1)
    {
      const char *text = ieee_mantissa != 0 ? "nan" : negative ? "-inf" : "inf";

      memcpy (buf, text, strlen (text));
      return strlen (text);
    }
  if (negative)
    *p++ = '-';
  if (ieee_exponent == 0 && ieee_mantissa == 0)
    {
      *p++ = '0';
      return p - buf;
    }

  shortest_decimal (ieee_mantissa, ieee_exponent, mantissa_bits, bias, &output, &exponent);
  n_digits = decimal_length (output);
  write_digits (output, n_digits, digits);

  /* The value is 0.d₁d₂… × 10^point. */
  point = exponent + (gint32) n_digits;

  if (point > -4 && point <= 16)
    {
      if (point <= 0)
        {
          *p++ = '0';
          *p++ = '.';
          for (gint32 k = point; k < 0; k++)
            *p++ = '0';
          memcpy (p, digits, n_digits);
          p += n_digits;
        }
      else if ((guint32) point >= n_digits)
        {
          memcpy (p, digits, n_digits);
          p += n_digits;
          for (guint32 k = n_digits; k < (guint32) point; k++)
            *p++ = '0';
        }
      else
        {
          memcpy (p, digits, point);
          p += point;
          *p++ = '.';
          memcpy (p, digits + point, n_digits - point);
          p += n_digits - point;
        }
    }
  else
    {
      gint32 e = point - 1;

      *p++ = digits[0];
      if (n_digits > 1)
        {
          *p++ = '.';
          memcpy (p, digits + 1, n_digits - 1);
          p += n_digits - 1;
        }
      *p++ = 'e';
      *p++ = e < 0 ? '-' : '+';
      e = ABS (e);
      if (e >= 100)
        *p++ = (char) ('0' + e / 100);
      *p++ = (char) ('0' + e / 10 % 10);
      *p++ = (char) ('0' + e % 10);
    }

  return p - buf;
}

/*
 * serio_tool_write_double:
 * @value: any double
 * @buf: at least SERIO_TOOL_DOUBLE_BUFSIZE bytes
 *
 * Writes the shortest decimal that reads back to the bits of @value (the
 * nearest one if there are several), in the layout of Python's repr():
 * positional for decimal exponents from -4 to 15, scientific otherwise
 * (“1e+16”, “1.5e-05”); and “-0”, “inf”, “-inf” and “nan”. There is no
 * trailing “.0”. Not NUL-terminated.
 *
 * Returns: the number of bytes written
 */
gsize
serio_tool_write_double (double value,
                         char   buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  guint64 bits;

  memcpy (&bits, &value, sizeof bits);
  return write_ieee (bits, 52, 11, 1023, buf);
}

/*
 * serio_tool_write_float32:
 * @value: any float
 * @buf: at least SERIO_TOOL_DOUBLE_BUFSIZE bytes
 *
 * Writes the shortest decimal that reads back, as a float32, to the bits
 * of @value: “0.1” for the float32 nearest 0.1, whose double is
 * 0.10000000149011612. The layout is serio_tool_write_double()'s.
 *
 * Returns: the number of bytes written
 */
gsize
serio_tool_write_float32 (float value,
                          char  buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  guint32 bits;

  memcpy (&bits, &value, sizeof bits);
  return write_ieee (bits, 23, 8, 127, buf);
}

/*
 * serio_tool_write_float16:
 * @bits: the 16 bits of an IEEE binary16 value
 * @buf: at least SERIO_TOOL_DOUBLE_BUFSIZE bytes
 *
 * Writes the shortest decimal that reads back, as a float16, to @bits.
 *
 * Returns: the number of bytes written
 */
gsize
serio_tool_write_float16 (guint16 bits,
                          char    buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  return write_ieee (bits, 10, 5, 15, buf);
}

/*
 * serio_tool_write_bfloat16:
 * @bits: the 16 bits of a bfloat16 value (a float32's upper half)
 * @buf: at least SERIO_TOOL_DOUBLE_BUFSIZE bytes
 *
 * Writes the shortest decimal that reads back, as a bfloat16, to @bits.
 *
 * Returns: the number of bytes written
 */
gsize
serio_tool_write_bfloat16 (guint16 bits,
                           char    buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  return write_ieee (bits, 7, 8, 127, buf);
}

/*
 * serio_tool_float32_bits:
 * @value: a double that a float32 holds (any other is rounded)
 *
 * Returns: the bits of @value as a float32
 */
guint32
serio_tool_float32_bits (double value)
{
  float f = (float) value;
  guint32 bits;

  memcpy (&bits, &f, sizeof bits);
  return bits;
}

/*
 * serio_tool_float16_bits:
 * @value: a double that a float16 holds exactly: ±0, ±inf, NaN, or a
 *   multiple of 2^-24 of 11 significant bits, 65504 at most
 *
 * Returns: the bits of @value as an IEEE binary16 (NaN as 0x7e00)
 */
guint16
serio_tool_float16_bits (double value)
{
  double magnitude = fabs (value);
  guint sign = signbit (value) ? 0x8000 : 0;
  int exponent;

  if (isnan (value))
    return 0x7e00;
  if (isinf (value))
    return (guint16) (sign | 0x7c00);
  if (magnitude < ldexp (1, -14))
    return (guint16) (sign | (guint) ldexp (magnitude, 24));   /* subnormal, or zero */

  frexp (magnitude, &exponent);
  /* magnitude = 1.f × 2^(exponent - 1), biased by 15 */
  return (guint16) (sign | (guint) (exponent - 1 + 15) << 10 |
                    ((guint) ldexp (magnitude, 11 - exponent) & 0x3ff));
}

/* The decimal digits of @value, after a minus sign if @negative. */
static gsize
write_integer (guint64   value,
               gboolean  negative,
               char     *buf)
{
  char digits[20];
  gsize n = 0, len = 0;

  do
    {
      digits[n++] = (char) ('0' + value % 10);
      value /= 10;
    }
  while (value > 0);

  if (negative)
    buf[len++] = '-';
  while (n > 0)
    buf[len++] = digits[--n];
  return len;
}

/*
 * serio_tool_write_typed:
 * @value: a value that @dtype holds (as a reader of a typed array gives it)
 * @dtype: the array's element type
 * @buf: at least SERIO_TOOL_DOUBLE_BUFSIZE bytes
 *
 * Writes @value as the shortest decimal of its own type: a float32 0.1 as
 * “0.1” (not its double's 0.10000000149011612), the integers of the
 * integer types in full (“9007199254740993” is not a double, but
 * 2^60 is written “1152921504606846976”, not “1.152921504606847e+18”),
 * a bool as “0” or “1”. Not NUL-terminated.
 *
 * Returns: the number of bytes written
 */
gsize
serio_tool_write_typed (double      value,
                        SerioDtype  dtype,
                        char        buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT32:
      return serio_tool_write_float32 ((float) value, buf);
    case SERIO_DTYPE_FLOAT16:
      return serio_tool_write_float16 (serio_tool_float16_bits (value), buf);
    case SERIO_DTYPE_BFLOAT16:
      return serio_tool_write_bfloat16 ((guint16) (serio_tool_float32_bits (value) >> 16), buf);
    case SERIO_DTYPE_INT8:
    case SERIO_DTYPE_INT16:
    case SERIO_DTYPE_INT32:
    case SERIO_DTYPE_INT64:
    case SERIO_DTYPE_UINT8:
    case SERIO_DTYPE_UINT16:
    case SERIO_DTYPE_UINT32:
    case SERIO_DTYPE_UINT64:
    case SERIO_DTYPE_BOOL:
      /* Integers below 2^64 in magnitude; anything else (which a typed
       * reader never gives) as a double. */
      if (value == floor (value) && fabs (value) < 18446744073709551616.0 && !(value == 0 && signbit (value)))
        return write_integer ((guint64) fabs (value), value < 0, buf);
      return serio_tool_write_double (value, buf);
    case SERIO_DTYPE_FLOAT64:
    default:
      return serio_tool_write_double (value, buf);
    }
}

/*
 * serio_tool_format_typed:
 *
 * serio_tool_write_typed(), NUL-terminated.
 *
 * Returns: @buf
 */
const char *
serio_tool_format_typed (double      value,
                         SerioDtype  dtype,
                         char        buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  gsize len = serio_tool_write_typed (value, dtype, buf);

  buf[len] = '\0';
  return buf;
}

/*
 * serio_tool_format_double:
 *
 * Writes the shortest decimal that reads back to the bits of @value, as
 * serio_tool_write_double() does, NUL-terminated. The same whatever the
 * locale, and valid JSON for every finite value.
 *
 * Returns: @buf
 */
const char *
serio_tool_format_double (double value,
                          char   buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  return serio_tool_format_typed (value, SERIO_DTYPE_FLOAT64, buf);
}
