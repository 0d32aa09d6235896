/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-index.c: sharded checkpoints, read through their index
 *
 * Copyright 2026 The libserio authors
 *
 * A sharded checkpoint (docs/checkpoints.md) is an index, strict JSON,
 * and the sealed serio files it names. serio_reader_new_for_index()
 * checks the index and the size and last line (the seal) of every shard
 * first, then gives a SerioReader over a stream of its own that reads the
 * shards one after another: it passes on their records without the two
 * seal records of each, computes each shard's seal as the bytes go by and
 * compares it with the one the index names, and checks every record's base
 * name against the weight map. The reader sees one plain v1 text.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <xxhash.h>

#include "serio-codec-private.h"
#include "serio-error.h"
#include "serio-reader.h"
#include "serio-json-private.h"
#include "serio-name-private.h"

#define FORMAT "serio-shards"
#define FORMAT_VERSION 1

/* An index larger than this is refused before it is read. */
#define MAX_INDEX_SIZE (256 * 1024 * 1024)

/* The opening record of a sealed text, and the start of its closing one. */
#define SEALED_LINE "v1|serio.sealed|1|1\n"
#define SEAL_PREFIX "v1|serio.seal|3|"

/* The most of a record's first line the stream keeps to check its name. */
#define MAX_HEAD (1024 * 1024)

#define BUFFER_SIZE (256 * 1024)

typedef struct
{
  char *name;
  GFile *file;
  guint64 size;
  char *seal;       /* the tokens of its seal record, as the index has them */
  guint64 n_keys;   /* how many keys of the weight map it holds */
} Shard;

typedef struct
{
  GFile *file;
  char *display;      /* the index's name in messages */
  GPtrArray *shards;  /* of Shard, in the index's order */
  GHashTable *shard_of;  /* key → Shard, from the weight map */
} Index;

static void
shard_free (gpointer data)
{
  Shard *shard = data;

  g_free (shard->name);
  g_clear_object (&shard->file);
  g_free (shard->seal);
  g_free (shard);
}

static void
index_free (Index *index)
{
  if (index == NULL)
    return;
  g_clear_object (&index->file);
  g_free (index->display);
  g_clear_pointer (&index->shards, g_ptr_array_unref);
  g_clear_pointer (&index->shard_of, g_hash_table_unref);
  g_free (index);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Index, index_free)

static char *
display_name (GFile *file)
{
  char *path = g_file_get_path (file);

  return path != NULL ? path : g_file_get_uri (file);
}

static gboolean
index_error (Index       *index,
             const char  *what,
             GError     **error)
{
  /* The index file of a sharded checkpoint, then what is wrong with it. */
  g_set_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX, "%s: %s", index->display, what);
  return FALSE;
}

static Shard *
shard_lookup (Index      *index,
              const char *name)
{
  for (guint i = 0; i < index->shards->len; i++)
    {
      Shard *shard = g_ptr_array_index (index->shards, i);

      if (strcmp (shard->name, name) == 0)
        return shard;
    }
  return NULL;
}

/* "metadata": {"format": "serio-shards", "version": 1, "total_size": N} */
static gboolean
parse_metadata (SerioJson  *j,
                Index      *index,
                GError    **error)
{
  gboolean has_format = FALSE, has_version = FALSE, has_total = FALSE;

  if (!serio_json_expect (j, '{', error))
    return FALSE;
  if (!serio_json_accept (j, '}'))
    do
      {
        g_autofree char *field = serio_json_string (j, error);

        if (field == NULL || !serio_json_expect (j, ':', error))
          return FALSE;
        if (strcmp (field, "format") == 0 && !has_format)
          {
            g_autofree char *format = serio_json_string (j, error);

            has_format = TRUE;
            if (format == NULL)
              return FALSE;
            if (strcmp (format, FORMAT) != 0)
              return index_error (index, _("not the index of a sharded serio checkpoint "
                                           "(its format is not “serio-shards”)"), error);
          }
        else if (strcmp (field, "version") == 0 && !has_version)
          {
            guint64 version;

            has_version = TRUE;
            if (!serio_json_uint (j, &version, error))
              return FALSE;
            if (version != FORMAT_VERSION)
              {
                g_autofree char *number = g_strdup_printf ("%" G_GUINT64_FORMAT, version);

                g_set_error (error, SERIO_ERROR, SERIO_ERROR_VERSION,
                             /* TRANSLATORS: the index file, then the version
                              * it has */
                             _("%s: format version %s, where this libserio reads version 1"),
                             index->display, number);
                return FALSE;
              }
          }
        else if (strcmp (field, "total_size") == 0 && !has_total)
          {
            guint64 total;

            has_total = TRUE;
            if (!serio_json_uint (j, &total, error))
              return FALSE;
          }
        else
          return serio_json_error (j, _("the metadata has an unknown or repeated member"),
                                   error);
      }
    while (serio_json_accept (j, ','));
  if (!serio_json_expect (j, '}', error))
    return FALSE;
  if (!has_format || !has_version || !has_total)
    return index_error (index, _("the metadata lacks its format, version or total size"),
                        error);
  return TRUE;
}

static gboolean
valid_shard_name (const char *name)
{
  return *name != '\0' && strcmp (name, ".") != 0 && strcmp (name, "..") != 0 &&
         strchr (name, '/') == NULL && strchr (name, '\\') == NULL;
}

/* "shards": {name: {"size": N, "seal": "n,hi,lo"}, …} */
static gboolean
parse_shards (SerioJson  *j,
              Index      *index,
              GError    **error)
{
  g_autoptr(GFile) directory = g_file_get_parent (index->file);

  if (!serio_json_expect (j, '{', error))
    return FALSE;
  if (serio_json_accept (j, '}'))
    return TRUE;
  do
    {
      g_autofree char *name = serio_json_string (j, error);
      gboolean has_size = FALSE, has_seal = FALSE;
      Shard *shard;

      if (name == NULL || !serio_json_expect (j, ':', error))
        return FALSE;
      if (!valid_shard_name (name))
        return index_error (index, _("a shard's name is not the name of a file beside the "
                                     "index"), error);
      if (shard_lookup (index, name) != NULL)
        return serio_json_error (j, _("a shard is listed twice"), error);
      shard = g_new0 (Shard, 1);
      shard->name = g_steal_pointer (&name);
      shard->file = g_file_get_child (directory, shard->name);
      g_ptr_array_add (index->shards, shard);

      if (!serio_json_expect (j, '{', error))
        return FALSE;
      do
        {
          g_autofree char *field = serio_json_string (j, error);

          if (field == NULL || !serio_json_expect (j, ':', error))
            return FALSE;
          if (strcmp (field, "size") == 0 && !has_size)
            {
              has_size = TRUE;
              if (!serio_json_uint (j, &shard->size, error))
                return FALSE;
            }
          else if (strcmp (field, "seal") == 0 && !has_seal)
            {
              has_seal = TRUE;
              shard->seal = serio_json_string (j, error);
              if (shard->seal == NULL)
                return FALSE;
            }
          else
            return serio_json_error (j, _("a shard's entry has an unknown or repeated "
                                          "member"), error);
        }
      while (serio_json_accept (j, ','));
      if (!serio_json_expect (j, '}', error))
        return FALSE;
      if (!has_size || !has_seal)
        return serio_json_error (j, _("a shard's entry lacks its size or seal"), error);
    }
  while (serio_json_accept (j, ','));
  return serio_json_expect (j, '}', error);
}

/* "weight_map": {key: shard name, …}, kept as names until the shards are
 * known (the members may come in any order). */
static gboolean
parse_weight_map (SerioJson   *j,
                  GHashTable  *names,
                  GError     **error)
{
  if (!serio_json_expect (j, '{', error))
    return FALSE;
  if (serio_json_accept (j, '}'))
    return TRUE;
  do
    {
      g_autofree char *key = serio_json_string (j, error);
      char *shard;

      if (key == NULL || !serio_json_expect (j, ':', error))
        return FALSE;
      shard = serio_json_string (j, error);
      if (shard == NULL)
        return FALSE;
      if (g_hash_table_contains (names, key))
        {
          g_free (shard);
          return serio_json_error (j, _("the weight map lists a key twice"), error);
        }
      g_hash_table_insert (names, g_steal_pointer (&key), shard);
    }
  while (serio_json_accept (j, ','));
  return serio_json_expect (j, '}', error);
}

static Index *
index_load (GFile         *file,
            GCancellable  *cancellable,
            GError       **error)
{
  g_autoptr(Index) index = g_new0 (Index, 1);
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                       g_free, g_free);
  g_autoptr(GFileInfo) info = NULL;
  g_autofree char *text = NULL;
  gboolean has_metadata = FALSE, has_map = FALSE, has_shards = FALSE, has_tree = FALSE;
  GHashTableIter iter;
  gpointer key, value;
  const char *bad;
  gsize len;
  SerioJson j;

  index->file = g_object_ref (file);
  index->display = display_name (file);
  index->shards = g_ptr_array_new_with_free_func (shard_free);
  index->shard_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_SIZE, G_FILE_QUERY_INFO_NONE,
                            cancellable, error);
  if (info == NULL)
    return NULL;
  if (g_file_info_get_size (info) > MAX_INDEX_SIZE)
    {
      index_error (index, _("the index is larger than 256 MiB"), error);
      return NULL;
    }
  if (!g_file_load_contents (file, cancellable, &text, &len, NULL, error))
    return NULL;
  if (!g_utf8_validate_len (text, len, &bad))
    {
      index_error (index, _("the index is not valid UTF-8"), error);
      return NULL;
    }

  serio_json_init (&j, text, len, SERIO_JSON_INDEX);
  if (!serio_json_expect (&j, '{', error))
    goto json_failed;
  if (!serio_json_accept (&j, '}'))
    do
      {
        g_autofree char *member = serio_json_string (&j, error);
        gboolean ok;

        if (member == NULL || !serio_json_expect (&j, ':', error))
          goto json_failed;
        serio_json_skip_spaces (&j);
        if (strcmp (member, "metadata") == 0 && !has_metadata)
          {
            has_metadata = TRUE;
            ok = parse_metadata (&j, index, error);
          }
        else if (strcmp (member, "weight_map") == 0 && !has_map)
          {
            has_map = TRUE;
            ok = parse_weight_map (&j, names, error);
          }
        else if (strcmp (member, "shards") == 0 && !has_shards)
          {
            has_shards = TRUE;
            ok = parse_shards (&j, index, error);
          }
        else if (strcmp (member, "tree") == 0 && !has_tree)
          {
            /* The Python package's tree: C reads the records flat. */
            has_tree = TRUE;
            ok = serio_json_skip_value (&j, error);
          }
        else
          ok = serio_json_error (&j, _("the index has an unknown or repeated member"), error);
        if (!ok)
          goto json_failed;
      }
    while (serio_json_accept (&j, ','));
  if (!serio_json_expect (&j, '}', error))
    goto json_failed;
  serio_json_skip_spaces (&j);
  if (j.p != j.end)
    {
      serio_json_error (&j, _("something follows the index's object"), error);
      goto json_failed;
    }
  if (!has_metadata || !has_map || !has_shards)
    {
      index_error (index, _("not the index of a sharded serio checkpoint (it lacks its "
                            "metadata, weight map or shards)"), error);
      return NULL;
    }

  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      Shard *shard = shard_lookup (index, value);

      if (shard == NULL)
        {
          g_set_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX,
                       /* TRANSLATORS: the index, a key, a shard's name */
                       _("%s: the weight map puts “%s” in “%s”, which is not a shard of the "
                         "index"), index->display, (const char *) key, (const char *) value);
          return NULL;
        }
      shard->n_keys++;
      g_hash_table_insert (index->shard_of, g_strdup (key), shard);
    }
  for (guint i = 0; i < index->shards->len; i++)
    {
      Shard *shard = g_ptr_array_index (index->shards, i);

      if (shard->n_keys == 0)
        {
          g_set_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX,
                       /* TRANSLATORS: the index, a shard's name */
                       _("%s: the shard “%s” holds no key of the weight map"),
                       index->display, shard->name);
          return NULL;
        }
    }
  return g_steal_pointer (&index);

json_failed:
  /* The JSON reader's errors do not name the file; index_error()'s do. */
  if (error != NULL && *error != NULL && (*error)->domain == G_IO_ERROR)
    g_prefix_error (error, "%s: ", index->display);
  return NULL;
}

static gboolean
shard_error (Shard       *shard,
             int          code,
             const char  *what,
             GError     **error)
{
  g_autofree char *name = display_name (shard->file);

  /* A shard's file, then what is wrong with it. */
  g_set_error (error, SERIO_ERROR, code, "%s: %s", name, what);
  return FALSE;
}

static gboolean
not_this_shard (Shard       *shard,
                const char  *which,
                GError     **error)
{
  g_autofree char *what = g_strdup_printf (
    /* TRANSLATORS: %s is “size” or “seal” */
    _("this is not the shard the index names (its %s differs): a shard of another save, "
      "or a stale or damaged one"), which);

  return shard_error (shard, SERIO_ERROR_INTEGRITY, what, error);
}

/* Opens a shard whose size and last line are the ones the index names. */
static GInputStream *
shard_open (Shard         *shard,
            GCancellable  *cancellable,
            GError       **error)
{
  g_autoptr(GFileInputStream) stream = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autofree char *line = g_strconcat (SEAL_PREFIX, shard->seal, "\n", NULL);
  g_autofree char *tail = NULL;
  gsize line_len = strlen (line), got;

  stream = g_file_read (shard->file, cancellable, error);
  if (stream == NULL)
    {
      g_prefix_error (error, _("the shard that the index names cannot be read: "));
      return NULL;
    }
  info = g_file_input_stream_query_info (stream, G_FILE_ATTRIBUTE_STANDARD_SIZE, cancellable,
                                         error);
  if (info == NULL)
    return NULL;
  if ((guint64) g_file_info_get_size (info) != shard->size)
    {
      not_this_shard (shard, _("size"), error);
      return NULL;
    }
  if (shard->size < strlen (SEALED_LINE) + line_len)
    {
      not_this_shard (shard, _("size"), error);
      return NULL;
    }
  if (g_seekable_can_seek (G_SEEKABLE (stream)))
    {
      tail = g_malloc (line_len);
      if (!g_seekable_seek (G_SEEKABLE (stream), (goffset) (shard->size - line_len),
                            G_SEEK_SET, cancellable, error) ||
          !g_input_stream_read_all (G_INPUT_STREAM (stream), tail, line_len, &got,
                                    cancellable, error) ||
          !g_seekable_seek (G_SEEKABLE (stream), 0, G_SEEK_SET, cancellable, error))
        return NULL;
      if (got != line_len || memcmp (tail, line, line_len) != 0)
        {
          not_this_shard (shard, _("seal"), error);
          return NULL;
        }
    }
  return G_INPUT_STREAM (g_steal_pointer (&stream));
}

/* ------------------------------------------------------------------ */
/* The stream of the shards' records                                  */
/* ------------------------------------------------------------------ */

#define SERIO_TYPE_SHARD_STREAM (serio_shard_stream_get_type ())
G_DECLARE_FINAL_TYPE (SerioShardStream, serio_shard_stream, SERIO, SHARD_STREAM, GInputStream)

struct _SerioShardStream
{
  GInputStream parent_instance;

  Index *index;
  guint current;           /* the shard being read */
  GInputStream *shard;     /* its stream, or NULL between shards */
  guint64 pos;             /* bytes of it read */
  guint64 content_end;     /* where its seal record starts */
  XXH3_state_t *hash;
  guint64 n_records;       /* records before its seal, the opening one included */
  gboolean line_start;
  gboolean collecting;     /* keeping a record's first bytes in head */
  guint bars;
  GString *head;
  GHashTable *seen;        /* base name → Shard */
  GError *failure;         /* the first error, given again */
  guchar *buf;
  gsize buf_pos, buf_len;  /* the pass-through bytes of buf not handed out */
};

G_DEFINE_FINAL_TYPE (SerioShardStream, serio_shard_stream, G_TYPE_INPUT_STREAM)

static gboolean
check_record (SerioShardStream  *self,
              GError           **error)
{
  Shard *shard = g_ptr_array_index (self->index->shards, self->current);
  const char *line = self->head->str;
  const char *name, *bar;
  guint64 dims[SERIO_SHAPE_MAX_DIMS], n_values;
  gsize base_len;
  SerioDtype dtype;
  guint n_dims;
  g_autofree char *base = NULL;
  Shard *listed, *other;

  /* A line the reader will refuse is left to it. */
  if (!g_str_has_prefix (line, "v1|"))
    return TRUE;
  name = line + 3;
  bar = strchr (name, '|');
  if (bar == NULL || !g_ascii_string_to_unsigned (bar + 1, 10, 0, G_MAXUINT64, &n_values, NULL))
    return TRUE;
  if (g_str_has_prefix (name, "serio."))
    return TRUE;

  _serio_name_parse (name, bar - name, n_values, &base_len, &dtype, dims, &n_dims);
  base = g_strndup (name, base_len);
  other = g_hash_table_lookup (self->seen, base);
  listed = g_hash_table_lookup (self->index->shard_of, base);
  if (other != NULL || listed != shard)
    {
      g_autofree char *what = NULL;

      if (other == shard)
        what = g_strdup_printf (_("the shard holds the record “%s” twice"), base);
      else if (other != NULL)
        what = g_strdup_printf (_("the record “%s” is in this shard and in %s"), base,
                                other->name);
      else if (listed == NULL)
        what = g_strdup_printf (_("the shard holds the record “%s”, which the index does "
                                  "not list"), base);
      else
        what = g_strdup_printf (_("the shard holds the record “%s”, which the index puts "
                                  "in %s"), base, listed->name);
      return shard_error (shard, SERIO_ERROR_SYNTAX, what, error);
    }
  g_hash_table_insert (self->seen, g_steal_pointer (&base), shard);
  return TRUE;
}

/* Looks at the bytes of the current shard's records that go on. */
static gboolean
scan (SerioShardStream  *self,
      const guchar      *data,
      gsize              len,
      GError           **error)
{
  for (gsize i = 0; i < len; i++)
    {
      guchar c = data[i];

      /* Inside a record's values: on to the line feed that ends it. */
      if (!self->collecting && !self->line_start)
        {
          const guchar *nl = memchr (data + i, '\n', len - i);

          if (nl == NULL)
            break;
          i = (gsize) (nl - data);
          self->line_start = TRUE;
          continue;
        }
      if (self->line_start && c != '\n')
        {
          self->n_records++;
          self->collecting = TRUE;
          self->bars = 0;
          g_string_truncate (self->head, 0);
        }
      self->line_start = c == '\n';
      if (!self->collecting)
        continue;
      if (c == '\n')
        {
          self->collecting = FALSE;
          continue;
        }
      if (c == '|' && ++self->bars == 3)
        {
          self->collecting = FALSE;
          if (!check_record (self, error))
            return FALSE;
          continue;
        }
      if (self->head->len >= MAX_HEAD)
        {
          Shard *shard = g_ptr_array_index (self->index->shards, self->current);

          return shard_error (shard, SERIO_ERROR_SYNTAX,
                              _("a record's name is too long to check against the index"),
                              error);
        }
      g_string_append_c (self->head, (char) c);
    }
  return TRUE;
}

/* The current shard's end: its seal as computed, and every key the index
 * puts in it seen. */
static gboolean
shard_finish (SerioShardStream  *self,
              GError           **error)
{
  Shard *shard = g_ptr_array_index (self->index->shards, self->current);
  guint64 hash = XXH3_64bits_digest (self->hash);
  g_autofree char *seal = g_strdup_printf ("%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                           ",%" G_GUINT64_FORMAT, self->n_records,
                                           hash >> 32, hash & G_GUINT64_CONSTANT (0xffffffff));
  GHashTableIter iter;
  gpointer key, value;

  if (strcmp (seal, shard->seal) != 0)
    return shard_error (shard, SERIO_ERROR_INTEGRITY,
                        _("the shard's bytes do not match its seal"), error);

  g_hash_table_iter_init (&iter, self->index->shard_of);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (value == shard && g_hash_table_lookup (self->seen, key) != shard)
      {
        g_autofree char *what = g_strdup_printf (
          _("the index puts “%s” in this shard, which does not hold it"), (const char *) key);

        return shard_error (shard, SERIO_ERROR_TRUNCATED, what, error);
      }
  return TRUE;
}

/* Fills buf with the next pass-through bytes; returns FALSE on an error,
 * TRUE with buf_len 0 at the end of the last shard. */
static gboolean
fill (SerioShardStream  *self,
      GCancellable      *cancellable,
      GError           **error)
{
  const gsize sealed_len = strlen (SEALED_LINE);

  self->buf_pos = self->buf_len = 0;
  while (self->buf_len == 0)
    {
      Shard *shard;
      gssize n;
      gsize want;

      if (self->current >= self->index->shards->len)
        return TRUE;
      shard = g_ptr_array_index (self->index->shards, self->current);

      if (self->shard == NULL)
        {
          self->shard = shard_open (shard, cancellable, error);
          if (self->shard == NULL)
            return FALSE;
          self->pos = 0;
          self->content_end = shard->size - strlen (SEAL_PREFIX) - strlen (shard->seal) - 1;
          XXH3_64bits_reset (self->hash);
          self->n_records = 1;
          self->line_start = TRUE;
          self->collecting = FALSE;
        }

      if (self->pos == self->content_end)
        {
          g_autofree char *line = g_strconcat (SEAL_PREFIX, shard->seal, "\n", NULL);
          gsize len = strlen (line), got;
          g_autofree char *tail = g_malloc (len + 1);

          if (!shard_finish (self, error))
            return FALSE;
          if (!g_input_stream_read_all (self->shard, tail, len + 1, &got, cancellable, error))
            return FALSE;
          if (got != len || memcmp (tail, line, len) != 0)
            return not_this_shard (shard, _("seal"), error);
          if (!g_input_stream_close (self->shard, cancellable, error))
            return FALSE;
          g_clear_object (&self->shard);
          self->current++;
          continue;
        }

      want = (gsize) MIN ((guint64) BUFFER_SIZE, self->content_end - self->pos);
      n = g_input_stream_read (self->shard, self->buf, want, cancellable, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        return shard_error (shard, SERIO_ERROR_TRUNCATED,
                            _("the shard is shorter than the index says"), error);
      XXH3_64bits_update (self->hash, self->buf, (gsize) n);

      /* The opening record goes through the hash only. */
      if (self->pos < sealed_len)
        {
          gsize skip = (gsize) MIN ((guint64) n, sealed_len - self->pos);

          if (memcmp (self->buf, &SEALED_LINE[self->pos], skip) != 0)
            return shard_error (shard, SERIO_ERROR_SYNTAX,
                                _("the shard is not a sealed serio file"), error);
          self->buf_pos = skip;
        }
      self->pos += (guint64) n;
      self->buf_len = (gsize) n;
      if (!scan (self, self->buf + self->buf_pos, self->buf_len - self->buf_pos, error))
        return FALSE;
      if (self->buf_pos == self->buf_len)
        self->buf_len = 0;
    }
  return TRUE;
}

static gssize
serio_shard_stream_read (GInputStream  *stream,
                         void          *buffer,
                         gsize          count,
                         GCancellable  *cancellable,
                         GError       **error)
{
  SerioShardStream *self = SERIO_SHARD_STREAM (stream);
  gsize n;

  if (self->failure != NULL)
    {
      g_propagate_error (error, g_error_copy (self->failure));
      return -1;
    }
  if (self->buf_pos == self->buf_len)
    {
      GError *local_error = NULL;

      if (!fill (self, cancellable, &local_error))
        {
          self->failure = g_error_copy (local_error);
          g_propagate_error (error, local_error);
          return -1;
        }
      if (self->buf_len == 0)
        return 0;
    }
  n = MIN (count, self->buf_len - self->buf_pos);
  memcpy (buffer, self->buf + self->buf_pos, n);
  self->buf_pos += n;
  return (gssize) n;
}

static gboolean
serio_shard_stream_close (GInputStream  *stream,
                          GCancellable  *cancellable,
                          GError       **error)
{
  SerioShardStream *self = SERIO_SHARD_STREAM (stream);

  (void) cancellable;
  (void) error;
  g_clear_object (&self->shard);
  return TRUE;
}

static void
serio_shard_stream_finalize (GObject *object)
{
  SerioShardStream *self = SERIO_SHARD_STREAM (object);

  g_clear_object (&self->shard);
  g_clear_pointer (&self->index, index_free);
  g_clear_pointer (&self->hash, XXH3_freeState);
  g_string_free (self->head, TRUE);
  g_hash_table_unref (self->seen);
  g_clear_error (&self->failure);
  g_free (self->buf);
  G_OBJECT_CLASS (serio_shard_stream_parent_class)->finalize (object);
}

static void
serio_shard_stream_class_init (SerioShardStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  object_class->finalize = serio_shard_stream_finalize;
  stream_class->read_fn = serio_shard_stream_read;
  stream_class->close_fn = serio_shard_stream_close;
}

static void
serio_shard_stream_init (SerioShardStream *self)
{
  self->hash = XXH3_createState ();
  if (self->hash == NULL)
    g_error ("%s: cannot set up an XXH3 hash state", G_STRLOC);
  self->head = g_string_new (NULL);
  self->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->buf = g_malloc (BUFFER_SIZE);
}

/**
 * serio_reader_new_for_index:
 * @index: the index of a sharded checkpoint (`model.serio.index.json`)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Opens a sharded checkpoint, as the Python package's `serio.save (path,
 * state, max_shard_size=…)` writes it (see docs/checkpoints.md), for
 * reading its arrays one after another with a #SerioReader, as if they
 * were the records of one plain v1 text.
 *
 * The index is checked first (strict JSON: no member twice, no unknown
 * member), then every shard it names: one that is missing, or whose size
 * or last line (its seal) differs from what the index says (a shard of
 * another save, a stale or a damaged one) fails here, naming the file.
 * While the reader reads, each shard's bytes are checked against its
 * seal and each record against the weight map: a changed digit, a record
 * the index does not list or puts in another shard, a record in two
 * shards, or a key of the index in no shard is an error of the reader
 * (%SERIO_ERROR_INTEGRITY, %SERIO_ERROR_SYNTAX or %SERIO_ERROR_TRUNCATED)
 * naming the shard. The index's `tree` (the Python package's structure)
 * is not used: the records come flat, by their stored names.
 *
 * Returns: (transfer full): a new #SerioReader, or %NULL with @error set
 */
SerioReader *
serio_reader_new_for_index (GFile         *index,
                            GCancellable  *cancellable,
                            GError       **error)
{
  g_autoptr(SerioShardStream) stream = NULL;
  g_autoptr(Index) loaded = NULL;

  g_return_val_if_fail (G_IS_FILE (index), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  loaded = index_load (index, cancellable, error);
  if (loaded == NULL)
    return NULL;
  for (guint i = 0; i < loaded->shards->len; i++)
    {
      g_autoptr(GInputStream) shard = shard_open (g_ptr_array_index (loaded->shards, i),
                                                  cancellable, error);

      if (shard == NULL)
        return NULL;
    }

  stream = g_object_new (SERIO_TYPE_SHARD_STREAM, NULL);
  stream->index = g_steal_pointer (&loaded);
  return serio_reader_new (G_INPUT_STREAM (stream));
}
