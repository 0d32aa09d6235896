/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-npz.c: reading NumPy .npz archives
 *
 * Copyright 2026 The libserio authors
 *
 * A .npz file is a ZIP archive (APPNOTE.TXT) of .npy files, one per array,
 * each named after its array with ".npy" appended, stored or compressed
 * with deflate (numpy.savez() and numpy.savez_compressed()). The central
 * directory at the end lists the members; each starts with a local header
 * whose own name and extra field lengths give where its data begins.
 * NumPy writes ZIP64 extra fields even for small archives, so they are
 * read too. Every length is checked against the size of the file, and a
 * compressed member is inflated no further than its declared size.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>
#include <zlib.h>

#include "serio-tool.h"

#define EOCD_SIGNATURE 0x06054b50
#define EOCD_SIZE 22
#define ZIP64_LOCATOR_SIGNATURE 0x07064b50
#define ZIP64_LOCATOR_SIZE 20
#define ZIP64_EOCD_SIGNATURE 0x06064b50
#define ZIP64_EOCD_SIZE 56
#define CENTRAL_SIGNATURE 0x02014b50
#define CENTRAL_SIZE 46
#define LOCAL_SIGNATURE 0x04034b50
#define LOCAL_SIZE 30

#define METHOD_STORED 0
#define METHOD_DEFLATE 8

#define FLAG_ENCRYPTED 0x0001

typedef struct
{
  const guchar *data;
  gsize         size;
} Archive;

static guint
get16 (const guchar *p)
{
  return p[0] | (guint) p[1] << 8;
}

static guint64
get32 (const guchar *p)
{
  return p[0] | (guint64) p[1] << 8 | (guint64) p[2] << 16 | (guint64) p[3] << 24;
}

static guint64
get64 (const guchar *p)
{
  return get32 (p) | get32 (p + 4) << 32;
}

static gboolean
not_zip (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("not a NumPy .npz file (a ZIP archive)"));
  return FALSE;
}

static gboolean
damaged (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("the .npz archive is damaged"));
  return FALSE;
}

/* Whether @len bytes at @offset are inside the archive. */
static gboolean
in_archive (const Archive *archive,
            guint64        offset,
            guint64        len)
{
  return offset <= archive->size && len <= archive->size - offset;
}

typedef struct
{
  guint64 n_entries;
  guint64 offset;
  guint64 size;
} Directory;

/* Finds the end of central directory record, the last one from which a
 * comment reaches the end of the file, and its ZIP64 counterpart. */
static gboolean
find_directory (const Archive  *archive,
                Directory      *dir,
                GError        **error)
{
  const guchar *eocd = NULL;
  gsize eocd_offset = 0;

  if (archive->size < EOCD_SIZE)
    return not_zip (error);

  for (gsize offset = archive->size - EOCD_SIZE + 1; offset-- > 0;)
    {
      const guchar *p = archive->data + offset;

      if (archive->size - offset - EOCD_SIZE > 0xffff)
        break;
      if (get32 (p) == EOCD_SIGNATURE && get16 (p + 20) == archive->size - offset - EOCD_SIZE)
        {
          eocd = p;
          eocd_offset = offset;
          break;
        }
    }
  if (eocd == NULL)
    return not_zip (error);

  if (get16 (eocd + 4) != 0 || get16 (eocd + 6) != 0 || get16 (eocd + 8) != get16 (eocd + 10))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("archives split over several files are not supported"));
      return FALSE;
    }

  dir->n_entries = get16 (eocd + 10);
  dir->size = get32 (eocd + 12);
  dir->offset = get32 (eocd + 16);

  if (dir->n_entries == 0xffff || dir->size == 0xffffffff || dir->offset == 0xffffffff)
    {
      const guchar *locator, *eocd64;
      guint64 eocd64_offset;

      if (eocd_offset < ZIP64_LOCATOR_SIZE)
        return damaged (error);
      locator = eocd - ZIP64_LOCATOR_SIZE;
      if (get32 (locator) != ZIP64_LOCATOR_SIGNATURE)
        return damaged (error);
      eocd64_offset = get64 (locator + 8);
      if (!in_archive (archive, eocd64_offset, ZIP64_EOCD_SIZE))
        return damaged (error);
      eocd64 = archive->data + eocd64_offset;
      if (get32 (eocd64) != ZIP64_EOCD_SIGNATURE)
        return damaged (error);
      dir->n_entries = get64 (eocd64 + 32);
      dir->size = get64 (eocd64 + 40);
      dir->offset = get64 (eocd64 + 48);
    }

  /* Each entry takes at least CENTRAL_SIZE bytes: this bounds the count. */
  if (!in_archive (archive, dir->offset, dir->size) ||
      dir->n_entries > dir->size / CENTRAL_SIZE)
    return damaged (error);

  return TRUE;
}

typedef struct
{
  char    *name;
  guint    flags;
  guint    method;
  guint32  crc;
  guint64  compressed_size;
  guint64  size;
  guint64  local_offset;
} Entry;

static void
entry_clear (Entry *entry)
{
  g_clear_pointer (&entry->name, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Entry, entry_clear)

/* Reads the sizes and offset that a ZIP64 extra field holds in place of
 * the 32-bit ones set to 0xffffffff, in the order APPNOTE gives. */
static gboolean
read_zip64_extra (const guchar *extra,
                  gsize         extra_len,
                  Entry        *entry)
{
  while (extra_len >= 4)
    {
      guint id = get16 (extra);
      gsize len = get16 (extra + 2);

      if (len > extra_len - 4)
        return FALSE;

      if (id == 0x0001)
        {
          const guchar *p = extra + 4;
          gsize left = len;
          guint64 *fields[] = { &entry->size, &entry->compressed_size, &entry->local_offset };

          for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
            {
              if (*fields[i] != 0xffffffff)
                continue;
              if (left < 8)
                return FALSE;
              *fields[i] = get64 (p);
              p += 8;
              left -= 8;
            }
          return TRUE;
        }

      extra += 4 + len;
      extra_len -= 4 + len;
    }

  return TRUE;
}

static gboolean
read_entry (const Archive  *archive,
            gsize          *offset,
            gsize           end,
            Entry          *entry,
            GError        **error)
{
  const guchar *p = archive->data + *offset;
  gsize name_len, extra_len, comment_len;

  if (end - *offset < CENTRAL_SIZE || get32 (p) != CENTRAL_SIGNATURE)
    return damaged (error);

  name_len = get16 (p + 28);
  extra_len = get16 (p + 30);
  comment_len = get16 (p + 32);
  if (end - *offset - CENTRAL_SIZE < name_len + extra_len + comment_len)
    return damaged (error);

  entry->flags = get16 (p + 8);
  entry->method = get16 (p + 10);
  entry->crc = (guint32) get32 (p + 16);
  entry->compressed_size = get32 (p + 20);
  entry->size = get32 (p + 24);
  entry->local_offset = get32 (p + 42);
  if (!read_zip64_extra (p + CENTRAL_SIZE + name_len, extra_len, entry))
    return damaged (error);

  /* Names are UTF-8 when bit 11 is set, else CP437: NumPy only writes
   * non-ASCII names as UTF-8, so both read as UTF-8 here, and bytes that
   * are not become U+FFFD. A NUL cannot be part of an array's name. */
  if (memchr (p + CENTRAL_SIZE, '\0', name_len) != NULL)
    return damaged (error);
  entry->name = g_utf8_make_valid ((const char *) p + CENTRAL_SIZE, name_len);

  *offset += CENTRAL_SIZE + name_len + extra_len + comment_len;
  return TRUE;
}

/* Inflates a raw deflate stream that must give exactly @size bytes. The
 * output grows as it is filled, up to @size: a hostile size costs no
 * memory that the data does not fill. */
static gboolean
inflate_member (const guchar  *data,
                gsize          compressed_size,
                gsize          size,
                guchar       **out,
                GError       **error)
{
  g_autofree guchar *buffer = NULL;
  gsize capacity = MIN (size, MAX (compressed_size, 4096));
  gsize produced = 0, in_left = compressed_size;
  gboolean complete = FALSE;
  z_stream z = { 0, };

  buffer = g_try_malloc (MAX (capacity, 1));
  if (buffer == NULL || inflateInit2 (&z, -MAX_WBITS) != Z_OK)
    goto no_memory;
  z.next_in = (Bytef *) data;

  for (;;)
    {
      uInt before;
      int ret;

      if (produced == capacity && capacity == size)
        {
          /* All the bytes are there: the stream must end here, without
           * one more byte. */
          guchar extra;

          z.next_out = &extra;
          z.avail_out = 1;
          z.avail_in = (uInt) MIN (in_left, G_MAXUINT32);
          ret = inflate (&z, Z_NO_FLUSH);
          complete = ret == Z_STREAM_END && z.avail_out == 1;
          break;
        }

      if (produced == capacity)
        {
          gsize bigger = capacity <= size / 2 ? capacity * 2 : size;
          guchar *grown = g_try_realloc (buffer, bigger);

          if (grown == NULL)
            {
              inflateEnd (&z);
              goto no_memory;
            }
          buffer = grown;
          capacity = bigger;
        }

      z.next_out = buffer + produced;
      z.avail_out = (uInt) MIN (capacity - produced, G_MAXUINT32);
      z.avail_in = before = (uInt) MIN (in_left, G_MAXUINT32);
      ret = inflate (&z, Z_NO_FLUSH);
      in_left -= before - z.avail_in;
      produced = z.next_out - buffer;

      if (ret == Z_STREAM_END)
        {
          complete = produced == size;
          break;
        }
      if (ret != Z_OK)
        break;
    }

  inflateEnd (&z);
  if (!complete)
    return damaged (error);

  *out = g_steal_pointer (&buffer);
  return TRUE;

no_memory:
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       _("not enough memory for the array"));
  return FALSE;
}

static gboolean
read_member (const Archive   *archive,
             const Entry     *entry,
             SerioToolArray  *array,
             GError         **error)
{
  const guchar *local;
  const guchar *data;
  g_autofree guchar *inflated = NULL;
  guint64 data_offset;
  gsize name_len;

  if (g_str_has_suffix (entry->name, "/"))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("a directory is not an array"));
      return FALSE;
    }
  if (!g_str_has_suffix (entry->name, ".npy"))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("the member is not a .npy file"));
      return FALSE;
    }
  if ((entry->flags & FLAG_ENCRYPTED) != 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("encrypted members are not supported"));
      return FALSE;
    }
  if (entry->method != METHOD_STORED && entry->method != METHOD_DEFLATE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   /* TRANSLATORS: a ZIP compression method number */
                   _("the compression method %u is not supported (only stored and deflate)"),
                   entry->method);
      return FALSE;
    }

  if (!in_archive (archive, entry->local_offset, LOCAL_SIZE))
    return damaged (error);
  local = archive->data + entry->local_offset;
  if (get32 (local) != LOCAL_SIGNATURE)
    return damaged (error);
  name_len = get16 (local + 26);
  data_offset = entry->local_offset + LOCAL_SIZE + name_len + get16 (local + 28);
  if (!in_archive (archive, data_offset, entry->compressed_size) ||
      entry->size > G_MAXSIZE)
    return damaged (error);
  data = archive->data + data_offset;

  if (entry->method == METHOD_STORED)
    {
      if (entry->compressed_size != entry->size)
        return damaged (error);
    }
  else
    {
      if (!inflate_member (data, entry->compressed_size, entry->size, &inflated, error))
        return FALSE;
      data = inflated;
    }

  if (crc32_z (crc32 (0, NULL, 0), data, entry->size) != entry->crc)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("the member does not match its CRC-32: the archive is damaged"));
      return FALSE;
    }

  if (!serio_tool_npy_read (data, entry->size, array, error))
    return FALSE;
  array->name = g_strndup (entry->name, strlen (entry->name) - strlen (".npy"));

  return TRUE;
}

/*
 * serio_tool_npz_read:
 * @bytes: the contents of a .npz file
 * @error: errors about a member start with its name
 *
 * Returns: (element-type SerioToolArray): the arrays, in the order of the
 *   central directory (the order numpy.savez() was given)
 */
GPtrArray *
serio_tool_npz_read (GBytes  *bytes,
                     GError **error)
{
  g_autoptr(GPtrArray) arrays = g_ptr_array_new_with_free_func ((GDestroyNotify) serio_tool_array_free);
  Archive archive;
  Directory dir;
  gsize offset, end;

  archive.data = g_bytes_get_data (bytes, &archive.size);
  if (!find_directory (&archive, &dir, error))
    return NULL;

  offset = dir.offset;
  end = dir.offset + dir.size;
  for (guint64 i = 0; i < dir.n_entries; i++)
    {
      g_auto(Entry) entry = { 0, };
      SerioToolArray *array;

      if (!read_entry (&archive, &offset, end, &entry, error))
        return NULL;

      array = g_new0 (SerioToolArray, 1);
      if (!read_member (&archive, &entry, array, error))
        {
          g_free (array);
          /* TRANSLATORS: a member of an archive, before an error message
           * about it */
          g_prefix_error (error, _("%s: "), entry.name);
          return NULL;
        }
      g_ptr_array_add (arrays, array);
    }

  return g_steal_pointer (&arrays);
}
