/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-input.c: the input of the serio tool's commands: files and the
 * standard input, streamed through a SerioToolInput that counts, shows
 * progress on a terminal and hashes
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <gio/gunixinputstream.h>

#include "serio-tool.h"

/* Files above this size show their progress on a terminal. */
#define PROGRESS_THRESHOLD (G_GOFFSET_CONSTANT (64) * 1024 * 1024)

/* A file above this size (or of a size not known) is hashed by a thread of
 * its own while it is parsed, with at most these many pieces waiting. */
#define HASH_THREAD_THRESHOLD (4 * 1024 * 1024)
#define HASH_IN_FLIGHT 4

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

