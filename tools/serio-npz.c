/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-npz.c: reading NumPy .npz archives, and writing them
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
 *
 * The reading is strict, since a reader that accepts more than numpy
 * (CPython's zipfile) does would give other arrays from the same file,
 * or more of them: the whole central directory is read by its size and
 * must hold as many entries as the end record counts; no two members
 * have the same name, and none an empty one; each local header has its
 * entry's name, method, CRC-32 and sizes; no two members share bytes, nor
 * a member with the directory (overlapping members are how a few
 * kilobytes become gigabytes). All of it is checked before the first
 * array goes to the sink. The archive must be read by offset: a pipe is
 * refused.
 *
 * The archive is read by offset, through buffers of a bounded size: the
 * end of the file for the end of central directory record, one entry of
 * the central directory at a time, and each member's data in pieces,
 * inflated as it is read, into the .npy reader. A member's CRC-32 is
 * checked once its data was read; by then its values went to the sink,
 * which is why the sink must drop everything on an error.
 *
 * The writer (serio_numpy_writer_new() in serio-npy.c, for the .npy
 * bytes of each member) writes the archive as the values come, each
 * member's CRC-32 in a data descriptor after its data.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gi18n.h>
#include <zlib.h>

#include "serio-numpy.h"

#define EOCD_SIGNATURE 0x06054b50
#define EOCD_SIZE 22
#define ZIP64_LOCATOR_SIGNATURE 0x07064b50
#define ZIP64_LOCATOR_SIZE 20
#define ZIP64_EOCD_SIGNATURE 0x06064b50
#define ZIP64_EOCD_SIZE 56
#define CENTRAL_SIGNATURE 0x02014b50
#define CENTRAL_SIZE 46
#define LOCAL_SIGNATURE 0x04034b50
#define DESCRIPTOR_SIGNATURE 0x08074b50
#define LOCAL_SIZE 30

/* The most that an end of central directory record and its comment take. */
#define TAIL_SIZE (EOCD_SIZE + 0xffff)

#define METHOD_STORED 0
#define METHOD_DEFLATE 8

#define FLAG_ENCRYPTED 0x0001
/* Sizes and CRC-32 in a data descriptor after the data, as the writer
 * puts them, since they are known only then. */
#define FLAG_DATA_DESCRIPTOR 0x0008
/* The name is UTF-8. */
#define FLAG_UTF8 0x0800

/* Compressed bytes read at a time. */
#define INPUT_BUFFER_SIZE (256 * 1024)

typedef struct
{
  GInputStream *stream;
  guint64       size;
  guint64       position;     /* where the stream was left */
  gboolean      io_failed;
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

/* Reads @size bytes at @offset, which must be in the archive; a file that
 * turns out shorter than it was is damaged. */
static gboolean
archive_read (Archive  *archive,
              guint64   offset,
              void     *buffer,
              gsize     size,
              GError  **error)
{
  gsize got;

  g_assert (in_archive (archive, offset, size));
  if (size == 0)
    return TRUE;

  if (archive->position != offset)
    {
      if (!g_seekable_seek (G_SEEKABLE (archive->stream), (goffset) offset, G_SEEK_SET,
                            NULL, error))
        {
          archive->io_failed = TRUE;
          return FALSE;
        }
      archive->position = offset;
    }

  if (!g_input_stream_read_all (archive->stream, buffer, size, &got, NULL, error))
    {
      archive->io_failed = TRUE;
      archive->position = G_MAXUINT64;
      return FALSE;
    }
  archive->position += got;
  if (got < size)
    return damaged (error);

  return TRUE;
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
find_directory (Archive    *archive,
                Directory  *dir,
                GError    **error)
{
  g_autofree guchar *tail = NULL;
  const guchar *eocd = NULL;
  guint64 eocd_offset = 0;
  gsize tail_size;
  guint64 tail_offset;

  if (archive->size < EOCD_SIZE)
    return not_zip (error);

  tail_size = (gsize) MIN (archive->size, TAIL_SIZE);
  tail_offset = archive->size - tail_size;
  tail = g_malloc (tail_size);
  if (!archive_read (archive, tail_offset, tail, tail_size, error))
    return FALSE;

  for (gsize offset = tail_size - EOCD_SIZE + 1; offset-- > 0;)
    {
      const guchar *p = tail + offset;

      if (get32 (p) == EOCD_SIGNATURE && get16 (p + 20) == tail_size - offset - EOCD_SIZE)
        {
          eocd = p;
          eocd_offset = tail_offset + offset;
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
      guchar locator[ZIP64_LOCATOR_SIZE];
      guchar eocd64[ZIP64_EOCD_SIZE];
      guint64 eocd64_offset;

      if (eocd_offset < ZIP64_LOCATOR_SIZE)
        return damaged (error);
      if (!archive_read (archive, eocd_offset - ZIP64_LOCATOR_SIZE, locator, sizeof locator, error))
        return FALSE;
      if (get32 (locator) != ZIP64_LOCATOR_SIGNATURE)
        return damaged (error);
      eocd64_offset = get64 (locator + 8);
      if (!in_archive (archive, eocd64_offset, ZIP64_EOCD_SIZE))
        return damaged (error);
      if (!archive_read (archive, eocd64_offset, eocd64, sizeof eocd64, error))
        return FALSE;
      if (get32 (eocd64) != ZIP64_EOCD_SIGNATURE)
        return damaged (error);
      dir->n_entries = get64 (eocd64 + 32);
      dir->size = get64 (eocd64 + 40);
      dir->offset = get64 (eocd64 + 48);
    }

  /* The count is checked against the entries that the directory holds
   * once they were read. */
  if (!in_archive (archive, dir->offset, dir->size))
    return damaged (error);

  return TRUE;
}

typedef struct
{
  char    *name;              /* as UTF-8 */
  GBytes  *raw_name;          /* as the directory has it */
  guint    flags;
  guint    method;
  guint32  crc;
  guint64  compressed_size;
  guint64  size;
  guint64  local_offset;
  guint64  data_offset;       /* after the local header */
} Entry;

static void
entry_free (Entry *entry)
{
  g_free (entry->name);
  g_clear_pointer (&entry->raw_name, g_bytes_unref);
  g_free (entry);
}

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

/* Reads the entry of the central directory at @offset, which must end
 * before @end, and moves @offset past it. @buffer holds its variable
 * part (at most three times 65535 bytes). */
static gboolean
read_entry (Archive      *archive,
            guint64      *offset,
            guint64       end,
            GByteArray   *buffer,
            Entry        *entry,
            GError      **error)
{
  guchar p[CENTRAL_SIZE];
  const guchar *name;
  gsize name_len, extra_len, comment_len;

  if (end - *offset < CENTRAL_SIZE)
    return damaged (error);
  if (!archive_read (archive, *offset, p, sizeof p, error))
    return FALSE;
  if (get32 (p) != CENTRAL_SIGNATURE)
    return damaged (error);

  name_len = get16 (p + 28);
  if (name_len == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("a member of the archive has no name, which an array needs"));
      return FALSE;
    }
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

  g_byte_array_set_size (buffer, name_len + extra_len);
  if (!archive_read (archive, *offset + CENTRAL_SIZE, buffer->data, buffer->len, error))
    return FALSE;
  name = buffer->data;
  if (!read_zip64_extra (name + name_len, extra_len, entry))
    return damaged (error);

  /* Names are UTF-8 when bit 11 is set, else CP437: NumPy only writes
   * non-ASCII names as UTF-8, so both read as UTF-8 here, and bytes that
   * are not become U+FFFD. A NUL cannot be part of an array's name. */
  if (memchr (name, '\0', name_len) != NULL)
    return damaged (error);
  entry->name = g_utf8_make_valid ((const char *) name, name_len);
  entry->raw_name = g_bytes_new (name, name_len);

  *offset += CENTRAL_SIZE + name_len + extra_len + comment_len;
  return TRUE;
}

/* The .npy bytes of a member, read from the archive and inflated as they
 * are asked for, never more than the entry declares. */
typedef struct
{
  SerioNumpySource  source;
  Archive          *archive;
  const Entry      *entry;
  guint64           in_offset;      /* the next compressed byte */
  guint64           in_left;        /* compressed bytes not read yet */
  guint64           out_left;       /* .npy bytes not given yet */
  uLong             crc;
  guchar           *input;          /* INPUT_BUFFER_SIZE, for deflate */
  z_stream          z;
  gboolean          inflating;
  gboolean          stream_end;
} Member;

/* Reads the next compressed bytes into the inflater, when it has used
 * those it had. */
static gboolean
member_refill (Member  *member,
               GError **error)
{
  gsize n;

  if (member->z.avail_in > 0 || member->in_left == 0)
    return TRUE;

  n = (gsize) MIN (member->in_left, INPUT_BUFFER_SIZE);
  if (!archive_read (member->archive, member->in_offset, member->input, n, error))
    {
      member->source.io_failed = member->archive->io_failed;
      return FALSE;
    }
  member->in_offset += n;
  member->in_left -= n;
  member->z.next_in = member->input;
  member->z.avail_in = (uInt) n;

  return TRUE;
}

static gssize
member_read (SerioNumpySource  *source,
             void              *buffer,
             gsize              size,
             GError           **error)
{
  Member *member = (Member *) source;
  gsize produced = 0;

  size = (gsize) MIN (size, member->out_left);
  if (size == 0)
    return 0;

  if (member->entry->method == METHOD_STORED)
    {
      size = (gsize) MIN (size, member->in_left);
      if (!archive_read (member->archive, member->in_offset, buffer, size, error))
        {
          source->io_failed = member->archive->io_failed;
          return -1;
        }
      member->in_offset += size;
      member->in_left -= size;
      produced = size;
    }
  else
    {
      size = MIN (size, G_MAXUINT32);
      while (produced == 0)
        {
          int ret;

          /* The stream ended before the declared size. */
          if (member->stream_end)
            {
              damaged (error);
              return -1;
            }
          if (!member_refill (member, error))
            return -1;

          member->z.next_out = buffer;
          member->z.avail_out = (uInt) size;
          ret = inflate (&member->z, Z_NO_FLUSH);
          produced = size - member->z.avail_out;
          if (ret == Z_STREAM_END)
            member->stream_end = TRUE;
          else if (ret != Z_OK)
            {
              damaged (error);
              return -1;
            }
        }
    }

  member->crc = crc32 (member->crc, buffer, (uInt) produced);
  member->out_left -= produced;

  return produced;
}

/* After the last byte: the deflate stream must end there, and the bytes
 * must match the CRC-32. */
static gboolean
member_finish (Member  *member,
               GError **error)
{
  g_assert (member->out_left == 0);

  while (member->entry->method == METHOD_DEFLATE && !member->stream_end)
    {
      guchar extra;
      int ret;

      if (!member_refill (member, error))
        return FALSE;
      member->z.next_out = &extra;
      member->z.avail_out = 1;
      ret = inflate (&member->z, Z_NO_FLUSH);
      if (member->z.avail_out == 0 || (ret != Z_OK && ret != Z_STREAM_END))
        return damaged (error);
      member->stream_end = ret == Z_STREAM_END;
    }

  if (member->crc != member->entry->crc)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("the member does not match its CRC-32: the archive is damaged"));
      return FALSE;
    }

  return TRUE;
}

/* Reads what is left of the member and checks it, after a problem with
 * its contents: a damaged archive is the problem to report then. */
static gboolean
member_drain (Member  *member,
              GError **error)
{
  g_autofree guchar *scratch = g_malloc (INPUT_BUFFER_SIZE);

  while (member->out_left > 0)
    {
      if (member_read (&member->source, scratch, INPUT_BUFFER_SIZE, error) < 0)
        return FALSE;
    }

  return member_finish (member, error);
}

/* What a member must be to be read as an array, from its entry. */
static gboolean
check_entry (const Entry  *entry,
             GError      **error)
{
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

  return TRUE;
}

/* Reads the local header of @entry, checks it against the entry, and
 * sets where the member's data begins. The name, the method, the CRC-32
 * and the sizes must be the entry's, the last three unless they follow
 * the data in a data descriptor (flag bit 3: zeros in the header), and
 * sizes in a ZIP64 extra field as in the entry. */
static gboolean
read_local_header (Archive  *archive,
                   Entry    *entry,
                   GError  **error)
{
  guchar local[LOCAL_SIZE];
  g_autofree guchar *variable = NULL;
  Entry local_entry = { 0, };
  gsize name_len, extra_len;
  const char *differs = NULL;
  gboolean described;
  gsize entry_name_len;
  const void *entry_name = g_bytes_get_data (entry->raw_name, &entry_name_len);

  if (!in_archive (archive, entry->local_offset, LOCAL_SIZE))
    return damaged (error);
  if (!archive_read (archive, entry->local_offset, local, sizeof local, error))
    return FALSE;
  if (get32 (local) != LOCAL_SIGNATURE)
    return damaged (error);

  name_len = get16 (local + 26);
  extra_len = get16 (local + 28);
  if (!in_archive (archive, entry->local_offset + LOCAL_SIZE, name_len + extra_len))
    return damaged (error);
  variable = g_malloc (MAX (name_len + extra_len, 1));
  if (!archive_read (archive, entry->local_offset + LOCAL_SIZE, variable, name_len + extra_len,
                     error))
    return FALSE;

  local_entry.flags = get16 (local + 6);
  local_entry.method = get16 (local + 8);
  local_entry.crc = (guint32) get32 (local + 14);
  local_entry.compressed_size = get32 (local + 18);
  local_entry.size = get32 (local + 22);
  if (!read_zip64_extra (variable + name_len, extra_len, &local_entry))
    return damaged (error);
  described = (local_entry.flags & FLAG_DATA_DESCRIPTOR) != 0;

  if (name_len != entry_name_len || memcmp (variable, entry_name, name_len) != 0)
    /* TRANSLATORS: what differs between a ZIP archive's local header and
     * its central directory, in “the local header does not match the
     * central directory (%s)” */
    differs = N_("its name");
  else if (local_entry.method != entry->method)
    differs = N_("its compression method");
  else if (local_entry.crc != entry->crc && !(described && local_entry.crc == 0))
    differs = N_("its CRC-32");
  else if ((local_entry.compressed_size != entry->compressed_size ||
            local_entry.size != entry->size) &&
           !(described && local_entry.compressed_size == 0 && local_entry.size == 0))
    differs = N_("its sizes");
  if (differs != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: %s is what differs, such as “its name” */
                   _("the local header does not match the central directory (%s): "
                     "the archive is damaged"), _(differs));
      return FALSE;
    }

  entry->data_offset = entry->local_offset + LOCAL_SIZE + name_len + extra_len;
  if (!in_archive (archive, entry->data_offset, entry->compressed_size) ||
      entry->size > G_MAXINT64)
    return damaged (error);
  if (entry->method == METHOD_STORED && entry->compressed_size != entry->size)
    return damaged (error);

  return TRUE;
}

static int
compare_local_offsets (gconstpointer a,
                       gconstpointer b)
{
  const Entry *x = *(const Entry * const *) a;
  const Entry *y = *(const Entry * const *) b;

  return x->local_offset < y->local_offset ? -1 : x->local_offset > y->local_offset;
}

/* Every member, local header and data, must lie before the central
 * directory and apart from every other: members that share bytes would
 * be read twice (the "overlapping" zip bombs, where a few kilobytes
 * inflate to gigabytes). */
static gboolean
check_layout (GPtrArray        *entries,
              const Directory  *dir,
              GError          **error)
{
  g_autoptr(GPtrArray) by_offset = g_ptr_array_copy (entries, NULL, NULL);

  /* The copy would free the entries too. */
  g_ptr_array_set_free_func (by_offset, NULL);
  g_ptr_array_sort (by_offset, compare_local_offsets);
  for (guint i = 0; i < by_offset->len; i++)
    {
      const Entry *entry = g_ptr_array_index (by_offset, i);
      guint64 end = entry->data_offset + entry->compressed_size;

      if (i + 1 < by_offset->len)
        {
          const Entry *next = g_ptr_array_index (by_offset, i + 1);

          if (end > next->local_offset)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           /* TRANSLATORS: two members of an archive */
                           _("the members “%s” and “%s” overlap: the archive is damaged, "
                             "or a zip bomb"), entry->name, next->name);
              return FALSE;
            }
        }
      else if (end > dir->offset)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       /* TRANSLATORS: a member of an archive */
                       _("the member “%s” overlaps the central directory: the archive is "
                         "damaged"), entry->name);
          return FALSE;
        }
    }

  return TRUE;
}

static gboolean
read_member (Archive               *archive,
             const Entry           *entry,
             const SerioNumpySink  *sink,
             gpointer               user_data,
             GError               **error)
{
  g_autofree char *name = NULL;
  g_autofree guchar *input = NULL;
  Member member = { { 0, }, };
  gboolean ok;

  member.source.read = member_read;
  member.source.size = (gint64) entry->size;
  member.archive = archive;
  member.entry = entry;
  member.in_offset = entry->data_offset;
  member.in_left = entry->compressed_size;
  member.out_left = entry->size;
  member.crc = crc32 (0, NULL, 0);
  if (entry->method == METHOD_DEFLATE)
    {
      input = g_malloc (INPUT_BUFFER_SIZE);
      member.input = input;
      if (inflateInit2 (&member.z, -MAX_WBITS) != Z_OK)
        g_error ("inflateInit2 failed: out of memory");
      member.inflating = TRUE;
    }

  name = g_strndup (entry->name, strlen (entry->name) - strlen (".npy"));
  ok = serio_numpy_read_npy (&member.source, name, sink, user_data, error);
  if (ok)
    {
      ok = member_finish (&member, error);
    }
  else if (error != NULL && *error != NULL && !member.source.io_failed)
    {
      GError *damage = NULL;

      /* The archive's damage comes first, as when the CRC-32 is checked
       * before the contents. */
      if (!member_drain (&member, &damage))
        {
          g_clear_error (error);
          g_propagate_error (error, damage);
        }
    }

  if (member.inflating)
    inflateEnd (&member.z);
  archive->io_failed = archive->io_failed || member.source.io_failed;

  return ok;
}

/* A member's name before an error about it. */
static void
prefix_member (GError      **error,
               const Entry  *entry)
{
  /* TRANSLATORS: a member of an archive, before an error message about
   * it */
  g_prefix_error (error, _("%s: "), entry->name);
}

/* Reads the whole central directory, which ends at @dir's end, and checks
 * it: as many entries as the end record counts (CPython's zipfile, and so
 * numpy, read the directory by its size and ignore the count, so a count
 * that differs would drop members), names that do not repeat (numpy keeps
 * the last of a name, a bundle finds the first), local headers that
 * match, and members that do not overlap. The entries take as much
 * memory as the directory takes bytes, at most. */
static GPtrArray *
read_directory (Archive          *archive,
                const Directory  *dir,
                GError          **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_free);
  g_autoptr(GByteArray) buffer = g_byte_array_new ();
  g_autoptr(GHashTable) names = g_hash_table_new (g_bytes_hash, g_bytes_equal);
  guint64 offset = dir->offset;
  guint64 end = dir->offset + dir->size;

  while (offset < end)
    {
      Entry *entry = g_new0 (Entry, 1);

      g_ptr_array_add (entries, entry);
      if (!read_entry (archive, &offset, end, buffer, entry, error))
        return NULL;
      if (!g_hash_table_add (names, entry->raw_name))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       /* TRANSLATORS: a member of an archive */
                       _("more than one member is called “%s”: the archive is ambiguous "
                         "(numpy would read the last, serio the first)"), entry->name);
          return NULL;
        }
    }

  if (entries->len != dir->n_entries)
    {
      g_autofree char *counted = g_strdup_printf ("%" G_GUINT64_FORMAT, dir->n_entries);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: two numbers of members of an
                                 * archive */
                                "the end of the central directory counts %s member, "
                                "but the directory holds %u: the archive is damaged",
                                "the end of the central directory counts %s members, "
                                "but the directory holds %u: the archive is damaged",
                                (gulong) MIN (dir->n_entries, G_MAXULONG)),
                   counted, entries->len);
      return NULL;
    }

  for (guint i = 0; i < entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (entries, i);

      if (!read_local_header (archive, entry, error))
        {
          if (!archive->io_failed)
            prefix_member (error, entry);
          return NULL;
        }
    }

  if (!check_layout (entries, dir, error))
    return NULL;

  return g_steal_pointer (&entries);
}

/*
 * serio_numpy_read_npz:
 * @stream: a .npz file, which must be able to seek
 * @size: its size, or -1 to find it by seeking
 * @sink: what each array goes to, in the order of the central directory
 *   (the order numpy.savez() was given)
 * @io_failed: (out): whether the error set is one of the stream
 * @error: errors about a member start with its name
 *
 * The whole archive is checked before the first array goes to the sink.
 *
 * Returns: %TRUE when every array was read; %FALSE with @error set
 */
gboolean
serio_numpy_read_npz (GInputStream          *stream,
                      gint64                 size,
                      const SerioNumpySink  *sink,
                      gpointer               user_data,
                      gboolean              *io_failed,
                      GError               **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  Archive archive = { stream, 0, 0, FALSE };
  Directory dir;

  *io_failed = FALSE;

  /* The directory is at the end: an archive must be read by offset. */
  if (!G_IS_SEEKABLE (stream) || !g_seekable_can_seek (G_SEEKABLE (stream)))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _("a .npz file must be read from a file that can seek, not a pipe"));
      *io_failed = TRUE;
      return FALSE;
    }
  if (size < 0)
    {
      if (!g_seekable_seek (G_SEEKABLE (stream), 0, G_SEEK_END, NULL, error))
        {
          *io_failed = TRUE;
          return FALSE;
        }
      size = g_seekable_tell (G_SEEKABLE (stream));
      archive.position = (guint64) size;
    }
  archive.size = (guint64) size;

  if (!find_directory (&archive, &dir, error) ||
      (entries = read_directory (&archive, &dir, error)) == NULL)
    {
      *io_failed = archive.io_failed;
      return FALSE;
    }

  for (guint i = 0; i < entries->len; i++)
    {
      const Entry *entry = g_ptr_array_index (entries, i);

      if (!check_entry (entry, error) ||
          !read_member (&archive, entry, sink, user_data, error))
        {
          *io_failed = archive.io_failed;
          if (!*io_failed)
            prefix_member (error, entry);
          return FALSE;
        }
    }

  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

/* Sizes and offsets of ZIP without its ZIP64 extension: a field of this
 * value says that the ZIP64 record holds it. */
#define ZIP_LIMIT G_GUINT64_CONSTANT (0xffffffff)
#define ZIP_MAX_ENTRIES 0xffff

/* 1980-01-01 00:00, the earliest DOS date: archives do not depend on when
 * they were written. */
#define ZIP_DOS_DATE 0x21
#define ZIP_DOS_TIME 0

#define ZIP_VERSION 20
#define ZIP64_VERSION 45

#define DEFLATE_BUFFER_SIZE 65536

static void
put16 (GByteArray *out,
       guint       value)
{
  guint8 b[2] = { value & 0xff, (value >> 8) & 0xff };

  g_byte_array_append (out, b, sizeof b);
}

static void
put32 (GByteArray *out,
       guint64     value)
{
  guint8 b[4] = { value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >> 24) & 0xff };

  g_byte_array_append (out, b, sizeof b);
}

static void
put64 (GByteArray *out,
       guint64     value)
{
  put32 (out, value & ZIP_LIMIT);
  put32 (out, value >> 32);
}

static gboolean
is_ascii (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      if ((guchar) *p >= 0x80)
        return FALSE;
    }

  return TRUE;
}

/*
 * SerioNumpyZipWriter:
 *
 * The ZIP side of serio_numpy_writer_new() for a .npz archive: each
 * member's CRC-32 (and, compressed, its size) follows its data in a data
 * descriptor (APPNOTE 4.3.9), since the output (a save's temporary file)
 * is not read back, and ZIP64 records are written where sizes, offsets or
 * the number of members need them, as Python's zipfile writes to a stream
 * that cannot seek; numpy.load() reads them.
 */
struct _SerioNumpyZipWriter
{
  GOutputStream    *stream;
  gboolean          compressed;
  guint64           written;
  guint64           n_members;
  GByteArray       *central;
  guint8           *deflated;       /* DEFLATE_BUFFER_SIZE */

  /* The member being written */
  char             *member;
  guint             flags;
  gboolean          zip64;
  guint64           offset;         /* of its local header */
  guint64           size;           /* of its .npy bytes */
  guint64           stored_size;    /* of what was written of them */
  uLong             crc;
  z_stream          z;
  gboolean          deflating;
};

SerioNumpyZipWriter *
serio_numpy_zip_writer_new (GOutputStream *stream,
                            gboolean       compressed)
{
  SerioNumpyZipWriter *zip = g_new0 (SerioNumpyZipWriter, 1);

  zip->stream = g_object_ref (stream);
  zip->compressed = compressed;
  zip->central = g_byte_array_new ();
  if (compressed)
    zip->deflated = g_malloc (DEFLATE_BUFFER_SIZE);

  return zip;
}

void
serio_numpy_zip_writer_free (SerioNumpyZipWriter *zip)
{
  if (zip->deflating)
    deflateEnd (&zip->z);
  g_object_unref (zip->stream);
  g_byte_array_unref (zip->central);
  g_free (zip->deflated);
  g_free (zip->member);
  g_free (zip);
}

static gboolean
write_raw (SerioNumpyZipWriter  *zip,
           const void           *data,
           gsize                 size,
           GError              **error)
{
  if (!g_output_stream_write_all (zip->stream, data, size, NULL, NULL, error))
    return FALSE;
  zip->written += size;

  return TRUE;
}

/* Feeds @size bytes to the deflate stream (all of them with @flush
 * Z_FINISH, to its end) and writes what comes out. */
static gboolean
deflate_data (SerioNumpyZipWriter  *zip,
              const void           *data,
              gsize                 size,
              int                   flush,
              GError              **error)
{
  int ret;

  zip->z.next_in = (Bytef *) data;
  zip->z.avail_in = (uInt) size;
  do
    {
      gsize produced;

      zip->z.next_out = zip->deflated;
      zip->z.avail_out = DEFLATE_BUFFER_SIZE;
      ret = deflate (&zip->z, flush);
      g_assert (ret != Z_STREAM_ERROR);
      produced = DEFLATE_BUFFER_SIZE - zip->z.avail_out;
      if (!write_raw (zip, zip->deflated, produced, error))
        return FALSE;
      zip->stored_size += produced;
    }
  while (zip->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));

  return TRUE;
}

/* The next bytes of the current member's .npy file. */
gboolean
serio_numpy_zip_writer_write (SerioNumpyZipWriter  *zip,
                              const void           *data,
                              gsize                 size,
                              GError              **error)
{
  zip->crc = crc32 (zip->crc, data, (uInt) size);
  if (zip->compressed)
    return deflate_data (zip, data, size, Z_NO_FLUSH, error);

  zip->stored_size += size;
  return write_raw (zip, data, size, error);
}

/*
 * serio_numpy_zip_writer_begin_member:
 * @name: the array's name: the member is called @name.npy
 * @size: the size of its .npy bytes
 *
 * Writes the local header of a member.
 */
gboolean
serio_numpy_zip_writer_begin_member (SerioNumpyZipWriter  *zip,
                                     const char           *name,
                                     guint64               size,
                                     GError              **error)
{
  g_autoptr(GByteArray) local = NULL;
  gsize name_len;
  guint64 bound;

  g_free (zip->member);
  zip->member = g_strconcat (name, ".npy", NULL);
  name_len = strlen (zip->member);
  if (name_len > 0xffff)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           /* TRANSLATORS: ZIP limits the names of members to
                            * 65535 bytes */
                           _("the name of the array is too long for a member of a .npz file"));
      return FALSE;
    }

  /* A member that might not fit in 32-bit sizes gets ZIP64 sizes: deflate
   * makes data that does not compress at most a few bytes per 16 KiB
   * larger. */
  zip->size = size;
  bound = size;
  if (zip->compressed)
    {
      if (bound > G_MAXUINT64 - (bound >> 10) - 1024)
        return serio_numpy_too_large (error);
      bound += (bound >> 10) + 1024;
    }
  zip->zip64 = bound >= ZIP_LIMIT;
  zip->flags = FLAG_DATA_DESCRIPTOR | (is_ascii (zip->member) ? 0 : FLAG_UTF8);
  zip->offset = zip->written;
  zip->stored_size = 0;
  zip->crc = crc32 (0, NULL, 0);

  local = g_byte_array_new ();
  put32 (local, LOCAL_SIGNATURE);
  put16 (local, zip->zip64 ? ZIP64_VERSION : ZIP_VERSION);
  put16 (local, zip->flags);
  put16 (local, zip->compressed ? METHOD_DEFLATE : METHOD_STORED);
  put16 (local, ZIP_DOS_TIME);
  put16 (local, ZIP_DOS_DATE);
  put32 (local, 0);                   /* CRC-32 and sizes: in the descriptor */
  put32 (local, 0);
  put32 (local, 0);
  put16 (local, name_len);
  put16 (local, zip->zip64 ? 20 : 0);
  g_byte_array_append (local, (const guint8 *) zip->member, name_len);
  if (zip->zip64)
    {
      put16 (local, 0x0001);          /* ZIP64: both sizes, in the descriptor */
      put16 (local, 16);
      put64 (local, 0);
      put64 (local, 0);
    }
  if (!write_raw (zip, local->data, local->len, error))
    return FALSE;

  if (zip->compressed)
    {
      if (deflateInit2 (&zip->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                        Z_DEFAULT_STRATEGY) != Z_OK)
        g_error ("deflateInit2 failed: out of memory");
      zip->deflating = TRUE;
    }

  return TRUE;
}

/* Ends the current member, once all its bytes were written: its data
 * descriptor, and its entry in the central directory. */
gboolean
serio_numpy_zip_writer_end_member (SerioNumpyZipWriter  *zip,
                                   GError              **error)
{
  g_autoptr(GByteArray) descriptor = NULL;
  g_autoptr(GByteArray) extra = NULL;
  GByteArray *central = zip->central;
  gsize name_len;
  gboolean needs_zip64;

  zip->n_members++;
  if (zip->compressed)
    {
      gboolean done = deflate_data (zip, NULL, 0, Z_FINISH, error);

      deflateEnd (&zip->z);
      zip->deflating = FALSE;
      if (!done)
        return FALSE;
    }
  if (!zip->zip64 && zip->stored_size >= ZIP_LIMIT)
    return serio_numpy_too_large (error);

  descriptor = g_byte_array_new ();
  put32 (descriptor, DESCRIPTOR_SIGNATURE);
  put32 (descriptor, zip->crc);
  if (zip->zip64)
    {
      put64 (descriptor, zip->stored_size);
      put64 (descriptor, zip->size);
    }
  else
    {
      put32 (descriptor, zip->stored_size);
      put32 (descriptor, zip->size);
    }
  if (!write_raw (zip, descriptor->data, descriptor->len, error))
    return FALSE;

  /* In the central directory, the ZIP64 field holds the values that do
   * not fit, in this order. */
  extra = g_byte_array_new ();
  if (zip->size >= ZIP_LIMIT)
    put64 (extra, zip->size);
  if (zip->stored_size >= ZIP_LIMIT)
    put64 (extra, zip->stored_size);
  if (zip->offset >= ZIP_LIMIT)
    put64 (extra, zip->offset);
  needs_zip64 = zip->zip64 || extra->len > 0;

  name_len = strlen (zip->member);
  put32 (central, CENTRAL_SIGNATURE);
  put16 (central, 0x0300 | (needs_zip64 ? ZIP64_VERSION : ZIP_VERSION));   /* made by: Unix */
  put16 (central, needs_zip64 ? ZIP64_VERSION : ZIP_VERSION);
  put16 (central, zip->flags);
  put16 (central, zip->compressed ? METHOD_DEFLATE : METHOD_STORED);
  put16 (central, ZIP_DOS_TIME);
  put16 (central, ZIP_DOS_DATE);
  put32 (central, zip->crc);
  put32 (central, MIN (zip->stored_size, ZIP_LIMIT));
  put32 (central, MIN (zip->size, ZIP_LIMIT));
  put16 (central, name_len);
  put16 (central, extra->len > 0 ? extra->len + 4 : 0);
  put16 (central, 0);                 /* comment */
  put16 (central, 0);                 /* disk */
  put16 (central, 0);                 /* internal attributes */
  put32 (central, (guint64) 0100644 << 16);   /* a regular file, rw-r--r-- */
  put32 (central, MIN (zip->offset, ZIP_LIMIT));
  g_byte_array_append (central, (const guint8 *) zip->member, name_len);
  if (extra->len > 0)
    {
      put16 (central, 0x0001);
      put16 (central, extra->len);
      g_byte_array_append (central, extra->data, extra->len);
    }

  return TRUE;
}


/* Completes the archive: its central directory. */
gboolean
serio_numpy_zip_writer_finish (SerioNumpyZipWriter  *zip,
                               GError              **error)
{
  g_autoptr(GByteArray) end = NULL;
  guint64 central_offset, central_size;

  central_offset = zip->written;
  central_size = zip->central->len;
  if (!write_raw (zip, zip->central->data, zip->central->len, error))
    return FALSE;

  end = g_byte_array_new ();
  if (zip->n_members >= ZIP_MAX_ENTRIES || central_size >= ZIP_LIMIT ||
      central_offset >= ZIP_LIMIT)
    {
      guint64 zip64_end_offset = zip->written;

      put32 (end, ZIP64_EOCD_SIGNATURE);
      put64 (end, ZIP64_EOCD_SIZE - 12);   /* the size of the rest of it */
      put16 (end, 0x0300 | ZIP64_VERSION);
      put16 (end, ZIP64_VERSION);
      put32 (end, 0);                 /* this disk */
      put32 (end, 0);                 /* the disk of the central directory */
      put64 (end, zip->n_members);
      put64 (end, zip->n_members);
      put64 (end, central_size);
      put64 (end, central_offset);

      put32 (end, ZIP64_LOCATOR_SIGNATURE);
      put32 (end, 0);
      put64 (end, zip64_end_offset);
      put32 (end, 1);                 /* disks */
    }

  put32 (end, EOCD_SIGNATURE);
  put16 (end, 0);                     /* this disk */
  put16 (end, 0);                     /* the disk of the central directory */
  put16 (end, MIN (zip->n_members, ZIP_MAX_ENTRIES));
  put16 (end, MIN (zip->n_members, ZIP_MAX_ENTRIES));
  put32 (end, MIN (central_size, ZIP_LIMIT));
  put32 (end, MIN (central_offset, ZIP_LIMIT));
  put16 (end, 0);                     /* comment */

  return write_raw (zip, end->data, end->len, error);
}
