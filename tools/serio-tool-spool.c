/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-spool.c: spools, output that the serio tool's commands hold
 * back, in bounded memory
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gprintf.h>
#include <glib/gstdio.h>

#include "serio-tool.h"

/* A spool of serio_tool_spool_new() keeps this much in memory, the rest
 * in a temporary file. */
#define SPOOL_MEMORY (256 * 1024)

/* Spools are read back, and their lines put together, in pieces of this
 * size. */
#define SPOOL_CHUNK (64 * 1024)

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

