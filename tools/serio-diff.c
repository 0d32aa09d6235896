/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-diff.c: serio diff A B
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-ryu.h"
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


static gboolean
fits_bfloat16 (double x)
{
  return fits_float32 (x) && (serio_tool_float32_bits (x) & 0xffff) == 0;
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

#define N_PRECISIONS (PRECISION_FLOAT64 + 1)

/* The precisions that every value seen so far fits in, narrowed as the
 * values of both arrays come: the likely precision is the narrowest left
 * at the end. float64 always is. */
typedef struct
{
  gboolean possible[N_PRECISIONS];
  gboolean narrowing;       /* some precision but float64 is still possible */
} Precisions;

static void
precisions_init (Precisions *precisions)
{
  for (int p = 0; p < N_PRECISIONS; p++)
    precisions->possible[p] = TRUE;
  precisions->narrowing = TRUE;
}

static void
precisions_narrow (Precisions   *precisions,
                   const double *values,
                   gsize         n_values)
{
  gboolean *possible = precisions->possible;

  for (gsize i = 0; i < n_values && precisions->narrowing; i++)
    {
      double x = values[i];

      if (isnan (x))
        continue;
      possible[PRECISION_INTEGER] = possible[PRECISION_INTEGER] && is_integer (x);
      possible[PRECISION_BFLOAT16] = possible[PRECISION_BFLOAT16] && fits_bfloat16 (x);
      possible[PRECISION_FLOAT16] = possible[PRECISION_FLOAT16] && fits_float16 (x);
      possible[PRECISION_FLOAT32] = possible[PRECISION_FLOAT32] && fits_float32 (x);
      precisions->narrowing = possible[PRECISION_INTEGER] || possible[PRECISION_BFLOAT16] ||
                              possible[PRECISION_FLOAT16] || possible[PRECISION_FLOAT32];
    }
}

/* The precision of an array recorded with a type: only that one, and
 * no narrowing. Unmarked arrays (float64 as recorded, but often values of
 * a narrower type written by a program that did not say so) keep the
 * likely precision. */
static gboolean
precisions_init_recorded (Precisions *precisions,
                          SerioDtype  dtype_a,
                          SerioDtype  dtype_b)
{
  Precision recorded;

  if (dtype_a != dtype_b)
    return FALSE;
  switch (dtype_a)
    {
    case SERIO_DTYPE_FLOAT32:
      recorded = PRECISION_FLOAT32;
      break;
    case SERIO_DTYPE_FLOAT16:
      recorded = PRECISION_FLOAT16;
      break;
    case SERIO_DTYPE_BFLOAT16:
      recorded = PRECISION_BFLOAT16;
      break;
    case SERIO_DTYPE_FLOAT64:
      return FALSE;
    default:
      recorded = PRECISION_INTEGER;   /* the integer types and bool */
      break;
    }

  for (int p = 0; p < N_PRECISIONS; p++)
    precisions->possible[p] = p == (int) recorded;
  precisions->narrowing = FALSE;
  return TRUE;
}

static Precision
precisions_narrowest (const Precisions *precisions)
{
  Precision p = PRECISION_INTEGER;

  while (p < PRECISION_FLOAT64 && !precisions->possible[p])
    p++;
  return p;
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
        /* Integers of an int64 or uint64 array may pass 2^63. */
        double high = MAX (a, b), low = MIN (a, b);

        if (low >= 0)
          return (guint64) high - (guint64) low;
        if (high < 0)
          return (guint64) -low - (guint64) -high;
        return (guint64) high + (guint64) -low;
      }
    case PRECISION_BFLOAT16:
      oa = ordered (serio_tool_float32_bits (a) >> 16, 16);
      ob = ordered (serio_tool_float32_bits (b) >> 16, 16);
      break;
    case PRECISION_FLOAT16:
      oa = ordered (serio_tool_float16_bits (a), 16);
      ob = ordered (serio_tool_float16_bits (b), 16);
      break;
    case PRECISION_FLOAT32:
      oa = ordered (serio_tool_float32_bits (a), 32);
      ob = ordered (serio_tool_float32_bits (b), 32);
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

/* ------------------------------------------------------------------ */
/* Held output                                                        */
/* ------------------------------------------------------------------ */

/* Nothing is printed before both files are known to be valid, which a
 * stream only tells at its end: the report waits in a spool, which keeps
 * up to SPOOL_MEMORY bytes in memory and the others in an unlinked
 * temporary file, so that a report of any length takes bounded memory.
 * The first error of a spool is kept, and nothing more goes in once there
 * is one: finish() prints it. */
#define SPOOL_MEMORY (1024 * 1024)

typedef struct
{
  SerioToolSpool *spool;
  GError         *error;    /* the first error of the spool */
} Held;

static void
held_init (Held  *held)
{
  held->spool = serio_tool_spool_new_full (SPOOL_MEMORY, "serio-diff-XXXXXX");
  held->error = NULL;
}

static void
held_destroy (Held  *held)
{
  serio_tool_spool_free (held->spool);
  g_clear_error (&held->error);
}

static void
held_append (Held        *held,
             const void *data,
             gsize       len)
{
  if (held->error == NULL)
    serio_tool_spool_append (held->spool, data, len, &held->error);
}

static void G_GNUC_PRINTF (2, 3)
held_printf (Held        *held,
             const char *format,
             ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  held_append (held, text, strlen (text));
}

static guint64
held_get_size (Held  *held)
{
  return serio_tool_spool_get_size (held->spool);
}

/* Reads @len bytes from @offset, which must be there. */
static gboolean
held_read (Held     *held,
           guint64  offset,
           void    *buf,
           gsize    len)
{
  return held->error == NULL &&
         serio_tool_spool_read (held->spool, offset, buf, len, &held->error);
}

/* Appends @len bytes of @from, from @offset on, to @to. */
static void
held_copy (Held     *to,
           Held    *from,
           guint64  offset,
           guint64  len)
{
  if (to->error != NULL || len == 0)
    return;
  if (from->error != NULL)
    to->error = g_error_copy (from->error);
  else
    serio_tool_spool_copy (to->spool, from->spool, offset, len, &to->error);
}

/* Prints the text line by line, as g_print() prints (in the charset of
 * the locale). */
static gboolean
held_print (Held  *held)
{
  return held->error == NULL &&
         serio_tool_spool_replay (held->spool, TRUE, serio_tool_spool_print_line, NULL,
                                  &held->error);
}

/* ------------------------------------------------------------------ */
/* Files                                                              */
/* ------------------------------------------------------------------ */

/* Values are read from each file in pieces of this many. */
#define CHUNK 65536

/* The arrays of a file from @first on, as a pass that only skips finds
 * them: what pairs them with the arrays of the other file. */
typedef struct
{
  char    *name;
  guint    partner;         /* the index of its partner, or NO_PARTNER */
  guint64  report_offset;   /* where its report waits in Diff.reports */
  guint64  report_len;
} Entry;

typedef struct
{
  guint       first;
  GArray     *entries;      /* Entry, for the arrays first, first + 1, … */
  GHashTable *by_name;      /* base name → GQueue of the indexes of the arrays */
} Index;

static void
entry_clear (gpointer data)
{
  Entry *entry = data;

  g_free (entry->name);
}

static void
index_init (Index *index)
{
  index->first = 0;
  index->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  g_array_set_clear_func (index->entries, entry_clear);
  index->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) g_queue_free);
}

static void
index_destroy (Index *index)
{
  g_array_unref (index->entries);
  g_hash_table_unref (index->by_name);
}

static Entry *
index_get (Index *index,
           guint  array)
{
  return &g_array_index (index->entries, Entry, array - index->first);
}

/* The next array called @base_name that is not paired yet, or NO_PARTNER:
 * the k-th one asked for is the k-th one of the file. */
static guint
index_take (Index      *index,
            const char *base_name)
{
  GQueue *queue = g_hash_table_lookup (index->by_name, base_name);

  if (queue == NULL || g_queue_is_empty (queue))
    return NO_PARTNER;
  return GPOINTER_TO_UINT (g_queue_pop_head (queue));
}

/* A file, read by one reader front to back, which parses every value and
 * so finds the first problem of the file, as the in-memory reader does;
 * and by others, when arrays are in another order, that only fetch arrays
 * which the first one has already checked. */
typedef struct
{
  const char  *path;
  char        *display;
  SerioReader *front;
  gboolean     started;     /* front is at an array or at the end */
  gboolean     ended;       /* front reached the end of a valid text */
  guint        position;    /* the index of front's current array */
  GError      *error;       /* front's error: the first problem of the file */
  SerioReader *random;      /* for an array behind front, or NULL */
  guint        random_position;
  GFileInfo   *identity;    /* of the file front opened, or NULL */
  GError      *aside_error; /* of a reader other than front */
  Index        index;       /* with the arrays in another order */
} File;

/* One array being read, and where its errors go. */
typedef struct
{
  SerioReader  *reader;
  GError      **error;
} Source;

typedef struct
{
  File     a, b;
  double  *values_a;        /* CHUNK values each */
  double  *values_b;
  Held     output;          /* what is printed once both files are valid */
  Held     shown;           /* ShownValue, for the array being compared */
  Held     reports;         /* reports that wait for their place in the output */
  Held     only_in_b;
  gboolean by_b;            /* diff_rest_by_b() ran */
  GError  *error;           /* neither file could be read twice */
  gboolean differ;
} Diff;

/* A differing pair of values, kept until the precision is known. */
typedef struct
{
  guint64 index;
  double  a, b;
} ShownValue;

static gboolean
file_failed (const File *file)
{
  return file->error != NULL || file->aside_error != NULL;
}

static gboolean
diff_failed (const Diff *diff)
{
  return file_failed (&diff->a) || file_failed (&diff->b);
}

static void
set_changed_error (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       /* TRANSLATORS: an error: a file read twice did not
                        * hold the same arrays the second time */
                       _("the file changed while it was read"));
}

/* What tells a file from the one that replaces it (a save renames a new
 * file into place) or from itself rewritten: the device and inode, the
 * size and the modification time, as the open file has them (fstat). */
#define IDENTITY_ATTRIBUTES G_FILE_ATTRIBUTE_UNIX_DEVICE "," G_FILE_ATTRIBUTE_UNIX_INODE "," \
                            G_FILE_ATTRIBUTE_STANDARD_SIZE "," G_FILE_ATTRIBUTE_TIME_MODIFIED "," \
                            G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC

static GFileInfo *
query_identity (SerioReader *reader)
{
  GInputStream *input = G_INPUT_STREAM (serio_tool_reader_get_input (reader));
  GInputStream *base = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (input));

  if (!G_IS_FILE_INPUT_STREAM (base))
    return NULL;
  return g_file_input_stream_query_info (G_FILE_INPUT_STREAM (base), IDENTITY_ATTRIBUTES,
                                         NULL, NULL);
}

/* Whether the two are the same file, unchanged, as far as both tell. */
static gboolean
same_identity (GFileInfo *first,
               GFileInfo *again)
{
  g_auto(GStrv) attributes = g_strsplit (IDENTITY_ATTRIBUTES, ",", -1);

  for (guint i = 0; attributes[i] != NULL; i++)
    {
      g_autofree char *a = NULL;
      g_autofree char *b = NULL;

      if (!g_file_info_has_attribute (first, attributes[i]) ||
          !g_file_info_has_attribute (again, attributes[i]))
        continue;
      a = g_file_info_get_attribute_as_string (first, attributes[i]);
      b = g_file_info_get_attribute_as_string (again, attributes[i]);
      if (g_strcmp0 (a, b) != 0)
        return FALSE;
    }
  return TRUE;
}

/* Opens a reader on @file. Only front shows the progress of its reading:
 * the readers that fetch or index arrays read parts of the file again,
 * and refuse a file that is not the one front opened, unchanged (the
 * names of the arrays they find are checked too: file_fetch()). Read
 * errors do not name the file: report_file_error() does. */
static SerioReader *
open_reader (File     *file,
             gboolean  front,
             GError  **error)
{
  SerioToolInputFlags flags = SERIO_TOOL_INPUT_BARE_ERRORS;
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GFileInfo) identity = NULL;

  if (!front)
    flags |= SERIO_TOOL_INPUT_NO_PROGRESS;
  reader = serio_tool_open_reader (file->path, flags, error);
  if (reader == NULL)
    return NULL;

  identity = query_identity (reader);
  if (front)
    file->identity = g_steal_pointer (&identity);
  else if (file->identity != NULL && identity != NULL && !same_identity (file->identity, identity))
    {
      set_changed_error (error);
      return NULL;
    }

  return g_steal_pointer (&reader);
}

/* Erases the progress of the fronts, before anything is printed: they
 * may have stopped before the end of their file. */
static void
end_progress (Diff *diff)
{
  File *files[] = { &diff->a, &diff->b };

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    if (files[i]->front != NULL)
      serio_tool_input_end_progress (serio_tool_reader_get_input (files[i]->front));
}

static void
set_file_changed (File *file)
{
  if (file->aside_error == NULL)
    set_changed_error (&file->aside_error);
}

/* Moves front to the next array, after it has read (and so checked) every
 * value of the current one. Returns FALSE at the end or on an error. */
static gboolean
front_next (Diff *diff,
            File *file)
{
  if (file->error != NULL || file->ended)
    return FALSE;

  if (file->started)
    {
      while (serio_reader_get_n_left (file->front) > 0)
        {
          gsize n;

          if (!serio_reader_read_values (file->front, diff->values_a, CHUNK, &n,
                                         NULL, &file->error))
            return FALSE;
        }
      file->position++;
    }

  file->started = TRUE;
  if (!serio_reader_next (file->front, NULL, &file->error))
    {
      file->ended = file->error == NULL;
      return FALSE;
    }

  return TRUE;
}

/* Reads (and so checks) the rest of the file. */
static void
front_drain (Diff *diff,
             File *file)
{
  while (front_next (diff, file))
    ;
}

/* Gets the array @position of @file, called @name: front's, or one behind
 * it, fetched by another reader. */
static gboolean
file_fetch (Diff       *diff,
            File       *file,
            guint       position,
            const char *name,
            Source     *source)
{
  if (file->error != NULL || file->aside_error != NULL)
    return FALSE;

  if (!file->ended && position >= file->position)
    {
      while (file->position < position)
        if (!front_next (diff, file))
          {
            if (file->ended)
              set_file_changed (file);
            return FALSE;
          }
      *source = (Source) { file->front, &file->error };
    }
  else
    {
      if (file->random == NULL || file->random_position >= position)
        {
          g_clear_object (&file->random);
          file->random = open_reader (file, FALSE, &file->aside_error);
          if (file->random == NULL)
            return FALSE;
          file->random_position = G_MAXUINT;
        }
      while (file->random_position == G_MAXUINT || file->random_position < position)
        {
          if (!serio_reader_next (file->random, NULL, &file->aside_error))
            {
              set_file_changed (file);
              return FALSE;
            }
          file->random_position++;    /* from G_MAXUINT to 0 at the first array */
        }
      *source = (Source) { file->random, &file->aside_error };
    }

  if (!g_str_equal (serio_reader_get_name (source->reader), name))
    {
      set_file_changed (file);
      return FALSE;
    }
  return TRUE;
}

/* Finds the arrays of @file from @first on with a reader that only skips. */
static gboolean
file_index (File  *file,
            guint  first)
{
  g_autoptr(SerioReader) reader = open_reader (file, FALSE, &file->aside_error);
  guint position = 0;

  if (reader == NULL)
    return FALSE;

  file->index.first = first;
  while (serio_reader_next (reader, NULL, &file->aside_error))
    {
      if (position >= first)
        {
          Entry entry = { g_strdup (serio_reader_get_name (reader)), NO_PARTNER, 0, 0 };
          char *base_name = serio_reader_get_base_name (reader);
          GQueue *queue = g_hash_table_lookup (file->index.by_name, base_name);

          if (queue == NULL)
            {
              queue = g_queue_new ();
              g_hash_table_insert (file->index.by_name, base_name, queue);
            }
          else
            {
              g_free (base_name);
            }
          g_queue_push_tail (queue, GUINT_TO_POINTER (position));
          g_array_append_val (file->index.entries, entry);
        }
      position++;
    }

  return file->aside_error == NULL;
}

static void
file_init (File       *file,
           const char *path)
{
  *file = (File) { 0, };
  file->path = path;
  file->display = g_filename_display_name (path);
  index_init (&file->index);
}

static void
file_destroy (File *file)
{
  g_free (file->display);
  g_clear_object (&file->front);
  g_clear_object (&file->random);
  g_clear_object (&file->identity);
  g_clear_error (&file->error);
  g_clear_error (&file->aside_error);
  index_destroy (&file->index);
}

/* Prints an error of @file, as loading it whole would have. */
static void
report_file_error (const File   *file,
                   const GError *error)
{
  g_autoptr(GError) prefixed = NULL;

  if (error->domain == SERIO_ERROR)
    {
      serio_tool_report_parse_error (file->path, error);
      return;
    }

  prefixed = g_error_copy (error);
  /* TRANSLATORS: a file name, before an error message about it */
  g_prefix_error (&prefixed, _("%s: "), file->display);
  serio_tool_print_error (prefixed);
}

/* ------------------------------------------------------------------ */
/* Arrays                                                             */
/* ------------------------------------------------------------------ */

typedef struct
{
  guint64  n_differ;        /* pairs whose bits differ */
  guint64  n_outside;       /* of those, pairs outside the tolerance */
  guint64  n_kept;          /* of those to show, those kept in Diff.shown */
  gboolean has_numbers;     /* some differing pair has no NaN */
  double   max_absolute;
  double   max_relative;
  guint64  max_distance[N_PRECISIONS];   /* for each precision still possible */
} Summary;

/* Compares @n pairs of values, the first of them at @offset in their arrays. */
static void
summarize (Diff             *diff,
           const double     *a,
           const double     *b,
           gsize             n,
           guint64           offset,
           const Precisions *precisions,
           Summary          *summary)
{
  for (gsize i = 0; i < n; i++)
    {
      double absolute, relative;
      gboolean shown;

      if (!bits_differ (a[i], b[i]))
        continue;
      summary->n_differ++;
      /* With a tolerance, the values shown are those outside it. */
      shown = !with_tolerance () || !is_close (a[i], b[i]);
      if (with_tolerance () && shown)
        summary->n_outside++;
      if (shown && summary->n_kept < (guint64) max_shown)
        {
          ShownValue value = { offset + i, a[i], b[i] };

          held_append (&diff->shown, &value, sizeof value);
          summary->n_kept++;
        }
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
      /* Every value so far fits in each precision still possible (the
       * values of this piece included), which has a distance for them. */
      for (int p = 0; p < N_PRECISIONS; p++)
        if (precisions->possible[p])
          summary->max_distance[p] = MAX (summary->max_distance[p],
                                          distance (a[i], b[i], (Precision) p));
      summary->has_numbers = TRUE;
    }
}

static void
print_summary (Held          *out,
               const Summary *summary,
               Precision      precision)
{
  char absolute[SERIO_TOOL_DOUBLE_BUFSIZE], relative[SERIO_TOOL_DOUBLE_BUFSIZE];
  g_autofree char *shown = format_distance (summary->max_distance[precision], precision);

  if (!summary->has_numbers)
    return;

  /* TRANSLATORS: the largest differences between the values of an array
   * in two files: absolute, relative (to the second file's value), and
   * as a distance (“3 ULPs”, “2 units”); then the precision the values
   * likely come from (“float32”, “integer”) */
  held_printf (out, _("  max absolute difference %s, relative %s, distance %s (%s)"),
                serio_tool_format_double (summary->max_absolute, absolute),
                serio_tool_format_double (summary->max_relative, relative),
                shown, precision_name (precision));
  held_printf (out, "\n");
}

static void
print_value_difference (Held             *out,
                        const ShownValue *value,
                        Precision         precision,
                        SerioDtype        dtype_a,
                        SerioDtype        dtype_b)
{
  char a_text[SERIO_TOOL_DOUBLE_BUFSIZE], b_text[SERIO_TOOL_DOUBLE_BUFSIZE];
  g_autofree char *shown = NULL;

  if (isnan (value->a) || isnan (value->b))
    /* TRANSLATORS: shown instead of a distance in ULPs when one of
     * the two values is not a number */
    shown = g_strdup (_("NaN"));
  else
    shown = format_distance (distance (value->a, value->b, precision), precision);

  /* TRANSLATORS: one differing value: its index, its value in the first
   * file, its value in the second file, and their distance */
  held_printf (out, _("  [%lu] %s → %s (%s)"), (gulong) value->index,
                serio_tool_format_typed (value->a, dtype_a, a_text),
                serio_tool_format_typed (value->b, dtype_b, b_text), shown);
  held_printf (out, "\n");
}

/* Reads the values of @a and @b side by side to their ends, and writes
 * what differs to @out. Sets Diff.differ when the arrays count as
 * different: their bits differ, or with a tolerance, some values are
 * outside it. Returns FALSE on an error of a file. */
static gboolean
diff_arrays (Diff         *diff,
             const Source *a,
             const Source *b,
             Held         *out)
{
  const File *file_a = &diff->a, *file_b = &diff->b;
  g_autofree char *base_name = serio_reader_get_base_name (a->reader);
  g_autofree char *name = serio_tool_escape_name (base_name);
  guint64 n_a = serio_reader_get_n_values (a->reader);
  guint64 n_b = serio_reader_get_n_values (b->reader);
  guint64 n_common = MIN (n_a, n_b), n_candidates, n_shown;
  g_autofree guint64 *shape_a = NULL;
  g_autofree guint64 *shape_b = NULL;
  guint n_dims_a, n_dims_b;
  gboolean layout_differs;
  gboolean more_a = TRUE, more_b = TRUE;
  guint64 offset = 0;
  SerioDtype dtype_a = serio_reader_get_dtype (a->reader);
  SerioDtype dtype_b = serio_reader_get_dtype (b->reader);
  Precisions precisions;
  Precision precision;
  Summary summary = { 0, };

  shape_a = serio_reader_get_shape (a->reader, &n_dims_a);
  shape_b = serio_reader_get_shape (b->reader, &n_dims_b);
  layout_differs = n_dims_a != n_dims_b ||
                   memcmp (shape_a, shape_b, n_dims_a * sizeof (guint64)) != 0;

  if (layout_differs && (n_dims_a != 1 || n_dims_b != 1))
    {
      g_autofree char *text_a = serio_tool_shape_to_string (shape_a, n_dims_a);
      g_autofree char *text_b = serio_tool_shape_to_string (shape_b, n_dims_b);

      /* TRANSLATORS: an array name, its shape such as “(2, 3)” in the
       * first file and the file's name, then the same in the second file */
      held_printf (out, _("“%s”: shape %s in %s, %s in %s"),
                    name, text_a, file_a->display, text_b, file_b->display);
      held_printf (out, "\n");
    }
  else if (!layout_differs &&
           !g_str_equal (serio_reader_get_name (a->reader), serio_reader_get_name (b->reader)))
    {
      /* "v" and "v[2]": the same shape, written two ways. */
      g_autofree char *name_a = serio_tool_escape_name (serio_reader_get_name (a->reader));
      g_autofree char *name_b = serio_tool_escape_name (serio_reader_get_name (b->reader));

      /* TRANSLATORS: an array's base name, its full name in the first file
       * and the file's name, then the same in the second file */
      held_printf (out, _("“%s”: named “%s” in %s, “%s” in %s"),
                    name, name_a, file_a->display, name_b, file_b->display);
      held_printf (out, "\n");
      layout_differs = TRUE;
    }
  else if (n_a != n_b)
    {
      /* TRANSLATORS: an array name, its length in the first file and the
       * file's name, then the same in the second file */
      held_printf (out, _("“%s”: length %lu in %s, %lu in %s"),
                    name, (gulong) n_a, file_a->display, (gulong) n_b, file_b->display);
      held_printf (out, "\n");
    }

  /* Side by side, a piece of each at a time: the pieces have the same
   * length, and so the same offset, until the shorter array ends. The
   * precision takes every value of both arrays, the comparison those that
   * both have. */
  if (!precisions_init_recorded (&precisions, dtype_a, dtype_b))
    precisions_init (&precisions);
  serio_tool_spool_clear (diff->shown.spool);
  while (more_a || more_b)
    {
      gsize got_a = 0, got_b = 0;

      if (more_a &&
          !serio_reader_read_values (a->reader, diff->values_a, CHUNK, &got_a, NULL, a->error))
        return FALSE;
      if (more_b &&
          !serio_reader_read_values (b->reader, diff->values_b, CHUNK, &got_b, NULL, b->error))
        return FALSE;
      more_a = got_a > 0;
      more_b = got_b > 0;

      precisions_narrow (&precisions, diff->values_a, got_a);
      precisions_narrow (&precisions, diff->values_b, got_b);
      summarize (diff, diff->values_a, diff->values_b, MIN (got_a, got_b), offset,
                 &precisions, &summary);
      offset += MAX (got_a, got_b);
    }
  precision = precisions_narrowest (&precisions);

  if (summary.n_differ == 0)
    {
      diff->differ |= layout_differs;
      return TRUE;
    }

  held_printf (out, g_dngettext (GETTEXT_PACKAGE,
                                  /* TRANSLATORS: an array name, how many of its
                                   * values differ, and out of how many (those present
                                   * in both files) */
                                  "“%s”: %lu of %lu values differs",
                                  "“%s”: %lu of %lu values differ",
                                  summary.n_differ),
                name, (gulong) summary.n_differ, (gulong) n_common);
  held_printf (out, "\n");
  print_summary (out, &summary, precision);

  if (with_tolerance ())
    {
      if (summary.n_outside == 0)
        held_printf (out, "%s\n", _("  all within the tolerance"));
      else
        {
          held_printf (out, g_dngettext (GETTEXT_PACKAGE,
                                          /* TRANSLATORS: how many of the values that
                                           * differ are outside the tolerance */
                                          "  %lu outside the tolerance",
                                          "  %lu outside the tolerance",
                                          summary.n_outside),
                        (gulong) summary.n_outside);
          held_printf (out, "\n");
        }
    }

  /* The first values to show, in their order, with the precision now known. */
  n_shown = summary.n_kept;
  for (guint64 i = 0; i < n_shown; i++)
    {
      ShownValue value;

      if (!held_read (&diff->shown, i * sizeof value, &value, sizeof value))
        break;
      print_value_difference (out, &value, precision, dtype_a, dtype_b);
    }

  /* With 0, only the counts: no "… and N more" line either. */
  n_candidates = with_tolerance () ? summary.n_outside : summary.n_differ;
  if (n_candidates > n_shown && max_shown > 0)
    {
      held_printf (out, g_dngettext (GETTEXT_PACKAGE, "  … and %lu more", "  … and %lu more",
                                      n_candidates - n_shown),
                    (gulong) (n_candidates - n_shown));
      held_printf (out, "\n");
    }

  diff->differ |= layout_differs || (with_tolerance () ? summary.n_outside > 0 : TRUE);
  return TRUE;
}

static void
print_only_in (Diff       *diff,
               Held       *out,
               const File *file,
               guint       position,
               const char *array_name)
{
  g_autofree char *name = serio_tool_escape_name (array_name);

  if (serio_name_is_metadata (array_name))
    /* TRANSLATORS: a file name, then the index and name of a record of
     * the library's metadata (such as serio.tree, not an array) that only
     * this file has */
    held_printf (out, _("Only in %s: metadata record %u “%s”"), file->display, position, name);
  else
    /* TRANSLATORS: a file name, then the index and name of an array that
     * only this file has */
    held_printf (out, _("Only in %s: array %u “%s”"), file->display, position, name);
  held_printf (out, "\n");
  diff->differ = TRUE;
}

static void
print_order_differs (Diff       *diff,
                     Held       *out,
                     const char *array_name,
                     guint       position_a,
                     guint       position_b)
{
  g_autofree char *name = serio_tool_escape_name (array_name);

  /* TRANSLATORS: an array name, its index in the first file and the
   * file's name, then the same in the second file */
  held_printf (out, _("“%s” is array %u in %s but array %u in %s: the order differs"),
                name, position_a, diff->a.display, position_b, diff->b.display);
  held_printf (out, "\n");
  diff->differ = TRUE;
}

/* ------------------------------------------------------------------ */
/* Files side by side                                                 */
/* ------------------------------------------------------------------ */

/* From @first on, where the arrays of the two files stop having the same
 * base names one for one: A is read in order, and the partner of each
 * array is fetched from B, which is indexed first. */
static void
diff_rest_by_a (Diff  *diff,
                guint  first)
{
  File *a = &diff->a, *b = &diff->b;
  guint last_partner = first > 0 ? first - 1 : 0;

  if (!file_index (b, first))
    return;

  do
    {
      g_autofree char *base_name = serio_reader_get_base_name (a->front);
      const char *name = serio_reader_get_name (a->front);
      guint partner = index_take (&b->index, base_name);
      Source source_a = { a->front, &a->error }, source_b;

      if (partner == NO_PARTNER)
        {
          print_only_in (diff, &diff->output, a, a->position, name);
          continue;
        }

      /* Pairs must keep their order, or the files are not the same list. */
      if (partner < last_partner)
        print_order_differs (diff, &diff->output, name, a->position, partner);
      last_partner = MAX (last_partner, partner);
      index_get (&b->index, partner)->partner = a->position;

      if (!file_fetch (diff, b, partner, index_get (&b->index, partner)->name, &source_b) ||
          !diff_arrays (diff, &source_a, &source_b, &diff->output))
        return;
    }
  while (front_next (diff, a));

  if (diff_failed (diff))
    return;
  for (guint i = 0; i < b->index.entries->len; i++)
    {
      Entry *entry = &g_array_index (b->index.entries, Entry, i);

      if (entry->partner == NO_PARTNER)
        print_only_in (diff, &diff->output, b, b->index.first + i, entry->name);
    }
}

/* The same when B is the standard input, which cannot be read twice: B
 * is read in order, the partners are fetched from A, and the reports wait
 * until they can be printed in the order of A. */
static void
diff_rest_by_b (Diff  *diff,
                guint  first)
{
  File *a = &diff->a, *b = &diff->b;

  diff->by_b = TRUE;
  if (!file_index (a, first))
    return;

  do
    {
      g_autofree char *base_name = serio_reader_get_base_name (b->front);
      guint partner = index_take (&a->index, base_name);
      Source source_a, source_b = { b->front, &b->error };
      Entry *entry;

      if (partner == NO_PARTNER)
        {
          print_only_in (diff, &diff->only_in_b, b, b->position, serio_reader_get_name (b->front));
          continue;
        }

      entry = index_get (&a->index, partner);
      entry->partner = b->position;
      entry->report_offset = held_get_size (&diff->reports);
      if (!file_fetch (diff, a, partner, entry->name, &source_a) ||
          !diff_arrays (diff, &source_a, &source_b, &diff->reports))
        return;
      entry->report_len = held_get_size (&diff->reports) - entry->report_offset;
    }
  while (front_next (diff, b));
}

/* Puts the reports of diff_rest_by_b() in the order of A. */
static void
collect_rest_by_b (Diff *diff)
{
  File *a = &diff->a;
  guint first = a->index.first;
  guint last_partner = first > 0 ? first - 1 : 0;

  for (guint i = 0; i < a->index.entries->len; i++)
    {
      Entry *entry = &g_array_index (a->index.entries, Entry, i);

      if (entry->partner == NO_PARTNER)
        {
          print_only_in (diff, &diff->output, a, first + i, entry->name);
          continue;
        }
      if (entry->partner < last_partner)
        print_order_differs (diff, &diff->output, entry->name, first + i, entry->partner);
      last_partner = MAX (last_partner, entry->partner);
      held_copy (&diff->output, &diff->reports, entry->report_offset, entry->report_len);
    }
  held_copy (&diff->output, &diff->only_in_b, 0, held_get_size (&diff->only_in_b));
}

/* Whether the arrays of @file can be fetched again: a regular file, not
 * the standard input or a pipe. */
static gboolean
can_read_again (const File *file)
{
  return !serio_tool_is_stdin (file->path) &&
         g_file_test (file->path, G_FILE_TEST_IS_REGULAR);
}

/* Reads both files side by side while their arrays have the same base
 * names one for one (the k-th array is then the partner of the k-th), and
 * from the first that do not on, as diff_rest_by_a() or diff_rest_by_b(). */
static void
diff_files (Diff *diff)
{
  File *a = &diff->a, *b = &diff->b;

  for (;;)
    {
      gboolean more_a = front_next (diff, a);
      gboolean more_b = more_a || a->ended ? front_next (diff, b) : FALSE;
      g_autofree char *base_a = NULL;
      g_autofree char *base_b = NULL;

      if (diff_failed (diff) || (!more_a && !more_b))
        return;

      if (!more_a || !more_b)
        {
          /* One file ends: the rest of the other has no partners. */
          File *rest = more_a ? a : b;

          do
            print_only_in (diff, &diff->output, rest, rest->position,
                           serio_reader_get_name (rest->front));
          while (front_next (diff, rest));
          return;
        }

      base_a = serio_reader_get_base_name (a->front);
      base_b = serio_reader_get_base_name (b->front);
      if (!g_str_equal (base_a, base_b))
        break;

      if (!diff_arrays (diff, &(Source) { a->front, &a->error },
                        &(Source) { b->front, &b->error }, &diff->output))
        return;
    }

  if (can_read_again (b))
    diff_rest_by_a (diff, a->position);
  else if (can_read_again (a))
    diff_rest_by_b (diff, b->position);
  else
    g_set_error (&diff->error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                 /* TRANSLATORS: an error of serio diff; the two are file
                  * names */
                 _("the arrays of %s and %s are not in the same order, and neither file can be read twice (it is not a regular file)"),
                 a->display, b->display);
}

/* Reads both files to their ends (A first: its problem is the one shown
 * when both have one, as when they are loaded one after the other) and
 * prints their first problem, or the report. */
static int
finish (Diff *diff)
{
  File *files[] = { &diff->a, &diff->b };
  Held *spools[] = { &diff->output, &diff->shown, &diff->reports, &diff->only_in_b };

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      File *file = files[i];

      front_drain (diff, file);
      if (file->error != NULL || file->aside_error != NULL)
        {
          end_progress (diff);
          report_file_error (file, file->error != NULL ? file->error : file->aside_error);
          return SERIO_TOOL_EXIT_ERROR;
        }
    }
  end_progress (diff);

  if (diff->error != NULL)
    {
      serio_tool_print_error (diff->error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  if (diff->by_b)
    collect_rest_by_b (diff);

  for (guint i = 0; i < G_N_ELEMENTS (spools); i++)
    if (spools[i]->error != NULL)
      {
        serio_tool_print_error (spools[i]->error);
        return SERIO_TOOL_EXIT_ERROR;
      }

  if (!held_print (&diff->output))
    {
      serio_tool_print_error (diff->output.error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return diff->differ ? SERIO_TOOL_EXIT_FAILURE : SERIO_TOOL_EXIT_OK;
}

static int
diff_paths (const char *path_a,
            const char *path_b)
{
  Diff diff = { 0, };
  g_autoptr(GError) error = NULL;
  int status;

  file_init (&diff.a, path_a);
  file_init (&diff.b, path_b);
  held_init (&diff.output);
  held_init (&diff.shown);
  held_init (&diff.reports);
  held_init (&diff.only_in_b);
  diff.values_a = g_new (double, CHUNK);
  diff.values_b = g_new (double, CHUNK);

  diff.a.front = open_reader (&diff.a, TRUE, &error);
  /* GIO's errors of opening a file name it. */
  if (diff.a.front == NULL)
    {
      serio_tool_print_error (error);
      status = SERIO_TOOL_EXIT_ERROR;
    }
  else if ((diff.b.front = open_reader (&diff.b, TRUE, &error)) == NULL)
    {
      /* As when A is loaded before B is opened: a problem of A first. */
      front_drain (&diff, &diff.a);
      end_progress (&diff);
      if (diff.a.error != NULL)
        report_file_error (&diff.a, diff.a.error);
      else
        serio_tool_print_error (error);
      status = SERIO_TOOL_EXIT_ERROR;
    }
  else
    {
      diff_files (&diff);
      status = finish (&diff);
    }

  file_destroy (&diff.a);
  file_destroy (&diff.b);
  held_destroy (&diff.output);
  held_destroy (&diff.shown);
  held_destroy (&diff.reports);
  held_destroy (&diff.only_in_b);
  g_free (diff.values_a);
  g_free (diff.values_b);
  g_clear_error (&diff.error);

  return status;
}

int
handle_diff (int argc, char *argv[], gboolean do_help)
{
  int status;

  if (!serio_tool_parse_options (N_("A B"),
                                 N_("Compare two serio files bit for bit. The k-th array called N in A is\n"
                                    "matched with the k-th array called N in B, whatever their shapes\n"
                                    "(“w[2x3]” is called “w”). Reported are arrays that only one file has,\n"
                                    "matched arrays in another order, shapes or lengths that differ, and\n"
                                    "how many of the values both arrays have differ, with the largest\n"
                                    "differences (absolute, relative to B, and as a distance) and the\n"
                                    "first few values: index, both values and their distance, or\n"
                                    "“NaN” when one is NaN. Distances are in ULPs (steps between neighbouring\n"
                                    "numbers; -0 and +0 are 1 apart) of the arrays' type when both record\n"
                                    "the same one (“w@float32[3]”), in units for the integer types and bool;\n"
                                    "for arrays without a type, in units when every value of both arrays is\n"
                                    "an integer, else in ULPs of the narrowest of bfloat16, float16, float32\n"
                                    "and float64 that holds them all. “-” stands for the standard input.\n\n"
                                    "With --atol or --rtol, values a and b match when\n"
                                    "|a - b| <= atol + rtol * |b|, as numpy.allclose() has it (NaN matches\n"
                                    "NaN), and the values shown are those that do not."),
                                 N_("Exit status: 0 if the files hold the same arrays in the same order\n"
                                    "with the same bits (or, with a tolerance, values within it), 1 if they\n"
                                    "differ, 2 on a usage or input/output error or an invalid file."),
                                 entries, do_help, &argc, &argv, &status))
    return status;

  if (argc != 3)
    return serio_tool_usage_error (_("give exactly two files"));
  if (max_shown < 0)
    return serio_tool_usage_error (_("the number of values to show cannot be negative"));

  if (serio_tool_is_stdin (argv[1]) && serio_tool_is_stdin (argv[2]))
    return serio_tool_usage_error (_("only one of the files can be the standard input"));

  return diff_paths (argv[1], argv[2]);
}
