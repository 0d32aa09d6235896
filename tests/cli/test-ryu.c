/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-ryu.c: the serio tool's shortest double printer, with and without
 * a 128-bit integer type
 *
 * Copyright 2026 The libserio authors
 *
 * tools/serio-ryu.c is built twice into this test: as it is, and with
 * SERIO_RYU_NO_INT128, which 32-bit targets get. Both must write the same
 * text for every double, and the text must read back to the same bits. The
 * CLI tests compare the first with Python's repr().
 */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "serio-tool.h"

gsize serio_tool_write_double_portable (double value,
                                        char   buf[SERIO_TOOL_DOUBLE_BUFSIZE]);

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

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ryu/layout", test_layout);
  g_test_add_func ("/ryu/edges", test_edges);
  g_test_add_func ("/ryu/random-bits", test_random_bits);

  return g_test_run ();
}
