/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-common.c: option parsing, file loading, progress and number
 * formatting shared by the commands of the serio tool
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <gio/gunixinputstream.h>

#include "serio-tool.h"

/* Reads go in pieces of this size, so that a progress indicator moves. */
#define READ_CHUNK (1024 * 1024)

/* Files above this size show their progress on a terminal. */
#define PROGRESS_THRESHOLD (G_GOFFSET_CONSTANT (64) * 1024 * 1024)

gboolean
serio_tool_parse_options (const char          *parameter_string,
                          const char          *summary,
                          const char          *description,
                          const GOptionEntry  *entries,
                          int                 *argc,
                          char              ***argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new (parameter_string);
  g_autoptr(GError) error = NULL;

  /* The parameter string, summary and description are translated by the
   * context when it prints the help, from our domain. */
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      serio_tool_usage_error (error->message);
      return FALSE;
    }

  return TRUE;
}

int
serio_tool_usage_error (const char *message)
{
  /* TRANSLATORS: a program or file name, and an error message */
  g_printerr (_("%s: %s"), g_get_prgname (), message);
  g_printerr ("\n");
  g_printerr (_("Try “%s --help” for more information."), g_get_prgname ());
  g_printerr ("\n");

  return SERIO_TOOL_EXIT_ERROR;
}

/* Results go to the buffered standard output, errors to the standard
 * error: flushing first keeps them in order when both reach one place. */
static void
flush_results (void)
{
  fflush (stdout);
}

void
serio_tool_print_error (const GError *error)
{
  flush_results ();
  /* TRANSLATORS: a program or file name, and an error message */
  g_printerr (_("%s: %s"), g_get_prgname (), error->message);
  g_printerr ("\n");
}

int
serio_tool_no_such_array (const char *path,
                          const char *name)
{
  g_autofree char *display = g_filename_display_name (path);
  g_autofree char *shown = serio_tool_escape_name (name);

  /* TRANSLATORS: the program, a file name and an array name */
  g_printerr (_("%s: %s: no array is called “%s”"), g_get_prgname (), display, shown);
  g_printerr ("\n");

  return SERIO_TOOL_EXIT_FAILURE;
}

gboolean
serio_tool_is_stdin (const char *path)
{
  return g_str_equal (path, "-");
}

static gboolean
show_progress (goffset size)
{
  return size > PROGRESS_THRESHOLD && isatty (STDERR_FILENO);
}

static void
progress_show (const char *text)
{
  /* Back to the start of the line, then erase what a longer text left. */
  g_printerr ("\r%s\033[K", text);
}

static void
progress_show_reading (const char *display,
                    int         percent)
{
  /* TRANSLATORS: progress while reading a large file: its name and a
   * percentage */
  g_autofree char *text = g_strdup_printf (_("Reading %s: %d%%"), display, percent);

  progress_show (text);
}

static void
progress_clear (void)
{
  g_printerr ("\r\033[K");
}

/*
 * serio_tool_open_input:
 * @path: a file name in the file system's encoding, or "-" for the
 *   standard input
 * @size: (out): the size of the file, or -1 when it is not known
 *
 * Opens a file for reading. Errors are GIO's, without the file's name.
 */
GInputStream *
serio_tool_open_input (const char  *path,
                       goffset     *size,
                       GError     **error)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileInputStream) stream = NULL;
  g_autoptr(GFileInfo) info = NULL;

  *size = -1;
  if (serio_tool_is_stdin (path))
    return g_unix_input_stream_new (STDIN_FILENO, FALSE);

  file = g_file_new_for_path (path);
  stream = g_file_read (file, NULL, error);
  if (stream == NULL)
    return NULL;

  info = g_file_input_stream_query_info (stream, G_FILE_ATTRIBUTE_STANDARD_SIZE, NULL, NULL);
  if (info != NULL && g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_STANDARD_SIZE))
    *size = g_file_info_get_size (info);

  return G_INPUT_STREAM (g_steal_pointer (&stream));
}

/*
 * serio_tool_load:
 * @path: a file name in the file system's encoding, or "-" for the
 *   standard input
 *
 * Reads a whole file. Messages of the errors set name the file.
 */
GBytes *
serio_tool_load (const char  *path,
                 GError     **error)
{
  g_autoptr(GInputStream) stream = NULL;
  g_autofree char *display = g_filename_display_name (path);
  g_autofree char *data = NULL;
  gsize len = 0;
  gsize capacity;
  goffset size;
  gboolean progress;
  int shown_percent = 0;

  stream = serio_tool_open_input (path, &size, error);
  if (stream == NULL)
    return NULL;

  /* One byte more than the size announced, so that the read which finds
   * the end of the file needs no larger buffer. */
  capacity = size >= 0 && (guint64) size < G_MAXSIZE ? MAX ((gsize) size + 1, 4096) : READ_CHUNK;
  progress = show_progress (size);
  if (progress)
    progress_show_reading (display, 0);

  data = g_try_malloc (capacity);
  if (data == NULL)
    goto no_memory;

  for (;;)
    {
      gssize n;

      if (len == capacity)
        {
          char *bigger = capacity <= G_MAXSIZE / 2 ? g_try_realloc (data, capacity * 2) : NULL;

          if (bigger == NULL)
            goto no_memory;
          data = bigger;
          capacity *= 2;
        }

      n = g_input_stream_read (stream, data + len, MIN (capacity - len, READ_CHUNK), NULL, error);
      if (n < 0)
        {
          if (progress)
            progress_clear ();
          /* TRANSLATORS: a file name, before an error message about it */
          g_prefix_error (error, _("%s: "), display);
          return NULL;
        }
      if (n == 0)
        break;
      len += n;

      if (progress && (guint64) len <= (guint64) size)
        {
          int percent = (int) ((guint64) len * 100 / (guint64) size);

          if (percent != shown_percent)
            {
              progress_show_reading (display, percent);
              shown_percent = percent;
            }
        }
    }

  if (progress)
    progress_clear ();

  return g_bytes_new_take (g_steal_pointer (&data), len);

no_memory:
  if (progress)
    progress_clear ();
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
               _("%s: not enough memory to read the file"), display);
  return NULL;
}

/* Prints a parse error of the file @path in the GNU format `FILE:LINE:
 * message` that editors jump to, with the line that the error carries;
 * the message without its line follows, so that the line is not repeated. */
void
serio_tool_report_parse_error (const char   *path,
                               const GError *error)
{
  g_autofree char *display = g_filename_display_name (path);
  guint64 line = serio_error_get_line (error);
  const char *detail = serio_error_get_detail (error);

  flush_results ();
  if (line > 0 && detail != NULL)
    g_printerr ("%s:%" G_GUINT64_FORMAT ": %s\n", display, line, detail);
  else
    {
      /* TRANSLATORS: a program or file name, and an error message */
      g_printerr (_("%s: %s"), display, error->message);
      g_printerr ("\n");
    }
}

/*
 * serio_tool_load_bundle:
 * @path: a file name, or "-" for the standard input
 * @bytes: (out) (optional): the contents of the file
 * @status: (out): on failure, the exit status the error calls for
 *
 * Reads and parses a serio file, printing any error.
 */
SerioBundle *
serio_tool_load_bundle (const char  *path,
                        GBytes     **bytes,
                        int         *status)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  gboolean progress;

  contents = serio_tool_load (path, &error);
  if (contents == NULL)
    {
      serio_tool_print_error (error);
      *status = SERIO_TOOL_EXIT_ERROR;
      return NULL;
    }

  progress = show_progress (g_bytes_get_size (contents));
  if (progress)
    {
      g_autofree char *display = g_filename_display_name (path);
      /* TRANSLATORS: progress after a large file is read; %s is its name */
      g_autofree char *text = g_strdup_printf (_("Parsing %s…"), display);

      progress_show (text);
    }

  bundle = serio_bundle_from_bytes (contents, &error);
  if (progress)
    progress_clear ();

  if (bundle == NULL)
    {
      serio_tool_report_parse_error (path, error);
      *status = SERIO_TOOL_EXIT_FAILURE;
      return NULL;
    }

  if (bytes != NULL)
    *bytes = g_steal_pointer (&contents);

  return g_steal_pointer (&bundle);
}

/*
 * serio_tool_is_sealed:
 * @bytes: a text that the library parsed without error
 *
 * Whether the text was sealed: its first record, after any blank lines,
 * opens a seal (serio-v1-files.md §2). The reader verified and stripped
 * the seal of such a text, so this is all that is left to tell.
 */
gboolean
serio_tool_is_sealed (GBytes *bytes)
{
  static const char opening[] = "v1|serio.sealed|1|1";
  gsize size;
  const char *p = g_bytes_get_data (bytes, &size);
  const char *end = p + size;

  for (;;)
    {
      if (p < end && *p == '\n')
        p++;
      else if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
        p += 2;
      else
        break;
    }

  return (gsize) (end - p) > strlen (opening) &&
         memcmp (p, opening, strlen (opening)) == 0 &&
         (p[strlen (opening)] == '\n' || p[strlen (opening)] == '\r');
}

/*
 * serio_tool_format_double:
 *
 * Writes the shortest decimal that reads back to the bits of @value, as
 * serio_tool_write_double() does, NUL-terminated. The same whatever the
 * locale, and valid JSON for every finite value.
 *
 * Returns: @buf
 */
const char *
serio_tool_format_double (double value,
                          char   buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  gsize len = serio_tool_write_double (value, buf);

  buf[len] = '\0';
  return buf;
}

/*
 * serio_tool_escape_name:
 *
 * Makes an array name safe to print on a terminal: backslashes are doubled
 * and control characters written as \xNN (C0, DEL) or \uNNNN (C1).
 */
char *
serio_tool_escape_name (const char *name)
{
  GString *out = g_string_sized_new (strlen (name));

  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '\\')
        g_string_append (out, "\\\\");
      else if (c < 0x20 || c == 0x7F)
        g_string_append_printf (out, "\\x%02X", c);
      else if (c >= 0x80 && c < 0xA0)
        g_string_append_printf (out, "\\u%04X", c);
      else
        g_string_append_unichar (out, c);
    }

  return g_string_free (out, FALSE);
}
