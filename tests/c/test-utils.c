/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-utils.c: helpers shared by the C test programs
 *
 * Copyright 2026 The libserio authors
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test-utils.h"

#ifdef G_OS_UNIX
# include <signal.h>
# include <sys/wait.h>
#endif
#ifdef TEST_HAVE_MXCSR
# include <xmmintrin.h>

/* The x87 control word is left alone: on i686 a double comes back from a
 * call in an x87 register, which must not trap. */
unsigned int
test_hostile_mxcsr (void)
{
  return (_mm_getcsr () & ~(0x1F80u | 0x003Fu)) | 0x8000u | 0x0040u | 0x6000u;
}
#endif

guint64
test_bits_of (double value)
{
  guint64 bits;

  memcpy (&bits, &value, sizeof bits);
  return bits;
}

double
test_double_of (guint64 bits)
{
  double value;

  memcpy (&value, &bits, sizeof value);
  return value;
}

/* What a bundle stores for @bits: every NaN becomes the default quiet NaN. */
guint64
test_canonical_bits (guint64 bits)
{
  if ((bits & ~TEST_SIGN_BIT) > G_GUINT64_CONSTANT (0x7FF0000000000000))
    return TEST_CANONICAL_NAN_BITS;

  return bits;
}

guint64
test_rand_u64 (void)
{
  guint64 high = (guint32) g_test_rand_int ();
  guint64 low = (guint32) g_test_rand_int ();

  return (high << 32) | low;
}

/* A random odd number of exactly @bit_length bits (1..64). */
guint64
test_rand_odd (int bit_length)
{
  guint64 top = G_GUINT64_CONSTANT (1) << (bit_length - 1);
  guint64 mask = bit_length == 64 ? G_MAXUINT64 : (top << 1) - 1;

  return (test_rand_u64 () & mask) | top | 1;
}

/* Random patterns weighted towards the cases a uniform draw almost never
 * hits: short significands, subnormals, integers around 2^53 and 2^62,
 * zeros, infinities and NaNs with any payload. */
guint64
test_rand_interesting (void)
{
  guint64 sign = (guint64) g_test_rand_int_range (0, 2) << 63;
  int length = g_test_rand_int_range (1, 54);

  switch (g_test_rand_int_range (0, 6))
    {
    case 0:
      return test_rand_u64 ();

    case 1:
      /* a normal number whose significand has few bits */
      return sign |
             ((guint64) g_test_rand_int_range (1, 2047) << 52) |
             (test_rand_u64 () >> 12 >> (52 - length + 1) << (52 - length + 1));

    case 2:
      /* a subnormal */
      return sign | (test_rand_u64 () >> 12 >> (53 - length));

    case 3:
      /* an integer m·2^e, e ≥ 0, near and above 2^62 */
      return sign | test_bits_of (ldexp ((double) test_rand_odd (length),
                                         g_test_rand_int_range (0, 66 - length)));

    case 4:
      /* 2^k plus or minus a few units in the last place */
      {
        int k = g_test_rand_int_range (50, 66);
        guint64 base = test_bits_of (ldexp (1.0, k));

        return sign | (base + (guint64) g_test_rand_int_range (-3, 4));
      }

    default:
      {
        static const guint64 specials[] = {
          G_GUINT64_CONSTANT (0x0000000000000000),  /* 0 */
          G_GUINT64_CONSTANT (0x7FF0000000000000),  /* inf */
          G_GUINT64_CONSTANT (0x7FF8000000000000),  /* quiet NaN */
          G_GUINT64_CONSTANT (0x7FF0000000000001),  /* signalling NaN */
          G_GUINT64_CONSTANT (0x7FFFFFFFFFFFFFFF),  /* NaN, full payload */
          G_GUINT64_CONSTANT (0x7FEFFFFFFFFFFFFF),  /* largest finite */
          G_GUINT64_CONSTANT (0x0010000000000000),  /* smallest normal */
          G_GUINT64_CONSTANT (0x000FFFFFFFFFFFFF),  /* largest subnormal */
          G_GUINT64_CONSTANT (0x0000000000000001),  /* smallest subnormal */
        };

        return sign | specials[g_test_rand_int_range (0, G_N_ELEMENTS (specials))];
      }
    }
}

/* Whether the test runs under valgrind or the sanitizers, which set
 * SERIO_TEST_SLOW_TOOL: heavy sweeps are cut down there. */
gboolean
test_slow_tool (void)
{
  return g_getenv ("SERIO_TEST_SLOW_TOOL") != NULL;
}

/* @normal iterations, or a hundredth of them under a slow tool. */
guint
test_iterations (guint normal)
{
  if (test_slow_tool ())
    return MAX (normal / 100, 1);

  return normal;
}

/* The path of a file in tests/data/: SERIO_TEST_DATA when meson runs the
 * test, the source tree next to G_TEST_SRCDIR otherwise. */
char *
test_data_filename (const char *basename)
{
  const char *dir = g_getenv ("SERIO_TEST_DATA");

  if (dir != NULL)
    return g_build_filename (dir, basename, NULL);

  return g_test_build_filename (G_TEST_DIST, "data", basename, NULL);
}

/* The bit patterns of tests/data/f64_patterns.txt, one 16-digit
 * hexadecimal number per line. */
GArray *
test_load_patterns (void)
{
  g_autofree char *path = test_data_filename ("f64_patterns.txt");
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  GArray *patterns = g_array_new (FALSE, FALSE, sizeof (guint64));

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *end;
      guint64 bits;

      if (lines[i][0] == '\0')
        continue;

      bits = g_ascii_strtoull (lines[i], &end, 16);
      g_assert_cmpuint (strlen (lines[i]), ==, 16);
      g_assert_cmpint (*end, ==, '\0');
      g_array_append_val (patterns, bits);
    }

  g_assert_cmpuint (patterns->len, >, 0);
  return patterns;
}

/* Asserts that two texts are the same, byte for byte. */
void
test_assert_same_bytes (GBytes *actual,
                        GBytes *expected)
{
  g_assert_cmpmem (g_bytes_get_data (actual, NULL), g_bytes_get_size (actual),
                   g_bytes_get_data (expected, NULL), g_bytes_get_size (expected));
}

/* memcmp() of the values with the expected patterns; on a mismatch, the
 * first differing value is reported with its index and both patterns. */
void
test_assert_same_bits (const double  *actual,
                       const guint64 *expected,
                       gsize          n_values)
{
  if (n_values == 0 || memcmp (actual, expected, n_values * sizeof (double)) == 0)
    return;

  for (gsize i = 0; i < n_values; i++)
    {
      if (test_bits_of (actual[i]) != expected[i])
        {
          g_test_message ("first difference at index %" G_GSIZE_FORMAT, i);
          g_assert_cmphex (test_bits_of (actual[i]), ==, expected[i]);
        }
    }
}

/* A figure of Linux's /proc/self/status, in KiB, such as "VmHWM:"; -1
 * where there is none. */
long
test_status_kib (const char *field)
{
  g_autofree char *status = NULL;
  const char *at;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (at = strstr (status, field)) == NULL)
    return -1;

  return strtol (at + strlen (field), NULL, 10);
}

/* The bytes that @hex (an even number of hex digits) spells, as the
 * input columns of tests/data/fnv1a64_vectors.tsv give them. */
GByteArray *
test_decode_hex (const char *hex)
{
  GByteArray *bytes = g_byte_array_new ();
  gsize len = strlen (hex);

  g_assert_cmpuint (len % 2, ==, 0);
  for (gsize i = 0; i < len; i += 2)
    {
      int high = g_ascii_xdigit_value (hex[i]);
      int low = g_ascii_xdigit_value (hex[i + 1]);
      guint8 byte;

      g_assert_cmpint (high, >=, 0);
      g_assert_cmpint (low, >=, 0);
      byte = (guint8) (high * 16 + low);
      g_byte_array_append (bytes, &byte, 1);
    }

  return bytes;
}

#ifdef G_OS_UNIX
/* Waits up to @deadline_s seconds for the child @pid of fork() to end,
 * and sets *@status as waitpid() does; a child that is still running
 * then is killed (SIGKILL) and reaped, and FALSE returned. */
gboolean
test_wait_child (GPid   pid,
                 guint  deadline_s,
                 int   *status)
{
  gint64 deadline = g_get_monotonic_time () + deadline_s * G_USEC_PER_SEC;
  GPid done;

  while ((done = waitpid (pid, status, WNOHANG)) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  if (done == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, status, 0);
      return FALSE;
    }
  g_assert_cmpint (done, ==, pid);
  return TRUE;
}
#endif
