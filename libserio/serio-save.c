/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-save.c: replacing a file atomically
 *
 * Copyright 2026 The libserio authors
 *
 * A save writes to a temporary file in the target's directory and, once
 * everything is written and synced, puts it in place with one rename, so
 * that the target holds the old or the new contents and never a part.
 *
 * On Linux the temporary file is unnamed (O_TMPFILE): it has no name in the
 * directory until it is linked in at commit, so a process killed while it
 * writes leaves nothing behind. A new target is linked in under its own
 * name directly; an existing one is linked under a temporary name and
 * renamed over the target, a window of two system calls in which a kill
 * leaves a `.serio-save-XXXXXXXX` file. Where O_TMPFILE is not supported
 * (another kernel or file system), or /proc is not mounted, the temporary
 * file is named `.serio-save-XXXXXXXX` from the start, and a process killed
 * during the save leaves it behind. Files without a local path (GVfs URIs)
 * go through g_file_replace().
 *
 * The order, for a local file: write, keep the old target's owner,
 * extended attributes and mode, fsync the data, link or rename into place,
 * fsync the directory. A target that is not a regular file, or a symbolic
 * link to one that is not (a device, a FIFO, a socket, a directory), is
 * refused before anything is written.
 */

#define _GNU_SOURCE   /* O_TMPFILE */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-save-private.h"

/* Elsewhere, every file goes through g_file_replace(). */
#ifdef G_OS_UNIX
# include <fcntl.h>
# include <sys/stat.h>
# include <unistd.h>
#endif

/* Extended attributes, as Linux has them. */
#ifdef __linux__
# include <sys/xattr.h>
# define HAVE_XATTRS 1
#endif

/* Temporary names tried before giving up. */
#define TEMP_NAME_ATTEMPTS 100

/* The most written by one call of the stream's write, so that a cancel is
 * seen between two calls of a large g_output_stream_write_all(). */
#define MAX_WRITE (1024 * 1024)

/* Write-behind: each time this much more was written, the kernel is told
 * to start writing it to the disk (without waiting for it), so that the
 * disk works while the rest of the text is formatted and the final fsync
 * finds little left to write, rather than all of a file of gigabytes. */
#define WRITE_BEHIND (8 * 1024 * 1024)

struct _SerioSave
{
  GFile             *target;
  char              *display;      /* the target, for messages */
  GOutputStream     *stream;       /* a SerioSaveStream */

  /* A local target */
  char              *path;         /* as given */
  int                dir_fd;       /* its directory, or -1 */
  int                fd;           /* the temporary file, or -1 */
  char              *name;         /* its base name */
  char              *temp_name;    /* a named temporary file in the directory */
  gboolean           unnamed;      /* fd is an O_TMPFILE file */
  gboolean           existed;      /* a regular file was at the target */
#ifdef G_OS_UNIX
  struct stat        old;          /* its status */
#endif

  /* A target without a local path */
  GFileOutputStream *replace;
  GError            *setup_error;
};

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

static void
set_error (GError     **error,
           const char  *display,
           int          code,
           const char  *detail)
{
  /* TRANSLATORS: the file being saved, then what went wrong, such as
   * "No such file or directory" */
  g_set_error (error, G_IO_ERROR, code, _("Cannot save to “%s”: %s"), display, detail);
}

#ifdef G_OS_UNIX
static void
set_errno_error (GError     **error,
                 const char  *display,
                 int          errsv)
{
  set_error (error, display, g_io_error_from_errno (errsv), g_strerror (errsv));
}
#endif

/* Turns @local_error (from GIO, about the target or its temporary file)
 * into an error that names the target. */
static void
propagate_error (GError     **error,
                 const char  *display,
                 GError      *local_error)
{
  set_error (error, display,
             local_error->domain == G_IO_ERROR ? local_error->code : G_IO_ERROR_FAILED,
             local_error->message);
  g_error_free (local_error);
}

static gboolean
check_cancelled (GCancellable  *cancellable,
                 const char    *display,
                 GError       **error)
{
  GError *local_error = NULL;

  if (!g_cancellable_set_error_if_cancelled (cancellable, &local_error))
    return FALSE;

  propagate_error (error, display, local_error);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* The stream                                                         */
/* ------------------------------------------------------------------ */

/* Writes to the temporary file; every error names the target. Closing it
 * does nothing: the save commits or aborts. */
#define SERIO_TYPE_SAVE_STREAM (serio_save_stream_get_type ())
G_DECLARE_FINAL_TYPE (SerioSaveStream, serio_save_stream, SERIO, SAVE_STREAM, GOutputStream)

struct _SerioSaveStream
{
  GOutputStream  parent_instance;

  int            fd;         /* or -1 */
  GOutputStream *base;       /* or NULL */
  char          *display;

  /* Write-behind on fd: the kernel was told to write [0, started) to the
   * disk, not yet [started, written). */
  gboolean       behind;
  goffset        started;
  goffset        written;
};

G_DEFINE_FINAL_TYPE (SerioSaveStream, serio_save_stream, G_TYPE_OUTPUT_STREAM)

#ifdef G_OS_UNIX
/* Starts writing [started, written) to the disk. A file system that
 * cannot (EINVAL, ENOSYS, ESPIPE, EOPNOTSUPP) just gets no write-behind;
 * any other error, such as EIO, fails the save. */
static gboolean
write_behind (SerioSaveStream  *self,
              GError          **error)
{
#ifdef HAVE_SYNC_FILE_RANGE
  if (sync_file_range (self->fd, self->started, self->written - self->started,
                       SYNC_FILE_RANGE_WRITE) != 0)
    {
      int errsv = errno;

      if (errsv == EINVAL || errsv == ENOSYS || errsv == ESPIPE || errsv == EOPNOTSUPP)
        {
          self->behind = FALSE;
          return TRUE;
        }
      set_errno_error (error, self->display, errsv);
      return FALSE;
    }

  self->started = self->written;
#else
  self->behind = FALSE;
#endif

  return TRUE;
}
#endif

static gssize
serio_save_stream_write (GOutputStream  *stream,
                         const void     *buffer,
                         gsize           count,
                         GCancellable   *cancellable,
                         GError        **error)
{
  SerioSaveStream *self = SERIO_SAVE_STREAM (stream);
  gssize written;

  if (check_cancelled (cancellable, self->display, error))
    return -1;

  count = MIN (count, MAX_WRITE);

  if (self->base != NULL)
    {
      GError *local_error = NULL;

      written = g_output_stream_write (self->base, buffer, count, cancellable, &local_error);
      if (written < 0)
        propagate_error (error, self->display, local_error);
      return written;
    }

#ifdef G_OS_UNIX
  do
    written = write (self->fd, buffer, count);
  while (written < 0 && errno == EINTR);

  if (written < 0)
    {
      set_errno_error (error, self->display, errno);
      return -1;
    }

  self->written += written;
  if (self->behind && self->written - self->started >= WRITE_BEHIND &&
      !write_behind (self, error))
    return -1;

  return written;
#else
  g_assert_not_reached ();
#endif
}

static gboolean
serio_save_stream_close (GOutputStream  *stream,
                         GCancellable   *cancellable,
                         GError        **error)
{
  return TRUE;
}

static void
serio_save_stream_finalize (GObject *object)
{
  SerioSaveStream *self = SERIO_SAVE_STREAM (object);

  g_clear_object (&self->base);
  g_clear_pointer (&self->display, g_free);

  G_OBJECT_CLASS (serio_save_stream_parent_class)->finalize (object);
}

static void
serio_save_stream_class_init (SerioSaveStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GOutputStreamClass *stream_class = G_OUTPUT_STREAM_CLASS (klass);

  object_class->finalize = serio_save_stream_finalize;
  stream_class->write_fn = serio_save_stream_write;
  stream_class->close_fn = serio_save_stream_close;
}

static void
serio_save_stream_init (SerioSaveStream *self)
{
  self->fd = -1;
}

static GOutputStream *
serio_save_stream_new (int            fd,
                       GOutputStream *base,
                       const char    *display)
{
  SerioSaveStream *self = g_object_new (SERIO_TYPE_SAVE_STREAM, NULL);

  self->fd = fd;
  self->behind = fd >= 0;
  self->base = base != NULL ? g_object_ref (base) : NULL;
  self->display = g_strdup (display);

  return G_OUTPUT_STREAM (self);
}

/* ------------------------------------------------------------------ */
/* Saving                                                             */
/* ------------------------------------------------------------------ */

static void
save_free (SerioSave *save)
{
  if (save->stream != NULL)
    g_output_stream_close (save->stream, NULL, NULL);
  g_clear_object (&save->stream);
#ifdef G_OS_UNIX
  if (save->fd >= 0)
    close (save->fd);
  if (save->dir_fd >= 0)
    close (save->dir_fd);
#endif
  g_clear_object (&save->replace);
  g_clear_error (&save->setup_error);
  g_clear_object (&save->target);
  g_free (save->display);
  g_free (save->path);
  g_free (save->name);
  g_free (save->temp_name);
  g_free (save);
}

#ifdef G_OS_UNIX
static char *
random_temp_name (void)
{
  return g_strdup_printf (".serio-save-%08x", g_random_int ());
}

/* Creates a named temporary file in the directory. */
static int
open_named (SerioSave  *save,
            mode_t      mode,
            GError    **error)
{
  for (guint attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt++)
    {
      int fd;

      g_free (save->temp_name);
      save->temp_name = random_temp_name ();
      fd = openat (save->dir_fd, save->temp_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd >= 0)
        return fd;
      if (errno != EEXIST)
        {
          set_errno_error (error, save->display, errno);
          g_clear_pointer (&save->temp_name, g_free);
          return -1;
        }
    }

  g_clear_pointer (&save->temp_name, g_free);
  set_error (error, save->display, G_IO_ERROR_EXISTS,
             _("No unused name for a temporary file in its directory"));
  return -1;
}

/* Creates an unnamed temporary file in the directory, or returns -1 with
 * @error unset where that is not supported. */
static int
open_unnamed (SerioSave  *save,
              mode_t      mode,
              GError    **error)
{
#ifdef O_TMPFILE
  char proc_path[32];
  int fd = openat (save->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);

  if (fd < 0)
    {
      /* Not supported by the file system (EOPNOTSUPP), or by a kernel
       * older than 3.11 (EISDIR, EINVAL). */
      if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        set_errno_error (error, save->display, errno);
      return -1;
    }

  /* The file is linked in through /proc: without it, use a named one. */
  g_snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  if (access (proc_path, F_OK) != 0)
    {
      close (fd);
      return -1;
    }

  return fd;
#else
  return -1;
#endif
}

/* What a file that is not a regular file is, as the reason a save
 * refuses to replace it, itself or through a symbolic link. */
static const struct
{
  mode_t      type;      /* of S_IFMT */
  const char *itself;
  const char *via_link;
} not_regular[] = {
  { S_IFCHR, N_("It is a character device, not a regular file"),
    N_("It is a symbolic link to a character device, which a save does not replace") },
  { S_IFBLK, N_("It is a block device, not a regular file"),
    N_("It is a symbolic link to a block device, which a save does not replace") },
  { S_IFIFO, N_("It is a FIFO, not a regular file"),
    N_("It is a symbolic link to a FIFO, which a save does not replace") },
  { S_IFSOCK, N_("It is a socket, not a regular file"),
    N_("It is a symbolic link to a socket, which a save does not replace") },
  /* A directory itself is refused before, as EISDIR. */
  { S_IFDIR, N_("It is not a regular file"),
    N_("It is a symbolic link to a directory, which a save does not replace") },
};

/* The reason for a file of @mode, or a symbolic link to it (@via_link). */
static const char *
not_regular_reason (mode_t   mode,
                    gboolean via_link)
{
  for (gsize i = 0; i < G_N_ELEMENTS (not_regular); i++)
    {
      if ((mode & S_IFMT) == not_regular[i].type)
        return _(via_link ? not_regular[i].via_link : not_regular[i].itself);
    }

  return via_link ? _("It is a symbolic link to something that is not a regular file, which a save does not replace") :
                    _("It is not a regular file");
}

/* Whether the file at the target (whose status is save->old) may be
 * replaced: a regular file, a symbolic link to one, or one that points
 * nowhere; not a device, a FIFO, a socket or a directory, nor a link to
 * one, which a save would turn into a regular file (/dev/stdout, say). */
static gboolean
check_replaceable (SerioSave  *save,
                   GError    **error)
{
  struct stat points_to;

  if (S_ISREG (save->old.st_mode))
    return TRUE;
  if (S_ISDIR (save->old.st_mode))
    {
      set_errno_error (error, save->display, EISDIR);
      return FALSE;
    }
  if (!S_ISLNK (save->old.st_mode))
    {
      set_error (error, save->display, G_IO_ERROR_NOT_REGULAR_FILE,
                 not_regular_reason (save->old.st_mode, FALSE));
      return FALSE;
    }

  /* A link to a regular file is replaced, as is one that points nowhere
   * (or that cannot be followed: a loop, a directory not searchable). */
  if (fstatat (save->dir_fd, save->name, &points_to, 0) != 0 || S_ISREG (points_to.st_mode))
    return TRUE;

  set_error (error, save->display, G_IO_ERROR_NOT_REGULAR_FILE,
             not_regular_reason (points_to.st_mode, TRUE));
  return FALSE;
}

static gboolean
begin_local (SerioSave     *save,
             const char    *path,
             GError       **error)
{
  g_autofree char *dir_path = g_path_get_dirname (path);
  GError *local_error = NULL;
  mode_t mode;

  save->path = g_strdup (path);
  save->name = g_path_get_basename (path);
  save->dir_fd = open (dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (save->dir_fd < 0)
    {
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  /* A symbolic link is replaced, not followed: it is only looked into
   * to refuse one to a file that is not a regular file. */
  if (fstatat (save->dir_fd, save->name, &save->old, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!check_replaceable (save, error))
        return FALSE;
      save->existed = S_ISREG (save->old.st_mode);
    }
  else if (errno != ENOENT)
    {
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  /* Over an existing file, private until commit gives it the old mode;
   * a new file gets the usual mode of a new file (umask, default ACL). */
  mode = save->existed ? 0600 : 0666;

  save->fd = open_unnamed (save, mode, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  save->unnamed = save->fd >= 0;
  if (!save->unnamed)
    save->fd = open_named (save, mode, error);
  if (save->fd < 0)
    return FALSE;

  save->stream = serio_save_stream_new (save->fd, NULL, save->display);
  return TRUE;
}
#endif /* G_OS_UNIX */

static void
begin_replace (SerioSave    *save,
               GCancellable *cancellable)
{
  save->existed = g_file_query_exists (save->target, cancellable);
  save->replace = g_file_replace (save->target, NULL, FALSE, G_FILE_CREATE_NONE,
                                  cancellable, &save->setup_error);
  if (save->replace != NULL)
    save->stream = serio_save_stream_new (-1, G_OUTPUT_STREAM (save->replace), save->display);
}

/*
 * _serio_save_begin:
 * @target: the file to replace
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Starts a save to @target: write the contents to the stream of
 * _serio_save_get_stream(), then call _serio_save_commit() to put them in
 * place, or _serio_save_abort() to leave @target as it was. @target is not
 * touched before the commit. A symbolic link at @target is replaced by a
 * regular file, unless it points to something that exists and is not a
 * regular file (refused, G_IO_ERROR_NOT_REGULAR_FILE, as is such a file
 * itself); a regular file at @target gives the new file its mode, its
 * extended attributes, and its owner and group where allowed; a file with
 * other hard links is replaced under the name @target only.
 *
 * Every error names @target, never the temporary file.
 *
 * Returns: (transfer full): the save, or %NULL with @error set
 */
SerioSave *
_serio_save_begin (GFile         *target,
                   GCancellable  *cancellable,
                   GError       **error)
{
  g_autoptr(SerioSave) save = NULL;
  g_autofree char *path = NULL;

  g_return_val_if_fail (G_IS_FILE (target), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  save = g_new0 (SerioSave, 1);
  save->target = g_object_ref (target);
  save->display = g_file_get_parse_name (target);
  save->dir_fd = -1;
  save->fd = -1;

  if (check_cancelled (cancellable, save->display, error))
    return NULL;

#ifdef G_OS_UNIX
  path = g_file_get_path (target);
#endif
  if (path == NULL)
    {
      begin_replace (save, cancellable);
      if (save->setup_error != NULL)
        {
          propagate_error (error, save->display, g_steal_pointer (&save->setup_error));
          return NULL;
        }
    }
#ifdef G_OS_UNIX
  else if (!begin_local (save, path, error))
    return NULL;
#endif

  return g_steal_pointer (&save);
}

/*
 * _serio_save_get_stream:
 *
 * Returns: (transfer none): the stream to write the new contents to; its
 *   errors name the target. Do not close it.
 */
GOutputStream *
_serio_save_get_stream (SerioSave *save)
{
  g_return_val_if_fail (save != NULL, NULL);

  return save->stream;
}

#ifdef HAVE_XATTRS
/* Whether a failure with @errsv to read or set the extended attribute
 * @name may be passed over: the file system does not take it, or it is
 * one whose writing needs privileges (security.*, trusted.*: an SELinux
 * label, file capabilities) that the process lacks. */
static gboolean
xattr_failure_ignored (const char *name,
                       int         errsv)
{
  if (errsv == ENOTSUP || errsv == EOPNOTSUPP)
    return TRUE;

  return (errsv == EPERM || errsv == EACCES) &&
         (g_str_has_prefix (name, "security.") || g_str_has_prefix (name, "trusted."));
}

static void
set_xattr_error (GError     **error,
                 const char  *display,
                 const char  *name,
                 int          errsv)
{
  /* TRANSLATORS: the name of an extended attribute of the file being
   * replaced, such as "user.tag", then what went wrong */
  g_autofree char *detail = g_strdup_printf (_("Cannot keep the extended attribute “%s”: %s"),
                                             name, g_strerror (errsv));

  set_error (error, display, g_io_error_from_errno (errsv), detail);
}

/* Reads list (@name NULL) or value (of @name) of the extended attributes
 * of @path, however long, into *@out; returns its size, or -1 with errno
 * set. */
static gssize
read_xattr (const char  *path,
            const char  *name,
            char       **out)
{
  for (;;)
    {
      gssize size = name == NULL ? llistxattr (path, NULL, 0) : lgetxattr (path, name, NULL, 0);

      if (size < 0)
        return -1;
      *out = g_realloc (*out, MAX (size, 1));
      size = name == NULL ? llistxattr (path, *out, size) : lgetxattr (path, name, *out, size);
      /* ERANGE: it grew since it was measured. */
      if (size >= 0 || errno != ERANGE)
        return size;
    }
}

/* Copies the extended attributes of the file being replaced (user.*, and
 * security.*, trusted.* and system.* ones such as POSIX ACLs where the
 * process may set them) onto the new file. */
static gboolean
copy_xattrs (SerioSave  *save,
             GError    **error)
{
  g_autofree char *names = NULL;
  gssize len = read_xattr (save->path, NULL, &names);

  if (len < 0)
    {
      if (errno == ENOTSUP || errno == EOPNOTSUPP)
        return TRUE;
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  for (const char *name = names; name < names + len; name += strlen (name) + 1)
    {
      g_autofree char *value = NULL;
      gssize size = read_xattr (save->path, name, &value);

      /* ENODATA: removed since it was listed. */
      if (size < 0 && errno != ENODATA && !xattr_failure_ignored (name, errno))
        {
          set_xattr_error (error, save->display, name, errno);
          return FALSE;
        }
      if (size >= 0 && fsetxattr (save->fd, name, value, size, 0) != 0 &&
          !xattr_failure_ignored (name, errno))
        {
          set_xattr_error (error, save->display, name, errno);
          return FALSE;
        }
    }

  return TRUE;
}
#endif

#ifdef G_OS_UNIX
/* Gives the new file the owner, group, extended attributes and mode of
 * the file it replaces; the owner only where allowed, and then
 * set-user-ID and set-group-ID only if the owner is kept. The attributes
 * come after the owner, whose change would drop file capabilities, and
 * before the mode, which then also holds over an ACL's mask. */
static gboolean
keep_owner_and_mode (SerioSave  *save,
                     GError    **error)
{
  struct stat now;
  gboolean owner_kept = TRUE;

  if (fstat (save->fd, &now) != 0)
    {
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  if (now.st_uid != save->old.st_uid || now.st_gid != save->old.st_gid)
    {
      owner_kept = fchown (save->fd, save->old.st_uid, save->old.st_gid) == 0;
      /* Not allowed to give the file away: keep at least the group, which
       * its owner may set to any group they are in. */
      if (!owner_kept && now.st_gid != save->old.st_gid)
        (void) fchown (save->fd, (uid_t) -1, save->old.st_gid);
    }

#ifdef HAVE_XATTRS
  if (!copy_xattrs (save, error))
    return FALSE;
#endif

  if (fchmod (save->fd, save->old.st_mode & (owner_kept ? 07777 : 0777)) != 0)
    {
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  return TRUE;
}

/* Gives the unnamed file the name @name in the directory: through /proc,
 * which any process may do, or, where that fails with ENOENT (/proc of
 * another process namespace, say), with AT_EMPTY_PATH, which needs
 * CAP_DAC_READ_SEARCH. */
static int
link_fd (SerioSave  *save,
         const char *name)
{
  char proc_path[32];

  g_snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", save->fd);
  if (linkat (AT_FDCWD, proc_path, save->dir_fd, name, AT_SYMLINK_FOLLOW) == 0)
    return 0;
#ifdef AT_EMPTY_PATH
  if (errno == ENOENT)
    return linkat (save->fd, "", save->dir_fd, name, AT_EMPTY_PATH);
#endif
  return -1;
}

/* Links the unnamed file in at the target's name, or at a temporary name
 * (in save->temp_name) when the target exists. */
static gboolean
link_unnamed (SerioSave  *save,
              GError    **error)
{
  if (!save->existed)
    {
      if (link_fd (save, save->name) == 0)
        return TRUE;
      /* A symbolic link, or a file created since the save began. */
      if (errno != EEXIST)
        {
          set_errno_error (error, save->display, errno);
          return FALSE;
        }
    }

  for (guint attempt = 0; attempt < TEMP_NAME_ATTEMPTS; attempt++)
    {
      save->temp_name = random_temp_name ();
      if (link_fd (save, save->temp_name) == 0)
        return TRUE;
      g_clear_pointer (&save->temp_name, g_free);
      if (errno != EEXIST)
        {
          set_errno_error (error, save->display, errno);
          return FALSE;
        }
    }

  set_error (error, save->display, G_IO_ERROR_EXISTS,
             _("No unused name for a temporary file in its directory"));
  return FALSE;
}

static gboolean
commit_local (SerioSave     *save,
              GCancellable  *cancellable,
              GError       **error)
{
  if (save->existed && !keep_owner_and_mode (save, error))
    return FALSE;

  if (fsync (save->fd) != 0)
    {
      set_errno_error (error, save->display, errno);
      return FALSE;
    }

  /* The last moment to cancel: the sync may have taken a while. */
  if (check_cancelled (cancellable, save->display, error))
    return FALSE;

  if (save->unnamed && !link_unnamed (save, error))
    return FALSE;

  if (save->temp_name != NULL)
    {
      if (renameat (save->dir_fd, save->temp_name, save->dir_fd, save->name) != 0)
        {
          set_errno_error (error, save->display, errno);
          return FALSE;
        }
      g_clear_pointer (&save->temp_name, g_free);
    }

  /* The new contents are in place: a failure to sync the directory (which
   * some file systems do not support) is not an error of the save. */
  fsync (save->dir_fd);

  return TRUE;
}
#endif /* G_OS_UNIX */

static gboolean
commit_replace (SerioSave  *save,
                GError    **error)
{
  GError *local_error = NULL;

  if (g_output_stream_close (G_OUTPUT_STREAM (save->replace), NULL, &local_error))
    return TRUE;

  propagate_error (error, save->display, local_error);
  if (!save->existed)
    g_file_delete (save->target, NULL, NULL);
  return FALSE;
}

/*
 * _serio_save_commit:
 * @save: (transfer full): a save
 * @cancellable: (nullable): a #GCancellable, checked before anything is
 *   put in place and not after
 * @error: return location for a #GError
 *
 * Syncs the new contents to disk and puts them in place of the target,
 * keeping the mode (and owner, where allowed) of a regular file there, then
 * syncs the directory. On failure, the save is aborted.
 *
 * Returns: %TRUE exactly if the new contents are in place
 */
gboolean
_serio_save_commit (SerioSave     *save,
                    GCancellable  *cancellable,
                    GError       **error)
{
  gboolean committed;

  g_return_val_if_fail (save != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (check_cancelled (cancellable, save->display, error))
    {
      _serio_save_abort (save);
      return FALSE;
    }

  if (save->replace != NULL)
    committed = commit_replace (save, error);
#ifdef G_OS_UNIX
  else
    committed = commit_local (save, cancellable, error);
#else
  else
    g_assert_not_reached ();
#endif

  if (!committed)
    {
      _serio_save_abort (save);
      return FALSE;
    }

  save_free (save);
  return TRUE;
}

/*
 * _serio_save_abort:
 * @save: (transfer full): a save
 *
 * Leaves the target as it was and removes the temporary file.
 */
void
_serio_save_abort (SerioSave *save)
{
  g_return_if_fail (save != NULL);

  if (save->replace != NULL && !g_output_stream_is_closed (G_OUTPUT_STREAM (save->replace)))
    {
      g_autoptr(GCancellable) abandon = g_cancellable_new ();

      /* A replace stream closed with a cancelled cancellable deletes its
       * temporary file rather than rename it over the target, as it would
       * on a plain close after a failed write. Without an original there
       * is no temporary file: the stream wrote the target itself. */
      g_cancellable_cancel (abandon);
      g_output_stream_close (G_OUTPUT_STREAM (save->replace), abandon, NULL);
      if (!save->existed)
        g_file_delete (save->target, NULL, NULL);
    }

#ifdef G_OS_UNIX
  if (save->temp_name != NULL)
    unlinkat (save->dir_fd, save->temp_name, 0);
#endif

  save_free (save);
}

/*
 * _serio_save_bytes:
 * @target: the file to replace
 * @bytes: its new contents
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces @target with @bytes, like _serio_save_begin(), a write and
 * _serio_save_commit().
 *
 * Returns: %TRUE exactly if the new contents are in place
 */
gboolean
_serio_save_bytes (GFile         *target,
                   GBytes        *bytes,
                   GCancellable  *cancellable,
                   GError       **error)
{
  g_autoptr(SerioSave) save = NULL;
  gsize size;
  gconstpointer data;

  g_return_val_if_fail (G_IS_FILE (target), FALSE);
  g_return_val_if_fail (bytes != NULL, FALSE);

  save = _serio_save_begin (target, cancellable, error);
  if (save == NULL)
    return FALSE;

  data = g_bytes_get_data (bytes, &size);
  if (!g_output_stream_write_all (_serio_save_get_stream (save), data, size, NULL,
                                  cancellable, error))
    return FALSE;

  return _serio_save_commit (g_steal_pointer (&save), cancellable, error);
}
