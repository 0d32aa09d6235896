/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-ryu.c: the serio tool's shortest double, float32, float16 and
 * bfloat16 printers, with and without a 128-bit integer type
 *
 * Copyright 2026 The libserio authors
 *
 * tools/serio-ryu.c is built twice into this test: as it is, and with
 * SERIO_RYU_NO_INT128, which 32-bit targets get. Both must write the same
 * text for every double, and the text must read back to the same bits. The
 * CLI tests compare the first with Python's repr().
 *
 * The narrower formats are checked against a brute-force search that
 * knows nothing of Ryū: for 1, 2, 3… digits it takes the two decimals of
 * that many digits around the value (glibc's correctly rounded printf and
 * its neighbour) and asks whether either lies in the value's rounding
 * interval, comparing exact decimal expansions of the interval's bounds
 * (midpoints between neighbours, which a double holds exactly). The first
 * digit count with a decimal inside gives the shortest; the nearer one
 * wins, ties to even (printf's own rule). float16 and bfloat16 are
 * checked over all 65536 patterns, float32 over every power of two and
 * its neighbours, its subnormals' first values and a random sample.
 */

#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "serio-ryu.h"

gsize serio_tool_write_double_portable (double value,
                                        char   buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize serio_tool_write_float32_portable (float value,
                                         char  buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize serio_tool_write_float16_portable (guint16 bits,
                                         char    buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize serio_tool_write_bfloat16_portable (guint16 bits,
                                          char    buf[SERIO_TOOL_DOUBLE_BUFSIZE]);

static guint64
xorshift (guint64 *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static void
check_bits (guint64 bits)
{
  char native[SERIO_TOOL_DOUBLE_BUFSIZE + 1], portable[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  double value, read;
  gsize n, p;

  memcpy (&value, &bits, sizeof value);
  n = serio_tool_write_double (value, native);
  p = serio_tool_write_double_portable (value, portable);
  native[n] = portable[p] = '\0';
  g_assert_cmpstr (native, ==, portable);

  if (value != value)
    {
      g_assert_cmpstr (native, ==, "nan");
      return;
    }

  read = g_ascii_strtod (native, NULL);
  if (memcmp (&read, &value, sizeof read) != 0)
    g_error ("%s does not read back to %016" G_GINT64_MODIFIER "x", native, bits);
}

static void
test_random_bits (void)
{
  guint64 state = G_GUINT64_CONSTANT (0x9e3779b97f4a7c15);

  for (guint i = 0; i < 2000000; i++)
    check_bits (xorshift (&state));
}

static void
test_edges (void)
{
  /* Every power of two and its neighbours, every exponent's extremes,
   * the subnormals' first values. */
  for (guint64 e = 0; e < 2048; e++)
    {
      guint64 p = e << 52;

      check_bits (p);
      check_bits (p + 1);
      check_bits (p | G_GUINT64_CONSTANT (0xfffffffffffff));
      if (p > 0)
        check_bits (p - 1);
      check_bits (p | G_GUINT64_CONSTANT (1) << 63);
    }
  for (guint64 b = 1; b < 100000; b++)
    check_bits (b);
}

static void
test_layout (void)
{
  static const struct
  {
    double      value;
    const char *text;
  } cases[] = {
    { 0.1, "0.1" }, { -0.0, "-0" }, { 0.0, "0" }, { 1.0, "1" }, { 100.0, "100" },
    { 1e15, "1000000000000000" }, { 1e16, "1e+16" }, { 1.5e16, "1.5e+16" },
    { 0.0001, "0.0001" }, { 0.00012345, "0.00012345" }, { 1e-5, "1e-05" },
    { 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" },
    { 2.5000000000000004, "2.5000000000000004" }, { 123456789012345680.0, "1.2345678901234568e+17" },
    { 9007199254740993.0, "9007199254740992" }, { 1e23, "1e+23" }, { -1e-100, "-1e-100" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char buf[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
      gsize n = serio_tool_write_double (cases[i].value, buf);

      buf[n] = '\0';
      g_assert_cmpstr (buf, ==, cases[i].text);
    }
}

/* ---- The narrower formats against a brute-force search ---- */

typedef struct
{
  const char *name;
  guint       mantissa_bits;
  guint       exponent_bits;
  int         bias;
  gsize     (*write) (guint32 bits, char *buf);
  gsize     (*write_portable) (guint32 bits, char *buf);
} Format;

static gsize
write_float32 (guint32 bits, char *buf)
{
  float value;

  memcpy (&value, &bits, sizeof value);
  return serio_tool_write_float32 (value, buf);
}

static gsize
write_float32_portable (guint32 bits, char *buf)
{
  float value;

  memcpy (&value, &bits, sizeof value);
  return serio_tool_write_float32_portable (value, buf);
}

static gsize
write_float16 (guint32 bits, char *buf)
{
  return serio_tool_write_float16 ((guint16) bits, buf);
}

static gsize
write_float16_portable (guint32 bits, char *buf)
{
  return serio_tool_write_float16_portable ((guint16) bits, buf);
}

static gsize
write_bfloat16 (guint32 bits, char *buf)
{
  return serio_tool_write_bfloat16 ((guint16) bits, buf);
}

static gsize
write_bfloat16_portable (guint32 bits, char *buf)
{
  return serio_tool_write_bfloat16_portable ((guint16) bits, buf);
}

static const Format float32_format = { "float32", 23, 8, 127, write_float32, write_float32_portable };
static const Format float16_format = { "float16", 10, 5, 15, write_float16, write_float16_portable };
static const Format bfloat16_format = { "bfloat16", 7, 8, 127, write_bfloat16, write_bfloat16_portable };

/* The exact value of a positive finite pattern, computed from its fields
 * (a double holds every value and midpoint of these formats). */
static double
format_value (const Format *format,
              guint32       bits)
{
  guint32 mantissa = bits & ((1u << format->mantissa_bits) - 1);
  guint32 exponent = bits >> format->mantissa_bits;

  if (exponent == 0)
    return ldexp (mantissa, 1 - format->bias - (int) format->mantissa_bits);
  return ldexp ((double) ((1u << format->mantissa_bits) | mantissa),
                (int) exponent - format->bias - (int) format->mantissa_bits);
}

/* A positive decimal: its significant digits without leading or trailing
 * zeros, and the power of ten of the first. */
typedef struct
{
  char digits[400];
  int  exponent;
} Decimal;

static void
decimal_normalize (Decimal    *d,
                   const char *digits,
                   int         first_exponent)
{
  gsize len;

  while (*digits == '0' && digits[1] != '\0')
    {
      digits++;
      first_exponent--;
    }
  g_assert_cmpuint (strlen (digits), <, sizeof d->digits);
  strcpy (d->digits, digits);
  len = strlen (d->digits);
  while (len > 1 && d->digits[len - 1] == '0')
    d->digits[--len] = '\0';
  d->exponent = first_exponent;
  g_assert_cmpint (d->digits[0], !=, '0');
}

/* Parses printf's "%e" layout, or the printer's (positional or
 * scientific), into a Decimal: digits, one optional point (any character
 * that is not a digit, so that a locale's comma would parse too, and be
 * caught by the comparison of whole texts), an optional exponent. */
static void
decimal_parse (Decimal    *d,
               const char *text)
{
  char digits[400];
  gsize n = 0;
  int int_digits = -1, e = 0;
  const char *p = text;

  if (*p == '-')
    p++;
  for (; *p != '\0' && *p != 'e'; p++)
    {
      if (g_ascii_isdigit (*p))
        {
          g_assert_cmpuint (n, <, sizeof digits - 1);
          digits[n++] = *p;
        }
      else
        {
          g_assert_cmpint (int_digits, ==, -1);
          int_digits = (int) n;
        }
    }
  digits[n] = '\0';
  if (int_digits == -1)
    int_digits = (int) n;
  if (*p == 'e')
    e = atoi (p + 1);
  decimal_normalize (d, digits, int_digits - 1 + e);
}

/* The exact decimal expansion of a positive double: glibc's printf is
 * exact at any precision, and 300 digits hold every value here (a double
 * of k bits below 1 has at most about 0.7 k + 16 significant digits). */
static void
decimal_of_double (Decimal *d,
                   double   value)
{
  char text[400];

  g_snprintf (text, sizeof text, "%.300e", value);
  decimal_parse (d, text);
  g_assert_cmpuint (strlen (d->digits), <, 280);
}

static int
decimal_compare (const Decimal *a,
                 const Decimal *b)
{
  int cmp;

  if (a->exponent != b->exponent)
    return a->exponent < b->exponent ? -1 : 1;
  cmp = strcmp (a->digits, b->digits);
  return (cmp > 0) - (cmp < 0);
}

/* The digits d (exactly n of them) with first digit at 10^exponent. */
static void
decimal_of_integer (Decimal *d,
                    guint64  digits,
                    int      exponent)
{
  char text[32];

  g_snprintf (text, sizeof text, "%" G_GUINT64_FORMAT, digits);
  decimal_normalize (d, text, exponent);
}

typedef struct
{
  Decimal  value, low, high;  /* the value and its interval's bounds */
  gboolean even;              /* bounds included */
} Interval;

static gboolean
interval_holds (const Interval *interval,
                const Decimal  *d)
{
  int low = decimal_compare (d, &interval->low), high = decimal_compare (d, &interval->high);

  if (interval->even)
    return low >= 0 && high <= 0;
  return low > 0 && high < 0;
}

/* The shortest decimal in the rounding interval of the positive finite
 * pattern @bits, nearest the value, ties to even, by trying every digit
 * count from 1 up. */
static void
brute_force_shortest (const Format *format,
                      guint32       bits,
                      Decimal      *shortest)
{
  guint32 infinity = ((1u << format->exponent_bits) - 1) << format->mantissa_bits;
  double value = format_value (format, bits);
  double below = bits > 1 ? format_value (format, bits - 1) : 0.0;
  double above;
  Interval interval;

  /* Above the largest value, the bound is where rounding gives infinity:
   * half an ulp of the last binade past it. */
  if (bits + 1 == infinity)
    above = value + (value - below);
  else
    above = format_value (format, bits + 1);

  decimal_of_double (&interval.value, value);
  decimal_of_double (&interval.low, (below + value) / 2);
  decimal_of_double (&interval.high, (value + above) / 2);
  interval.even = (bits & 1) == 0;
  g_assert_true (interval_holds (&interval, &interval.value));

  for (int n = 1; n <= 17; n++)
    {
      char text[64];
      Decimal nearest, other;
      guint64 digits, limit = 1;
      int exponent, side;
      const char *e;

      /* The nearest decimal of n digits: printf rounds exactly. */
      g_snprintf (text, sizeof text, "%.*e", n - 1, value);
      e = strchr (text, 'e');
      g_assert_nonnull (e);
      exponent = atoi (e + 1);
      digits = 0;
      for (const char *p = text; p < e; p++)
        if (g_ascii_isdigit (*p))
          digits = digits * 10 + (guint64) (*p - '0');
      for (int k = 1; k < n; k++)
        limit *= 10;                         /* 10^(n-1) */
      g_assert_cmpuint (digits, >=, limit);
      g_assert_cmpuint (digits, <, limit * 10);

      decimal_of_integer (&nearest, digits, exponent);
      if (interval_holds (&interval, &nearest))
        {
          *shortest = nearest;
          return;
        }

      /* The decimal of n digits on the value's other side. */
      side = decimal_compare (&nearest, &interval.value);
      g_assert_cmpint (side, !=, 0);
      if (side > 0)
        {
          if (digits == limit)
            decimal_of_integer (&other, limit * 10 - 1, exponent - 1);
          else
            decimal_of_integer (&other, digits - 1, exponent);
        }
      else
        {
          if (digits + 1 == limit * 10)
            decimal_of_integer (&other, limit, exponent + 1);
          else
            decimal_of_integer (&other, digits + 1, exponent);
        }
      g_assert_cmpint (decimal_compare (&other, &interval.value), ==, -side);
      if (interval_holds (&interval, &other))
        {
          *shortest = other;
          return;
        }
    }

  g_error ("%s %08x: no decimal of up to 17 digits in its interval", format->name, bits);
}

/* The text the printer must write for a positive decimal: Python's
 * repr() layout, as serio_tool_write_double() documents it. */
static void
layout (const Decimal *d,
        GString       *out)
{
  int point = d->exponent + 1;
  int n = (int) strlen (d->digits);

  g_string_truncate (out, 0);
  if (point > -4 && point <= 16)
    {
      if (point <= 0)
        {
          g_string_append (out, "0.");
          for (int k = point; k < 0; k++)
            g_string_append_c (out, '0');
          g_string_append (out, d->digits);
        }
      else if (point >= n)
        {
          g_string_append (out, d->digits);
          for (int k = n; k < point; k++)
            g_string_append_c (out, '0');
        }
      else
        {
          g_string_append_len (out, d->digits, point);
          g_string_append_c (out, '.');
          g_string_append (out, d->digits + point);
        }
    }
  else
    {
      g_string_append_c (out, d->digits[0]);
      if (n > 1)
        g_string_append_printf (out, ".%s", d->digits + 1);
      g_string_append_printf (out, "e%c%02d", d->exponent < 0 ? '-' : '+', ABS (d->exponent));
    }
}

/* Checks the printers on one pattern of @format (any sign, any class):
 * native and portable builds agree, and the text is the brute-force
 * shortest decimal, or "0", "-0", "inf", "-inf", "nan". */
static void
check_format (const Format *format,
              guint32       bits)
{
  guint32 sign = 1u << (format->mantissa_bits + format->exponent_bits);
  guint32 infinity = ((1u << format->exponent_bits) - 1) << format->mantissa_bits;
  guint32 magnitude = bits & (sign - 1);
  char native[SERIO_TOOL_DOUBLE_BUFSIZE + 1], portable[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  g_autoptr(GString) expected = g_string_new (NULL);
  gsize n, p;

  n = format->write (bits, native);
  p = format->write_portable (bits, portable);
  g_assert_cmpuint (n, <=, SERIO_TOOL_DOUBLE_BUFSIZE);
  native[n] = portable[p] = '\0';
  g_assert_cmpstr (native, ==, portable);

  if (magnitude > infinity)
    g_string_assign (expected, "nan");
  else if (magnitude == infinity)
    g_string_assign (expected, "inf");
  else if (magnitude == 0)
    g_string_assign (expected, "0");
  else
    {
      Decimal shortest;

      brute_force_shortest (format, magnitude, &shortest);
      layout (&shortest, expected);
    }
  if ((bits & sign) != 0 && magnitude <= infinity)
    g_string_prepend_c (expected, '-');

  if (strcmp (native, expected->str) != 0)
    g_error ("%s %08x: printed %s, the shortest decimal is %s",
             format->name, bits, native, expected->str);
}

/* float32 has an independent reader: glibc's strtof, correctly rounded.
 * The text must read back to the same bits (nan to a nan). */
static void
check_float32_reads_back (guint32 bits)
{
  char text[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  float value, read;
  gsize n;

  memcpy (&value, &bits, sizeof value);
  n = serio_tool_write_float32 (value, text);
  text[n] = '\0';
  read = strtof (text, NULL);
  if (isnan (value))
    g_assert_true (isnan (read));
  else if (memcmp (&read, &value, sizeof read) != 0)
    g_error ("float32 %08x printed %s, which reads back as %a", bits, text, (double) read);
}

static void
check_float32 (guint32 bits)
{
  check_format (&float32_format, bits);
  check_float32_reads_back (bits);
}

static void
test_float16_exhaustive (void)
{
  for (guint32 bits = 0; bits < 0x10000; bits++)
    check_format (&float16_format, bits);
}

static void
test_bfloat16_exhaustive (void)
{
  for (guint32 bits = 0; bits < 0x10000; bits++)
    check_format (&bfloat16_format, bits);
}

static void
test_float32_edges (void)
{
  /* Every power of two (exponent field 1 to 254, and the 23 subnormal
   * ones) with its neighbours and its binade's last value, both signs;
   * zeros, infinities, nans with payloads; the first subnormals. */
  for (guint32 e = 0; e < 256; e++)
    {
      guint32 p = e << 23;

      for (guint32 sign = 0; sign <= 1; sign++)
        {
          guint32 s = sign << 31;

          check_float32 (s | p);
          check_float32 (s | (p + 1));
          check_float32 (s | p | 0x7fffff);
          if (p > 0)
            check_float32 (s | (p - 1));
        }
    }
  for (guint32 k = 0; k < 23; k++)
    {
      check_float32 (1u << k);
      check_float32 ((1u << k) + 1);
      check_float32 ((1u << k) - 1);
    }
  for (guint32 b = 1; b < 5000; b++)
    check_float32 (b);
  check_float32 (0x7fc00000);
  check_float32 (0xffc00001);
  check_float32 (0x7f800001);
}

static void
test_float32_random (void)
{
  guint64 state = G_GUINT64_CONSTANT (0x2545f4914f6cdd1d);

  for (guint i = 0; i < 100000; i++)
    check_float32 ((guint32) (xorshift (&state) >> 32));
}

/* Every float32 reads back (strtof) and both builds agree: four billion
 * patterns, minutes of work, so only with -m thorough. */
static void
test_float32_all_read_back (void)
{
  if (!g_test_thorough ())
    {
      g_test_skip ("every float32 pattern only with -m thorough");
      return;
    }
  for (guint64 bits = 0; bits <= G_MAXUINT32; bits++)
    {
      char native[SERIO_TOOL_DOUBLE_BUFSIZE + 1], portable[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
      gsize n = write_float32 ((guint32) bits, native), p = write_float32_portable ((guint32) bits, portable);

      if (n != p || memcmp (native, portable, n) != 0)
        g_error ("float32 %08x: the builds differ", (guint32) bits);
      check_float32_reads_back ((guint32) bits);
    }
}

/* Checks that @format prints @bits as @text. */
static void
assert_prints (const Format *format,
               guint32       bits,
               const char   *text)
{
  char buf[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  gsize n = format->write (bits, buf);

  buf[n] = '\0';
  g_assert_cmpstr (buf, ==, text);
}

static void
test_narrow_layout (void)
{
  static const struct
  {
    float       value;
    const char *text;
  } cases[] = {
    { 0.1f, "0.1" }, { -0.0f, "-0" }, { 1.0f, "1" }, { 16777216.0f, "16777216" },
    { 1e16f, "1e+16" }, { 3.4028235e38f, "3.4028235e+38" }, { 1e-45f, "1e-45" },
    { 1.17549435e-38f, "1.1754944e-38" }, { 0.3f, "0.3" }, { 1e-5f, "1e-05" },
    { 123456.79f, "123456.79" }, { 0.0001f, "0.0001" },
  };
  /* float16: 0.1 is 0x2e66; the largest, 65504, prints as 65500 (which
   * reads back to it, the next value up being infinity from 65520 on, as
   * numpy prints it); the smallest is 2^-24. bfloat16: 0.1 is 0x3dcd
   * (0.10009765625), 1/3 0x3eab; the smallest, 2^-133 (9.18e-41), is
   * 9e-41, nearer than 1e-40, which is as short and also reads back. */
  static const struct
  {
    const Format *format;
    guint32       bits;
    const char   *text;
  } half_cases[] = {
    { &float16_format, 0x2e66, "0.1" }, { &float16_format, 0x7bff, "65500" },
    { &float16_format, 0x0001, "6e-08" }, { &float16_format, 0xfc00, "-inf" },
    { &bfloat16_format, 0x3dcd, "0.1" }, { &bfloat16_format, 0x3eab, "0.334" },
    { &bfloat16_format, 0x0001, "9e-41" }, { &bfloat16_format, 0x8000, "-0" },
  };
  char buf[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  gsize n;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      n = serio_tool_write_float32 (cases[i].value, buf);
      buf[n] = '\0';
      g_assert_cmpstr (buf, ==, cases[i].text);
    }

  for (gsize i = 0; i < G_N_ELEMENTS (half_cases); i++)
    assert_prints (half_cases[i].format, half_cases[i].bits, half_cases[i].text);
}

/* serio_tool_write_typed() on the doubles a typed reader gives: every
 * float16 and bfloat16 pattern's value prints as its pattern does (so the
 * double-to-pattern conversions are right for all of them), a sample of
 * float32 too, and the integers of the integer types whole. */
static void
test_typed (void)
{
  static const struct
  {
    double      value;
    SerioDtype  dtype;
    const char *text;
  } cases[] = {
    { 9223372036854775808.0, SERIO_DTYPE_UINT64, "9223372036854775808" },
    { 18446744073709549568.0, SERIO_DTYPE_UINT64, "18446744073709549568" },
    { -9223372036854775808.0, SERIO_DTYPE_INT64, "-9223372036854775808" },
    { 1152921504606846976.0, SERIO_DTYPE_INT64, "1152921504606846976" },
    { -128, SERIO_DTYPE_INT8, "-128" }, { 65535, SERIO_DTYPE_UINT16, "65535" },
    { 0, SERIO_DTYPE_INT32, "0" }, { 1, SERIO_DTYPE_BOOL, "1" }, { 0, SERIO_DTYPE_BOOL, "0" },
    { 0.1, SERIO_DTYPE_FLOAT64, "0.1" }, { 0.10000000149011612, SERIO_DTYPE_FLOAT32, "0.1" },
    { 0.10000000149011612, SERIO_DTYPE_FLOAT64, "0.10000000149011612" },
    { -INFINITY, SERIO_DTYPE_FLOAT16, "-inf" }, { NAN, SERIO_DTYPE_BFLOAT16, "nan" },
    { -0.0, SERIO_DTYPE_FLOAT32, "-0" },
  };
  char typed[SERIO_TOOL_DOUBLE_BUFSIZE + 1], own[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  guint64 state = G_GUINT64_CONSTANT (0x853c49e6748fea9b);
  gsize n, m;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpstr (serio_tool_format_typed (cases[i].value, cases[i].dtype, typed), ==, cases[i].text);

  for (guint32 bits = 0; bits < 0x10000; bits++)
    {
      guint32 f32 = bits << 16;
      float bf;
      double half;

      /* float16: its value, from the fields */
      if ((bits & 0x7c00) == 0x7c00)
        half = (bits & 0x3ff) != 0 ? NAN : (bits & 0x8000) ? -INFINITY : INFINITY;
      else
        {
          guint e = (bits >> 10) & 0x1f, f = bits & 0x3ff;

          half = e == 0 ? ldexp (f, -24) : ldexp (f | 0x400, (int) e - 25);
          if (bits & 0x8000)
            half = -half;
        }
      n = serio_tool_write_typed (half, SERIO_DTYPE_FLOAT16, typed);
      m = serio_tool_write_float16 ((guint16) bits, own);
      typed[n] = own[m] = '\0';
      if (isnan (half))
        g_assert_cmpstr (typed, ==, "nan");
      else
        g_assert_cmpstr (typed, ==, own);
      if (!isnan (half))
        g_assert_cmpuint (serio_tool_float16_bits (half), ==, bits);

      memcpy (&bf, &f32, sizeof bf);
      n = serio_tool_write_typed (bf, SERIO_DTYPE_BFLOAT16, typed);
      m = serio_tool_write_bfloat16 ((guint16) bits, own);
      typed[n] = own[m] = '\0';
      g_assert_cmpstr (typed, ==, own);
    }

  for (guint i = 0; i < 100000; i++)
    {
      guint32 bits = (guint32) (xorshift (&state) >> 32);
      float value;

      memcpy (&value, &bits, sizeof value);
      n = serio_tool_write_typed (value, SERIO_DTYPE_FLOAT32, typed);
      m = serio_tool_write_float32 (value, own);
      typed[n] = own[m] = '\0';
      g_assert_cmpstr (typed, ==, own);
    }
}

/* Under a locale whose decimal separator is a comma, the texts are the
 * same: the printers consult no locale. */
static void
test_locale (void)
{
  static const char *locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8" };
  const char *set = NULL;
  char buf[SERIO_TOOL_DOUBLE_BUFSIZE + 1];
  gsize n;

  for (gsize i = 0; i < G_N_ELEMENTS (locales) && set == NULL; i++)
    set = setlocale (LC_ALL, locales[i]);
  if (set == NULL)
    {
      g_test_skip ("no locale with a decimal comma installed");
      return;
    }
  g_assert_cmpstr (localeconv ()->decimal_point, ==, ",");

  assert_prints (&float32_format, 0x3fc00000, "1.5");
  assert_prints (&float16_format, 0x3e00, "1.5");
  assert_prints (&bfloat16_format, 0x3fc0, "1.5");
  n = serio_tool_write_double (2.25e-7, buf);
  buf[n] = '\0';
  g_assert_cmpstr (buf, ==, "2.25e-07");

  setlocale (LC_ALL, "C");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ryu/layout", test_layout);
  g_test_add_func ("/ryu/edges", test_edges);
  g_test_add_func ("/ryu/random-bits", test_random_bits);
  g_test_add_func ("/ryu/narrow-layout", test_narrow_layout);
  g_test_add_func ("/ryu/typed", test_typed);
  g_test_add_func ("/ryu/locale", test_locale);
  g_test_add_func ("/ryu/float16-exhaustive", test_float16_exhaustive);
  g_test_add_func ("/ryu/bfloat16-exhaustive", test_bfloat16_exhaustive);
  g_test_add_func ("/ryu/float32-edges", test_float32_edges);
  g_test_add_func ("/ryu/float32-random", test_float32_random);
  g_test_add_func ("/ryu/float32-all-read-back", test_float32_all_read_back);

  return g_test_run ();
}
