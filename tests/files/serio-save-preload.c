/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-save-preload.c: an LD_PRELOAD module that watches and breaks saves
 *
 * Copyright 2026 The libserio authors
 *
 * Loaded into a child of test-files (or into the serio tool), it logs the
 * system calls that put a saved file in place, and makes chosen ones fail,
 * as told by environment variables:
 *
 *   SERIO_PRELOAD_LOG=FILE         append one line per call to FILE:
 *                                  "fsync file|dir INODE", "link INODE NAME",
 *                                  "rename INODE OLD NEW" (names are base
 *                                  names; INODE is the file's inode number)
 *   SERIO_PRELOAD_NO_TMPFILE=1     opens with O_TMPFILE fail with EOPNOTSUPP,
 *                                  as on a file system without it
 *   SERIO_PRELOAD_COLLISIONS=N     the first N creations (open with O_EXCL,
 *                                  link) of a name that starts with
 *                                  ".serio-save-" fail with EEXIST, as if the
 *                                  name were taken; each is logged as
 *                                  "collision NAME"
 *   SERIO_PRELOAD_FSYNC_ERRNO=E    fsync and fdatasync of regular files fail
 *                                  with errno E
 *   SERIO_PRELOAD_FSYNC_SLEEP_MS=N fsync and fdatasync of regular files
 *                                  take N ms more, as on a slow disk; with
 *   SERIO_PRELOAD_FSYNC_MARK=FILE  FILE is created when such a sync starts
 *   SERIO_PRELOAD_XATTR_FAIL=P:E   fsetxattr of a name that starts with P
 *                                  fails with errno E (EPERM as for a
 *                                  security.* attribute set without the
 *                                  privilege), and is logged as
 *                                  "fsetxattr-failed NAME"
 *   SERIO_PRELOAD_LINK_ERRNO=E     linkat fails with errno E
 *   SERIO_PRELOAD_NO_PROC_LINK=1   linkat from a /proc/self/fd/ path fails
 *                                  with ENOENT, as without /proc
 *   SERIO_PRELOAD_RENAME_ERRNO=E   rename, renameat and renameat2 fail with
 *                                  errno E
 *   SERIO_PRELOAD_SYNC_RANGE_ERRNO=E  sync_file_range fails with errno E;
 *                                  each call is logged, failing or not, as
 *                                  "sync_file_range INODE OFFSET LENGTH FLAGS"
 *
 * The same technique as tests/i18n/serio-i18n-preload.c; both the plain and
 * the large-file (…64) names are defined, since the library is built with
 * _FILE_OFFSET_BITS=64.
 */

#define _GNU_SOURCE   /* RTLD_NEXT, O_TMPFILE, renameat2 */

/* With 64-bit offsets, <fcntl.h> would turn the definition of open() into
 * one of open64(): define each name as it is. */
#undef _FILE_OFFSET_BITS

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define TEMP_PREFIX ".serio-save-"

static void *
real (const char *name)
{
  void *function = dlsym (RTLD_NEXT, name);

  if (function == NULL)
    abort ();
  return function;
}

static int
env_int (const char *name)
{
  const char *value = getenv (name);

  return value != NULL ? atoi (value) : 0;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? slash + 1 : path;
}

__attribute__ ((format (printf, 1, 2)))
static void
log_line (const char *format,
          ...)
{
  static int (*real_open) (const char *, int, ...);
  const char *path = getenv ("SERIO_PRELOAD_LOG");
  char line[512];
  va_list args;
  int fd, saved_errno = errno;

  if (path == NULL)
    return;
  if (real_open == NULL)
    real_open = (int (*) (const char *, int, ...)) real ("open64");

  va_start (args, format);
  vsnprintf (line, sizeof line, format, args);
  va_end (args);

  fd = real_open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0)
    {
      if (write (fd, line, strlen (line)) < 0)
        abort ();
      close (fd);
    }
  errno = saved_errno;
}

/* Whether the creation of @name is to fail as a collision. */
static int
collides (const char *name)
{
  static int n_collisions;

  if (strncmp (base_name (name), TEMP_PREFIX, strlen (TEMP_PREFIX)) != 0 ||
      n_collisions >= env_int ("SERIO_PRELOAD_COLLISIONS"))
    return 0;

  n_collisions++;
  log_line ("collision %s\n", base_name (name));
  errno = EEXIST;
  return 1;
}

/* Whether an open with @flags is to fail; sets errno. */
static int
open_fails (const char *path,
            int         flags)
{
#ifdef O_TMPFILE
  if ((flags & O_TMPFILE) == O_TMPFILE && env_int ("SERIO_PRELOAD_NO_TMPFILE"))
    {
      errno = EOPNOTSUPP;
      return 1;
    }
#endif
  return (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL) && collides (path);
}

static mode_t
mode_arg (int     flags,
          va_list args)
{
#ifdef O_TMPFILE
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE)
#else
  if ((flags & O_CREAT) != 0)
#endif
    return va_arg (args, mode_t);
  return 0;
}

#define DEFINE_OPEN(name)                                                 \
  int                                                                     \
  name (const char *path,                                                 \
        int         flags,                                                \
        ...)                                                              \
  {                                                                       \
    static int (*real_fn) (const char *, int, ...);                       \
    va_list args;                                                         \
    mode_t mode;                                                          \
                                                                          \
    va_start (args, flags);                                               \
    mode = mode_arg (flags, args);                                        \
    va_end (args);                                                        \
    if (open_fails (path, flags))                                         \
      return -1;                                                          \
    if (real_fn == NULL)                                                  \
      real_fn = (int (*) (const char *, int, ...)) real (#name);          \
    return real_fn (path, flags, mode);                                   \
  }

#define DEFINE_OPENAT(name)                                               \
  int                                                                     \
  name (int         dir_fd,                                               \
        const char *path,                                                 \
        int         flags,                                                \
        ...)                                                              \
  {                                                                       \
    static int (*real_fn) (int, const char *, int, ...);                  \
    va_list args;                                                         \
    mode_t mode;                                                          \
                                                                          \
    va_start (args, flags);                                               \
    mode = mode_arg (flags, args);                                        \
    va_end (args);                                                        \
    if (open_fails (path, flags))                                         \
      return -1;                                                          \
    if (real_fn == NULL)                                                  \
      real_fn = (int (*) (int, const char *, int, ...)) real (#name);     \
    return real_fn (dir_fd, path, flags, mode);                           \
  }

DEFINE_OPEN (open)
DEFINE_OPEN (open64)
DEFINE_OPENAT (openat)
DEFINE_OPENAT (openat64)

static int
sync_call (const char *name,
           int         fd)
{
  struct stat st;
  int fail_errno = env_int ("SERIO_PRELOAD_FSYNC_ERRNO");
  int is_file = fstat (fd, &st) == 0 && S_ISREG (st.st_mode);
  int (*real_fn) (int) = (int (*) (int)) real (name);

  log_line ("%s %s %llu\n", name, is_file ? "file" : "dir", (unsigned long long) st.st_ino);
  if (is_file && fail_errno != 0)
    {
      errno = fail_errno;
      return -1;
    }
  if (is_file && env_int ("SERIO_PRELOAD_FSYNC_SLEEP_MS") > 0)
    {
      static int (*real_open) (const char *, int, ...);
      const char *mark = getenv ("SERIO_PRELOAD_FSYNC_MARK");
      int sleep_ms = env_int ("SERIO_PRELOAD_FSYNC_SLEEP_MS");

      if (real_open == NULL)
        real_open = (int (*) (const char *, int, ...)) real ("open64");
      if (mark != NULL)
        {
          int mark_fd = real_open (mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

          if (mark_fd >= 0)
            close (mark_fd);
        }
      usleep (sleep_ms * 1000);
    }

  return real_fn (fd);
}

int
fsync (int fd)
{
  return sync_call ("fsync", fd);
}

int
fdatasync (int fd)
{
  return sync_call ("fdatasync", fd);
}

int
sync_file_range (int          fd,
                 off64_t      offset,
                 off64_t      length,
                 unsigned int flags)
{
  static int (*real_fn) (int, off64_t, off64_t, unsigned int);
  int fail_errno = env_int ("SERIO_PRELOAD_SYNC_RANGE_ERRNO");
  struct stat st;

  if (real_fn == NULL)
    real_fn = (int (*) (int, off64_t, off64_t, unsigned int)) real ("sync_file_range");

  if (fstat (fd, &st) != 0)
    st.st_ino = 0;
  log_line ("sync_file_range %llu %lld %lld %u\n", (unsigned long long) st.st_ino,
            (long long) offset, (long long) length, flags);
  if (fail_errno != 0)
    {
      errno = fail_errno;
      return -1;
    }

  return real_fn (fd, offset, length, flags);
}

int
linkat (int         old_dir_fd,
        const char *old_path,
        int         new_dir_fd,
        const char *new_path,
        int         flags)
{
  static int (*real_fn) (int, const char *, int, const char *, int);
  int fail_errno = env_int ("SERIO_PRELOAD_LINK_ERRNO");
  struct stat st;

  if (real_fn == NULL)
    real_fn = (int (*) (int, const char *, int, const char *, int)) real ("linkat");

  if (fstatat (old_dir_fd, old_path, &st,
               (flags & AT_EMPTY_PATH) | ((flags & AT_SYMLINK_FOLLOW) ? 0 : AT_SYMLINK_NOFOLLOW)) != 0)
    st.st_ino = 0;
  log_line ("link %llu %s%s\n", (unsigned long long) st.st_ino, base_name (new_path),
            (flags & AT_EMPTY_PATH) ? " empty-path" : "");

  if (fail_errno != 0)
    {
      errno = fail_errno;
      return -1;
    }
  if (env_int ("SERIO_PRELOAD_NO_PROC_LINK") && strncmp (old_path, "/proc/self/fd/", 14) == 0)
    {
      errno = ENOENT;
      return -1;
    }
  if (collides (new_path))
    return -1;

  return real_fn (old_dir_fd, old_path, new_dir_fd, new_path, flags);
}

static int
rename_fails (int         old_dir_fd,
              const char *old_path,
              const char *new_path)
{
  int fail_errno = env_int ("SERIO_PRELOAD_RENAME_ERRNO");
  struct stat st;

  if (fstatat (old_dir_fd, old_path, &st, AT_SYMLINK_NOFOLLOW) != 0)
    st.st_ino = 0;
  log_line ("rename %llu %s %s\n", (unsigned long long) st.st_ino,
            base_name (old_path), base_name (new_path));

  if (fail_errno == 0)
    return 0;
  errno = fail_errno;
  return 1;
}

int
renameat2 (int           old_dir_fd,
           const char   *old_path,
           int           new_dir_fd,
           const char   *new_path,
           unsigned int  flags)
{
  static int (*real_fn) (int, const char *, int, const char *, unsigned int);

  if (rename_fails (old_dir_fd, old_path, new_path))
    return -1;
  if (real_fn == NULL)
    real_fn = (int (*) (int, const char *, int, const char *, unsigned int)) real ("renameat2");
  return real_fn (old_dir_fd, old_path, new_dir_fd, new_path, flags);
}

int
renameat (int         old_dir_fd,
          const char *old_path,
          int         new_dir_fd,
          const char *new_path)
{
  static int (*real_fn) (int, const char *, int, const char *);

  if (rename_fails (old_dir_fd, old_path, new_path))
    return -1;
  if (real_fn == NULL)
    real_fn = (int (*) (int, const char *, int, const char *)) real ("renameat");
  return real_fn (old_dir_fd, old_path, new_dir_fd, new_path);
}

int
rename (const char *old_path,
        const char *new_path)
{
  static int (*real_fn) (const char *, const char *);

  if (rename_fails (AT_FDCWD, old_path, new_path))
    return -1;
  if (real_fn == NULL)
    real_fn = (int (*) (const char *, const char *)) real ("rename");
  return real_fn (old_path, new_path);
}

int
fsetxattr (int         fd,
           const char *name,
           const void *value,
           size_t      size,
           int         flags)
{
  static int (*real_fn) (int, const char *, const void *, size_t, int);
  const char *fail = getenv ("SERIO_PRELOAD_XATTR_FAIL");
  const char *colon = fail != NULL ? strrchr (fail, ':') : NULL;

  if (real_fn == NULL)
    real_fn = (int (*) (int, const char *, const void *, size_t, int)) real ("fsetxattr");

  if (colon != NULL && strncmp (name, fail, colon - fail) == 0)
    {
      log_line ("fsetxattr-failed %s\n", name);
      errno = atoi (colon + 1);
      return -1;
    }

  return real_fn (fd, name, value, size, flags);
}
