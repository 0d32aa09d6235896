/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-diff.c: serio diff A B
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

#define NO_PARTNER G_MAXUINT

static int max_shown = 5;

static const GOptionEntry entries[] = {
  { "max-values", 'n', 0, G_OPTION_ARG_INT, &max_shown,
    N_("Show at most N differing values per array (default: 5)"), N_("N") },
  G_OPTION_ENTRY_NULL
};

typedef struct
{
  SerioBundle *bundle;
  char        *display;
} Side;

/*
 * The k-th array called N in @a is paired with the k-th array called N in
 * @b, if there is one. Returns, for each array of @a, the index of its
 * partner in @b or NO_PARTNER; @b_paired says which arrays of @b have one.
 */
static guint *
pair_arrays (SerioBundle *a,
             SerioBundle *b,
             gboolean    *b_paired)
{
  g_autoptr(GHashTable) by_name = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                         (GDestroyNotify) g_queue_free);
  guint n_a = serio_bundle_get_n_arrays (a);
  guint n_b = serio_bundle_get_n_arrays (b);
  guint *partner = g_new (guint, n_a);

  for (guint j = 0; j < n_b; j++)
    {
      const char *name = serio_bundle_get_name (b, j);
      GQueue *queue = g_hash_table_lookup (by_name, name);

      if (queue == NULL)
        {
          queue = g_queue_new ();
          g_hash_table_insert (by_name, (gpointer) name, queue);
        }
      g_queue_push_tail (queue, GUINT_TO_POINTER (j));
    }

  for (guint i = 0; i < n_a; i++)
    {
      GQueue *queue = g_hash_table_lookup (by_name, serio_bundle_get_name (a, i));

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

/* Maps the bit patterns of doubles to unsigned integers in the order of
 * the values: -NaN < -inf < … < -0 < +0 < … < +inf < +NaN. The ULP distance
 * of two doubles is the difference of their images: neighbours are 1 apart,
 * and so are -0 and +0. */
static guint64
ordered_bits (double value)
{
  guint64 bits = double_bits (value);

  return (bits >> 63) != 0 ? ~bits : bits | (G_GUINT64_CONSTANT (1) << 63);
}

static void
print_value_difference (gsize  index,
                        double a,
                        double b)
{
  char a_text[SERIO_TOOL_DOUBLE_BUFSIZE], b_text[SERIO_TOOL_DOUBLE_BUFSIZE];
  g_autofree char *distance = NULL;

  if (isnan (a) || isnan (b))
    {
      /* TRANSLATORS: shown instead of a distance in ULPs when one of
       * the two values is not a number */
      distance = g_strdup (_("NaN"));
    }
  else
    {
      guint64 oa = ordered_bits (a), ob = ordered_bits (b);
      unsigned long long ulps = oa > ob ? oa - ob : ob - oa;

      /* TRANSLATORS: a distance between two floating-point numbers, in
       * units in the last place */
      /* ngettext takes an unsigned long, 32 bits on i686: a count beyond
       * it picks the plural form of a number with the same last digits. */
      distance = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%llu ULP", "%llu ULPs",
                                               ulps > G_MAXULONG ? ulps % 1000000 + 1000000 : ulps),
                                  ulps);
    }

  /* TRANSLATORS: one differing value: its index, its value in the first
   * file, its value in the second file, and their distance */
  g_print (_("  [%lu] %s → %s (%s)"), (gulong) index,
           serio_tool_format_double (a, a_text), serio_tool_format_double (b, b_text),
           distance);
  g_print ("\n");
}

static gboolean
diff_arrays (const Side *a,
             guint       index_a,
             const Side *b,
             guint       index_b)
{
  g_autofree char *name = serio_tool_escape_name (serio_bundle_get_name (a->bundle, index_a));
  gsize n_a, n_b, n_common, n_differ = 0, n_shown = 0;
  const double *values_a = serio_bundle_get_values (a->bundle, index_a, &n_a);
  const double *values_b = serio_bundle_get_values (b->bundle, index_b, &n_b);

  n_common = MIN (n_a, n_b);
  if (n_a != n_b)
    {
      /* TRANSLATORS: an array name, its length in the first file and the
       * file's name, then the same in the second file */
      g_print (_("“%s”: length %lu in %s, %lu in %s"),
               name, (gulong) n_a, a->display, (gulong) n_b, b->display);
      g_print ("\n");
    }

  for (gsize i = 0; i < n_common; i++)
    {
      if (double_bits (values_a[i]) != double_bits (values_b[i]))
        n_differ++;
    }

  if (n_differ == 0)
    return n_a != n_b;

  g_print (g_dngettext (GETTEXT_PACKAGE,
                        /* TRANSLATORS: an array name, how many of its
                         * values differ, and out of how many (those present
                         * in both files) */
                        "“%s”: %lu of %lu values differs",
                        "“%s”: %lu of %lu values differ",
                        n_differ),
           name, (gulong) n_differ, (gulong) n_common);
  g_print ("\n");

  for (gsize i = 0; i < n_common && n_shown < (gsize) max_shown; i++)
    {
      if (double_bits (values_a[i]) != double_bits (values_b[i]))
        {
          print_value_difference (i, values_a[i], values_b[i]);
          n_shown++;
        }
    }

  if (n_differ > n_shown)
    {
      g_print (g_dngettext (GETTEXT_PACKAGE, "  … and %lu more", "  … and %lu more",
                            n_differ - n_shown),
               (gulong) (n_differ - n_shown));
      g_print ("\n");
    }

  return TRUE;
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
                                    "matched with the k-th array called N in B. Reported are arrays that\n"
                                    "only one file has, matched arrays in another order, lengths that\n"
                                    "differ, and how many of the values both arrays have differ, with the\n"
                                    "first few: index, both values and their distance in ULPs (steps\n"
                                    "between neighbouring doubles; -0 and +0 are 1 apart), or “NaN” when\n"
                                    "one is NaN. “-” stands for the standard input."),
                                 N_("Exit status: 0 if the files hold the same arrays in the same order\n"
                                    "with the same bits, 1 if they differ, 2 on a usage or input/output\n"
                                    "error or an invalid file."),
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
