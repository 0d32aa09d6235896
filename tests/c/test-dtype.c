/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-dtype.c: element types (docs/format.md, "Element types") through
 * the public API: the type marker of names, typed appends and bytes,
 * the check of typed values in every reader and writer
 *
 * Copyright 2026 The libserio authors
 */

#include <math.h>
#include <string.h>

#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

#define N_DTYPES (SERIO_DTYPE_BOOL + 1)

static double
pow2 (int e)
{
  return ldexp (1.0, e);
}

/* ------------------------------------------------------------------ */
/* Names of types                                                     */
/* ------------------------------------------------------------------ */

static void
test_dtype_strings (void)
{
  static const char *names[N_DTYPES] = {
    "float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool",
  };
  static const gsize sizes[N_DTYPES] = { 8, 4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1 };
  SerioDtype dtype = SERIO_DTYPE_INT8;
  GEnumClass *klass;

  for (int i = 0; i < N_DTYPES; i++)
    {
      SerioDtype found = SERIO_DTYPE_BOOL;

      g_assert_cmpstr (serio_dtype_to_string ((SerioDtype) i), ==, names[i]);
      g_assert_true (serio_dtype_from_string (names[i], &found));
      g_assert_cmpint (found, ==, i);
      g_assert_cmpuint (serio_dtype_get_size ((SerioDtype) i), ==, sizes[i]);
    }

  g_assert_false (serio_dtype_from_string ("Float32", &dtype));
  g_assert_false (serio_dtype_from_string ("complex64", &dtype));
  g_assert_false (serio_dtype_from_string ("", &dtype));
  g_assert_false (serio_dtype_from_string ("int8 ", &dtype));
  g_assert_cmpint (dtype, ==, SERIO_DTYPE_INT8);

  /* The GType that bindings see as Serio.Dtype, with the names as nicks. */
  klass = g_type_class_ref (SERIO_TYPE_DTYPE);
  g_assert_cmpuint (klass->n_values, ==, N_DTYPES);
  g_assert_cmpstr (g_enum_get_value (klass, SERIO_DTYPE_BFLOAT16)->value_nick, ==, "bfloat16");
  g_type_class_unref (klass);
}

static void
test_name_metadata (void)
{
  g_assert_true (serio_name_is_metadata ("serio.sealed"));
  g_assert_true (serio_name_is_metadata ("serio.seal"));
  g_assert_true (serio_name_is_metadata ("serio.dtypes"));
  g_assert_true (serio_name_is_metadata ("serio.tree"));
  g_assert_true (serio_name_is_metadata ("serio.metadata.x"));
  g_assert_false (serio_name_is_metadata ("serio"));
  g_assert_false (serio_name_is_metadata ("Serio.dtypes"));
  g_assert_false (serio_name_is_metadata ("w.serio.x"));
  g_assert_false (serio_name_is_metadata (""));
}

static void
test_name_compose (void)
{
  static const guint64 dims[] = { 2, 3 };
  static const guint64 one[] = { 10 };
  struct { const char *base; SerioDtype dtype; const guint64 *dims; guint n; const char *expected; } cases[] = {
    { "w", SERIO_DTYPE_FLOAT32, dims, 2, "w@float32[2x3]" },
    { "w", SERIO_DTYPE_FLOAT64, dims, 2, "w[2x3]" },
    { "b", SERIO_DTYPE_FLOAT32, one, 1, "b@float32[10]" },
    { "step", SERIO_DTYPE_INT64, NULL, 0, "step@int64[]" },
    { "m", SERIO_DTYPE_BOOL, one, 1, "m@bool[10]" },
    { "", SERIO_DTYPE_UINT8, one, 1, "@uint8[10]" },
    { "a@b", SERIO_DTYPE_BFLOAT16, one, 1, "a@b@bfloat16[10]" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = serio_name_compose (cases[i].base, cases[i].dtype, cases[i].dims, cases[i].n);

      g_assert_cmpstr (name, ==, cases[i].expected);
    }
}

/* ------------------------------------------------------------------ */
/* What each type holds                                               */
/* ------------------------------------------------------------------ */

typedef struct
{
  SerioDtype dtype;
  double     value;
  gboolean   holds;
} HoldsCase;

static void
test_holds_boundaries (void)
{
  const double nan = test_double_of (TEST_CANONICAL_NAN_BITS);
  const double neg_zero = test_double_of (TEST_SIGN_BIT);
  const HoldsCase cases[] = {
    /* float32: the largest, the smallest subnormal, 24 bits of precision */
    { SERIO_DTYPE_FLOAT32, (double) G_MAXFLOAT, TRUE },
    { SERIO_DTYPE_FLOAT32, -(double) G_MAXFLOAT, TRUE },
    { SERIO_DTYPE_FLOAT32, nextafter ((double) G_MAXFLOAT, INFINITY), FALSE },
    { SERIO_DTYPE_FLOAT32, pow2 (128), FALSE },
    { SERIO_DTYPE_FLOAT32, pow2 (127), TRUE },
    { SERIO_DTYPE_FLOAT32, pow2 (-149), TRUE },
    { SERIO_DTYPE_FLOAT32, 3 * pow2 (-149), TRUE },
    { SERIO_DTYPE_FLOAT32, pow2 (-150), FALSE },
    { SERIO_DTYPE_FLOAT32, 3 * pow2 (-150), FALSE },
    { SERIO_DTYPE_FLOAT32, pow2 (-126), TRUE },
    { SERIO_DTYPE_FLOAT32, pow2 (-126) + pow2 (-149), TRUE },
    { SERIO_DTYPE_FLOAT32, 1 + pow2 (-23), TRUE },
    { SERIO_DTYPE_FLOAT32, 1 + pow2 (-24), FALSE },
    { SERIO_DTYPE_FLOAT32, 0.1, FALSE },
    { SERIO_DTYPE_FLOAT32, (double) 0.1f, TRUE },
    { SERIO_DTYPE_FLOAT32, pow2 (-1074), FALSE },
    { SERIO_DTYPE_FLOAT32, INFINITY, TRUE },
    { SERIO_DTYPE_FLOAT32, -INFINITY, TRUE },
    { SERIO_DTYPE_FLOAT32, nan, TRUE },
    { SERIO_DTYPE_FLOAT32, neg_zero, TRUE },
    { SERIO_DTYPE_FLOAT32, 0.0, TRUE },
    /* float16: 65504, 2^-24, 11 bits of precision */
    { SERIO_DTYPE_FLOAT16, 65504, TRUE },
    { SERIO_DTYPE_FLOAT16, -65504, TRUE },
    { SERIO_DTYPE_FLOAT16, 65520, FALSE },
    { SERIO_DTYPE_FLOAT16, 65536, FALSE },
    { SERIO_DTYPE_FLOAT16, pow2 (-24), TRUE },
    { SERIO_DTYPE_FLOAT16, -pow2 (-24), TRUE },
    { SERIO_DTYPE_FLOAT16, 1023 * pow2 (-24), TRUE },
    { SERIO_DTYPE_FLOAT16, pow2 (-25), FALSE },
    { SERIO_DTYPE_FLOAT16, 3 * pow2 (-25), FALSE },
    { SERIO_DTYPE_FLOAT16, pow2 (-14), TRUE },
    { SERIO_DTYPE_FLOAT16, 1 + pow2 (-10), TRUE },
    { SERIO_DTYPE_FLOAT16, 1 + pow2 (-11), FALSE },
    { SERIO_DTYPE_FLOAT16, 2049, FALSE },
    { SERIO_DTYPE_FLOAT16, 2048, TRUE },
    { SERIO_DTYPE_FLOAT16, (double) G_MAXFLOAT, FALSE },
    { SERIO_DTYPE_FLOAT16, INFINITY, TRUE },
    { SERIO_DTYPE_FLOAT16, nan, TRUE },
    { SERIO_DTYPE_FLOAT16, neg_zero, TRUE },
    /* bfloat16: float32's range, 8 bits of precision */
    { SERIO_DTYPE_BFLOAT16, 1 + pow2 (-7), TRUE },
    { SERIO_DTYPE_BFLOAT16, 1 + pow2 (-10), FALSE },
    { SERIO_DTYPE_BFLOAT16, 1 + pow2 (-8), FALSE },
    { SERIO_DTYPE_BFLOAT16, (2 - pow2 (-7)) * pow2 (127), TRUE },
    { SERIO_DTYPE_BFLOAT16, (double) G_MAXFLOAT, FALSE },
    { SERIO_DTYPE_BFLOAT16, pow2 (-133), TRUE },
    { SERIO_DTYPE_BFLOAT16, pow2 (-134), FALSE },
    { SERIO_DTYPE_BFLOAT16, 3 * pow2 (-133), TRUE },
    { SERIO_DTYPE_BFLOAT16, pow2 (-126) + pow2 (-133), TRUE },
    { SERIO_DTYPE_BFLOAT16, pow2 (-126) + pow2 (-134), FALSE },
    { SERIO_DTYPE_BFLOAT16, 257, FALSE },
    { SERIO_DTYPE_BFLOAT16, 256, TRUE },
    { SERIO_DTYPE_BFLOAT16, -INFINITY, TRUE },
    { SERIO_DTYPE_BFLOAT16, neg_zero, TRUE },
    /* integers */
    { SERIO_DTYPE_INT8, -128, TRUE },
    { SERIO_DTYPE_INT8, 127, TRUE },
    { SERIO_DTYPE_INT8, -129, FALSE },
    { SERIO_DTYPE_INT8, 128, FALSE },
    { SERIO_DTYPE_INT8, 0.5, FALSE },
    { SERIO_DTYPE_INT8, neg_zero, FALSE },
    { SERIO_DTYPE_INT8, 0, TRUE },
    { SERIO_DTYPE_INT8, INFINITY, FALSE },
    { SERIO_DTYPE_INT8, nan, FALSE },
    { SERIO_DTYPE_INT16, -32768, TRUE },
    { SERIO_DTYPE_INT16, 32767, TRUE },
    { SERIO_DTYPE_INT16, 32768, FALSE },
    { SERIO_DTYPE_INT16, -32769, FALSE },
    { SERIO_DTYPE_INT32, -2147483648.0, TRUE },
    { SERIO_DTYPE_INT32, 2147483647.0, TRUE },
    { SERIO_DTYPE_INT32, 2147483648.0, FALSE },
    { SERIO_DTYPE_INT32, -2147483649.0, FALSE },
    { SERIO_DTYPE_INT32, 1.5, FALSE },
    { SERIO_DTYPE_INT64, -pow2 (63), TRUE },
    { SERIO_DTYPE_INT64, pow2 (63), FALSE },
    { SERIO_DTYPE_INT64, nextafter (pow2 (63), 0), TRUE },
    { SERIO_DTYPE_INT64, nextafter (-pow2 (63), -INFINITY), FALSE },
    { SERIO_DTYPE_INT64, pow2 (53), TRUE },
    { SERIO_DTYPE_INT64, pow2 (53) + 2, TRUE },
    { SERIO_DTYPE_INT64, -pow2 (53), TRUE },
    { SERIO_DTYPE_INT64, pow2 (51) + 0.5, FALSE },
    { SERIO_DTYPE_INT64, -INFINITY, FALSE },
    { SERIO_DTYPE_INT64, neg_zero, FALSE },
    { SERIO_DTYPE_UINT8, 0, TRUE },
    { SERIO_DTYPE_UINT8, 255, TRUE },
    { SERIO_DTYPE_UINT8, 256, FALSE },
    { SERIO_DTYPE_UINT8, -1, FALSE },
    { SERIO_DTYPE_UINT8, neg_zero, FALSE },
    { SERIO_DTYPE_UINT16, 65535, TRUE },
    { SERIO_DTYPE_UINT16, 65536, FALSE },
    { SERIO_DTYPE_UINT32, 4294967295.0, TRUE },
    { SERIO_DTYPE_UINT32, 4294967296.0, FALSE },
    { SERIO_DTYPE_UINT64, pow2 (53), TRUE },
    { SERIO_DTYPE_UINT64, pow2 (64), FALSE },
    { SERIO_DTYPE_UINT64, nextafter (pow2 (64), 0), TRUE },
    { SERIO_DTYPE_UINT64, -1, FALSE },
    { SERIO_DTYPE_UINT64, 0.25, FALSE },
    /* bool */
    { SERIO_DTYPE_BOOL, 0, TRUE },
    { SERIO_DTYPE_BOOL, 1, TRUE },
    { SERIO_DTYPE_BOOL, neg_zero, FALSE },
    { SERIO_DTYPE_BOOL, 2, FALSE },
    { SERIO_DTYPE_BOOL, 0.5, FALSE },
    { SERIO_DTYPE_BOOL, nan, FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      if (serio_dtype_holds (cases[i].dtype, cases[i].value) != cases[i].holds)
        g_error ("case %" G_GSIZE_FORMAT ": %s holds %a: expected %s", i,
                 serio_dtype_to_string (cases[i].dtype), cases[i].value,
                 cases[i].holds ? "yes" : "no");
    }

  /* float64 holds everything */
  for (guint i = 0; i < 1000; i++)
    g_assert_true (serio_dtype_holds (SERIO_DTYPE_FLOAT64, test_double_of (test_rand_interesting ())));
}

/* ------------------------------------------------------------------ */
/* Typed bytes in and out                                             */
/* ------------------------------------------------------------------ */

/* The boundary elements of @dtype as typed bytes, whose values the type
 * holds and a double holds exactly. */
static GBytes *
boundary_bytes (SerioDtype dtype)
{
  GByteArray *out = g_byte_array_new ();

#define PUT(ctype, ...) \
  G_STMT_START { \
    const ctype items[] = { __VA_ARGS__ }; \
    g_byte_array_append (out, (const guint8 *) items, sizeof items); \
  } G_STMT_END

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64:
      PUT (guint64, 0, TEST_SIGN_BIT, 1, G_GUINT64_CONSTANT (0x7FEFFFFFFFFFFFFF),
           G_GUINT64_CONSTANT (0x3FB999999999999A), TEST_CANONICAL_NAN_BITS,
           G_GUINT64_CONSTANT (0xFFF0000000000000));
      break;
    case SERIO_DTYPE_FLOAT32:
      /* 0, -0, the smallest subnormal, the largest subnormal, the smallest
       * normal, 0.1f, the largest, -the largest, inf, -inf, NaN */
      PUT (guint32, 0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x3DCCCCCD, 0x7F7FFFFF,
           0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800001);
      break;
    case SERIO_DTYPE_FLOAT16:
      PUT (guint16, 0, 0x8000, 1, 0x8001, 0x03FF, 0x0400, 0x3C00, 0x3C01, 0x7BFF, 0xFBFF,
           0x7C00, 0xFC00, 0x7E00, 0x3555);
      break;
    case SERIO_DTYPE_BFLOAT16:
      PUT (guint16, 0, 0x8000, 1, 0x007F, 0x0080, 0x3F80, 0x3F81, 0x7F7F, 0xFF7F,
           0x7F80, 0xFF80, 0x7FC0, 0x3DCD);
      break;
    case SERIO_DTYPE_INT8:
      PUT (gint8, -128, 127, 0, -1, 1);
      break;
    case SERIO_DTYPE_INT16:
      PUT (gint16, -32768, 32767, 0, -1, 1);
      break;
    case SERIO_DTYPE_INT32:
      PUT (gint32, G_MININT32, G_MAXINT32, 0, -1, 1);
      break;
    case SERIO_DTYPE_INT64:
      PUT (gint64, G_MININT64, G_GINT64_CONSTANT (9007199254740992),
           G_GINT64_CONSTANT (-9007199254740992), G_GINT64_CONSTANT (9007199254740994),
           G_GINT64_CONSTANT (9223372036854774784), 0, -1);
      break;
    case SERIO_DTYPE_UINT8:
      PUT (guint8, 0, 255, 1, 128);
      break;
    case SERIO_DTYPE_UINT16:
      PUT (guint16, 0, 65535, 1);
      break;
    case SERIO_DTYPE_UINT32:
      PUT (guint32, 0, G_MAXUINT32, 1);
      break;
    case SERIO_DTYPE_UINT64:
      PUT (guint64, 0, G_GUINT64_CONSTANT (9007199254740992), G_GUINT64_CONSTANT (18446744073709549568),
           G_GUINT64_CONSTANT (9223372036854775808), 1);
      break;
    case SERIO_DTYPE_BOOL:
      PUT (guint8, 0, 1, 1, 0);
      break;
    default:
      g_assert_not_reached ();
    }

#undef PUT

  return g_byte_array_free_to_bytes (out);
}

static guint64
n_elements (GBytes     *bytes,
            SerioDtype  dtype)
{
  return g_bytes_get_size (bytes) / serio_dtype_get_size (dtype);
}

/* Appends the boundary elements of @dtype as a 1-D array "w". */
static SerioBundle *
boundary_bundle (SerioDtype dtype)
{
  g_autoptr(GBytes) data = boundary_bytes (dtype);
  guint64 shape[1] = { n_elements (data, dtype) };
  SerioBundle *bundle = serio_bundle_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (serio_bundle_append_typed (bundle, "w", dtype, shape, 1, data, &error));
  g_assert_no_error (error);
  return bundle;
}

static void
test_typed_round_trip (void)
{
  for (int d = 0; d < N_DTYPES; d++)
    {
      SerioDtype dtype = (SerioDtype) d;
      g_autoptr(GBytes) data = boundary_bytes (dtype);
      g_autoptr(SerioBundle) bundle = boundary_bundle (dtype);
      g_autoptr(GBytes) text = NULL;
      g_autoptr(SerioBundle) back = NULL;
      g_autoptr(GInputStream) stream = NULL;
      g_autoptr(SerioBundle) streamed = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *expected_name = NULL;
      guint64 shape[1] = { n_elements (data, dtype) };
      SerioBundle *each[3];

      expected_name = serio_name_compose ("w", dtype, shape, 1);
      g_assert_cmpstr (serio_bundle_get_name (bundle, 0), ==, expected_name);

      text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
      back = serio_bundle_new_from_bytes (text, &error);
      g_assert_no_error (error);
      stream = g_memory_input_stream_new_from_bytes (text);
      streamed = serio_bundle_new_from_stream (stream, NULL, &error);
      g_assert_no_error (error);

      each[0] = bundle;
      each[1] = back;
      each[2] = streamed;
      for (guint i = 0; i < G_N_ELEMENTS (each); i++)
        {
          g_autoptr(GBytes) typed = serio_bundle_get_typed_bytes (each[i], 0);
          g_autofree char *base = serio_bundle_get_base_name (each[i], 0);
          g_autofree guint64 *got_shape = NULL;
          guint n_dims = 0;

          g_assert_cmpint (serio_bundle_get_dtype (each[i], 0), ==, dtype);
          g_assert_cmpstr (base, ==, "w");
          got_shape = serio_bundle_get_shape (each[i], 0, &n_dims);
          g_assert_cmpuint (n_dims, ==, 1);
          g_assert_cmpuint (got_shape[0], ==, shape[0]);
          test_assert_same_bytes (typed, data);
        }
      g_assert_true (serio_bundle_equal (bundle, back));
      g_assert_true (serio_bundle_equal (bundle, streamed));
    }
}

/* Every float16 and bfloat16 pattern converts to a double and back to
 * itself (NaNs to the quiet NaN), and the double is one the type holds. */
static void
test_half_patterns (void)
{
  const SerioDtype halves[] = { SERIO_DTYPE_FLOAT16, SERIO_DTYPE_BFLOAT16 };

  for (gsize h = 0; h < G_N_ELEMENTS (halves); h++)
    {
      SerioDtype dtype = halves[h];
      guint exp_shift = dtype == SERIO_DTYPE_FLOAT16 ? 10 : 7;
      guint exp_mask = dtype == SERIO_DTYPE_FLOAT16 ? 0x1F : 0xFF;
      g_autofree guint16 *patterns = g_new (guint16, 65536);
      g_autoptr(GBytes) data = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new ();
      g_autoptr(GBytes) back = NULL;
      g_autoptr(GError) error = NULL;
      guint64 shape[1] = { 65536 };
      const guint16 *got;
      const double *values;
      gsize n;

      for (guint i = 0; i < 65536; i++)
        patterns[i] = (guint16) i;
      data = g_bytes_new (patterns, 65536 * sizeof (guint16));
      g_assert_true (serio_bundle_append_typed (bundle, "h", dtype, shape, 1, data, &error));
      g_assert_no_error (error);

      back = serio_bundle_get_typed_bytes (bundle, 0);
      got = g_bytes_get_data (back, &n);
      g_assert_cmpuint (n, ==, 65536 * sizeof (guint16));
      values = serio_bundle_get_values (bundle, 0, &n);

      for (guint i = 0; i < 65536; i++)
        {
          gboolean is_nan = ((i >> exp_shift) & exp_mask) == exp_mask && (i & ((1u << exp_shift) - 1)) != 0;

          g_assert_true (serio_dtype_holds (dtype, values[i]));
          if (is_nan)
            {
              g_assert_cmphex (test_bits_of (values[i]), ==, TEST_CANONICAL_NAN_BITS);
              g_assert_cmphex (got[i], ==, dtype == SERIO_DTYPE_FLOAT16 ? 0x7E00 : 0x7FC0);
            }
          else
            {
              g_assert_cmphex (got[i], ==, i);
            }

          /* A bfloat16 is the upper half of a float32. */
          if (dtype == SERIO_DTYPE_BFLOAT16 && !is_nan)
            {
              guint32 bits = (guint32) i << 16;
              float f;

              memcpy (&f, &bits, sizeof f);
              g_assert_cmphex (test_bits_of ((double) f), ==, test_bits_of (values[i]));
            }
        }

      /* Known float16 values. */
      if (dtype == SERIO_DTYPE_FLOAT16)
        {
          g_assert_cmphex (test_bits_of (values[0x3C00]), ==, test_bits_of (1.0));
          g_assert_cmphex (test_bits_of (values[0x0001]), ==, test_bits_of (pow2 (-24)));
          g_assert_cmphex (test_bits_of (values[0x7BFF]), ==, test_bits_of (65504.0));
          g_assert_cmphex (test_bits_of (values[0x8000]), ==, TEST_SIGN_BIT);
          g_assert_cmphex (test_bits_of (values[0xC000]), ==, test_bits_of (-2.0));
          g_assert_cmphex (test_bits_of (values[0x0400]), ==, test_bits_of (pow2 (-14)));
        }
    }
}

/* float32 elements, random patterns, convert as C's cast does. */
static void
test_float32_patterns (void)
{
  const guint n = MAX (test_iterations (100000), 10000);
  g_autofree guint32 *patterns = g_new (guint32, n);
  g_autoptr(GBytes) data = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) back = NULL;
  g_autoptr(GError) error = NULL;
  guint64 shape[1] = { n };
  const double *values;
  const guint32 *got;
  gsize len;

  for (guint i = 0; i < n; i++)
    {
      patterns[i] = (guint32) test_rand_u64 ();
      /* NaNs come back as the quiet NaN: left to the boundary test. */
      if ((patterns[i] & 0x7F800000) == 0x7F800000 && (patterns[i] & 0x007FFFFF) != 0)
        patterns[i] = 0x7FC00000;
    }
  data = g_bytes_new (patterns, n * sizeof (guint32));
  g_assert_true (serio_bundle_append_typed (bundle, "f", SERIO_DTYPE_FLOAT32, shape, 1, data, &error));
  g_assert_no_error (error);

  values = serio_bundle_get_values (bundle, 0, &len);
  for (guint i = 0; i < n; i++)
    {
      float f;

      memcpy (&f, &patterns[i], sizeof f);
      g_assert_cmphex (test_bits_of (values[i]), ==, test_canonical_bits (test_bits_of ((double) f)));
    }

  back = serio_bundle_get_typed_bytes (bundle, 0);
  got = g_bytes_get_data (back, &len);
  g_assert_cmpuint (len, ==, n * sizeof (guint32));
  g_assert_cmpmem (got, len, patterns, n * sizeof (guint32));
}

static void
test_append_typed_refusals (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GError) error = NULL;
  const gint64 big[] = { 1, G_GINT64_CONSTANT (9007199254740993) };
  const guint64 ubig[] = { G_MAXUINT64 };
  const guint8 bools[] = { 0, 1, 2 };
  const float floats[] = { 1, 2, 3 };
  g_autoptr(GBytes) big_bytes = g_bytes_new (big, sizeof big);
  g_autoptr(GBytes) ubig_bytes = g_bytes_new (ubig, sizeof ubig);
  g_autoptr(GBytes) bool_bytes = g_bytes_new (bools, sizeof bools);
  g_autoptr(GBytes) float_bytes = g_bytes_new (floats, sizeof floats);
  guint64 two[] = { 2 }, one[] = { 1 }, three[] = { 3 }, four[] = { 4 };

  g_assert_false (serio_bundle_append_typed (bundle, "i", SERIO_DTYPE_INT64, two, 1, big_bytes, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "9007199254740993"));
  g_assert_nonnull (strstr (error->message, "Element 1"));
  g_clear_error (&error);

  g_assert_false (serio_bundle_append_typed (bundle, "u", SERIO_DTYPE_UINT64, one, 1, ubig_bytes, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "18446744073709551615"));
  g_clear_error (&error);

  g_assert_false (serio_bundle_append_typed (bundle, "b", SERIO_DTYPE_BOOL, three, 1, bool_bytes, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "Element 2"));
  g_clear_error (&error);

  /* The size must be that of the shape */
  g_assert_false (serio_bundle_append_typed (bundle, "f", SERIO_DTYPE_FLOAT32, four, 1, float_bytes, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (serio_bundle_append_typed (bundle, "f", SERIO_DTYPE_FLOAT16, three, 1, float_bytes, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* A float64 array cannot have a base name that ends in a marker. */
  {
    const double d[] = { 1, 2, 3 };
    g_autoptr(GBytes) d_bytes = g_bytes_new (d, sizeof d);

    g_assert_false (serio_bundle_append_typed (bundle, "x@int8", SERIO_DTYPE_FLOAT64, three, 1, d_bytes, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_true (serio_bundle_append_typed (bundle, "x@int8", SERIO_DTYPE_FLOAT32, three, 1, float_bytes, &error));
    g_assert_no_error (error);
    g_assert_cmpstr (serio_bundle_get_name (bundle, 0), ==, "x@int8@float32[3]");
    g_assert_cmpint (serio_bundle_get_dtype (bundle, 0), ==, SERIO_DTYPE_FLOAT32);
    {
      g_autofree char *base = serio_bundle_get_base_name (bundle, 0);

      g_assert_cmpstr (base, ==, "x@int8");
    }
  }

  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);
}

/* The float64 appends take a typed name when the values fit, and refuse
 * (a critical, nothing appended) when one does not. */
static void
test_append_float64_typed_name (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double fits[] = { -128, 127, 0 };
  const double misfit[] = { 1, 128, 0 };
  const double half[] = { 0.5, 1 };
  g_autoptr(GBytes) misfit_bytes = g_bytes_new (misfit, sizeof misfit);
  g_autoptr(GBytes) typed = NULL;
  const gint8 expected[] = { -128, 127, 0 };

  serio_bundle_append (bundle, "w@int8[3]", fits, 3);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);
  g_assert_cmpint (serio_bundle_get_dtype (bundle, 0), ==, SERIO_DTYPE_INT8);
  typed = serio_bundle_get_typed_bytes (bundle, 0);
  g_assert_cmpmem (g_bytes_get_data (typed, NULL), g_bytes_get_size (typed), expected, sizeof expected);

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*value 1 (128)*w@int8[3]*int8*");
  serio_bundle_append (bundle, "w@int8[3]", misfit, 3);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*value 1 (128)*int8*");
  serio_bundle_append_bytes (bundle, "w@int8[3]", misfit_bytes);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*value 0 *h@float16[2]*float16*");
  {
    guint64 shape[1] = { 2 };
    const double tiny[] = { pow2 (-25), 1 };

    serio_bundle_append_with_shape (bundle, "h@float16", shape, 1, tiny, 2);
  }
  g_test_assert_expected_messages ();
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);

  /* Without a valid shape suffix there is no marker: any value goes. */
  serio_bundle_append (bundle, "w@int8", half, 2);
  serio_bundle_append (bundle, "w@int8[3]", half, 2);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 3);
  g_assert_cmpint (serio_bundle_get_dtype (bundle, 1), ==, SERIO_DTYPE_FLOAT64);
  g_assert_cmpint (serio_bundle_get_dtype (bundle, 2), ==, SERIO_DTYPE_FLOAT64);
}

/* ------------------------------------------------------------------ */
/* Names                                                              */
/* ------------------------------------------------------------------ */

typedef struct
{
  const char *text;
  const char *base;
  SerioDtype  dtype;
  guint       n_dims;
} NameCase;

static void
test_marker_parsing (void)
{
  const NameCase cases[] = {
    { "v1|w@float32[3]|3|1,2,3\n", "w", SERIO_DTYPE_FLOAT32, 1 },
    { "v1|w@float32[1x3]|3|1,2,3\n", "w", SERIO_DTYPE_FLOAT32, 2 },
    { "v1|w@float64[3]|3|1,2,3\n", "w@float64", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|w@complex64[3]|3|1,2,3\n", "w@complex64", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|a@b@int8[2]|2|1,2\n", "a@b", SERIO_DTYPE_INT8, 1 },
    { "v1|a@int8@b[2]|2|1,1p-1\n", "a@int8@b", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|step@int64[]|1|3\n", "step", SERIO_DTYPE_INT64, 0 },
    { "v1|@uint8[2]|2|1,2\n", "", SERIO_DTYPE_UINT8, 1 },
    { "v1|m@bool[4]|4|1,0,0,1\n", "m", SERIO_DTYPE_BOOL, 1 },
    { "v1|w@Int8[2]|2|1,1p-1\n", "w@Int8", SERIO_DTYPE_FLOAT64, 1 },
    /* a marker without a shape, or before a suffix that is not a shape */
    { "v1|w@int8|2|1p-1,3\n", "w@int8", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|w@int8[3]|2|1p-1,3\n", "w@int8[3]", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|w@int8[03]|3|1p-1,3,4\n", "w@int8[03]", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|w@int8 [2]|2|1p-1,3\n", "w@int8 ", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|w[2]@int8|2|1p-1,3\n", "w[2]@int8", SERIO_DTYPE_FLOAT64, 1 },
    { "v1|fc.bias|3|1p-1,3,4\n", "fc.bias", SERIO_DTYPE_FLOAT64, 1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (cases[i].text, &error);
      g_autoptr(GBytes) text = g_bytes_new_static (cases[i].text, strlen (cases[i].text));
      g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_bytes (text);
      g_autoptr(SerioReader) reader = serio_reader_new (stream);
      g_autofree char *base = NULL;
      g_autofree char *reader_base = NULL;
      g_autofree guint64 *shape = NULL;
      guint n_dims = 99;

      g_test_message ("%s", cases[i].text);
      g_assert_no_error (error);
      base = serio_bundle_get_base_name (bundle, 0);
      g_assert_cmpstr (base, ==, cases[i].base);
      g_assert_cmpint (serio_bundle_get_dtype (bundle, 0), ==, cases[i].dtype);
      shape = serio_bundle_get_shape (bundle, 0, &n_dims);
      g_assert_cmpuint (n_dims, ==, cases[i].n_dims);

      g_assert_true (serio_reader_next (reader, NULL, &error));
      g_assert_no_error (error);
      reader_base = serio_reader_get_base_name (reader);
      g_assert_cmpstr (reader_base, ==, cases[i].base);
      g_assert_cmpint (serio_reader_get_dtype (reader), ==, cases[i].dtype);

      /* the base name finds the array */
      g_assert_true (serio_bundle_lookup (bundle, cases[i].base, NULL));
    }
}

/* ------------------------------------------------------------------ */
/* Out-of-type values through every reader                            */
/* ------------------------------------------------------------------ */

typedef struct
{
  const char *text;
  guint64     line;
  guint64     index;
  const char *token;
  const char *type;
} BadCase;

static const BadCase bad_cases[] = {
  { "v1|a[2]|2|1p-1,2\nv1|b|1|0\nv1|w@int32[3]|3|1,1p-1,3\n", 3, 2, "1p-1", "int32" },
  { "v1|w@float32[2]|2|1,16777217p-24\n", 1, 2, "16777217p-24", "float32" },
  { "v1|w@float32[2]|2|3602879701896397p-55,1\n", 1, 1, "3602879701896397p-55", "float32" },
  { "v1|w@float16[2]|2|2049p-11,1\n", 1, 1, "2049p-11", "float16" },
  { "v1|w@float16[2]|2|65520,1\n", 1, 1, "65520", "float16" },
  { "v1|w@float16[1]|1|1p-25\n", 1, 1, "1p-25", "float16" },
  { "v1|w@bfloat16[2]|2|1,1025p-10\n", 1, 2, "1025p-10", "bfloat16" },
  { "v1|w@int8[3]|3|-128,127,128\n", 1, 3, "128", "int8" },
  { "v1|w@int8[2]|2|-129,0\n", 1, 1, "-129", "int8" },
  { "v1|w@int16[2]|2|-0,0\n", 1, 1, "-0", "int16" },
  { "v1|w@int32[2]|2|0,nan\n", 1, 2, "nan", "int32" },
  { "v1|w@int64[1]|1|1p63\n", 1, 1, "1p63", "int64" },
  { "v1|w@uint8[2]|2|255,256\n", 1, 2, "256", "uint8" },
  { "v1|w@uint8[1]|1|-1\n", 1, 1, "-1", "uint8" },
  { "v1|w@uint16[1]|1|inf\n", 1, 1, "inf", "uint16" },
  { "v1|w@uint32[1]|1|4294967296\n", 1, 1, "4294967296", "uint32" },
  { "v1|w@uint64[1]|1|1p64\n", 1, 1, "1p64", "uint64" },
  { "v1|m@bool[4]|4|1,0,2,1\n", 1, 3, "2", "bool" },
  { "v1|m@bool[1]|1|-0\n", 1, 1, "-0", "bool" },
  { "v1|s@int8[]|1|1p-1\n", 1, 1, "1p-1", "int8" },
  /* the typed value comes before a bad token or count after it */
  { "v1|w@int8[3]|3|300,x,1\n", 1, 1, "300", "int8" },
  { "v1|w@int8[3]|3|1,2,300,4\n", 1, 3, "300", "int8" },
  /* in a sealed text */
  { "v1|serio.sealed|1|1\nv1|w@uint8[2]|2|1,1p-1\nv1|serio.seal|3|2,1,1\n", 2, 2, "1p-1", "uint8" },
};

static void
assert_domain (const GError  *error,
               const BadCase *c)
{
  g_autofree char *quoted = g_strdup_printf ("“%s”", c->token);

  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_cmpuint (serio_error_get_line (error), ==, c->line);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, c->index);
  g_assert_nonnull (strstr (error->message, quoted));
  g_assert_nonnull (strstr (error->message, c->type));
}

/* Reads @text through a reader fed @chunk bytes a read, @piece values a
 * read_values() call; returns the error. */
static GError *
read_through_reader (const char *text,
                     gssize      chunk,
                     gsize       piece,
                     guint       threads)
{
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (bytes, chunk);
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autofree double *values = g_new (double, piece);
  GError *error = NULL;

  serio_reader_set_threads (reader, threads);
  while (serio_reader_next (reader, NULL, &error))
    {
      gsize n;

      do
        {
          if (!serio_reader_read_values (reader, values, piece, &n, NULL, &error))
            return error;
        }
      while (n > 0);
    }

  return error;
}

/* A text of one record of @dtype holding @values (@n of them). */
static GBytes *
typed_text (SerioDtype    dtype,
            const double *values,
            gsize         n)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *text = NULL;
  const char *plain_name = "v1|f|";
  g_autofree char *typed_name = g_strdup_printf ("v1|f@%s[%" G_GSIZE_FORMAT "]|",
                                                 serio_dtype_to_string (dtype), n);

  /* The text of a float64 record "f", renamed: its values as they are. */
  g_autoptr(GString) out = NULL;

  serio_bundle_append (bundle, "f", values, n);
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_true (g_str_has_prefix (text, plain_name));
  out = g_string_new (typed_name);
  g_string_append (out, text + strlen (plain_name));
  return g_string_free_to_bytes (g_steal_pointer (&out));
}

static void
test_misfit_positions (void)
{
  static const struct {
    SerioDtype dtype;
    double     value;
  } cases[] = {
    /* the largest, beyond it, the subnormals, precision, a float64
     * subnormal, infinities, -0 */
    { SERIO_DTYPE_FLOAT32, (double) G_MAXFLOAT },
    { SERIO_DTYPE_FLOAT32, 0x1.fffffe1p127 },
    { SERIO_DTYPE_FLOAT32, 0x1p128 },
    { SERIO_DTYPE_FLOAT32, 0x1p-149 },
    { SERIO_DTYPE_FLOAT32, 0x1.8p-148 },
    { SERIO_DTYPE_FLOAT32, 0x1p-150 },
    { SERIO_DTYPE_FLOAT32, 0x1p-126 },
    { SERIO_DTYPE_FLOAT32, 0x1.000002p0 },
    { SERIO_DTYPE_FLOAT32, 0x1.000001p0 },
    { SERIO_DTYPE_FLOAT32, 0.1 },
    { SERIO_DTYPE_FLOAT32, 0x1p-1074 },
    { SERIO_DTYPE_FLOAT32, INFINITY },
    { SERIO_DTYPE_FLOAT32, -INFINITY },
    { SERIO_DTYPE_FLOAT32, -0.0 },
    { SERIO_DTYPE_FLOAT16, 65504 },
    { SERIO_DTYPE_FLOAT16, 65520 },
    { SERIO_DTYPE_FLOAT16, 0x1p-24 },
    { SERIO_DTYPE_FLOAT16, 0x1p-25 },
    { SERIO_DTYPE_FLOAT16, 0x1p-14 },
    { SERIO_DTYPE_FLOAT16, 0x1.004p0 },
    { SERIO_DTYPE_FLOAT16, 0x1.002p0 },
    { SERIO_DTYPE_FLOAT16, 2049 },
    { SERIO_DTYPE_FLOAT16, -INFINITY },
    { SERIO_DTYPE_BFLOAT16, 0x1.fep127 },
    { SERIO_DTYPE_BFLOAT16, 0x1.ffp127 },
    { SERIO_DTYPE_BFLOAT16, 0x1p-133 },
    { SERIO_DTYPE_BFLOAT16, 0x1p-134 },
    { SERIO_DTYPE_BFLOAT16, 0x1.02p0 },
    { SERIO_DTYPE_BFLOAT16, 0x1.01p0 },
    { SERIO_DTYPE_BFLOAT16, INFINITY },
  };
  static const gsize positions[] = { 0, 1, 20, 39 };

  g_test_summary ("A value a float type cannot hold is found at any place among values it "
                  "holds, after subnormals and infinities it holds, and the first one is "
                  "reported; every value it holds reads back with its bits.");

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    for (gsize p = 0; p < G_N_ELEMENTS (positions); p++)
      for (int with_subnormal = 0; with_subnormal <= 1; with_subnormal++)
        {
          SerioDtype dtype = cases[c].dtype;
          gsize at = positions[p];
          gboolean holds = serio_dtype_holds (dtype, cases[c].value);
          /* the smallest subnormal of the type, which it holds */
          double subnormal = dtype == SERIO_DTYPE_FLOAT32 ? 0x1p-149 :
                             dtype == SERIO_DTYPE_FLOAT16 ? 0x1p-24 : 0x1p-133;
          double values[40];
          g_autoptr(GBytes) text = NULL;
          g_autoptr(SerioReader) reader = NULL;
          g_autoptr(GError) error = NULL;
          double got[40];
          gssize first_bad;
          gsize n = 0;

          for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
            values[i] = 0.5 + (double) i / 64;
          if (with_subnormal)
            values[at == 3 ? 4 : 3] = subnormal;
          values[at] = cases[c].value;
          /* a second misfit further on never hides the first */
          if (at < 39)
            values[39] = 0.1;
          text = typed_text (dtype, values, G_N_ELEMENTS (values));

          reader = serio_reader_new_for_bytes (text);
          serio_reader_set_threads (reader, 1);
          g_assert_true (serio_reader_next (reader, NULL, &error));
          g_assert_no_error (error);
          g_assert_cmpint (serio_reader_get_dtype (reader), ==, dtype);
          /* The first value the type does not hold: the one at at, or the
           * second misfit, if any. */
          first_bad = !holds ? (gssize) at : at < 39 ? 39 : -1;
          if (first_bad < 0)
            {
              g_assert_true (serio_reader_read_values (reader, got, G_N_ELEMENTS (got), &n, NULL,
                                                       &error));
              g_assert_no_error (error);
              g_assert_cmpuint (n, ==, G_N_ELEMENTS (got));
              for (gsize i = 0; i < n; i++)
                g_assert_cmphex (test_bits_of (got[i]), ==, test_bits_of (values[i]));
            }
          else
            {
              g_assert_false (serio_reader_read_values (reader, got, G_N_ELEMENTS (got), &n, NULL,
                                                        &error));
              g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
              g_assert_cmpuint (serio_error_get_value_index (error), ==, first_bad + 1);
            }
        }
}

/* A value that @dtype holds, the @i-th of four in turn: its least, its
 * greatest, 0 and 1. */
static double
integer_background (SerioDtype dtype,
                    gsize      i)
{
  double least = 0.0, greatest = 1.0;

  switch (dtype)
    {
    case SERIO_DTYPE_INT8: least = -128.0; greatest = 127.0; break;
    case SERIO_DTYPE_INT16: least = -32768.0; greatest = 32767.0; break;
    case SERIO_DTYPE_INT32: least = -2147483648.0; greatest = 2147483647.0; break;
    case SERIO_DTYPE_INT64: least = -0x1p63; greatest = nextafter (0x1p63, 0); break;
    case SERIO_DTYPE_UINT8: greatest = 255.0; break;
    case SERIO_DTYPE_UINT16: greatest = 65535.0; break;
    case SERIO_DTYPE_UINT32: greatest = 4294967295.0; break;
    case SERIO_DTYPE_UINT64: greatest = nextafter (0x1p64, 0); break;
    default: break;
    }

  switch (i % 4)
    {
    case 0: return least;
    case 1: return greatest;
    case 2: return 0.0;
    default: return 1.0;
    }
}

static void
test_misfit_integers (void)
{
  static const SerioDtype types[] = {
    SERIO_DTYPE_INT8, SERIO_DTYPE_INT16, SERIO_DTYPE_INT32, SERIO_DTYPE_INT64,
    SERIO_DTYPE_UINT8, SERIO_DTYPE_UINT16, SERIO_DTYPE_UINT32, SERIO_DTYPE_UINT64,
    SERIO_DTYPE_BOOL,
  };
  const double edges[] = {
    -0.0, 0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 1.5, 0x1p-1074, -0x1p-1074, 0x1p-1022, 1e300, -1e300,
    INFINITY, -INFINITY, test_double_of (TEST_CANONICAL_NAN_BITS),
    127.0, 128.0, -128.0, -129.0, 127.5, -128.5, 255.0, 256.0, 255.5,
    32767.0, 32768.0, -32768.0, -32769.0, 65535.0, 65536.0,
    2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 2147483647.5, -2147483648.5,
    4294967295.0, 4294967296.0, 4294967295.5, -2147483648.0 - 0x1p-21,
    0x1p53, 0x1p53 + 2, 0x1p63, -0x1p63, 0x1p64, -0x1p64,
  };
  static const gsize lengths[] = { 1, 2, 3, 40, 41 };
  guint n_cases = 0;

  g_test_summary ("The first value an integer type or bool does not hold is found at any "
                  "place, in records of odd and even lengths, as serio_dtype_holds() "
                  "decides each value: the edges of every range, fractions, -0, "
                  "subnormals, infinities and NaN; every record it holds reads back "
                  "with its bits.");

  for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
    for (gsize e = 0; e < G_N_ELEMENTS (edges); e++)
      for (gsize l = 0; l < G_N_ELEMENTS (lengths); l++)
        {
          SerioDtype dtype = types[t];
          gsize n = lengths[l];
          const gsize positions[] = { 0, 1, n / 2, n - 2, n - 1 };

          for (gsize p = 0; p < G_N_ELEMENTS (positions); p++)
            {
              gsize at = MIN (positions[p], n - 1);
              double values[41], got[41];
              g_autoptr(GBytes) text = NULL;
              g_autoptr(SerioReader) reader = NULL;
              g_autoptr(GError) error = NULL;
              gssize first_bad = -1;
              gsize n_read = 0;

              for (gsize i = 0; i < n; i++)
                values[i] = integer_background (dtype, i);
              values[at] = edges[e];
              /* now and then a second misfit further on, which must
               * not hide the first */
              if ((e + p) % 2 == 0 && at + 1 < n)
                values[n - 1] = 0.25;
              for (gsize i = 0; i < n && first_bad < 0; i++)
                if (!serio_dtype_holds (dtype, values[i]))
                  first_bad = (gssize) i;

              text = typed_text (dtype, values, n);
              reader = serio_reader_new_for_bytes (text);
              serio_reader_set_threads (reader, 1);
              g_assert_true (serio_reader_next (reader, NULL, &error));
              g_assert_no_error (error);
              g_assert_cmpint (serio_reader_get_dtype (reader), ==, dtype);
              if (first_bad < 0)
                {
                  g_assert_true (serio_reader_read_values (reader, got, n, &n_read, NULL, &error));
                  g_assert_no_error (error);
                  g_assert_cmpuint (n_read, ==, n);
                  for (gsize i = 0; i < n; i++)
                    g_assert_cmphex (test_bits_of (got[i]), ==, test_bits_of (values[i]));
                }
              else
                {
                  g_assert_false (serio_reader_read_values (reader, got, n, &n_read, NULL, &error));
                  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
                  g_assert_cmpuint (serio_error_get_value_index (error), ==, first_bad + 1);
                }
              n_cases++;
            }
        }

  g_test_message ("%u records", n_cases);
}

/* A random name for test_marker_random(): bytes of type names, '@' and
 * '.', then now and then '@' and a type name (or one a letter longer or
 * shorter), then, most times, a shape suffix of the record's count. */
static char *
random_marker_name (guint count)
{
  static const char *const pieces[] = {
    "a", "@", ".", "int", "uint", "8", "16", "32", "64", "float", "bfloat", "bool", "x",
  };
  static const char *const markers[] = {
    "@int8", "@uint8", "@float32", "@bfloat16", "@bfloat166", "@float6", "@bool", "@float64",
    "@int64", "@uint16", "@Int8", "@", "@@int8",
  };
  GString *name = g_string_new (NULL);
  int n_pieces = g_test_rand_int_range (0, 6);

  for (int i = 0; i < n_pieces; i++)
    g_string_append (name, pieces[g_test_rand_int_range (0, G_N_ELEMENTS (pieces))]);
  if (g_test_rand_int_range (0, 3) != 0)
    g_string_append (name, markers[g_test_rand_int_range (0, G_N_ELEMENTS (markers))]);
  if (g_test_rand_int_range (0, 5) != 0)
    g_string_append_printf (name, "[%u]", count);
  return g_string_free (name, FALSE);
}

/* The type and base name of @name, of @count values, by the rule as
 * serio-v1-files.md states it: with a suffix "[count]" at its end, the
 * last '@' before the suffix followed by the name of a type other than
 * float64 up to the suffix is a marker. */
static SerioDtype
reference_marker (const char *name,
                  guint       count,
                  char      **base)
{
  g_autofree char *suffix = g_strdup_printf ("[%u]", count);
  gsize len = strlen (name), before = len - strlen (suffix);
  const char *at;
  g_autofree char *head = NULL;
  SerioDtype dtype;

  if (!g_str_has_suffix (name, suffix))
    {
      *base = g_strdup (name);
      return SERIO_DTYPE_FLOAT64;
    }
  head = g_strndup (name, before);
  at = strrchr (head, '@');
  /* the type named, compared with each name as it is written */
  dtype = SERIO_DTYPE_FLOAT64;
  for (int t = 0; at != NULL && t <= SERIO_DTYPE_BOOL; t++)
    if (strcmp (at + 1, serio_dtype_to_string ((SerioDtype) t)) == 0)
      dtype = (SerioDtype) t;
  if (dtype == SERIO_DTYPE_FLOAT64)
    {
      *base = g_steal_pointer (&head);
      return SERIO_DTYPE_FLOAT64;
    }
  *base = g_strndup (head, at - head);
  return dtype;
}

static void
test_marker_random (void)
{
  const guint n_records = test_iterations (3000);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) counts = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("Random names with type names, '@' near and far from a shape suffix, "
                  "and markers of types a letter off, give the type and base name that "
                  "the marker rule gives, read one by one, in a bundle, and as many short "
                  "records on two threads.");

  for (guint i = 0; i < n_records; i++)
    {
      guint count = (guint) g_test_rand_int_range (1, 5);
      char *name = random_marker_name (count);

      g_string_append_printf (text, "v1|%s|%u|1", name, count);
      for (guint k = 1; k < count; k++)
        g_string_append (text, ",1");
      g_string_append_c (text, '\n');
      g_ptr_array_add (names, name);
      g_array_append_val (counts, count);
    }
  bytes = g_string_free_to_bytes (g_steal_pointer (&text));

  for (guint threads = 1; threads <= 2; threads++)
    {
      g_autoptr(SerioReader) reader = serio_reader_new_for_bytes (bytes);
      g_autoptr(SerioBundle) bundle = NULL;
      guint i = 0;

      serio_reader_set_threads (reader, threads);
      while (serio_reader_next (reader, NULL, &error))
        {
          guint8 room[8 * 4];
          gsize n_read;
          g_autofree char *base = NULL;
          g_autofree char *expected_base = NULL;
          SerioDtype expected;

          g_assert_cmpuint (i, <, n_records);
          expected = reference_marker (names->pdata[i], g_array_index (counts, guint, i),
                                       &expected_base);
          base = serio_reader_get_base_name (reader);
          if (serio_reader_get_dtype (reader) != expected || g_strcmp0 (base, expected_base) != 0)
            g_test_message ("%s", (const char *) names->pdata[i]);
          g_assert_cmpint (serio_reader_get_dtype (reader), ==, expected);
          g_assert_cmpstr (base, ==, expected_base);
          /* read whole, as a batch of short records is */
          g_assert_true (serio_reader_read_typed (reader, room, g_array_index (counts, guint, i),
                                                  &n_read, NULL, &error));
          g_assert_no_error (error);
          i++;
        }
      g_assert_no_error (error);
      g_assert_cmpuint (i, ==, n_records);

      if (threads == 1)
        {
          bundle = serio_bundle_new_from_bytes (bytes, &error);
          g_assert_no_error (error);
          for (i = 0; i < n_records; i++)
            {
              g_autofree char *base = serio_bundle_get_base_name (bundle, i);
              g_autofree char *expected_base = NULL;
              SerioDtype expected = reference_marker (names->pdata[i],
                                                      g_array_index (counts, guint, i),
                                                      &expected_base);

              g_assert_cmpint (serio_bundle_get_dtype (bundle, i), ==, expected);
              g_assert_cmpstr (base, ==, expected_base);
            }
        }
    }
}

static void
test_domain_every_reader (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      const BadCase *c = &bad_cases[i];
      g_autoptr(GError) memory_error = NULL;
      g_autoptr(GBytes) bytes = g_bytes_new_static (c->text, strlen (c->text));
      g_autoptr(SerioBundle) bundle = NULL;
      g_autoptr(GInputStream) stream = NULL;
      gssize chunks[] = { 1, 3, -7, 1 << 20 };
      gsize pieces[] = { 1, 2, 4096 };

      g_test_message ("%s", c->text);
      bundle = serio_bundle_new_from_bytes (bytes, &memory_error);
      g_assert_null (bundle);
      assert_domain (memory_error, c);

      stream = g_memory_input_stream_new_from_bytes (bytes);
      {
        g_autoptr(GError) error = NULL;

        bundle = serio_bundle_new_from_stream (stream, NULL, &error);
        g_assert_null (bundle);
        assert_domain (error, c);
        g_assert_cmpstr (error->message, ==, memory_error->message);
      }

      /* from a file: the same error after the file's name */
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(GFileIOStream) io = NULL;
        g_autoptr(GFile) file = g_file_new_tmp ("serio-dtype-XXXXXX.serio", &io, &error);
        g_autofree char *suffix = NULL;

        g_assert_no_error (error);
        g_assert_true (g_file_replace_contents (file, c->text, strlen (c->text), NULL, FALSE,
                                                G_FILE_CREATE_NONE, NULL, NULL, &error));
        bundle = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);
        g_assert_null (bundle);
        assert_domain (error, c);
        suffix = g_strconcat (": ", memory_error->message, NULL);
        g_assert_true (g_str_has_suffix (error->message, suffix));
        g_file_delete (file, NULL, NULL);
      }

      for (gsize k = 0; k < G_N_ELEMENTS (chunks); k++)
        for (gsize p = 0; p < G_N_ELEMENTS (pieces); p++)
          {
            g_autoptr(GError) error = read_through_reader (c->text, chunks[k], pieces[p], 1);

            assert_domain (error, c);
            g_assert_cmpstr (error->message, ==, memory_error->message);
          }
    }
}

/* The values that fit read back through the readers, for every type. */
static void
test_good_texts (void)
{
  const char *texts[] = {
    "v1|w@float32[3]|3|16777215p-24,-1p-149,inf\n",
    "v1|w@float16[4]|4|65504,1p-24,nan,2047p-10\n",
    "v1|w@bfloat16[2]|2|255p120,1p-133\n",
    "v1|w@int8[2]|2|-128,127\nv1|w@uint64[2]|2|9007199254740991p11,0\n",
    "v1|w@int64[3]|3|-1p63,9007199254740992,9007199254740991p10\n",
    "v1|m@bool[2]|2|0,1\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (texts[i], &error);

      g_test_message ("%s", texts[i]);
      g_assert_no_error (error);
      g_assert_nonnull (bundle);
      error = read_through_reader (texts[i], 1, 1, 1);
      g_assert_no_error (error);
    }
}

/* A long typed record: the parallel parse (several threads on a record of
 * megabytes) checks the values as the serial one does. */
static char *
long_record (gsize        n_values,
             gsize        bad_domain,
             gsize        bad_syntax)
{
  GString *text = g_string_new ("v1|ok|1|0\nv1|big@int32[");

  g_string_append_printf (text, "%" G_GSIZE_FORMAT "]|%" G_GSIZE_FORMAT "|", n_values, n_values);
  for (gsize i = 0; i < n_values; i++)
    {
      if (i > 0)
        g_string_append_c (text, ',');
      if (i + 1 == bad_domain)
        g_string_append (text, "3p-1");
      else if (i + 1 == bad_syntax)
        g_string_append (text, "+1");
      else
        g_string_append_printf (text, "%" G_GSIZE_FORMAT, 1000000 + i);
    }
  g_string_append_c (text, '\n');

  return g_string_free (text, FALSE);
}

static void
test_domain_parallel (void)
{
  /* 8 bytes a value: more than the 512 KiB from which a record's values
   * are parsed in parallel, even under a slow tool. */
  const gsize n = test_slow_tool () ? 80000 : 400000;
  struct { gsize domain, syntax; } cases[] = {
    { n - 10000, 0 },     /* deep in the parallel spans */
    { 5, 0 },
    { 1000, n / 4 * 3 },  /* a syntax error after it, in another span */
    { 0, 0 },             /* valid */
  };

  if (g_get_num_processors () < 2)
    g_test_message ("one processor: the parallel path is not taken");

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = long_record (n, cases[i].domain, cases[i].syntax);
      g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
      char *messages[2] = { NULL, NULL };

      for (int many = 0; many < 2; many++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GError) reader_error = NULL;
          g_autoptr(SerioBundle) bundle = NULL;

          if (many)
            g_unsetenv ("SERIO_THREADS");
          else
            g_setenv ("SERIO_THREADS", "1", TRUE);

          bundle = serio_bundle_new_from_bytes (bytes, &error);
          reader_error = read_through_reader (text, 1 << 20, 1 << 20, many ? 4 : 1);
          if (cases[i].domain == 0)
            {
              g_assert_no_error (error);
              g_assert_no_error (reader_error);
              g_assert_cmpint (serio_bundle_get_dtype (bundle, 1), ==, SERIO_DTYPE_INT32);
              continue;
            }

          g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
          g_assert_cmpuint (serio_error_get_line (error), ==, 2);
          g_assert_cmpuint (serio_error_get_value_index (error), ==, cases[i].domain);
          g_assert_nonnull (strstr (error->message, "“3p-1”"));
          g_assert_error (reader_error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
          g_assert_cmpstr (reader_error->message, ==, error->message);
          messages[many] = g_strdup (error->message);
        }

      g_assert_cmpstr (messages[0], ==, messages[1]);
      g_free (messages[0]);
      g_free (messages[1]);
    }

  g_unsetenv ("SERIO_THREADS");
}

/* ------------------------------------------------------------------ */
/* Writers                                                            */
/* ------------------------------------------------------------------ */

static char *
written_text (GOutputStream *out)
{
  GMemoryOutputStream *memory = G_MEMORY_OUTPUT_STREAM (out);

  return g_strndup (g_memory_output_stream_get_data (memory),
                    g_memory_output_stream_get_data_size (memory));
}

static void
test_writer_refusals (void)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  const double misfit[] = { 1, 300, 2 };
  const double fits[] = { 1, 2, 3 };
  const gint64 big[] = { 1, G_GINT64_CONSTANT (-9007199254740993) };
  const guint8 bools[] = { 1, 7 };
  g_autoptr(GBytes) big_bytes = g_bytes_new (big, sizeof big);
  g_autoptr(GBytes) bool_bytes = g_bytes_new (bools, sizeof bools);
  g_autoptr(GBytes) odd_bytes = g_bytes_new ("abc", 3);
  g_autoptr(GBytes) last_bools = g_bytes_new ("\1\0", 2);
  guint64 two[] = { 2 };

  /* a typed stored name and doubles */
  g_assert_true (serio_writer_begin_array (writer, "w@int8[3]", 3, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (serio_writer_add_values (writer, misfit, 3, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "“w@int8[3]”"));
  g_assert_nonnull (strstr (error->message, "value 2 “300”"));
  g_assert_nonnull (strstr (error->message, "int8"));
  g_clear_error (&error);
  g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 3);
  g_assert_true (serio_writer_add_values (writer, fits, 1, NULL, &error));
  g_assert_false (serio_writer_add_values (writer, misfit + 1, 1, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "value 2 “300”"));
  g_clear_error (&error);
  g_assert_true (serio_writer_add_values (writer, fits + 1, 2, NULL, &error));
  g_assert_no_error (error);

  /* write_array refuses before it writes the record */
  g_assert_false (serio_writer_write_array (writer, "v@uint8[3]", misfit, 3, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_clear_error (&error);
  g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 0);

  /* typed bytes that a double cannot hold */
  g_assert_false (serio_writer_write_typed (writer, "i", SERIO_DTYPE_INT64, two, 1, big_bytes, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "-9007199254740993"));
  g_assert_nonnull (strstr (error->message, "Element 1"));
  g_clear_error (&error);
  g_assert_false (serio_writer_write_typed (writer, "b", SERIO_DTYPE_BOOL, two, 1, bool_bytes, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_clear_error (&error);

  g_assert_true (serio_writer_begin_typed_array (writer, "b", SERIO_DTYPE_BOOL, two, 1, NULL, &error));
  g_assert_false (serio_writer_add_typed_bytes (writer, bool_bytes, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "“b@bool[2]”"));
  g_clear_error (&error);
  g_assert_false (serio_writer_add_typed_bytes (writer, odd_bytes, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (serio_writer_add_typed_bytes (writer, last_bools, NULL, &error));
  g_assert_no_error (error);

  /* a float64 array whose base name ends in a marker */
  g_assert_false (serio_writer_begin_typed_array (writer, "x@int8", SERIO_DTYPE_FLOAT64, two, 1, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_no_error (error);

  /* nothing of a refused call was written */
  text = written_text (out);
  g_assert_cmpstr (text, ==, "v1|w@int8[3]|3|1,2,3\nv1|b@bool[2]|2|1,0\n");
}

/* A typed array of every type streamed through a SerioWriter and read
 * back with a SerioReader in pieces. */
static void
test_writer_reader_stream (void)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GInputStream) in = NULL;
  g_autoptr(SerioReader) reader = NULL;
  const gsize n_big = test_slow_tool () ? 30000 : 300000;
  g_autofree float *big = g_new (float, n_big);
  g_autoptr(GBytes) big_bytes = NULL;
  guint64 big_shape[2] = { 3, n_big / 3 };
  int d;

  for (d = 0; d < N_DTYPES; d++)
    {
      g_autoptr(GBytes) data = boundary_bytes ((SerioDtype) d);
      guint64 shape[1] = { n_elements (data, (SerioDtype) d) };
      gsize size = g_bytes_get_size (data), element = serio_dtype_get_size ((SerioDtype) d);

      /* in two pieces */
      g_assert_true (serio_writer_begin_typed_array (writer, serio_dtype_to_string ((SerioDtype) d),
                                                     (SerioDtype) d, shape, 1, NULL, &error));
      g_assert_no_error (error);
      {
        g_autoptr(GBytes) first = g_bytes_new_from_bytes (data, 0, element);
        g_autoptr(GBytes) rest = g_bytes_new_from_bytes (data, element, size - element);

        g_assert_true (serio_writer_add_typed_bytes (writer, first, NULL, &error));
        g_assert_true (serio_writer_add_typed_bytes (writer, rest, NULL, &error));
        g_assert_no_error (error);
      }
    }
  for (gsize i = 0; i < n_big; i++)
    big[i] = (float) g_test_rand_double_range (-1, 1);
  big_bytes = g_bytes_new (big, n_big * sizeof (float));
  g_assert_true (serio_writer_write_typed (writer, "big", SERIO_DTYPE_FLOAT32, big_shape, 2, big_bytes,
                                           NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);

  text = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
  in = test_chunked_input_stream_new (text, -4096);
  reader = serio_reader_new (in);

  for (d = 0; d < N_DTYPES; d++)
    {
      g_autoptr(GBytes) data = boundary_bytes ((SerioDtype) d);
      g_autoptr(GByteArray) got = g_byte_array_new ();
      g_autoptr(GBytes) got_bytes = NULL;
      g_autofree char *base = NULL;

      g_assert_true (serio_reader_next (reader, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (serio_reader_get_dtype (reader), ==, d);
      base = serio_reader_get_base_name (reader);
      g_assert_cmpstr (base, ==, serio_dtype_to_string ((SerioDtype) d));

      for (;;)
        {
          g_autoptr(GBytes) piece = serio_reader_read_typed_bytes (reader, 3, NULL, &error);

          g_assert_no_error (error);
          if (g_bytes_get_size (piece) == 0)
            break;
          g_byte_array_append (got, g_bytes_get_data (piece, NULL), g_bytes_get_size (piece));
        }
      got_bytes = g_bytes_new (got->data, got->len);
      test_assert_same_bytes (got_bytes, data);
    }

  /* the large one with read_typed into a float buffer, in pieces */
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpint (serio_reader_get_dtype (reader), ==, SERIO_DTYPE_FLOAT32);
  {
    g_autofree float *back = g_new (float, n_big);
    gsize done = 0, n;
    guint n_dims;
    g_autofree guint64 *shape = serio_reader_get_shape (reader, &n_dims);

    g_assert_cmpuint (n_dims, ==, 2);
    g_assert_cmpuint (shape[1], ==, n_big / 3);
    do
      {
        g_assert_true (serio_reader_read_typed (reader, back + done, MIN (n_big - done, 100003), &n,
                                                NULL, &error));
        g_assert_no_error (error);
        done += n;
      }
    while (n > 0);
    g_assert_cmpuint (done, ==, n_big);
    g_assert_cmpmem (back, n_big * sizeof (float), big, n_big * sizeof (float));
  }
  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_reader_get_sealed (reader));
  g_assert_true (serio_reader_get_finished (reader));
}

/* read_values gives doubles for a typed array. */
/* @n random elements of @dtype that a double holds, at @out (no
 * alignment): random bit patterns for the floating types and the narrow
 * integers, at most 2^53 in magnitude for the 64-bit ones, 0 and 1 for
 * bool, and every eighth or so one of boundary_bytes(). */
static void
fill_random_elements (SerioDtype  dtype,
                      guint8     *out,
                      gsize       n)
{
  g_autoptr(GBytes) boundary = boundary_bytes (dtype);
  gsize element = serio_dtype_get_size (dtype);
  gsize n_boundary = n_elements (boundary, dtype);
  const guint8 *special = g_bytes_get_data (boundary, NULL);

  for (gsize i = 0; i < n; i++)
    {
      guint64 bits = test_rand_u64 ();

      if (g_test_rand_int_range (0, 8) == 0)
        {
          memcpy (out + i * element,
                  special + g_test_rand_int_range (0, (gint32) n_boundary) * element, element);
          continue;
        }
      if (dtype == SERIO_DTYPE_INT64)
        bits = (guint64) ((gint64) (bits >> 10) - (G_GINT64_CONSTANT (1) << 53));
      else if (dtype == SERIO_DTYPE_UINT64)
        bits >>= 11;
      else if (dtype == SERIO_DTYPE_BOOL)
        bits &= 1;
      /* little-endian hosts only write the low bytes; big-endian ones the
       * high ones, which are as random */
      memcpy (out + i * element, &bits, element);
    }
}

/* The writer's threads convert typed elements as they format them (each
 * its own blocks): whatever the threads, the pieces and the alignment of
 * the data, the text is the one the same elements give through a bundle,
 * which converts them all to doubles first. */
static void
test_writer_typed_parallel (void)
{
  /* several of the writer's blocks of 16,384 values, and a tail */
  const gsize n = test_slow_tool () ? 50001 : 200003;
  static const guint thread_counts[] = { 1, 2, 4 };

  for (int d = 0; d < N_DTYPES; d++)
    {
      SerioDtype dtype = (SerioDtype) d;
      gsize element = serio_dtype_get_size (dtype);
      g_autofree guint8 *storage = g_malloc (n * element + 8);
      g_autoptr(SerioBundle) bundle = serio_bundle_new ();
      g_autoptr(GBytes) reference = NULL;
      g_autoptr(GError) error = NULL;
      guint64 shape[1] = { n };

      fill_random_elements (dtype, storage, n);
      {
        g_autoptr(GBytes) data = g_bytes_new_static (storage, n * element);

        g_assert_true (serio_bundle_append_typed (bundle, "w", dtype, shape, 1, data, &error));
        g_assert_no_error (error);
      }
      reference = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);

      for (guint offset = 0; offset <= 1; offset++)
        {
          /* at @storage + 1, no element but the bytes is aligned */
          if (offset == 1)
            memmove (storage + 1, storage, n * element);

          for (gsize t = 0; t < G_N_ELEMENTS (thread_counts); t++)
            {
              for (int whole = 0; whole <= 1; whole++)
                {
                  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
                  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_NONE);
                  g_autoptr(GBytes) data = g_bytes_new_static (storage + offset, n * element);
                  g_autoptr(GBytes) text = NULL;
                  /* uneven pieces: a value, a block and some, a few, more
                   * than two blocks */
                  static const gsize pieces[] = { 1, 16385, 7, 40000, 3 };
                  gsize done = 0;

                  g_test_message ("%s, data at offset %u, %u threads, %s",
                                  serio_dtype_to_string (dtype), offset, thread_counts[t],
                                  whole ? "one call" : "in pieces");
                  serio_writer_set_threads (writer, thread_counts[t]);
                  g_assert_true (serio_writer_begin_typed_array (writer, "w", dtype, shape, 1,
                                                                 NULL, &error));
                  g_assert_no_error (error);
                  for (gsize p = 0; done < n; p++)
                    {
                      gsize count = whole ? n : MIN (pieces[p % G_N_ELEMENTS (pieces)], n - done);
                      g_autoptr(GBytes) piece = g_bytes_new_from_bytes (data, done * element,
                                                                        count * element);

                      g_assert_true (serio_writer_add_typed_bytes (writer, piece, NULL, &error));
                      g_assert_no_error (error);
                      done += count;
                    }
                  g_assert_true (serio_writer_close (writer, NULL, &error));
                  g_assert_no_error (error);

                  text = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
                  test_assert_same_bytes (text, reference);
                }
            }
        }
    }
}

static void
test_reader_values_of_typed (void)
{
  const char *text = "v1|m@bool[3]|3|1,0,1\nv1|h@float16[2]|2|1p-24,65504\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (bytes);
  g_autoptr(SerioReader) reader = serio_reader_new (in);
  g_autoptr(GError) error = NULL;
  double values[3];
  const guint64 bool_bits[] = { test_bits_of (1), 0, test_bits_of (1) };
  const guint64 half_bits[] = { test_bits_of (pow2 (-24)), test_bits_of (65504) };
  gsize n;

  g_assert_cmpint (serio_reader_get_dtype (reader), ==, SERIO_DTYPE_FLOAT64);
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_true (serio_reader_read_values (reader, values, 3, &n, NULL, &error));
  g_assert_cmpuint (n, ==, 3);
  test_assert_same_bits (values, bool_bits, 3);
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpint (serio_reader_get_dtype (reader), ==, SERIO_DTYPE_FLOAT16);
  g_assert_true (serio_reader_read_values (reader, values, 3, &n, NULL, &error));
  g_assert_cmpuint (n, ==, 2);
  test_assert_same_bits (values, half_bits, 2);
  g_assert_no_error (error);
}

/* Doubles given as bytes for a typed array, aligned or not, are checked
 * before anything is written or appended. */
static void
test_typed_name_unaligned_bytes (void)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GError) error = NULL;
  const double values[] = { 1, 2, 300 };
  guint8 raw[1 + sizeof values];
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GBytes) unaligned = NULL;
  g_autofree char *text = NULL;

  memcpy (raw + 1, values, sizeof values);
  whole = g_bytes_new (raw, sizeof raw);
  unaligned = g_bytes_new_from_bytes (whole, 1, sizeof values);

  g_assert_true (serio_writer_begin_array (writer, "w@uint8[3]", 3, NULL, &error));
  g_assert_false (serio_writer_add_bytes (writer, unaligned, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN);
  g_assert_nonnull (strstr (error->message, "value 3 “300”"));
  g_clear_error (&error);
  g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 3);
  g_assert_true (serio_writer_add_values (writer, values, 2, NULL, &error));
  g_assert_true (serio_writer_add_values (writer, (const double[]) { 255 }, 1, NULL, &error));
  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_no_error (error);
  text = written_text (out);
  g_assert_cmpstr (text, ==, "v1|w@uint8[3]|3|1,2,255\n");

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*value 2 (300)*uint8*");
  serio_bundle_append_bytes (bundle, "w@uint8[3]", unaligned);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 0);
}

/* read_typed on a float64 array reads doubles; on no array, nothing. */
static void
test_read_typed_float64 (void)
{
  const char *text = "v1|w[2]|2|1p-1,-0\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (bytes);
  g_autoptr(SerioReader) reader = serio_reader_new (in);
  g_autoptr(GError) error = NULL;
  const guint64 expected[] = { test_bits_of (0.5), TEST_SIGN_BIT };
  double values[2];
  gsize n = 99;

  g_assert_true (serio_reader_read_typed (reader, values, 2, &n, NULL, &error));
  g_assert_cmpuint (n, ==, 0);
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpint (serio_reader_get_dtype (reader), ==, SERIO_DTYPE_FLOAT64);
  g_assert_true (serio_reader_read_typed (reader, values, 2, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 2);
  test_assert_same_bits (values, expected, 2);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/dtype/strings", test_dtype_strings);
  g_test_add_func ("/dtype/name-metadata", test_name_metadata);
  g_test_add_func ("/dtype/name-compose", test_name_compose);
  g_test_add_func ("/dtype/holds-boundaries", test_holds_boundaries);
  g_test_add_func ("/dtype/typed-round-trip", test_typed_round_trip);
  g_test_add_func ("/dtype/half-patterns", test_half_patterns);
  g_test_add_func ("/dtype/float32-patterns", test_float32_patterns);
  g_test_add_func ("/dtype/append-typed-refusals", test_append_typed_refusals);
  g_test_add_func ("/dtype/append-float64-typed-name", test_append_float64_typed_name);
  g_test_add_func ("/dtype/marker-parsing", test_marker_parsing);
  g_test_add_func ("/dtype/marker-random", test_marker_random);
  g_test_add_func ("/dtype/domain-every-reader", test_domain_every_reader);
  g_test_add_func ("/dtype/misfit-positions", test_misfit_positions);
  g_test_add_func ("/dtype/misfit-integers", test_misfit_integers);
  g_test_add_func ("/dtype/good-texts", test_good_texts);
  g_test_add_func ("/dtype/domain-parallel", test_domain_parallel);
  g_test_add_func ("/dtype/writer-refusals", test_writer_refusals);
  g_test_add_func ("/dtype/writer-reader-stream", test_writer_reader_stream);
  g_test_add_func ("/dtype/writer-typed-parallel", test_writer_typed_parallel);
  g_test_add_func ("/dtype/reader-values-of-typed", test_reader_values_of_typed);
  g_test_add_func ("/dtype/typed-name-unaligned-bytes", test_typed_name_unaligned_bytes);
  g_test_add_func ("/dtype/read-typed-float64", test_read_typed_float64);

  return g_test_run ();
}
