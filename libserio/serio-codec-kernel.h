/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-codec-kernel.h: the hot loops of the v1 codec (private)
 *
 * Copyright 2026 The libserio authors
 *
 * Included by serio-codec.c, which builds the portable and SSE2 forms from
 * it, and by serio-codec-avx2.c, which builds it again for CPUs with AVX2
 * (and BMI1/BMI2) with SERIO_CODEC_AVX2 defined: there the SIMD helpers
 * take their AVX2/SSSE3 forms, and the compiler the VEX and BMI encodings.
 * Everything here is static (each unit has its own copy) but the
 * SerioCodecKernel that SERIO_CODEC_DEFINE_KERNEL() defines for each form.
 */

#pragma once

#include <string.h>

#include <glib.h>
#include <glib/gi18n-lib.h>

/* SERIO_CODEC_SCALAR forces the portable path, so that tests cover it on
 * machines with SSE2 too. */
#if defined(__SSE2__) && !defined(SERIO_CODEC_SCALAR)
# define SERIO_CODEC_SSE2 1
# include <emmintrin.h>
#endif
#ifdef SERIO_CODEC_AVX2
# include <immintrin.h>
#endif

#include "serio-codec-private.h"
#include "serio-dtype-private.h"
#include "serio-exponent-table.h"
#include "serio-error.h"

#define FRAC_BITS       52
#define FRAC_MASK       ((G_GUINT64_CONSTANT (1) << FRAC_BITS) - 1)
#define EXP_MASK        G_GUINT64_CONSTANT (0x7FF)
#define SIGN_BIT        (G_GUINT64_CONSTANT (1) << 63)
#define INF_BITS        G_GUINT64_CONSTANT (0x7FF0000000000000)
#define TWO_POW_53      (G_GUINT64_CONSTANT (1) << 53)
#define TWO_POW_62      (G_GUINT64_CONSTANT (1) << 62)

/* Longest digit run whose value is tracked exactly: 19 digits always fit in
 * 64 bits, and every in-domain number has at most 19. */
#define MAX_EXACT_DIGITS 19

/* An ASCII digit, without the locale or a table. */
#define IS_DIGIT(c) ((unsigned int) ((c) - '0') < 10)

static const guint64 powers_of_ten[20] = {
  G_GUINT64_CONSTANT (1),
  G_GUINT64_CONSTANT (10),
  G_GUINT64_CONSTANT (100),
  G_GUINT64_CONSTANT (1000),
  G_GUINT64_CONSTANT (10000),
  G_GUINT64_CONSTANT (100000),
  G_GUINT64_CONSTANT (1000000),
  G_GUINT64_CONSTANT (10000000),
  G_GUINT64_CONSTANT (100000000),
  G_GUINT64_CONSTANT (1000000000),
  G_GUINT64_CONSTANT (10000000000),
  G_GUINT64_CONSTANT (100000000000),
  G_GUINT64_CONSTANT (1000000000000),
  G_GUINT64_CONSTANT (10000000000000),
  G_GUINT64_CONSTANT (100000000000000),
  G_GUINT64_CONSTANT (1000000000000000),
  G_GUINT64_CONSTANT (10000000000000000),
  G_GUINT64_CONSTANT (100000000000000000),
  G_GUINT64_CONSTANT (1000000000000000000),
  G_GUINT64_CONSTANT (10000000000000000000),
};

static inline int
bit_length (guint64 v)
{
  return v == 0 ? 0 : 64 - __builtin_clzll (v);
}

static inline gboolean
bits_are_nan (guint64 bits)
{
  return (bits & ~SIGN_BIT) > INF_BITS;
}

/* ------------------------------------------------------------------ */
/* Writer                                                             */
/* ------------------------------------------------------------------ */

/* Eight decimal digits of @v (< 10^8), as the bytes of a little-endian
 * integer whose lowest byte is the most significant digit. The values are
 * 0..9, not yet ASCII. */
static inline guint64
digits8 (guint32 v)
{
  guint64 merged = (guint64) (v / 10000) | ((guint64) (v % 10000) << 32);
  guint64 hundreds = ((merged * 10486) >> 20) & G_GUINT64_CONSTANT (0x0000007F0000007F);
  guint64 pairs = hundreds | ((merged - 100 * hundreds) << 16);
  guint64 tens = ((pairs * 103) >> 10) & G_GUINT64_CONSTANT (0x000F000F000F000F);

  return tens | ((pairs - 10 * tens) << 8);
}

static inline void
store8 (char    *out,
        guint64  digits)
{
  guint64 ascii = GUINT64_TO_LE (digits + G_GUINT64_CONSTANT (0x3030303030303030));

  memcpy (out, &ascii, sizeof ascii);
}

/* The number of decimal digits of @v (> 0), from its bit length and one
 * comparison, so that the position of the next token is known long before
 * the digits themselves are computed. */
static inline int
decimal_length_of (guint64 v,
                   int     bits)
{
  static const guint8 digits_of_pow2[65] = {
    0,  1,  1,  1,  1,  2,  2,  2,  3,  3,  3,  4,  4,  4,  4,  5,  5,
    5,  6,  6,  6,  7,  7,  7,  7,  8,  8,  8,  9,  9,  9, 10, 10, 10,
    10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 15, 15, 15,
    16, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19, 19, 19, 19,
  };
  int guess = digits_of_pow2[bits];

  return guess + (v >= powers_of_ten[guess]);
}

#ifdef SERIO_CODEC_SSE2
#ifdef SERIO_CODEC_AVX2
/* digits16_sse2()'s constants (see there): 1/10^4 as a 32-bit multiplier,
 * 10^4, 100, 10·256 - 1, 1/100 and 1/10 as 16-bit ones, "00". */
static const __m128i digits16_constants[7] = {
  { (long long) 0xd1b71759d1b71759, (long long) 0xd1b71759d1b71759 },
  { 0x0000271000002710, 0x0000271000002710 },
  { 0x0064006400640064, 0x0064006400640064 },
  { 0x09ff09ff09ff09ff, 0x09ff09ff09ff09ff },
  { 0x147b147b147b147b, 0x147b147b147b147b },
  { 0x199a199a199a199a, 0x199a199a199a199a },
  { 0x3030303030303030, 0x3030303030303030 },
};
#endif

/* Sixteen decimal digits of @high and @low (each < 10^8), in order, as
 * ASCII; the SSE2 form of digits8() for both halves at once: the four
 * groups of four digits (one multiply by 1/10^4), the eight pairs (one by
 * 1/100), then the digits of each pair (one by 1/10), all in place, so that
 * the lanes end up in the order of the text with no shuffle. */
static inline __m128i
digits16_sse2 (guint32 high,
               guint32 low)
{
#ifdef SERIO_CODEC_AVX2
  /* The constants from memory, through a pointer opaque to the compiler:
   * it would otherwise rebuild each of them for every token with a move,
   * a vmovd and a vpbroadcast, or turn the multiplies by a constant into
   * chains of shifts and adds. VEX instructions take them as operands. */
  const __m128i *k = digits16_constants;
  __asm__ ("" : "+r" (k));
  const __m128i div10000 = _mm_load_si128 (k + 0);
  const __m128i ten_thousand = _mm_load_si128 (k + 1);
  __m128i hundred = _mm_load_si128 (k + 2);
  __m128i ten_and_ascii = _mm_load_si128 (k + 3);
  const __m128i div100 = _mm_load_si128 (k + 4);
  const __m128i div10 = _mm_load_si128 (k + 5);
  const __m128i ascii = _mm_load_si128 (k + 6);
  /* 64-bit lanes [high, low] */
  __m128i v = _mm_insert_epi64 (_mm_cvtsi64_si128 ((long long) high), (long long) low, 1);
#else
  /* x / 10^4 for x < 2^32 is the high part of x·0xd1b71759 >> 45 */
  const __m128i div10000 = _mm_set1_epi32 ((int) 0xd1b71759);
  const __m128i ten_thousand = _mm_set1_epi32 (10000);
  /* opaque to the compiler, which would otherwise turn the two multiplies
   * by a constant into chains of shifts and adds, 4-6 instructions each */
  __m128i hundred = _mm_set1_epi16 (100);
  __m128i ten_and_ascii = _mm_set1_epi16 (10 * 256 - 1);
  const __m128i div100 = _mm_set1_epi16 (5243);
  const __m128i div10 = _mm_set1_epi16 (6554);
  const __m128i ascii = _mm_set1_epi16 (0x3030);
#ifdef __GNUC__
  __asm__ ("" : "+x" (hundred), "+x" (ten_and_ascii));
#endif
  /* 64-bit lanes [high, low] */
  __m128i v = _mm_set_epi32 (0, (int) low, 0, (int) high);
#endif
  __m128i quads_high = _mm_srli_epi64 (_mm_mul_epu32 (v, div10000), 45);
  __m128i quads_low = _mm_sub_epi32 (v, _mm_mul_epu32 (quads_high, ten_thousand));
  /* 32-bit lanes: the four groups of four digits, each < 10^4 */
  __m128i quads = _mm_or_si128 (quads_high, _mm_slli_epi64 (quads_low, 32));
  /* x / 100 for x < 10^4 is x·5243 >> 19 */
  __m128i pairs_high = _mm_srli_epi16 (_mm_mulhi_epu16 (quads, div100), 3);
  __m128i pairs_low = _mm_sub_epi16 (quads, _mm_mullo_epi16 (pairs_high, hundred));
  /* 16-bit lanes: the eight pairs of digits, each < 100 */
  __m128i pairs = _mm_or_si128 (pairs_high, _mm_slli_epi32 (pairs_low, 16));
  /* x / 10 for x < 100 is x·6554 >> 16 */
  __m128i tens = _mm_mulhi_epu16 (pairs, div10);

  /* each lane '0' + tens, then '0' + ones (x - 10·tens) in the byte above:
   * 256·x - 2559·tens + 0x3030, one multiply, no mask */
  return _mm_sub_epi16 (_mm_add_epi16 (_mm_slli_epi16 (pairs, 8), ascii),
                        _mm_mullo_epi16 (tens, ten_and_ascii));
}
#endif

/* Writes @v (> 0), of @bits bits, in decimal; may store up to 7 bytes
 * past the result. */
G_ALWAYS_INLINE static inline char *
write_u64 (char     *out,
           guint64   v,
           int       bits,
           gboolean  simd)
{
  int n = decimal_length_of (v, bits);

#ifdef SERIO_CODEC_SSE2
  /* 16 digits, the most common length of a significand: one test, one
   * store */
  if (simd && n == 16)
    {
      guint64 high = v / 100000000;

      _mm_storeu_si128 ((__m128i *) (void *) out,
                        digits16_sse2 ((guint32) high, (guint32) (v - high * 100000000)));
      return out + 16;
    }
#endif

  if (n <= 8)
    {
      store8 (out, digits8 ((guint32) v) >> (8 * (8 - n)));
    }
  else if (n <= 16)
    {
      guint64 high = v / 100000000;
#ifdef SERIO_CODEC_SSE2
      if (simd)
        {
          __m128i digits = digits16_sse2 ((guint32) high, (guint32) (v - high * 100000000));
          guint64 first, second;
#ifndef __x86_64__
          guint64 halves[2];
#endif

#ifdef __x86_64__
          first = (guint64) _mm_cvtsi128_si64 (digits);
          second = (guint64) _mm_cvtsi128_si64 (_mm_unpackhi_epi64 (digits, digits));
#else
          /* i686 with -msse2 has no 64-bit move out of an SSE register. */
          _mm_storeu_si128 ((__m128i *) (void *) halves, digits);
          first = halves[0];
          second = halves[1];
#endif

          first >>= 8 * (16 - n);
          memcpy (out, &first, 8);
          memcpy (out + n - 8, &second, 8);
          return out + n;
        }
#endif
      store8 (out, digits8 ((guint32) high) >> (8 * (16 - n)));
      store8 (out + n - 8, digits8 ((guint32) (v - high * 100000000)));
    }
  else
    {
      guint64 high = v / G_GUINT64_CONSTANT (10000000000000000);
      guint64 low16 = v - high * G_GUINT64_CONSTANT (10000000000000000);
      guint64 mid = low16 / 100000000;

      store8 (out, digits8 ((guint32) high) >> (8 * (24 - n)));
      store8 (out + n - 16, digits8 ((guint32) mid));
      store8 (out + n - 8, digits8 ((guint32) (low16 - mid * 100000000)));
    }

  return out + n;
}

/* Writes @v in decimal, "0" included. */
static inline char *
write_count (char    *out,
             guint64  v)
{
  if (v == 0)
    {
      *out = '0';
      return out + 1;
    }

  return write_u64 (out, v, bit_length (v), FALSE);
}

/* Writes "p" and the exponent, 0 < |e| ≤ 1074, from a table: no branch on
 * the number of digits, no arithmetic. Stores 8 bytes. */
static inline char *
write_exponent_at (char  *out,
                   gsize  index)
{
  guint64 word = exponent_words[index];
  guint64 text = GUINT64_TO_LE (word);

  memcpy (out, &text, 8);
  return out + (word >> 56);
}

static inline char *
write_exponent (char *out,
                int   e)
{
  return write_exponent_at (out, (gsize) (e - SERIO_MIN_EXPONENT));
}

/* Writes the canonical token of @value at @out, which must have room for
 * SERIO_CODEC_TOKEN_MAX + SERIO_CODEC_WRITE_SLACK bytes; returns its end.
 * Any value; write_token() takes the normal ones itself. */
G_NO_INLINE static char *
write_token_general (char     *out,
                     guint64   bits,
                     gboolean  simd)
{
  guint64 frac = bits & FRAC_MASK;
  guint64 biased = (bits >> FRAC_BITS) & EXP_MASK;
  guint64 m;
  int e, shift;

  if (G_UNLIKELY (biased == EXP_MASK))
    {
      if (frac != 0)
        {
          memcpy (out, "nan", 3);
          return out + 3;
        }
      *out = '-';
      out += bits >> 63;
      memcpy (out, "inf", 3);
      return out + 3;
    }

  *out = '-';
  out += bits >> 63;

  if (G_LIKELY (biased != 0))
    {
      m = frac | (G_GUINT64_CONSTANT (1) << FRAC_BITS);
      e = (int) biased - 1075;
    }
  else if (frac != 0)
    {
      m = frac;
      e = -1074;
    }
  else
    {
      *out = '0';
      return out + 1;
    }

  shift = __builtin_ctzll (m);
  m >>= shift;
  e += shift;

  /* Integers below 2^62 are written as plain digits: 0 ≤ e ≤ 62 - bits,
   * one comparison that random data does not mispredict. */
  if ((unsigned int) e <= (unsigned int) (62 - bit_length (m)))
    return write_u64 (out, m << e, bit_length (m) + e, simd);

  out = write_u64 (out, m, bit_length (m), simd);
  return write_exponent (out, e);
}

/* As write_token_general(), in line for the normal numbers (a biased
 * exponent of 1 to 2046, one comparison). The significand is taken with
 * its leading 1 at bit 63, so that the count of its trailing zeros gives
 * both its length and the index of the exponent's text, with no count of
 * its bits and no sign extension. With @comma, a comma first, stored
 * with the sign in one go. */
G_ALWAYS_INLINE static inline char *
write_token_after (char     *out,
                   double    value,
                   gboolean  comma,
                   gboolean  simd)
{
  guint64 bits = _serio_bits_of (value);
  guint64 biased = (bits >> FRAC_BITS) & EXP_MASK;
  guint64 left, m, zeros;
  gsize index;
  int e;

  if (G_UNLIKELY (biased - 1 >= EXP_MASK - 1))
    {
      if (comma)
        *out++ = ',';
      return write_token_general (out, bits, simd);
    }

  if (comma)
    {
      memcpy (out, ",-", 2);
      out += 1 + (bits >> 63);
    }
  else
    {
      *out = '-';
      out += bits >> 63;
    }

  /* 1, the 52 bits of the fraction, 11 zeros */
  left = (bits << 11) | SIGN_BIT;
  zeros = (guint) __builtin_ctzll (left);
  m = left >> zeros;
  /* e = biased - 1075 + (zeros - 11), and e - SERIO_MIN_EXPONENT */
  index = biased + zeros - 12;
  e = (int) index + SERIO_MIN_EXPONENT;

  if ((unsigned int) e <= (unsigned int) zeros - 2)
    return write_u64 (out, m << e, (int) (64 - zeros) + e, simd);

  /* 2^50 > 10^15 and 2^53 < 10^16: 16 digits with no count, the case of
   * seven significands in eight (a length of 51 bits or more) */
  if (zeros <= 13)
    {
      guint64 high = m / 100000000;

#ifdef SERIO_CODEC_SSE2
      if (simd)
        _mm_storeu_si128 ((__m128i *) (void *) out,
                          digits16_sse2 ((guint32) high, (guint32) (m - high * 100000000)));
      else
#endif
        {
          store8 (out, digits8 ((guint32) high));
          store8 (out + 8, digits8 ((guint32) (m - high * 100000000)));
        }
      return write_exponent_at (out + 16, index);
    }

  out = write_u64 (out, m, (int) (64 - zeros), simd);
  return write_exponent_at (out, index);
}

G_ALWAYS_INLINE static inline char *
write_token (char     *out,
             double    value,
             gboolean  simd)
{
  return write_token_after (out, value, FALSE, simd);
}

/* Writes the tokens of @values separated by commas, with a comma before the
 * first one if @leading_comma; @out must have (SERIO_CODEC_TOKEN_MAX + 1)
 * bytes per value plus SERIO_CODEC_WRITE_SLACK. */
G_ALWAYS_INLINE static inline char *
write_tokens (char         *out,
              const double *values,
              gsize         n_values,
              gboolean      leading_comma,
              gboolean      simd)
{
  gsize i = 0;

  if (n_values == 0)
    return out;

  if (!leading_comma)
    out = write_token (out, values[i++], simd);
  /* four a turn: a quarter of the loop's own instructions */
  for (; i + 4 <= n_values; i += 4)
    {
      out = write_token_after (out, values[i], TRUE, simd);
      out = write_token_after (out, values[i + 1], TRUE, simd);
      out = write_token_after (out, values[i + 2], TRUE, simd);
      out = write_token_after (out, values[i + 3], TRUE, simd);
    }
  for (; i < n_values; i++)
    out = write_token_after (out, values[i], TRUE, simd);

  return out;
}

/* ------------------------------------------------------------------ */
/* Reader                                                             */
/* ------------------------------------------------------------------ */

typedef SerioCodecProblem Problem;

static inline guint64
load_le64 (const char *p)
{
  guint64 v;

  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_LE (v);
}

/* The number of leading ASCII digits in the 8 bytes of @chunk (0..8). */
static inline int
leading_digits (guint64 chunk)
{
  const guint64 high = G_GUINT64_CONSTANT (0x8080808080808080);
  guint64 low7 = chunk & ~high;
  guint64 at_least_0 = (low7 + G_GUINT64_CONSTANT (0x5050505050505050)) & high;
  guint64 above_9 = (low7 + G_GUINT64_CONSTANT (0x4646464646464646)) & high;
  guint64 not_digit = (~at_least_0 | above_9 | chunk) & high;

  return not_digit == 0 ? 8 : __builtin_ctzll (not_digit) / 8;
}

/* The value of the first @n (1..8) digits of @chunk. */
static inline guint64
parse_digits8 (guint64 chunk,
               int     n)
{
  const guint64 pair_mask = G_GUINT64_CONSTANT (0x000000FF000000FF);
  /* The digits' values, shifted so that missing leading digits are 0. */
  guint64 v = (chunk & G_GUINT64_CONSTANT (0x0F0F0F0F0F0F0F0F)) << (8 * (8 - n));

  /* Digits to pairs (0..99), then pairs to one number, as 100·a + b and
   * 10^6·c + 10^4·d in the two 32-bit halves (D. Lemire's fast_float). */
  v = (v * 10) + (v >> 8);
  v = (((v & pair_mask) * G_GUINT64_CONSTANT (0x000F424000000064)) +
       (((v >> 16) & pair_mask) * G_GUINT64_CONSTANT (0x0000271000000001))) >> 32;

  return v & 0xFFFFFFFF;
}

/* Scans the run of digits at @s. Stores its value in @value when it has at
 * most MAX_EXACT_DIGITS digits, and its length in @n_digits. The run ends
 * before @line_end, whose byte is never a digit, so the byte-wise tail
 * needs no bound; 8-byte loads stay below @buf_end. */
G_ALWAYS_INLINE static inline const char *
scan_digits (const char  *s,
             const char  *buf_end,
             guint64     *value,
             gsize       *n_digits)
{
  const char *start = s;
  guint64 v = 0;

  while (s + 8 <= buf_end)
    {
      int n = leading_digits (load_le64 (s));

      if (n == 0)
        goto done;
      if ((gsize) (s - start) + n <= MAX_EXACT_DIGITS)
        v = v * powers_of_ten[n] + parse_digits8 (load_le64 (s), n);
      s += n;
      if (n < 8)
        goto done;
    }

  while (IS_DIGIT (*s))
    {
      if ((gsize) (s - start) < MAX_EXACT_DIGITS)
        v = v * 10 + (guint64) (*s - '0');
      s++;
    }

done:
  *n_digits = (gsize) (s - start);
  *value = v;
  return s;
}

/* scan_digits() for an exponent, whose first digit is known: in-range
 * exponents have at most 4 digits, read here without a loop. */
static inline const char *
scan_exponent (const char  *s,
               const char  *buf_end,
               guint64     *value,
               gsize       *n_digits)
{
  guint64 v = (guint64) (s[0] - '0');

  if (IS_DIGIT (s[1]))
    {
      v = v * 10 + (guint64) (s[1] - '0');
      if (IS_DIGIT (s[2]))
        {
          v = v * 10 + (guint64) (s[2] - '0');
          if (IS_DIGIT (s[3]))
            {
              if (G_UNLIKELY (IS_DIGIT (s[4])))
                return scan_digits (s, buf_end, value, n_digits);
              *value = v * 10 + (guint64) (s[3] - '0');
              *n_digits = 4;
              return s + 4;
            }
          *value = v;
          *n_digits = 3;
          return s + 3;
        }
      *value = v;
      *n_digits = 2;
      return s + 2;
    }

  *value = v;
  *n_digits = 1;
  return s + 1;
}

/* The bits of m·2^e, for odd m of @len bits that passed the domain check. */
static inline guint64
assemble (guint64 m,
          int     len,
          int     e)
{
  int top = e + len - 1;

  if (top >= -1022)
    return ((guint64) (top + 1023) << FRAC_BITS) | ((m << (53 - len)) & FRAC_MASK);

  return m << (e + 1074);
}

/* The bits of @v (below 2^54, and even from 2^53), which a double holds
 * exactly, made by the processor's conversion: exact whatever the
 * rounding mode, and raising no exception. */
static inline guint64
exact_double_bits (guint64 v)
{
  double d = (double) (gint64) v;
  guint64 bits;

  memcpy (&bits, &d, sizeof bits);
  return bits;
}

#ifdef SERIO_CODEC_SSE2
#ifdef SERIO_CODEC_AVX2
/* The constants of the AVX2 reader, in one block that one register
 * addresses, so that each is an operand in memory rather than a register
 * of its own, loaded again where registers run short. */
typedef struct
{
  __m256i zero_char;            /* '0' in every byte (nondigit_mask32()) */
  __m256i ten;                  /* 10 in every byte (nondigit_mask32()) */
  __m256i comma;                /* ',' in every byte (comma_mask32()) */
  /* The byte shuffle that moves the first n of 16 bytes to their end,
   * zeros before them: the 16 bytes from digits_to_end + n (0x80 gives a
   * zero). */
  guint8  digits_to_end[32];
  /* For the n digits that end a 4-byte little-endian chunk, the mask that
   * keeps them, as values 0..9, and zeros the bytes before them */
  guint32 last_digits[5];
  /* parse_digits16_sse2()'s weights: 10 and 1 in byte pairs, 100 and 1,
   * 10^4 and 1 in 16-bit pairs, 10^8 in 64-bit halves */
  __m128i pair_weights;
  __m128i four_weights;
  __m128i eight_weights;
  __m128i e8;
} ParseConstants;

static const ParseConstants parse_constants = {
  { 0x3030303030303030, 0x3030303030303030, 0x3030303030303030, 0x3030303030303030 },
  { 0x0A0A0A0A0A0A0A0A, 0x0A0A0A0A0A0A0A0A, 0x0A0A0A0A0A0A0A0A, 0x0A0A0A0A0A0A0A0A },
  { 0x2C2C2C2C2C2C2C2C, 0x2C2C2C2C2C2C2C2C, 0x2C2C2C2C2C2C2C2C, 0x2C2C2C2C2C2C2C2C },
  {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
  },
  { 0, 0x0F000000, 0x0F0F0000, 0x0F0F0F00, 0x0F0F0F0F },
  { 0x010A010A010A010A, 0x010A010A010A010A },
  { 0x0001006400010064, 0x0001006400010064 },
  { 0x0001271000012710, 0x0001271000012710 },
  { 100000000, 100000000 },
};

/* parse_constants, through a pointer opaque to the compiler, which would
 * otherwise rebuild the constants for every token (see digits16_sse2()),
 * or keep each in a register of its own (and load it again, each token,
 * when registers run short). */
static inline const ParseConstants *
reader_constants (void)
{
  const ParseConstants *k = &parse_constants;

  __asm__ ("" : "+r" (k));
  return k;
}

/* Bit i set when byte i of the 32 at @s is a comma. */
static inline guint32
comma_mask32 (const char *s)
{
  __m256i a = _mm256_loadu_si256 ((const __m256i *) (const void *) s);

  return (guint32) _mm256_movemask_epi8 (_mm256_cmpeq_epi8 (a, _mm256_load_si256 (&reader_constants ()->comma)));
}
#endif

/* Bit i set when byte i of the 32 at @s is not an ASCII digit, and bit
 * 32 too unless the form counts trailing zeros with BMI1's tzcnt (which
 * gives 64 for none: see trailing_zeros()); the first 16 bytes minus '0'
 * in @low16. The bits of the bytes that are not digits, rather than of
 * those that are, so that counting a run of digits takes no inversion. */
static inline guint64
nondigit_mask32 (const char *s,
                 __m128i    *low16)
{
#ifdef SERIO_CODEC_AVX2
  /* one load, one compare of all 32: a byte minus '0' of 10 or more */
  const ParseConstants *k = reader_constants ();
  __m256i a = _mm256_sub_epi8 (_mm256_loadu_si256 ((const __m256i *) (const void *) s),
                               _mm256_load_si256 (&k->zero_char));
  guint32 mask = (guint32) _mm256_movemask_epi8 (_mm256_cmpeq_epi8 (_mm256_max_epu8 (a, _mm256_load_si256 (&k->ten)), a));

  *low16 = _mm256_castsi256_si128 (a);
  return mask;
#else
  const __m128i ten = _mm_set1_epi8 (10);
  const __m128i zero_char = _mm_set1_epi8 ('0');
  __m128i a = _mm_sub_epi8 (_mm_loadu_si128 ((const __m128i *) (const void *) s), zero_char);
  __m128i b = _mm_sub_epi8 (_mm_loadu_si128 ((const __m128i *) (const void *) (s + 16)), zero_char);
  guint32 low = (guint32) _mm_movemask_epi8 (_mm_cmpeq_epi8 (_mm_max_epu8 (a, ten), a));
  guint32 high = (guint32) _mm_movemask_epi8 (_mm_cmpeq_epi8 (_mm_max_epu8 (b, ten), b));

  *low16 = a;
  return (guint64) low | ((guint64) high << 16) | (G_GUINT64_CONSTANT (1) << 32);
#endif
}

/* The count of trailing zeros of a mask of nondigit_mask32()'s, shifted
 * right by at most 31: never 0 where the form has no tzcnt. */
static inline gsize
trailing_zeros (guint64 mask)
{
#ifdef SERIO_CODEC_AVX2
  return (gsize) _tzcnt_u64 (mask);
#else
  return (gsize) __builtin_ctzll (mask);
#endif
}

/* The value of 16 digits (0..9 in each byte, the first the most
 * significant): pairs, then groups of four, then of eight, with SSE2's
 * multiply-adds (after W. Muła and D. Lemire). */
static inline guint64
parse_digits16_sse2 (__m128i digits)
{
#ifdef SERIO_CODEC_AVX2
  /* SSSE3's byte multiply-add makes the pairs in one step, SSE4.1's pack
   * and one 64-bit move the rest (simdjson's parse_eight_digits, twice) */
  const ParseConstants *k = reader_constants ();
  __m128i pairs = _mm_maddubs_epi16 (digits, _mm_load_si128 (&k->pair_weights));     /* 10·a + b */
  __m128i fours = _mm_madd_epi16 (pairs, _mm_load_si128 (&k->four_weights));         /* 100·a + b */
  __m128i fours16 = _mm_packus_epi32 (fours, fours);
  __m128i eights = _mm_madd_epi16 (fours16, _mm_load_si128 (&k->eight_weights));     /* 10^4·a + b */
  /* 10^8·a + b, the eights in the low 64 bits */
  __m128i high = _mm_mul_epu32 (eights, _mm_load_si128 (&k->e8));
  __m128i low = _mm_srli_epi64 (eights, 32);

  return (guint64) _mm_cvtsi128_si64 (_mm_add_epi64 (high, low));
#else
  __m128i even = _mm_and_si128 (digits, _mm_set1_epi16 (0x00FF));
  __m128i odd = _mm_srli_epi16 (digits, 8);
  __m128i pairs = _mm_add_epi16 (_mm_mullo_epi16 (even, _mm_set1_epi16 (10)), odd);
  __m128i fours = _mm_madd_epi16 (pairs, _mm_set1_epi32 (0x00010064));          /* 100·a + b */
  __m128i fours16 = _mm_packs_epi32 (fours, fours);
  __m128i eights = _mm_madd_epi16 (fours16, _mm_set1_epi32 (0x00012710));       /* 10^4·a + b */
  guint32 high = (guint32) _mm_cvtsi128_si32 (eights);
  guint32 low = (guint32) _mm_cvtsi128_si32 (_mm_srli_si128 (eights, 4));

  return (guint64) high * 100000000 + low;
#endif
}
#endif

/* The value of the four digits (0..9) in the bytes of @v, the first in the
 * lowest: missing leading digits are zeros. */
static inline guint64
parse_digits4_aligned (guint64 v)
{
  v = (v * 10 + (v >> 8)) & 0x00FF00FF;                   /* two pairs */

  return ((v * 0x00640001) >> 16) & 0xFFFF;               /* 100·a + b */
}

/* The value of the first @n (1..4) digits of the 4 bytes at @p. */
static inline guint64
parse_digits4 (const char *p,
               int         n)
{
  guint32 chunk;

  memcpy (&chunk, p, sizeof chunk);
  return parse_digits4_aligned ((GUINT32_FROM_LE (chunk) & 0x0F0F0F0F) << (32 - 8 * n));
}

/* The common tokens, straight through: a significand of at most 16 digits,
 * plain or with an exponent of at most 4 digits, all checks passed, after
 * the sign at @s, of the token that starts at @token (@s or the byte
 * before), which has 33 readable bytes. Returns the end of the token and
 * its bits, or %NULL for parse_token_general() to take the token again,
 * from its start, and give its value or the exact error. */
G_ALWAYS_INLINE static inline const char *
parse_token_fast (const char *token,
                  const char *s,
                  const char *line_end,
                  guint64     sign,
                  guint64    *bits,
                  gboolean    simd)
{
  const char *t;
  guint64 v, e_abs, vbits;
  gsize nd, q, ne;
  int e, top;
  gboolean e_negative;
#ifdef SERIO_CODEC_SSE2
  __m128i low16 = _mm_setzero_si128 ();
  guint64 nondigits = simd ? nondigit_mask32 (s, &low16) : 0;
#endif
#ifdef SERIO_CODEC_AVX2
  /* Where the token must end, found apart from its parse: its first comma
   * or the end of its line, whichever comes first (a token without a
   * comma in its 32 bytes gets 64 of them, tzcnt of a 32-bit mask in a
   * 64-bit register, where no valid token of this path ends). The next
   * token's address then depends on one load, one compare and a count,
   * not on the sign, the digits, the "p" and the exponent, so that the
   * next parse can start before this one ends; the parse only checks
   * that it ends there. As the bytes before that end are digits, "p" and
   * "-", ending there is ending at a comma or at @line_end, as the other
   * forms check it. Opaque to the compiler, which would otherwise take
   * the parse's end for it, being equal. */
  const char *end = token + _tzcnt_u64 (comma_mask32 (token));

  end = end < line_end ? end : line_end;
  __asm__ ("" : "+r" (end));
# define TOKEN_ENDS_AT(t) ((t) == end)
# define TOKEN_END(t) end
#else
# define TOKEN_ENDS_AT(t) ((t) == line_end || *(t) == ',')
# define TOKEN_END(t) (t)
#endif
#ifdef SERIO_CODEC_SSE2
  if (simd)
    nd = trailing_zeros (nondigits);
  else
#endif
    {
      nd = leading_digits (load_le64 (s));
      if (nd == 8)
        {
          nd += leading_digits (load_le64 (s + 8));
          if (nd == 16 && IS_DIGIT (s[16]))
            return NULL;
        }
    }

  if (G_UNLIKELY (nd - 1 >= 16))       /* nd == 0 || nd > 16 */
    return NULL;
  if (G_UNLIKELY (*s == '0'))
    {
      if (nd == 1 && (s + 1 == line_end || s[1] == ','))
        {
          *bits = sign;
          return s + 1;
        }
      return NULL;
    }

#ifdef SERIO_CODEC_AVX2
  /* Any count of digits, with no branch: moved to the end of the 16
   * bytes, zeros before them (SSSE3's byte shuffle) */
  v = parse_digits16_sse2 (_mm_shuffle_epi8 (low16, _mm_loadu_si128 ((const __m128i *) (const void *)
                                                                     (reader_constants ()->digits_to_end + nd))));
#else
#ifdef SERIO_CODEC_SSE2
  if (simd && nd == 16)
    v = parse_digits16_sse2 (low16);
  else
#endif
  if (nd <= 8)
    v = parse_digits8 (load_le64 (s), nd);
  else
    v = parse_digits8 (load_le64 (s), nd - 8) * 100000000 + parse_digits8 (load_le64 (s + nd - 8), 8);
#endif

  t = s + nd;
  if (TOKEN_ENDS_AT (t))
    {
      /* below 10^16 < 2^54 (plain digits are below 2^62): an odd one from
       * 2^53 has more than 53 significant bits */
      if (G_UNLIKELY (v >= TWO_POW_53 && (v & 1) != 0))
        return NULL;
      *bits = sign | exact_double_bits (v);
      return TOKEN_END (t);
    }

  if (G_UNLIKELY (*t != 'p'))
    return NULL;
  q = nd + 1;
  e_negative = s[q] == '-';
  q += e_negative;
#ifdef SERIO_CODEC_SSE2
  if (simd)
    ne = trailing_zeros (nondigits >> q);
  else
#endif
    ne = leading_digits (load_le64 (s + q));
  /* one to four digits, the first not 0 */
  if (G_UNLIKELY (ne - 1 >= 4 || s[q] == '0'))
    return NULL;
  t = s + q + ne;
#ifdef SERIO_CODEC_AVX2
  /* from the 4 bytes that end with them, which the token holds when it
   * has 4 bytes or more (shorter ones take the general path) */
  {
    guint32 chunk;

    if (G_UNLIKELY (q + ne < 4))
      return NULL;
    memcpy (&chunk, t - 4, sizeof chunk);
    e_abs = parse_digits4_aligned (GUINT32_FROM_LE (chunk) & reader_constants ()->last_digits[ne]);
  }
#else
  e_abs = parse_digits4 (s + q, ne);
#endif
  if (G_UNLIKELY (!TOKEN_ENDS_AT (t) || (v & 1) == 0 || v >= TWO_POW_53))
    return NULL;

  /* v·2^e is the double that holds v (odd, below 2^53) with e added to
   * its exponent: when the biased exponent that gives is that of a normal
   * number, 1..2046; the general path takes the others, subnormal
   * numbers among them. An integer below 2^62 (an exponent of 1023 + 61
   * or less) must be written as digits: a value with a positive exponent
   * (e_abs is at least 1, its first digit not 0) is an integer. */
  e = e_negative ? -(int) e_abs : (int) e_abs;
  vbits = exact_double_bits (v);
  top = (int) (vbits >> FRAC_BITS) + e;
  if (G_UNLIKELY ((guint) (top - 1) >= 2046 || (!e_negative && top <= 1023 + 61)))
    return NULL;

  *bits = sign | (vbits + ((guint64) (gint64) e << FRAC_BITS));
  return TOKEN_END (t);
}
#undef TOKEN_ENDS_AT
#undef TOKEN_END

#define PROBLEM(c, r) G_STMT_START { problem->code = (c); problem->reason = (r); return NULL; } G_STMT_END

/* Parses the token at @s, which ends at a comma or at @line_end. Returns the
 * end of the token and its bits in @bits, or %NULL with @problem set. */
static const char *
parse_token_general (const char *s,
             const char *line_end,
             const char *buf_end,
             guint64    *bits,
             Problem    *problem)
{
  guint64 sign = 0;
  guint64 v;
  gsize n_digits;

  if (*s == '-')
    {
      sign = SIGN_BIT;
      s++;
    }

  if (G_LIKELY (*s >= '1' && *s <= '9'))
    {
      s = scan_digits (s, buf_end, &v, &n_digits);

      if (*s == 'p')
        {
          gboolean odd = (s[-1] - '0') & 1;
          gboolean e_negative = FALSE;
          guint64 e_abs;
          gsize e_digits;
          int len, e;

          s++;
          if (*s == '-')
            {
              e_negative = TRUE;
              s++;
            }
          if (G_UNLIKELY (*s < '1' || *s > '9'))
            PROBLEM (SERIO_ERROR_SYNTAX,
                     N_("the exponent must be a nonzero decimal integer without sign or leading zero"));
          s = scan_exponent (s, buf_end, &e_abs, &e_digits);

          if (G_UNLIKELY (s != line_end && *s != ','))
            PROBLEM (SERIO_ERROR_SYNTAX, N_("unexpected character in a value"));
          if (G_UNLIKELY (!odd))
            PROBLEM (SERIO_ERROR_SYNTAX, N_("the significand of a “p” value must be odd"));
          if (G_UNLIKELY (n_digits > 16 || v >= TWO_POW_53))
            PROBLEM (SERIO_ERROR_DOMAIN, N_("the significand is not below 2^53"));
          if (G_UNLIKELY (e_digits > 4))
            PROBLEM (SERIO_ERROR_DOMAIN, N_("the value is out of the range of a 64-bit float"));

          e = e_negative ? -(int) e_abs : (int) e_abs;
          len = bit_length (v);
          if (G_UNLIKELY (e < -1074 || e + len - 1 > 1023))
            PROBLEM (SERIO_ERROR_DOMAIN, N_("the value is out of the range of a 64-bit float"));
          if (G_UNLIKELY (e > 0 && e + len <= 62))
            PROBLEM (SERIO_ERROR_SYNTAX, N_("an integer below 2^62 must be written as plain digits"));

          *bits = sign | assemble (v, len, e);
          return s;
        }

      if (G_UNLIKELY (s != line_end && *s != ','))
        PROBLEM (SERIO_ERROR_SYNTAX, N_("unexpected character in a value"));
      if (G_UNLIKELY (n_digits > MAX_EXACT_DIGITS || v >= TWO_POW_62))
        PROBLEM (SERIO_ERROR_DOMAIN, N_("an integer in plain digits must be below 2^62"));

      {
        int tz = __builtin_ctzll (v);
        int len = bit_length (v) - tz;

        if (G_UNLIKELY (len > 53))
          PROBLEM (SERIO_ERROR_DOMAIN, N_("the integer cannot be held exactly by a 64-bit float"));
        *bits = sign | assemble (v >> tz, len, tz);
      }
      return s;
    }

  switch (*s)
    {
    case '0':
      s++;
      if (G_UNLIKELY (s != line_end && *s != ','))
        PROBLEM (SERIO_ERROR_SYNTAX, N_("a number must not start with a leading zero"));
      *bits = sign;
      return s;

    case 'i':
      if (s[1] == 'n' && s[2] == 'f' && (s + 3 == line_end || s[3] == ','))
        {
          *bits = sign | INF_BITS;
          return s + 3;
        }
      break;

    case 'n':
      if (sign == 0 && s[1] == 'a' && s[2] == 'n' && (s + 3 == line_end || s[3] == ','))
        {
          *bits = SERIO_CANONICAL_NAN_BITS;
          return s + 3;
        }
      break;

    case ',':
      if (sign == 0)
        PROBLEM (SERIO_ERROR_SYNTAX, N_("the value is empty"));
      break;

    default:
      if (s == line_end && sign == 0)
        PROBLEM (SERIO_ERROR_SYNTAX, N_("the value is empty"));
      break;
    }

  PROBLEM (SERIO_ERROR_SYNTAX, N_("not a valid value"));
}

#undef PROBLEM

/* parse_token_general() with the common tokens first: those that start at
 * or before @fast_limit, @buf_end - 33 as an integer, and so have 33
 * readable bytes (in a shorter buffer, none does). */
G_ALWAYS_INLINE static inline const char *
parse_token (const char *s,
             const char *line_end,
             const char *buf_end,
             guintptr    fast_limit,
             guint64    *bits,
             Problem    *problem,
             gboolean    simd)
{
  gboolean negative = *s == '-';
  guint64 general_bits;
  const char *end;

  if (G_LIKELY ((guintptr) s <= fast_limit))
    {
      end = parse_token_fast (s, s + negative, line_end, (guint64) negative << 63, bits, simd);
      if (G_LIKELY (end != NULL))
        return end;
    }

  /* Its own variable, whose address the call takes, so that @bits can
   * stay in a register on the fast path. */
  end = parse_token_general (s, line_end, buf_end, &general_bits, problem);
  if (end != NULL)
    *bits = general_bits;
  return end;
}

/* The loop of each form's parse_tokens_<form>() (SERIO_CODEC_DEFINE_KERNEL)
 * with @store known: whether @values is non-%NULL, so that the loop does
 * not test it for every token. */
G_ALWAYS_INLINE static inline gsize
parse_tokens_storing (const char         **s_inout,
                      const char          *seg_end,
                      const char          *buf_end,
                      double              *values,
                      gsize                max_tokens,
                      gboolean            *ended,
                      SerioCodecProblem   *problem,
                      gboolean             simd,
                      gboolean             store)
{
  const char *s = *s_inout;
  /* buf_end - 33 as an integer, which does not wrap: no buffer ends
   * below address 33 (were one to, 0 keeps every token off the fast
   * path) */
  guintptr fast_limit = (guintptr) buf_end >= 33 ? (guintptr) buf_end - 33 : 0;
  gsize n = 0;

  *ended = FALSE;
  problem->reason = NULL;

  while (n < max_tokens)
    {
      guint64 bits;
      const char *next;

      /* For a reader that looks through a line for its line feed a
       * segment at a time, just before it parses the segment
       * (SERIAL_SEGMENT in serio-reader.c): the look then finds the
       * segment in the cache instead of waiting for memory, and so does
       * a worker thread whose window is not in the cache. One
       * instruction a token. The address is made as an integer: it may
       * lie past the text. */
      __builtin_prefetch ((const void *) ((guintptr) s + SERIO_CODEC_PREFETCH));
      next = parse_token (s, seg_end, buf_end, fast_limit, &bits, problem, simd);

      if (G_UNLIKELY (next == NULL))
        break;
      if (store)
        memcpy (values + n, &bits, sizeof bits);
      n++;
      if (next == seg_end)
        {
          s = next;
          *ended = TRUE;
          break;
        }
      s = next + 1;
    }

  *s_inout = s;
  return n;
}

/* ------------------------------------------------------------------ */
/* Kernels                                                            */
/* ------------------------------------------------------------------ */

/* Defines _serio_codec_kernel_<form>, the SerioCodecKernel of one form:
 * the loops above with @simd fixed, inlined in functions of their own, so
 * that the caller chooses the form once per call and the loops test
 * nothing of it per value. The parser's loop is inlined twice, to know
 * whether it stores the values. serio-codec.c defines the portable and
 * SSE2 forms with it, serio-codec-avx2.c the AVX2 one. */
#define SERIO_CODEC_DEFINE_KERNEL(form, simd)                                      \
  static gsize                                                                     \
  parse_tokens_##form (const char         **s_inout,                               \
                       const char          *seg_end,                               \
                       const char          *buf_end,                               \
                       double              *values,                                \
                       gsize                max_tokens,                            \
                       gboolean            *ended,                                 \
                       SerioCodecProblem   *problem)                               \
  {                                                                                \
    if (values != NULL)                                                            \
      return parse_tokens_storing (s_inout, seg_end, buf_end, values, max_tokens,  \
                                   ended, problem, (simd), TRUE);                  \
                                                                                   \
    return parse_tokens_storing (s_inout, seg_end, buf_end, NULL, max_tokens,      \
                                 ended, problem, (simd), FALSE);                   \
  }                                                                                \
                                                                                   \
  static char *                                                                    \
  write_tokens_##form (char         *out,                                          \
                       const double *values,                                       \
                       gsize         n_values,                                     \
                       gboolean      leading_comma)                                \
  {                                                                                \
    return write_tokens (out, values, n_values, leading_comma, (simd));            \
  }                                                                                \
                                                                                   \
  const SerioCodecKernel _serio_codec_kernel_##form = {                            \
    parse_tokens_##form,                                                           \
    write_tokens_##form,                                                           \
  }
