/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sniff.c: what every reader says of a file in another format
 *
 * Copyright 2026 The libserio authors
 *
 * A text whose first record does not start with “v1|” (nor a version tag
 * such as “v2|”) is not a serio file: the error is SERIO_ERROR_SYNTAX on
 * that line, “not a serio file”, and what the leading bytes look like
 * where they are those of a known format, never that the input was cut
 * short. Each fixture is made here, byte by byte, and read from memory
 * (bytes and, without a NUL, a string), through a SerioReader fed the
 * whole text and one byte at a time, and from a file.
 */

#include <string.h>

#include <glib/gstdio.h>
#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

typedef struct
{
  const char *what;
  GBytes     *bytes;
  gulong      line;
  const char *message;   /* after "Line N: " */
} Fixture;

static GByteArray *
bytes_of (const char *data,
          gsize       len)
{
  GByteArray *array = g_byte_array_new ();

  g_byte_array_append (array, (const guint8 *) data, len);
  return array;
}

#define BYTES_OF(literal) bytes_of ((literal), sizeof (literal) - 1)

/* Binary junk after the leading bytes, with line feeds in it, and not
 * ending with one: a reader that looked at its end would call it cut
 * short. */
static GBytes *
with_tail (GByteArray *array)
{
  for (guint i = 0; i < 3000; i++)
    {
      guint8 byte = (guint8) (i * 131 + 7);

      g_byte_array_append (array, &byte, 1);
    }
  return g_byte_array_free_to_bytes (array);
}

/* The start of a zip archive whose first member is @name. */
static GByteArray *
zip_with_first_member (const char *name)
{
  GByteArray *array = BYTES_OF ("PK\x03\x04" "\x14\0" "\0\0" "\0\0" "\0\0\0\0" "\0\0\0\0"
                                "\x10\0\0\0" "\x10\0\0\0");
  guint8 name_len[2] = { (guint8) strlen (name), 0 };

  g_assert_cmpuint (array->len, ==, 26);
  g_byte_array_append (array, name_len, 2);
  g_byte_array_append (array, (const guint8 *) "\0\0", 2);
  g_byte_array_append (array, (const guint8 *) name, strlen (name));
  return array;
}

static void
fixture_free (gpointer data)
{
  Fixture *f = data;

  g_bytes_unref (f->bytes);
  g_free (f);
}

static GPtrArray *
make_fixtures (void)
{
  GPtrArray *fixtures = g_ptr_array_new_with_free_func (fixture_free);

#define ADD(what_, bytes_, line_, message_)                                     \
  G_STMT_START {                                                                \
    Fixture *f = g_new0 (Fixture, 1);                                           \
    *f = (Fixture) { what_, bytes_, line_, message_ };                          \
    g_ptr_array_add (fixtures, f);                                              \
  } G_STMT_END

  ADD ("npz", with_tail (zip_with_first_member ("weights.npy")), 1,
       "not a serio file: it looks like a NumPy .npz archive; `serio convert` reads it");
  ADD ("torch zip", with_tail (zip_with_first_member ("archive/data.pkl")), 1,
       "not a serio file: it looks like a PyTorch .pt file (a zip archive); save its tensors "
       "as NumPy arrays (.npz), which `serio convert` reads");
  ADD ("torch zip named", with_tail (zip_with_first_member ("resnet18/data.pkl")), 1,
       "not a serio file: it looks like a PyTorch .pt file (a zip archive); save its tensors "
       "as NumPy arrays (.npz), which `serio convert` reads");
  ADD ("other zip", with_tail (zip_with_first_member ("notes.txt")), 1,
       "not a serio file: it looks like a zip archive (NumPy .npz or PyTorch .pt); "
       "`serio convert` reads a NumPy .npz");
  ADD ("zip cut in its first name", g_byte_array_free_to_bytes (BYTES_OF ("PK\x03\x04\x14\0")), 1,
       "not a serio file: it looks like a zip archive (NumPy .npz or PyTorch .pt); "
       "`serio convert` reads a NumPy .npz");
  ADD ("empty zip", g_byte_array_free_to_bytes (BYTES_OF ("PK\x05\x06" "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0")), 1,
       "not a serio file: it looks like an empty zip archive");
  ADD ("npy", with_tail (BYTES_OF ("\x93NUMPY\x01\0v\0{'descr': '<f8', 'fortran_order': False, "
                                   "'shape': (3,), }")), 1,
       "not a serio file: it looks like a NumPy .npy file; `serio convert` reads it");
  ADD ("safetensors", with_tail (BYTES_OF ("\x40\0\0\0\0\0\0\0{\"w\":{\"dtype\":\"F32\"")), 1,
       "not a serio file: it looks like a safetensors file");
  ADD ("empty safetensors", g_byte_array_free_to_bytes (BYTES_OF ("\x02\0\0\0\0\0\0\0{}")), 1,
       "not a serio file: it looks like a safetensors file");
  ADD ("gguf", with_tail (BYTES_OF ("GGUF\x03\0\0\0")), 1,
       "not a serio file: it looks like a GGUF file");
  ADD ("hdf5", with_tail (BYTES_OF ("\x89HDF\r\n\x1a\n")), 1,
       "not a serio file: it looks like an HDF5 file");
  ADD ("gzip", with_tail (BYTES_OF ("\x1f\x8b\x08\0")), 1,
       "not a serio file: it looks like gzip-compressed data: decompress it first");
  ADD ("zstd", with_tail (BYTES_OF ("\x28\xb5\x2f\xfd")), 1,
       "not a serio file: it looks like zstd-compressed data: decompress it first");
  ADD ("xz", with_tail (BYTES_OF ("\xfd" "7zXZ\0")), 1,
       "not a serio file: it looks like xz-compressed data: decompress it first");
  ADD ("old torch", with_tail (BYTES_OF ("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")), 1,
       "not a serio file: it looks like a PyTorch .pt file of the format before PyTorch 1.6 "
       "(a pickle)");
  for (const char *protocol = "\x02\x03\x04\x05"; *protocol != '\0'; protocol++)
    {
      char pickle[] = { '\x80', *protocol, '\x95', 'x' };

      ADD ("pickle", with_tail (bytes_of (pickle, sizeof pickle)), 1,
           "not a serio file: it looks like a Python pickle");
    }
  ADD ("elf", with_tail (BYTES_OF ("\x7f" "ELF\x02\x01\x01")), 1,
       "not a serio file: it looks like an ELF program or library");
  ADD ("bom", g_byte_array_free_to_bytes (BYTES_OF ("\xef\xbb\xbfv1|w|1|1\n")), 1,
       "not a serio file: it starts with a UTF-8 byte order mark, which a serio file does "
       "not have");

  /* Unknown formats, and what is neither a record nor a version tag. */
  ADD ("text", g_byte_array_free_to_bytes (BYTES_OF ("hello, world")), 1, "not a serio file");
  ADD ("pickle protocol 1", with_tail (BYTES_OF ("\x80\x01")), 1, "not a serio file");
  ADD ("v1 without a bar", g_byte_array_free_to_bytes (BYTES_OF ("v1\nv1|w|1|1\n")), 1, "not a serio file");
  ADD ("v and a letter", g_byte_array_free_to_bytes (BYTES_OF ("vx|w|1|1\n")), 1, "not a serio file");
  ADD ("v without digits", g_byte_array_free_to_bytes (BYTES_OF ("v|w|1|1\n")), 1, "not a serio file");
  ADD ("blank lines first", with_tail (BYTES_OF ("\n\r\nPK\x03\x04")), 3,
       "not a serio file: it looks like a zip archive (NumPy .npz or PyTorch .pt); "
       "`serio convert` reads a NumPy .npz");

#undef ADD

  return fixtures;
}

static void
assert_not_serio (const GError  *error,
                  const Fixture *f,
                  const char    *how)
{
  g_autofree char *expected = g_strdup_printf ("Line %lu: %s", f->line, f->message);

  g_test_message ("%s, %s: %s", f->what, how, error != NULL ? error->message : "(no error)");
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
  g_assert_cmpuint (serio_error_get_line (error), ==, f->line);
  g_assert_cmpstr (serio_error_get_detail (error), ==, f->message);
  g_assert_nonnull (strstr (error->message, expected));
}

static void
test_from_memory (void)
{
  g_autoptr(GPtrArray) fixtures = make_fixtures ();

  g_test_summary ("from_bytes (and from_string, for a fixture without a NUL) of "
                  "each format: SERIO_ERROR_SYNTAX at the first record's line, "
                  "“not a serio file” and what it looks like.");

  for (guint i = 0; i < fixtures->len; i++)
    {
      const Fixture *f = fixtures->pdata[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_bytes (f->bytes, &error);
      gsize len;
      const char *data = g_bytes_get_data (f->bytes, &len);

      g_assert_null (bundle);
      assert_not_serio (error, f, "from_bytes");

      if (memchr (data, '\0', len) == NULL)
        {
          g_autofree char *text = g_strndup (data, len);
          g_autoptr(GError) string_error = NULL;
          g_autoptr(SerioBundle) from_string = serio_bundle_new_from_string (text, &string_error);

          g_assert_null (from_string);
          assert_not_serio (string_error, f, "from_string");
        }
    }
}

static void
check_reader (const Fixture *f,
              GInputStream  *stream,
              const char    *how)
{
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) again = NULL;

  g_assert_false (serio_reader_next (reader, NULL, &error));
  assert_not_serio (error, f, how);
  /* The failure stays. */
  g_assert_false (serio_reader_next (reader, NULL, &again));
  assert_not_serio (again, f, how);
}

static void
test_reader (void)
{
  g_autoptr(GPtrArray) fixtures = make_fixtures ();

  g_test_summary ("A SerioReader of each format, fed the whole text at once and one "
                  "byte per read: the same error as from_bytes.");

  for (guint i = 0; i < fixtures->len; i++)
    {
      const Fixture *f = fixtures->pdata[i];
      g_autoptr(GInputStream) whole = g_memory_input_stream_new_from_bytes (f->bytes);
      g_autoptr(GInputStream) bytewise = test_chunked_input_stream_new (f->bytes, 1);

      check_reader (f, whole, "reader");
      check_reader (f, bytewise, "reader, one byte per read");
    }
}

static void
test_from_file (void)
{
  g_autoptr(GPtrArray) fixtures = make_fixtures ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("serio-sniff-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "model.serio", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  g_test_summary ("from_file of each format: the same error as from_bytes.");

  g_assert_no_error (error);
  for (guint i = 0; i < fixtures->len; i++)
    {
      const Fixture *f = fixtures->pdata[i];
      g_autoptr(GError) load_error = NULL;
      g_autoptr(SerioBundle) bundle = NULL;
      gsize len;
      const char *data = g_bytes_get_data (f->bytes, &len);

      g_assert_true (g_file_set_contents (path, data, len, &load_error));
      bundle = serio_bundle_new_from_file (file, NULL, NULL, NULL, &load_error);
      g_assert_null (bundle);
      assert_not_serio (load_error, f, "from_file");
    }
  g_assert_no_errno (g_unlink (path));
  g_assert_no_errno (g_rmdir (dir));
}

/* What is not the first record, or is a record, keeps its own error. */
static void
test_others_unchanged (void)
{
  static const struct
  {
    const char *text;
    int         code;
    gulong      line;
  } cases[] = {
    { "v2|w|1|1\n", SERIO_ERROR_VERSION, 1 },
    { "V1|w|1|1\n", SERIO_ERROR_VERSION, 1 },
    { "v10|w|1|1\n", SERIO_ERROR_VERSION, 1 },
    { "v1", SERIO_ERROR_TRUNCATED, 1 },
    { "v", SERIO_ERROR_TRUNCATED, 1 },
    { "v12", SERIO_ERROR_TRUNCATED, 1 },
    { "v1|w|1|1", SERIO_ERROR_TRUNCATED, 1 },
    { "v1|w|1|1\nPK\x03\x04\n", SERIO_ERROR_SYNTAX, 2 },
    { "v1|w|1|1\nhello", SERIO_ERROR_TRUNCATED, 2 },
  };

  g_test_summary ("A version tag other than v1 stays SERIO_ERROR_VERSION, a prefix "
                  "of “v1|” cut short stays SERIO_ERROR_TRUNCATED, and a bad line "
                  "after the first record is reported as before, not as another "
                  "format, by from_bytes and by a reader one byte at a time.");

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GBytes) bytes = g_bytes_new_static (cases[i].text, strlen (cases[i].text));
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) reader_error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_bytes (bytes, &error);
      g_autoptr(GInputStream) stream = test_chunked_input_stream_new (bytes, 1);
      g_autoptr(SerioReader) reader = serio_reader_new (stream);

      g_test_message ("%s: %s", cases[i].text, error != NULL ? error->message : "(no error)");
      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, cases[i].code);
      g_assert_cmpuint (serio_error_get_line (error), ==, cases[i].line);
      g_assert_null (strstr (error->message, "not a serio file"));

      while (serio_reader_next (reader, NULL, &reader_error) && !serio_reader_get_finished (reader) &&
             serio_reader_skip_array (reader, NULL, &reader_error))
        ;
      g_assert_error (reader_error, SERIO_ERROR, cases[i].code);
      g_assert_cmpstr (reader_error->message, ==, error->message);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sniff/from-memory", test_from_memory);
  g_test_add_func ("/sniff/reader", test_reader);
  g_test_add_func ("/sniff/from-file", test_from_file);
  g_test_add_func ("/sniff/others-unchanged", test_others_unchanged);

  return g_test_run ();
}
