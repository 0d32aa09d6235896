/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-serio.vala: libserio from Vala, built against the generated
 * serio-1.0.vapi. Values are compared by their bytes (assert_cmpmem).
 */

const uint64 CANONICAL_NAN = 0x7ff8000000000000;

const uint64[] SPECIAL_BITS = {
  0x0000000000000000, 0x8000000000000000, /* ±0 */
  0x7ff0000000000000, 0xfff0000000000000, /* ±inf */
  0x0000000000000001, 0x800fffffffffffff, /* subnormals */
  0x0010000000000000, 0x7fefffffffffffff, /* smallest normal, max */
  0x3fb999999999999a, 0x4340000000000001, /* 0.1, 2^53 + 2 */
  0x7ff8000000000000, 0xfff8000000000000, /* NaNs */
  0x7ff0000000000001, 0x7fffffffffffffff,
};

static double[] doubles_from_bits (uint64[] patterns)
{
  var values = new double[patterns.length];
  Memory.copy (values, patterns, patterns.length * sizeof (double));
  return values;
}

static bool is_nan_bits (uint64 bits)
{
  return (bits & 0x7ff0000000000000) == 0x7ff0000000000000 &&
         (bits & 0x000fffffffffffff) != 0;
}

/* What a bundle must hold for @patterns: every NaN made the quiet NaN. */
static double[] canonical_from_bits (uint64[] patterns)
{
  var canonical = new uint64[patterns.length];
  for (var i = 0; i < patterns.length; i++)
    canonical[i] = is_nan_bits (patterns[i]) ? CANONICAL_NAN : patterns[i];
  return doubles_from_bits (canonical);
}

static unowned uint8[] bytes_of (double[] values)
{
  unowned uint8[] bytes = (uint8[]) values;
  bytes.length = values.length * (int) sizeof (double);
  return bytes;
}

static void assert_same_bits (double[] got, double[] expected)
{
  assert_cmpint (got.length, CompareOperator.EQ, expected.length);
  assert_cmpmem (bytes_of (got), bytes_of (expected));
}

static void test_round_trip ()
{
  var bundle = new Serio.Bundle ();
  bundle.append ("dense.w", { 0.1, -0.0, double.INFINITY });
  assert_cmpstr (bundle.to_string (Serio.SaveFlags.PLAIN), CompareOperator.EQ,
                 "v1|dense.w|3|3602879701896397p-55,-0,inf\n");

  bundle.append ("special", doubles_from_bits (SPECIAL_BITS));
  bundle.append ("empty", {});
  assert_cmpuint (bundle.n_arrays, CompareOperator.EQ, 3);
  assert_same_bits (bundle.get_values (1), canonical_from_bits (SPECIAL_BITS));

  try
    {
      var text = bundle.to_string (Serio.SaveFlags.PLAIN);
      var parsed = new Serio.Bundle.from_string (text);
      assert_true (parsed.equal (bundle));
      assert_cmpstr (parsed.to_string (Serio.SaveFlags.PLAIN), CompareOperator.EQ, text);
      assert_same_bits (parsed.get_values (0),
                        doubles_from_bits ({ 0x3fb999999999999a, 0x8000000000000000, 0x7ff0000000000000 }));
      assert_same_bits (parsed.get_values (1), canonical_from_bits (SPECIAL_BITS));
      assert_cmpint (parsed.get_values (2).length, CompareOperator.EQ, 0);

      var from_bytes = new Serio.Bundle.from_bytes (bundle.to_bytes (Serio.SaveFlags.PLAIN));
      assert_true (from_bytes.equal (bundle));
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }

  var positive_zero = new Serio.Bundle ();
  positive_zero.append ("dense.w", { 0.1, 0.0, double.INFINITY });
  var negative_zero = new Serio.Bundle ();
  negative_zero.append ("dense.w", { 0.1, -0.0, double.INFINITY });
  assert_false (positive_zero.equal (negative_zero));
}

static void test_error_length ()
{
  try
    {
      new Serio.Bundle.from_string ("v1|w|2|1\n");
      assert_not_reached ();
    }
  catch (Serio.Error.LENGTH e)
    {
      assert_error (e, Serio.Error.quark (), Serio.Error.LENGTH);
      assert_true (e is Serio.Error);
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }
}

static void test_error_truncated ()
{
  try
    {
      new Serio.Bundle.from_string ("v1|w|1|12");
      assert_not_reached ();
    }
  catch (Serio.Error.TRUNCATED e)
    {
      assert_error (e, Serio.Error.quark (), Serio.Error.TRUNCATED);
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }
}

static void check_error (string text, int code)
{
  try
    {
      new Serio.Bundle.from_string (text);
      assert_not_reached ();
    }
  catch (GLib.Error e)
    {
      assert_error (e, Serio.Error.quark (), code);
    }
}

static void test_error_codes ()
{
  check_error ("v2|x|0|\n", Serio.Error.VERSION);
  check_error ("v1|x|2|1,01\n", Serio.Error.SYNTAX);
  check_error ("v1|x|1|\n", Serio.Error.LENGTH);
  check_error ("v1|x|1|1p1024\n", Serio.Error.DOMAIN);
  check_error ("v1|x|1|1", Serio.Error.TRUNCATED);
  assert_cmpuint (Serio.Error.quark (), CompareOperator.EQ,
                  Quark.from_string ("serio-error-quark"));
}

static void test_lookup ()
{
  var bundle = new Serio.Bundle ();
  foreach (unowned var name in new string[] { "a", "b", "a" })
    bundle.append (name, {});

  uint index = 42;
  assert_true (bundle.lookup ("b", out index));
  assert_cmpuint (index, CompareOperator.EQ, 1);
  assert_true (bundle.lookup ("a", out index));
  assert_cmpuint (index, CompareOperator.EQ, 0);
  assert_false (bundle.lookup ("missing", out index));
}

static void test_names ()
{
  string[] names = { "température", "日本語", "", "dup", "dup", "a|b\rc\nd" };
  string[] stored = { "température", "日本語", "", "dup", "dup", "a_b_c_d" };
  var bundle = new Serio.Bundle ();
  foreach (unowned var name in names)
    bundle.append (name, { 1.0 });

  try
    {
      var parsed = new Serio.Bundle.from_string (bundle.to_string (Serio.SaveFlags.PLAIN));
      for (uint i = 0; i < stored.length; i++)
        assert_cmpstr (parsed.get_name (i), CompareOperator.EQ, stored[i]);
      uint index;
      assert_true (parsed.lookup ("dup", out index));
      assert_cmpuint (index, CompareOperator.EQ, 3);
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }
}

static void test_bytes ()
{
  Test.summary ("append_bytes stores native-endian doubles with NaNs made "
                + "canonical and -0 kept; get_bytes returns them");

  var bundle = new Serio.Bundle ();
  var source = doubles_from_bits (SPECIAL_BITS);
  bundle.append_bytes ("w", new Bytes (bytes_of (source)));

  var values = bundle.get_bytes (0);
  assert_cmpuint ((uint) values.get_size (), CompareOperator.EQ,
                  source.length * (uint) sizeof (double));
  assert_cmpmem (values.get_data (), bytes_of (canonical_from_bits (SPECIAL_BITS)));
  assert_same_bits (bundle.get_values (0), canonical_from_bits (SPECIAL_BITS));
}

static async Serio.Bundle save_and_load (Serio.Bundle bundle, File file) throws GLib.Error
{
  assert_true (yield bundle.save_to_file_async (file, Serio.SaveFlags.NONE, Priority.DEFAULT, null));
  return yield new Serio.Bundle.from_file_async (file, Priority.DEFAULT, null);
}

static void test_files_async ()
{
  var bundle = new Serio.Bundle ();
  bundle.append ("w", doubles_from_bits (SPECIAL_BITS));

  try
    {
      var dir = DirUtils.make_tmp ("serio-vala-XXXXXX");
      var file = File.new_build_filename (dir, "w.serio");
      var loop = new MainLoop ();
      Serio.Bundle? loaded = null;
      GLib.Error? error = null;

      save_and_load.begin (bundle, file, (obj, res) => {
        try
          {
            loaded = save_and_load.end (res);
          }
        catch (GLib.Error e)
          {
            error = e;
          }
        loop.quit ();
      });
      loop.run ();

      assert_no_error (error);
      assert_true (loaded.equal (bundle));
      assert_true (new Serio.Bundle.from_file (file).equal (bundle));
      file.delete ();
      DirUtils.remove (dir);
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }
}

static void test_writer_for_file ()
{
  Test.summary ("Serio.Writer.for_file throws like other GIO constructors and "
                + "writes what the bundle's save writes");

  var bundle = new Serio.Bundle ();
  bundle.append ("w", doubles_from_bits (SPECIAL_BITS));

  try
    {
      var dir = DirUtils.make_tmp ("serio-vala-XXXXXX");
      var file = File.new_build_filename (dir, "w.serio");
      var writer = new Serio.Writer.for_file (file, Serio.SaveFlags.NONE, null);

      writer.write_array ("w", doubles_from_bits (SPECIAL_BITS), null);
      writer.close (null);
      uint8[] contents;
      file.load_contents (null, out contents, null);
      assert_cmpmem (contents, bundle.to_bytes (Serio.SaveFlags.NONE).get_data ());
      file.delete ();

      try
        {
          new Serio.Writer.for_file (File.new_build_filename (dir, "none", "w.serio"),
                                     Serio.SaveFlags.PLAIN, null);
          assert_not_reached ();
        }
      catch (IOError.NOT_FOUND e)
        {
        }
      DirUtils.remove (dir);
    }
  catch (GLib.Error e)
    {
      assert_no_error (e);
    }
}

static void test_values_are_a_copy ()
{
  Test.summary ("get_values gives Vala an owned copy: writing into it leaves "
                + "the bundle and its bytes as they were (issue 10)");

  var bundle = new Serio.Bundle ();
  bundle.append ("w", { 1.0, 2.0 });
  var before = bundle.get_bytes (0);

  var v = bundle.get_values (0);
  v[0] = 42.0;
  /* Without a copy, this wrote into the bundle. */
  bundle.get_values (0)[1] = 43.0;

  assert_same_bits (bundle.get_values (0), doubles_from_bits ({ 0x3ff0000000000000, 0x4000000000000000 }));
  assert_cmpstr (bundle.to_string (Serio.SaveFlags.PLAIN), CompareOperator.EQ, "v1|w|2|1,2\n");
  assert_cmpmem (before.get_data (), bytes_of (doubles_from_bits ({ 0x3ff0000000000000, 0x4000000000000000 })));
}

static void test_shapes ()
{
  Test.summary ("append_with_shape, get_shape, get_base_name and lookup by base name");

  var bundle = new Serio.Bundle ();
  bundle.append_with_shape ("conv.weight", { 2, 1, 3 }, { 1.0, 2.0, 3.0, 4.0, 5.0, 6.0 });
  bundle.append_with_shape ("steps", {}, { 5.0 });
  bundle.append ("bias", { 0.5, 0.25 });
  bundle.append_bytes_with_shape ("g", { 1, 2 }, new Bytes (bytes_of ({ 1.0, -0.0 })));

  assert_cmpstr (bundle.to_string (Serio.SaveFlags.PLAIN), CompareOperator.EQ,
                 "v1|conv.weight[2x1x3]|6|1,2,3,4,5,6\n"
                 + "v1|steps[]|1|5\n"
                 + "v1|bias|2|1p-1,1p-2\n"
                 + "v1|g[1x2]|2|1,-0\n");

  uint64[] shape = bundle.get_shape (0);
  assert_cmpint (shape.length, CompareOperator.EQ, 3);
  assert_cmpuint ((uint) shape[0], CompareOperator.EQ, 2);
  assert_cmpuint ((uint) shape[1], CompareOperator.EQ, 1);
  assert_cmpuint ((uint) shape[2], CompareOperator.EQ, 3);
  assert_cmpint (bundle.get_shape (1).length, CompareOperator.EQ, 0);
  shape = bundle.get_shape (2);
  assert_cmpint (shape.length, CompareOperator.EQ, 1);
  assert_cmpuint ((uint) shape[0], CompareOperator.EQ, 2);

  assert_cmpstr (bundle.get_base_name (0), CompareOperator.EQ, "conv.weight");
  assert_cmpstr (bundle.get_base_name (1), CompareOperator.EQ, "steps");
  assert_cmpstr (bundle.get_base_name (2), CompareOperator.EQ, "bias");

  uint index;
  assert_true (bundle.lookup ("steps", out index));
  assert_cmpuint (index, CompareOperator.EQ, 1);
  assert_true (bundle.lookup ("conv.weight[2x1x3]", out index));
  assert_cmpuint (index, CompareOperator.EQ, 0);
  assert_false (bundle.lookup ("conv", out index));
  assert_cmpint (Serio.SHAPE_MAX_DIMS, CompareOperator.EQ, 32);
}

/* Element types: a float[] in and out as typed bytes, with its type in the
 * stored name, through the text. */
static void test_typed ()
{
  float[] weights = { 0.1f, -0.0f, float.MAX, float.INFINITY, 1.0f + 1.0f / 8388608.0f, 1.4e-45f };
  unowned uint8[] raw = (uint8[]) weights;
  raw.length = weights.length * (int) sizeof (float);
  var bundle = new Serio.Bundle ();

  try {
    bundle.append_typed ("w", Serio.Dtype.FLOAT32, { 2, 3 }, new Bytes (raw));
    int64[] step = { 1L << 53 };
    bundle.append_typed ("step", Serio.Dtype.INT64, {}, new Bytes ((uint8[]) step));
  } catch (Error e) {
    assert_no_error (e);
  }
  assert_cmpstr (bundle.get_name (0), CompareOperator.EQ, "w@float32[2x3]");
  assert_cmpstr (bundle.get_base_name (0), CompareOperator.EQ, "w");
  assert_true (bundle.get_dtype (0) == Serio.Dtype.FLOAT32);
  assert_cmpstr (bundle.get_dtype (0).to_string (), CompareOperator.EQ, "float32");
  assert_cmpuint ((uint) bundle.get_dtype (0).get_size (), CompareOperator.EQ, 4);
  assert_cmpstr (bundle.get_name (1), CompareOperator.EQ, "step@int64[]");

  try {
    var back = new Serio.Bundle.from_string (bundle.to_string (Serio.SaveFlags.PLAIN));
    assert_true (back.get_dtype (0) == Serio.Dtype.FLOAT32);
    assert_cmpmem (back.get_typed_bytes (0).get_data (), raw);
    assert_true (back.get_dtype (1) == Serio.Dtype.INT64);
    assert_cmpuint ((uint) back.get_typed_bytes (1).get_size (), CompareOperator.EQ, 8);
    /* get_values still gives doubles */
    var doubles = back.get_values (0);
    assert_cmpint (doubles.length, CompareOperator.EQ, 6);
    assert_true (doubles[0] == (double) 0.1f);
  } catch (Error e) {
    assert_no_error (e);
  }

  Serio.Dtype dtype;
  assert_true (Serio.Dtype.from_string ("bfloat16", out dtype));
  assert_true (dtype == Serio.Dtype.BFLOAT16);
  assert_false (Serio.Dtype.from_string ("complex64", out dtype));
  assert_true (Serio.Dtype.FLOAT16.holds (65504.0));
  assert_false (Serio.Dtype.FLOAT16.holds (65520.0));
  assert_cmpstr (Serio.name_compose ("m", Serio.Dtype.BOOL, { 4 }), CompareOperator.EQ, "m@bool[4]");
  assert_true (Serio.name_is_metadata ("serio.tree"));
}

static void test_typed_errors ()
{
  try {
    new Serio.Bundle.from_string ("v1|x@uint8[2]|2|255,256\n");
    assert_not_reached ();
  } catch (Error e) {
    assert_error (e, Serio.Error.quark (), Serio.Error.DOMAIN);
    assert_cmpuint ((uint) Serio.Error.get_value_index (e), CompareOperator.EQ, 2);
    assert_true ("uint8" in e.message);
  }

  var bundle = new Serio.Bundle ();
  try {
    bundle.append_typed ("m", Serio.Dtype.BOOL, { 2 }, new Bytes ({ 1, 2 }));
    assert_not_reached ();
  } catch (Error e) {
    assert_error (e, Serio.Error.quark (), Serio.Error.DOMAIN);
  }
  assert_cmpuint (bundle.get_n_arrays (), CompareOperator.EQ, 0);
}

/* A typed array streamed through a Writer and read back with a Reader. */
static void test_typed_stream ()
{
  var out_stream = new MemoryOutputStream.resizable ();
  var writer = new Serio.Writer (out_stream, Serio.SaveFlags.NONE);
  int16[] values = { -32768, 32767, 0, -1, 1, 12345 };
  unowned uint8[] raw = (uint8[]) values;
  raw.length = values.length * (int) sizeof (int16);

  try {
    writer.begin_typed_array ("h", Serio.Dtype.INT16, { 3, 2 });
    writer.add_typed_bytes (new Bytes (raw[0:4]));
    writer.add_typed_bytes (new Bytes (raw[4:raw.length]));
    /* a double that is not an int16 is refused, nothing written */
    writer.begin_array ("bad@int16[1]", 1);
    try {
      writer.add_values ({ 0.5 });
      assert_not_reached ();
    } catch (Error e) {
      assert_error (e, Serio.Error.quark (), Serio.Error.DOMAIN);
    }
    writer.add_values ({ -7.0 });
    writer.close ();

    var reader = new Serio.Reader (new MemoryInputStream.from_bytes (out_stream.steal_as_bytes ()));
    assert_true (reader.next ());
    assert_true (reader.get_dtype () == Serio.Dtype.INT16);
    assert_cmpstr (reader.get_base_name (), CompareOperator.EQ, "h");
    var got = new ByteArray ();
    for (;;) {
      var piece = reader.read_typed_bytes (4);
      if (piece.get_size () == 0)
        break;
      got.append (piece.get_data ());
    }
    assert_cmpmem (got.data, raw);
    assert_true (reader.next ());
    int16[] seven = { -7 };
    assert_cmpmem (reader.read_typed_bytes (1).get_data (), (uint8[]) seven);
    assert_false (reader.next ());
    assert_true (reader.get_finished ());
  } catch (Error e) {
    assert_no_error (e);
  }
}

/* Serio.Reader.for_bytes: the text read in place, with no stream */
static void test_reader_for_bytes ()
{
  var bundle = new Serio.Bundle ();
  bundle.append ("w", { 0.5, -0.0, 1e300 });
  var text = bundle.to_bytes (Serio.SaveFlags.NONE);
  var reader = new Serio.Reader.for_bytes (text);

  assert_null (reader.get_stream ());
  assert_cmpuint ((uint) reader.get_size (), CompareOperator.EQ, (uint) text.get_size ());
  try {
    assert_true (reader.next ());
    assert_cmpstr (reader.get_name (), CompareOperator.EQ, "w");
    double[] want = { 0.5, -0.0, 1e300 };
    assert_cmpmem (reader.read_bytes (10).get_data (), (uint8[]) want);
    assert_false (reader.next ());
    assert_true (reader.get_finished () && reader.get_sealed ());
  } catch (Error e) {
    assert_no_error (e);
  }
}

int main (string[] args)
{
  Test.init (ref args);
  Test.add_func ("/vala/round-trip", test_round_trip);
  Test.add_func ("/vala/error/length", test_error_length);
  Test.add_func ("/vala/error/truncated", test_error_truncated);
  Test.add_func ("/vala/error/codes", test_error_codes);
  Test.add_func ("/vala/lookup", test_lookup);
  Test.add_func ("/vala/names", test_names);
  Test.add_func ("/vala/bytes", test_bytes);
  Test.add_func ("/vala/files-async", test_files_async);
  Test.add_func ("/vala/values-are-a-copy", test_values_are_a_copy);
  Test.add_func ("/vala/writer-for-file", test_writer_for_file);
  Test.add_func ("/vala/shapes", test_shapes);
  Test.add_func ("/vala/typed", test_typed);
  Test.add_func ("/vala/typed-errors", test_typed_errors);
  Test.add_func ("/vala/typed-stream", test_typed_stream);
  Test.add_func ("/vala/reader-for-bytes", test_reader_for_bytes);
  return Test.run ();
}
