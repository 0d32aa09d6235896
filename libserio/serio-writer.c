/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-writer.c: v1 text written to a GOutputStream, array by array
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-codec-private.h"
#include "serio-dtype-private.h"
#include "serio-error.h"
#include "serio-i18n-private.h"
#include "serio-memory-private.h"
#include "serio-save-private.h"
#include "serio-name-private.h"
#include "serio-workers-private.h"
#include "serio-writer.h"
#include "serio-writer-private.h"

/**
 * SerioWriter:
 *
 * Writes v1 text to a [class@Gio.OutputStream], one array after the
 * other, with a bounded buffer whatever the size of the arrays: a file far
 * larger than the memory can be written.
 *
 * An array is written whole, with [method@Serio.Writer.write_array] or
 * [method@Serio.Writer.write_bytes], or in pieces: declare its name and
 * its number of values with [method@Serio.Writer.begin_array], then give
 * the values in any number of calls to [method@Serio.Writer.add_values] or
 * [method@Serio.Writer.add_bytes]. The record ends by itself with its last
 * value. [method@Serio.Writer.close] (or [method@Serio.Writer.end],
 * which leaves the stream open) completes the text.
 *
 * The text is sealed unless the writer was made with
 * %SERIO_SAVE_FLAGS_PLAIN (see the “Sealed texts” section of [the
 * format](format.html)): the writer opens it with the record
 * `v1|serio.sealed|1|1` and closes it with `v1|serio.seal|3|…`, which holds
 * the number of records and an XXH3-64 hash of every byte before it,
 * computed as the bytes leave the buffer.
 *
 * For the same arrays, the output is byte for byte what
 * [method@Serio.Bundle.to_bytes] gives with the same #SerioSaveFlags,
 * however the values were split into calls. Names are stored as
 * [method@Serio.Bundle.append] stores them: every `|`, carriage return and
 * line feed becomes `_`. A name that is not valid UTF-8, and the names
 * `serio.sealed` and `serio.seal`, are programmer errors.
 *
 * ## Errors
 *
 * Giving more values than an array declared, beginning an array or
 * finishing the text while values are missing, or using the writer after
 * [method@Serio.Writer.end] fails with %G_IO_ERROR_INVALID_ARGUMENT (or
 * %G_IO_ERROR_CLOSED) and changes nothing: nothing of such a call reaches
 * the stream, and the writer can go on with a correct call.
 *
 * When the stream fails or the operation is cancelled while the writer
 * writes, the text in the stream is incomplete: that error is returned,
 * the writer is broken and every later call returns the same error.
 * [method@Serio.Writer.close] then closes the stream as cancelled, which a
 * stream from [method@Gio.File.replace] takes as the order to keep the
 * old file. A writer whose last reference is dropped before
 * [method@Serio.Writer.end] or [method@Serio.Writer.close] closes its
 * stream in the same way.
 */

/* The text is gathered in a buffer of this size before it is written. */
#define BUFFER_SIZE (1024 * 1024)
/* An in-memory writer's first buffer, grown from there. */
#define MEMORY_FIRST_SIZE 4096
/* Room kept beyond BUFFER_SIZE for one token and the writer's slack. */
#define BUFFER_RESERVE (SERIO_CODEC_TOKEN_MAX + 1 + SERIO_CODEC_WRITE_SLACK)
/* Values of a GBytes are copied to an aligned block of this many before
 * they are written. */
#define BYTES_CHUNK 512
/* With several threads, long runs of values are formatted in blocks of
 * this many values, one block per thread at a time. */
#define BLOCK_VALUES   16384

typedef enum
{
  STATE_OPEN,       /* arrays may be written */
  STATE_FINISHED,   /* the text is complete; the stream may be open */
  STATE_CLOSED,     /* the stream is closed */
  STATE_BROKEN,     /* the stream failed: the text is incomplete */
} WriterState;

struct _SerioWriter
{
  GObject        parent_instance;

  GOutputStream *stream;
  gboolean       sealed;
  SerioSave     *save;          /* from new_for_file: the file being replaced */

  char          *buffer;        /* cap bytes, allocated when constructed */
  gsize          cap;           /* BUFFER_SIZE + BUFFER_RESERVE for a stream */
  gsize          limit;         /* the buffer is written out (or hashed, in
                                 * memory) once it holds this much */
  gboolean       in_memory;     /* the text stays in the buffer, which grows */
  gsize          used;
  gsize          hashed;        /* buffer bytes before this are hashed */
  XXH3_state_t  *hash;          /* when sealed */
  guint64        n_records;     /* records written, the opening one included */

  gboolean       in_array;
  gboolean       first_value;   /* no comma before the next value */
  guint64        n_missing;     /* values the open array still needs */
  guint64        n_values;      /* the open array's count */
  SerioDtype     dtype;         /* the open array's type */
  char          *name;          /* the open array's name, for messages */
  gsize          name_cap;

  WriterState    state;
  GError        *failure;       /* when STATE_BROKEN */
  gboolean       keep_open;     /* do not close the stream on dispose */

  guint          threads;       /* as set; 0 for the default */
  SerioWorkers  *workers;       /* made on first use */

  /* serio_writer_write_records(): the stored names of a batch, one after
   * the other, and its records (SerioFormatLine), kept from call to call */
  GString       *batch_names;
  GArray        *batch_lines;

  guint64               written;   /* bytes given to the stream */
  SerioProgressCallback progress;
  gpointer              progress_data;
  GDestroyNotify        progress_notify;
};

G_DEFINE_FINAL_TYPE (SerioWriter, serio_writer, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_STREAM,
  PROP_SEALED,
  PROP_THREADS,
  N_PROPS
};


/* The number that picks a message's plural form: counts beyond what
 * ngettext() takes pick the form of the largest it does. */
static gulong
plural_of (guint64 n)
{
  return n > G_MAXULONG ? G_MAXULONG : (gulong) n;
}

static GParamSpec *properties[N_PROPS];

/* Closes the stream so that a file being replaced keeps its old contents. */
static void
abandon_stream (SerioWriter *self)
{
  g_autoptr(GCancellable) abandon = NULL;

  if (self->save != NULL)
    {
      _serio_save_abort (g_steal_pointer (&self->save));
      return;
    }

  abandon = g_cancellable_new ();
  g_cancellable_cancel (abandon);
  if (!g_output_stream_is_closed (self->stream))
    g_output_stream_close (self->stream, abandon, NULL);
}

static void
serio_writer_dispose (GObject *object)
{
  SerioWriter *self = (SerioWriter *) object;

  /* A file being replaced is only put in place by close (): a writer
   * dropped before it, even a finished one, leaves the old file. */
  if (self->stream != NULL && !self->keep_open &&
      (self->state == STATE_OPEN || self->state == STATE_BROKEN || self->save != NULL))
    {
      abandon_stream (self);
      self->state = STATE_CLOSED;
    }
  g_clear_object (&self->stream);

  G_OBJECT_CLASS (serio_writer_parent_class)->dispose (object);
}

static void
serio_writer_finalize (GObject *object)
{
  SerioWriter *self = (SerioWriter *) object;

  g_clear_pointer (&self->buffer, g_free);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->hash, XXH3_freeState);
  g_clear_error (&self->failure);
  g_clear_pointer (&self->workers, _serio_workers_free);
  if (self->batch_names != NULL)
    g_string_free (self->batch_names, TRUE);
  g_clear_pointer (&self->batch_lines, g_array_unref);
  if (self->progress_notify != NULL)
    self->progress_notify (self->progress_data);

  G_OBJECT_CLASS (serio_writer_parent_class)->finalize (object);
}

/* Set by _serio_writer_new_in_memory() around the g_object_new() of a
 * writer without a stream, which is otherwise a programmer error. */
static GPrivate constructing_in_memory;

static void
serio_writer_constructed (GObject *object)
{
  SerioWriter *self = (SerioWriter *) object;

  G_OBJECT_CLASS (serio_writer_parent_class)->constructed (object);

  /* A buffer of BUFFER_SIZE for a stream; in memory, one that starts
   * small and that the constructor sizes (a text of one short array
   * does not cost a megabyte). */
  self->in_memory = g_private_get (&constructing_in_memory) != NULL;
  self->cap = (self->in_memory ? MEMORY_FIRST_SIZE : BUFFER_SIZE) + BUFFER_RESERVE;
  self->limit = self->cap - BUFFER_RESERVE;
  self->buffer = g_malloc (self->cap);
  if (!self->in_memory)
    g_return_if_fail (G_IS_OUTPUT_STREAM (self->stream));

  if (self->sealed)
    {
      self->hash = XXH3_createState ();
      if (self->hash == NULL || XXH3_64bits_reset (self->hash) != XXH_OK)
        g_error ("%s: cannot set up an XXH3 hash state", G_STRLOC);

      memcpy (self->buffer, SERIO_SEAL_OPEN_RECORD, strlen (SERIO_SEAL_OPEN_RECORD));
      self->used = strlen (SERIO_SEAL_OPEN_RECORD);
      self->n_records = 1;
    }
}

static void
serio_writer_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SerioWriter *self = SERIO_WRITER (object);

  switch (prop_id)
    {
    case PROP_STREAM:
      g_value_set_object (value, self->stream);
      break;

    case PROP_SEALED:
      g_value_set_boolean (value, self->sealed);
      break;

    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
serio_writer_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SerioWriter *self = SERIO_WRITER (object);

  switch (prop_id)
    {
    case PROP_STREAM:
      self->stream = g_value_dup_object (value);
      break;

    case PROP_SEALED:
      self->sealed = g_value_get_boolean (value);
      break;

    case PROP_THREADS:
      serio_writer_set_threads (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
serio_writer_class_init (SerioWriterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = serio_writer_dispose;
  object_class->finalize = serio_writer_finalize;
  object_class->constructed = serio_writer_constructed;
  object_class->get_property = serio_writer_get_property;
  object_class->set_property = serio_writer_set_property;

  /**
   * SerioWriter:stream:
   *
   * The stream the text is written to.
   */
  properties[PROP_STREAM] =
    g_param_spec_object ("stream", NULL, NULL,
                         G_TYPE_OUTPUT_STREAM,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SerioWriter:sealed:
   *
   * Whether the text is sealed (the default) or plain v1.
   */
  properties[PROP_SEALED] =
    g_param_spec_boolean ("sealed", NULL, NULL,
                          TRUE,
                          (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SerioWriter:threads:
   *
   * The most threads the writer formats values with; 0 (the default)
   * means one per processor. The environment variable `SERIO_THREADS`
   * caps it. The text does not depend on it.
   */
  properties[PROP_THREADS] =
    g_param_spec_uint ("threads", NULL, NULL,
                       0, SERIO_MAX_THREADS, 0,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  _serio_i18n_init ();
}

static void
serio_writer_init (SerioWriter *self)
{
  self->sealed = TRUE;
  self->state = STATE_OPEN;
}

void
_serio_writer_keep_stream_open (SerioWriter *self)
{
  self->keep_open = TRUE;
}

SerioWriter *
_serio_writer_new_in_memory (SerioSaveFlags flags,
                             gsize          size_hint)
{
  SerioWriter *self;
  char *buffer;

  g_private_set (&constructing_in_memory, GINT_TO_POINTER (TRUE));
  self = g_object_new (SERIO_TYPE_WRITER, "sealed", (flags & SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);
  g_private_set (&constructing_in_memory, NULL);

  /* Room for the whole text at once, when its size is known: it is
   * then never moved. */
  if (size_hint > MEMORY_FIRST_SIZE && size_hint <= G_MAXSIZE - BUFFER_RESERVE)
    {
      self->cap = size_hint + BUFFER_RESERVE;
      buffer = _serio_alloc_large (self->cap);
      memcpy (buffer, self->buffer, self->used);
      g_free (self->buffer);
      self->buffer = buffer;
      self->limit = MIN (BUFFER_SIZE, self->cap - BUFFER_RESERVE);
    }

  return self;
}

char *
_serio_writer_steal_text (SerioWriter *self,
                          gsize       *len)
{
  char *text;

  g_return_val_if_fail (self->in_memory && self->state == STATE_FINISHED, NULL);

  /* BUFFER_RESERVE keeps room for the NUL. */
  self->buffer[self->used] = '\0';
  text = g_steal_pointer (&self->buffer);
  *len = self->used;

  /* Give back what the text did not need only when that is a lot (short
   * tokens): a block trimmed by a few percent is smaller than the next
   * call's, which keeps glibc's malloc from reusing it and costs fresh
   * pages on every call. */
  if (self->cap - self->used > self->used / 4)
    text = g_realloc (text, self->used + 1);
  self->used = 0;
  self->state = STATE_CLOSED;

  return text;
}

/**
 * serio_writer_set_threads:
 * @self: a #SerioWriter
 * @threads: the most threads to format values with, or 0 for one per
 *   processor
 *
 * Sets [property@Serio.Writer:threads]. Long runs of values given in one
 * call are then formatted by several threads at once; the text is the same
 * byte for byte. The environment variable `SERIO_THREADS`, when set to a
 * positive number, caps the threads whatever is set here.
 */
void
serio_writer_set_threads (SerioWriter *self,
                          guint        threads)
{
  g_return_if_fail (SERIO_IS_WRITER (self));
  g_return_if_fail (threads <= SERIO_MAX_THREADS);

  if (self->threads == threads)
    return;

  self->threads = threads;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_THREADS]);
}

/**
 * serio_writer_get_threads:
 * @self: a #SerioWriter
 *
 * Gets [property@Serio.Writer:threads] as set.
 *
 * Returns: the most threads, or 0 for one per processor
 */
guint
serio_writer_get_threads (SerioWriter *self)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), 0);

  return self->threads;
}

/**
 * serio_writer_new:
 * @stream: the stream to write to
 * @flags: how to write the text: %SERIO_SAVE_FLAGS_NONE for a sealed text,
 *   %SERIO_SAVE_FLAGS_PLAIN for plain v1
 *
 * Creates a writer of v1 text to @stream, sealed unless @flags holds
 * %SERIO_SAVE_FLAGS_PLAIN (the rule of every writing call, see
 * #SerioSaveFlags). A plain text is exactly what
 * [method@Serio.Bundle.to_bytes] gives with the same flags for the same
 * arrays; damage that leaves valid v1 (a changed digit, a lost line) goes
 * unnoticed in it, so write plain text only for a reader that needs it.
 * Nothing is written until the buffer fills or the text is ended.
 *
 * Returns: (transfer full): a new writer
 */
SerioWriter *
serio_writer_new (GOutputStream  *stream,
                  SerioSaveFlags  flags)
{
  g_return_val_if_fail (G_IS_OUTPUT_STREAM (stream), NULL);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);

  return g_object_new (SERIO_TYPE_WRITER, "stream", stream,
                       "sealed", (flags & SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);
}

/**
 * serio_writer_new_for_file:
 * @file: the file to write
 * @flags: how to write the text: %SERIO_SAVE_FLAGS_PLAIN for plain v1,
 *   %SERIO_SAVE_FLAGS_NONE for a sealed text
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates a writer that replaces @file as [method@Serio.Bundle.save_to_file]
 * does, for arrays that are not in a bundle: the text goes to a temporary
 * file in the same directory (an unnamed one where the system has them),
 * and [method@Serio.Writer.close] syncs it and puts it in place atomically,
 * keeping the mode and owner of the file it replaces. Until then @file is
 * left as it was: when a write fails, when the writer is cancelled, when
 * close fails, or when the last reference to the writer is dropped without
 * a successful close (even after [method@Serio.Writer.end]), the
 * temporary file is removed and @file keeps its old contents, or stays
 * absent. Errors name @file.
 *
 * Memory stays bounded whatever the size of the arrays, so this is the way
 * to save a model larger than the memory, or to save arrays that already
 * live elsewhere (NumPy arrays, tensors) without copying them into a
 * bundle first.
 *
 * Returns: (transfer full): a new writer, or %NULL with @error set when the
 *   temporary file cannot be created
 */
SerioWriter *
serio_writer_new_for_file (GFile           *file,
                           SerioSaveFlags   flags,
                           GCancellable    *cancellable,
                           GError         **error)
{
  g_autoptr(SerioSave) save = NULL;
  SerioWriter *self;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  save = _serio_save_begin (file, cancellable, error);
  if (save == NULL)
    return NULL;

  self = g_object_new (SERIO_TYPE_WRITER,
                       "stream", _serio_save_get_stream (save),
                       "sealed", (flags & SERIO_SAVE_FLAGS_PLAIN) == 0,
                       NULL);
  self->save = g_steal_pointer (&save);

  return self;
}

/**
 * serio_writer_get_stream:
 * @self: a #SerioWriter
 *
 * Gets the stream the writer writes to.
 *
 * Returns: (transfer none): the stream
 */
GOutputStream *
serio_writer_get_stream (SerioWriter *self)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), NULL);

  return self->stream;
}

/**
 * serio_writer_set_progress_callback:
 * @self: a #SerioWriter
 * @callback: (nullable) (scope notified) (closure user_data) (destroy notify):
 *   called as text goes to the stream, or %NULL for none
 * @user_data: the data to pass to @callback
 * @notify: (nullable): frees @user_data when the callback is replaced or
 *   the writer finalized
 *
 * Sets a callback that is told, in the thread that writes, how many bytes
 * of text the writer has given to its stream so far, each time a buffer
 * of text (a few megabytes) goes out: `done` is
 * [method@Serio.Writer.get_bytes_written] and `total` is 0, since a
 * writer does not know what will still be written. Use it to show that a
 * long write goes on; [method@Serio.Bundle.save_to_file] reports a save
 * against a known total.
 */
void
serio_writer_set_progress_callback (SerioWriter           *self,
                                    SerioProgressCallback  callback,
                                    gpointer               user_data,
                                    GDestroyNotify         notify)
{
  g_return_if_fail (SERIO_IS_WRITER (self));

  if (self->progress_notify != NULL)
    self->progress_notify (self->progress_data);
  self->progress = callback;
  self->progress_data = user_data;
  self->progress_notify = notify;
}

/**
 * serio_writer_get_bytes_written:
 * @self: a #SerioWriter
 *
 * Gets how many bytes of text the writer has given to its stream so far:
 * what is still in its buffer is not counted.
 *
 * Returns: the number of bytes written to the stream
 */
guint64
serio_writer_get_bytes_written (SerioWriter *self)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), 0);

  return self->written;
}

/**
 * serio_writer_get_sealed:
 * @self: a #SerioWriter
 *
 * Gets whether the writer writes a sealed text.
 *
 * Returns: %TRUE for a sealed text, %FALSE for plain v1
 */
gboolean
serio_writer_get_sealed (SerioWriter *self)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);

  return self->sealed;
}

/**
 * serio_writer_get_n_missing:
 * @self: a #SerioWriter
 *
 * Gets the number of values that the array begun with
 * [method@Serio.Writer.begin_array] still needs; 0 when no array is open.
 *
 * Returns: the number of values still to add
 */
guint64
serio_writer_get_n_missing (SerioWriter *self)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), 0);

  return self->in_array ? self->n_missing : 0;
}

/* Whether a call may go on; sets @error as it cannot. */
static gboolean
check_usable (SerioWriter   *self,
              GCancellable  *cancellable,
              GError       **error)
{
  switch (self->state)
    {
    case STATE_OPEN:
      return !g_cancellable_set_error_if_cancelled (cancellable, error);

    case STATE_BROKEN:
      g_propagate_error (error, g_error_copy (self->failure));
      return FALSE;

    case STATE_FINISHED:
    case STATE_CLOSED:
    default:
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CLOSED,
                           _("The text is already finished: nothing more can be written"));
      return FALSE;
    }
}

/* Hashes what the buffer holds and was not hashed yet. */
static void
hash_buffer (SerioWriter *self)
{
  if (self->hash != NULL && self->used > self->hashed)
    XXH3_64bits_update (self->hash, self->buffer + self->hashed, self->used - self->hashed);
  self->hashed = self->used;
}

/* Counts @len more bytes as written, and tells the progress callback. */
static void
report_written (SerioWriter *self,
                gsize        len)
{
  if (len == 0)
    return;
  self->written += len;
  if (self->progress != NULL)
    self->progress (self->written, 0, self->progress_data);
}

/* The stream failed (@local_error, taken): the text in it is incomplete,
 * and every later call fails the same way. */
static gboolean
break_with (SerioWriter  *self,
            GError       *local_error,
            GError      **error)
{
  self->state = STATE_BROKEN;
  self->failure = g_error_copy (local_error);
  g_propagate_error (error, local_error);
  return FALSE;
}

/* Writes @len bytes to the stream and counts them. */
static gboolean
write_out (SerioWriter   *self,
           const char    *data,
           gsize          len,
           GCancellable  *cancellable,
           GError       **error)
{
  GError *local_error = NULL;

  if (len > 0 &&
      !g_output_stream_write_all (self->stream, data, len, NULL, cancellable, &local_error))
    return break_with (self, local_error, error);

  report_written (self, len);
  return TRUE;
}

/* Makes room in memory for @len more bytes after those used, and the
 * reserve; sets the limit of the next bytes, at most BUFFER_SIZE on. */
static void
reserve (SerioWriter *self,
         gsize        len)
{
  gsize need;

  if (!g_size_checked_add (&need, self->used, len) ||
      !g_size_checked_add (&need, need, BUFFER_RESERVE))
    g_error ("%s: the text does not fit in memory", G_STRLOC);
  if (need > self->cap)
    {
      /* Geometric growth, by an eighth: the text of a bundle comes with
       * a bound on its size, which the buffer already has. */
      self->cap = MAX (need, self->cap + self->cap / 8);
      self->buffer = g_realloc (self->buffer, self->cap);
    }
  self->limit = MIN (self->used + BUFFER_SIZE, self->cap - BUFFER_RESERVE);
}

/* Writes out the buffer, hashing it on the way. A failure breaks the
 * writer. */
static gboolean
flush (SerioWriter   *self,
       GCancellable  *cancellable,
       GError       **error)
{
  hash_buffer (self);

  /* In memory, the text stays: the buffer makes room for the next
   * BUFFER_SIZE bytes, hashed when they are in (while in the cache). */
  if (self->in_memory)
    {
      gsize room = self->cap - MIN (self->cap, self->used + BUFFER_RESERVE);

      reserve (self, room > SERIO_CODEC_TOKEN_MAX ? 0 : BUFFER_SIZE);
      return TRUE;
    }

  if (!write_out (self, self->buffer, self->used, cancellable, error))
    return FALSE;

  self->used = 0;
  self->hashed = 0;
  return TRUE;
}

/* A byte of a name as the text stores it: every `|`, carriage return and
 * line feed is written as `_`. */
static inline char
stored_name_byte (char c)
{
  return c == '|' || c == '\r' || c == '\n' ? '_' : c;
}

/* Appends bytes, flushing as the buffer fills. */
static gboolean
put (SerioWriter   *self,
     const char    *data,
     gsize          len,
     gboolean       sanitize,
     GCancellable  *cancellable,
     GError       **error)
{
  while (len > 0)
    {
      gsize n = MIN (len, self->limit - MIN (self->used, self->limit));
      char *out = self->buffer + self->used;

      if (n == 0)
        {
          if (!flush (self, cancellable, error))
            return FALSE;
          continue;
        }

      memcpy (out, data, n);
      if (sanitize)
        {
          for (gsize i = 0; i < n; i++)
            out[i] = stored_name_byte (out[i]);
        }

      self->used += n;
      data += n;
      len -= n;
    }

  return TRUE;
}

/* Writes "|" @n "|" at the end of @out, as the codec writes counts:
 * returns its length. */
static gsize
format_count (char    out[24],
              guint64 n)
{
  char *p = out + 24;

  *--p = '|';
  do
    {
      *--p = (char) ('0' + n % 10);
      n /= 10;
    }
  while (n != 0);
  *--p = '|';

  return out + 24 - p;
}

/* Fails, changing nothing, while the open array misses values: before
 * another array begins, or (@at_end) before the text ends. */
static gboolean
check_array_complete (SerioWriter  *self,
                      gboolean      at_end,
                      GError      **error)
{
  g_autofree char *missing = NULL;
  gulong n;

  if (!self->in_array)
    return TRUE;

  missing = g_strdup_printf ("%" G_GUINT64_FORMAT, self->n_missing);
  n = plural_of (self->n_missing);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               at_end ?
               g_dngettext (GETTEXT_PACKAGE,
                            /* TRANSLATORS: the placeholder is a number of
                             * values */
                            "The text cannot be finished: its last array still misses %s value",
                            "The text cannot be finished: its last array still misses %s values", n) :
               g_dngettext (GETTEXT_PACKAGE,
                            /* TRANSLATORS: the placeholder is a number of
                             * values */
                            "The array begun before still misses %s value",
                            "The array begun before still misses %s values", n),
               missing);
  return FALSE;
}

/* Ends the open array's line once its last value is in. */
static void
end_array_if_complete (SerioWriter *self)
{
  if (self->in_array && self->n_missing == 0)
    {
      /* BUFFER_RESERVE keeps room for the line feed. */
      self->buffer[self->used++] = '\n';
      self->in_array = FALSE;
      self->n_records++;
    }
}

/* Begins an array whose name is valid UTF-8 and not a seal's. A bundle's
 * array (@of_bundle) has a name stored as it is written (sanitised when
 * appended) and values of its type, which are not checked again. */
static gboolean
begin_array (SerioWriter   *self,
             const char    *name,
             gsize          name_len,
             guint64        n_values,
             gboolean       of_bundle,
             GCancellable  *cancellable,
             GError       **error)
{
  char header[256];
  char count[24];
  gsize count_len = 0;

  if (!check_usable (self, cancellable, error) || !check_array_complete (self, FALSE, error))
    return FALSE;

  /* "v1|" name "|" count "|": straight into the buffer for a bundle's
   * array (the codec's header), else in one piece unless the name is
   * long. */
  if (of_bundle && name_len <= sizeof header - 3 - sizeof count)
    {
      gsize need = name_len + 3 + 2 + 20 + SERIO_CODEC_WRITE_SLACK;

      if (self->limit - MIN (self->used, self->limit) < need)
        {
          if (self->in_memory)
            reserve (self, need);
          else if (!flush (self, cancellable, error))
            return FALSE;
        }
      self->used = _serio_codec_write_header (self->buffer + self->used, name, name_len, n_values) -
                   self->buffer;
    }
  else if ((count_len = format_count (count, n_values)) + name_len + 3 <= sizeof header)
    {
      memcpy (header, "v1|", 3);
      if (of_bundle)
        memcpy (header + 3, name, name_len);
      else
        {
          for (gsize i = 0; i < name_len; i++)
            header[3 + i] = stored_name_byte (name[i]);
        }
      memcpy (header + 3 + name_len, count + sizeof count - count_len, count_len);
      if (!put (self, header, 3 + name_len + count_len, FALSE, cancellable, error))
        return FALSE;
    }
  else if (!put (self, "v1|", 3, FALSE, cancellable, error) ||
           !put (self, name, name_len, TRUE, cancellable, error) ||
           !put (self, count + sizeof count - count_len, count_len, FALSE, cancellable, error))
    return FALSE;

  self->in_array = TRUE;
  self->first_value = TRUE;
  self->n_missing = n_values;
  self->n_values = n_values;
  self->dtype = SERIO_DTYPE_FLOAT64;
  if (of_bundle)
    {
      /* Nothing is checked that needs the type or the name. */
      end_array_if_complete (self);
      return TRUE;
    }
  self->dtype = _serio_name_get_dtype (name, name_len, n_values);
  /* For messages; the room is reused from array to array. */
  if (name_len >= self->name_cap)
    {
      self->name_cap = MAX (name_len + 1, 2 * self->name_cap);
      self->name = g_realloc (self->name, self->name_cap);
    }
  memcpy (self->name, name, name_len);
  self->name[name_len] = '\0';
  end_array_if_complete (self);

  return TRUE;
}

/**
 * serio_writer_begin_array:
 * @self: a #SerioWriter
 * @name: the name of the array, valid UTF-8, neither `serio.sealed` nor
 *   `serio.seal`
 * @n_values: the number of values the array will have
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Begins an array of @n_values values, to be given with
 * [method@Serio.Writer.add_values] or [method@Serio.Writer.add_bytes] in
 * any number of calls. The record ends by itself when the last value is
 * in; an array of 0 values is complete at once.
 *
 * Every `|`, carriage return and line feed in @name is written as `_`.
 *
 * A @name with a type marker (`w@int8[3]`, see #SerioDtype) begins a typed
 * array: the values then given must fit its type, and one that does not
 * fails the call that gives it with %SERIO_ERROR_DOMAIN, naming the array
 * and the value's index, with nothing of that call written. See
 * [method@Serio.Writer.begin_typed_array] for typed data.
 *
 * Fails with %G_IO_ERROR_INVALID_ARGUMENT, writing nothing, if the array
 * begun before still misses values.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_begin_array (SerioWriter   *self,
                          const char    *name,
                          guint64        n_values,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (g_utf8_validate (name, -1, NULL), FALSE);
  g_return_val_if_fail (_serio_seal_name_kind (name, strlen (name)) == SERIO_NAME_ARRAY, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return begin_array (self, name, strlen (name), n_values, FALSE, cancellable, error);
}

/* Writes out a formatted block, hashing it on the way. */
static gboolean
write_block (SerioWriter             *self,
             const SerioFormatBlock  *block,
             GCancellable            *cancellable,
             GError                 **error)
{
  if (self->hash != NULL)
    XXH3_64bits_update (self->hash, block->out, block->len);

  if (self->in_memory)
    {
      /* After a flush, which hashed what the buffer held. */
      reserve (self, block->len);
      memcpy (self->buffer + self->used, block->out, block->len);
      self->used += block->len;
      self->hashed = self->used;
      reserve (self, 0);
      return TRUE;
    }

  return write_out (self, block->out, block->len, cancellable, error);
}

typedef struct
{
  SerioWriter   *self;
  GCancellable  *cancellable;
  GError       **error;
} BlockSink;

static gboolean
write_formatted_block (const SerioFormatBlock *block,
                       gpointer                user_data)
{
  BlockSink *sink = user_data;

  return write_block (sink->self, block, sink->cancellable, sink->error);
}

/* Formats the whole blocks of the @n_values elements of @dtype at
 * @elements with @n_threads threads, which convert and format the next
 * blocks while this one writes the last ones out in order. Returns the
 * number of values written, or G_MAXSIZE on an error. */
static gsize
put_elements_parallel (SerioWriter   *self,
                       gconstpointer  elements,
                       SerioDtype     dtype,
                       gsize          n_values,
                       guint          n_threads,
                       GCancellable  *cancellable,
                       GError       **error)
{
  BlockSink sink = { self, cancellable, error };
  gsize done;

  if (!flush (self, cancellable, error))
    return G_MAXSIZE;

  if (self->workers == NULL)
    self->workers = _serio_workers_new ();

  done = _serio_workers_format (self->workers, elements, dtype, n_values, BLOCK_VALUES,
                                n_threads, !self->first_value, write_formatted_block, &sink);
  if (self->state == STATE_BROKEN)
    return G_MAXSIZE;

  if (done > 0)
    self->first_value = FALSE;
  self->n_missing -= done;

  return done;
}

/* Elements that are not aligned float64 are converted to doubles on the
 * calling thread this many at a time. */
#define SERIAL_CHUNK 1024

/* Writes @n_values elements of @dtype at @elements (no alignment needed)
 * to the open array, which has room for them; a double holds each one
 * (see check_elements()). */
static gboolean
put_elements (SerioWriter   *self,
              gconstpointer  elements,
              SerioDtype     dtype,
              gsize          n_values,
              GCancellable  *cancellable,
              GError       **error)
{
  const guint8 *data = elements;
  gsize element = serio_dtype_get_size (dtype);
  gboolean in_place = _serio_elements_in_place (data, dtype);

  if (n_values >= 2 * BLOCK_VALUES)
    {
      guint n_threads = _serio_threads_effective (self->threads);

      if (n_threads > 1)
        {
          gsize done = put_elements_parallel (self, data, dtype, n_values, n_threads,
                                              cancellable, error);

          if (done == G_MAXSIZE)
            return FALSE;
          data += done * element;
          n_values -= done;
        }
    }

  while (n_values > 0)
    {
      gsize room = (self->limit - MIN (self->used, self->limit)) / (SERIO_CODEC_TOKEN_MAX + 1);
      gsize n = MIN (n_values, room);
      char *out = self->buffer + self->used;
      double chunk[SERIAL_CHUNK];
      const double *values = (const double *) (gconstpointer) data;
      gsize bad;

      if (n == 0)
        {
          if (!flush (self, cancellable, error))
            return FALSE;
          continue;
        }

      if (!in_place)
        {
          n = MIN (n, SERIAL_CHUNK);
          if (!_serio_dtype_to_doubles (dtype, data, n, chunk, &bad))
            g_assert_not_reached ();
          values = chunk;
        }

      out = _serio_codec_write_tokens (out, values, n, !self->first_value);
      self->first_value = FALSE;

      self->used = out - self->buffer;
      self->n_missing -= n;
      data += n * element;
      n_values -= n;
    }

  end_array_if_complete (self);
  return TRUE;
}

/* Writes @n_values values of the open array, which has room for them. */
static gboolean
put_values (SerioWriter   *self,
            const double  *values,
            gsize          n_values,
            GCancellable  *cancellable,
            GError       **error)
{
  return put_elements (self, values, SERIO_DTYPE_FLOAT64, n_values, cancellable, error);
}

/* Checks that @dtype holds the values given for the array @name, the
 * first of which is its value @first (0-based); sets a SERIO_ERROR_DOMAIN
 * error naming the array and the first that does not fit. */
static gboolean
check_values_fit (const char    *name,
                  SerioDtype     dtype,
                  const double  *values,
                  gsize          n_values,
                  guint64        first,
                  GError       **error)
{
  gsize bad;
  g_autofree char *reason = NULL;
  g_autofree char *position = NULL;
  char token[SERIO_CODEC_TOKEN_MAX + SERIO_CODEC_WRITE_SLACK + 1];

  if (G_LIKELY (dtype == SERIO_DTYPE_FLOAT64) ||
      !_serio_dtype_find_misfit (dtype, values, n_values, &bad))
    return TRUE;

  *_serio_codec_write_token (token, values[bad]) = '\0';
  reason = _serio_dtype_misfit_reason (dtype, values[bad]);
  position = g_strdup_printf ("%" G_GUINT64_FORMAT, first + bad + 1);
  g_set_error (error, SERIO_ERROR, SERIO_ERROR_DOMAIN,
               /* TRANSLATORS: an array's name, the 1-based index of one of
                * its values, the value's token, and the problem */
               _("Array “%s”, value %s “%s”: %s"),
               name, position, token, reason);
  return FALSE;
}

/* The values given next for the open array must fit its type; nothing of
 * a call whose values do not is written. */
static gboolean
check_typed (SerioWriter   *self,
             const double  *values,
             gsize          n_values,
             guint64        offset,
             GError       **error)
{
  return check_values_fit (self->name, self->dtype, values, n_values,
                           self->n_values - self->n_missing + offset, error);
}

static gboolean
check_room (SerioWriter  *self,
            gsize         n_values,
            GError      **error)
{
  if (!self->in_array)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No array is begun: values can only follow serio_writer_begin_array()"));
      return FALSE;
    }

  if (n_values > self->n_missing)
    {
      g_autofree char *given = g_strdup_printf ("%" G_GSIZE_FORMAT, n_values);
      g_autofree char *missing = g_strdup_printf ("%" G_GUINT64_FORMAT, self->n_missing);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: both placeholders are numbers
                                 * of values; the plural follows the second */
                                "Too many values: %s given, but the array needs only %s more",
                                "Too many values: %s given, but the array needs only %s more",
                                plural_of (self->n_missing)),
                   given, missing);
      return FALSE;
    }

  return TRUE;
}

/**
 * serio_writer_add_values:
 * @self: a #SerioWriter
 * @values: (array length=n_values): values of the array begun with
 *   [method@Serio.Writer.begin_array]
 * @n_values: the number of values; @values may be %NULL when it is 0
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Adds the next @n_values values to the open array. Every NaN is written
 * `nan` (and reads back as the default quiet NaN).
 *
 * Fails with %G_IO_ERROR_INVALID_ARGUMENT, writing nothing, when no array
 * is open or when @n_values exceeds what the array still needs
 * ([method@Serio.Writer.get_n_missing]).
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_add_values (SerioWriter   *self,
                         const double  *values,
                         gsize          n_values,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (values != NULL || n_values == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, cancellable, error) || !check_room (self, n_values, error) ||
      !check_typed (self, values, n_values, 0, error))
    return FALSE;

  return put_values (self, values, n_values, cancellable, error);
}

/* Fails with %G_IO_ERROR_INVALID_ARGUMENT unless @size bytes hold a whole
 * number of doubles. */
static gboolean
check_size_of_doubles (gsize    size,
                       GError **error)
{
  g_autofree char *taken = NULL;

  if (size % sizeof (double) == 0)
    return TRUE;

  taken = g_strdup_printf ("%" G_GSIZE_FORMAT, size);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               /* TRANSLATORS: the placeholder is a number of bytes */
               _("The values take %s bytes, which is not a multiple of 8"),
               taken);
  return FALSE;
}

/**
 * serio_writer_add_bytes:
 * @self: a #SerioWriter
 * @values: native-endian 64-bit floats; its size must be a multiple of 8
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Adds the doubles held in @values to the open array, like
 * [method@Serio.Writer.add_values].
 *
 * This is the fast path from bindings, with no conversion per value: in
 * Python, `writer.add_bytes(GLib.Bytes.new(chunk.tobytes()))` for a slice
 * of a NumPy float64 array; in GJS, `writer.add_bytes(new
 * GLib.Bytes(new Uint8Array(float64array.buffer)))`.
 *
 * A size that is not a multiple of 8 fails with
 * %G_IO_ERROR_INVALID_ARGUMENT, like too many values.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_add_bytes (SerioWriter   *self,
                        GBytes        *values,
                        GCancellable  *cancellable,
                        GError       **error)
{
  const guint8 *data;
  gsize size, n_values;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, cancellable, error))
    return FALSE;

  data = g_bytes_get_data (values, &size);
  if (!check_size_of_doubles (size, error))
    return FALSE;

  n_values = size / sizeof (double);
  if (!check_room (self, n_values, error))
    return FALSE;

  if ((guintptr) data % G_ALIGNOF (double) == 0)
    return check_typed (self, (const double *) (gconstpointer) data, n_values, 0, error) &&
           put_values (self, (const double *) (gconstpointer) data, n_values, cancellable, error);

  /* Unaligned typed values are checked in a first pass, so that nothing
   * is written when one does not fit. */
  for (gsize done = 0; self->dtype != SERIO_DTYPE_FLOAT64 && done < n_values;)
    {
      double chunk[BYTES_CHUNK];
      gsize n = MIN (n_values - done, BYTES_CHUNK);

      memcpy (chunk, data + done * sizeof (double), n * sizeof (double));
      if (!check_typed (self, chunk, n, done, error))
        return FALSE;
      done += n;
    }

  return put_elements (self, data, SERIO_DTYPE_FLOAT64, n_values, cancellable, error);
}

gboolean
_serio_writer_write_bundle_array (SerioWriter   *self,
                                  const char    *name,
                                  const double  *values,
                                  gsize          n_values,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  return begin_array (self, name, strlen (name), n_values, TRUE, cancellable, error) &&
         put_values (self, values, n_values, cancellable, error);
}

/**
 * serio_writer_write_array:
 * @self: a #SerioWriter
 * @name: the name of the array, valid UTF-8, neither `serio.sealed` nor
 *   `serio.seal`
 * @values: (array length=n_values): the values
 * @n_values: the number of values; @values may be %NULL when it is 0
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Writes a whole array: [method@Serio.Writer.begin_array] and
 * [method@Serio.Writer.add_values] in one call.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_write_array (SerioWriter   *self,
                          const char    *name,
                          const double  *values,
                          gsize          n_values,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (values != NULL || n_values == 0, FALSE);

  /* A typed array's values are checked before its record begins: nothing
   * is written when one does not fit. */
  if (self->state == STATE_OPEN && !self->in_array &&
      !check_values_fit (name, _serio_name_get_dtype (name, strlen (name), n_values),
                         values, n_values, 0, error))
    return FALSE;

  return serio_writer_begin_array (self, name, n_values, cancellable, error) &&
         put_values (self, values, n_values, cancellable, error);
}

/**
 * serio_writer_write_bytes:
 * @self: a #SerioWriter
 * @name: the name of the array, valid UTF-8, neither `serio.sealed` nor
 *   `serio.seal`
 * @values: native-endian 64-bit floats; its size must be a multiple of 8
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Writes a whole array from the doubles in @values, like
 * [method@Serio.Writer.write_array]; see [method@Serio.Writer.add_bytes]
 * for bindings.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_write_bytes (SerioWriter   *self,
                          const char    *name,
                          GBytes        *values,
                          GCancellable  *cancellable,
                          GError       **error)
{
  gsize size;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (values != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  size = g_bytes_get_size (values);
  if (!check_size_of_doubles (size, error))
    return FALSE;

  if (!serio_writer_begin_array (self, name, size / sizeof (double), cancellable, error))
    return FALSE;

  /* An array of no values is complete once begun. */
  return size == 0 || serio_writer_add_bytes (self, values, cancellable, error);
}

/* ------------------------------------------------------------------ */
/* Element types                                                      */
/* ------------------------------------------------------------------ */

/**
 * serio_writer_begin_typed_array:
 * @self: a #SerioWriter
 * @base_name: the base name of the array, valid UTF-8
 * @dtype: the element type
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for a
 *   0-d scalar
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Begins an array of @dtype and @shape, like
 * [method@Serio.Writer.begin_array] with the stored name that
 * [func@Serio.name_compose] gives (`w@float32[2x3]`), so that every reader
 * sees its type and shape. Its values are then given with
 * [method@Serio.Writer.add_typed_bytes] as elements of @dtype, or with
 * [method@Serio.Writer.add_values] as doubles that fit it.
 *
 * Fails with %G_IO_ERROR_INVALID_ARGUMENT, writing nothing, when the
 * array begun before still misses values, when the shape has more values
 * than 64 bits count, or for a float64 array whose @base_name ends in a
 * type marker.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_begin_typed_array (SerioWriter    *self,
                                const char     *base_name,
                                SerioDtype      dtype,
                                const guint64  *shape,
                                guint           n_dims,
                                GCancellable   *cancellable,
                                GError        **error)
{
  g_autofree char *name = NULL;
  guint64 n_values;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (base_name != NULL, FALSE);
  g_return_val_if_fail (g_utf8_validate (base_name, -1, NULL), FALSE);
  g_return_val_if_fail ((guint) dtype <= SERIO_DTYPE_LAST, FALSE);
  g_return_val_if_fail (shape != NULL || n_dims == 0, FALSE);
  g_return_val_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  name = _serio_typed_name (base_name, dtype, shape, n_dims, &n_values, error);
  if (name == NULL)
    return FALSE;

  return serio_writer_begin_array (self, name, n_values, cancellable, error);
}

/* Typed elements are checked through doubles this many at a time. */
#define TYPED_CHUNK (128 * 1024)

/* Checks the @n_values elements of @dtype at @data that a double may not
 * hold (int64, uint64, bool); sets the error of the first. */
static gboolean
check_elements (const char     *name,
                SerioDtype      dtype,
                const guint8   *data,
                gsize           n_values,
                GError        **error)
{
  g_autofree double *chunk = NULL;
  gsize element = serio_dtype_get_size (dtype);

  if (dtype != SERIO_DTYPE_INT64 && dtype != SERIO_DTYPE_UINT64 && dtype != SERIO_DTYPE_BOOL)
    return TRUE;

  chunk = g_new (double, MIN (MAX (n_values, 1), TYPED_CHUNK));
  for (gsize done = 0; done < n_values;)
    {
      gsize n = MIN (n_values - done, TYPED_CHUNK);
      gsize bad;

      if (!_serio_dtype_to_doubles (dtype, data + done * element, n, chunk, &bad))
        {
          _serio_dtype_set_element_error (error, dtype, data, done + bad);
          /* TRANSLATORS: an array's name, before an error about one of
           * its elements */
          g_prefix_error (error, _("Array “%s”: "), name);
          return FALSE;
        }
      done += n;
    }

  return TRUE;
}

/**
 * serio_writer_add_typed_bytes:
 * @self: a #SerioWriter
 * @data: the next elements of the open array, of the type of its name
 *   (given to [method@Serio.Writer.begin_typed_array], or as a marker to
 *   [method@Serio.Writer.begin_array]), in host byte order (see
 *   #SerioDtype)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Adds the elements held in @data to the open array, like
 * [method@Serio.Writer.add_bytes] for a float64 array. For a float32
 * array, @data holds floats; in GJS, `writer.add_typed_bytes(new
 * GLib.Bytes(new Uint8Array(float32array.buffer)), null)`.
 *
 * Fails with %G_IO_ERROR_INVALID_ARGUMENT, writing nothing, when no array
 * is open, when the size of @data is not a multiple of the size of an
 * element or is more elements than the array still needs; with
 * %SERIO_ERROR_DOMAIN, writing nothing, for an int64 or uint64 element
 * that a 64-bit float cannot hold, or a bool byte other than 0 and 1.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_add_typed_bytes (SerioWriter    *self,
                              GBytes         *data,
                              GCancellable   *cancellable,
                              GError        **error)
{
  const guint8 *bytes;
  gsize size, element, n_values;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, cancellable, error))
    return FALSE;
  if (!self->in_array)
    return check_room (self, 0, error);
  if (self->dtype == SERIO_DTYPE_FLOAT64)
    return serio_writer_add_bytes (self, data, cancellable, error);

  bytes = g_bytes_get_data (data, &size);
  element = serio_dtype_get_size (self->dtype);
  if (size % element != 0)
    {
      g_autofree char *taken = g_strdup_printf ("%" G_GSIZE_FORMAT, size);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* TRANSLATORS: a number of bytes and a type name such
                    * as float16 */
                   _("The data takes %s bytes, which is not a whole number of elements of type %s"),
                   taken, serio_dtype_to_string (self->dtype));
      return FALSE;
    }

  n_values = size / element;
  if (!check_room (self, n_values, error) ||
      !check_elements (self->name, self->dtype, bytes, n_values, error))
    return FALSE;

  return put_elements (self, bytes, self->dtype, n_values, cancellable, error);
}

/**
 * serio_writer_write_typed:
 * @self: a #SerioWriter
 * @base_name: the base name of the array, valid UTF-8
 * @dtype: the element type
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for a
 *   0-d scalar
 * @data: all the elements of the array (see #SerioDtype)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Writes a whole typed array: [method@Serio.Writer.begin_typed_array] and
 * [method@Serio.Writer.add_typed_bytes] in one call. Nothing is written
 * when @data does not match the shape or holds an element that cannot be
 * written (see [method@Serio.Writer.add_typed_bytes]).
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_write_typed (SerioWriter    *self,
                          const char     *base_name,
                          SerioDtype      dtype,
                          const guint64  *shape,
                          guint           n_dims,
                          GBytes         *data,
                          GCancellable   *cancellable,
                          GError        **error)
{
  g_autofree char *name = NULL;
  guint64 n_values;
  const guint8 *bytes;
  gsize size;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (base_name != NULL, FALSE);
  g_return_val_if_fail (g_utf8_validate (base_name, -1, NULL), FALSE);
  g_return_val_if_fail ((guint) dtype <= SERIO_DTYPE_LAST, FALSE);
  g_return_val_if_fail (shape != NULL || n_dims == 0, FALSE);
  g_return_val_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, cancellable, error))
    return FALSE;

  name = _serio_typed_name (base_name, dtype, shape, n_dims, &n_values, error);
  if (name == NULL)
    return FALSE;

  bytes = g_bytes_get_data (data, &size);
  if (!_serio_typed_size_matches (dtype, n_values, size, error))
    return FALSE;

  if (!check_elements (name, dtype, bytes, (gsize) n_values, error))
    return FALSE;

  if (!serio_writer_begin_array (self, name, n_values, cancellable, error))
    return FALSE;

  /* Every check is done: the elements go in as they are (an array of no
   * values is complete once begun, and takes none). */
  return put_elements (self, bytes, dtype, (gsize) n_values, cancellable, error);
}

/* ------------------------------------------------------------------ */
/* Many records at once                                               */
/* ------------------------------------------------------------------ */

/* Checks the @n_records records of a batch as serio_writer_write_typed()
 * checks one, and stores their names and elements in the writer's batch
 * (batch_lines) for writing; on the first that fails, sets its error. */
static gboolean
check_records (SerioWriter            *self,
               const SerioRecordInfo  *records,
               const gconstpointer    *data,
               gsize                   n_records,
               GError                **error)
{
  SerioFormatLine *lines;

  if (self->batch_names == NULL)
    {
      self->batch_names = g_string_new (NULL);
      self->batch_lines = g_array_new (FALSE, FALSE, sizeof (SerioFormatLine));
    }
  g_string_truncate (self->batch_names, 0);
  g_array_set_size (self->batch_lines, n_records);
  lines = (SerioFormatLine *) (gpointer) self->batch_lines->data;

  for (gsize i = 0; i < n_records; i++)
    {
      const SerioRecordInfo *record = &records[i];
      g_autofree char *name = NULL;
      guint64 n_values;
      gsize name_at = self->batch_names->len, name_len;

      g_return_val_if_fail (record->name != NULL, FALSE);
      g_return_val_if_fail (g_utf8_validate (record->name, -1, NULL), FALSE);
      g_return_val_if_fail ((guint) record->dtype <= SERIO_DTYPE_LAST, FALSE);
      g_return_val_if_fail (record->dims != NULL || record->n_dims == 0, FALSE);
      g_return_val_if_fail (record->n_dims <= SERIO_SHAPE_MAX_DIMS, FALSE);
      g_return_val_if_fail (record->n_values <= G_MAXSIZE / serio_dtype_get_size (record->dtype),
                            FALSE);
      g_return_val_if_fail (data[i] != NULL || record->n_values == 0, FALSE);

      name = _serio_typed_name (record->name, record->dtype, record->dims, record->n_dims,
                                &n_values, error);
      if (name == NULL)
        {
          /* The shape's error does not say whose shape it is. */
          if (!_serio_shape_count (record->dims, record->n_dims, &n_values))
            g_prefix_error (error, _("Array “%s”: "), record->name);
          return FALSE;
        }
      name_len = strlen (name);
      g_return_val_if_fail (_serio_seal_name_kind (name, name_len) == SERIO_NAME_ARRAY, FALSE);

      if (n_values != record->n_values)
        {
          g_autofree char *given = g_strdup_printf ("%" G_GUINT64_FORMAT, record->n_values);
          g_autofree char *holds = g_strdup_printf ("%" G_GUINT64_FORMAT, n_values);

          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       g_dngettext (GETTEXT_PACKAGE,
                                    /* TRANSLATORS: an array's name and two
                                     * numbers of values; the plural follows
                                     * the second */
                                    "Array “%s”: %s values given, but its shape holds %s value",
                                    "Array “%s”: %s values given, but its shape holds %s values",
                                    plural_of (n_values)),
                       name, given, holds);
          return FALSE;
        }
      if (!check_elements (name, record->dtype, data[i], (gsize) n_values, error))
        return FALSE;

      /* Stored as begin_array() writes a name given to it. */
      for (gsize k = 0; k < name_len; k++)
        g_string_append_c (self->batch_names, stored_name_byte (name[k]));
      lines[i] = (SerioFormatLine) {
        GSIZE_TO_POINTER (name_at), name_len, data[i], record->dtype, (gsize) n_values
      };
    }

  /* The names are all in: they stay where they are. */
  for (gsize i = 0; i < n_records; i++)
    lines[i].name = self->batch_names->str + GPOINTER_TO_SIZE (lines[i].name);

  return TRUE;
}

/* Writes one record of a batch. */
static gboolean
put_line (SerioWriter            *self,
          const SerioFormatLine  *line,
          GCancellable           *cancellable,
          GError                **error)
{
  /* Like a bundle's array: the name is as it is written, and the
   * elements are checked. */
  if (!begin_array (self, line->name, line->name_len, line->n_values, TRUE, cancellable, error))
    return FALSE;
  if (!self->in_array)
    return TRUE;

  return put_elements (self, line->elements, line->dtype, line->n_values, cancellable, error);
}

/* Writes the @n_lines short records at @lines, formatted whole by
 * @n_threads threads while this one writes them out in order. */
static gboolean
put_lines_parallel (SerioWriter            *self,
                    const SerioFormatLine  *lines,
                    gsize                   n_lines,
                    guint                   n_threads,
                    GCancellable           *cancellable,
                    GError                **error)
{
  BlockSink sink = { self, cancellable, error };
  gsize done;

  if (!check_usable (self, cancellable, error) || !flush (self, cancellable, error))
    return FALSE;

  if (self->workers == NULL)
    self->workers = _serio_workers_new ();

  done = _serio_workers_format_lines (self->workers, lines, n_lines, BLOCK_VALUES, n_threads,
                                      write_formatted_block, &sink);
  self->n_records += done;
  if (self->state == STATE_BROKEN)
    return FALSE;

  g_assert (done == n_lines);
  return TRUE;
}

/**
 * serio_writer_write_records: (skip)
 * @self: a #SerioWriter
 * @records: (array length=n_records): the arrays: each its base name,
 *   dimensions, type and number of elements (the @offset of each is not
 *   used)
 * @data: (array length=n_records): the elements of each array, in host
 *   byte order (see #SerioDtype), with no alignment needed
 * @n_records: the number of arrays
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Writes @n_records whole typed arrays, in order, with the text that
 * [method@Serio.Writer.write_typed] gives for each: the counterpart of
 * [method@Serio.Reader.read_records], for a model of many small arrays.
 * With more than one thread, short arrays are formatted together on every
 * thread, as one long array is; one at a time, each would be formatted on
 * the calling thread alone.
 *
 * Every array is checked before any is written: the call fails, writing
 * nothing, with the error that [method@Serio.Writer.write_typed] gives for
 * the first that it would reject (a shape with too many values, a float64
 * base name that ends in a type marker, an int64, uint64 or bool element
 * that cannot be written), or with %G_IO_ERROR_INVALID_ARGUMENT when an
 * array's number of elements is not that of its shape. It fails the same
 * way, writing nothing, while the array begun before still misses values.
 * Once the arrays are being written, a failure of the stream or
 * @cancellable breaks the writer (as a failure of the stream does in every
 * call): its text never goes on after part of a batch.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_write_records (SerioWriter            *self,
                            const SerioRecordInfo  *records,
                            const gconstpointer    *data,
                            gsize                   n_records,
                            GCancellable           *cancellable,
                            GError                **error)
{
  const SerioFormatLine *lines;
  guint n_threads;
  GError *local_error = NULL;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (records != NULL || n_records == 0, FALSE);
  g_return_val_if_fail (data != NULL || n_records == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, cancellable, error) || !check_array_complete (self, FALSE, error) ||
      !check_records (self, records, data, n_records, error))
    return FALSE;
  lines = (const SerioFormatLine *) (gconstpointer) self->batch_lines->data;

  n_threads = _serio_threads_effective (self->threads);
  for (gsize i = 0; i < n_records;)
    {
      gsize end = i, values = 0;
      gboolean ok = TRUE;

      /* A run of short records (which put_elements() would format on
       * the calling thread), on the threads when they hold enough values
       * to share. */
      while (end < n_records && lines[end].n_values < 2 * BLOCK_VALUES)
        values += lines[end++].n_values;
      if (n_threads > 1 && values >= 2 * BLOCK_VALUES)
        {
          ok = put_lines_parallel (self, lines + i, end - i, n_threads, cancellable, &local_error);
          i = end;
        }
      else
        {
          /* One at a time: these short records, or a long one, which
           * put_elements() formats on the threads. */
          for (end = MAX (end, i + 1); ok && i < end; i++)
            ok = put_line (self, &lines[i], cancellable, &local_error);
        }

      if (!ok)
        {
          /* Cancelled, or the stream failed, with part of the batch
           * written: no more can follow it. */
          if (self->state != STATE_BROKEN)
            return break_with (self, g_steal_pointer (&local_error), error);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }

  return TRUE;
}

/**
 * serio_writer_end:
 * @self: a #SerioWriter
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Ends the text (it was called `serio_writer_finish()` before 1.0, a name
 * that read like the end of an asynchronous call): writes what the buffer
 * holds and, for a sealed text, the closing seal record, then flushes the
 * stream. The stream stays open, so that more data may follow the text in
 * it; use [method@Serio.Writer.close] to close it too.
 *
 * Fails with %G_IO_ERROR_INVALID_ARGUMENT, writing nothing, while the
 * array begun last misses values. Calling it again after it succeeded
 * does nothing.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_writer_end (SerioWriter   *self,
                     GCancellable  *cancellable,
                     GError       **error)
{
  GError *local_error = NULL;

  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state == STATE_FINISHED)
    return TRUE;
  if (!check_usable (self, cancellable, error))
    return FALSE;

  if (!check_array_complete (self, TRUE, error))
    return FALSE;

  if (self->sealed)
    {
      if (self->in_memory)
        reserve (self, SERIO_SEAL_CLOSE_MAX);
      else if (self->used + SERIO_SEAL_CLOSE_MAX > self->cap &&
               !flush (self, cancellable, error))
        return FALSE;

      hash_buffer (self);
      self->used = _serio_seal_write_close (self->buffer + self->used, self->n_records,
                                            XXH3_64bits_digest (self->hash)) - self->buffer;
      /* The seal record is not part of what it hashes. */
      self->hashed = self->used;
    }

  if (!flush (self, cancellable, error))
    return FALSE;

  if (!self->in_memory && !g_output_stream_flush (self->stream, cancellable, &local_error))
    return break_with (self, local_error, error);

  self->state = STATE_FINISHED;
  return TRUE;
}

/**
 * serio_writer_close:
 * @self: a #SerioWriter
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Completes the text like [method@Serio.Writer.end], then closes the
 * stream.
 *
 * If the text cannot be completed (an array misses values, the stream
 * failed, @cancellable was cancelled), the stream is closed as cancelled
 * (a stream from [method@Gio.File.replace] then keeps the old file) and
 * the error is returned. The stream is closed in every case.
 *
 * For a writer from [ctor@Serio.Writer.new_for_file], closing is what puts
 * the new file in place; when it fails, the old file is kept.
 *
 * Returns: %TRUE if the whole text was written and the stream closed (the
 *   file replaced), %FALSE with @error set
 */
gboolean
serio_writer_close (SerioWriter   *self,
                    GCancellable  *cancellable,
                    GError       **error)
{
  g_return_val_if_fail (SERIO_IS_WRITER (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->state == STATE_CLOSED)
    return TRUE;

  if (!serio_writer_end (self, cancellable, error))
    {
      abandon_stream (self);
      self->state = STATE_CLOSED;
      return FALSE;
    }

  self->state = STATE_CLOSED;
  if (self->save != NULL)
    return _serio_save_commit (g_steal_pointer (&self->save), cancellable, error);

  return g_output_stream_close (self->stream, cancellable, error);
}
