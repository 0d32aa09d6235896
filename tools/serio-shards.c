/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-shards.c: sharded checkpoints in serio check and serio convert
 *
 * Copyright 2026 The libserio authors
 *
 * A sharded serio checkpoint is MODEL.serio.index.json and the sealed
 * serio files it names (docs/checkpoints.md); the library reads it
 * (serio_reader_new_for_index()), checking every shard against the index.
 * `serio check INDEX` reads it through; `serio convert` turns Hugging
 * Face's MODEL.safetensors.index.json and its shards into one, and back,
 * each shard converted as convert converts one file. The indexes are read
 * with the library's strict JSON reader.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "serio-json-private.h"
#include "serio-safetensors.h"
#include "serio-shards.h"
#include "serio-tool.h"

#define INDEX_SUFFIX ".index.json"
#define SERIO_INDEX_SUFFIX ".serio.index.json"
#define SAFETENSORS_INDEX_SUFFIX ".safetensors.index.json"
/* The seal record: "v1|serio.seal|3|SCHEME,SIZE,HASH". */
#define SEAL_PREFIX "v1|" SERIO_TOOL_SEAL_NAME "|3|"
#define MAX_INDEX_SIZE (256 * 1024 * 1024)

/* Values are read into a scratch buffer of this many. */
#define SCRATCH_VALUES (64 * 1024)

gboolean
serio_tool_is_index (const char *path)
{
  return g_str_has_suffix (path, INDEX_SUFFIX);
}

/* What the tool needs of an index: its weight map in order, and its
 * shards in order (a serio index's "shards", or the files of a
 * safetensors index's weight map as they first come). */
typedef struct
{
  GPtrArray *keys;
  GPtrArray *files;    /* the file of each key */
  GPtrArray *shards;
} IndexText;

static void
index_text_free (IndexText *index)
{
  g_ptr_array_unref (index->keys);
  g_ptr_array_unref (index->files);
  g_ptr_array_unref (index->shards);
  g_free (index);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (IndexText, index_text_free)

static gboolean
has_string (GPtrArray  *array,
            const char *text)
{
  return g_ptr_array_find_with_equal_func (array, text, g_str_equal, NULL);
}

static gboolean
plain_file_name (const char *name)
{
  return *name != '\0' && strcmp (name, ".") != 0 && strcmp (name, "..") != 0 &&
         strchr (name, '/') == NULL && strchr (name, '\\') == NULL;
}

static gboolean
read_weight_map (SerioJson  *j,
                 IndexText  *index,
                 gboolean    add_shards,
                 GError    **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  if (!serio_json_expect (j, '{', error))
    return FALSE;
  if (serio_json_accept (j, '}'))
    return TRUE;
  do
    {
      char *key = serio_json_string (j, error);
      char *file;

      if (key == NULL)
        return FALSE;
      g_ptr_array_add (index->keys, key);
      if (!g_hash_table_add (seen, key))
        return serio_json_error (j, _("the weight map lists a key twice"), error);
      if (!serio_json_expect (j, ':', error))
        return FALSE;
      file = serio_json_string (j, error);
      if (file == NULL)
        return FALSE;
      g_ptr_array_add (index->files, file);
      if (!plain_file_name (file))
        return serio_json_error (j, _("a shard's name is not the name of a file beside the "
                                      "index"), error);
      if (add_shards && !has_string (index->shards, file))
        g_ptr_array_add (index->shards, g_strdup (file));
    }
  while (serio_json_accept (j, ','));
  return serio_json_expect (j, '}', error);
}

static gboolean
read_shard_names (SerioJson  *j,
                  IndexText  *index,
                  GError    **error)
{
  if (!serio_json_expect (j, '{', error))
    return FALSE;
  if (serio_json_accept (j, '}'))
    return TRUE;
  do
    {
      char *name = serio_json_string (j, error);

      if (name == NULL)
        return FALSE;
      g_ptr_array_add (index->shards, name);
      if (!plain_file_name (name))
        return serio_json_error (j, _("a shard's name is not the name of a file beside the "
                                      "index"), error);
      if (!serio_json_expect (j, ':', error) || !serio_json_skip_value (j, error))
        return FALSE;
    }
  while (serio_json_accept (j, ','));
  return serio_json_expect (j, '}', error);
}

static int
compare_keys (gconstpointer a,
              gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Reads an index: a serio one (its "shards" name the shards) or a
 * safetensors one (its weight map does). Errors name the file. */
static IndexText *
read_index (const char  *path,
            gboolean     serio,
            GError     **error)
{
  g_autoptr(IndexText) index = g_new0 (IndexText, 1);
  g_autofree char *display = g_filename_display_name (path);
  g_autofree char *text = NULL;
  gboolean has_map = FALSE, has_metadata = FALSE, has_shards = FALSE, has_tree = FALSE;
  GStatBuf st;
  gsize len;
  SerioJson j;

  index->keys = g_ptr_array_new_with_free_func (g_free);
  index->files = g_ptr_array_new_with_free_func (g_free);
  index->shards = g_ptr_array_new_with_free_func (g_free);

  if (g_stat (path, &st) == 0 && st.st_size > MAX_INDEX_SIZE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a file name */
                   _("%s: the index is larger than 256 MiB"), display);
      return NULL;
    }
  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  if (!g_utf8_validate_len (text, len, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a file name */
                   _("%s: the index is not valid UTF-8"), display);
      return NULL;
    }

  serio_json_init (&j, text, len, SERIO_JSON_INDEX);
  if (!serio_json_expect (&j, '{', error))
    goto failed;
  if (!serio_json_accept (&j, '}'))
    do
      {
        g_autofree char *member = serio_json_string (&j, error);
        gboolean ok;

        if (member == NULL || !serio_json_expect (&j, ':', error))
          goto failed;
        if (strcmp (member, "weight_map") == 0 && !has_map)
          ok = has_map = read_weight_map (&j, index, !serio, error);
        else if (strcmp (member, "metadata") == 0 && !has_metadata)
          ok = has_metadata = serio_json_skip_value (&j, error);
        else if (serio && strcmp (member, "shards") == 0 && !has_shards)
          ok = has_shards = read_shard_names (&j, index, error);
        else if (serio && strcmp (member, "tree") == 0 && !has_tree)
          ok = has_tree = serio_json_skip_value (&j, error);
        else
          ok = serio_json_error (&j, _("the index has an unknown or repeated member"), error);
        if (!ok)
          goto failed;
      }
    while (serio_json_accept (&j, ','));
  if (!serio_json_expect (&j, '}', error))
    goto failed;
  serio_json_skip_spaces (&j);
  if (j.p != j.end)
    {
      serio_json_error (&j, _("something follows the index's object"), error);
      goto failed;
    }
  /* A safetensors index's shards in the order of their names, which
   * number them. */
  if (!serio)
    g_ptr_array_sort (index->shards, compare_keys);
  if (!has_map || (serio && !has_shards))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: a file name */
                   _("%s: the index has no weight map or no shards"), display);
      return NULL;
    }
  return g_steal_pointer (&index);

failed:
  g_prefix_error (error, "%s: ", display);
  return NULL;
}

/* Reads every value of a reader's arrays. */
static gboolean
read_through (SerioReader  *reader,
              double       *values,
              GError      **error)
{
  while (serio_reader_next (reader, NULL, error))
    {
      gsize n;

      do
        if (!serio_reader_read_values (reader, values, SCRATCH_VALUES, &n, NULL, error))
          return FALSE;
      while (n > 0);
    }
  return *error == NULL;
}

static int
report (const GError *error)
{
  fflush (stdout);
  g_printerr ("%s\n", error->message);
  if (error->domain == SERIO_ERROR ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA))
    return SERIO_TOOL_EXIT_FAILURE;
  return SERIO_TOOL_EXIT_ERROR;
}

/* A text error of the reader has a line of the shards' records joined:
 * each shard is read alone to tell which one and where. */
static int
report_shard_text_error (const char   *path,
                         const GError *joined,
                         double       *values)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(IndexText) index = read_index (path, TRUE, &error);
  g_autofree char *directory = g_path_get_dirname (path);

  if (index == NULL)
    return report (joined);
  for (guint i = 0; i < index->shards->len; i++)
    {
      g_autofree char *shard = g_build_filename (directory, index->shards->pdata[i], NULL);
      g_autoptr(SerioReader) reader = serio_tool_open_reader (shard, SERIO_TOOL_INPUT_DEFAULT,
                                                              &error);

      if (reader == NULL)
        return report (error);
      if (!read_through (reader, values, &error))
        return serio_tool_report_read_error (shard, error);
    }
  return report (joined);
}

static SerioReader *
open_index (const char  *path,
            GError     **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  return serio_reader_new_for_index (file, NULL, error);
}

int
serio_tool_check_index (const char *path,
                        gboolean    quiet)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *values = g_new (double, SCRATCH_VALUES);
  g_autofree char *display = g_filename_display_name (path);
  g_autoptr(SerioReader) reader = open_index (path, &error);

  if (reader == NULL)
    return report (error);
  if (!read_through (reader, values, &error))
    {
      if (error->domain == SERIO_ERROR && serio_error_get_line (error) > 0)
        return report_shard_text_error (path, error, values);
      return report (error);
    }
  if (!quiet)
    {
      /* TRANSLATORS: a file name; every shard matches the index */
      g_print (_("%s: sharded checkpoint, every shard sealed and verified against the index"),
               display);
      g_print ("\n");
    }
  return SERIO_TOOL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* Convert                                                            */
/* ------------------------------------------------------------------ */

/* The seal tokens of a sealed serio file, and its size: its last line,
 * read from its tail (the longest seal line is 16 + 3 × 20 bytes). */
#define TAIL_SIZE 128

static char *
seal_of (const char  *path,
         guint64     *size,
         GError     **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) stream = g_file_read (file, NULL, error);
  g_autoptr(GFileInfo) info = NULL;
  char tail[TAIL_SIZE + 1];
  gsize len;
  const char *last;

  if (stream == NULL)
    return NULL;
  info = g_file_input_stream_query_info (stream, G_FILE_ATTRIBUTE_STANDARD_SIZE, NULL, error);
  if (info == NULL)
    return NULL;
  *size = (guint64) g_file_info_get_size (info);
  len = (gsize) MIN (*size, (guint64) TAIL_SIZE);
  if (!g_seekable_seek (G_SEEKABLE (stream), (goffset) (*size - len), G_SEEK_SET, NULL, error) ||
      !g_input_stream_read_all (G_INPUT_STREAM (stream), tail, len, &len, NULL, error))
    return NULL;
  tail[len] = '\0';
  if (len < 2 || tail[len - 1] != '\n')
    goto no_seal;
  tail[len - 1] = '\0';
  last = strrchr (tail, '\n');
  last = last == NULL ? tail : last + 1;
  if (!g_str_has_prefix (last, SEAL_PREFIX))
    goto no_seal;
  return g_strdup (last + strlen (SEAL_PREFIX));

no_seal:
  g_set_error (error, SERIO_ERROR, SERIO_ERROR_TRUNCATED,
               /* TRANSLATORS: a file name */
               _("%s: the file does not end with a seal"), path);
  return NULL;
}

/* The output's shard names, from the output index's name. */
static char *
shard_name (const char *out,
            const char *suffix,
            const char *extension,
            guint       number,
            guint       count)
{
  g_autofree char *base = g_path_get_basename (out);

  base[strlen (base) - strlen (suffix)] = '\0';
  return g_strdup_printf ("%s-%05u-of-%05u%s", base, number, count, extension);
}

static char *
temporary_name (const char *directory,
                const char *name)
{
  g_autofree char *hidden = g_strdup_printf (".%s.%u.tmp", name, (guint) getpid ());

  return g_build_filename (directory, hidden, NULL);
}

static void
remove_all (GPtrArray *paths)
{
  for (guint i = 0; i < paths->len; i++)
    g_unlink (paths->pdata[i]);
}

/* Puts the shards in place, then writes the index, atomically. */
static int
finish (GPtrArray   *temporaries,
        GPtrArray   *finals,
        const char  *out,
        GString     *index)
{
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < temporaries->len; i++)
    if (g_rename (temporaries->pdata[i], finals->pdata[i]) != 0)
      {
        int saved = errno;

        remove_all (temporaries);
        g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s",
                     (const char *) finals->pdata[i], g_strerror (saved));
        return report (error);
      }
  if (!g_file_set_contents_full (out, index->str, (gssize) index->len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0666, &error))
    return report (error);
  return SERIO_TOOL_EXIT_OK;
}

static int
safetensors_to_serio (const char *in,
                      const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(IndexText) index = read_index (in, FALSE, &error);
  g_autofree char *in_directory = g_path_get_dirname (in);
  g_autofree char *out_directory = g_path_get_dirname (out);
  g_autoptr(GPtrArray) temporaries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) finals = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) map = g_string_new (NULL);
  g_autoptr(GString) shards = g_string_new (NULL);
  g_autoptr(GString) text = NULL;
  guint64 total = 0;
  guint n_keys = 0;

  if (index == NULL)
    return report (error);

  for (guint k = 0; k < index->shards->len; k++)
    {
      const char *file = index->shards->pdata[k];
      g_autofree char *source = g_build_filename (in_directory, file, NULL);
      g_autofree char *name = shard_name (out, SERIO_INDEX_SUFFIX, ".serio", k + 1,
                                          index->shards->len);
      char *temporary = temporary_name (out_directory, name);
      g_autoptr(SerioReader) reader = NULL;
      g_autoptr(GInputStream) stream = NULL;
      g_autoptr(GFile) written = NULL;
      g_autofree char *seal = NULL;
      guint64 size;
      guint held = 0, expected = 0;
      int status;

      g_ptr_array_add (temporaries, temporary);
      g_ptr_array_add (finals, g_build_filename (out_directory, name, NULL));
      status = serio_safetensors_to_serio (source, temporary, FALSE);
      if (status != SERIO_TOOL_EXIT_OK)
        {
          remove_all (temporaries);
          return status;
        }

      /* Its tensors must be the ones the weight map puts in it. */
      written = g_file_new_for_path (temporary);
      stream = G_INPUT_STREAM (g_file_read (written, NULL, &error));
      if (stream == NULL)
        goto failed;
      reader = serio_reader_new (stream);
      while (serio_reader_next (reader, NULL, &error))
        {
          g_autofree char *base = serio_reader_get_base_name (reader);
          guint found;

          if (serio_name_is_metadata (serio_reader_get_name (reader)))
            continue;
          if (!g_ptr_array_find_with_equal_func (index->keys, base, g_str_equal, &found) ||
              strcmp (index->files->pdata[found], file) != 0)
            {
              g_set_error (&error, SERIO_ERROR, SERIO_ERROR_SYNTAX,
                           /* TRANSLATORS: a file, then a tensor's name, then the index */
                           _("%s: the tensor “%s” is not one that %s puts in this file"),
                           source, base, in);
              goto failed;
            }
          held++;
          total += serio_reader_get_n_values (reader) *
                   serio_dtype_get_size (serio_reader_get_dtype (reader));
          if (n_keys++ > 0)
            g_string_append (map, ",\n");
          g_string_append (map, "  ");
          serio_tool_append_json_string (map, base);
          g_string_append (map, ": ");
          serio_tool_append_json_string (map, name);
        }
      if (error != NULL)
        goto failed;
      for (guint i = 0; i < index->keys->len; i++)
        if (strcmp (index->files->pdata[i], file) == 0)
          expected++;
      if (held != expected)
        {
          g_set_error (&error, SERIO_ERROR, SERIO_ERROR_TRUNCATED,
                       /* TRANSLATORS: a file, then the index */
                       _("%s: the file does not hold every tensor that %s puts in it"),
                       source, in);
          goto failed;
        }

      seal = seal_of (temporary, &size, &error);
      if (seal == NULL)
        goto failed;
      g_string_append_printf (shards, "%s  ", k > 0 ? ",\n" : "");
      serio_tool_append_json_string (shards, name);
      g_string_append_printf (shards, ": {\"size\": %" G_GUINT64_FORMAT ", \"seal\": ", size);
      serio_tool_append_json_string (shards, seal);
      g_string_append (shards, "}");
      continue;

    failed:
      remove_all (temporaries);
      return report (error);
    }

  text = g_string_new (NULL);
  g_string_append_printf (text, "{\n \"metadata\": {\"format\": \"serio-shards\", \"version\": 1, "
                          "\"total_size\": %" G_GUINT64_FORMAT "},\n \"weight_map\": {\n%s\n },\n"
                          " \"shards\": {\n%s\n }\n}\n", total, map->str, shards->str);
  return finish (temporaries, finals, out, text);
}

static int
serio_to_safetensors (const char *in,
                      const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *values = g_new (double, SCRATCH_VALUES);
  g_autoptr(SerioReader) reader = open_index (in, &error);
  g_autoptr(IndexText) index = NULL;
  g_autofree char *in_directory = g_path_get_dirname (in);
  g_autofree char *out_directory = g_path_get_dirname (out);
  g_autoptr(GPtrArray) temporaries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) finals = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  guint64 total = 0;

  /* The whole checkpoint is verified against its index first. */
  if (reader == NULL)
    return report (error);
  while (serio_reader_next (reader, NULL, &error))
    {
      gsize n;

      if (!serio_name_is_metadata (serio_reader_get_name (reader)))
        total += serio_reader_get_n_values (reader) *
                 serio_dtype_get_size (serio_reader_get_dtype (reader));
      do
        if (!serio_reader_read_values (reader, values, SCRATCH_VALUES, &n, NULL, &error))
          break;
      while (n > 0);
      if (error != NULL)
        break;
    }
  if (error != NULL)
    {
      if (error->domain == SERIO_ERROR && serio_error_get_line (error) > 0)
        return report_shard_text_error (in, error, values);
      return report (error);
    }
  index = read_index (in, TRUE, &error);
  if (index == NULL)
    return report (error);

  for (guint k = 0; k < index->shards->len; k++)
    {
      g_autofree char *source = g_build_filename (in_directory, index->shards->pdata[k], NULL);
      char *name = shard_name (out, SAFETENSORS_INDEX_SUFFIX, ".safetensors", k + 1,
                               index->shards->len);
      int status;

      g_ptr_array_add (temporaries, temporary_name (out_directory, name));
      g_ptr_array_add (finals, g_build_filename (out_directory, name, NULL));
      g_free (name);
      status = serio_safetensors_from_serio (source, temporaries->pdata[k]);
      if (status != SERIO_TOOL_EXIT_OK)
        {
          remove_all (temporaries);
          return status;
        }
    }

  /* As Hugging Face writes it: the keys sorted. */
  for (guint i = 0; i < index->keys->len; i++)
    g_ptr_array_add (order, index->keys->pdata[i]);
  g_ptr_array_sort (order, compare_keys);
  g_string_append_printf (text, "{\n  \"metadata\": {\n    \"total_size\": %" G_GUINT64_FORMAT
                          "\n  },\n  \"weight_map\": {", total);
  for (guint i = 0; i < order->len; i++)
    {
      guint at, shard;
      g_autofree char *name = NULL;

      g_ptr_array_find_with_equal_func (index->keys, order->pdata[i], g_str_equal, &at);
      g_ptr_array_find_with_equal_func (index->shards, index->files->pdata[at], g_str_equal,
                                        &shard);
      name = g_path_get_basename (finals->pdata[shard]);
      g_string_append (text, i > 0 ? ",\n    " : "\n    ");
      serio_tool_append_json_string (text, order->pdata[i]);
      g_string_append (text, ": ");
      serio_tool_append_json_string (text, name);
    }
  g_string_append (text, "\n  }\n}\n");
  return finish (temporaries, finals, out, text);
}

int
serio_tool_convert_index (const char *in,
                          const char *out,
                          gboolean    plain)
{
  if (plain)
    return serio_tool_usage_error (_("--plain does not apply to a sharded checkpoint, whose "
                                     "shards are sealed"));
  if (g_str_has_suffix (in, SAFETENSORS_INDEX_SUFFIX) &&
      g_str_has_suffix (out, SERIO_INDEX_SUFFIX) && strlen (out) > strlen (SERIO_INDEX_SUFFIX))
    return safetensors_to_serio (in, out);
  if (g_str_has_suffix (in, SERIO_INDEX_SUFFIX) &&
      g_str_has_suffix (out, SAFETENSORS_INDEX_SUFFIX) &&
      strlen (out) > strlen (SAFETENSORS_INDEX_SUFFIX))
    return serio_to_safetensors (in, out);
  return serio_tool_usage_error (_("a sharded checkpoint converts from NAME.safetensors.index.json "
                                   "to NAME.serio.index.json, or back"));
}
