/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* consumer.vala: an out-of-tree Vala program built against an installed
 * libserio with `valac --pkg serio-1.0`
 *
 * Copyright 2026 The libserio authors
 *
 * Exits 0 when a round trip keeps every bit and a bad version line fails
 * with Serio.Error.VERSION; otherwise prints why and exits 1.
 */

const uint64[] INPUT_BITS = {
  0x0000000000000000,  /* +0 */
  0x8000000000000000,  /* -0 */
  0x7ff0000000000000,  /* +inf */
  0xfff0000000000000,  /* -inf */
  0x0000000000000001,  /* smallest subnormal */
  0x7fefffffffffffff,  /* largest finite */
  0x3fb999999999999a,  /* 0.1 */
  0x43d0000000000000,  /* 2^62 */
  0x7ff0000000000001,  /* signalling NaN */
  0xfff8000000000000,  /* NaN with the sign set */
};

const uint64[] EXPECTED_BITS = {
  0x0000000000000000,
  0x8000000000000000,
  0x7ff0000000000000,
  0xfff0000000000000,
  0x0000000000000001,
  0x7fefffffffffffff,
  0x3fb999999999999a,
  0x43d0000000000000,
  0x7ff8000000000000,
  0x7ff8000000000000,
};

int
fail (string what)
{
  printerr ("consumer.vala: %s\n", what);
  return 1;
}

int
main ()
{
  var input = new double[INPUT_BITS.length];
  Memory.copy (input, INPUT_BITS, INPUT_BITS.length * sizeof (double));

  var bundle = new Serio.Bundle ();
  bundle.append ("dense.w", input);

  Serio.Bundle parsed;
  try
    {
      parsed = new Serio.Bundle.from_string (bundle.to_string (Serio.SaveFlags.PLAIN));
    }
  catch (GLib.Error e)
    {
      return fail (e.message);
    }

  uint index;
  if (!parsed.lookup ("dense.w", out index))
    return fail ("the array is missing after the round trip");
  double[] values = parsed.get_values (index);
  if (values.length != EXPECTED_BITS.length ||
      Memory.cmp (values, EXPECTED_BITS, EXPECTED_BITS.length * sizeof (uint64)) != 0)
    return fail ("the round trip changed bits");
  if (!parsed.equal (bundle))
    return fail ("the round trip differs");

  try
    {
      new Serio.Bundle.from_string ("v2|x|0|\n");
      return fail ("a v2 line was accepted");
    }
  catch (Serio.Error.VERSION e)
    {
      /* the expected failure */
    }
  catch (GLib.Error e)
    {
      return fail ("a v2 line failed with " + e.message);
    }

  print ("round trip and error code ok\n");
  return 0;
}
