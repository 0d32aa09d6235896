/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-reader.c: v1 text read from bytes or a GInputStream, array by
 * array
 *
 * Copyright 2026 The libserio authors
 *
 * The one reader of v1 text: bundles load through it (serio-bundle-io.c)
 * from memory, streams and files. Over bytes, the window is the whole
 * text and nothing is read or moved; over a stream, the reader keeps a
 * window of the stream in a buffer. Either way it parses with the pieces
 * of the codec (serio-codec.c). Lines may be far longer than the buffer:
 * the values of a record are parsed up to the last comma of the window,
 * and the token cut by the window's end is moved to the front before the
 * next read. Only the start of a record (its name and count) must fit in
 * the buffer, which grows for it if needed.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-codec-private.h"
#include "serio-dtype-private.h"
#include "serio-error.h"
#include "serio-i18n-private.h"
#include "serio-reader.h"
#include "serio-reader-private.h"
#include "serio-name-private.h"
#include "serio-sniff-private.h"
#include "serio-workers-private.h"

/**
 * SerioReader:
 *
 * Reads v1 text from a [class@Gio.InputStream], one array after the
 * other, with a bounded buffer: a file far larger than the memory can be
 * read, and an array far larger than the buffer can be read in pieces.
 *
 * [method@Serio.Reader.next] moves to the next array and gives its name
 * ([method@Serio.Reader.get_name]) and number of values
 * ([method@Serio.Reader.get_n_values]); [method@Serio.Reader.read_values]
 * or [method@Serio.Reader.read_bytes] then hand out its values in pieces
 * of any size. An array that is not wanted is skipped with
 * [method@Serio.Reader.skip_array] (or by calling
 * [method@Serio.Reader.next] again): its values are not parsed, the reader
 * only looks for the end of its line, so that finding one array in a large
 * file costs about the time to read the bytes.
 *
 * ```c
 * g_autoptr(SerioReader) reader = serio_reader_new (stream);
 *
 * while (serio_reader_next (reader, NULL, &error))
 *   {
 *     double chunk[4096];
 *     gsize n;
 *
 *     do
 *       {
 *         if (!serio_reader_read_values (reader, chunk, G_N_ELEMENTS (chunk), &n, NULL, &error))
 *           break;
 *         use_values (serio_reader_get_name (reader), chunk, n);
 *       }
 *     while (n > 0);
 *   }
 * if (error != NULL)
 *   … the text is not valid: drop everything that was read …
 * ```
 *
 * An array's element type comes from its name
 * ([method@Serio.Reader.get_dtype], see #SerioDtype):
 * [method@Serio.Reader.read_values] gives the values of every type as
 * doubles, [method@Serio.Reader.read_typed] and
 * [method@Serio.Reader.read_typed_bytes] as elements of the type. Every
 * value read is checked against the type.
 *
 * The reader is as strict as [ctor@Serio.Bundle.new_from_bytes] and fails
 * with the same [error@Serio.Error] codes and messages, naming the same
 * lines and value indexes. A sealed text is verified against its seal,
 * and its two seal records are not arrays: the reader does not yield them.
 *
 * ## Values are provisional
 *
 * A stream is read front to back, while some problems are only known at
 * its end: a text cut short (even at a line boundary, for a sealed text),
 * a seal that does not match, or a bad line further on. Everything the
 * reader hands out is therefore provisional until
 * [method@Serio.Reader.next] returned %FALSE without an error
 * ([method@Serio.Reader.get_finished] is then %TRUE): only then was the
 * whole text read and found valid. When the text is not valid, the error
 * is the one that [ctor@Serio.Bundle.new_from_bytes] would give for the whole
 * text, so the reader reads on to the end of the stream before it reports
 * a problem, to see whether the text is cut short (which comes first).
 *
 * A skipped array is not validated in a plain text: a damaged value in it
 * goes unnoticed. In a sealed text its bytes are still hashed, so damage
 * anywhere is found by the seal.
 *
 * The name and count of an array come from the stream: do not allocate
 * room for all the values of an array from its count alone, which a
 * hostile text can make as large as it likes; read them in pieces, or
 * grow the room as they come.
 */

/* A window of several megabytes: each fill of it is a round of parallel
 * parsing, whose start and end (waking the threads, the last piece on
 * one thread) cost a few percent of a 1 MiB round. */
#define DEFAULT_BUFFER_SIZE (4 * 1024 * 1024)
/* The stream is read in pieces of up to a megabyte, each reported to the
 * progress callback; a file's, until the window is full. A file's buffer
 * is two halves: while threads parse the window in one, the stream is
 * read on into the other (read_during_parse()), in pieces of
 * READ_AHEAD_CHUNK, a piece for each window of values the threads parsed,
 * after SPARE_ROOM bytes kept for the end of the window that is not
 * parsed yet (a token cut by the buffer's end), which then goes before
 * them. */
#define READ_CHUNK          (1024 * 1024)
#define READ_AHEAD_CHUNK    (128 * 1024)
#define SPARE_ROOM          4096
/* While threads parse a stream's window, the window ahead is looked
 * through for the line feed that ends the current line, this much for
 * each window of values they parsed, so that the next segment is found
 * without a pause. */
#define SCAN_AHEAD_CHUNK    (128 * 1024)
/* A text in memory (the window is the whole text) is parsed by threads in
 * segments of at most this much of a line, which are not looked through
 * for the line's end: the threads find it (unseen_segment()). */
#define BYTES_SEGMENT       (16 * 1024 * 1024)
/* On one thread, a line is parsed in segments of at most this much, each
 * looked through for a line feed just before it is parsed; the parse of
 * a segment has the CPU fetch the next one (SERIO_CODEC_PREFETCH), so
 * that the look reads the cache. A look through a whole window or a
 * BYTES_SEGMENT first is a pass of its own over memory, which the parse
 * then reads again: in memory and not in the cache, 2x10^7 values took
 * 1.8 times as long. The start of each line is looked through as far. */
#define SERIAL_SEGMENT      SERIO_CODEC_PREFETCH
#define MIN_BUFFER_SIZE     64

/* A token longer than the buffer is invalid (a valid one has at most 23
 * bytes); these many bytes of it are kept to show in the message. */
#define LONG_TOKEN_SHOWN    64
/* A long token is parsed from a digest that keeps every digit run of up
 * to this many digits and shortens longer runs to this many (their last
 * digit kept): the parser takes the same decision on both, since runs of
 * 20 digits and more are out of range in every position. */
#define LONG_TOKEN_RUN      24
/* The parser decides within the first 52 bytes of a digest: a sign, a
 * run, "p", a sign and a run, then the byte that must end the token. */
#define LONG_TOKEN_DIGEST   100

/* With several threads, a segment of values this long or longer is split
 * between them. */
#define PARALLEL_MIN_BYTES  (128 * 1024)
/* … and when this many values or more are wanted. */
#define PARALLEL_MIN_VALUES 8192

/* With several threads, the short records whose whole lines follow one
 * that is read whole in the window are parsed with it, on the threads,
 * up to this many bytes of values (and this many records) at a time:
 * half a file's window, since each round ends with one thread on its last
 * group of lines while the other waits (10,000 float32 records of 750
 * values loaded in about 10% less time than with 512 KiB rounds). */
#define AHEAD_BYTES         (1024 * 1024)
#define AHEAD_MAX_LINES     4096

/* read_bytes() starts with room for this many values. */
#define FIRST_BYTES_ROOM    (64 * 1024)

/* Typed values parsed on the calling thread go through doubles, this
 * many at a time: few enough for the doubles to stay in the cache
 * between the parse and the conversion. */
#define SCRATCH_VALUES      8192

/* The dims of a typed name that parse_ahead() keeps for next_record():
 * a model's tensors have up to four. */
#define AHEAD_DIMS          4

/* What parse_ahead() read of the start of a line it parsed (see
 * ahead_header()), with the offsets from the line's start. A line of
 * more than AHEAD_DIMS dims is not kept (valid is FALSE). */
typedef struct
{
  gboolean    valid;
  guint32     name_at;
  guint32     name_len;
  guint32     values_at;
  guint64     count;
  SerioDtype  dtype;
  gboolean    shape_valid;
  guint       n_dims;
  gsize       base_len;
  guint64     dims[AHEAD_DIMS];
} AheadHeader;

typedef enum
{
  STATE_LINE,       /* at the start of a line, no array */
  STATE_VALUES,     /* in the values of the current array */
  STATE_DONE,       /* the current array was read; at the start of a line */
  STATE_END,        /* the whole text was read and is valid */
  STATE_FAILED,
} ReaderState;

struct _SerioReader
{
  GObject         parent_instance;

  GInputStream   *stream;      /* %NULL when reading @bytes */
  GBytes         *bytes;       /* a text in memory, which is the buffer */
  gsize           buffer_size;

  char           *buf;
  gsize           cap;
  gsize           pos;          /* the window is buf[pos, end) */
  gsize           end;
  gboolean        eof;
  gboolean        fill_window;  /* a file: read until the window is full, and
                                 * on into the spare during a parse */
  /* A file's other half of the buffer: the stream was read on into
   * spare[spare_start, spare_end) while threads parsed; spare_eof when
   * it ended there. When the window from pos holds no line feed
   * (scanned == end), neither does spare[spare_start, spare_scanned). */
  char           *spare;
  gsize           spare_cap;
  gsize           spare_start;
  gsize           spare_end;
  gsize           spare_scanned;
  gboolean        spare_eof;
  GError         *read_error;   /* a read during a parse that failed, which
                                 * the next fill() reports */
  guint8          last_byte;    /* the last byte read from the stream */
  gulong          line;         /* the line at pos, 1-based */

  /* The segment of values ahead, valid while seg_valid: buf[pos, seg_end)
   * ends at a comma or, when seg_eol, at the line's end, whose line feed
   * is at seg_nl. When seg_unseen, it was not looked through: a line
   * feed may lie in it (see unseen_segment()). */
  gboolean        seg_valid;
  gboolean        seg_eol;
  gboolean        seg_unseen;
  gsize           seg_end;
  gsize           seg_nl;
  /* The window from pos holds no line feed before buf[scanned], if
   * scanned > pos: it was looked through ahead. */
  gsize           scanned;

  /* Hashing: bytes before buf[hashed] went into @hashing, the state fed
   * now (the prelude's until the first record, then the seal's), or
   * nowhere when it is %NULL. */
  XXH3_state_t   *prelude;
  XXH3_state_t   *hashing;
  gsize           hashed;
  gboolean        seen_record;
  SerioSealCheck  seal;

  ReaderState     state;
  GError         *failure;

  /* The current record */
  char           *name;         /* name_cap bytes, reused from record to record */
  gsize           name_cap;
  SerioNameKind   kind;
  SerioDtype      dtype;        /* float64 for every record but a typed array */
  guint64         count;
  gboolean        count_exact;
  char           *declared;     /* the count as shown in messages, when it is
                                 * not exact (too many digits), else NULL */
  guint64         n_tokens;     /* tokens parsed so far */
  gboolean        field_start;  /* no token of the record looked at yet */
  gboolean        line_done;    /* its last token was parsed */
  gulong          record_line;
  /* … and, when shape_valid, its shape as its name gives it (see
   * record_shape()) */
  gboolean        shape_valid;
  gsize           base_len;
  guint           n_dims;
  guint64         dims[SERIO_SHAPE_MAX_DIMS];

  /* Parallel parsing */
  guint           threads;      /* as set; 0 for the default */
  guint           n_threads;    /* the threads parsing: 0 until known */
  SerioWorkers   *workers;      /* made on first use */
  double         *scratch;      /* SCRATCH_VALUES, made on first use */

  /* Short records parsed ahead (see take_whole_line()): ahead[i] is the
   * record on line ahead_lines[i], its doubles in ahead_values; those
   * before next_ahead were taken or passed. */
  SerioParseLine *ahead;
  gulong         *ahead_lines;
  /* … and the offset in the text (see buf_offset) of the line feed that
   * ends each one's line, so that next_record() does not look through
   * those lines again (see ensure_line_start()) */
  guint64        *ahead_nl;
  /* … and what it read of each one's start, for next_record() to take */
  AheadHeader    *ahead_headers;
  gsize           n_ahead;
  gsize           next_ahead;
  double         *ahead_values;
  gsize           ahead_values_size;
  /* The line feeds of the next round, looked for while the threads parse
   * this one (see find_round_line_feeds()): every line feed from
   * round_nl_from to round_nl_upto is in round_nl[0, n_round_nl), in
   * order, those before next_round_nl passed; each as an offset in the
   * text (see buf_offset), which the window's moves leave as it is.
   * round_nl_limit is where the look stops. */
  guint64        *round_nl;
  gsize           n_round_nl;
  gsize           next_round_nl;
  guint64         round_nl_from;
  guint64         round_nl_upto;
  guint64         round_nl_limit;
  /* The offset of buf[0] in the text the reader reads (0 for bytes) */
  guint64         buf_offset;

  /* What the last serio_reader_read_records() read: the base names,
   * each ended by a NUL, and the dimensions, one record after the other */
  GString        *batch_names;
  GArray         *batch_dims;

  /* Progress */
  guint64               bytes_read;
  guint64               size;   /* of the stream from where it was, or 0 */
  SerioProgressCallback progress;
  gpointer              progress_data;
  GDestroyNotify        progress_notify;
};

G_DEFINE_FINAL_TYPE (SerioReader, serio_reader, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_STREAM,
  PROP_BYTES,
  PROP_BUFFER_SIZE,
  PROP_THREADS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
serio_reader_finalize (GObject *object)
{
  SerioReader *self = (SerioReader *) object;

  g_clear_object (&self->stream);
  if (self->bytes != NULL)
    self->buf = NULL;     /* the bytes' data */
  g_clear_pointer (&self->bytes, g_bytes_unref);
  g_clear_pointer (&self->buf, g_free);
  g_clear_pointer (&self->spare, g_free);
  g_clear_pointer (&self->prelude, XXH3_freeState);
  _serio_seal_check_clear (&self->seal);
  g_clear_error (&self->failure);
  g_clear_error (&self->read_error);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->declared, g_free);
  g_clear_pointer (&self->workers, _serio_workers_free);
  g_clear_pointer (&self->scratch, g_free);
  g_clear_pointer (&self->ahead, g_free);
  g_clear_pointer (&self->ahead_lines, g_free);
  g_clear_pointer (&self->ahead_nl, g_free);
  g_clear_pointer (&self->ahead_headers, g_free);
  g_clear_pointer (&self->round_nl, g_free);
  g_clear_pointer (&self->ahead_values, g_free);
  if (self->batch_names != NULL)
    g_string_free (self->batch_names, TRUE);
  g_clear_pointer (&self->batch_dims, g_array_unref);
  if (self->progress_notify != NULL)
    self->progress_notify (self->progress_data);

  G_OBJECT_CLASS (serio_reader_parent_class)->finalize (object);
}

static void
serio_reader_constructed (GObject *object)
{
  SerioReader *self = (SerioReader *) object;

  G_OBJECT_CLASS (serio_reader_parent_class)->constructed (object);

  /* A reader of bytes reads nothing: its text is all in the window. */
  if (self->bytes != NULL)
    {
      static const char no_text[1] = "";
      gsize size;

      if (self->stream != NULL)
        {
          g_critical ("%s: a SerioReader reads bytes or a stream, not both: the stream is ignored",
                      G_STRFUNC);
          g_clear_object (&self->stream);
        }

      self->buf = (char *) g_bytes_get_data (self->bytes, &size);
      /* Empty bytes may have no data at all: the window is then empty
       * but somewhere (the reader only reads it). */
      if (self->buf == NULL)
        self->buf = (char *) no_text;
      self->cap = self->end = size;
      self->eof = TRUE;
      self->last_byte = size > 0 ? (guint8) self->buf[size - 1] : 0;
      self->bytes_read = self->size = size;
      return;
    }

  g_return_if_fail (G_IS_INPUT_STREAM (self->stream));

  /* A stream that can seek (a file, memory) has the bytes now; a pipe or
   * a socket may not, and is read once per fill for what it has. A
   * file's buffer is two halves, the second made when a parse on threads
   * first reads on into it. */
  self->fill_window = G_IS_SEEKABLE (self->stream) && g_seekable_can_seek (G_SEEKABLE (self->stream));
  self->cap = self->fill_window ? MAX (self->buffer_size / 2, MIN_BUFFER_SIZE) : self->buffer_size;
  self->buf = g_malloc (self->cap);

  /* A file's size is what the reader will read of it: the total of its
   * progress, and a bound on the values any array can have. */
  if (G_IS_FILE_INPUT_STREAM (self->stream))
    {
      g_autoptr(GFileInfo) info =
        g_file_input_stream_query_info (G_FILE_INPUT_STREAM (self->stream),
                                        G_FILE_ATTRIBUTE_STANDARD_SIZE, NULL, NULL);

      if (info != NULL && g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_STANDARD_SIZE))
        {
          goffset size = g_file_info_get_size (info);
          goffset at = G_IS_SEEKABLE (self->stream) ? g_seekable_tell (G_SEEKABLE (self->stream)) : 0;

          if (size > at && at >= 0)
            self->size = (guint64) (size - at);
        }
    }
}

static void
serio_reader_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SerioReader *self = SERIO_READER (object);

  switch (prop_id)
    {
    case PROP_STREAM:
      g_value_set_object (value, self->stream);
      break;

    case PROP_BYTES:
      g_value_set_boxed (value, self->bytes);
      break;

    case PROP_BUFFER_SIZE:
      g_value_set_uint (value, self->buffer_size);
      break;

    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
serio_reader_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SerioReader *self = SERIO_READER (object);

  switch (prop_id)
    {
    case PROP_STREAM:
      self->stream = g_value_dup_object (value);
      break;

    case PROP_BYTES:
      self->bytes = g_value_dup_boxed (value);
      break;

    case PROP_BUFFER_SIZE:
      self->buffer_size = g_value_get_uint (value);
      break;

    case PROP_THREADS:
      serio_reader_set_threads (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
serio_reader_class_init (SerioReaderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = serio_reader_finalize;
  object_class->constructed = serio_reader_constructed;
  object_class->get_property = serio_reader_get_property;
  object_class->set_property = serio_reader_set_property;

  /**
   * SerioReader:stream:
   *
   * The stream the text is read from, or %NULL for a reader of
   * [property@Serio.Reader:bytes].
   */
  properties[PROP_STREAM] =
    g_param_spec_object ("stream", NULL, NULL,
                         G_TYPE_INPUT_STREAM,
                         (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SerioReader:bytes:
   *
   * The text, when it is in memory rather than in a stream
   * ([ctor@Serio.Reader.new_for_bytes]); %NULL otherwise.
   */
  properties[PROP_BYTES] =
    g_param_spec_boxed ("bytes", NULL, NULL,
                        G_TYPE_BYTES,
                        (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SerioReader:buffer-size:
   *
   * The size of the reader's buffer in bytes, 4 MiB by default. A stream
   * that can seek (a file) has it in two halves: one is read into a
   * megabyte at a time until it is full, and while threads parse it, the
   * stream is read on into the other, in smaller pieces; each read is
   * reported to the progress callback. Another stream (a pipe, a socket)
   * is read into the whole buffer once per fill, for what it has. Lines
   * longer than the buffer
   * are read in pieces; the buffer only grows to hold the start of a
   * record (its name and count) that does not fit.
   */
  properties[PROP_BUFFER_SIZE] =
    g_param_spec_uint ("buffer-size", NULL, NULL,
                       MIN_BUFFER_SIZE, G_MAXUINT, DEFAULT_BUFFER_SIZE,
                       (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SerioReader:threads:
   *
   * The most threads the reader parses values with; 0 (the default) means
   * one per processor. The environment variable `SERIO_THREADS` caps it.
   * A long array is split between them; an array read whole is parsed
   * together with the short arrays after it that the buffer holds whole,
   * so that a file of many small arrays is read on every thread too.
   * Values and errors do not depend on it: an error names the first bad
   * value in the order of the text.
   */
  properties[PROP_THREADS] =
    g_param_spec_uint ("threads", NULL, NULL,
                       0, SERIO_MAX_THREADS, 0,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  _serio_i18n_init ();
}

static void
serio_reader_init (SerioReader *self)
{
  self->buffer_size = DEFAULT_BUFFER_SIZE;
  self->line = 1;
  self->state = STATE_LINE;

  /* Until the first record tells whether the text is sealed, what comes
   * before it (blank lines) is hashed as a sealed text would be. */
  self->prelude = XXH3_createState ();
  if (self->prelude == NULL || XXH3_64bits_reset (self->prelude) != XXH_OK)
    g_error ("%s: cannot set up an XXH3 hash state", G_STRLOC);
  self->hashing = self->prelude;
}

/**
 * serio_reader_new:
 * @stream: the stream to read
 *
 * Creates a reader of the v1 text (sealed or plain) in @stream. Nothing is
 * read until [method@Serio.Reader.next] is called.
 *
 * Returns: (transfer full): a new reader
 */
SerioReader *
serio_reader_new (GInputStream *stream)
{
  g_return_val_if_fail (G_IS_INPUT_STREAM (stream), NULL);

  return g_object_new (SERIO_TYPE_READER, "stream", stream, NULL);
}

/**
 * serio_reader_new_for_bytes:
 * @bytes: v1 text (sealed or plain); it needs no terminating NUL
 *
 * Creates a reader of the v1 text in @bytes, which it reads in place:
 * nothing is copied, and the values of an array are parsed straight into
 * the caller's buffer. This is what [ctor@Serio.Bundle.new_from_bytes]
 * uses; use it to take only some arrays of a text in memory, or to read
 * them in their own type ([method@Serio.Reader.read_typed]) without a
 * bundle in between.
 *
 * The reader holds a reference to @bytes until it is finalized.
 * [method@Serio.Reader.get_size] and [method@Serio.Reader.get_bytes_read]
 * are the size of @bytes from the start, and a progress callback is never
 * called: there is nothing to read.
 *
 * Returns: (transfer full): a new reader
 */
SerioReader *
serio_reader_new_for_bytes (GBytes *bytes)
{
  g_return_val_if_fail (bytes != NULL, NULL);

  return g_object_new (SERIO_TYPE_READER, "bytes", bytes, NULL);
}

/**
 * serio_reader_new_for_file:
 * @file: the file to read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Opens @file for reading and creates a reader of the v1 text (sealed or
 * plain) in it, as [ctor@Serio.Reader.new] does for a stream. The file is
 * closed when the reader is finalized.
 *
 * Failing to open the file gives a %G_IO_ERROR (such as
 * %G_IO_ERROR_NOT_FOUND); the errors of the text come later, from the
 * calls that read it, and do not name the file (unlike those of
 * [ctor@Serio.Bundle.new_from_file]). The reader knows the size of the
 * file ([method@Serio.Reader.get_size]), which its progress callback
 * reports as the total.
 *
 * Returns: (transfer full): a new reader, or %NULL with @error set
 */
SerioReader *
serio_reader_new_for_file (GFile         *file,
                           GCancellable  *cancellable,
                           GError       **error)
{
  g_autoptr(GFileInputStream) stream = NULL;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  stream = g_file_read (file, cancellable, error);
  if (stream == NULL)
    return NULL;

  return serio_reader_new (G_INPUT_STREAM (stream));
}

/**
 * serio_reader_set_progress_callback:
 * @self: a #SerioReader
 * @callback: (nullable) (scope notified) (closure user_data) (destroy notify):
 *   called as text is read from the stream, or %NULL for none
 * @user_data: the data to pass to @callback
 * @notify: (nullable): frees @user_data when the callback is replaced or
 *   the reader finalized
 *
 * Sets a callback that is told, in the thread that reads, how many bytes
 * of text the reader has taken from its stream: after each read of up
 * to a buffer ([property@Serio.Reader:buffer-size]), `done` is
 * [method@Serio.Reader.get_bytes_read] and `total` is
 * [method@Serio.Reader.get_size] (0 when the size is not known). A text
 * read to its end reports `done` equal to `total` last.
 */
void
serio_reader_set_progress_callback (SerioReader           *self,
                                    SerioProgressCallback  callback,
                                    gpointer               user_data,
                                    GDestroyNotify         notify)
{
  g_return_if_fail (SERIO_IS_READER (self));

  if (self->progress_notify != NULL)
    self->progress_notify (self->progress_data);
  self->progress = callback;
  self->progress_data = user_data;
  self->progress_notify = notify;
}

/**
 * serio_reader_get_bytes_read:
 * @self: a #SerioReader
 *
 * Gets how many bytes the reader has taken from its stream so far (it
 * reads ahead of the values it gave, a buffer at a time).
 *
 * Returns: the number of bytes read
 */
guint64
serio_reader_get_bytes_read (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->bytes_read;
}

/**
 * serio_reader_get_size:
 * @self: a #SerioReader
 *
 * Gets how many bytes the stream holds from where the reader started:
 * known for a #GFileInputStream of a regular file (such as the one of
 * [ctor@Serio.Reader.new_for_file]), 0 when not known.
 *
 * Returns: the size of the text in bytes, or 0
 */
guint64
serio_reader_get_size (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->size;
}

/**
 * serio_reader_get_stream:
 * @self: a #SerioReader
 *
 * Gets the stream the reader reads.
 *
 * Returns: (transfer none) (nullable): the stream, or %NULL for a reader
 *   of bytes ([ctor@Serio.Reader.new_for_bytes])
 */
GInputStream *
serio_reader_get_stream (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), NULL);

  return self->stream;
}

/**
 * serio_reader_get_buffer_size:
 * @self: a #SerioReader
 *
 * Gets the size of the reader's buffer, see [property@Serio.Reader:buffer-size].
 *
 * Returns: the size in bytes
 */
gsize
serio_reader_get_buffer_size (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->buffer_size;
}

/**
 * serio_reader_set_threads:
 * @self: a #SerioReader
 * @threads: the most threads to parse values with, or 0 for one per
 *   processor
 *
 * Sets [property@Serio.Reader:threads]. Long runs of values read in one
 * call are then parsed by several threads at once. The environment
 * variable `SERIO_THREADS`, when set to a positive number, caps the
 * threads whatever is set here.
 */
void
serio_reader_set_threads (SerioReader *self,
                          guint        threads)
{
  g_return_if_fail (SERIO_IS_READER (self));
  g_return_if_fail (threads <= SERIO_MAX_THREADS);

  if (self->threads == threads)
    return;

  self->threads = threads;
  self->n_threads = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_THREADS]);
}

/**
 * serio_reader_get_threads:
 * @self: a #SerioReader
 *
 * Gets [property@Serio.Reader:threads] as set.
 *
 * Returns: the most threads, or 0 for one per processor
 */
guint
serio_reader_get_threads (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->threads;
}

/* ------------------------------------------------------------------ */
/* The window                                                         */
/* ------------------------------------------------------------------ */

/* Feeds the bytes before buf[@upto] that were not hashed yet. */
static void
hash_upto (SerioReader *self,
           gsize        upto)
{
  if (self->hashing != NULL && upto > self->hashed)
    XXH3_64bits_update (self->hashing, self->buf + self->hashed, upto - self->hashed);
  self->hashed = MAX (self->hashed, upto);
}

/* Reads once, up to @max bytes, to @into, whose end it moves on, or sets
 * *@eof at the end of the stream. Returns the bytes read, 0 at the end of
 * the stream, -1 on an error. */
static gssize
read_some (SerioReader   *self,
           char          *into,
           gsize         *into_end,
           gboolean      *eof,
           gsize          max,
           GCancellable  *cancellable,
           GError       **error)
{
  gssize n = g_input_stream_read (self->stream, into + *into_end, max, cancellable, error);

  if (n < 0)
    return -1;
  if (n == 0)
    {
      *eof = TRUE;
      return 0;
    }

  *into_end += n;
  self->last_byte = into[*into_end - 1];
  self->bytes_read += n;
  if (self->progress != NULL)
    self->progress (self->bytes_read, self->size >= self->bytes_read ? self->size : 0,
                    self->progress_data);
  return n;
}

/* The threads the reader parses with, found once per reader: finding
 * the processors can take a system call or a read of /sys, which would
 * cost more than a short record's parse. */
static guint
effective_threads (SerioReader *self)
{
  if (self->n_threads == 0)
    self->n_threads = _serio_threads_effective (self->threads);
  return self->n_threads;
}

/* Looks through the window for a line feed from where it was looked
 * through before (or pos) up to buf[@limit], and notes how far it holds
 * none. Returns the line feed, or %NULL. */
static const char *
scan_line_feed (SerioReader *self,
                gsize        limit)
{
  gsize from = MAX (self->pos, self->scanned);
  const char *nl;

  if (from >= limit)
    return NULL;
  nl = memchr (self->buf + from, '\n', limit - from);
  self->scanned = nl != NULL ? (gsize) (nl - self->buf) : limit;
  return nl;
}

/* What the sink of a parse on the threads needs. */
typedef struct
{
  SerioReader  *self;
  GCancellable *cancellable;
} ParseSink;

/* The SerioTextSink of a parse on the threads, on the calling thread
 * while the threads parse on: hashes the text parsed (which follows the
 * bytes hashed so far), and reads a piece of a file after the window,
 * which the threads do not look at (the window's end bounds their
 * loads). A read that fails is reported by the next fill(), after the
 * values before it. */
static void
read_during_parse (const char *text,
                   gsize       len,
                   gpointer    user_data)
{
  ParseSink *sink = user_data;
  SerioReader *self = sink->self;

  if (self->hashing != NULL)
    {
      g_assert (text == self->buf + self->hashed);
      XXH3_64bits_update (self->hashing, text, len);
      self->hashed += len;
    }

  if (self->fill_window && !self->eof && !self->spare_eof && self->read_error == NULL)
    {
      if (self->spare == NULL)
        {
          self->spare_cap = MAX (self->buffer_size / 2, MIN_BUFFER_SIZE);
          self->spare = g_malloc (self->spare_cap);
          self->spare_start = MIN (SPARE_ROOM, self->spare_cap / 2);
          self->spare_end = self->spare_scanned = self->spare_start;
        }
      if (self->spare_end < self->spare_cap)
        read_some (self, self->spare, &self->spare_end, &self->spare_eof,
                   MIN (self->spare_cap - self->spare_end, READ_AHEAD_CHUNK), sink->cancellable,
                   &self->read_error);
    }

  /* Stops at a line feed: the next look starts there and finds it. A
   * window that holds none is followed by the bytes read on. In memory,
   * the threads parse segments not looked through (unseen_segment()),
   * or ones that end at the line's end: there is nothing to look for. */
  if (self->bytes == NULL)
    scan_line_feed (self, MIN (self->end, MAX (self->pos, self->scanned) + SCAN_AHEAD_CHUNK));
  if (self->spare != NULL && self->scanned >= self->end && self->spare_scanned < self->spare_end)
    {
      gsize limit = MIN (self->spare_end, self->spare_scanned + SCAN_AHEAD_CHUNK);
      const char *nl = memchr (self->spare + self->spare_scanned, '\n',
                               limit - self->spare_scanned);

      self->spare_scanned = nl != NULL ? (gsize) (nl - self->spare) : limit;
    }
}

/* Looks through up to @budget bytes of the text after round_nl_upto,
 * up to round_nl_limit, for the line feeds of the next round of short
 * lines (see parse_ahead()): in the window, then in what was read on
 * into the spare after it, which follows it in the text. */
static void
find_round_line_feeds (SerioReader *self,
                       gsize        budget)
{
  guint64 window_end = self->buf_offset + self->end;
  guint64 stop = MIN (self->round_nl_limit, self->round_nl_upto + budget);

  while (self->round_nl_upto < stop && self->n_round_nl < AHEAD_MAX_LINES)
    {
      const char *from, *to, *nl;

      if (self->round_nl_upto < window_end)
        {
          from = self->buf + (self->round_nl_upto - self->buf_offset);
          to = self->buf + (MIN (stop, window_end) - self->buf_offset);
        }
      else if (self->spare != NULL &&
               self->round_nl_upto - window_end < self->spare_end - self->spare_start)
        {
          from = self->spare + self->spare_start + (self->round_nl_upto - window_end);
          to = from + MIN (stop - self->round_nl_upto,
                           (guint64) (self->spare + self->spare_end - from));
        }
      else
        {
          break;
        }

      nl = memchr (from, '\n', to - from);
      if (nl == NULL)
        {
          self->round_nl_upto += to - from;
          continue;
        }
      self->round_nl[self->n_round_nl++] = self->round_nl_upto + (nl - from);
      self->round_nl_upto += nl - from + 1;
    }
}

/* The first line feed in buf[@p, @end) (the window's end at most), as
 * memchr() finds it, from those find_round_line_feeds() found where
 * they cover @p. */
static const char *
round_line_feed (SerioReader *self,
                 const char  *p,
                 const char  *end)
{
  guint64 at = self->buf_offset + (p - self->buf);

  if (at >= self->round_nl_from && at <= self->round_nl_upto)
    {
      /* The lines are looked up in order; any other order is served too. */
      if (self->next_round_nl > 0 && self->round_nl[self->next_round_nl - 1] >= at)
        self->next_round_nl = 0;
      while (self->next_round_nl < self->n_round_nl && self->round_nl[self->next_round_nl] < at)
        self->next_round_nl++;
      if (self->next_round_nl < self->n_round_nl)
        {
          guint64 nl = self->round_nl[self->next_round_nl];

          return nl < self->buf_offset + (end - self->buf) ? self->buf + (nl - self->buf_offset) : NULL;
        }
      p = self->buf + (self->round_nl_upto - self->buf_offset);
      if (p >= end)
        return NULL;
    }

  return memchr (p, '\n', end - p);
}

/* The SerioTextSink of a parse of short lines on the threads (see
 * parse_ahead()), as read_during_parse() for a long one: the text up to
 * the end of the lines parsed so far is hashed, and a file read on; and
 * the text after the lines is looked through for the next round's, twice
 * as much as the threads parsed, so that the look is done by the time
 * the last lines are (on the calling thread, which otherwise looked
 * through them alone when the round began, while the others waited). */
static void
read_during_lines (const char *text,
                   gsize       len,
                   gpointer    user_data)
{
  ParseSink *sink = user_data;
  SerioReader *self = sink->self;
  gsize upto = (gsize) (text + len - self->buf);

  read_during_parse (self->buf + self->hashed, upto > self->hashed ? upto - self->hashed : 0,
                     user_data);
  find_round_line_feeds (self, 2 * len);
}

/* Drops the bytes before pos of a stream's window (hashing them): the
 * window moves to the start of the buffer. */
static void
compact (SerioReader *self)
{
  if (self->pos == 0)
    return;

  hash_upto (self, self->pos);
  memmove (self->buf, self->buf + self->pos, self->end - self->pos);
  self->buf_offset += self->pos;
  self->end -= self->pos;
  self->hashed -= self->pos;
  self->scanned = self->scanned > self->pos ? self->scanned - self->pos : 0;
  if (self->seg_valid)
    {
      self->seg_end -= self->pos;
      self->seg_nl -= self->pos;
    }
  self->pos = 0;
}

static void
grow (SerioReader *self)
{
  if (self->cap > G_MAXSIZE / 2)
    g_error ("%s: a record's name does not fit in memory", G_STRLOC);

  self->cap *= 2;
  self->buf = g_realloc (self->buf, self->cap);
}

/* Makes the bytes read on into the spare the window's, after the bytes of
 * the window from pos (hashing those before): the spare becomes the
 * buffer, or, when the window's end is longer than the room before them
 * (a long name), they are copied after it. */
static void
take_spare (SerioReader *self)
{
  gsize tail = self->end - self->pos;
  gsize n = self->spare_end - self->spare_start;

  hash_upto (self, self->pos);
  if (tail <= self->spare_start)
    {
      gsize pos = self->spare_start - tail;
      char *buf = self->buf;
      gsize cap = self->cap;

      memcpy (self->spare + pos, self->buf + self->pos, tail);
      self->buf_offset = self->buf_offset + self->pos - pos;
      self->hashed = self->hashed - self->pos + pos;
      if (self->scanned >= self->end)
        self->scanned = self->spare_scanned;
      else
        self->scanned = self->scanned > self->pos ? self->scanned - self->pos + pos : 0;
      if (self->seg_valid)
        {
          self->seg_end = self->seg_end - self->pos + pos;
          self->seg_nl = self->seg_nl - self->pos + pos;
        }
      self->buf = self->spare;
      self->cap = self->spare_cap;
      self->pos = pos;
      self->end = self->spare_end;
      self->spare = buf;
      self->spare_cap = cap;
      self->spare_start = MIN (SPARE_ROOM, cap / 2);
    }
  else
    {
      gboolean clear = self->scanned >= self->end;

      compact (self);
      while (self->cap - self->end < n)
        grow (self);
      memcpy (self->buf + self->end, self->spare + self->spare_start, n);
      if (clear)
        self->scanned = self->end + (self->spare_scanned - self->spare_start);
      self->end += n;
    }
  self->spare_end = self->spare_scanned = self->spare_start;
}

/* Drops the bytes before pos (hashing them) and reads more after the
 * window: first what was read on into the spare during a parse, then the
 * error of that read, if any, then from the stream. Returns 1 when bytes
 * came, 0 at the end of the stream or when the window fills the buffer,
 * -1 on an error. */
static int
fill (SerioReader   *self,
      GCancellable  *cancellable,
      GError       **error)
{
  gboolean got_any = FALSE;
  gssize n;

  if (self->bytes != NULL)
    {
      /* Nothing moves: the window is the text. */
      hash_upto (self, self->pos);
      return 0;
    }

  /* What was read on while threads parsed comes first; then the end of
   * the stream there, or its error. */
  if (self->spare_end > self->spare_start)
    {
      take_spare (self);
      return 1;
    }
  if (self->spare_eof)
    self->eof = TRUE;

  compact (self);

  if (self->read_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&self->read_error));
      return -1;
    }
  if (self->eof || self->end == self->cap)
    return 0;

  do
    {
      n = read_some (self, self->buf, &self->end, &self->eof,
                     MIN (self->cap - self->end, READ_CHUNK), cancellable, error);
      if (n < 0)
        return -1;
      if (n == 0)
        break;
      got_any = TRUE;
    }
  while (self->fill_window && self->end < self->cap);

  return got_any ? 1 : 0;
}

/* Moves past the line feed at buf[@nl]. */
static void
next_line (SerioReader *self,
           gsize        nl)
{
  self->pos = nl + 1;
  self->line++;
  self->seg_valid = FALSE;
}

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

/* Records @local_error (taken) as the reader's failure and returns it.
 * A problem with the text is reported as it is for the whole text in
 * memory: first the stream is read to its end, because a text cut short is
 * reported as such whatever else is wrong with it. */
static gboolean
fail (SerioReader   *self,
      GError        *local_error,
      GCancellable  *cancellable,
      GError       **error)
{
  if (local_error->domain == SERIO_ERROR && local_error->code != SERIO_ERROR_TRUNCATED)
    {
      gulong lines = self->line;
      GError *read_error = NULL;

      self->hashing = NULL;
      for (;;)
        {
          const char *p = self->buf + self->pos;
          const char *end = self->buf + self->end;
          int got;

          while ((p = memchr (p, '\n', end - p)) != NULL)
            {
              lines++;
              p++;
            }
          self->pos = self->end;

          got = fill (self, cancellable, &read_error);
          if (got < 0)
            {
              g_clear_error (&local_error);
              local_error = read_error;
              break;
            }
          if (got == 0)
            {
              if (self->last_byte != '\n')
                {
                  g_clear_error (&local_error);
                  _serio_codec_set_truncated_error (&local_error, lines);
                }
              break;
            }
        }
    }

  self->state = STATE_FAILED;
  self->failure = g_error_copy (local_error);
  g_propagate_error (error, local_error);
  return FALSE;
}

/* The text ends in the middle of a line. */
static gboolean
fail_truncated (SerioReader   *self,
                GCancellable  *cancellable,
                GError       **error)
{
  GError *local_error = NULL;

  _serio_codec_set_truncated_error (&local_error, self->line);
  return fail (self, local_error, cancellable, error);
}

static gboolean
check_usable (SerioReader   *self,
              GError       **error)
{
  if (self->state == STATE_FAILED)
    {
      g_propagate_error (error, g_error_copy (self->failure));
      return FALSE;
    }

  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Values                                                             */
/* ------------------------------------------------------------------ */

/* What the parser sees of a token longer than the buffer. */
typedef struct
{
  char     shown[LONG_TOKEN_SHOWN];
  gsize    shown_len;
  char     digest[LONG_TOKEN_DIGEST + 2];
  gsize    digest_len;
  gsize    run;
  char     run_last;
  char     last;
  gboolean last_kept;
} LongToken;

static void
long_token_keep (LongToken *t,
                 char       c)
{
  t->last_kept = t->digest_len < LONG_TOKEN_DIGEST;
  if (t->last_kept)
    t->digest[t->digest_len++] = c;
}

static void
long_token_end_run (LongToken *t)
{
  if (t->run > LONG_TOKEN_RUN - 1)
    long_token_keep (t, t->run_last);
  t->run = 0;
}

static void
long_token_feed (LongToken  *t,
                 const char *p,
                 gsize       len)
{
  for (gsize i = 0; i < len; i++)
    {
      char c = p[i];

      if (t->shown_len < LONG_TOKEN_SHOWN)
        t->shown[t->shown_len++] = c;

      if (c >= '0' && c <= '9')
        {
          t->run++;
          if (t->run < LONG_TOKEN_RUN)
            long_token_keep (t, c);
          else
            t->run_last = c;
        }
      else
        {
          long_token_end_run (t);
          long_token_keep (t, c);
        }
      t->last = c;
    }
}

/* The window holds nothing but the start of a token that fills the
 * buffer: reads on to its end and reports it. */
static gboolean
fail_long_token (SerioReader   *self,
                 GCancellable  *cancellable,
                 GError       **error)
{
  LongToken t = { { 0 }, 0, { 0 }, 0, 0, 0, 0, FALSE };
  SerioCodecProblem problem;
  GError *local_error = NULL;
  const char *token_end;
  char delimiter;

  for (;;)
    {
      const char *p = self->buf + self->pos;
      gsize len = self->end - self->pos;
      const char *comma = memchr (p, ',', len);
      const char *nl = memchr (p, '\n', len);
      const char *stop = comma != NULL && (nl == NULL || comma < nl) ? comma : nl;
      int got;

      if (stop != NULL)
        {
          long_token_feed (&t, p, stop - p);
          delimiter = *stop;
          self->pos = stop - self->buf;
          break;
        }

      long_token_feed (&t, p, len);
      self->pos = self->end;
      got = fill (self, cancellable, &local_error);
      if (got < 0)
        return fail (self, local_error, cancellable, error);
      if (got == 0)
        return fail_truncated (self, cancellable, error);
    }

  long_token_end_run (&t);
  /* A carriage return before the line feed is not part of the token. */
  if (delimiter == '\n' && t.last == '\r' && t.last_kept)
    t.digest_len--;
  t.digest[t.digest_len] = delimiter;

  if (_serio_codec_parse_long_token (t.digest, t.digest_len, &token_end, &problem))
    {
      /* Not reached: no token of this length is valid. */
      problem.code = SERIO_ERROR_SYNTAX;
      problem.reason = N_("not a valid value");
    }

  _serio_codec_set_token_error (&local_error, &problem, self->line, self->n_tokens + 1,
                                t.shown, t.shown + t.shown_len);
  return fail (self, local_error, cancellable, error);
}

/* Makes the segment ahead end at @end: a comma, or the end of the line
 * whose line feed is @nl. Returns %TRUE. */
static gboolean
set_segment (SerioReader *self,
             const char  *end,
             const char  *nl)
{
  self->seg_valid = TRUE;
  self->seg_eol = nl != NULL;
  self->seg_unseen = FALSE;
  self->seg_end = end - self->buf;
  self->seg_nl = nl != NULL ? (gsize) (nl - self->buf) : 0;
  return TRUE;
}

/* Makes the segment ahead end at the comma @end without looking through
 * it for a line feed: for the threads of a parse in memory, where a look
 * ahead of theirs is a pass over memory on the calling thread, on which
 * the parse waits. No line feed lies in what they parse without a bad
 * token: each byte of a window is part of a token, and a line feed is
 * part of no valid token. A bad token is looked at again after a look
 * through the segment from it (see_segment()). Returns %TRUE. */
static gboolean
unseen_segment (SerioReader *self,
                const char  *end)
{
  set_segment (self, end, NULL);
  self->seg_unseen = TRUE;
  return TRUE;
}

/* Looks through the rest of an unseen segment, from pos, for a line feed:
 * the segment then ends at the end of the line, if one ends in it. */
static void
see_segment (SerioReader *self)
{
  const char *nl;

  g_assert (self->seg_valid && self->seg_unseen);
  nl = scan_line_feed (self, self->seg_end);
  if (nl != NULL)
    set_segment (self, nl > self->buf + self->pos && nl[-1] == '\r' ? nl - 1 : nl, nl);
  else
    self->seg_unseen = FALSE;
}

/* Makes the segment ahead valid: the window holds, from pos, the current
 * token and its delimiter. */
static gboolean
ensure_segment (SerioReader   *self,
                GCancellable  *cancellable,
                GError       **error)
{
  if (self->seg_valid)
    return TRUE;

  for (;;)
    {
      const char *p = self->buf + self->pos;
      gsize len = self->end - self->pos;
      const char *nl;
      GError *local_error = NULL;
      int got;

      gboolean threads = effective_threads (self) > 1;

      /* On one thread, or in memory, a line that goes on past the look
       * of its start goes on in segments that end at a comma, unless
       * there is none in them: on one thread, of SERIAL_SEGMENT, looked
       * through just before they are parsed; in memory on several, of
       * up to BYTES_SEGMENT, not looked through for the line's end. A
       * stream's window on several threads is looked through whole. */
      if (len > SERIAL_SEGMENT && (!threads || self->bytes != NULL))
        {
          nl = scan_line_feed (self, self->pos + SERIAL_SEGMENT);
          if (nl == NULL)
            {
              const char *comma = _serio_last_comma (p, threads ? MIN (len, BYTES_SEGMENT) :
                                                                  SERIAL_SEGMENT);

              if (comma != NULL)
                return threads ? unseen_segment (self, comma) : set_segment (self, comma, NULL);
            }
        }

      nl = scan_line_feed (self, self->end);
      if (nl != NULL)
        {
          const char *line_end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;

          return set_segment (self, line_end, nl);
        }

      if (len > 0)
        {
          const char *comma = _serio_last_comma (p, len);

          if (comma != NULL)
            return set_segment (self, comma, NULL);
        }

      if (self->pos == 0 && self->end == self->cap && !self->eof)
        return fail_long_token (self, cancellable, error);

      got = fill (self, cancellable, &local_error);
      if (got < 0)
        return fail (self, local_error, cancellable, error);
      if (got == 0 && self->eof)
        return fail_truncated (self, cancellable, error);
    }
}

/* Checks that the type of a typed array holds the @n_values values at
 * @values, the record's from its value @first (0-based) on. */
static gboolean
check_typed (SerioReader   *self,
             const double  *values,
             gsize          n_values,
             guint64        first,
             GCancellable  *cancellable,
             GError       **error)
{
  GError *local_error = NULL;

  if (G_LIKELY (self->dtype == SERIO_DTYPE_FLOAT64) ||
      _serio_codec_check_typed (self->dtype, values, n_values, first, self->line, &local_error))
    return TRUE;

  return fail (self, local_error, cancellable, error);
}

/* Fails on the value @value of the record, its value @index (1-based),
 * which the record's type does not hold. */
static gboolean
fail_misfit (SerioReader   *self,
             double         value,
             guint64        index,
             GCancellable  *cancellable,
             GError       **error)
{
  GError *local_error = NULL;

  _serio_codec_set_dtype_error (&local_error, self->dtype, value, self->line, index);
  return fail (self, local_error, cancellable, error);
}

/* Parses tokens of the current record, storing up to @max_values of them
 * in @out as elements of @out_dtype (float64, or the record's type), or
 * none when @out is %NULL, until @max_values were parsed or the line
 * ends. The values stored are checked against the record's type as they
 * are parsed, so that the first bad value of the record is reported,
 * whether its token is bad or the type does not hold it. */
static gboolean
parse_values (SerioReader   *self,
              SerioDtype     out_dtype,
              gpointer       out,
              gsize          max_values,
              gsize         *n_parsed,
              GCancellable  *cancellable,
              GError       **error)
{
  gsize size = serio_dtype_get_size (out_dtype);
  gsize got = 0;

  g_assert (out_dtype == SERIO_DTYPE_FLOAT64 || out_dtype == self->dtype);

  while (got < max_values && !self->line_done)
    {
      SerioCodecProblem problem;
      const char *s, *seg_end;
      gboolean ended, converted, field_start;
      double *doubles;
      gsize n, room;

      if (!ensure_segment (self, cancellable, error))
        return FALSE;

      s = self->buf + self->pos;
      seg_end = self->buf + self->seg_end;
      field_start = self->field_start;

      /* An empty field holds no token; after a comma, an empty token is
       * a token (and an error). */
      if (self->field_start)
        {
          self->field_start = FALSE;
          if (self->seg_eol && s == seg_end)
            {
              self->line_done = TRUE;
              break;
            }
        }

      /* A long run of values, all wanted: parsed, checked and stored by
       * several threads, in windows that end at commas, up to the values
       * wanted. A span of 24 bytes a value wanted holds them all (a token
       * has at most 23), so that little is parsed ahead of what is
       * taken. */
      if (out != NULL && (gsize) (seg_end - s) >= PARALLEL_MIN_BYTES &&
          max_values - got >= PARALLEL_MIN_VALUES)
        {
          guint n_threads = effective_threads (self);
          gsize span;
          const char *span_end;

          span = (max_values - got) <= G_MAXSIZE / (SERIO_CODEC_TOKEN_MAX + 1) ?
                       MIN ((gsize) (seg_end - s), (max_values - got) * (SERIO_CODEC_TOKEN_MAX + 1)) :
                       (gsize) (seg_end - s);
          span_end = span == (gsize) (seg_end - s) ? seg_end : _serio_last_comma (s, span);

          if (n_threads > 1 && span_end != NULL && span_end > s)
            {
              SerioParseStop stop;
              ParseSink sink = { self, cancellable };
              const char *end = NULL;
              gboolean span_ended = FALSE;

              if (self->workers == NULL)
                self->workers = _serio_workers_new ();
              /* The text parsed is hashed, and a file read on, as the
               * threads parse. */
              hash_upto (self, s - self->buf);
              n = _serio_workers_parse (self->workers, s, span_end, self->buf + self->end, self->dtype,
                                        out_dtype, (char *) out + got * size, max_values - got,
                                        n_threads, &end, &span_ended, &stop, read_during_parse,
                                        &sink);
              self->n_tokens += n;
              got += n;
              if (G_UNLIKELY (stop.misfit))
                return fail_misfit (self, stop.value, self->n_tokens + 1, cancellable, error);
              if (G_UNLIKELY (stop.problem.reason != NULL))
                {
                  GError *local_error = NULL;

                  self->pos = stop.bad - self->buf;
                  if (self->seg_unseen)
                    {
                      /* No line feed lies before the bad token, which
                       * is parsed again, once the line's end is known:
                       * an error, or the last value of the line. */
                      if (stop.bad == s)
                        self->field_start = field_start;
                      see_segment (self);
                      continue;
                    }
                  _serio_codec_set_token_error (&local_error, &stop.problem, self->line,
                                                self->n_tokens + 1, stop.bad,
                                                self->seg_eol ? seg_end : seg_end + 1);
                  return fail (self, local_error, cancellable, error);
                }

              if (span_ended && span_end == seg_end)
                {
                  if (self->seg_eol)
                    {
                      self->pos = self->seg_end;
                      self->line_done = TRUE;
                    }
                  else
                    {
                      self->pos = self->seg_end + 1;
                      self->seg_valid = FALSE;
                    }
                }
              else if (span_ended)
                {
                  /* the span ended at a comma before the segment's end */
                  self->pos = span_end + 1 - self->buf;
                }
              else
                {
                  /* the values wanted ended first: the next token's start,
                   * which can be the span's end (an empty token there) */
                  self->pos = end - self->buf;
                }
              continue;
            }
        }

      /* One thread parses only a segment looked through. */
      if (G_UNLIKELY (self->seg_unseen))
        {
          self->field_start = field_start;
          see_segment (self);
          continue;
        }

      /* Doubles are parsed in place; other elements through the
       * scratch, a piece at a time. */
      room = max_values - got;
      converted = out != NULL && out_dtype != SERIO_DTYPE_FLOAT64;
      if (out == NULL)
        {
          doubles = NULL;
        }
      else if (!converted)
        {
          doubles = (double *) out + got;
        }
      else
        {
          if (self->scratch == NULL)
            self->scratch = g_new (double, SCRATCH_VALUES);
          doubles = self->scratch;
          room = MIN (room, SCRATCH_VALUES);
        }

      n = _serio_codec_parse_tokens (&s, seg_end, self->buf + self->end, doubles, room, &ended,
                                     &problem);
      self->pos = s - self->buf;

      /* The values come before the problem that stopped the parse, if
       * any; the token stays in the window: the check does not move
       * it. Elements are checked as they are stored, in one pass. */
      if (converted)
        {
          gsize stored = _serio_dtype_store_doubles (out_dtype, doubles, n, (char *) out + got * size);

          if (G_UNLIKELY (stored < n))
            return fail_misfit (self, doubles[stored], self->n_tokens + stored + 1, cancellable, error);
        }
      else if (!check_typed (self, doubles, n, self->n_tokens, cancellable, error))
        return FALSE;
      self->n_tokens += n;
      got += n;

      if (G_UNLIKELY (problem.reason != NULL))
        {
          GError *local_error = NULL;

          _serio_codec_set_token_error (&local_error, &problem, self->line, self->n_tokens + 1,
                                        s, self->seg_eol ? seg_end : seg_end + 1);
          return fail (self, local_error, cancellable, error);
        }

      if (ended)
        {
          if (self->seg_eol)
            {
              self->line_done = TRUE;
            }
          else
            {
              /* The comma that ends the segment; the next token comes with
               * the next read. */
              self->pos = self->seg_end + 1;
              self->seg_valid = FALSE;
            }
        }
    }

  if (n_parsed != NULL)
    *n_parsed = got;
  return TRUE;
}

/* Reads the rest of the current record's line, whose first @store_limit
 * values (counted from the record's first) go to @store, and checks its
 * count. Moves to the next line. */
static gboolean
finish_record (SerioReader   *self,
               double        *store,
               gsize          store_limit,
               GCancellable  *cancellable,
               GError       **error)
{
  if (store != NULL && self->n_tokens < store_limit &&
      !parse_values (self, SERIO_DTYPE_FLOAT64, store + self->n_tokens, store_limit - self->n_tokens,
                     NULL, cancellable, error))
    return FALSE;

  if (!parse_values (self, SERIO_DTYPE_FLOAT64, NULL, G_MAXSIZE, NULL, cancellable, error))
    return FALSE;

  if (G_UNLIKELY (!self->count_exact || self->count != self->n_tokens))
    {
      GError *local_error = NULL;

      g_autofree char *exact = self->declared == NULL ?
                               g_strdup_printf ("%" G_GUINT64_FORMAT, self->count) : NULL;

      _serio_codec_set_length_error (&local_error, self->line,
                                     exact != NULL ? exact : self->declared, self->n_tokens);
      return fail (self, local_error, cancellable, error);
    }

  next_line (self, self->seg_nl);
  return TRUE;
}

/* Moves past the rest of the current line without parsing it. */
static gboolean
skip_line (SerioReader   *self,
           GCancellable  *cancellable,
           GError       **error)
{
  if (self->line_done)
    {
      next_line (self, self->seg_nl);
      return TRUE;
    }

  for (;;)
    {
      const char *p = self->buf + self->pos;
      const char *nl = memchr (p, '\n', self->end - self->pos);
      GError *local_error = NULL;
      int got;

      if (nl != NULL)
        {
          next_line (self, nl - self->buf);
          return TRUE;
        }

      self->pos = self->end;
      self->seg_valid = FALSE;
      got = fill (self, cancellable, &local_error);
      if (got < 0)
        return fail (self, local_error, cancellable, error);
      if (got == 0)
        return fail_truncated (self, cancellable, error);
    }
}

/* ------------------------------------------------------------------ */
/* Records                                                            */
/* ------------------------------------------------------------------ */

/* Whether buf[pos, end), which holds no line feed, holds enough of a line
 * for _serio_codec_parse_name() and _serio_codec_parse_count() to take
 * the same decision on it as on the whole line. */
static gboolean
start_is_complete (const char *p,
                   const char *end)
{
  const char *bar, *q;

  /* Fewer bytes than “v1|” decide when they cannot start a record. */
  if (end - p < 3)
    return _serio_sniff_first_record (p, end - p) == SERIO_SNIFF_NOT_SERIO;

  if (p[0] != 'v' || p[1] != '1' || p[2] != '|')
    {
      /* Decided by the version tag: "v" or "V", digits, "|". */
      if (p[0] != 'v' && p[0] != 'V')
        return TRUE;
      for (q = p + 1; q < end && g_ascii_isdigit (*q); q++)
        ;
      return q < end;
    }

  bar = memchr (p + 3, '|', end - (p + 3));
  if (bar == NULL)
    return FALSE;
  for (q = bar + 1; q < end && g_ascii_isdigit (*q); q++)
    ;
  if (q == end)
    return FALSE;
  if (*q == '|')
    return TRUE;

  /* A bad count: its message shows the field up to the next "|", cut to
   * a few dozen bytes. */
  return memchr (q, '|', end - q) != NULL || end - (bar + 1) >= LONG_TOKEN_SHOWN;
}

/* Passes the records parsed ahead whose lines come before @line. */
static void
pass_ahead (SerioReader *self,
            gulong       line)
{
  while (self->next_ahead < self->n_ahead && self->ahead_lines[self->next_ahead] < line)
    self->next_ahead++;
}

/* The line feed that ends the line at pos, as parse_ahead() found it, when
 * the line is one it parsed (and the window holds its end, as it did
 * then): the first line feed from pos. %NULL otherwise. */
static const char *
ahead_line_feed (SerioReader *self)
{
  guint64 nl;

  pass_ahead (self, self->line);
  if (self->next_ahead == self->n_ahead || self->ahead_lines[self->next_ahead] != self->line)
    return NULL;
  nl = self->ahead_nl[self->next_ahead];

  return nl < self->buf_offset + self->end ? self->buf + (nl - self->buf_offset) : NULL;
}

/* What parse_ahead() read of the start of the line at pos, when it parsed
 * the line and ensure_line_start() found its end at @nl, the line feed
 * parse_ahead() found (ahead_line_feed(): the window holds the same
 * bytes, whole): %NULL otherwise, and next_record() reads the start
 * itself. */
static const AheadHeader *
ahead_header (SerioReader *self,
              const char  *nl)
{
  if (nl == NULL || ahead_line_feed (self) != nl ||
      !self->ahead_headers[self->next_ahead].valid)
    return NULL;

  return &self->ahead_headers[self->next_ahead];
}

/* Makes the window hold the start of the line at pos (up to its values)
 * or the whole line. Sets @line_end to the end of the line, or of the
 * window when the line goes on; sets @at_end at the end of the text. */
static gboolean
ensure_line_start (SerioReader   *self,
                   const char   **line_end,
                   const char   **nl_out,
                   gboolean      *at_end,
                   GCancellable  *cancellable,
                   GError       **error)
{
  gsize scanned = 0;
  /* The end of a long line is found a segment at a time by
   * ensure_segment(), as the line is parsed: here only its start is
   * looked through, unless the name and count go on past it. */
  gboolean bounded = TRUE;

  *at_end = FALSE;

  for (;;)
    {
      const char *p = self->buf + self->pos;
      const char *end = self->buf + self->end;
      const char *limit = bounded && (gsize) (end - p) > SERIAL_SEGMENT ? p + SERIAL_SEGMENT : end;
      /* A line parsed ahead is not looked through again: in a file of
       * many short arrays, that was a second pass over every byte, on
       * the calling thread, while the other threads waited for it; nor
       * is one whose line feed was found during a round. */
      const char *ahead = ahead_line_feed (self);
      const char *nl = ahead != NULL && ahead < limit ? ahead :
                       round_line_feed (self, p + scanned, limit);
      GError *local_error = NULL;
      int got;

      if (nl != NULL)
        {
          *line_end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
          *nl_out = nl;
          return TRUE;
        }
      scanned = limit - p;
      self->scanned = MAX (self->scanned, self->pos + scanned);

      if (start_is_complete (p, limit))
        {
          *line_end = limit;
          *nl_out = NULL;
          return TRUE;
        }
      if (limit < end)
        {
          bounded = FALSE;
          continue;
        }

      if (p == end && self->eof)
        {
          *at_end = TRUE;
          return TRUE;
        }

      if (self->pos == 0 && self->end == self->cap && !self->eof)
        grow (self);

      got = fill (self, cancellable, &local_error);
      if (got < 0)
        return fail (self, local_error, cancellable, error);
      if (got == 0 && self->eof && self->pos == self->end)
        {
          *at_end = TRUE;
          return TRUE;
        }
      if (got == 0 && self->eof)
        return fail_truncated (self, cancellable, error);
    }
}

/* Before the first record, at pos: a text whose first record cannot
 * start like one is another format, not serio text. Reads up to
 * SERIO_SNIFF_BYTES of it to say which, and fails without reading the
 * rest (it is not a text cut short, whatever its end). */
static gboolean
sniff_first_record (SerioReader   *self,
                    GCancellable  *cancellable,
                    GError       **error)
{
  GError *local_error = NULL;

  if (_serio_sniff_first_record (self->buf + self->pos, self->end - self->pos) != SERIO_SNIFF_NOT_SERIO)
    return TRUE;

  while (self->end - self->pos < SERIO_SNIFF_BYTES)
    {
      int got = fill (self, cancellable, &local_error);

      if (got < 0)
        return fail (self, local_error, cancellable, error);
      if (got == 0)
        break;
    }

  _serio_sniff_set_error (&local_error, self->buf + self->pos, self->end - self->pos, self->line);
  self->state = STATE_FAILED;
  self->failure = g_error_copy (local_error);
  g_propagate_error (error, local_error);
  return FALSE;
}

/* Reads lines up to the next array, handling blank lines and the seal's
 * records. Returns %TRUE with the state STATE_VALUES at an array,
 * STATE_END at the end of the text. */
static gboolean
next_record (SerioReader   *self,
             GCancellable  *cancellable,
             GError       **error)
{
  for (;;)
    {
      SerioCodecHeader header;
      const AheadHeader *kept;
      const char *p, *line_end = NULL, *nl = NULL;
      gboolean at_end;
      GError *local_error = NULL;

      if (!ensure_line_start (self, &line_end, &nl, &at_end, cancellable, error))
        return FALSE;

      if (at_end)
        {
          hash_upto (self, self->pos);
          if (!_serio_seal_check_finish (&self->seal, self->line - 1, &local_error))
            return fail (self, local_error, cancellable, error);
          self->state = STATE_END;
          return TRUE;
        }

      if (!_serio_seal_check_trailing (&self->seal, self->line, &local_error))
        return fail (self, local_error, cancellable, error);

      p = self->buf + self->pos;
      if (line_end == p && nl != NULL)
        {
          next_line (self, nl - self->buf);
          continue;
        }

      if (!self->seen_record && !sniff_first_record (self, cancellable, error))
        return FALSE;
      /* The start of a line parsed ahead is taken as parse_ahead() read
       * it: an array with an exact count. */
      kept = ahead_header (self, nl);
      if (kept != NULL)
        header = (SerioCodecHeader) { p + kept->name_at, kept->name_len, SERIO_NAME_ARRAY, NULL, 0,
                                      kept->count, TRUE, p + kept->values_at };
      else if (!_serio_codec_parse_name (p, line_end, self->line, &header, &local_error))
        return fail (self, local_error, cancellable, error);

      if (!self->seen_record)
        {
          self->seen_record = TRUE;
          if (header.kind != SERIO_NAME_SEAL_OPEN)
            {
              /* A plain text: nothing to hash. */
              self->hashing = NULL;
              g_clear_pointer (&self->prelude, XXH3_freeState);
            }
        }

      if (header.kind != SERIO_NAME_ARRAY)
        {
          if (!_serio_seal_check_name (&self->seal, header.kind, self->line, &local_error))
            return fail (self, local_error, cancellable, error);

          if (header.kind == SERIO_NAME_SEAL_OPEN)
            {
              /* The hash so far (of the blank lines before) goes on as
               * the seal's. */
              g_clear_pointer (&self->seal.hash, XXH3_freeState);
              self->seal.hash = g_steal_pointer (&self->prelude);
              self->hashing = self->seal.hash;
            }
          else
            {
              /* The seal covers every byte before its own line. */
              hash_upto (self, self->pos);
              self->hashing = NULL;
            }
        }

      if (kept == NULL &&
          !_serio_codec_parse_count (&header, line_end, self->buf + self->end, self->line,
                                     &local_error))
        return fail (self, local_error, cancellable, error);

      /* The name goes into the same room each record (a file of many
       * small arrays allocates nothing per record for it), and the count
       * is kept as text only when it is not a number the reader holds. */
      if (header.name_len >= self->name_cap)
        {
          self->name_cap = MAX (header.name_len + 1, 2 * self->name_cap);
          self->name = g_realloc (self->name, self->name_cap);
        }
      memcpy (self->name, header.name, header.name_len);
      self->name[header.name_len] = '\0';
      g_clear_pointer (&self->declared, g_free);
      if (!header.count_exact)
        self->declared = _serio_codec_describe (header.count_start, header.count_digits);
      self->kind = header.kind;
      /* A typed name is parsed whole for its type: its shape is kept. */
      self->dtype = SERIO_DTYPE_FLOAT64;
      if (kept != NULL)
        {
          self->dtype = kept->dtype;
          self->shape_valid = kept->shape_valid;
          if (kept->shape_valid)
            {
              self->base_len = kept->base_len;
              self->n_dims = kept->n_dims;
              for (guint i = 0; i < kept->n_dims; i++)
                self->dims[i] = kept->dims[i];
            }
        }
      else
        self->shape_valid = header.kind == SERIO_NAME_ARRAY && header.count_exact &&
                            _serio_name_parse_if_typed (header.name, header.name_len, header.count,
                                                        &self->base_len, &self->dtype, self->dims,
                                                        &self->n_dims);
      self->count = header.count;
      self->count_exact = header.count_exact;
      self->n_tokens = 0;
      self->field_start = TRUE;
      self->line_done = FALSE;
      self->record_line = self->line;
      self->pos = header.values - self->buf;
      /* When the line's end was found (the whole line is in the window,
       * and not longer than the look of its start), the segment of values
       * ahead is the rest of it. */
      self->seg_valid = nl != NULL && line_end >= header.values;
      if (self->seg_valid)
        {
          self->seg_eol = TRUE;
          self->seg_unseen = FALSE;
          self->seg_end = line_end - self->buf;
          self->seg_nl = nl - self->buf;
        }

      if (header.kind == SERIO_NAME_ARRAY && header.count_exact)
        {
          /* For an array, the seal only counts the record: whether it is
           * read or skipped, it is counted here. */
          if (!_serio_seal_check_record (&self->seal, header.kind, header.count, NULL,
                                         self->line, &local_error))
            return fail (self, local_error, cancellable, error);

          self->state = STATE_VALUES;
          /* An array of no values is complete at once. */
          if (self->count == 0 && !finish_record (self, NULL, 0, cancellable, error))
            return FALSE;
          if (self->count == 0)
            self->state = STATE_DONE;
          return TRUE;
        }

      /* A seal record, or a count no array can have: read here. */
      {
        double reserved[3];
        gsize store = header.kind != SERIO_NAME_ARRAY && header.count_exact &&
                      header.count <= G_N_ELEMENTS (reserved) ? header.count : 0;

        if (!finish_record (self, reserved, store, cancellable, error))
          return FALSE;
        if (!_serio_seal_check_record (&self->seal, header.kind, self->n_tokens, reserved,
                                       self->record_line, &local_error))
          return fail (self, local_error, cancellable, error);
      }
    }
}

/**
 * serio_reader_next:
 * @self: a #SerioReader
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Moves to the next array of the text; what is left of the current one
 * is skipped as by [method@Serio.Reader.skip_array].
 *
 * Returns %FALSE without an error at the end of a valid text: only then is
 * everything read before known to be valid (see the description of
 * #SerioReader). Returns %FALSE with @error set when the text is not valid
 * (a [error@Serio.Error], as [ctor@Serio.Bundle.new_from_bytes] would give for
 * the whole text) or the stream fails. Every later call returns the same
 * error.
 *
 * Returns: %TRUE at an array, %FALSE at the end or on an error
 */
gboolean
serio_reader_next (SerioReader   *self,
                   GCancellable  *cancellable,
                   GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, error))
    return FALSE;
  if (self->state == STATE_END)
    return FALSE;

  if (self->state == STATE_VALUES && !skip_line (self, cancellable, error))
    return FALSE;

  self->state = STATE_LINE;
  if (!next_record (self, cancellable, error))
    return FALSE;

  return self->state != STATE_END;
}

/* ------------------------------------------------------------------ */
/* Whole records                                                      */
/* ------------------------------------------------------------------ */

/* Whether @count values can be on a line whose values take @len bytes:
 * each but the last takes a comma too. A count beyond that is an error
 * the general path reports, and no room is made for it. */
static inline gboolean
count_fits (guint64 count,
            gsize   len)
{
  return count <= (guint64) len / 2 + 1;
}

/* Makes the room of the lines parsed ahead, AHEAD_MAX_LINES of each, when
 * parse_ahead() first finds a line to parse with the current one: a
 * reader of one record (a value read, a token checked) allocates none of
 * it. (Room grown from a few lines up, on each reader, made a load of
 * 10,000 short records a third slower.) */
static void
make_ahead_room (SerioReader *self)
{
  self->ahead = g_new (SerioParseLine, AHEAD_MAX_LINES);
  self->ahead_lines = g_new (gulong, AHEAD_MAX_LINES);
  self->ahead_nl = g_new (guint64, AHEAD_MAX_LINES);
  self->ahead_headers = g_new (AheadHeader, AHEAD_MAX_LINES);
  self->round_nl = g_new (guint64, AHEAD_MAX_LINES);
}

/* With the current record's line whole in the window and short: parses
 * it on the threads, together with the short records after it whose
 * lines the window holds whole, up to AHEAD_BYTES of values, so that a
 * file of many small arrays is parsed on every thread as one long array
 * is; with @typed (the records read as elements of their types), the
 * threads convert the values of typed records too. Each line's start
 * (its name, count, type and shape) is read here to know its values, and
 * kept: next_record() takes it from there (ahead_header()) when the
 * record's turn comes, counts it for the seal, and take_whole_line() then
 * takes its values. A line that is not what it seems (not an array, a bad
 * count, a bad token) ends the lines parsed, or is marked not ok, and is
 * left to the general path. Returns %FALSE, with nothing parsed, when no
 * line after the current one qualifies. */
static gboolean
parse_ahead (SerioReader  *self,
             guint         n_threads,
             gboolean      typed,
             GCancellable *cancellable)
{
  ParseSink sink = { self, cancellable };
  const char *buf_end = self->buf + self->end;
  const char *p = self->buf + self->seg_nl + 1;
  gulong line = self->record_line + 1;
  gsize n = 1, bytes = self->seg_end - self->pos, n_values = self->count, at = 0;

  while (n < AHEAD_MAX_LINES && bytes < AHEAD_BYTES && p < buf_end)
    {
      const char *nl = round_line_feed (self, p, buf_end);
      const char *line_end;
      SerioCodecHeader header;
      AheadHeader *kept;
      guint64 dims[SERIO_SHAPE_MAX_DIMS];

      if (nl == NULL)
        break;
      line_end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
      if ((gsize) (line_end - p) >= PARALLEL_MIN_BYTES ||
          !_serio_codec_parse_name (p, line_end, line, &header, NULL) ||
          header.kind != SERIO_NAME_ARRAY ||
          !_serio_codec_parse_count (&header, line_end, buf_end, line, NULL) ||
          !header.count_exact || header.count == 0 ||
          !count_fits (header.count, line_end - header.values))
        break;

      if (self->ahead == NULL)
        make_ahead_room (self);
      kept = &self->ahead_headers[n];
      /* The start as next_record() reads it (the type, and the shape of
       * a typed name), kept for it. */
      kept->name_at = header.name - p;
      kept->name_len = header.name_len;
      kept->values_at = header.values - p;
      kept->count = header.count;
      kept->shape_valid = _serio_name_parse_if_typed (header.name, header.name_len, header.count,
                                                      &kept->base_len, &kept->dtype, dims,
                                                      &kept->n_dims);
      kept->valid = !kept->shape_valid || kept->n_dims <= AHEAD_DIMS;
      for (guint i = 0; kept->shape_valid && kept->valid && i < kept->n_dims; i++)
        kept->dims[i] = dims[i];

      self->ahead[n] = (SerioParseLine) {
        header.values, line_end, kept->dtype, header.count, NULL, NULL, FALSE
      };
      self->ahead_lines[n] = line;
      self->ahead_nl[n] = self->buf_offset + (nl - self->buf);
      bytes += line_end - header.values;
      n_values += header.count;
      n++;
      line++;
      p = nl + 1;
    }
  if (n == 1)
    return FALSE;
  /* The current record, first */
  self->ahead[0] = (SerioParseLine) { self->buf + self->pos, self->buf + self->seg_end,
                                      self->dtype, self->count, NULL, NULL, FALSE };
  self->ahead_lines[0] = self->record_line;
  self->ahead_nl[0] = self->buf_offset + self->seg_nl;
  /* next_record() read its start already. */
  self->ahead_headers[0].valid = FALSE;

  if (2 * n_values > self->ahead_values_size)
    {
      g_free (self->ahead_values);
      /* At most about AHEAD_BYTES / 2 values (count_fits()), so the room
       * grows a few times at most. */
      self->ahead_values_size = 2 * n_values;
      self->ahead_values = g_new (double, self->ahead_values_size);
    }
  for (gsize i = 0; i < n; i++)
    {
      /* Read as elements of their types, typed records are converted on
       * the threads too, into the second half (8 bytes a value). */
      self->ahead[i].out = self->ahead_values + at;
      if (typed && self->ahead[i].dtype != SERIO_DTYPE_FLOAT64)
        self->ahead[i].typed = self->ahead_values + n_values + at;
      at += self->ahead[i].count;
    }

  if (self->workers == NULL)
    self->workers = _serio_workers_new ();
  /* The next round's lines start after the last of these (or its line
   * ends the window, and they are the spare's). */
  self->round_nl_from = self->round_nl_upto = self->ahead_nl[n - 1] + 1;
  self->round_nl_limit = self->round_nl_from + AHEAD_BYTES + PARALLEL_MIN_BYTES;
  self->n_round_nl = self->next_round_nl = 0;
  /* The text is hashed, and a file read on, as the threads parse. */
  _serio_workers_parse_lines (self->workers, self->ahead, n, buf_end, n_threads,
                              read_during_lines, &sink);
  self->n_ahead = n;
  self->next_ahead = 0;
  return TRUE;
}

/* Reads the current record whole into @out, room for @n_values elements
 * of @out_dtype (float64, or the record's type), when its whole line is
 * in the window and short, and moves to the next line: its values come
 * from parse_ahead() with several threads, from one parse of the line
 * into @out with one. Returns %FALSE, with the reader where it was, when
 * the general path must read the record: a line that is long or not all
 * in the window, a record that does not fit @out, and any problem (a bad
 * token, a count that does not match, a value the type cannot hold),
 * which the general path then reports as it always does. */
static gboolean
take_whole_line (SerioReader  *self,
                 SerioDtype    out_dtype,
                 gpointer      out,
                 gsize         n_values,
                 GCancellable *cancellable)
{
  gsize len = self->seg_end - self->pos;

  if (self->state != STATE_VALUES || !self->seg_valid || !self->seg_eol || !self->field_start ||
      self->n_tokens != 0 || !self->count_exact || self->count == 0 || self->count > n_values ||
      len >= PARALLEL_MIN_BYTES || out == NULL)
    return FALSE;

  /* Records parsed ahead that were skipped are passed. */
  pass_ahead (self, self->record_line);
  if (self->next_ahead == self->n_ahead && count_fits (self->count, len))
    {
      if (effective_threads (self) > 1)
        parse_ahead (self, self->n_threads, out_dtype != SERIO_DTYPE_FLOAT64, cancellable);
    }

  if (self->next_ahead < self->n_ahead && self->ahead_lines[self->next_ahead] == self->record_line)
    {
      const SerioParseLine *parsed = &self->ahead[self->next_ahead++];

      if (!parsed->ok)
        return FALSE;
      if (parsed->typed != NULL && out_dtype == parsed->dtype)
        memcpy (out, parsed->typed, parsed->count * serio_dtype_get_size (out_dtype));
      else
        _serio_dtype_from_doubles (out_dtype, parsed->out, parsed->count, out);
    }
  else if (out_dtype == SERIO_DTYPE_FLOAT64)
    {
      const char *s = self->buf + self->pos;
      SerioCodecProblem problem;
      gboolean ended;
      gsize n, misfit;

      n = _serio_codec_parse_tokens (&s, self->buf + self->seg_end, self->buf + self->end, out,
                                     self->count, &ended, &problem);
      if (problem.reason != NULL || !ended || n != self->count ||
          (self->dtype != SERIO_DTYPE_FLOAT64 &&
           _serio_dtype_find_misfit (self->dtype, out, n, &misfit)))
        return FALSE;
    }
  else
    {
      /* Other elements go through the scratch, on the general path. */
      return FALSE;
    }

  self->n_tokens = self->count;
  self->field_start = FALSE;
  self->line_done = TRUE;
  next_line (self, self->seg_nl);
  self->state = STATE_DONE;
  return TRUE;
}

gulong
_serio_reader_get_line (SerioReader *self)
{
  return self->line;
}

gboolean
_serio_reader_read_array (SerioReader   *self,
                          double        *values,
                          gsize          n_values,
                          GCancellable  *cancellable,
                          GError       **error)
{
  gsize got = 0, n;

  if (take_whole_line (self, SERIO_DTYPE_FLOAT64, values, n_values, cancellable))
    return TRUE;

  do
    {
      if (!serio_reader_read_values (self, values + got, n_values - got, &n, cancellable, error))
        return FALSE;
      got += n;
    }
  while (n > 0 && got < n_values);

  /* A reader that did not fail gave exactly the declared count. */
  g_assert (got == n_values);
  return TRUE;
}

/* The current array's shape: the length of its base name, its dims and
 * their number, from its name, parsed here unless next_record() did. */
static const guint64 *
record_shape (SerioReader *self,
              gsize       *base_len,
              guint       *n_dims)
{
  if (!self->shape_valid)
    {
      _serio_shape_parse (self->name, self->count, &self->base_len, self->dims, &self->n_dims);
      self->shape_valid = TRUE;
    }
  *base_len = self->base_len;
  *n_dims = self->n_dims;
  return self->dims;
}

/**
 * serio_reader_get_name:
 * @self: a #SerioReader
 *
 * Gets the name of the current array, as stored in the text.
 *
 * Returns: (nullable): the name, valid UTF-8, or %NULL before the first
 *   array
 */
const char *
serio_reader_get_name (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), NULL);

  return self->state == STATE_VALUES || self->state == STATE_DONE ? self->name : NULL;
}

/**
 * serio_reader_get_shape:
 * @self: a #SerioReader
 * @n_dims: (out): return location for the number of dimensions
 *
 * Gets the shape of the current array from its name and number of values,
 * as [method@Serio.Bundle.get_shape] does: `w[2x3]` of 6 values has the
 * shape (2, 3); a name without a shape suffix gives a one-dimensional
 * shape of [method@Serio.Reader.get_n_values] values. Without a current
 * array, the shape is (0).
 *
 * Returns: (array length=n_dims) (transfer full): the dimensions, a new
 *   array to free with g_free(); never %NULL, even for a 0-d array
 */
guint64 *
serio_reader_get_shape (SerioReader *self,
                        guint       *n_dims)
{
  guint64 dims[SERIO_SHAPE_MAX_DIMS];
  const char *name;
  gsize base_len;
  guint n;

  g_return_val_if_fail (SERIO_IS_READER (self), NULL);
  g_return_val_if_fail (n_dims != NULL, NULL);

  name = serio_reader_get_name (self);
  if (name != NULL)
    {
      const guint64 *shape = record_shape (self, &base_len, &n);

      *n_dims = n;
      return g_memdup2 (shape, MAX (n, 1) * sizeof (guint64));
    }
  _serio_shape_parse ("", 0, &base_len, dims, &n);
  *n_dims = n;

  return g_memdup2 (dims, MAX (n, 1) * sizeof (guint64));
}

/**
 * serio_reader_get_base_name:
 * @self: a #SerioReader
 *
 * Gets the name of the current array without its shape suffix and type
 * marker, as [method@Serio.Bundle.get_base_name] does: `w` for
 * `w@float32[2x3]`.
 *
 * Returns: (transfer full) (nullable): the base name, or %NULL before the
 *   first array
 */
char *
serio_reader_get_base_name (SerioReader *self)
{
  const char *name;
  gsize base_len;
  guint n;

  g_return_val_if_fail (SERIO_IS_READER (self), NULL);

  name = serio_reader_get_name (self);
  if (name == NULL)
    return NULL;

  record_shape (self, &base_len, &n);
  return g_strndup (name, base_len);
}

/**
 * serio_reader_get_n_values:
 * @self: a #SerioReader
 *
 * Gets the number of values of the current array, as its record declares
 * it. It is provisional like the values: a record that holds another
 * number of values fails when its values are read.
 *
 * Returns: the number of values, or 0 without a current array
 */
guint64
serio_reader_get_n_values (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->state == STATE_VALUES || self->state == STATE_DONE ? self->count : 0;
}

/**
 * serio_reader_get_n_left:
 * @self: a #SerioReader
 *
 * Gets the number of values of the current array not read yet.
 *
 * Returns: the number of values left, or 0 without a current array
 */
guint64
serio_reader_get_n_left (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->state == STATE_VALUES ? self->count - MIN (self->n_tokens, self->count) : 0;
}

/* read_values() and read_typed(): the next values of the current array
 * into @out, as elements of @out_dtype (float64, or the array's type). */
static gboolean
read_elements (SerioReader   *self,
               SerioDtype     out_dtype,
               gpointer       out,
               gsize          n_values,
               gsize         *n_read,
               GCancellable  *cancellable,
               GError       **error)
{
  gsize want, got = 0;

  if (n_read != NULL)
    *n_read = 0;
  if (!check_usable (self, error))
    return FALSE;
  if (self->state != STATE_VALUES)
    return TRUE;

  if (take_whole_line (self, out_dtype, out, n_values, cancellable))
    {
      if (n_read != NULL)
        *n_read = self->n_tokens;
      return TRUE;
    }

  want = MIN ((guint64) n_values, serio_reader_get_n_left (self));
  if (want > 0 && !parse_values (self, out_dtype, out, want, &got, cancellable, error))
    return FALSE;

  /* The record ends early (got < want) or holds its last value now. */
  if (self->line_done || self->n_tokens == self->count)
    {
      if (!finish_record (self, NULL, 0, cancellable, error))
        return FALSE;
      self->state = STATE_DONE;
    }

  if (n_read != NULL)
    *n_read = got;
  return TRUE;
}

/* read_bytes() and read_typed_bytes(): the next values of the current
 * array, up to @max_values, as elements of @out_dtype in new bytes. */
static GBytes *
read_elements_bytes (SerioReader   *self,
                     SerioDtype     out_dtype,
                     gsize          max_values,
                     GCancellable  *cancellable,
                     GError       **error)
{
  gsize size = serio_dtype_get_size (out_dtype);
  gsize want, room, got = 0;
  char *values;

  if (!check_usable (self, error))
    return NULL;

  want = MIN ((guint64) max_values, serio_reader_get_n_left (self));
  want = MIN (want, G_MAXSIZE / size);

  /* The room grows with the values that really come, not with the count
   * the text declares. */
  if (want == 0)
    return g_bytes_new (NULL, 0);
  room = MIN (want, FIRST_BYTES_ROOM);
  values = g_malloc (room * size);

  for (;;)
    {
      gsize n;

      if (!read_elements (self, out_dtype, values + got * size, room - got, &n, cancellable, error))
        {
          g_free (values);
          return NULL;
        }
      got += n;
      if (n == 0 || got == want)
        break;
      if (got == room)
        {
          room = room > want / 2 ? want : room * 2;
          values = g_realloc (values, room * size);
        }
    }

  if (got < room)
    values = g_realloc (values, got * size);

  return g_bytes_new_take (values, got * size);
}

/**
 * serio_reader_read_values: (skip)
 * @self: a #SerioReader
 * @values: (array length=n_values): room for the values
 * @n_values: the number of values wanted
 * @n_read: (out): return location for the number of values read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the next values of the current array into @values: as many as
 * @n_values or as the array has left ([method@Serio.Reader.get_n_left]),
 * whichever is fewer; 0 at the end of the array. Reading the last value
 * also checks that the record ends there.
 *
 * The values are provisional until the whole text was read (see the
 * description of #SerioReader).
 *
 * Bindings, which cannot hand over a buffer of their own, use
 * [method@Serio.Reader.read_bytes].
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_reader_read_values (SerioReader   *self,
                          double        *values,
                          gsize          n_values,
                          gsize         *n_read,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);
  g_return_val_if_fail (values != NULL || n_values == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return read_elements (self, SERIO_DTYPE_FLOAT64, values, n_values, n_read, cancellable, error);
}

/**
 * serio_reader_read_bytes:
 * @self: a #SerioReader
 * @max_values: the most values to read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the next values of the current array like
 * [method@Serio.Reader.read_values], as native-endian 64-bit floats in a
 * new #GBytes: empty at the end of the array.
 *
 * This is the fast path to bindings: in Python,
 * `numpy.frombuffer(reader.read_bytes(1 << 20).get_data(), dtype=numpy.float64)`.
 *
 * Returns: (transfer full): the values, or %NULL with @error set
 */
GBytes *
serio_reader_read_bytes (SerioReader   *self,
                         gsize          max_values,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return read_elements_bytes (self, SERIO_DTYPE_FLOAT64, max_values, cancellable, error);
}

/* Reads the current record, of @n_values elements, whole into @out, and
 * checks its end, as the last of a series of read_typed() calls does. */
static gboolean
read_whole (SerioReader   *self,
            gpointer       out,
            gsize          n_values,
            GCancellable  *cancellable,
            GError       **error)
{
  gsize element_size = serio_dtype_get_size (self->dtype), got = 0, n = 0;

  while (got < n_values)
    {
      if (!read_elements (self, self->dtype, (char *) out + got * element_size, n_values - got,
                          &n, cancellable, error))
        return FALSE;
      if (n == 0)
        break;
      got += n;
    }
  /* A record of no values, or of fewer than it declares, is checked by
   * an empty read, which fails it in the second case. */
  if (self->state == STATE_VALUES &&
      !read_elements (self, self->dtype, NULL, 0, &n, cancellable, error))
    return FALSE;
  g_assert (got == n_values && self->state == STATE_DONE);
  return TRUE;
}

/**
 * SerioRecordInfo:
 * @name: the record's base name ([method@Serio.Reader.get_base_name])
 * @dims: (array length=n_dims): its dimensions
 *   ([method@Serio.Reader.get_shape])
 * @offset: where its elements start, in bytes from the start of the
 *   buffer: a multiple of 8
 * @n_values: the number of its elements
 * @dtype: their type
 * @n_dims: the number of its dimensions (0 for a 0-d array, which holds
 *   one value)
 *
 * An array that [method@Serio.Reader.read_records] read whole. @name and
 * @dims belong to the reader and are valid until its next call. The
 * names of one call are stored one after the other, each ended by a NUL,
 * and so are the dimensions, in the order of the records: a binding can
 * take each block in one piece.
 *
 * It also describes an array to [method@Serio.Writer.write_records], which
 * reads every field but @offset (the elements of each array are given
 * apart) and keeps no pointer.
 */

/* Points the name and dims of the first @n of @records, which hold where
 * in the blocks these are, at them. */
static void
set_record_pointers (SerioReader     *self,
                     SerioRecordInfo *records,
                     gsize            n)
{
  for (gsize i = 0; i < n; i++)
    {
      records[i].name = self->batch_names->str + GPOINTER_TO_SIZE (records[i].name);
      records[i].dims = (const guint64 *) (gpointer) self->batch_dims->data +
                        GPOINTER_TO_SIZE (records[i].dims);
    }
}

/**
 * serio_reader_read_records: (skip)
 * @self: a #SerioReader
 * @buffer: (nullable): memory for the elements, aligned to 8 bytes
 * @buffer_size: the bytes of @buffer
 * @records: (array length=max_records): room for the arrays read
 * @max_records: the most arrays to read
 * @n_records: (out): return location for the number of arrays read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Moves to the next array and reads it whole into @buffer, as
 * [method@Serio.Reader.next] and [method@Serio.Reader.read_typed] would,
 * then the one after it, and so on: each one's elements in its own type,
 * from the first multiple of 8 bytes after the elements of the one
 * before, and described in @records. This is for texts of many small
 * arrays (the tensors of a model's layers): one call reads thousands of
 * them, their values parsed together on the threads, where reading each
 * one with calls of its own would cost more than its values do.
 *
 * The reader stops before @max_records arrays when the text ends, or at
 * an array whose elements would not fit in what is left of @buffer: that
 * array is then the current one, none of its values read, for the caller
 * to read as it would any array (so a buffer too small for the next array
 * reads none). After @max_records arrays, the current array is the last
 * one read.
 *
 * On an error (the text is not valid, or the stream fails, as
 * [method@Serio.Reader.next] and [method@Serio.Reader.read_typed] say),
 * nothing is handed back: what @buffer holds is undefined, and
 * *@n_records is the number of arrays read before the one that failed,
 * so that the caller can say which one it was. The record after them,
 * `records[*n_records]`, then describes that array when its values
 * failed, and has a %NULL name when its start did (or the stream).
 *
 * Bindings that hand the library their own memory (as Python's `serio`
 * package does) call this function; others read each array with
 * [method@Serio.Reader.read_typed_bytes].
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_reader_read_records (SerioReader      *self,
                           gpointer          buffer,
                           gsize             buffer_size,
                           SerioRecordInfo  *records,
                           gsize             max_records,
                           gsize            *n_records,
                           GCancellable     *cancellable,
                           GError          **error)
{
  gsize n = 0, used = 0;

  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);
  g_return_val_if_fail (buffer != NULL || buffer_size == 0, FALSE);
  g_return_val_if_fail ((guintptr) buffer % 8 == 0, FALSE);
  g_return_val_if_fail (records != NULL || max_records == 0, FALSE);
  g_return_val_if_fail (n_records != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *n_records = 0;
  if (self->batch_names == NULL)
    {
      self->batch_names = g_string_new (NULL);
      /* room reserved, so that the dimensions of 0-d arrays point into
       * the block too */
      self->batch_dims = g_array_sized_new (FALSE, FALSE, sizeof (guint64), 64);
    }
  g_string_truncate (self->batch_names, 0);
  g_array_set_size (self->batch_dims, 0);

  while (n < max_records)
    {
      const guint64 *shape;
      GError *local_error = NULL;
      gsize offset = used + (8 - used % 8) % 8, element_size, base_len, at;
      guint n_dims;

      if (!serio_reader_next (self, cancellable, &local_error))
        {
          if (local_error != NULL)
            {
              set_record_pointers (self, records, n);
              records[n] = (SerioRecordInfo) { NULL, NULL, 0, 0, SERIO_DTYPE_FLOAT64, 0 };
              *n_records = n;
              g_propagate_error (error, local_error);
              return FALSE;
            }
          break;
        }
      element_size = serio_dtype_get_size (self->dtype);
      if (offset > buffer_size || self->count > (buffer_size - offset) / element_size)
        break;

      /* The blocks grow as the records come: until they are whole, the
       * record holds where in them its name and dimensions are. */
      shape = record_shape (self, &base_len, &n_dims);
      records[n] = (SerioRecordInfo) {
        GSIZE_TO_POINTER (self->batch_names->len), GSIZE_TO_POINTER (self->batch_dims->len),
        offset, self->count, self->dtype, n_dims
      };
      /* (set_size() and a copy: about 50 instructions a record fewer
       * than g_string_append_len() and g_array_append_vals()) */
      at = self->batch_names->len;
      g_string_set_size (self->batch_names, at + base_len);
      memcpy (self->batch_names->str + at, self->name, base_len);
      g_string_append_c (self->batch_names, '\0');
      at = self->batch_dims->len;
      g_array_set_size (self->batch_dims, at + n_dims);
      for (guint i = 0; i < n_dims; i++)
        g_array_index (self->batch_dims, guint64, at + i) = shape[i];

      if (!read_whole (self, (char *) buffer + offset, self->count, cancellable, error))
        {
          set_record_pointers (self, records, n + 1);
          *n_records = n;
          return FALSE;
        }
      used = offset + self->count * element_size;
      n++;
    }

  set_record_pointers (self, records, n);
  *n_records = n;
  return TRUE;
}

/**
 * serio_reader_skip_array:
 * @self: a #SerioReader
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Skips what is left of the current array without parsing it: the reader
 * only looks for the end of its line (and hashes its bytes in a sealed
 * text). In a plain text, the skipped values are not validated.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_reader_skip_array (SerioReader   *self,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_usable (self, error))
    return FALSE;
  if (self->state != STATE_VALUES)
    return TRUE;

  if (!skip_line (self, cancellable, error))
    return FALSE;

  self->state = STATE_DONE;
  return TRUE;
}

/**
 * serio_reader_get_sealed:
 * @self: a #SerioReader
 *
 * Gets whether the text opened with the record of a sealed text, which the
 * reader then verifies. It is known once [method@Serio.Reader.next] has
 * been called.
 *
 * Returns: %TRUE for a sealed text
 */
gboolean
serio_reader_get_sealed (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);

  return self->seal.hash != NULL;
}

/**
 * serio_reader_get_finished:
 * @self: a #SerioReader
 *
 * Gets whether the reader reached the end of a valid text: only then are
 * the arrays and values it gave known to be valid.
 *
 * Returns: %TRUE once the whole text was read without an error
 */
gboolean
serio_reader_get_finished (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);

  return self->state == STATE_END;
}

/**
 * serio_reader_get_error_line:
 * @self: a #SerioReader
 *
 * Gets the 1-based line of the error in the text that made the reader
 * fail, as [func@Serio.Error.get_line] gives it from the error: the same
 * location, kept on the reader for bindings whose errors cannot carry it
 * (PyGObject makes a new exception from a #GError's domain, code and
 * message).
 *
 * Returns: the line of the error, or 0 when the reader has not failed or
 *   the failure is not one of the text (a %G_IO_ERROR of the stream)
 */
guint64
serio_reader_get_error_line (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->state == STATE_FAILED ? serio_error_get_line (self->failure) : 0;
}

/**
 * serio_reader_get_error_value_index:
 * @self: a #SerioReader
 *
 * Gets the 1-based index, within its record, of the value whose token made
 * the reader fail, as [func@Serio.Error.get_value_index] gives it from the
 * error; see [method@Serio.Reader.get_error_line].
 *
 * Returns: the index of the value, or 0 when the reader has not failed or
 *   the failure is not about one value
 */
guint64
serio_reader_get_error_value_index (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), 0);

  return self->state == STATE_FAILED ? serio_error_get_value_index (self->failure) : 0;
}

/* ------------------------------------------------------------------ */
/* Element types                                                      */
/* ------------------------------------------------------------------ */

/**
 * serio_reader_get_dtype:
 * @self: a #SerioReader
 *
 * Gets the element type of the current array, from the type marker of
 * its name (see #SerioDtype): %SERIO_DTYPE_FLOAT32 for
 * `w@float32[2x3]`, %SERIO_DTYPE_FLOAT64 for a name without a marker.
 *
 * The reader checks every value it parses against the type: a value the
 * type cannot hold exactly fails the read with %SERIO_ERROR_DOMAIN.
 * [method@Serio.Reader.read_values] and [method@Serio.Reader.read_bytes]
 * give the values as 64-bit floats whatever the type;
 * [method@Serio.Reader.read_typed] and
 * [method@Serio.Reader.read_typed_bytes] give them in the array's type.
 *
 * Returns: the element type, or %SERIO_DTYPE_FLOAT64 without a current
 *   array
 */
SerioDtype
serio_reader_get_dtype (SerioReader *self)
{
  g_return_val_if_fail (SERIO_IS_READER (self), SERIO_DTYPE_FLOAT64);

  return self->state == STATE_VALUES || self->state == STATE_DONE ? self->dtype : SERIO_DTYPE_FLOAT64;
}

/**
 * serio_reader_read_typed: (skip)
 * @self: a #SerioReader
 * @buffer: room for @n_values elements of the current array's type
 *   ([method@Serio.Reader.get_dtype]), aligned for that type
 * @n_values: the number of values wanted
 * @n_read: (out): return location for the number of values read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the next values of the current array like
 * [method@Serio.Reader.read_values], as elements of its type: floats for
 * a float32 array, 16-bit patterns for float16 and bfloat16, bytes 0 and 1
 * for bool (see #SerioDtype). For a float64 array this is
 * [method@Serio.Reader.read_values].
 *
 * Bindings use [method@Serio.Reader.read_typed_bytes].
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_reader_read_typed (SerioReader   *self,
                         gpointer       buffer,
                         gsize          n_values,
                         gsize         *n_read,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), FALSE);
  g_return_val_if_fail (buffer != NULL || n_values == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return read_elements (self, serio_reader_get_dtype (self), buffer, n_values, n_read,
                        cancellable, error);
}

/**
 * serio_reader_read_typed_bytes:
 * @self: a #SerioReader
 * @max_values: the most values to read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the next values of the current array like
 * [method@Serio.Reader.read_typed], as elements of its type in a new
 * #GBytes: empty at the end of the array. For a float64 array this is
 * [method@Serio.Reader.read_bytes].
 *
 * This is the fast path to bindings: in Python,
 * `numpy.frombuffer(reader.read_typed_bytes(1 << 20).get_data(), dtype=numpy.float32)`
 * for a float32 array; in GJS,
 * `new Float32Array(reader.read_typed_bytes(n, null).toArray().buffer)`.
 *
 * Returns: (transfer full): the values, or %NULL with @error set
 */
GBytes *
serio_reader_read_typed_bytes (SerioReader   *self,
                               gsize          max_values,
                               GCancellable  *cancellable,
                               GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return read_elements_bytes (self, serio_reader_get_dtype (self), max_values, cancellable, error);
}
