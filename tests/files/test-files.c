/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-files.c: crash-safe saves, cancellation and file errors
 *
 * Copyright 2026 The libserio authors
 *
 * The saves that must be interrupted run in child processes: this program
 * run again with a helper mode as its first argument (see main()), so that
 * a child can be killed at any moment or run out of file size without the
 * test process forking with GLib threads about.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include <serio.h>

#define FILE_NAME "model.serio"
#define N_KILLS 50

/* Allowed file size for the out-of-space saves: more than the old bundle,
 * less than the new one. */
#define FSIZE_LIMIT (64 * 1024)

static char *self_path;

static guint
scale_down (guint factor)
{
  return g_getenv ("SERIO_TEST_SLOW_TOOL") != NULL ? 10 * factor : factor;
}

/* Bundle 0 or 1: two distinct bundles of random bit patterns, a few MB of
 * text each at @scale 1, the same in every process. */
static SerioBundle *
make_bundle (guint which,
             guint scale)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (which == 0 ? 0x5e51 : 0xb0b);
  SerioBundle *bundle = serio_bundle_new ();
  guint n_arrays = which == 0 ? 2 : 3;
  gsize n_values = (which == 0 ? 100000 : 70000) / scale;
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
      if (!serio_bundle_save_to_file (which == 0 ? bundle0 : bundle1, file, NULL, &error))
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

  if (serio_bundle_save_to_file (bundle, file, NULL, &error))
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

static guint
count_temp_files (const char *dir_path)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    n += g_str_has_prefix (name, ".goutputstream-") || g_str_has_prefix (name, ".serio-save-");

  return n;
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

  g_assert_true (serio_bundle_save_to_file (bundle, file, NULL, &error));
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

static void
test_kill (void)
{
  guint scale = scale_down (1);
  g_autoptr(SerioBundle) bundle0 = make_bundle (0, scale);
  g_autoptr(SerioBundle) bundle1 = make_bundle (1, scale);
  g_autoptr(GBytes) text0 = serio_bundle_to_sealed_bytes (bundle0);
  g_autoptr(GBytes) text1 = serio_bundle_to_sealed_bytes (bundle1);
  SerioBundle *bundles[2] = { bundle0, bundle1 };
  GBytes *texts[2] = { text0, text1 };
  g_autofree char *scale_arg = g_strdup_printf ("%u", scale);
  guint current = 0;
  guint old = 0, new = 0, between = 0, before = 0, temp_files;
  gint64 start, save_usec;
  TempDir tmp;

  g_test_summary ("A process killed with SIGKILL at random moments while it saves "
                  "two large bundles in turn leaves the file holding exactly the "
                  "old or the new bundle, every time.");

  temp_dir_init (&tmp);
  save (bundles[0], tmp.file);
  start = g_get_monotonic_time ();
  save (bundles[0], tmp.file);
  save_usec = MAX (g_get_monotonic_time () - start, 1000);

  for (guint attempt = 0; attempt < N_KILLS; attempt++)
    {
      g_autofree char *first_arg = g_strdup_printf ("%u", 1 - current);
      const char *argv[] = { self_path, "--save-loop", tmp.path, first_arg, scale_arg, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocess) process = NULL;
      g_autoptr(GDataInputStream) out = NULL;
      g_autoptr(GBytes) contents = NULL;
      g_autoptr(SerioBundle) loaded = NULL;
      g_autofree char *ready = NULL;
      g_autofree char *last = NULL;
      char *line;
      guint which, saving;

      process = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
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

      loaded = serio_bundle_from_file (tmp.file, NULL, &error);
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
                  "saves, %u before the first; %u temporary files left behind",
                  N_KILLS, g_bytes_get_size (texts[0]), g_bytes_get_size (texts[1]),
                  save_usec / 1000.0, old, new, between, before, temp_files);
  g_assert_cmpuint (old + new, >=, 1);

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
  g_autoptr(GBytes) text = serio_bundle_to_sealed_bytes (bundle);
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
      g_autoptr(SerioBundle) partial = serio_bundle_from_bytes (contents, NULL);

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

  g_assert_false (serio_bundle_save_to_file (new, tmp.file, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  assert_file_is (&tmp, old_text);

  new_path = g_build_filename (tmp.dir, "new.serio", NULL);
  new_file = g_file_new_for_path (new_path);
  g_assert_false (serio_bundle_save_to_file (new, new_file, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  assert_file_is (&tmp, old_text);

  loaded = serio_bundle_from_file (tmp.file, cancellable, &error);
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

/* Cancels as soon as the save's temporary file appears. */
static gpointer
cancel_mid_save (gpointer data)
{
  Canceller *canceller = data;

  while (!g_atomic_int_get (&canceller->save_returned))
    {
      if (count_temp_files (canceller->dir) > 0)
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
  g_autoptr(GBytes) new_text = serio_bundle_to_sealed_bytes (new);
  guint cancelled = 0, completed = 0;
  TempDir tmp;

  g_test_summary ("A save cancelled from another thread while its temporary file "
                  "is being written fails with G_IO_ERROR_CANCELLED and leaves the "
                  "old file byte for byte, and no temporary file.");

  temp_dir_init (&tmp);
  save (old, tmp.file);
  old_text = read_file (tmp.path);

  for (guint attempt = 0; attempt < 5; attempt++)
    {
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(GError) error = NULL;
      Canceller canceller = { tmp.dir, cancellable, 0, FALSE };
      GThread *thread = g_thread_new ("canceller", cancel_mid_save, &canceller);
      gboolean saved = serio_bundle_save_to_file (new, tmp.file, cancellable, &error);

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

  state->loaded = serio_bundle_from_file_finish (result, &state->error);
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

  serio_bundle_from_file_async (state->file, G_PRIORITY_DEFAULT, NULL, loaded_cb, state);
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

  serio_bundle_save_to_file_async (bundle, tmp.file, G_PRIORITY_DEFAULT, NULL, saved_cb, &state);
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
  serio_bundle_from_file_async (missing, G_PRIORITY_DEFAULT, NULL, loaded_cb, &state);
  g_main_loop_run (loop);
  g_assert_null (state.loaded);
  g_assert_error (state.error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&state.error);

  g_cancellable_cancel (cancellable);
  state.file = tmp.file;
  serio_bundle_save_to_file_async (new, tmp.file, G_PRIORITY_DEFAULT, cancellable, saved_cb, &state);
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

  bundle = serio_bundle_from_file (missing, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_null (bundle);
  g_clear_error (&error);

  bundle = serio_bundle_from_file (dir, NULL, &error);
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
  TempDir tmp;

  g_test_summary ("Saving over a directory or into a missing directory fails "
                  "with a G_IO_ERROR and changes nothing.");

  temp_dir_init (&tmp);
  subdir = g_file_new_build_filename (tmp.dir, "subdir", NULL);
  g_assert_true (g_file_make_directory (subdir, NULL, NULL));

  g_assert_false (serio_bundle_save_to_file (bundle, subdir, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_clear_error (&error);
  g_assert_true (g_file_query_file_type (subdir, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY);

  in_missing_dir = g_file_resolve_relative_path (subdir, "missing/model.serio");
  g_assert_false (serio_bundle_save_to_file (bundle, in_missing_dir, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);

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

      bundle = serio_bundle_from_file (tmp.file, NULL, &error);
      g_assert_error (error, SERIO_ERROR, files[i].code);
      g_assert_null (bundle);

      serio_bundle_from_file_async (tmp.file, G_PRIORITY_DEFAULT, NULL, loaded_cb, &state);
      g_main_loop_run (loop);
      g_assert_error (state.error, SERIO_ERROR, files[i].code);
      g_assert_null (state.loaded);
      g_clear_error (&state.error);
    }

  temp_dir_clear (&tmp);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 5 && strcmp (argv[1], "--save-loop") == 0)
    return save_loop (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc == 7 && strcmp (argv[1], "--save-limited") == 0)
    return save_limited (argv[2], atoi (argv[3]), atoi (argv[4]),
                         g_ascii_strtoull (argv[5], NULL, 10), strcmp (argv[6], "ignore") == 0);

  self_path = g_canonicalize_filename (argv[0], NULL);
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

  return g_test_run ();
}
