/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-diff.c: serio diff A B
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

#define NO_PARTNER G_MAXUINT

static int max_shown = 5;
/* numpy.allclose()'s defaults, for the one not given. */
static double abs_tolerance = 1e-08;
static double rel_tolerance = 1e-05;
static gboolean tolerance_given = FALSE;

/* A tolerance is a finite number, zero or above, in the C locale's
 * notation (“1e-5”, “0.001”), whatever the user's locale. */
static gboolean
parse_tolerance (const char  *option_name,
                 const char  *value,
                 gpointer     data,
                 GError     **error)
{
  char *end = NULL;
  double tolerance = g_ascii_strtod (value, &end);

  if (*value == '\0' || *end != '\0' || !isfinite (tolerance) || !(tolerance >= 0))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   /* TRANSLATORS: an option such as “--atol”, and the
                    * value given to it */
                   _("%s must be a number, zero or above, such as 1e-5, not “%s”"),
                   option_name, value);
      return FALSE;
    }

  if (g_str_equal (option_name, "--atol"))
    abs_tolerance = tolerance;
  else
    rel_tolerance = tolerance;
  tolerance_given = TRUE;

  return TRUE;
}

static const GOptionEntry entries[] = {
  { "max-values", 'm', 0, G_OPTION_ARG_INT, &max_shown,
    N_("Show at most N differing values per array (default: 5)"), N_("N") },
  { "atol", 0, 0, G_OPTION_ARG_CALLBACK, parse_tolerance,
    N_("Accept values within this absolute tolerance (default with --rtol: 1e-08)"), N_("TOLERANCE") },
  { "rtol", 0, 0, G_OPTION_ARG_CALLBACK, parse_tolerance,
    N_("Accept values within this tolerance relative to B (default with --atol: 1e-05)"), N_("TOLERANCE") },
  G_OPTION_ENTRY_NULL
};

static gboolean
with_tolerance (void)
{
  return tolerance_given;
}

typedef struct
{
  SerioBundle *bundle;
  char        *display;
} Side;

/*
 * The k-th array whose base name is N in @a is paired with the k-th array
 * whose base name is N in @b, if there is one, whatever their shapes (see
 * serio_bundle_get_base_name()). Returns, for each array of @a, the index
 * of its partner in @b or NO_PARTNER; @b_paired says which arrays of @b
 * have one.
 */
static guint *
pair_arrays (SerioBundle *a,
             SerioBundle *b,
             gboolean    *b_paired)
{
  g_autoptr(GHashTable) by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) g_queue_free);
  guint n_a = serio_bundle_get_n_arrays (a);
  guint n_b = serio_bundle_get_n_arrays (b);
  guint *partner = g_new (guint, MAX (n_a, 1));

  for (guint j = 0; j < n_b; j++)
    {
      char *name = serio_bundle_get_base_name (b, j);
      GQueue *queue = g_hash_table_lookup (by_name, name);

      if (queue == NULL)
        {
          queue = g_queue_new ();
          g_hash_table_insert (by_name, name, queue);
        }
      else
        {
          g_free (name);
        }
      g_queue_push_tail (queue, GUINT_TO_POINTER (j));
    }

  for (guint i = 0; i < n_a; i++)
    {
      g_autofree char *name = serio_bundle_get_base_name (a, i);
      GQueue *queue = g_hash_table_lookup (by_name, name);

      if (queue != NULL && !g_queue_is_empty (queue))
        {
          partner[i] = GPOINTER_TO_UINT (g_queue_pop_head (queue));
          b_paired[partner[i]] = TRUE;
        }
      else
        {
          partner[i] = NO_PARTNER;
        }
    }

  return partner;
}

static guint64
double_bits (double value)
{
  guint64 bits;

  memcpy (&bits, &value, sizeof bits);
  return bits;
}

/* The precision that the values of an array likely come from: the
 * narrowest that holds every one of them exactly. */
typedef enum
{
  PRECISION_INTEGER,
  PRECISION_BFLOAT16,
  PRECISION_FLOAT16,
  PRECISION_FLOAT32,
  PRECISION_FLOAT64,
} Precision;

static const char *
precision_name (Precision precision)
{
  static const char *names[] = { NULL, "bfloat16", "float16", "float32", "float64" };

  if (precision == PRECISION_INTEGER)
    /* TRANSLATORS: the kind of values of an array whose values are all
     * integers, shown in parentheses after the largest distance between
     * two of its values, where the others show “float32” and the like */
    return _("integer");

  return names[precision];
}

static gboolean
is_integer (double x)
{
  return isfinite (x) && x == floor (x) && fabs (x) <= 9007199254740992.0;
}

static gboolean
fits_float32 (double x)
{
  float f;

  if (isinf (x))
    return TRUE;
  if (fabs (x) > FLT_MAX)
    return FALSE;
  f = (float) x;
  return double_bits ((double) f) == double_bits (x);
}

static guint32
float32_bits (double x)
{
  float f = (float) x;
  guint32 bits;

  memcpy (&bits, &f, sizeof bits);
  return bits;
}

static gboolean
fits_bfloat16 (double x)
{
  return fits_float32 (x) && (float32_bits (x) & 0xffff) == 0;
}

/* binary16: 11 significant bits, normal exponents from -14 to 15,
 * subnormals down to 2^-24. */
static gboolean
fits_float16 (double x)
{
  double magnitude = fabs (x);
  int exponent;
  double mantissa;

  if (isinf (x) || x == 0)
    return TRUE;
  if (magnitude > 65504)
    return FALSE;
  if (ldexp (magnitude, 24) != floor (ldexp (magnitude, 24)))
    return FALSE;
  mantissa = frexp (magnitude, &exponent);   /* magnitude = mantissa × 2^exponent */
  return exponent <= -13 || ldexp (mantissa, 11) == floor (ldexp (mantissa, 11));
}

static guint
float16_bits (double x)
{
  double magnitude = fabs (x);
  guint sign = signbit (x) ? 0x8000 : 0;
  int exponent;

  if (isinf (x))
    return sign | 0x7c00;
  if (magnitude < ldexp (1, -14))
    return sign | (guint) ldexp (magnitude, 24);   /* subnormal, or zero */

  frexp (magnitude, &exponent);
  /* magnitude = 1.f × 2^(exponent - 1), biased by 15 */
  return sign | (guint) (exponent - 1 + 15) << 10 |
         ((guint) ldexp (magnitude, 11 - exponent) & 0x3ff);
}

static Precision
detect_precision (const double *a,
                  gsize         n_a,
                  const double *b,
                  gsize         n_b)
{
  gboolean integer = TRUE, bfloat16 = TRUE, float16 = TRUE, float32 = TRUE;

  for (int side = 0; side < 2; side++)
    {
      const double *values = side == 0 ? a : b;
      gsize n_values = side == 0 ? n_a : n_b;

      for (gsize i = 0; i < n_values && float32; i++)
        {
          double x = values[i];

          if (isnan (x))
            continue;
          integer = integer && is_integer (x);
          float32 = fits_float32 (x);
          bfloat16 = bfloat16 && fits_bfloat16 (x);
          float16 = float16 && fits_float16 (x);
        }
    }

  if (integer)
    return PRECISION_INTEGER;
  if (bfloat16)
    return PRECISION_BFLOAT16;
  if (float16)
    return PRECISION_FLOAT16;
  if (float32)
    return PRECISION_FLOAT32;
  return PRECISION_FLOAT64;
}

/* Maps the bit patterns of floating-point numbers of @width bits to
 * unsigned integers in the order of the values: -inf < … < -0 < +0 < … <
 * +inf. The ULP distance of two numbers is the difference of their images:
 * neighbours are 1 apart, and so are -0 and +0. */
static guint64
ordered (guint64 bits,
         guint   width)
{
  guint64 sign = G_GUINT64_CONSTANT (1) << (width - 1);
  guint64 mask = width == 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT (1) << width) - 1;

  return (bits & sign) != 0 ? ~bits & mask : bits | sign;
}

/* The distance of two values that are not NaN, in ULPs of @precision or,
 * for integers, in units. */
static guint64
distance (double    a,
          double    b,
          Precision precision)
{
  guint64 oa, ob;

  switch (precision)
    {
    case PRECISION_INTEGER:
      {
        gint64 ia = (gint64) a, ib = (gint64) b;

        return ia > ib ? (guint64) (ia - ib) : (guint64) (ib - ia);
      }
    case PRECISION_BFLOAT16:
      oa = ordered (float32_bits (a) >> 16, 16);
      ob = ordered (float32_bits (b) >> 16, 16);
      break;
    case PRECISION_FLOAT16:
      oa = ordered (float16_bits (a), 16);
      ob = ordered (float16_bits (b), 16);
      break;
    case PRECISION_FLOAT32:
      oa = ordered (float32_bits (a), 32);
      ob = ordered (float32_bits (b), 32);
      break;
    case PRECISION_FLOAT64:
    default:
      oa = ordered (double_bits (a), 64);
      ob = ordered (double_bits (b), 64);
      break;
    }


  return oa > ob ? oa - ob : ob - oa;
}

static char *
format_distance (guint64   ulps,
                 Precision precision)
{
  unsigned long long n = ulps;
  /* ngettext takes an unsigned long, 32 bits on i686: a count beyond it
   * picks the plural form of a number with the same last digits. */
  gulong plural = ulps > G_MAXULONG ? (gulong) (ulps % 1000000 + 1000000) : (gulong) ulps;

  if (precision == PRECISION_INTEGER)
    /* TRANSLATORS: a difference between two integers */
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%llu unit", "%llu units", plural), n);

  /* TRANSLATORS: a distance between two floating-point numbers, in
   * units in the last place */
  return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%llu ULP", "%llu ULPs", plural), n);
}

/* numpy.allclose (a, b, rtol, atol, equal_nan=True) for one pair. */
static gboolean
is_close (double a,
          double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (!isfinite (a) || !isfinite (b))
    return a == b;

  return fabs (a - b) <= abs_tolerance + rel_tolerance * fabs (b);
}

static gboolean
bits_differ (double a,
             double b)
{
  return double_bits (a) != double_bits (b);
}

static void
print_value_difference (gsize     index,
                        double    a,
                        double    b,
                        Precision precision)
{
  char a_text[SERIO_TOOL_DOUBLE_BUFSIZE], b_text[SERIO_TOOL_DOUBLE_BUFSIZE];
  g_autofree char *shown = NULL;

  if (isnan (a) || isnan (b))
    /* TRANSLATORS: shown instead of a distance in ULPs when one of
     * the two values is not a number */
    shown = g_strdup (_("NaN"));
  else
    shown = format_distance (distance (a, b, precision), precision);

  /* TRANSLATORS: one differing value: its index, its value in the first
   * file, its value in the second file, and their distance */
  g_print (_("  [%lu] %s → %s (%s)"), (gulong) index,
           serio_tool_format_double (a, a_text), serio_tool_format_double (b, b_text),
           shown);
  g_print ("\n");
}

typedef struct
{
  gsize    n_differ;        /* pairs whose bits differ */
  gsize    n_outside;       /* of those, pairs outside the tolerance */
  gboolean has_numbers;     /* some differing pair has no NaN */
  double   max_absolute;
  double   max_relative;
  guint64  max_distance;
} Summary;

static void
summarize (const double *a,
           const double *b,
           gsize         n_common,
           Precision     precision,
           Summary      *summary)
{
  *summary = (Summary) { 0, };

  for (gsize i = 0; i < n_common; i++)
    {
      double absolute, relative;

      if (!bits_differ (a[i], b[i]))
        continue;
      summary->n_differ++;
      if (with_tolerance () && !is_close (a[i], b[i]))
        summary->n_outside++;
      if (isnan (a[i]) || isnan (b[i]))
        continue;

      /* Two infinities here are opposite (the same one has the same
       * bits): infinitely far apart, and so is any infinity from any
       * number, absolutely and relatively (inf / inf gives NaN). */
      absolute = fabs (a[i] - b[i]);
      relative = absolute == 0 ? 0 : absolute / fabs (b[i]);
      if (isnan (relative))
        relative = INFINITY;

      summary->max_absolute = summary->has_numbers ? MAX (summary->max_absolute, absolute) : absolute;
      summary->max_relative = summary->has_numbers ? MAX (summary->max_relative, relative) : relative;
      summary->max_distance = MAX (summary->max_distance, distance (a[i], b[i], precision));
      summary->has_numbers = TRUE;
    }
}

static void
print_summary (const Summary *summary,
               Precision      precision)
{
  char absolute[SERIO_TOOL_DOUBLE_BUFSIZE], relative[SERIO_TOOL_DOUBLE_BUFSIZE];
  g_autofree char *shown = format_distance (summary->max_distance, precision);

  if (!summary->has_numbers)
    return;

  /* TRANSLATORS: the largest differences between the values of an array
   * in two files: absolute, relative (to the second file's value), and
   * as a distance (“3 ULPs”, “2 units”); then the precision the values
   * likely come from (“float32”, “integer”) */
  g_print (_("  max absolute difference %s, relative %s, distance %s (%s)"),
           serio_tool_format_double (summary->max_absolute, absolute),
           serio_tool_format_double (summary->max_relative, relative),
           shown, precision_name (precision));
  g_print ("\n");
}

/* Returns whether the arrays count as different: their bits differ, or
 * with a tolerance, some values are outside it. */
static gboolean
diff_arrays (const Side *a,
             guint       index_a,
             const Side *b,
             guint       index_b)
{
  g_autofree char *base_name = serio_bundle_get_base_name (a->bundle, index_a);
  g_autofree char *name = serio_tool_escape_name (base_name);
  gsize n_a, n_b, n_common, n_shown = 0, n_candidates;
  const double *values_a = serio_bundle_get_values (a->bundle, index_a, &n_a);
  const double *values_b = serio_bundle_get_values (b->bundle, index_b, &n_b);
  g_autofree guint64 *shape_a = NULL;
  g_autofree guint64 *shape_b = NULL;
  guint n_dims_a, n_dims_b;
  gboolean layout_differs;
  Precision precision;
  Summary summary;

  shape_a = serio_bundle_get_shape (a->bundle, index_a, &n_dims_a);
  shape_b = serio_bundle_get_shape (b->bundle, index_b, &n_dims_b);
  layout_differs = n_dims_a != n_dims_b ||
                  memcmp (shape_a, shape_b, n_dims_a * sizeof (guint64)) != 0;

  n_common = MIN (n_a, n_b);
  if (layout_differs && (n_dims_a != 1 || n_dims_b != 1))
    {
      g_autofree char *text_a = serio_tool_shape_to_string (shape_a, n_dims_a);
      g_autofree char *text_b = serio_tool_shape_to_string (shape_b, n_dims_b);

      /* TRANSLATORS: an array name, its shape such as “(2, 3)” in the
       * first file and the file's name, then the same in the second file */
      g_print (_("“%s”: shape %s in %s, %s in %s"),
               name, text_a, a->display, text_b, b->display);
      g_print ("\n");
    }
  else if (!layout_differs &&
           !g_str_equal (serio_bundle_get_name (a->bundle, index_a),
                         serio_bundle_get_name (b->bundle, index_b)))
    {
      /* "v" and "v[2]": the same shape, written two ways. */
      g_autofree char *name_a = serio_tool_escape_name (serio_bundle_get_name (a->bundle, index_a));
      g_autofree char *name_b = serio_tool_escape_name (serio_bundle_get_name (b->bundle, index_b));

      /* TRANSLATORS: an array's base name, its full name in the first file
       * and the file's name, then the same in the second file */
      g_print (_("“%s”: named “%s” in %s, “%s” in %s"),
               name, name_a, a->display, name_b, b->display);
      g_print ("\n");
      layout_differs = TRUE;
    }
  else if (n_a != n_b)
    {
      /* TRANSLATORS: an array name, its length in the first file and the
       * file's name, then the same in the second file */
      g_print (_("“%s”: length %lu in %s, %lu in %s"),
               name, (gulong) n_a, a->display, (gulong) n_b, b->display);
      g_print ("\n");
    }

  precision = detect_precision (values_a, n_a, values_b, n_b);
  summarize (values_a, values_b, n_common, precision, &summary);

  if (summary.n_differ == 0)
    return layout_differs;

  g_print (g_dngettext (GETTEXT_PACKAGE,
                        /* TRANSLATORS: an array name, how many of its
                         * values differ, and out of how many (those present
                         * in both files) */
                        "“%s”: %lu of %lu values differs",
                        "“%s”: %lu of %lu values differ",
                        summary.n_differ),
           name, (gulong) summary.n_differ, (gulong) n_common);
  g_print ("\n");
  print_summary (&summary, precision);

  if (with_tolerance ())
    {
      if (summary.n_outside == 0)
        g_print ("%s\n", _("  all within the tolerance"));
      else
        {
          g_print (g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: how many of the values that
                                 * differ are outside the tolerance */
                                "  %lu outside the tolerance",
                                "  %lu outside the tolerance",
                                summary.n_outside),
                   (gulong) summary.n_outside);
          g_print ("\n");
        }
    }

  /* With a tolerance, the values shown are those outside it. */
  n_candidates = with_tolerance () ? summary.n_outside : summary.n_differ;
  for (gsize i = 0; i < n_common && n_shown < (gsize) max_shown; i++)
    {
      if (bits_differ (values_a[i], values_b[i]) &&
          (!with_tolerance () || !is_close (values_a[i], values_b[i])))
        {
          print_value_difference (i, values_a[i], values_b[i], precision);
          n_shown++;
        }
    }

  /* With 0, only the counts: no "… and N more" line either. */
  if (n_candidates > n_shown && max_shown > 0)
    {
      g_print (g_dngettext (GETTEXT_PACKAGE, "  … and %lu more", "  … and %lu more",
                            n_candidates - n_shown),
               (gulong) (n_candidates - n_shown));
      g_print ("\n");
    }

  return layout_differs || (with_tolerance () ? summary.n_outside > 0 : TRUE);
}

static void
print_only_in (const Side *side,
               guint       index)
{
  g_autofree char *name = serio_tool_escape_name (serio_bundle_get_name (side->bundle, index));

  /* TRANSLATORS: a file name, then the index and name of an array that
   * only this file has */
  g_print (_("Only in %s: array %u “%s”"), side->display, index, name);
  g_print ("\n");
}

static gboolean
diff_bundles (const Side *a,
              const Side *b)
{
  guint n_a = serio_bundle_get_n_arrays (a->bundle);
  guint n_b = serio_bundle_get_n_arrays (b->bundle);
  g_autofree gboolean *b_paired = g_new0 (gboolean, n_b);
  g_autofree guint *partner = pair_arrays (a->bundle, b->bundle, b_paired);
  gboolean differ = FALSE;
  guint last_partner = 0;

  for (guint i = 0; i < n_a; i++)
    {
      if (partner[i] == NO_PARTNER)
        {
          print_only_in (a, i);
          differ = TRUE;
          continue;
        }

      /* Pairs must keep their order, or the files are not the same list. */
      if (partner[i] < last_partner)
        {
          g_autofree char *name = serio_tool_escape_name (serio_bundle_get_name (a->bundle, i));

          /* TRANSLATORS: an array name, its index in the first file and the
           * file's name, then the same in the second file */
          g_print (_("“%s” is array %u in %s but array %u in %s: the order differs"),
                   name, i, a->display, partner[i], b->display);
          g_print ("\n");
          differ = TRUE;
        }
      last_partner = MAX (last_partner, partner[i]);

      differ |= diff_arrays (a, i, b, partner[i]);
    }

  for (guint j = 0; j < n_b; j++)
    {
      if (!b_paired[j])
        {
          print_only_in (b, j);
          differ = TRUE;
        }
    }

  return differ;
}

int
serio_tool_diff (int    argc,
                 char **argv)
{
  g_autoptr(SerioBundle) bundle_a = NULL;
  g_autoptr(SerioBundle) bundle_b = NULL;
  g_autofree char *display_a = NULL;
  g_autofree char *display_b = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  gboolean differ;

  if (!serio_tool_parse_options (N_("A B"),
                                 N_("Compare two serio files bit for bit. The k-th array called N in A is\n"
                                    "matched with the k-th array called N in B, whatever their shapes\n"
                                    "(“w[2x3]” is called “w”). Reported are arrays that only one file has,\n"
                                    "matched arrays in another order, shapes or lengths that differ, and\n"
                                    "how many of the values both arrays have differ, with the largest\n"
                                    "differences (absolute, relative to B, and as a distance) and the\n"
                                    "first few values: index, both values and their distance, or\n"
                                    "“NaN” when one is NaN. Distances are in units when every value of both\n"
                                    "arrays is an integer, else in ULPs (steps between neighbouring numbers;\n"
                                    "-0 and +0 are 1 apart) of the narrowest of bfloat16, float16, float32\n"
                                    "and float64 that holds them all. “-” stands for the standard input.\n\n"
                                    "With --atol or --rtol, values a and b match when\n"
                                    "|a - b| <= atol + rtol * |b|, as numpy.allclose() has it (NaN matches\n"
                                    "NaN), and the values shown are those that do not."),
                                 N_("Exit status: 0 if the files hold the same arrays in the same order\n"
                                    "with the same bits (or, with a tolerance, values within it), 1 if they\n"
                                    "differ, 2 on a usage or input/output error or an invalid file."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc != 3)
    return serio_tool_usage_error (_("give exactly two files"));
  if (max_shown < 0)
    return serio_tool_usage_error (_("the number of values to show cannot be negative"));

  if (serio_tool_is_stdin (argv[1]) && serio_tool_is_stdin (argv[2]))
    return serio_tool_usage_error (_("only one of the files can be the standard input"));

  bundle_a = serio_tool_load_bundle (argv[1], NULL, &status);
  if (bundle_a == NULL)
    return SERIO_TOOL_EXIT_ERROR;
  bundle_b = serio_tool_load_bundle (argv[2], NULL, &status);
  if (bundle_b == NULL)
    return SERIO_TOOL_EXIT_ERROR;

  display_a = g_filename_display_name (argv[1]);
  display_b = g_filename_display_name (argv[2]);
  differ = diff_bundles (&(Side) { bundle_a, display_a }, &(Side) { bundle_b, display_b });

  return differ ? SERIO_TOOL_EXIT_FAILURE : SERIO_TOOL_EXIT_OK;
}
