/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-reader-ahead.c: many short records, parsed together on the threads
 *
 * Copyright 2026 The libserio authors
 *
 * With several threads, a reader that reads a short record whole parses
 * the short records after it in the window with it, on the threads. These
 * tests read the same texts with one, two and four threads, from bytes,
 * from streams that hand out a few bytes at a time and from files (which
 * the reader reads on while the threads parse), through a small buffer,
 * whole and in pieces, with records skipped, and compare what
 * comes out byte for byte: the values, the names, base names and shapes,
 * and every error with its code, message, line and value index.
 */

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

static const SerioDtype dtypes[] = {
  SERIO_DTYPE_FLOAT32, SERIO_DTYPE_FLOAT64, SERIO_DTYPE_BOOL, SERIO_DTYPE_INT16,
  SERIO_DTYPE_BFLOAT16, SERIO_DTYPE_UINT8, SERIO_DTYPE_FLOAT16, SERIO_DTYPE_INT64,
  SERIO_DTYPE_UINT32, SERIO_DTYPE_INT8, SERIO_DTYPE_UINT16, SERIO_DTYPE_INT32,
  SERIO_DTYPE_UINT64,
};

/* @n random elements of @dtype that a v1 text holds (no NaN, whose
 * payload it does not keep; 64-bit integers within 2^53). */
static void
fill_elements (SerioDtype  dtype,
               guint8     *data,
               gsize       n)
{
  for (gsize i = 0; i < n; i++)
    {
      guint64 bits = ((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ();
      guint64 limit = G_GUINT64_CONSTANT (1) << 53;

      switch (dtype)
        {
        case SERIO_DTYPE_FLOAT64:
          while ((bits & G_GUINT64_CONSTANT (0x7ff0000000000000)) == G_GUINT64_CONSTANT (0x7ff0000000000000) &&
                 (bits & G_GUINT64_CONSTANT (0x000fffffffffffff)) != 0)
            bits >>= 1;
          memcpy (data + 8 * i, &bits, 8);
          break;
        case SERIO_DTYPE_FLOAT32:
          {
            guint32 b = (guint32) bits;

            if ((b & 0x7f800000) == 0x7f800000 && (b & 0x007fffff) != 0)
              b &= 0xff800000;
            memcpy (data + 4 * i, &b, 4);
          }
          break;
        case SERIO_DTYPE_FLOAT16:
        case SERIO_DTYPE_BFLOAT16:
          {
            guint16 b = (guint16) bits;
            guint16 exp = dtype == SERIO_DTYPE_FLOAT16 ? 0x7c00 : 0x7f80;

            if ((b & exp) == exp && (b & ~(exp | 0x8000)) != 0)
              b &= exp | 0x8000;
            memcpy (data + 2 * i, &b, 2);
          }
          break;
        case SERIO_DTYPE_INT64:
          {
            gint64 v = (gint64) (bits % (2 * limit + 1)) - (gint64) limit;

            memcpy (data + 8 * i, &v, 8);
          }
          break;
        case SERIO_DTYPE_UINT64:
          {
            guint64 v = bits % (limit + 1);

            memcpy (data + 8 * i, &v, 8);
          }
          break;
        case SERIO_DTYPE_BOOL:
          data[i] = bits & 1;
          break;
        default:
          memcpy (data + serio_dtype_get_size (dtype) * i, &bits, serio_dtype_get_size (dtype));
          break;
        }
    }
}

/* A text of @n_records records of the types above, in turn, of 1 to
 * @max_count values each (and now and then none, or a long one), of
 * shapes of 1 to 6 dims (the count at one of them, the others 1), with a
 * blank line after the record @blank_after (none when it is -1); the
 * bundle it was written from goes to @source unless that is %NULL. */
static GBytes *
make_text (guint          n_records,
           guint          max_count,
           SerioSaveFlags flags,
           int            blank_after,
           SerioBundle  **source)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; i < n_records; i++)
    {
      SerioDtype dtype = dtypes[i % G_N_ELEMENTS (dtypes)];
      guint64 count = i % 17 == 5 ? 0 : i % 41 == 7 ? 20000 :
                      (guint64) g_test_rand_int_range (1, max_count + 1);
      g_autofree guint8 *data = g_malloc (count * serio_dtype_get_size (dtype) + 1);
      g_autoptr(GBytes) bytes = NULL;
      g_autofree char *name = g_strdup_printf ("r%u", i);
      /* a vector mostly; the reader keeps the dims of a line parsed
       * ahead when there are up to four, and parses its name again for
       * more */
      guint n_dims = i % 3 != 0 ? 1 : 2 + (i / 3) % 5;
      guint64 shape[6] = { 1, 1, 1, 1, 1, 1 };

      shape[(i / 7) % n_dims] = count;
      fill_elements (dtype, data, count);
      bytes = g_bytes_new (data, count * serio_dtype_get_size (dtype));
      g_assert_true (serio_bundle_append_typed (bundle, name, dtype, shape, n_dims, bytes, &error));
      g_assert_no_error (error);
    }

  text = serio_bundle_to_bytes (bundle, flags);
  if (source != NULL)
    *source = g_object_ref (bundle);
  if (blank_after < 0)
    return g_steal_pointer (&text);

  /* A blank line inside a plain text (line 1 is the first record). */
  lines = g_strsplit (g_bytes_get_data (text, NULL), "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] == '\0' && lines[i + 1] == NULL)
        break;
      g_string_append (out, lines[i]);
      g_string_append_c (out, '\n');
      if ((int) i == blank_after)
        g_string_append_c (out, '\n');
    }
  return g_string_free_to_bytes (g_steal_pointer (&out));
}

typedef enum
{
  READ_WHOLE,      /* each record in one read_typed() call */
  READ_PIECES,     /* each third record in pieces, each fifth skipped */
  READ_VALUES,     /* read_values() into doubles, room for the whole record */
  READ_BUNDLE,     /* serio_bundle_new_from_reader() */
} ReadMode;

/* Where a reader reads the text from: its bytes, a stream that hands out
 * 3,001 bytes at a time, or a file (seekable, so that the reader reads
 * it on while the threads parse), both through a small buffer. */
typedef enum
{
  SOURCE_BYTES,
  SOURCE_STREAM,
  SOURCE_FILE,
} Source;

static SerioReader *
open_reader (GBytes *text,
             Source  source,
             guint   threads)
{
  g_autoptr(GInputStream) in = NULL;
  SerioReader *reader;

  if (source == SOURCE_BYTES)
    {
      reader = serio_reader_new_for_bytes (text);
      serio_reader_set_threads (reader, threads);
      return reader;
    }

  if (source == SOURCE_STREAM)
    {
      in = test_chunked_input_stream_new (text, 3001);
    }
  else
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = NULL;
      g_autoptr(GFile) file = NULL;
      int fd = g_file_open_tmp ("serio-ahead-XXXXXX", &path, &error);

      g_assert_no_error (error);
      close (fd);
      g_assert_true (g_file_set_contents (path, g_bytes_get_data (text, NULL),
                                          g_bytes_get_size (text), &error));
      g_assert_no_error (error);
      file = g_file_new_for_path (path);
      in = G_INPUT_STREAM (g_file_read (file, NULL, &error));
      g_assert_no_error (error);
      /* Open, it is read to its end all the same. */
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  reader = g_object_new (SERIO_TYPE_READER, "stream", in, "buffer-size", 96 * 1024, NULL);
  serio_reader_set_threads (reader, threads);
  return reader;
}

static void
describe_error (GString      *out,
                const GError *error,
                SerioReader  *reader)
{
  g_string_append_printf (out, "error %s %d \"%s\" line %" G_GUINT64_FORMAT " value %" G_GUINT64_FORMAT "\n",
                          g_quark_to_string (error->domain), error->code, error->message,
                          serio_error_get_line (error), serio_error_get_value_index (error));
  if (reader != NULL)
    g_string_append_printf (out, "reader line %" G_GUINT64_FORMAT " value %" G_GUINT64_FORMAT "\n",
                            serio_reader_get_error_line (reader),
                            serio_reader_get_error_value_index (reader));
}

static void
append_hex (GString       *out,
            gconstpointer  data,
            gsize          len)
{
  static const char digits[] = "0123456789abcdef";
  gsize at = out->len;

  g_string_set_size (out, at + 2 * len + 1);
  for (gsize i = 0; i < len; i++)
    {
      out->str[at + 2 * i] = digits[((const guint8 *) data)[i] >> 4];
      out->str[at + 2 * i + 1] = digits[((const guint8 *) data)[i] & 15];
    }
  out->str[at + 2 * len] = '\n';
}

/* A record's base name and shape, one line. */
static void
append_shape (GString       *out,
              const char    *base,
              const guint64 *shape,
              guint          n_dims)
{
  g_string_append (out, base);
  for (guint i = 0; i < n_dims; i++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, i == 0 ? " " : "x", shape[i]);
  g_string_append_c (out, '\n');
}

/* Each array of @bundle: its name, base name and shape, and the bytes of
 * its values. */
static void
describe_bundle (GString     *out,
                 SerioBundle *bundle)
{
  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      g_autoptr(GBytes) bytes = serio_bundle_get_typed_bytes (bundle, i);
      gsize len;
      gconstpointer data = g_bytes_get_data (bytes, &len);
      g_autofree char *base = serio_bundle_get_base_name (bundle, i);
      guint n_dims;
      g_autofree guint64 *shape = serio_bundle_get_shape (bundle, i, &n_dims);

      g_string_append_printf (out, "%s\n", serio_bundle_get_name (bundle, i));
      append_shape (out, base, shape, n_dims);
      append_hex (out, data, len);
    }
}

/* What reading @text in @mode gives, as text: each record's name, base
 * name and shape and the bytes of its values, and the error that ends
 * it, if any. */
static char *
transcript (GBytes   *text,
            Source    source,
            guint     threads,
            ReadMode  mode)
{
  g_autoptr(SerioReader) reader = open_reader (text, source, threads);
  GString *out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  guint index = 0;

  if (mode == READ_BUNDLE)
    {
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_reader (reader, NULL, &error);

      if (bundle == NULL)
        {
          describe_error (out, error, NULL);
          return g_string_free (out, FALSE);
        }
      describe_bundle (out, bundle);
      return g_string_free (out, FALSE);
    }

  while (serio_reader_next (reader, NULL, &error))
    {
      SerioDtype dtype = serio_reader_get_dtype (reader);
      gsize size = mode == READ_VALUES ? sizeof (double) : serio_dtype_get_size (dtype);
      guint64 count = serio_reader_get_n_values (reader);
      g_autofree void *room = g_malloc (count * size + 1);
      guint8 *data = room;
      gsize got = 0, n = 0;
      gboolean ok = TRUE;

      g_autofree char *base = serio_reader_get_base_name (reader);
      guint n_dims;
      g_autofree guint64 *shape = serio_reader_get_shape (reader, &n_dims);

      g_string_append_printf (out, "%s\n", serio_reader_get_name (reader));
      append_shape (out, base, shape, n_dims);
      if (mode == READ_PIECES && index % 5 == 4)
        {
          ok = serio_reader_skip_array (reader, NULL, &error);
          g_string_append (out, "skipped\n");
        }
      else if (mode == READ_PIECES && index % 3 == 2)
        {
          do
            {
              ok = serio_reader_read_typed (reader, data + got * size, MIN (count - got, 7), &n,
                                            NULL, &error);
              got += n;
            }
          while (ok && n > 0);
          append_hex (out, data, got * size);
        }
      else
        {
          /* The room of the whole record, then an empty read at its end. */
          if (mode == READ_VALUES)
            ok = serio_reader_read_values (reader, room, count, &got, NULL, &error);
          else
            ok = serio_reader_read_typed (reader, data, count, &got, NULL, &error);
          if (ok)
            ok = serio_reader_read_typed (reader, NULL, 0, &n, NULL, &error);
          append_hex (out, data, got * size);
        }
      if (!ok)
        break;
      index++;
    }

  if (error != NULL)
    describe_error (out, error, reader);
  else
    g_string_append_printf (out, "end, finished %d\n", serio_reader_get_finished (reader));
  return g_string_free (out, FALSE);
}

/* Reads @text every way with 1, 2 and 4 threads and checks that the
 * threads change nothing; returns the one-thread transcript of the
 * whole reads from bytes. */
static char *
check_same (GBytes *text)
{
  char *reference = transcript (text, SOURCE_BYTES, 1, READ_WHOLE);

  for (ReadMode mode = READ_WHOLE; mode <= READ_BUNDLE; mode++)
    {
      for (Source source = SOURCE_BYTES; source <= SOURCE_FILE; source++)
        {
          g_autofree char *one = transcript (text, source, 1, mode);

          for (guint threads = 2; threads <= 4; threads += 2)
            {
              g_autofree char *many = transcript (text, source, threads, mode);

              if (g_strcmp0 (one, many) != 0)
                g_test_message ("mode %d, source %d, %u threads", mode, source, threads);
              g_assert_cmpstr (one, ==, many);
            }
          if (mode == READ_WHOLE)
            g_assert_cmpstr (one, ==, reference);
        }
    }

  return reference;
}

static void
test_same_values (void)
{
  g_test_summary ("Many short records of every type read the same with 1, 2 and 4 threads, "
                  "from bytes, a stream and a file, whole, in pieces, skipped and into a bundle, "
                  "and give back the bits that were written.");

  for (guint round = 0; round < 4; round++)
    {
      SerioSaveFlags flags = round % 2 == 0 ? SERIO_SAVE_FLAGS_NONE : SERIO_SAVE_FLAGS_PLAIN;
      guint max_count = round < 2 ? 40 : 700;
      guint n_records = (round < 2 ? 3000 : 400) / (test_slow_tool () ? 10 : 1);
      g_autoptr(SerioBundle) source = NULL;
      g_autoptr(GBytes) text = make_text (n_records, max_count, flags, round == 3 ? 15 : -1,
                                          &source);
      g_autofree char *reference = check_same (text);
      g_autoptr(GString) expected = g_string_new (NULL);

      /* What one thread reads is what was written: the elements the text
       * was made from. */
      describe_bundle (expected, source);
      g_string_append (expected, "end, finished 1\n");
      g_assert_cmpstr (reference, ==, expected->str);
    }
}

/* @text with line @line (0-based) changed by @edit. */
typedef void (*LineEdit) (GString *line);

static GBytes *
edit_line (GBytes   *text,
           guint     line,
           LineEdit  edit)
{
  g_auto(GStrv) lines = g_strsplit (g_bytes_get_data (text, NULL), "\n", -1);
  GString *out = g_string_new (NULL);

  g_assert_cmpuint (line, <, g_strv_length (lines) - 1);
  for (guint i = 0; lines[i + 1] != NULL; i++)
    {
      g_autoptr(GString) piece = g_string_new (lines[i]);

      if (i == line)
        edit (piece);
      g_string_append_len (out, piece->str, piece->len);
      g_string_append_c (out, '\n');
    }
  return g_string_free_to_bytes (out);
}

/* The offset of the values of a record line (after its third "|"). */
static gsize
values_at (const GString *line)
{
  const char *p = line->str;

  for (int i = 0; i < 3; i++)
    p = strchr (p, '|') + 1;
  return p - line->str;
}

static void
bad_token (GString *line)
{
  g_string_insert (line, values_at (line), "1x5,");
}

static void
empty_token (GString *line)
{
  g_string_insert (line, values_at (line), ",");
}

static void
too_large (GString *line)
{
  /* 2^200: a float32, bool or int16 cannot hold it */
  g_string_insert (line, values_at (line), "1p200,");
  /* … and the count stays right: one token less at the end */
  g_string_truncate (line, strrchr (line->str, ',') - line->str);
}

static void
one_more (GString *line)
{
  g_string_append (line, ",1");
}

static void
one_less (GString *line)
{
  char *comma = strrchr (line->str, ',');

  if (comma != NULL && comma > line->str + values_at (line))
    g_string_truncate (line, comma - line->str);
  else
    g_string_append (line, ",1,1");
}

static void
bad_version (GString *line)
{
  line->str[1] = '2';
}

static void
bad_count (GString *line)
{
  char *bar = strchr (strchr (line->str, '|') + 1, '|');

  g_string_insert_c (line, bar + 1 - line->str, '9');
}

static void
carriage_return (GString *line)
{
  g_string_append_c (line, '\r');
}

/* Whether a transcript ends with an error. */
static gboolean
ends_in_error (const char *transcript)
{
  const char *last = strstr (transcript, "error ");

  while (last != NULL && last != transcript && last[-1] != '\n')
    last = strstr (last + 1, "error ");
  return last != NULL;
}

static void
test_same_errors (void)
{
  static const struct {
    const char *what;
    LineEdit    edit;
  } edits[] = {
    { "a bad token", bad_token },
    { "an empty token", empty_token },
    { "a value its type cannot hold", too_large },
    { "one value too many", one_more },
    { "one value too few", one_less },
    { "another version", bad_version },
    { "a count too large", bad_count },
    { "a CR LF line end", carriage_return },
  };
  /* Records 0, 1 and 2 of a batch, one in the middle and the last (under
   * a slow tool, the first, the third and the one in the middle). */
  static const guint lines[] = { 1, 3, 57, 2, 199 };
  guint n_lines = test_slow_tool () ? 3 : G_N_ELEMENTS (lines);

  g_test_summary ("A bad record among many short ones gives the same error, naming the same "
                  "line and value, with 1, 2 and 4 threads, in every way of reading; the "
                  "records before it read the same.");

  for (guint sealed = 0; sealed <= 1; sealed++)
    {
      g_autoptr(GBytes) text = make_text (test_slow_tool () ? 80 : 200, 60,
                                          sealed ? SERIO_SAVE_FLAGS_NONE : SERIO_SAVE_FLAGS_PLAIN, -1,
                                          NULL);

      for (guint e = 0; e < G_N_ELEMENTS (edits); e++)
        for (guint l = 0; l < n_lines; l++)
          {
            /* A sealed text's first line is its opening record. */
            g_autoptr(GBytes) bad = edit_line (text, lines[l] - 1 + sealed, edits[e].edit);
            g_autofree char *reference = NULL;

            g_test_message ("%s on line %u, %s", edits[e].what, lines[l] + sealed,
                            sealed ? "sealed" : "plain");
            reference = check_same (bad);
            /* A CR LF end is valid in a plain text, and so is 2^200 in
             * a float64 record; everything else is refused, as is any
             * change to a sealed text. */
            if (sealed || !(edits[e].edit == carriage_return ||
                            (edits[e].edit == too_large &&
                             dtypes[(lines[l] - 1) % G_N_ELEMENTS (dtypes)] == SERIO_DTYPE_FLOAT64)))
              g_assert_true (ends_in_error (reference));
          }

      /* Cut short: the last line without its line feed. */
      {
        g_autoptr(GBytes) cut = g_bytes_new_from_bytes (text, 0, g_bytes_get_size (text) - 1);
        g_autofree char *reference = check_same (cut);

        g_assert_true (ends_in_error (reference));
      }
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader-ahead/same-values", test_same_values);
  g_test_add_func ("/reader-ahead/same-errors", test_same_errors);

  return g_test_run ();
}
