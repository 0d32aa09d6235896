/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-cat.c: serio cat [--name NAME…] FILE
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-ryu.h"
#include "serio-tool.h"

static char **array_names = NULL;

static const GOptionEntry entries[] = {
  { "name", 'n', 0, G_OPTION_ARG_STRING_ARRAY, &array_names,
    N_("Print only the first array called NAME (may be repeated)"), N_("NAME") },
  G_OPTION_ENTRY_NULL
};

/* Values are read and printed in chunks of this many. */
#define CHUNK_VALUES (64 * 1024)

/* A chunk is split between threads from this many values on. */
#define PARALLEL_MIN_VALUES 4096

/* The most bytes one value takes, with its line feed. */
#define VALUE_ROOM (SERIO_TOOL_DOUBLE_BUFSIZE + 1)

#define MAX_PIECES 64

typedef struct _Cat Cat;

/* One thread's share of a chunk: its values, formatted into its buffer. */
typedef struct
{
  const double *values;
  gsize         n_values;
  SerioDtype    dtype;
  char         *out;
  gsize         room;
  gsize         len;
} Piece;

struct _Cat
{
  double       *values;       /* CHUNK_VALUES */
  guint         n_threads;
  GThreadPool  *pool;
  Piece         pieces[MAX_PIECES];
  GMutex        lock;
  GCond         done;
  guint         pending;

  /* Where the output goes now: the standard output and/or spools. */
  gboolean      to_stdout;
  GPtrArray    *spools;       /* (element-type SerioToolSpool) (transfer none) */
  int           write_errno;  /* when the standard output failed */
};

/* Set when writing to the standard output failed: the error is reported
 * by the caller of serio_tool_cat() from errno. */
static int stdout_errno = 0;

static void
cat_init (Cat *cat)
{
  *cat = (Cat) { 0, };
  cat->values = g_new (double, CHUNK_VALUES);
  cat->n_threads = MIN (serio_tool_get_threads (), MAX_PIECES);
  cat->spools = g_ptr_array_new ();
  g_mutex_init (&cat->lock);
  g_cond_init (&cat->done);
}

static void
cat_clear (Cat *cat)
{
  if (cat->pool != NULL)
    g_thread_pool_free (cat->pool, FALSE, TRUE);
  for (guint i = 0; i < MAX_PIECES; i++)
    g_free (cat->pieces[i].out);
  g_ptr_array_unref (cat->spools);
  g_mutex_clear (&cat->lock);
  g_cond_clear (&cat->done);
  g_free (cat->values);
}

static void
format_piece (Piece *piece)
{
  char *out = piece->out;
  gsize len = 0;

  /* Each value as the shortest decimal of its array's type. */
  if (piece->dtype == SERIO_DTYPE_FLOAT64)
    for (gsize i = 0; i < piece->n_values; i++)
      {
        len += serio_tool_write_double (piece->values[i], out + len);
        out[len++] = '\n';
      }
  else
    for (gsize i = 0; i < piece->n_values; i++)
      {
        len += serio_tool_write_typed (piece->values[i], piece->dtype, out + len);
        out[len++] = '\n';
      }
  piece->len = len;
}

static void
format_in_pool (gpointer data,
                gpointer user_data)
{
  Cat *cat = user_data;

  format_piece (data);

  g_mutex_lock (&cat->lock);
  if (--cat->pending == 0)
    g_cond_signal (&cat->done);
  g_mutex_unlock (&cat->lock);
}

/* Writes @len bytes wherever the output goes now. On an error, @error is
 * set for a spool; for the standard output, write_errno is set instead. */
static gboolean
emit (Cat         *cat,
      const char  *data,
      gsize        len,
      GError     **error)
{
  if (cat->to_stdout && fwrite (data, 1, len, stdout) != len)
    {
      cat->write_errno = errno != 0 ? errno : EIO;
      return FALSE;
    }

  for (guint i = 0; i < cat->spools->len; i++)
    {
      if (!serio_tool_spool_append (g_ptr_array_index (cat->spools, i), data, len, error))
        return FALSE;
    }

  return TRUE;
}

/* Formats @n_values values, on several threads when there are enough of
 * them (each into its own buffer), and writes them out in order. */
static gboolean
emit_values (Cat           *cat,
             const double  *values,
             gsize          n_values,
             SerioDtype     dtype,
             GError       **error)
{
  guint n_pieces = 1;

  if (cat->n_threads > 1 && n_values >= PARALLEL_MIN_VALUES)
    n_pieces = cat->n_threads;

  for (guint i = 0; i < n_pieces; i++)
    {
      Piece *piece = &cat->pieces[i];
      gsize start = n_values * i / n_pieces;
      gsize end = n_values * (i + 1) / n_pieces;

      if (piece->room < (end - start) * VALUE_ROOM)
        {
          g_free (piece->out);
          piece->room = (end - start) * VALUE_ROOM;
          piece->out = g_malloc (piece->room);
        }
      piece->values = values + start;
      piece->n_values = end - start;
      piece->dtype = dtype;
    }

  if (n_pieces > 1)
    {
      if (cat->pool == NULL)
        {
          cat->pool = g_thread_pool_new (format_in_pool, cat, cat->n_threads - 1, FALSE, NULL);
          g_assert (cat->pool != NULL);
        }

      cat->pending = n_pieces - 1;
      for (guint i = 1; i < n_pieces; i++)
        g_thread_pool_push (cat->pool, &cat->pieces[i], NULL);
    }
  format_piece (&cat->pieces[0]);

  if (n_pieces > 1)
    {
      g_mutex_lock (&cat->lock);
      while (cat->pending > 0)
        g_cond_wait (&cat->done, &cat->lock);
      g_mutex_unlock (&cat->lock);
    }

  for (guint i = 0; i < n_pieces; i++)
    {
      if (!emit (cat, cat->pieces[i].out, cat->pieces[i].len, error))
        return FALSE;
    }

  return TRUE;
}

/* Prints the current array of @reader, chunk by chunk, after its header
 * line if @header. Values are provisional: a text found damaged later
 * fails after some of them were printed. Returns FALSE on an error of the
 * reader (in @read_error) or of the output (see emit()). */
static gboolean
emit_array (Cat          *cat,
            SerioReader  *reader,
            gboolean      header,
            GError      **read_error,
            GError      **error)
{
  gsize n;

  if (header)
    {
      g_autofree char *name = serio_tool_escape_name (serio_reader_get_name (reader));
      guint64 n_values = serio_reader_get_n_values (reader);
      /* Not translated: the output of cat is the same under every locale. */
      g_autofree char *line = g_strdup_printf ("# %s (%" G_GUINT64_FORMAT " %s)\n",
                                               name, n_values, n_values == 1 ? "value" : "values");

      if (!emit (cat, line, strlen (line), error))
        return FALSE;
    }

  do
    {
      if (!serio_reader_read_values (reader, cat->values, CHUNK_VALUES, &n, NULL, read_error))
        return FALSE;
      if (n > 0 && !emit_values (cat, cat->values, n, serio_reader_get_dtype (reader), error))
        return FALSE;
    }
  while (n > 0);

  return TRUE;
}

/* The status for a failure of emit_array() or of the reader: its error is
 * printed, but for a failed standard output, which the caller reports. */
static int
failed (Cat          *cat,
        const char   *path,
        const GError *read_error,
        const GError *error)
{
  if (read_error != NULL)
    return serio_tool_report_read_error (path, read_error);

  if (error != NULL)
    serio_tool_print_error (error);
  else
    stdout_errno = cat->write_errno;

  return SERIO_TOOL_EXIT_ERROR;
}

static SerioToolInputFlags
input_flags (void)
{
  /* Progress on the terminal would garble the values printed on it. */
  return isatty (STDOUT_FILENO) ? SERIO_TOOL_INPUT_NO_PROGRESS : SERIO_TOOL_INPUT_DEFAULT;
}

static SerioReader *
open_reader (const char *path)
{
  g_autoptr(GError) error = NULL;
  SerioReader *reader = serio_tool_open_reader (path, input_flags (), &error);

  if (reader == NULL)
    serio_tool_print_error (error);

  return reader;
}

/* Reads the values of the current array, printing nothing. */
static gboolean
skip_array (Cat          *cat,
            SerioReader  *reader,
            GError      **read_error)
{
  gsize n;

  do
    if (!serio_reader_read_values (reader, cat->values, CHUNK_VALUES, &n, NULL, read_error))
      return FALSE;
  while (n > 0);

  return TRUE;
}

/* Every array, each after its header line. Metadata records (serio.tree,
 * the legacy serio.dtypes, …) are not arrays: they are read, and so
 * checked, but not printed (--name prints them). */
static int
cat_all (Cat        *cat,
         const char *path)
{
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioReader) reader = open_reader (path);

  if (reader == NULL)
    return SERIO_TOOL_EXIT_ERROR;

  cat->to_stdout = TRUE;
  while (serio_reader_next (reader, NULL, &read_error))
    {
      if (serio_name_is_metadata (serio_reader_get_name (reader)))
        {
          if (!skip_array (cat, reader, &read_error))
            return failed (cat, path, read_error, NULL);
          continue;
        }
      if (!emit_array (cat, reader, TRUE, &read_error, &error))
        return failed (cat, path, read_error, error);
    }
  if (read_error != NULL)
    return failed (cat, path, read_error, NULL);

  return SERIO_TOOL_EXIT_OK;
}

static int
report_missing (const char  *path,
                char       **names,
                GArray      *missing)
{
  for (guint i = 0; i < missing->len; i++)
    serio_tool_no_such_array (path, names[g_array_index (missing, guint, i)]);

  return missing->len > 0 ? SERIO_TOOL_EXIT_FAILURE : SERIO_TOOL_EXIT_OK;
}

/* Which array a name asked for finds, as serio_bundle_lookup() has it: the
 * first array of that name, or else the first whose base name it is
 * (`w` finds `w[2x3]`). Arrays are counted from 0 in the order of the
 * file; -1 for none (yet). */
typedef struct
{
  gint64 exact;
  gint64 base;
} Match;

static GHashTable *
new_matches (char  **names,
             guint   n_names)
{
  GHashTable *matches = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);

  for (guint k = 0; k < n_names; k++)
    {
      Match *match = g_new (Match, 1);

      match->exact = match->base = -1;
      g_hash_table_replace (matches, names[k], match);
    }

  return matches;
}

/* The names asked for that the current array (number @index) is the first
 * match of, so far: @exact for its name, @base for its base name (each
 * NULL when it is not). */
static void
find_matches (GHashTable   *matches,
              SerioReader  *reader,
              gint64        index,
              const char  **exact,
              const char  **base)
{
  const char *name = serio_reader_get_name (reader);
  gpointer key, value;

  *exact = *base = NULL;
  if (g_hash_table_lookup_extended (matches, name, &key, &value) &&
      ((Match *) value)->exact < 0)
    {
      ((Match *) value)->exact = index;
      *exact = key;
    }

  /* Only a name with a shape suffix has another base name. */
  if (g_str_has_suffix (name, "]"))
    {
      g_autofree char *base_name = serio_reader_get_base_name (reader);

      if (!g_str_equal (base_name, name) &&
          g_hash_table_lookup_extended (matches, base_name, &key, &value) &&
          ((Match *) value)->exact < 0 && ((Match *) value)->base < 0)
        {
          ((Match *) value)->base = index;
          *base = key;
        }
    }
}

/*
 * The arrays asked for, from a regular file, printed in the order given.
 * A first pass reads the whole file (validating it) and finds which array
 * each name finds; along the way it prints the arrays found by their exact
 * name as long as they come in the order given, and skips the others
 * unparsed. Then, while names are left, each pass re-opens the file and
 * reads it up to the next array due, and on as long as the arrays come in
 * order. Only the arrays printed are parsed, and nothing is kept: the
 * order given costs re-reading, never memory.
 */
static int
cat_names_from_file (Cat         *cat,
                     const char  *path,
                     char       **names,
                     guint        n_names)
{
  g_autoptr(GHashTable) matches = new_matches (names, n_names);
  g_autoptr(GArray) missing = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree gint64 *targets = g_new (gint64, n_names);
  gboolean header = n_names > 1;
  guint pos = 0;

  cat->to_stdout = TRUE;
  for (guint pass = 0; pos < n_names; pass++)
    {
      g_autoptr(GError) read_error = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioReader) reader = open_reader (path);

      if (reader == NULL)
        return SERIO_TOOL_EXIT_ERROR;

      for (gint64 index = 0; serio_reader_next (reader, NULL, &read_error); index++)
        {
          if (pass == 0)
            {
              const char *exact, *base;

              /* An exact name wins wherever it is: print it if it is due. */
              find_matches (matches, reader, index, &exact, &base);
              if (pos < n_names && exact != NULL && g_str_equal (exact, names[pos]))
                {
                  if (!emit_array (cat, reader, header, &read_error, &error))
                    return failed (cat, path, read_error, error);
                  pos++;
                }
              /* Read on to the end even when nothing is left to print: the
               * first pass checks the file. */
              continue;
            }

          if (targets[pos] != index)
            continue;
          if (!emit_array (cat, reader, header, &read_error, &error))
            return failed (cat, path, read_error, error);
          for (pos++; pos < n_names && targets[pos] < 0; pos++)
            g_array_append_val (missing, pos);
          /* The file was read whole (and found valid) by the first pass:
           * this one stops once it can print nothing more. */
          if (pos == n_names || targets[pos] <= index)
            break;
        }
      if (read_error != NULL)
        return failed (cat, path, read_error, NULL);

      if (pass == 0)
        {
          for (guint k = 0; k < n_names; k++)
            {
              Match *match = g_hash_table_lookup (matches, names[k]);

              targets[k] = match->exact >= 0 ? match->exact : match->base;
            }
        }
      for (; pos < n_names && targets[pos] < 0; pos++)
        g_array_append_val (missing, pos);
    }

  return report_missing (path, names, missing);
}

static gboolean
replay_to_stdout (const char  *data,
                  gsize        len,
                  gpointer     user_data,
                  GError     **error)
{
  Cat *cat = user_data;

  if (fwrite (data, 1, len, stdout) != len)
    {
      cat->write_errno = errno != 0 ? errno : EIO;
      return FALSE;
    }

  return TRUE;
}

/* Writes out the spool of the name asked for at @pos, and frees it. */
static gboolean
replay_spool (Cat        *cat,
              GPtrArray  *spools,
              guint       pos,
              GError    **error)
{
  if (!serio_tool_spool_replay (spools->pdata[pos], FALSE, replay_to_stdout, cat, error))
    return FALSE;
  g_clear_pointer (&spools->pdata[pos], serio_tool_spool_free);

  return TRUE;
}

/*
 * The arrays asked for, from the standard input (or another stream that
 * cannot be read twice), in one pass: an array that comes before its turn
 * is kept, printed, in a spool (in a temporary file beyond a little
 * memory) until the arrays due before it are printed. So is an array found
 * by its base name, which an array of that exact name further on would
 * replace.
 */
static int
cat_names_from_stream (Cat         *cat,
                       const char  *path,
                       char       **names,
                       guint        n_names)
{
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) matches = new_matches (names, n_names);
  g_autoptr(GArray) missing = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(SerioReader) reader = open_reader (path);
  g_autoptr(GPtrArray) spools = g_ptr_array_new_full (n_names, (GDestroyNotify) serio_tool_spool_free);
  g_autofree gboolean *final = g_new0 (gboolean, n_names);
  gboolean header = n_names > 1;
  guint pos = 0;

  if (reader == NULL)
    return SERIO_TOOL_EXIT_ERROR;

  for (guint k = 0; k < n_names; k++)
    g_ptr_array_add (spools, NULL);

  for (gint64 index = 0; serio_reader_next (reader, NULL, &read_error); index++)
    {
      const char *exact, *base;

      find_matches (matches, reader, index, &exact, &base);
      if (exact == NULL && base == NULL)
        continue;

      /* The places asked for are at pos or later: those before pos were
       * found by their exact name already. */
      cat->to_stdout = FALSE;
      g_ptr_array_set_size (cat->spools, 0);
      for (guint k = pos; k < n_names; k++)
        {
          if (exact != NULL && g_str_equal (names[k], exact))
            {
              /* Found for good: any array found by its base name is out. */
              g_clear_pointer (&spools->pdata[k], serio_tool_spool_free);
              final[k] = TRUE;
              if (k == pos)
                {
                  cat->to_stdout = TRUE;
                  continue;
                }
            }
          else if (base == NULL || !g_str_equal (names[k], base))
            continue;

          spools->pdata[k] = serio_tool_spool_new ("serio-cat-XXXXXX");
          g_ptr_array_add (cat->spools, spools->pdata[k]);
        }

      if (!emit_array (cat, reader, header, &read_error, &error))
        return failed (cat, path, read_error, error);
      g_ptr_array_set_size (cat->spools, 0);

      if (cat->to_stdout)
        {
          for (pos++; pos < n_names && final[pos]; pos++)
            {
              if (!replay_spool (cat, spools, pos, &error))
                return failed (cat, path, NULL, error);
            }
        }
    }
  if (read_error != NULL)
    return failed (cat, path, read_error, NULL);

  /* At the end, what was kept is printed in order; the others are
   * missing. */
  for (; pos < n_names; pos++)
    {
      if (spools->pdata[pos] == NULL)
        g_array_append_val (missing, pos);
      else if (!replay_spool (cat, spools, pos, &error))
        return failed (cat, path, NULL, error);
    }

  return report_missing (path, names, missing);
}

int
handle_cat (int argc, char *argv[], gboolean do_help)
{
  Cat cat;
  int status;
  guint n_names;
  /* Two messages, so that the second keeps its translation. */
  g_autofree char *description =
    g_strconcat (/* TRANSLATORS: in the help of serio cat, before its exit
                  * status; NAME is the argument of --name */
                 _("Values are printed as the file is read, but a file is only known to be\n"
                   "valid at its end: from a damaged file, some values may be printed\n"
                   "before the error. With NAME, the other arrays are skipped unparsed, so\n"
                   "that a damaged value in them is only caught in a sealed file; a NAME\n"
                   "that the file does not have is reported once the file was read."),
                 "\n\n",
                 _("Exit status: 0 on success, 1 if the file is not valid or has no array\n"
                   "NAME, 2 on a usage or input/output error."),
                 NULL);

  if (!serio_tool_parse_options (N_("FILE"),
                                 N_("Print the values of the arrays in a serio file, one per line, as the\n"
                                    "shortest decimals that read back to the same bits (or nan, inf, -inf,\n"
                                    "-0), the same under every locale. Each array starts with a line\n"
                                    "“# NAME (N values)”. “-” stands for the standard input.\n\n"
                                    "Given one array NAME, only its values are printed, without the header\n"
                                    "line; given several, the arrays are printed in the order given, each\n"
                                    "with its header line."),
                                 description, entries, do_help, &argc, &argv, &status))
    return status;

  if (argc != 2)
    return serio_tool_usage_error (_("give exactly one file"));

  n_names = array_names != NULL ? g_strv_length (array_names) : 0;

  cat_init (&cat);
  if (n_names == 0)
    status = cat_all (&cat, argv[1]);
  else if (!serio_tool_is_stdin (argv[1]) && g_file_test (argv[1], G_FILE_TEST_IS_REGULAR))
    status = cat_names_from_file (&cat, argv[1], array_names, n_names);
  else
    status = cat_names_from_stream (&cat, argv[1], array_names, n_names);
  cat_clear (&cat);

  /* For the error that the caller reports. */
  if (stdout_errno != 0)
    errno = stdout_errno;

  return status;
}
