/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-files.c: crash-safe saves, cancellation and file errors
 *
 * Copyright 2026 The libserio authors
 *
 * The saves that must be interrupted run in child processes: this program
 * run again with a helper mode as its first argument (see main()), so that
 * a child can be killed at any moment or run out of file size without the
 * test process forking with GLib threads about.
 *
 * Faults are injected into a child's system calls by serio-save-preload.so
 * (see that file), given with --preload; the serio tool, given with
 * --serio, is run for the conversions that save through the same helper.
 */

#define _GNU_SOURCE   /* O_TMPFILE */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>

#include <serio.h>

#define FILE_NAME "model.serio"
#define N_KILLS 50

/* Allowed file size for the out-of-space saves: more than the old bundle,
 * less than the new one. */
#define FSIZE_LIMIT (64 * 1024)

static char *self_path;
static char *preload_path;   /* or NULL: the fault tests skip */
static char *serio_path;     /* or NULL: the tool tests skip */

static guint
scale_down (guint factor)
{
  return g_getenv ("SERIO_TEST_SLOW_TOOL") != NULL ? 10 * factor : factor;
}

/* Bundle 0, 1 or 2: distinct bundles of random bit patterns, the same in
 * every process; at @scale 1, a few MB of text each for 0 and 1, about
 * 26 MB for 2. */
static SerioBundle *
make_bundle (guint which,
             guint scale)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (which == 0 ? 0x5e51 : which == 1 ? 0xb0b : 0xb16);
  SerioBundle *bundle = serio_bundle_new ();
  guint n_arrays = which == 0 ? 2 : 3;
  gsize n_values = (which == 0 ? 100000 : which == 1 ? 70000 : 400000) / scale;
  g_autofree double *values = g_new (double, n_values);

  for (guint a = 0; a < n_arrays; a++)
    {
      g_autofree char *name = g_strdup_printf ("layer%u.weight", a);

      for (gsize i = 0; i < n_values; i++)
        {
          guint64 bits = ((guint64) g_rand_int (rand) << 32) | g_rand_int (rand);

          memcpy (&values[i], &bits, sizeof bits);
        }
      serio_bundle_append (bundle, name, values, n_values);
    }

  return bundle;
}

/* ------------------------------------------------------------------ */
/* Helper modes, in the child                                         */
/* ------------------------------------------------------------------ */

/* --save-loop PATH FIRST SCALE: saves bundle FIRST, then the other one,
 * and so on until killed, saying on stdout which save starts and ends. */
static int
save_loop (const char *path,
           guint       first,
           guint       scale)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) bundle0 = make_bundle (0, scale);
  g_autoptr(SerioBundle) bundle1 = make_bundle (1, scale);

  printf ("ready\n");
  fflush (stdout);

  for (guint i = 0;; i++)
    {
      guint which = (first + i) % 2;
      g_autoptr(GError) error = NULL;

      printf ("save %u\n", which);
      fflush (stdout);
      if (!serio_bundle_save_to_file (which == 0 ? bundle0 : bundle1, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error))
        {
          fprintf (stderr, "save %u failed: %s\n", which, error->message);
          return 1;
        }
      printf ("done %u\n", which);
      fflush (stdout);
    }
}

/* --save-limited PATH WHICH SCALE LIMIT ignore|die: saves a bundle with the
 * file size limited to LIMIT bytes, SIGXFSZ ignored (so writes fail with
 * EFBIG) or left to kill the process; prints "saved" or the error. */
static int
save_limited (const char *path,
              guint       which,
              guint       scale,
              rlim_t      limit,
              gboolean    ignore_signal)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) bundle = make_bundle (which, scale);
  g_autoptr(GError) error = NULL;
  struct rlimit no_core = { 0, 0 };
  struct rlimit fsize = { limit, limit };

  if (setrlimit (RLIMIT_CORE, &no_core) != 0 || setrlimit (RLIMIT_FSIZE, &fsize) != 0)
    return 2;
  if (ignore_signal)
    signal (SIGXFSZ, SIG_IGN);

  if (serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error))
    printf ("saved\n");
  else
    printf ("%s %d %s\n", g_quark_to_string (error->domain), error->code, error->message);

  return 0;
}

typedef struct
{
  const char   *mark;
  GCancellable *cancellable;
} MarkCanceller;

/* Cancels once the file mark->mark exists. */
static gpointer
cancel_on_mark (gpointer data)
{
  MarkCanceller *canceller = data;

  while (!g_file_test (canceller->mark, G_FILE_TEST_EXISTS) &&
         !g_cancellable_is_cancelled (canceller->cancellable))
    g_usleep (500);
  g_cancellable_cancel (canceller->cancellable);

  return NULL;
}

/* --save PATH WHICH SCALE: saves a bundle; prints "saved" or the error.
 * With SERIO_TEST_CANCEL_ON_MARK=FILE, the save is cancelled from another
 * thread as soon as FILE exists (the preload's fsync creates it). */
static int
save_once (const char *path,
           guint       which,
           guint       scale)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) bundle = make_bundle (which, scale);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  MarkCanceller canceller = { g_getenv ("SERIO_TEST_CANCEL_ON_MARK"), cancellable };
  GThread *thread = NULL;
  gboolean saved;

  if (canceller.mark != NULL)
    thread = g_thread_new ("canceller", cancel_on_mark, &canceller);
  saved = serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, cancellable, NULL, NULL, &error);
  if (thread != NULL)
    {
      g_cancellable_cancel (cancellable);
      g_thread_join (thread);
    }

  if (saved)
    printf ("saved\n");
  else
    printf ("%s %d %s\n", g_quark_to_string (error->domain), error->code, error->message);

  return 0;
}

/* ------------------------------------------------------------------ */
/* Helpers, in the test                                               */
/* ------------------------------------------------------------------ */

typedef struct
{
  char  *dir;
  char  *path;
  GFile *file;
} TempDir;

static void
temp_dir_init (TempDir *tmp)
{
  g_autoptr(GError) error = NULL;

  tmp->dir = g_dir_make_tmp ("serio-files-XXXXXX", &error);
  g_assert_no_error (error);
  tmp->path = g_build_filename (tmp->dir, FILE_NAME, NULL);
  tmp->file = g_file_new_for_path (tmp->path);
}

/* Removes the directory and whatever is left in it. */
static void
temp_dir_clear (TempDir *tmp)
{
  g_autoptr(GDir) dir = g_dir_open (tmp->dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tmp->dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        g_assert_no_errno (g_rmdir (path));
      else
        g_assert_no_errno (g_unlink (path));
    }
  g_assert_no_errno (g_rmdir (tmp->dir));

  g_clear_object (&tmp->file);
  g_clear_pointer (&tmp->path, g_free);
  g_clear_pointer (&tmp->dir, g_free);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The names in @dir, sorted and joined with spaces. */
static char *
list_dir (const char *dir_path)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);

  return g_strjoinv (" ", (char **) names->pdata);
}

static gboolean
is_temp_file_name (const char *name)
{
  return g_str_has_prefix (name, ".goutputstream-") || g_str_has_prefix (name, ".serio-save-");
}

static guint
count_temp_files (const char *dir_path)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    n += is_temp_file_name (name);

  return n;
}

/* Asserts that every temporary file left in @dir_path holds one of the
 * @n_texts texts whole: a save leaves one only once its file is complete
 * and synced; and, unless @allowed is %NULL, that its name is one of
 * @allowed. */
static void
assert_temp_files_complete (const char    *dir_path,
                            GBytes *const *texts,
                            guint          n_texts,
                            GHashTable    *allowed)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      gsize len;
      gboolean whole = FALSE;

      if (!is_temp_file_name (name))
        continue;
      if (allowed != NULL && !g_hash_table_contains (allowed, name))
        g_error ("%s was left behind by a kill that the log does not place between its link "
                 "and its rename", name);
      path = g_build_filename (dir_path, name, NULL);
      g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
      for (guint i = 0; i < n_texts; i++)
        whole |= len == g_bytes_get_size (texts[i]) &&
                 memcmp (contents, g_bytes_get_data (texts[i], NULL), len) == 0;
      g_assert_true (whole);
    }
}

/* Whether this process has a file open in @dir_path other than @dir_path
 * itself and FILE_NAME: the save's temporary file, named or not (an
 * O_TMPFILE file shows in /proc as "DIR/#INODE (deleted)"). */
static gboolean
has_temp_file_open (const char *dir_path)
{
  g_autoptr(GDir) fds = g_dir_open ("/proc/self/fd", 0, NULL);
  g_autofree char *prefix = g_strconcat (dir_path, "/", NULL);
  g_autofree char *target = g_build_filename (dir_path, FILE_NAME, NULL);
  const char *name;

  while (fds != NULL && (name = g_dir_read_name (fds)) != NULL)
    {
      g_autofree char *link = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *points_to = g_file_read_link (link, NULL);

      if (points_to != NULL && g_str_has_prefix (points_to, prefix) &&
          strcmp (points_to, target) != 0)
        return TRUE;
    }

  return FALSE;
}

/* Whether the file system of @dir_path takes O_TMPFILE files, so that the
 * library saves through unnamed temporary files there. */
static gboolean
tmpfile_supported (const char *dir_path)
{
#ifdef O_TMPFILE
  int fd = open (dir_path, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

  if (fd < 0)
    return FALSE;
  close (fd);
  return g_file_test ("/proc/self/fd", G_FILE_TEST_IS_DIR);
#else
  return FALSE;
#endif
}

/* The mode of a new file under the current umask. */
static guint
new_file_mode (void)
{
  mode_t mask = umask (0);

  umask (mask);
  return 0666 & ~mask;
}

static struct stat
stat_of (const char *path)
{
  struct stat st;

  g_assert_no_errno (lstat (path, &st));
  return st;
}

static void
limit_file_size (gpointer data)
{
  rlim_t limit = *(rlim_t *) data;
  struct rlimit no_core = { 0, 0 };
  struct rlimit fsize = { limit, limit };

  setrlimit (RLIMIT_CORE, &no_core);
  if (limit != 0)
    setrlimit (RLIMIT_FSIZE, &fsize);
}

/* Runs @argv with the preload module loaded and @env ("NAME=VALUE", NULL
 * ended) set, the file size limited to @fsize_limit bytes if not 0 (with
 * SIGXFSZ at its default: the child is killed); returns its stdout, the
 * signal that killed it or 0 in @signal_out, and its exit status. */
static char *
run_child (const char * const *argv,
           const char * const *env,
           rlim_t              fsize_limit,
           int                *signal_out,
           int                *status_out)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  if (preload_path != NULL)
    g_subprocess_launcher_setenv (launcher, "LD_PRELOAD", preload_path, TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  for (const char * const *var = env; var != NULL && *var != NULL; var++)
    {
      g_auto(GStrv) pair = g_strsplit (*var, "=", 2);

      g_subprocess_launcher_setenv (launcher, pair[0], pair[1], TRUE);
    }
  g_subprocess_launcher_set_child_setup (launcher, limit_file_size, &fsize_limit, NULL);

  process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);

  *signal_out = g_subprocess_get_if_signaled (process) ? g_subprocess_get_term_sig (process) : 0;
  *status_out = *signal_out == 0 ? g_subprocess_get_exit_status (process) : -1;

  return out;
}

/* Saves bundle @which at @scale to @path in a child with @env; returns
 * what it printed: "saved" or "DOMAIN CODE MESSAGE". */
static char *
run_save_scaled (const char         *path,
                 guint               which,
                 guint               scale,
                 const char * const *env)
{
  g_autofree char *which_arg = g_strdup_printf ("%u", which);
  g_autofree char *scale_arg = g_strdup_printf ("%u", scale);
  const char *argv[] = { self_path, "--save", path, which_arg, scale_arg, NULL };
  int killed_by, status;
  char *out = run_child (argv, env, 0, &killed_by, &status);

  g_assert_cmpint (killed_by, ==, 0);
  g_assert_cmpint (status, ==, 0);
  return g_strchomp (out);
}

/* Saves bundle @which, at scale 1000, to @path in a child with @env. */
static char *
run_save (const char         *path,
          guint               which,
          const char * const *env)
{
  return run_save_scaled (path, which, 1000, env);
}

static gboolean
need_preload (void)
{
  if (preload_path != NULL)
    return TRUE;
  g_test_skip ("no preload module (run with --preload)");
  return FALSE;
}

/* Asserts that @out, a save's output, is a G_IO_ERROR of @code whose
 * message names @path and no temporary file. */
static void
assert_save_error (const char *out,
                   int         code,
                   const char *path)
{
  g_autofree char *expected_start = g_strdup_printf ("g-io-error-quark %d Cannot save to “%s”: ", code, path);

  g_test_message ("save error: %s", out);
  g_assert_true (g_str_has_prefix (out, expected_start));
  g_assert_null (strstr (out, ".serio-save-"));
  g_assert_null (strstr (out, ".goutputstream-"));
  g_assert_null (strstr (out, "/#"));
}

static GBytes *
read_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents;
  gsize len;

  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);

  return g_bytes_new_take (contents, len);
}

static void
save (SerioBundle *bundle,
      GFile       *file)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
}

static void
assert_file_is (TempDir *tmp,
                GBytes  *expected)
{
  g_autoptr(GBytes) contents = read_file (tmp->path);
  g_autofree char *listing = list_dir (tmp->dir);

  g_assert_true (g_bytes_equal (contents, expected));
  g_assert_cmpstr (listing, ==, FILE_NAME);
}

/* Runs this program in a helper mode; returns its stdout, and whether it
 * was killed by a signal in @signal_out (0 if it exited). */
static char *
run_helper (const char * const *args,
            int                *signal_out)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_ptr_array_add (argv, self_path);
  for (const char * const *arg = args; *arg != NULL; arg++)
    g_ptr_array_add (argv, (gpointer) *arg);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);

  *signal_out = g_subprocess_get_if_signaled (process) ? g_subprocess_get_term_sig (process) : 0;
  if (*signal_out == 0)
    g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);

  return out;
}

static char *
run_save_limited (const char *path,
                  guint       which,
                  guint       scale,
                  gsize       limit,
                  const char *mode,
                  int        *signal_out)
{
  g_autofree char *which_arg = g_strdup_printf ("%u", which);
  g_autofree char *scale_arg = g_strdup_printf ("%u", scale);
  g_autofree char *limit_arg = g_strdup_printf ("%" G_GSIZE_FORMAT, limit);
  const char *args[] = { "--save-limited", path, which_arg, scale_arg, limit_arg, mode, NULL };

  return run_helper (args, signal_out);
}

/* ------------------------------------------------------------------ */
/* Killed saves                                                       */
/* ------------------------------------------------------------------ */

static char *
read_line (GDataInputStream *stream)
{
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line (stream, NULL, NULL, &error);

  g_assert_no_error (error);
  return line;
}

/* The temporary file that a process killed after the calls that the
 * preload logged to @log_path may have left: when the last of them is the
 * link of a save's file under a temporary name ("link INODE NAME") or the
 * rename of it over the target ("rename INODE NAME TARGET"), NAME (the
 * call may or may not have been made); %NULL after any other call, since
 * a save leaves a temporary file only between those two. */
static char *
temp_file_killed_in_place (const char *log_path)
{
  g_autofree char *log = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) fields = NULL;
  const char *last = "";

  g_assert_true (g_file_get_contents (log_path, &log, NULL, NULL));
  lines = g_strsplit (log, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      last = lines[i];

  fields = g_strsplit (last, " ", -1);
  if (g_strv_length (fields) >= 3 &&
      (strcmp (fields[0], "link") == 0 || strcmp (fields[0], "rename") == 0) &&
      g_str_has_prefix (fields[2], ".serio-save-"))
    return g_strdup (fields[2]);

  return NULL;
}

static void
test_kill (void)
{
  guint scale = scale_down (1);
  g_autoptr(SerioBundle) bundle0 = make_bundle (0, scale);
  g_autoptr(SerioBundle) bundle1 = make_bundle (1, scale);
  g_autoptr(GBytes) text0 = serio_bundle_to_bytes (bundle0, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) text1 = serio_bundle_to_bytes (bundle1, SERIO_SAVE_FLAGS_NONE);
  SerioBundle *bundles[2] = { bundle0, bundle1 };
  GBytes *texts[2] = { text0, text1 };
  g_autofree char *scale_arg = g_strdup_printf ("%u", scale);
  guint current = 0;
  guint old = 0, new = 0, between = 0, before = 0, temp_files;
  gint64 start, save_usec;
  g_autofree char *log_path = NULL;
  g_autoptr(GHashTable) allowed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  TempDir tmp;

  g_test_summary ("A process killed with SIGKILL at random moments while it saves "
                  "two large bundles in turn leaves the file holding exactly the "
                  "old or the new bundle, every time, and a temporary file (whole) "
                  "only when killed between its link and its rename.");

  temp_dir_init (&tmp);
  if (preload_path != NULL)
    {
      /* The child's calls that put a save in place, logged (outside the
       * directory of the saves) */
      log_path = g_build_filename (g_get_tmp_dir (), "serio-kill-log-XXXXXX", NULL);
      g_close (g_mkstemp (log_path), NULL);
    }
  save (bundles[0], tmp.file);
  start = g_get_monotonic_time ();
  save (bundles[0], tmp.file);
  save_usec = MAX (g_get_monotonic_time () - start, 1000);

  for (guint attempt = 0; attempt < N_KILLS; attempt++)
    {
      g_autofree char *first_arg = g_strdup_printf ("%u", 1 - current);
      const char *argv[] = { self_path, "--save-loop", tmp.path, first_arg, scale_arg, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
      g_autoptr(GSubprocess) process = NULL;
      g_autoptr(GDataInputStream) out = NULL;
      g_autoptr(GBytes) contents = NULL;
      g_autoptr(SerioBundle) loaded = NULL;
      g_autofree char *ready = NULL;
      g_autofree char *last = NULL;
      char *line;
      guint which, saving;

      if (log_path != NULL)
        {
          g_assert_true (g_file_set_contents (log_path, "", 0, NULL));
          g_subprocess_launcher_setenv (launcher, "LD_PRELOAD", preload_path, TRUE);
          g_subprocess_launcher_setenv (launcher, "SERIO_PRELOAD_LOG", log_path, TRUE);
        }
      process = g_subprocess_launcher_spawnv (launcher, argv, &error);
      g_assert_no_error (error);
      out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));
      ready = read_line (out);
      g_assert_cmpstr (ready, ==, "ready");

      g_usleep (g_random_int_range (0, (gint32) MIN (3 * save_usec, G_MAXINT32)));
      g_subprocess_force_exit (process);
      g_subprocess_wait (process, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_signaled (process));
      g_assert_cmpint (g_subprocess_get_term_sig (process), ==, SIGKILL);
      if (log_path != NULL)
        {
          char *name = temp_file_killed_in_place (log_path);

          if (name != NULL)
            g_hash_table_add (allowed, name);
        }

      while ((line = read_line (out)) != NULL)
        {
          g_free (last);
          last = line;
        }

      contents = read_file (tmp.path);
      if (g_bytes_equal (contents, texts[0]))
        which = 0;
      else if (g_bytes_equal (contents, texts[1]))
        which = 1;
      else
        g_error ("kill %u (after “%s”): the file holds neither bundle (%" G_GSIZE_FORMAT " bytes)",
                 attempt, last ? last : "ready", g_bytes_get_size (contents));

      loaded = serio_bundle_new_from_file (tmp.file, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (serio_bundle_equal (loaded, bundles[which]));

      if (last == NULL)
        {
          g_assert_cmpuint (which, ==, current);
          before++;
        }
      else if (sscanf (last, "save %u", &saving) == 1)
        {
          if (which == saving)
            new++;
          else
            old++;
        }
      else
        {
          g_assert_cmpint (sscanf (last, "done %u", &saving), ==, 1);
          g_assert_cmpuint (which, ==, saving);
          between++;
        }

      current = which;
    }

  temp_files = count_temp_files (tmp.dir);
  g_test_message ("%u kills during saves of %" G_GSIZE_FORMAT " and %" G_GSIZE_FORMAT " bytes "
                  "(one save took %.1f ms): %u in a save ended old, %u new; %u between "
                  "saves, %u before the first; %u between a link and the end of its "
                  "rename (%s); %u temporary files left behind",
                  N_KILLS, g_bytes_get_size (texts[0]), g_bytes_get_size (texts[1]),
                  save_usec / 1000.0, old, new, between, before, g_hash_table_size (allowed),
                  log_path != NULL ? "logged" : "not logged", temp_files);
  g_assert_cmpuint (old + new, >=, 1);
  /* With unnamed temporary files, only a kill between the link under a
   * temporary name and the rename over the target (two system calls, a
   * few microseconds of a save of many milliseconds) leaves one, and it
   * is then complete. Where the child's calls are logged, each leftover
   * must be the file of a save whose last call logged was its link or
   * its rename: on a loaded machine, a process preempted as a call
   * returns stretches that window (7 of 50 kills left a file once, under
   * valgrind in CI), which the log sees, while a step added between the
   * two calls would leave files it does not account for. Without the
   * log, the count is bounded loosely. The contents are checked exactly
   * either way. */
  if (tmpfile_supported (tmp.dir))
    {
      if (log_path == NULL)
        g_assert_cmpuint (temp_files, <=, N_KILLS / 10);
      assert_temp_files_complete (tmp.dir, texts, G_N_ELEMENTS (texts),
                                  log_path != NULL ? allowed : NULL);
    }
  if (log_path != NULL)
    g_assert_no_errno (g_unlink (log_path));

  temp_dir_clear (&tmp);
}

/* The first save to a path, killed part-way: the file must not exist
 * afterwards, or hold the whole bundle. The file size limit with SIGXFSZ
 * left at its default kills the child right after the first record,
 * deterministically, so a file written in place would read as a valid
 * bundle of one array. */
static void
test_kill_first_save (void)
{
  guint scale = scale_down (10);
  g_autoptr(SerioBundle) bundle = make_bundle (1, scale);
  g_autoptr(GBytes) text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  gsize len;
  const char *data = g_bytes_get_data (text, &len);
  /* The end of the first array's record, after the seal's opening one. */
  const char *opening_end = (const char *) memchr (data, '\n', len) + 1;
  gsize first_record = (const char *) memchr (opening_end, '\n', len - (opening_end - data)) - data + 1;
  g_autofree char *out = NULL;
  int killed_by;
  TempDir tmp;

  g_test_summary ("A process killed part-way through the first save to a path "
                  "leaves no file, or the whole bundle, never part of it.");

  temp_dir_init (&tmp);
  out = run_save_limited (tmp.path, 1, scale, first_record, "die", &killed_by);
  g_assert_cmpint (killed_by, ==, SIGXFSZ);

  if (g_file_test (tmp.path, G_FILE_TEST_EXISTS))
    {
      g_autoptr(GBytes) contents = read_file (tmp.path);
      g_autoptr(SerioBundle) partial = serio_bundle_new_from_bytes (contents, NULL);

      if (!g_bytes_equal (contents, text))
        g_test_fail_printf ("the killed save left %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes "
                            "at the path, which read as %s",
                            g_bytes_get_size (contents), len,
                            partial != NULL ? "a valid bundle of fewer arrays" : "an invalid file");
    }

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* Out of space                                                       */
/* ------------------------------------------------------------------ */

static void
test_no_space_replace (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, scale_down (100));
  g_autoptr(GBytes) old_text = NULL;
  g_autofree char *out = NULL;
  int killed_by;
  TempDir tmp;

  g_test_summary ("A save that runs out of file size part-way fails with a GError "
                  "and leaves the old file byte for byte, and no temporary file.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  old_text = read_file (tmp.path);
  g_assert_cmpuint (g_bytes_get_size (old_text), <, FSIZE_LIMIT);

  out = run_save_limited (tmp.path, 1, scale_down (1), FSIZE_LIMIT, "ignore", &killed_by);
  g_test_message ("save with a file size limit of %d bytes: %s", FSIZE_LIMIT, g_strchomp (out));
  g_assert_cmpint (killed_by, ==, 0);
  g_assert_true (g_str_has_prefix (out, "g-io-error-quark "));

  assert_file_is (&tmp, old_text);
  temp_dir_clear (&tmp);
}

static void
test_no_space_new (void)
{
  g_autofree char *out = NULL;
  g_autofree char *listing = NULL;
  int killed_by;
  TempDir tmp;

  g_test_summary ("A failed save to a new path leaves no file behind.");

  temp_dir_init (&tmp);
  out = run_save_limited (tmp.path, 1, scale_down (1), FSIZE_LIMIT, "ignore", &killed_by);
  g_assert_cmpint (killed_by, ==, 0);
  g_assert_true (g_str_has_prefix (out, "g-io-error-quark "));

  listing = list_dir (tmp.dir);
  g_assert_cmpstr (listing, ==, "");
  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* Cancellation                                                       */
/* ------------------------------------------------------------------ */

static void
test_cancel_before (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, scale_down (10));
  g_autoptr(SerioBundle) new = make_bundle (1, scale_down (10));
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GBytes) old_text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) new_file = NULL;
  g_autoptr(SerioBundle) loaded = NULL;
  g_autofree char *new_path = NULL;
  TempDir tmp;

  g_test_summary ("A save or a load with a cancelled GCancellable fails with "
                  "G_IO_ERROR_CANCELLED and changes nothing.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  old_text = read_file (tmp.path);
  g_cancellable_cancel (cancellable);

  g_assert_false (serio_bundle_save_to_file (new, tmp.file, SERIO_SAVE_FLAGS_NONE, cancellable, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  assert_file_is (&tmp, old_text);

  new_path = g_build_filename (tmp.dir, "new.serio", NULL);
  new_file = g_file_new_for_path (new_path);
  g_assert_false (serio_bundle_save_to_file (new, new_file, SERIO_SAVE_FLAGS_NONE, cancellable, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  assert_file_is (&tmp, old_text);

  loaded = serio_bundle_new_from_file (tmp.file, cancellable, NULL, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (loaded);

  temp_dir_clear (&tmp);
}

typedef struct
{
  const char   *dir;
  GCancellable *cancellable;
  gint          save_returned;   /* atomic */
  gboolean      saw_temp_file;
} Canceller;

/* Cancels as soon as the save has its temporary file open. */
static gpointer
cancel_mid_save (gpointer data)
{
  Canceller *canceller = data;

  while (!g_atomic_int_get (&canceller->save_returned))
    {
      if (has_temp_file_open (canceller->dir))
        {
          canceller->saw_temp_file = TRUE;
          g_cancellable_cancel (canceller->cancellable);
          break;
        }
      g_usleep (100);
    }

  return NULL;
}

static void
test_cancel_mid_save (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, scale_down (10));
  g_autoptr(SerioBundle) new = make_bundle (1, scale_down (1));
  g_autoptr(GBytes) old_text = NULL;
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  guint cancelled = 0, completed = 0;
  TempDir tmp;

  g_test_summary ("A save cancelled from another thread while its temporary file "
                  "is being written fails with G_IO_ERROR_CANCELLED and leaves the "
                  "old file byte for byte, and no temporary file.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  old_text = read_file (tmp.path);

  /* At least 5 saves, and more (up to 50) until one is cancelled: on a
   * loaded machine the canceller may miss the few milliseconds of the
   * write and the sync. */
  for (guint attempt = 0; attempt < 50 && (attempt < 5 || cancelled == 0); attempt++)
    {
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(GError) error = NULL;
      Canceller canceller = { tmp.dir, cancellable, 0, FALSE };
      GThread *thread = g_thread_new ("canceller", cancel_mid_save, &canceller);
      gboolean saved = serio_bundle_save_to_file (new, tmp.file, SERIO_SAVE_FLAGS_NONE, cancellable, NULL, NULL, &error);

      g_atomic_int_set (&canceller.save_returned, 1);
      g_thread_join (thread);

      if (saved)
        {
          /* The cancellation came after the rename. */
          g_assert_no_error (error);
          assert_file_is (&tmp, new_text);
          completed++;
          save (old, tmp.file);
        }
      else
        {
          g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
          g_assert_true (canceller.saw_temp_file);
          assert_file_is (&tmp, old_text);
          cancelled++;
        }
    }

  g_test_message ("saves of %" G_GSIZE_FORMAT " bytes cancelled mid-way: %u cancelled, %u completed first",
                  g_bytes_get_size (new_text), cancelled, completed);
  g_assert_cmpuint (cancelled, >=, 1);

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* Asynchronous                                                       */
/* ------------------------------------------------------------------ */

typedef struct
{
  GMainLoop   *loop;
  SerioBundle *bundle;
  GFile       *file;
  SerioBundle *loaded;
  GError      *error;
  guint        ticks;
} AsyncState;

static gboolean
tick (gpointer data)
{
  AsyncState *state = data;

  state->ticks++;
  return G_SOURCE_CONTINUE;
}

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  AsyncState *state = data;

  state->loaded = serio_bundle_new_from_file_finish (result, &state->error);
  g_main_loop_quit (state->loop);
}

static void
saved_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  AsyncState *state = data;

  g_assert_true (source == G_OBJECT (state->bundle));
  if (!serio_bundle_save_to_file_finish (state->bundle, result, &state->error))
    {
      g_main_loop_quit (state->loop);
      return;
    }

  serio_bundle_new_from_file_async (state->file, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, loaded_cb, state);
}

static void
test_async (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (1, scale_down (1));
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  AsyncState state = { loop, bundle, NULL, NULL, NULL, 0 };
  guint tick_id;
  TempDir tmp;

  g_test_summary ("save_to_file_async() then from_file_async() from a main loop "
                  "give back an equal bundle.");

  temp_dir_init (&tmp);
  state.file = tmp.file;
  tick_id = g_timeout_add (1, tick, &state);

  serio_bundle_save_to_file_async (bundle, tmp.file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, saved_cb, &state);
  g_main_loop_run (loop);
  g_source_remove (tick_id);

  g_assert_no_error (state.error);
  g_assert_nonnull (state.loaded);
  g_assert_true (serio_bundle_equal (bundle, state.loaded));
  g_test_message ("the main loop ran %u 1-ms timeouts during the save and load", state.ticks);

  g_clear_object (&state.loaded);
  temp_dir_clear (&tmp);
}

static void
test_async_errors (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, scale_down (100));
  g_autoptr(SerioBundle) new = make_bundle (1, scale_down (100));
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GBytes) old_text = NULL;
  g_autoptr(GFile) missing = NULL;
  AsyncState state = { loop, new, NULL, NULL, NULL, 0 };
  TempDir tmp;

  g_test_summary ("The asynchronous load reports a missing file, and a cancelled "
                  "asynchronous save leaves the old file as it was.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  old_text = read_file (tmp.path);

  missing = g_file_new_build_filename (tmp.dir, "missing.serio", NULL);
  serio_bundle_new_from_file_async (missing, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, loaded_cb, &state);
  g_main_loop_run (loop);
  g_assert_null (state.loaded);
  g_assert_error (state.error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&state.error);

  g_cancellable_cancel (cancellable);
  state.file = tmp.file;
  serio_bundle_save_to_file_async (new, tmp.file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, cancellable, NULL, NULL, NULL, saved_cb, &state);
  g_main_loop_run (loop);
  g_assert_error (state.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&state.error);
  assert_file_is (&tmp, old_text);

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

static void
test_read_errors (void)
{
  g_autoptr(GFile) missing = NULL;
  g_autoptr(GFile) dir = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GError) error = NULL;
  TempDir tmp;

  g_test_summary ("Reading a missing file gives G_IO_ERROR_NOT_FOUND, reading a "
                  "directory G_IO_ERROR_IS_DIRECTORY.");

  temp_dir_init (&tmp);
  dir = g_file_new_for_path (tmp.dir);
  missing = g_file_get_child (dir, "missing.serio");

  bundle = serio_bundle_new_from_file (missing, NULL, NULL, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_null (bundle);
  g_clear_error (&error);

  bundle = serio_bundle_new_from_file (dir, NULL, NULL, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_assert_null (bundle);

  temp_dir_clear (&tmp);
}

static void
test_write_errors (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (0, 1000);
  g_autoptr(GFile) subdir = NULL;
  g_autoptr(GFile) in_missing_dir = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *expected = NULL;
  TempDir tmp;

  g_test_summary ("Saving over a directory or into a missing directory fails "
                  "with a G_IO_ERROR that names the target, and changes nothing.");

  temp_dir_init (&tmp);
  subdir = g_file_new_build_filename (tmp.dir, "subdir", NULL);
  g_assert_true (g_file_make_directory (subdir, NULL, NULL));

  g_assert_false (serio_bundle_save_to_file (bundle, subdir, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  expected = g_strdup_printf ("Cannot save to “%s”: %s", g_file_peek_path (subdir), g_strerror (EISDIR));
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  g_clear_pointer (&expected, g_free);
  g_assert_true (g_file_query_file_type (subdir, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY);

  in_missing_dir = g_file_resolve_relative_path (subdir, "missing/model.serio");
  g_assert_false (serio_bundle_save_to_file (bundle, in_missing_dir, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  /* The target as the caller passed it, not a temporary file. */
  expected = g_strdup_printf ("Cannot save to “%s”: %s", g_file_peek_path (in_missing_dir), g_strerror (ENOENT));
  g_assert_cmpstr (error->message, ==, expected);

  g_clear_error (&error);

  /* A file without a local path goes through GIO, and is named too. */
  {
    g_autoptr(GFile) resource = g_file_new_for_uri ("resource:///org/example/model.serio");

    g_assert_false (serio_bundle_save_to_file (bundle, resource, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error));
    g_assert_true (error->domain == G_IO_ERROR);
    g_test_message ("save to a resource: %s", error->message);
    g_assert_true (g_str_has_prefix (error->message, "Cannot save to “resource:///org/example/model.serio”: "));
  }

  listing = list_dir (tmp.dir);
  g_assert_cmpstr (listing, ==, "subdir");
  temp_dir_clear (&tmp);
}

static void
test_parse_errors (void)
{
  static const struct
  {
    const char *contents;
    int         code;   /* a SerioError */
  } files[] = {
    { "v2|x|0|\n", SERIO_ERROR_VERSION },
    { "v1|x|1|01\n", SERIO_ERROR_SYNTAX },
    { "v1|x|2|1\n", SERIO_ERROR_LENGTH },
    { "v1|x|1|1p1024\n", SERIO_ERROR_DOMAIN },
    { "v1|x|1|1", SERIO_ERROR_TRUNCATED },
  };
  TempDir tmp;

  g_test_summary ("Bad contents read with from_file() and from_file_async() give "
                  "the SERIO_ERROR of the text.");

  temp_dir_init (&tmp);

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
      AsyncState state = { loop, NULL, tmp.file, NULL, NULL, 0 };
      g_autoptr(SerioBundle) bundle = NULL;
      g_autoptr(GError) error = NULL;

      g_file_set_contents (tmp.path, files[i].contents, -1, &error);
      g_assert_no_error (error);

      bundle = serio_bundle_new_from_file (tmp.file, NULL, NULL, NULL, &error);
      g_assert_error (error, SERIO_ERROR, files[i].code);
      g_assert_null (bundle);

      serio_bundle_new_from_file_async (tmp.file, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, loaded_cb, &state);
      g_main_loop_run (loop);
      g_assert_error (state.error, SERIO_ERROR, files[i].code);
      g_assert_null (state.loaded);
      g_clear_error (&state.error);
    }

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* Permissions and links                                              */
/* ------------------------------------------------------------------ */

static void
test_mode_kept (void)
{
  static const guint modes[] = { 0600, 0640, 0755, 0400 };
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  TempDir tmp;

  g_test_summary ("Saving over a file keeps its mode (0600 stays 0600), and its "
                  "owner and group where the process may set them; a new file "
                  "gets the mode of a new file.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, new_file_mode ());

  for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      g_assert_no_errno (chmod (tmp.path, modes[i]));
      save (new, tmp.file);
      assert_file_is (&tmp, new_text);
      g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, modes[i]);
      save (old, tmp.file);
      g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, modes[i]);
    }

  /* As root (and where uid 65534 is mapped, outside some containers). */
  if (geteuid () == 0 && chown (tmp.path, 65534, 65534) == 0)
    {
      g_assert_no_errno (chmod (tmp.path, 0640));
      save (new, tmp.file);
      g_assert_cmpuint (stat_of (tmp.path).st_uid, ==, 65534);
      g_assert_cmpuint (stat_of (tmp.path).st_gid, ==, 65534);
      g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, 0640);
    }
  else
    g_test_message ("cannot give a file away: the owner is not checked");

  /* The same through a named temporary file. */
  if (preload_path != NULL)
    {
      const char *env[] = { "SERIO_PRELOAD_NO_TMPFILE=1", NULL };
      g_autofree char *out = NULL;

      g_assert_no_errno (chmod (tmp.path, 0600));
      out = run_save (tmp.path, 1, env);
      g_assert_cmpstr (out, ==, "saved");
      g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, 0600);
      assert_file_is (&tmp, new_text);
    }

  temp_dir_clear (&tmp);
}

static void
test_symlink (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) old_text = serio_bundle_to_bytes (old, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) real_text = NULL;
  g_autoptr(GBytes) link_text = NULL;
  g_autoptr(GFile) real = NULL;
  g_autofree char *real_path = NULL;
  g_autofree char *listing = NULL;
  struct stat st;
  TempDir tmp;

  g_test_summary ("A save through a symbolic link replaces the link with a regular "
                  "file of the new bundle, with the mode of a new file, and leaves "
                  "the file it pointed to as it was; a dangling link is replaced "
                  "the same way.");

  temp_dir_init (&tmp);
  real_path = g_build_filename (tmp.dir, "real.serio", NULL);
  real = g_file_new_for_path (real_path);
  save (old, real);
  g_assert_no_errno (chmod (real_path, 0600));
  g_assert_no_errno (symlink ("real.serio", tmp.path));

  save (new, tmp.file);

  st = stat_of (tmp.path);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpuint (st.st_mode & 07777, ==, new_file_mode ());
  link_text = read_file (tmp.path);
  g_assert_true (g_bytes_equal (link_text, new_text));

  real_text = read_file (real_path);
  g_assert_true (g_bytes_equal (real_text, old_text));
  g_assert_cmpuint (stat_of (real_path).st_mode & 07777, ==, 0600);

  listing = list_dir (tmp.dir);
  g_assert_cmpstr (listing, ==, FILE_NAME " real.serio");

  /* A dangling link: its target is not created. */
  g_assert_no_errno (g_unlink (real_path));
  g_assert_no_errno (g_unlink (tmp.path));
  g_assert_no_errno (symlink ("real.serio", tmp.path));
  save (new, tmp.file);
  g_assert_true (S_ISREG (stat_of (tmp.path).st_mode));
  assert_file_is (&tmp, new_text);

  temp_dir_clear (&tmp);
}

/* Asserts that a save and a writer for the file @name of @tmp's
 * directory are refused as not regular, for @reason, and that the
 * directory still holds @listing only. */
static void
assert_save_refused (TempDir    *tmp,
                     const char *name,
                     const char *reason,
                     const char *listing)
{
  g_autoptr(SerioBundle) bundle = make_bundle (0, 1000);
  g_autofree char *path = g_build_filename (tmp->dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *expected = g_strdup_printf ("Cannot save to “%s”: %s", path, reason);
  g_autofree char *after = NULL;
  g_autoptr(SerioWriter) writer = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_false (serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);

  writer = serio_writer_new_for_file (file, SERIO_SAVE_FLAGS_NONE, NULL, &error);
  g_assert_null (writer);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
  g_assert_cmpstr (error->message, ==, expected);

  after = list_dir (tmp->dir);
  g_assert_cmpstr (after, ==, listing);
}

/* Asserts that @path is still a symbolic link to @to. */
static void
assert_link_to (const char *path,
                const char *to)
{
  g_autofree char *points_to = g_file_read_link (path, NULL);

  g_assert_true (S_ISLNK (stat_of (path).st_mode));
  g_assert_cmpstr (points_to, ==, to);
}

static void
test_symlink_to_special (void)
{
  g_autofree char *fifo = NULL;
  g_autofree char *sock = NULL;
  g_autofree char *link = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st;
  TempDir tmp;

  g_test_summary ("A save (and a writer) for a symbolic link to a device, a FIFO, "
                  "a socket or a directory, or for such a file itself, is refused "
                  "with G_IO_ERROR_NOT_REGULAR_FILE saying what it is, and leaves "
                  "the link and what it points to as they were.");

  temp_dir_init (&tmp);

  /* /dev/null through a link in the test's directory (the link is
   * FILE_NAME, so it sorts first). */
  g_assert_no_errno (symlink ("/dev/null", tmp.path));
  assert_save_refused (&tmp, FILE_NAME,
                       "It is a symbolic link to a character device, which a save does not replace",
                       FILE_NAME);
  assert_link_to (tmp.path, "/dev/null");
  g_assert_no_errno (stat ("/dev/null", &st));
  g_assert_true (S_ISCHR (st.st_mode));

  /* A link to that link. */
  link = g_build_filename (tmp.dir, "nz-link", NULL);
  g_assert_no_errno (symlink (FILE_NAME, link));
  assert_save_refused (&tmp, "nz-link",
                       "It is a symbolic link to a character device, which a save does not replace",
                       FILE_NAME " nz-link");
  g_assert_no_errno (g_unlink (link));
  g_assert_no_errno (g_unlink (tmp.path));

  /* A FIFO, and a link to it. */
  fifo = g_build_filename (tmp.dir, "fifo", NULL);
  g_assert_no_errno (mkfifo (fifo, 0600));
  assert_save_refused (&tmp, "fifo", "It is a FIFO, not a regular file", "fifo");
  g_assert_no_errno (symlink ("fifo", tmp.path));
  assert_save_refused (&tmp, FILE_NAME,
                       "It is a symbolic link to a FIFO, which a save does not replace",
                       "fifo " FILE_NAME);
  g_assert_true (S_ISFIFO (stat_of (fifo).st_mode));
  assert_link_to (tmp.path, "fifo");
  g_assert_no_errno (g_unlink (tmp.path));
  g_assert_no_errno (g_unlink (fifo));

  /* A socket, and a link to it. */
  sock = g_build_filename (tmp.dir, "sock", NULL);
  socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, &error);
  g_assert_no_error (error);
  address = g_unix_socket_address_new (sock);
  g_assert_true (g_socket_bind (socket, address, FALSE, &error));
  g_assert_no_error (error);
  assert_save_refused (&tmp, "sock", "It is a socket, not a regular file", "sock");
  g_assert_no_errno (symlink ("sock", tmp.path));
  assert_save_refused (&tmp, FILE_NAME,
                       "It is a symbolic link to a socket, which a save does not replace",
                       FILE_NAME " sock");
  g_assert_true (S_ISSOCK (stat_of (sock).st_mode));
  g_assert_no_errno (g_unlink (tmp.path));
  g_assert_no_errno (g_unlink (sock));

  /* A link to a directory. */
  g_assert_no_errno (g_mkdir (fifo, 0700));
  g_assert_no_errno (symlink ("fifo", tmp.path));
  assert_save_refused (&tmp, FILE_NAME,
                       "It is a symbolic link to a directory, which a save does not replace",
                       "fifo " FILE_NAME);
  g_assert_true (S_ISDIR (stat_of (fifo).st_mode));
  g_assert_no_errno (g_unlink (tmp.path));

  temp_dir_clear (&tmp);
}

/* The value of the extended attribute @name of @path, or NULL (errno
 * set) when it has none. */
static GBytes *
get_xattr (const char *path,
           const char *name)
{
  char value[256];
  ssize_t size = lgetxattr (path, name, value, sizeof value);

  return size >= 0 ? g_bytes_new (value, size) : NULL;
}

/* Sets the extended attribute @name of @path; returns FALSE (errno set)
 * where it cannot be set. */
static gboolean
set_xattr (const char *path,
           const char *name,
           const void *value,
           gsize       size)
{
  return lsetxattr (path, name, value, size, 0) == 0;
}

static void
assert_xattr (const char *path,
              const char *name,
              const void *value,
              gsize       size)
{
  g_autoptr(GBytes) got = get_xattr (path, name);

  g_assert_nonnull (got);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), value, size);
}

/* A POSIX ACL as the kernel stores it in system.posix_acl_access: owner
 * rw-, user 65534 r--, group r--, mask r--, other ---. */
static const guint8 test_acl[] = {
  2, 0, 0, 0,
  1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
  2, 0, 4, 0, 0xfe, 0xff, 0, 0,
  4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
  0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
  0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
};

static void
test_xattrs_kept (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) old_text = serio_bundle_to_bytes (old, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  gboolean acl, trusted, security;
  TempDir tmp;

  g_test_summary ("Saving over a file keeps its extended attributes: user.*, a "
                  "POSIX ACL, and as root trusted.* and security.*, through an "
                  "unnamed and a named temporary file; a security.* one that may "
                  "not be set is dropped, a user.* one that cannot be set fails "
                  "the save, naming the target and the attribute, and keeps the "
                  "old file.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  if (!set_xattr (tmp.path, "user.tag", "kept", 4))
    {
      g_test_skip_printf ("no user extended attributes in %s: %s", tmp.dir, g_strerror (errno));
      temp_dir_clear (&tmp);
      return;
    }
  g_assert_no_errno (chmod (tmp.path, 0640));
  acl = set_xattr (tmp.path, "system.posix_acl_access", test_acl, sizeof test_acl);
  trusted = set_xattr (tmp.path, "trusted.serio-test", "t", 1);
  security = set_xattr (tmp.path, "security.serio-test", "s", 1);
  g_test_message ("also copied here: ACL %d, trusted.* %d, security.* %d", acl, trusted, security);

  save (new, tmp.file);
  assert_file_is (&tmp, new_text);
  assert_xattr (tmp.path, "user.tag", "kept", 4);
  if (acl)
    assert_xattr (tmp.path, "system.posix_acl_access", test_acl, sizeof test_acl);
  if (trusted)
    assert_xattr (tmp.path, "trusted.serio-test", "t", 1);
  if (security)
    assert_xattr (tmp.path, "security.serio-test", "s", 1);
  g_assert_cmpuint (stat_of (tmp.path).st_mode & 07777, ==, 0640);

  if (preload_path != NULL)
    {
      /* Through a named temporary file. */
      {
        const char *env[] = { "SERIO_PRELOAD_NO_TMPFILE=1", NULL };
        g_autofree char *out = NULL;

        save (old, tmp.file);
        out = run_save (tmp.path, 1, env);
        g_assert_cmpstr (out, ==, "saved");
        assert_file_is (&tmp, new_text);
        assert_xattr (tmp.path, "user.tag", "kept", 4);
      }

      /* A security.* attribute the process may not set (EPERM) is
       * dropped; the save goes on. */
      if (security)
        {
          const char *env[] = { "SERIO_PRELOAD_XATTR_FAIL=security.:1", NULL };
          g_autofree char *out = NULL;

          save (old, tmp.file);
          out = run_save (tmp.path, 1, env);
          g_assert_cmpstr (out, ==, "saved");
          assert_file_is (&tmp, new_text);
          assert_xattr (tmp.path, "user.tag", "kept", 4);
          g_assert_null (get_xattr (tmp.path, "security.serio-test"));
          g_assert_cmpint (errno, ==, ENODATA);
        }

      /* A user.* attribute that cannot be set (no room: ENOSPC) fails
       * the save, and the old file keeps it. */
      {
        const char *env[] = { "SERIO_PRELOAD_XATTR_FAIL=user.:28", NULL };
        g_autofree char *out = NULL;

        save (old, tmp.file);
        out = run_save (tmp.path, 1, env);
        assert_save_error (out, G_IO_ERROR_NO_SPACE, tmp.path);
        g_assert_nonnull (strstr (out, "Cannot keep the extended attribute “user.tag”: "));
        assert_file_is (&tmp, old_text);
        assert_xattr (tmp.path, "user.tag", "kept", 4);
      }
    }

  temp_dir_clear (&tmp);
}

static void
test_hard_link (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) old_text = serio_bundle_to_bytes (old, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) other_text = NULL;
  g_autoptr(GBytes) saved_text = NULL;
  g_autofree char *other_path = NULL;
  struct stat saved, other;
  TempDir tmp;

  g_test_summary ("A save to one name of a hard-linked pair replaces that name "
                  "only: it becomes a new file with the new bundle and the old "
                  "mode, and the other name keeps the old contents.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  g_assert_no_errno (chmod (tmp.path, 0640));
  other_path = g_build_filename (tmp.dir, "other.serio", NULL);
  g_assert_no_errno (link (tmp.path, other_path));

  save (new, tmp.file);

  saved = stat_of (tmp.path);
  other = stat_of (other_path);
  saved_text = read_file (tmp.path);
  other_text = read_file (other_path);
  g_assert_true (g_bytes_equal (saved_text, new_text));
  g_assert_true (g_bytes_equal (other_text, old_text));
  g_assert_cmpuint (saved.st_ino, !=, other.st_ino);
  g_assert_cmpuint (saved.st_nlink, ==, 1);
  g_assert_cmpuint (other.st_nlink, ==, 1);
  g_assert_cmpuint (saved.st_mode & 07777, ==, 0640);
  g_assert_cmpuint (other.st_mode & 07777, ==, 0640);

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* System calls: order and faults                                     */
/* ------------------------------------------------------------------ */

/* The ways the library can write: "unnamed" (O_TMPFILE, where the file
 * system takes it) and "named" (forced by the preload module). */
static gboolean
skip_mode (TempDir  *tmp,
           gboolean  unnamed)
{
  if (unnamed && !tmpfile_supported (tmp->dir))
    {
      g_test_message ("O_TMPFILE is not supported in %s: only named temporary files tested", tmp->dir);
      return TRUE;
    }
  return FALSE;
}

/* Saves bundle @which at @scale to @path in a child with @env, whose
 * first entry (left NULL) is set to the preload's log; asserts that it
 * saved, shows the log under @what and returns it. */
static char *
run_logged_save (const char  *path,
                 guint        which,
                 guint        scale,
                 const char **env,
                 const char  *what)
{
  g_autofree char *log_path = g_build_filename (g_get_tmp_dir (), "serio-save-log-XXXXXX", NULL);
  g_autofree char *log_env = NULL;
  g_autofree char *out = NULL;
  char *log = NULL;

  g_close (g_mkstemp (log_path), NULL);
  log_env = g_strconcat ("SERIO_PRELOAD_LOG=", log_path, NULL);
  env[0] = log_env;

  out = run_save_scaled (path, which, scale, env);
  env[0] = NULL;
  g_assert_cmpstr (out, ==, "saved");
  g_file_get_contents (log_path, &log, NULL, NULL);
  g_assert_no_errno (g_unlink (log_path));
  g_test_message ("%s:\n%s", what, log);

  return log;
}

/* The index in @lines of the first fsync (or fdatasync) of the file
 * @ino, or -1. */
static int
first_file_sync (char    **lines,
                 guint64   ino)
{
  for (int i = 0; lines[i] != NULL; i++)
    {
      guint64 line_ino;

      if ((sscanf (lines[i], "fsync file %" G_GUINT64_FORMAT, &line_ino) == 1 ||
           sscanf (lines[i], "fdatasync file %" G_GUINT64_FORMAT, &line_ino) == 1) &&
          line_ino == ino)
        return i;
    }

  return -1;
}

static void
test_sync_before_rename (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);

  g_test_summary ("The new file's data is synced before the file is linked or "
                  "renamed into place, for a new file and over an existing one, "
                  "and the directory is synced afterwards (issue 12).");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      {
        g_autofree char *what = g_strdup_printf ("%s temporary file, %s target",
                                                 unnamed ? "unnamed" : "named",
                                                 existing ? "existing" : "new");
        g_autofree char *log = NULL;
        g_auto(GStrv) lines = NULL;
        const char *env[] = { NULL, unnamed ? NULL : "SERIO_PRELOAD_NO_TMPFILE=1", NULL };
        guint64 placed, dir_ino;
        int synced_at, named_at = -1, in_place_at = -1, dir_synced_at = -1;
        TempDir tmp;

        temp_dir_init (&tmp);
        if (skip_mode (&tmp, unnamed))
          {
            temp_dir_clear (&tmp);
            continue;
          }
        if (existing)
          save (old, tmp.file);

        log = run_logged_save (tmp.path, 1, 1000, env, what);
        lines = g_strsplit (log, "\n", -1);
        placed = stat_of (tmp.path).st_ino;
        dir_ino = stat_of (tmp.dir).st_ino;
        synced_at = first_file_sync (lines, placed);
        for (int i = 0; lines[i] != NULL; i++)
          {
            guint64 ino;
            char name[256], name2[256];

            if (sscanf (lines[i], "link %" G_GUINT64_FORMAT " %255s", &ino, name) == 2 &&
                     ino == placed)
              {
                if (named_at < 0)
                  named_at = i;
                if (strcmp (name, FILE_NAME) == 0)
                  in_place_at = i;
              }
            else if (sscanf (lines[i], "rename %" G_GUINT64_FORMAT " %255s %255s", &ino, name, name2) == 3 &&
                     ino == placed)
              {
                if (named_at < 0)
                  named_at = i;
                if (strcmp (name2, FILE_NAME) == 0)
                  in_place_at = i;
              }
            else if (sscanf (lines[i], "fsync dir %" G_GUINT64_FORMAT, &ino) == 1 &&
                     ino == dir_ino && in_place_at >= 0 && dir_synced_at < 0)
              dir_synced_at = i;
          }

        g_assert_cmpint (in_place_at, >=, 0);
        g_assert_cmpint (synced_at, >=, 0);
        g_assert_cmpint (synced_at, <, named_at);
        g_assert_cmpint (dir_synced_at, >, in_place_at);

        temp_dir_clear (&tmp);
      }
}

/* Saves bundle @which at @scale over bundle 0 (if @existing) or to a new
 * path, with the faults of @fault_env ("NAME=VALUE", NULL ended), through
 * an unnamed or a named temporary file, and checks that it fails with
 * @code naming the target and changes nothing. Returns FALSE if the mode
 * is not supported here. */
static gboolean
check_faults_of (const char * const *fault_env,
                 gboolean            unnamed,
                 gboolean            existing,
                 int                 code,
                 guint               which,
                 guint               scale)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(GBytes) old_text = serio_bundle_to_bytes (old, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GPtrArray) env = g_ptr_array_new ();
  g_autofree char *out = NULL;
  TempDir tmp;

  for (const char * const *var = fault_env; *var != NULL; var++)
    g_ptr_array_add (env, (gpointer) *var);
  if (!unnamed)
    g_ptr_array_add (env, (gpointer) "SERIO_PRELOAD_NO_TMPFILE=1");
  g_ptr_array_add (env, NULL);

  temp_dir_init (&tmp);
  if (skip_mode (&tmp, unnamed))
    {
      temp_dir_clear (&tmp);
      return FALSE;
    }
  if (existing)
    save (old, tmp.file);

  out = run_save_scaled (tmp.path, which, scale, (const char * const *) env->pdata);
  assert_save_error (out, code, tmp.path);

  if (existing)
    assert_file_is (&tmp, old_text);
  else
    {
      g_autofree char *listing = list_dir (tmp.dir);

      g_assert_cmpstr (listing, ==, "");
    }

  temp_dir_clear (&tmp);
  return TRUE;
}

/* check_faults_of() with one fault. */
static gboolean
check_fault_of (const char *fault_env,
                gboolean    unnamed,
                gboolean    existing,
                int         code,
                guint       which,
                guint       scale)
{
  return check_faults_of ((const char *[]) { fault_env, NULL }, unnamed, existing, code, which, scale);
}

/* check_fault_of() with bundle 1 at scale 1000 as the new bundle. */
static gboolean
check_fault (const char *fault_env,
             gboolean    unnamed,
             gboolean    existing,
             int         code)
{
  return check_fault_of (fault_env, unnamed, existing, code, 1, 1000);
}

static void
test_fault_fsync (void)
{
  g_test_summary ("A save whose fsync fails reports the error, naming the target, "
                  "and leaves the old file (or no file) and no temporary file.");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      check_fault ("SERIO_PRELOAD_FSYNC_ERRNO=5", unnamed, existing, g_io_error_from_errno (EIO));
}

static void
test_cancel_in_fsync (void)
{
  g_autofree char *mark = g_build_filename (g_get_tmp_dir (), "serio-fsync-mark-XXXXXX", NULL);
  g_autofree char *mark_env = NULL;
  g_autofree char *cancel_env = NULL;

  g_test_summary ("A cancel that arrives while the save's fsync runs (a slow "
                  "disk: a preloaded fsync that sleeps) fails the save with "
                  "G_IO_ERROR_CANCELLED naming the target, and leaves the old "
                  "file (or no file) and no temporary file.");

  if (!need_preload ())
    return;

  g_close (g_mkstemp (mark), NULL);
  mark_env = g_strconcat ("SERIO_PRELOAD_FSYNC_MARK=", mark, NULL);
  cancel_env = g_strconcat ("SERIO_TEST_CANCEL_ON_MARK=", mark, NULL);
  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      {
        const char *env[] = { "SERIO_PRELOAD_FSYNC_SLEEP_MS=300", mark_env, cancel_env, NULL };

        /* The mark appears only when the sync starts. */
        g_unlink (mark);
        if (check_faults_of (env, unnamed, existing, G_IO_ERROR_CANCELLED, 1, 1000))
          g_assert_true (g_file_test (mark, G_FILE_TEST_EXISTS));
      }
  g_unlink (mark);
}

/* The text of bundle 2 at scale 1: about 26 MB, more than three pieces
 * of the save's write-behind (8 MiB). */
#define BIG_BUNDLE 2
#define WRITE_BEHIND (8 * 1024 * 1024)

/* The log lines "sync_file_range INODE OFFSET LENGTH FLAGS" about @ino,
 * in @lines, each checked to follow the one before it; returns how many
 * there are and sets *@end to where the last one ends and *@last_at to
 * its index in @lines (-1 when there is none). */
static guint
check_sync_ranges (char    **lines,
                   guint64   ino,
                   guint64  *end,
                   int      *last_at)
{
  guint n = 0;

  *end = 0;
  *last_at = -1;
  for (int i = 0; lines[i] != NULL; i++)
    {
      guint64 line_ino, offset, length;
      guint flags;

      if (sscanf (lines[i], "sync_file_range %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                  " %" G_GUINT64_FORMAT " %u", &line_ino, &offset, &length, &flags) != 4 ||
          line_ino != ino)
        continue;

      /* Each piece starts where the one before ended, holds at least
       * WRITE_BEHIND bytes and at most one more write (1 MiB), and is
       * only started, not waited for. */
      g_assert_cmpuint (offset, ==, *end);
      g_assert_cmpuint (length, >=, WRITE_BEHIND);
      g_assert_cmpuint (length, <=, WRITE_BEHIND + 1024 * 1024);
      g_assert_cmpuint (flags, ==, SYNC_FILE_RANGE_WRITE);
      *end = offset + length;
      *last_at = i;
      n++;
    }

  return n;
}

static void
test_write_behind (void)
{
  g_autoptr(SerioBundle) big = make_bundle (BIG_BUNDLE, 1);
  g_autoptr(GBytes) big_text = serio_bundle_to_bytes (big, SERIO_SAVE_FLAGS_NONE);
  gsize text_len = g_bytes_get_size (big_text);

  g_test_summary ("A save of more than 8 MiB asks the kernel to start writing each "
                  "8 MiB to the disk as it goes, from the start of the temporary file "
                  "on and before its fsync, and the file saved is the bundle's text; a "
                  "file system without sync_file_range (EINVAL) saves all the same.");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int unsupported = 0; unsupported <= 1; unsupported++)
      {
        g_autofree char *what = g_strdup_printf ("%s temporary file%s",
                                                 unnamed ? "unnamed" : "named",
                                                 unsupported ? ", no sync_file_range" : "");
        g_autofree char *log = NULL;
        g_auto(GStrv) lines = NULL;
        const char *env[4] = { NULL, NULL, NULL, NULL };
        guint n_env = 1;   /* env[0] is the log */
        guint64 placed, end;
        int last_at;
        guint n;
        TempDir tmp;

        if (unsupported)
          env[n_env++] = "SERIO_PRELOAD_SYNC_RANGE_ERRNO=22";
        if (!unnamed)
          env[n_env++] = "SERIO_PRELOAD_NO_TMPFILE=1";
        temp_dir_init (&tmp);
        if (skip_mode (&tmp, unnamed))
          {
            temp_dir_clear (&tmp);
            continue;
          }

        log = run_logged_save (tmp.path, BIG_BUNDLE, 1, env, what);
        lines = g_strsplit (log, "\n", -1);
        assert_file_is (&tmp, big_text);
        placed = stat_of (tmp.path).st_ino;
        n = check_sync_ranges (lines, placed, &end, &last_at);
        g_assert_cmpint (first_file_sync (lines, placed), >, last_at);
        if (unsupported)
          {
            /* Tried once, then not again. */
            g_assert_cmpuint (n, ==, 1);
          }
        else
          {
            /* Every time 8 MiB more were written: what is left at the end
             * is less, and the fsync writes it. */
            g_assert_cmpuint (n, >=, 2);
            g_assert_cmpuint (end, <=, text_len);
            g_assert_cmpuint (text_len - end, <, WRITE_BEHIND);
          }

        temp_dir_clear (&tmp);
      }
}

static void
test_fault_write_behind (void)
{
  g_test_summary ("A save whose write-behind fails with an I/O error reports the "
                  "error, naming the target, and leaves the old file (or no file) "
                  "and no temporary file.");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      check_fault_of ("SERIO_PRELOAD_SYNC_RANGE_ERRNO=5", unnamed, existing,
                      g_io_error_from_errno (EIO), BIG_BUNDLE, 1);
}

static void
test_fault_rename (void)
{
  g_test_summary ("A save whose rename into place fails reports the error, naming "
                  "the target, and leaves the old file (or no file) and no "
                  "temporary file.");

  if (!need_preload ())
    return;

  check_fault ("SERIO_PRELOAD_RENAME_ERRNO=13", TRUE, TRUE, G_IO_ERROR_PERMISSION_DENIED);
  check_fault ("SERIO_PRELOAD_RENAME_ERRNO=13", FALSE, TRUE, G_IO_ERROR_PERMISSION_DENIED);
  check_fault ("SERIO_PRELOAD_RENAME_ERRNO=13", FALSE, FALSE, G_IO_ERROR_PERMISSION_DENIED);
}

static void
test_fault_link (void)
{
  g_test_summary ("A save whose link of the unnamed temporary file fails reports "
                  "the error, naming the target, and leaves the old file (or no "
                  "file) and nothing else.");

  if (!need_preload ())
    return;

  if (!check_fault ("SERIO_PRELOAD_LINK_ERRNO=1", TRUE, FALSE, G_IO_ERROR_PERMISSION_DENIED))
    {
      g_test_skip ("O_TMPFILE is not supported here");
      return;
    }
  check_fault ("SERIO_PRELOAD_LINK_ERRNO=1", TRUE, TRUE, G_IO_ERROR_PERMISSION_DENIED);
}

static void
test_link_without_proc (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);

  g_test_summary ("Where linking the unnamed file through /proc/self/fd fails, it "
                  "is linked with AT_EMPTY_PATH (as root), for a new file and over "
                  "an existing one.");

  if (!need_preload ())
    return;
  if (geteuid () != 0)
    {
      /* Without CAP_DAC_READ_SEARCH the save fails, and check_fault()
       * shows that it names the target and leaves nothing behind. */
      if (!check_fault ("SERIO_PRELOAD_NO_PROC_LINK=1", TRUE, TRUE, G_IO_ERROR_NOT_FOUND))
        g_test_skip ("O_TMPFILE is not supported here");
      return;
    }

  for (int existing = 0; existing <= 1; existing++)
    {
      g_autofree char *log = NULL;
      const char *env[] = { NULL, "SERIO_PRELOAD_NO_PROC_LINK=1", NULL };
      TempDir tmp;

      temp_dir_init (&tmp);
      if (skip_mode (&tmp, TRUE))
        {
          temp_dir_clear (&tmp);
          g_test_skip ("O_TMPFILE is not supported here");
          return;
        }
      if (existing)
        save (old, tmp.file);

      log = run_logged_save (tmp.path, 1, 1000, env, existing ? "existing target" : "new target");
      assert_file_is (&tmp, new_text);
      g_assert_nonnull (strstr (log, " empty-path\n"));

      temp_dir_clear (&tmp);
    }
}

static guint
count_lines_starting (const char *text,
                      const char *prefix)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    n += g_str_has_prefix (lines[i], prefix);

  return n;
}

static void
test_temp_name_collision (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 1000);
  g_autoptr(SerioBundle) new = make_bundle (1, 1000);
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);

  g_test_summary ("A temporary name that is taken is skipped for another; when "
                  "every name tried is taken, the save fails with "
                  "G_IO_ERROR_EXISTS naming the target and changes nothing.");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      {
        g_autofree char *log = NULL;
        const char *env[] = { NULL, "SERIO_PRELOAD_COLLISIONS=3",
                              unnamed ? NULL : "SERIO_PRELOAD_NO_TMPFILE=1", NULL };
        TempDir tmp;

        temp_dir_init (&tmp);
        if (skip_mode (&tmp, unnamed))
          {
            temp_dir_clear (&tmp);
            continue;
          }
        if (existing)
          save (old, tmp.file);

        log = run_logged_save (tmp.path, 1, 1000, env, unnamed ? "unnamed temporary file" : "named temporary file");
        assert_file_is (&tmp, new_text);
        /* An unnamed file is linked in at a new target's own name. */
        g_assert_cmpuint (count_lines_starting (log, "collision .serio-save-"), ==,
                          unnamed && !existing ? 0 : 3);

        temp_dir_clear (&tmp);

        /* Every name taken. */
        if (!unnamed || existing)
          check_fault ("SERIO_PRELOAD_COLLISIONS=1000", unnamed, existing, G_IO_ERROR_EXISTS);
      }
}

/* ------------------------------------------------------------------ */
/* Leftovers                                                          */
/* ------------------------------------------------------------------ */

static void
test_kill_leftovers (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, 100);
  g_autoptr(GBytes) old_text = serio_bundle_to_bytes (old, SERIO_SAVE_FLAGS_NONE);

  g_test_summary ("A save killed while it writes (file size limit, SIGXFSZ) leaves "
                  "no temporary file when it writes an unnamed one, and exactly one "
                  "“.serio-save-XXXXXXXX”, as documented, when it cannot.");

  if (!need_preload ())
    return;

  for (int unnamed = 1; unnamed >= 0; unnamed--)
    for (int existing = 0; existing <= 1; existing++)
      {
        const char *argv[] = { self_path, "--save", NULL, "1", "1", NULL };
        const char *env[] = { unnamed ? NULL : "SERIO_PRELOAD_NO_TMPFILE=1", NULL };
        g_autofree char *out = NULL;
        g_autoptr(GDir) dir = NULL;
        const char *name;
        guint n_temp = 0;
        int killed_by, status;
        TempDir tmp;

        temp_dir_init (&tmp);
        if (skip_mode (&tmp, unnamed))
          {
            temp_dir_clear (&tmp);
            continue;
          }
        if (existing)
          save (old, tmp.file);

        argv[2] = tmp.path;
        out = run_child (argv, env, FSIZE_LIMIT, &killed_by, &status);
        g_assert_cmpint (killed_by, ==, SIGXFSZ);

        dir = g_dir_open (tmp.dir, 0, NULL);
        while ((name = g_dir_read_name (dir)) != NULL)
          {
            if (strcmp (name, FILE_NAME) == 0)
              continue;
            g_assert_true (g_str_has_prefix (name, ".serio-save-"));
            g_assert_cmpuint (strlen (name), ==, strlen (".serio-save-") + 8);
            n_temp++;
          }
        g_test_message ("%s temporary file, %s target: %u left after the kill",
                        unnamed ? "unnamed" : "named", existing ? "existing" : "new", n_temp);
        g_assert_cmpuint (n_temp, ==, unnamed ? 0 : 1);

        if (existing)
          {
            g_autoptr(GBytes) contents = read_file (tmp.path);

            g_assert_true (g_bytes_equal (contents, old_text));
          }
        else
          g_assert_false (g_file_test (tmp.path, G_FILE_TEST_EXISTS));

        temp_dir_clear (&tmp);
      }
}

/* ------------------------------------------------------------------ */
/* Asynchronous saves: snapshot and late cancel                       */
/* ------------------------------------------------------------------ */

typedef struct
{
  GMainLoop   *loop;
  SerioBundle *bundle;
  gboolean     saved;
  GError      *error;
} FinishState;

static void
finished_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      data)
{
  FinishState *state = data;

  state->saved = serio_bundle_save_to_file_finish (state->bundle, result, &state->error);
  g_main_loop_quit (state->loop);
}

static void
test_async_snapshot (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (1, scale_down (1));
  g_autoptr(GBytes) expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  FinishState state = { loop, bundle, FALSE, NULL };
  static const double late[] = { 1.0, 2.0, 3.0 };
  TempDir tmp;

  g_test_summary ("save_to_file_async() saves the bundle as it is at the call: an "
                  "array appended at once is not in the file (issue 12).");

  temp_dir_init (&tmp);
  serio_bundle_save_to_file_async (bundle, tmp.file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, finished_cb, &state);
  serio_bundle_append (bundle, "late", late, G_N_ELEMENTS (late));
  g_main_loop_run (loop);

  g_assert_no_error (state.error);
  g_assert_true (state.saved);
  assert_file_is (&tmp, expected);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 4);

  temp_dir_clear (&tmp);
}

static void
test_cancel_after_commit (void)
{
  g_autoptr(SerioBundle) old = make_bundle (0, scale_down (10));
  g_autoptr(SerioBundle) new = make_bundle (1, scale_down (10));
  g_autoptr(GBytes) new_text = serio_bundle_to_bytes (new, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  FinishState state = { loop, new, FALSE, NULL };
  gint64 deadline;
  TempDir tmp;

  g_test_summary ("A cancel that arrives after an asynchronous save has put the new "
                  "file in place does not make save_to_file_finish() fail.");

  temp_dir_init (&tmp);
  save (old, tmp.file);

  serio_bundle_save_to_file_async (new, tmp.file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, cancellable, NULL, NULL, NULL, finished_cb, &state);

  /* The worker thread saves while the main loop does not run: wait for the
   * new file, then cancel before the callback can run. */
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  for (;;)
    {
      g_autoptr(GBytes) contents = read_file (tmp.path);

      if (g_bytes_equal (contents, new_text))
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
  g_cancellable_cancel (cancellable);
  g_main_loop_run (loop);

  g_assert_no_error (state.error);
  g_assert_true (state.saved);
  assert_file_is (&tmp, new_text);

  temp_dir_clear (&tmp);
}

/* ------------------------------------------------------------------ */
/* The serio tool's conversions                                       */
/* ------------------------------------------------------------------ */

static void
write_one_array (const char *path,
                 gsize       n_values)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree double *values = g_new (double, n_values);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  for (gsize i = 0; i < n_values; i++)
    values[i] = i * 0.25;
  serio_bundle_append (bundle, "w", values, n_values);
  save (bundle, file);
}

static int
run_serio (const char * const *args,
           rlim_t              fsize_limit,
           int                *signal_out)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL;
  int status;

  g_ptr_array_add (argv, serio_path);
  for (const char * const *arg = args; *arg != NULL; arg++)
    g_ptr_array_add (argv, (gpointer) *arg);
  g_ptr_array_add (argv, NULL);

  out = run_child ((const char * const *) argv->pdata, NULL, fsize_limit, signal_out, &status);
  return status;
}

static void
test_cli_convert_keeps_mode (void)
{
  g_autofree char *in = NULL;
  g_autofree char *npy = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GFile) out_file = NULL;
  g_autoptr(SerioBundle) loaded = NULL;
  g_autoptr(GError) error = NULL;
  int killed_by;
  TempDir tmp;

  g_test_summary ("serio convert keeps the mode of an output file it replaces, "
                  "to .npy and to .serio (0600 stays 0600, 0640 stays 0640).");

  if (serio_path == NULL)
    {
      g_test_skip ("no serio tool (run with --serio)");
      return;
    }

  temp_dir_init (&tmp);
  in = g_build_filename (tmp.dir, "in.serio", NULL);
  npy = g_build_filename (tmp.dir, "a.npy", NULL);
  out = g_build_filename (tmp.dir, "out.serio", NULL);
  write_one_array (in, 1000);

  g_assert_cmpint (run_serio ((const char *[]) { "convert", in, npy, NULL }, 0, &killed_by), ==, 0);
  g_assert_cmpuint (stat_of (npy).st_mode & 07777, ==, new_file_mode ());
  write_one_array (out, 3);

  /* 0600 as in the issue, and 0640: neither the mode of a new file nor
   * that of a private temporary file. */
  for (guint mode = 0600; mode <= 0640; mode += 040)
    {
      g_assert_no_errno (chmod (npy, mode));
      g_assert_cmpint (run_serio ((const char *[]) { "convert", in, npy, NULL }, 0, &killed_by), ==, 0);
      g_assert_cmpuint (stat_of (npy).st_mode & 07777, ==, mode);

      g_assert_no_errno (chmod (out, mode));
      g_assert_cmpint (run_serio ((const char *[]) { "convert", npy, out, NULL }, 0, &killed_by), ==, 0);
      g_assert_cmpuint (stat_of (out).st_mode & 07777, ==, mode);
    }
  out_file = g_file_new_for_path (out);
  loaded = serio_bundle_new_from_file (out_file, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  {
    gsize n_values;

    serio_bundle_get_values (loaded, 0, &n_values);
    g_assert_cmpuint (n_values, ==, 1000);
  }

  temp_dir_clear (&tmp);
}

static void
test_cli_npy_atomic (void)
{
  g_autofree char *in = NULL;
  g_autofree char *small = NULL;
  g_autofree char *npy = NULL;
  g_autoptr(GBytes) old_npy = NULL;
  int killed_by;
  TempDir tmp;

  g_test_summary ("serio convert to .npy, killed part-way (file size limit), "
                  "leaves no .npy where there was none, and the old one byte for "
                  "byte where there was one.");

  if (serio_path == NULL)
    {
      g_test_skip ("no serio tool (run with --serio)");
      return;
    }

  temp_dir_init (&tmp);
  in = g_build_filename (tmp.dir, "in.serio", NULL);
  small = g_build_filename (tmp.dir, "small.serio", NULL);
  npy = g_build_filename (tmp.dir, "out.npy", NULL);
  write_one_array (in, 100000);
  write_one_array (small, 10);

  run_serio ((const char *[]) { "convert", in, npy, NULL }, FSIZE_LIMIT, &killed_by);
  g_assert_cmpint (killed_by, ==, SIGXFSZ);
  g_assert_false (g_file_test (npy, G_FILE_TEST_EXISTS));

  g_assert_cmpint (run_serio ((const char *[]) { "convert", small, npy, NULL }, 0, &killed_by), ==, 0);
  old_npy = read_file (npy);
  run_serio ((const char *[]) { "convert", in, npy, NULL }, FSIZE_LIMIT, &killed_by);
  g_assert_cmpint (killed_by, ==, SIGXFSZ);
  {
    g_autoptr(GBytes) contents = read_file (npy);

    g_assert_true (g_bytes_equal (contents, old_npy));
  }

  if (tmpfile_supported (tmp.dir))
    {
      g_autofree char *listing = list_dir (tmp.dir);

      g_assert_cmpstr (listing, ==, "in.serio out.npy small.serio");
    }

  temp_dir_clear (&tmp);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 5 && strcmp (argv[1], "--save") == 0)
    return save_once (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc == 5 && strcmp (argv[1], "--save-loop") == 0)
    return save_loop (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc == 7 && strcmp (argv[1], "--save-limited") == 0)
    return save_limited (argv[2], atoi (argv[3]), atoi (argv[4]),
                         g_ascii_strtoull (argv[5], NULL, 10), strcmp (argv[6], "ignore") == 0);

  self_path = g_canonicalize_filename (argv[0], NULL);
  while (argc >= 3 && (strcmp (argv[1], "--preload") == 0 || strcmp (argv[1], "--serio") == 0))
    {
      if (strcmp (argv[1], "--preload") == 0)
        preload_path = argv[2];
      else
        serio_path = argv[2];
      argv[2] = argv[0];
      argv += 2;
      argc -= 2;
    }
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/files/kill/repeated-saves", test_kill);
  g_test_add_func ("/files/no-space/replace", test_no_space_replace);
  g_test_add_func ("/files/no-space/new-path", test_no_space_new);
  g_test_add_func ("/files/cancel/before", test_cancel_before);
  g_test_add_func ("/files/cancel/mid-save", test_cancel_mid_save);
  g_test_add_func ("/files/async/save-then-load", test_async);
  g_test_add_func ("/files/async/errors", test_async_errors);
  g_test_add_func ("/files/errors/read", test_read_errors);
  g_test_add_func ("/files/errors/write", test_write_errors);
  g_test_add_func ("/files/errors/parse", test_parse_errors);
  g_test_add_func ("/files/crash/first-save", test_kill_first_save);
  g_test_add_func ("/files/crash/leftovers", test_kill_leftovers);
  g_test_add_func ("/files/mode/kept", test_mode_kept);
  g_test_add_func ("/files/links/symlink", test_symlink);
  g_test_add_func ("/files/links/hard-link", test_hard_link);
  g_test_add_func ("/files/links/symlink-to-special", test_symlink_to_special);
  g_test_add_func ("/files/xattrs/kept", test_xattrs_kept);
  g_test_add_func ("/files/sync/before-rename", test_sync_before_rename);
  g_test_add_func ("/files/sync/write-behind", test_write_behind);
  g_test_add_func ("/files/faults/fsync", test_fault_fsync);
  g_test_add_func ("/files/cancel/in-fsync", test_cancel_in_fsync);
  g_test_add_func ("/files/faults/write-behind", test_fault_write_behind);
  g_test_add_func ("/files/faults/rename", test_fault_rename);
  g_test_add_func ("/files/faults/link", test_fault_link);
  g_test_add_func ("/files/faults/temp-name-collision", test_temp_name_collision);
  g_test_add_func ("/files/faults/link-without-proc", test_link_without_proc);
  g_test_add_func ("/files/async/snapshot", test_async_snapshot);
  g_test_add_func ("/files/async/cancel-after-commit", test_cancel_after_commit);
  g_test_add_func ("/files/cli/convert-keeps-mode", test_cli_convert_keeps_mode);
  g_test_add_func ("/files/cli/npy-atomic", test_cli_npy_atomic);

  return g_test_run ();
}
