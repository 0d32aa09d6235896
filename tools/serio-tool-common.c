/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-common.c: option parsing, file loading and streaming,
 * progress, spooled output and number formatting shared by the commands of
 * the serio tool
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>

#include <glib/gi18n.h>
#include <glib/gprintf.h>
#include <glib/gstdio.h>
#include <gio/gunixinputstream.h>

#include "serio-threads-private.h"
#include "serio-tool.h"

/* Files above this size show their progress on a terminal. */
#define PROGRESS_THRESHOLD (G_GOFFSET_CONSTANT (64) * 1024 * 1024)

/* A spool of serio_tool_spool_new() keeps this much in memory, the rest
 * in a temporary file. */
#define SPOOL_MEMORY (256 * 1024)

/* Spools are read back, and their lines put together, in pieces of this
 * size. */
#define SPOOL_CHUNK (64 * 1024)

/* A file above this size (or of a size not known) is hashed by a thread of
 * its own while it is parsed, with at most these many pieces waiting. */
#define HASH_THREAD_THRESHOLD (4 * 1024 * 1024)
#define HASH_IN_FLIGHT 4

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

  /* Only a regular file has a size to go by: that of a FIFO, a pipe (as
   * /dev/fd/N) or a device is 0 or means nothing, and such input is read
   * to its end instead. */
  info = g_file_input_stream_query_info (stream, G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                                         G_FILE_ATTRIBUTE_STANDARD_TYPE, NULL, NULL);
  if (info != NULL && g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_STANDARD_SIZE) &&
      g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_STANDARD_TYPE) &&
      g_file_info_get_file_type (info) == G_FILE_TYPE_REGULAR)
    *size = g_file_info_get_size (info);

  return G_INPUT_STREAM (g_steal_pointer (&stream));
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

/* ------------------------------------------------------------------ */
/* Streaming input                                                    */
/* ------------------------------------------------------------------ */

/*
 * SerioToolInput:
 *
 * A file's stream as the commands that stream read it: the bytes pass
 * through unchanged, counted against the file's size for the progress
 * shown on a terminal, and hashed with FNV-1a when asked (so that the
 * checksum of a text comes from the very bytes a reader parses, which
 * works on the standard input too). A read error names the file, unless
 * asked not to. It seeks when the file can, and it does not hash: the
 * progress then counts the bytes read wherever they were.
 *
 * FNV-1a goes one byte after the other, at about a byte per nanosecond:
 * for a large file, a thread hashes copies of the pieces read while the
 * reader parses them.
 */
typedef struct
{
  gsize  len;
  guint8 data[];
} HashPiece;

/* Tells the hashing thread to stop. */
static HashPiece stop_hashing;

struct _SerioToolInput
{
  GFilterInputStream  parent_instance;

  char               *display;
  goffset             size;         /* -1 when not known */
  guint64             n_read;
  gboolean            hashing;
  gboolean            bare_errors;  /* read errors without the file's name */
  SerioChecksum      *hash;         /* the hasher's while it runs */
  GThread            *hasher;
  GAsyncQueue        *pieces;       /* HashPiece: to hash, in order */
  GAsyncQueue        *room;         /* a token per piece that may be sent */
  gboolean            progress;     /* shown now */
  int                 shown_percent;
};

static void serio_tool_input_seekable_init (GSeekableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SerioToolInput, serio_tool_input, G_TYPE_FILTER_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_SEEKABLE,
                                                      serio_tool_input_seekable_init))

static gpointer
hash_in_thread (gpointer data)
{
  SerioToolInput *self = data;

  for (;;)
    {
      HashPiece *piece = g_async_queue_pop (self->pieces);

      if (piece == &stop_hashing)
        break;
      serio_checksum_update (self->hash, piece->data, (gssize) piece->len);
      g_free (piece);
      g_async_queue_push (self->room, GINT_TO_POINTER (1));
    }

  return NULL;
}

static void
hash_piece (SerioToolInput *self,
            const void     *data,
            gsize           len)
{
  HashPiece *piece;

  if (self->hasher == NULL &&
      (self->size < 0 || self->size > HASH_THREAD_THRESHOLD))
    {
      self->pieces = g_async_queue_new ();
      self->room = g_async_queue_new ();
      for (int i = 0; i < HASH_IN_FLIGHT; i++)
        g_async_queue_push (self->room, GINT_TO_POINTER (1));
      self->hasher = g_thread_new ("serio-hash", hash_in_thread, self);
    }

  if (self->hasher == NULL)
    {
      serio_checksum_update (self->hash, data, (gssize) len);
      return;
    }

  g_async_queue_pop (self->room);
  piece = g_malloc (sizeof (HashPiece) + len);
  piece->len = len;
  memcpy (piece->data, data, len);
  g_async_queue_push (self->pieces, piece);
}

/* Waits for the hashing thread to hash what it was sent, and ends it. */
static void
end_hashing (SerioToolInput *self)
{
  if (self->hasher == NULL)
    return;

  g_async_queue_push (self->pieces, &stop_hashing);
  g_thread_join (g_steal_pointer (&self->hasher));
  g_clear_pointer (&self->pieces, g_async_queue_unref);
  g_clear_pointer (&self->room, g_async_queue_unref);
}

static gssize
serio_tool_input_read (GInputStream  *stream,
                       void          *buffer,
                       gsize          count,
                       GCancellable  *cancellable,
                       GError       **error)
{
  SerioToolInput *self = SERIO_TOOL_INPUT (stream);
  GInputStream *base = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (stream));
  GError *local_error = NULL;
  gssize n;

  n = g_input_stream_read (base, buffer, count, cancellable, &local_error);
  if (n < 0)
    {
      end_hashing (self);
      serio_tool_input_end_progress (self);
      if (!self->bare_errors)
        /* TRANSLATORS: a file name, before an error message about it */
        g_prefix_error (&local_error, _("%s: "), self->display);
      g_propagate_error (error, local_error);
      return -1;
    }
  if (n == 0)
    {
      end_hashing (self);
      serio_tool_input_end_progress (self);
      return 0;
    }

  if (self->hashing)
    hash_piece (self, buffer, n);
  self->n_read += n;

  if (self->progress)
    {
      /* A reader that seeks may read some bytes twice, and a file may
       * grow: at most 100%. */
      guint64 done = MIN (self->n_read, (guint64) self->size);
      int percent = (int) (done * 100 / (guint64) self->size);

      if (percent != self->shown_percent)
        {
          progress_show_reading (self->display, percent);
          self->shown_percent = percent;
        }
    }

  return n;
}

/* The file's stream, when the input may seek in it. */
static GSeekable *
get_seekable_base (SerioToolInput *self)
{
  GInputStream *base = g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (self));

  if (self->hashing || !G_IS_SEEKABLE (base))
    return NULL;
  return G_SEEKABLE (base);
}

static goffset
serio_tool_input_tell (GSeekable *seekable)
{
  GSeekable *base = get_seekable_base (SERIO_TOOL_INPUT (seekable));

  return base != NULL ? g_seekable_tell (base) : (goffset) SERIO_TOOL_INPUT (seekable)->n_read;
}

static gboolean
serio_tool_input_can_seek (GSeekable *seekable)
{
  GSeekable *base = get_seekable_base (SERIO_TOOL_INPUT (seekable));

  return base != NULL && g_seekable_can_seek (base);
}

static gboolean
serio_tool_input_seek (GSeekable     *seekable,
                       goffset        offset,
                       GSeekType      type,
                       GCancellable  *cancellable,
                       GError       **error)
{
  GSeekable *base = get_seekable_base (SERIO_TOOL_INPUT (seekable));

  if (base == NULL)
    {
      /* As lseek() on a pipe. */
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, g_strerror (ESPIPE));
      return FALSE;
    }

  return g_seekable_seek (base, offset, type, cancellable, error);
}

static gboolean
serio_tool_input_can_truncate (GSeekable *seekable)
{
  return FALSE;
}

static gboolean
serio_tool_input_truncate (GSeekable     *seekable,
                           goffset        offset,
                           GCancellable  *cancellable,
                           GError       **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, g_strerror (EINVAL));
  return FALSE;
}

static void
serio_tool_input_seekable_init (GSeekableIface *iface)
{
  iface->tell = serio_tool_input_tell;
  iface->can_seek = serio_tool_input_can_seek;
  iface->seek = serio_tool_input_seek;
  iface->can_truncate = serio_tool_input_can_truncate;
  iface->truncate_fn = serio_tool_input_truncate;
}

static void
serio_tool_input_finalize (GObject *object)
{
  SerioToolInput *self = SERIO_TOOL_INPUT (object);

  end_hashing (self);
  serio_tool_input_end_progress (self);
  g_free (self->display);
  g_clear_pointer (&self->hash, serio_checksum_free);

  G_OBJECT_CLASS (serio_tool_input_parent_class)->finalize (object);
}

static void
serio_tool_input_class_init (SerioToolInputClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  object_class->finalize = serio_tool_input_finalize;
  stream_class->read_fn = serio_tool_input_read;
}

static void
serio_tool_input_init (SerioToolInput *self)
{
  self->size = -1;
  self->hash = serio_checksum_new ();
}

/*
 * serio_tool_input_open:
 * @path: a file name in the file system's encoding, or "-" for the
 *   standard input
 * @flags: what to do with the bytes that pass
 *
 * Opens a file to stream it. A file larger than 64 MB shows the progress of
 * its reading while the standard error is a terminal, until the end of the
 * file, a read error, serio_tool_input_end_progress() or the stream's end:
 * a caller that stops before the end, or prints something while it reads,
 * ends the progress first. Errors opening the file are GIO's (whose
 * messages name the file); errors reading it are prefixed with its name,
 * but with %SERIO_TOOL_INPUT_BARE_ERRORS.
 */
SerioToolInput *
serio_tool_input_open (const char           *path,
                       SerioToolInputFlags   flags,
                       GError              **error)
{
  g_autoptr(GInputStream) base = NULL;
  SerioToolInput *self;
  goffset size;

  base = serio_tool_open_input (path, &size, error);
  if (base == NULL)
    return NULL;

  self = g_object_new (SERIO_TOOL_TYPE_INPUT, "base-stream", base, NULL);
  self->display = g_filename_display_name (path);
  self->size = size;
  self->hashing = (flags & SERIO_TOOL_INPUT_CHECKSUM) != 0;
  self->bare_errors = (flags & SERIO_TOOL_INPUT_BARE_ERRORS) != 0;
  self->progress = (flags & SERIO_TOOL_INPUT_NO_PROGRESS) == 0 && show_progress (size);
  if (self->progress)
    progress_show_reading (self->display, 0);

  return self;
}

/* The size of the file when it was opened, or -1 when it is not known. */
goffset
serio_tool_input_get_size (SerioToolInput *self)
{
  return self->size;
}

/* The serio checksum of the bytes read so far (of the whole file once the
 * end was read), with SERIO_TOOL_INPUT_CHECKSUM. */
guint32
serio_tool_input_get_checksum (SerioToolInput *self)
{
  end_hashing (self);
  return serio_checksum_get_value (self->hash);
}

/* Erases the progress line, if one is shown; it is not shown again. */
void
serio_tool_input_end_progress (SerioToolInput *self)
{
  if (self->progress)
    progress_clear ();
  self->progress = FALSE;
}

/*
 * serio_tool_open_reader:
 * @path: a file name, or "-" for the standard input
 * @flags: as for serio_tool_input_open()
 *
 * Opens a reader on the file, through a SerioToolInput (see
 * serio_tool_reader_get_input()). Nothing is read yet.
 */
SerioReader *
serio_tool_open_reader (const char           *path,
                        SerioToolInputFlags   flags,
                        GError              **error)
{
  g_autoptr(SerioToolInput) input = serio_tool_input_open (path, flags, error);

  if (input == NULL)
    return NULL;

  return serio_reader_new (G_INPUT_STREAM (input));
}

/* The input of a reader from serio_tool_open_reader(). */
SerioToolInput *
serio_tool_reader_get_input (SerioReader *reader)
{
  return SERIO_TOOL_INPUT (serio_reader_get_stream (reader));
}

/*
 * serio_tool_report_read_error:
 * @path: the file that a reader from serio_tool_open_reader() read
 * @error: the reader's error
 *
 * Prints the error: an invalid file as `FILE:LINE: message`, a read error
 * (whose message names the file) after the command's name.
 *
 * Returns: the exit status it calls for
 */
int
serio_tool_report_read_error (const char   *path,
                              const GError *error)
{
  if (error->domain == SERIO_ERROR)
    {
      serio_tool_report_parse_error (path, error);
      return SERIO_TOOL_EXIT_FAILURE;
    }

  serio_tool_print_error (error);
  return SERIO_TOOL_EXIT_ERROR;
}

/*
 * serio_tool_get_threads:
 *
 * The number of threads to work with: one per processor, capped by the
 * environment variable SERIO_THREADS as in the library.
 */
guint
serio_tool_get_threads (void)
{
  return _serio_threads_capped (0);
}

/* ------------------------------------------------------------------ */
/* Spools                                                             */
/* ------------------------------------------------------------------ */

/*
 * A spool holds its text as the first file_size bytes of its file, then
 * the bytes in memory: appends go to memory until they would take more
 * than memory_limit, when what memory holds moves to the end of the file.
 * The file is made the first time it is needed, and only written at
 * file_size: reads may leave its position anywhere.
 */
struct _SerioToolSpool
{
  GString *memory;        /* the bytes after those of the file */
  gsize    memory_limit;
  char    *tmp_template;  /* for g_file_open_tmp() */
  FILE    *file;          /* NULL until the memory first filled up */
  guint64  file_size;
};

static void
set_errno_error (GError **error,
                 int      errsv)
{
  g_set_error_literal (error, G_IO_ERROR, g_io_error_from_errno (errsv), g_strerror (errsv));
}

/*
 * serio_tool_spool_new_full:
 * @memory_limit: how many bytes the spool keeps in memory
 * @tmp_template: the name of the temporary file, as for g_file_open_tmp(),
 *   which names what it is for in the message of an error making it
 *   (“serio-diff-XXXXXX”)
 *
 * Makes an empty spool. Its temporary file goes where g_get_tmp_dir()
 * says ($TMPDIR, or /tmp), and is unlinked as soon as it is made, and so
 * goes away with the spool, or with the program.
 */
SerioToolSpool *
serio_tool_spool_new_full (gsize       memory_limit,
                           const char *tmp_template)
{
  SerioToolSpool *spool = g_new0 (SerioToolSpool, 1);

  g_assert (tmp_template != NULL);
  spool->memory = g_string_new (NULL);
  spool->memory_limit = memory_limit;
  spool->tmp_template = g_strdup (tmp_template);
  return spool;
}

/* A spool that keeps 256 KiB in memory. */
SerioToolSpool *
serio_tool_spool_new (const char *tmp_template)
{
  return serio_tool_spool_new_full (SPOOL_MEMORY, tmp_template);
}

void
serio_tool_spool_free (SerioToolSpool *spool)
{
  if (spool == NULL)
    return;

  if (spool->file != NULL)
    fclose (spool->file);
  g_string_free (spool->memory, TRUE);
  g_free (spool->tmp_template);
  g_free (spool);
}

/* The number of bytes appended since the spool was made or cleared. */
guint64
serio_tool_spool_get_size (SerioToolSpool *spool)
{
  return spool->file_size + spool->memory->len;
}

/* Empties the spool; its file, if it has one, is written over. */
void
serio_tool_spool_clear (SerioToolSpool *spool)
{
  spool->file_size = 0;
  g_string_truncate (spool->memory, 0);
}

static gboolean
open_file (SerioToolSpool  *spool,
           GError         **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *name = NULL;
  int fd;

  fd = g_file_open_tmp (spool->tmp_template, &name, &local_error);
  if (fd < 0)
    {
      /* GLib's message, which names the file, in GIO's domain. */
      g_set_error_literal (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                           local_error->message);
      return FALSE;
    }
  g_unlink (name);
  spool->file = fdopen (fd, "w+b");
  if (spool->file == NULL)
    {
      int errsv = errno;

      close (fd);
      set_errno_error (error, errsv);
      return FALSE;
    }

  return TRUE;
}

/* Writes @len bytes at the end of the text in the file. */
static gboolean
write_file (SerioToolSpool  *spool,
            const void      *data,
            gsize            len,
            GError         **error)
{
  if (len == 0)
    return TRUE;

  if (spool->file == NULL && !open_file (spool, error))
    return FALSE;

  if (fseeko (spool->file, (off_t) spool->file_size, SEEK_SET) != 0 ||
      fwrite (data, 1, len, spool->file) != len)
    {
      set_errno_error (error, errno);
      return FALSE;
    }
  spool->file_size += len;

  return TRUE;
}

/* Reads @len bytes of the file at @offset, which must be there. */
static gboolean
read_file (SerioToolSpool  *spool,
           guint64          offset,
           void            *buffer,
           gsize            len,
           GError         **error)
{
  if (fseeko (spool->file, (off_t) offset, SEEK_SET) != 0 ||
      fread (buffer, 1, len, spool->file) != len)
    {
      set_errno_error (error, ferror (spool->file) ? errno : EIO);
      return FALSE;
    }

  return TRUE;
}

/* Appends @len bytes of @data, or all of it up to a NUL when @len is -1. */
gboolean
serio_tool_spool_append (SerioToolSpool  *spool,
                         const char      *data,
                         gssize           len_or_nul,
                         GError         **error)
{
  gsize len = len_or_nul >= 0 ? (gsize) len_or_nul : strlen (data);

  if (spool->memory->len + len <= spool->memory_limit)
    {
      g_string_append_len (spool->memory, data, len);
      return TRUE;
    }

  if (!write_file (spool, spool->memory->str, spool->memory->len, error))
    return FALSE;
  g_string_truncate (spool->memory, 0);

  /* What does not fit in memory goes straight to the file. */
  if (len > spool->memory_limit)
    return write_file (spool, data, len, error);

  g_string_append_len (spool->memory, data, len);
  return TRUE;
}

gboolean
serio_tool_spool_append_printf (SerioToolSpool  *spool,
                                GError         **error,
                                const char      *format,
                                ...)
{
  g_autofree char *text = NULL;
  va_list args;
  int len;

  va_start (args, format);
  len = g_vasprintf (&text, format, args);
  va_end (args);

  return serio_tool_spool_append (spool, text, len, error);
}

/*
 * serio_tool_spool_read:
 * @offset: where to read from the start of the text
 *
 * Reads @len bytes of the text at @offset, which must be there (the
 * spool's size is at least @offset + @len).
 */
gboolean
serio_tool_spool_read (SerioToolSpool  *spool,
                       guint64          offset,
                       void            *buffer,
                       gsize            len,
                       GError         **error)
{
  char *out = buffer;

  g_return_val_if_fail (offset <= serio_tool_spool_get_size (spool) &&
                        len <= serio_tool_spool_get_size (spool) - offset, FALSE);

  if (offset < spool->file_size)
    {
      gsize n = (gsize) MIN ((guint64) len, spool->file_size - offset);

      if (!read_file (spool, offset, out, n, error))
        return FALSE;
      out += n;
      len -= n;
      offset += n;
    }

  if (len > 0)
    memcpy (out, spool->memory->str + (offset - spool->file_size), len);

  return TRUE;
}

/*
 * serio_tool_spool_copy:
 * @to: the spool to append to, which is not @from
 * @from: the spool to copy from
 *
 * Appends @len bytes of the text of @from at @offset, which must be there,
 * to @to.
 */
gboolean
serio_tool_spool_copy (SerioToolSpool  *to,
                       SerioToolSpool  *from,
                       guint64          offset,
                       guint64          len,
                       GError         **error)
{
  g_autofree char *chunk = NULL;

  g_return_val_if_fail (to != from, FALSE);

  if (len > 0)
    chunk = g_malloc ((gsize) MIN ((guint64) SPOOL_CHUNK, len));
  while (len > 0)
    {
      gsize n = (gsize) MIN ((guint64) SPOOL_CHUNK, len);

      if (!serio_tool_spool_read (from, offset, chunk, n, error) ||
          !serio_tool_spool_append (to, chunk, n, error))
        return FALSE;
      offset += n;
      len -= n;
    }

  return TRUE;
}

typedef struct
{
  gboolean            by_line;
  GString            *line;
  SerioToolSpoolFunc  func;
  gpointer            user_data;
} Replay;

static gboolean
replay_piece (Replay      *replay,
              const char  *data,
              gsize        len,
              GError     **error)
{
  const char *end = data + len;

  if (!replay->by_line)
    return replay->func (data, len, replay->user_data, error);

  while (data < end)
    {
      const char *nl = memchr (data, '\n', end - data);

      if (nl == NULL)
        {
          g_string_append_len (replay->line, data, end - data);
          break;
        }
      g_string_append_len (replay->line, data, nl + 1 - data);
      data = nl + 1;
      if (!replay->func (replay->line->str, replay->line->len, replay->user_data, error))
        return FALSE;
      g_string_truncate (replay->line, 0);
    }

  return TRUE;
}

/*
 * serio_tool_spool_replay:
 * @by_line: hand the text over line by line, each NUL-terminated and with
 *   its line feed (a last line without one last), instead of in pieces
 *
 * Hands what was appended to @func, from the start.
 */
gboolean
serio_tool_spool_replay (SerioToolSpool      *spool,
                         gboolean             by_line,
                         SerioToolSpoolFunc   func,
                         gpointer             user_data,
                         GError             **error)
{
  g_autoptr(GString) line = g_string_new (NULL);
  g_autofree char *chunk = NULL;
  Replay replay = { by_line, line, func, user_data };

  if (spool->file_size > 0)
    chunk = g_malloc (SPOOL_CHUNK);
  for (guint64 offset = 0; offset < spool->file_size; )
    {
      gsize n = (gsize) MIN ((guint64) SPOOL_CHUNK, spool->file_size - offset);

      if (!read_file (spool, offset, chunk, n, error) ||
          !replay_piece (&replay, chunk, n, error))
        return FALSE;
      offset += n;
    }

  if (!replay_piece (&replay, spool->memory->str, spool->memory->len, error))
    return FALSE;

  if (line->len > 0)
    return func (line->str, line->len, user_data, error);

  return TRUE;
}

/* A SerioToolSpoolFunc: writes the text to the standard output as it is. */
gboolean
serio_tool_spool_write_stdout (const char  *data,
                               gsize        len,
                               gpointer     user_data,
                               GError     **error)
{
  if (fwrite (data, 1, len, stdout) != len)
    {
      set_errno_error (error, errno);
      return FALSE;
    }

  return TRUE;
}

/* A SerioToolSpoolFunc for the lines of a replay by line: prints them with
 * g_print(), as text for the user in the locale's character set. */
gboolean
serio_tool_spool_print_line (const char  *data,
                             gsize        len,
                             gpointer     user_data,
                             GError     **error)
{
  g_print ("%s", data);
  return TRUE;
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
