/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* consumer.c: an out-of-tree C program built against an installed libserio
 *
 * Copyright 2026 The libserio authors
 *
 * Built by run.sh with nothing but `pkg-config --cflags --libs serio-1.0`.
 * Exits 0 when a round trip keeps every bit and a bad version line fails
 * with SERIO_ERROR_VERSION; otherwise prints why and exits 1.
 */

#include <serio.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Input bit patterns and what the bundle must hold: NaNs become the
 * default quiet NaN, everything else is kept. */
static const guint64 input_bits[] = {
  G_GUINT64_CONSTANT (0x0000000000000000),  /* +0 */
  G_GUINT64_CONSTANT (0x8000000000000000),  /* -0 */
  G_GUINT64_CONSTANT (0x7ff0000000000000),  /* +inf */
  G_GUINT64_CONSTANT (0xfff0000000000000),  /* -inf */
  G_GUINT64_CONSTANT (0x0000000000000001),  /* smallest subnormal */
  G_GUINT64_CONSTANT (0x7fefffffffffffff),  /* largest finite */
  G_GUINT64_CONSTANT (0x3fb999999999999a),  /* 0.1 */
  G_GUINT64_CONSTANT (0x43d0000000000000),  /* 2^62 */
  G_GUINT64_CONSTANT (0x7ff0000000000001),  /* signalling NaN */
  G_GUINT64_CONSTANT (0xfff8000000000000),  /* NaN with the sign set */
};

static const guint64 expected_bits[] = {
  G_GUINT64_CONSTANT (0x0000000000000000),
  G_GUINT64_CONSTANT (0x8000000000000000),
  G_GUINT64_CONSTANT (0x7ff0000000000000),
  G_GUINT64_CONSTANT (0xfff0000000000000),
  G_GUINT64_CONSTANT (0x0000000000000001),
  G_GUINT64_CONSTANT (0x7fefffffffffffff),
  G_GUINT64_CONSTANT (0x3fb999999999999a),
  G_GUINT64_CONSTANT (0x43d0000000000000),
  G_GUINT64_CONSTANT (0x7ff8000000000000),
  G_GUINT64_CONSTANT (0x7ff8000000000000),
};

G_STATIC_ASSERT (G_N_ELEMENTS (input_bits) == G_N_ELEMENTS (expected_bits));

#define REFERENCE_TEXT "v1|t|4|1p-1,3602879701896397p-55,-0,inf\n"

static int
fail (const char *what)
{
  fprintf (stderr, "consumer.c: %s\n", what);
  return 1;
}

int
main (void)
{
  static const double reference[] = { 0.5, 0.1, -0.0, INFINITY };
  double input[G_N_ELEMENTS (input_bits)];
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(SerioBundle) bad = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *reference_text = NULL;
  g_autoptr(SerioBundle) reference_bundle = serio_bundle_new ();
  const double *values;
  gsize n_values = 0;
  guint index = 0;

  memcpy (input, input_bits, sizeof input);
  serio_bundle_append (bundle, "dense.w", input, G_N_ELEMENTS (input));
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  parsed = serio_bundle_new_from_string (text, &error);
  if (parsed == NULL)
    return fail (error->message);
  if (!serio_bundle_lookup (parsed, "dense.w", &index))
    return fail ("the array is missing after the round trip");
  values = serio_bundle_get_values (parsed, index, &n_values);
  if (n_values != G_N_ELEMENTS (expected_bits) ||
      memcmp (values, expected_bits, sizeof expected_bits) != 0)
    return fail ("the round trip changed bits");
  if (!serio_bundle_equal (bundle, parsed))
    return fail ("serio_bundle_equal() says the round trip differs");

  serio_bundle_append (reference_bundle, "t", reference, G_N_ELEMENTS (reference));
  reference_text = serio_bundle_to_string (reference_bundle, SERIO_SAVE_FLAGS_PLAIN);
  if (strcmp (reference_text, REFERENCE_TEXT) != 0)
    return fail ("the reference tokens are not written as the spec says");

  bad = serio_bundle_new_from_string ("v2|x|0|\n", &error);
  if (bad != NULL || !g_error_matches (error, SERIO_ERROR, SERIO_ERROR_VERSION))
    return fail ("a v2 line did not fail with SERIO_ERROR_VERSION");

  printf ("libserio %s (headers %d.%d.%d): round trip and error code ok\n",
          SERIO_VERSION, SERIO_MAJOR_VERSION, SERIO_MINOR_VERSION,
          SERIO_MICRO_VERSION);
  return 0;
}
