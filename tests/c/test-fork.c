/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-fork.c: libserio's worker threads after fork()
 *
 * Copyright 2026 The libserio authors
 *
 * A child of fork() has only the thread that forked. Whatever parallel
 * work the parent did, and whatever its other threads are doing at the
 * moment of the fork, the child's parallel calls must run (and give the
 * same bits). Each child here does parallel work and exits 0 when every
 * result is right, or with the number of the check that failed; the
 * parent waits for it with a deadline and kills it if it hangs, which is
 * what a child did while libserio's threads came from GLib's shared
 * thread pool (counted in the child, but not there).
 */

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <serio.h>

#include "test-utils.h"

#ifdef HAVE_VALGRIND_H
# include <valgrind/valgrind.h>
#endif

/* Enough values for every parallel path: formatting (2 blocks of 64 Ki
 * values in a bundle, 2 of 16 Ki in a writer) and parsing (512 KiB of a
 * field from memory, 128 KiB in a reader). */
#define N_VALUES 300000

/* How long a child may take (it takes well under a second). */
#define CHILD_DEADLINE_S 60

static double *
make_values (guint seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  double *values = g_new (double, N_VALUES);

  for (gsize i = 0; i < N_VALUES; i++)
    values[i] = ldexp (g_rand_double_range (rand, -1.0, 1.0), g_rand_int_range (rand, -300, 300));

  return values;
}

static SerioBundle *
make_bundle (guint seed)
{
  SerioBundle *bundle = serio_bundle_new ();
  g_autofree double *values = make_values (seed);

  serio_bundle_append (bundle, "a", values, N_VALUES);
  serio_bundle_append (bundle, "b", values, N_VALUES / 2);
  return bundle;
}

static gboolean
same_bundles (SerioBundle *a,
              SerioBundle *b)
{
  g_autoptr(GBytes) text_a = serio_bundle_to_bytes (a, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GBytes) text_b = serio_bundle_to_bytes (b, SERIO_SAVE_FLAGS_PLAIN);

  if (serio_bundle_get_n_arrays (a) != serio_bundle_get_n_arrays (b))
    return FALSE;
  for (guint i = 0; i < serio_bundle_get_n_arrays (a); i++)
    {
      gsize n_a, n_b;
      const double *va = serio_bundle_get_values (a, i, &n_a);
      const double *vb = serio_bundle_get_values (b, i, &n_b);

      if (n_a != n_b || memcmp (va, vb, n_a * sizeof (double)) != 0)
        return FALSE;
    }
  return g_bytes_equal (text_a, text_b);
}

/* ------------------------------------------------------------------ */
/* Forking with a deadline                                            */
/* ------------------------------------------------------------------ */

typedef int (*ChildFunc) (gpointer data);

/* Runs @func in a child of fork() and asserts that it exits 0 within
 * CHILD_DEADLINE_S seconds; a child that hangs is killed and fails the
 * test. */
static void
assert_child_succeeds (ChildFunc func,
                       gpointer  data)
{
  gint64 deadline = g_get_monotonic_time () + CHILD_DEADLINE_S * G_USEC_PER_SEC;
  int status = 0;
  pid_t pid, done;

  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      /* A second bound, should the parent die first. */
      alarm (2 * CHILD_DEADLINE_S);
      _exit (func (data));
    }

  while ((done = waitpid (pid, &status, WNOHANG)) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  if (done == 0)
    {
      kill (pid, SIGKILL);
      waitpid (pid, &status, 0);
      g_test_fail_printf ("the child hung in a parallel call: killed after %d s", CHILD_DEADLINE_S);
      return;
    }
  g_assert_cmpint (done, ==, pid);
  if (WIFSIGNALED (status))
    g_test_fail_printf ("the child was killed by signal %d", WTERMSIG (status));
  else if (WEXITSTATUS (status) != 0)
    g_test_fail_printf ("the child's check %d failed", WEXITSTATUS (status));
}

/* ------------------------------------------------------------------ */
/* What a child does                                                  */
/* ------------------------------------------------------------------ */

/* Parallel to_bytes and from_bytes, and a save and a load, of a new
 * bundle; returns 0 or the number of the failed check. */
static int
child_save_and_load (gpointer data)
{
  const char *dir = data;
  g_autoptr(SerioBundle) bundle = make_bundle (7);
  g_autoptr(GBytes) text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(SerioBundle) parsed = serio_bundle_new_from_bytes (text, NULL);
  g_autofree char *path = g_build_filename (dir, "child.serio", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) loaded = NULL;

  if (parsed == NULL || !same_bundles (parsed, bundle))
    return 1;
  if (!serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, NULL))
    return 2;
  loaded = serio_bundle_new_from_file (file, NULL, NULL, NULL, NULL);
  if (loaded == NULL || !same_bundles (loaded, bundle))
    return 3;
  g_unlink (path);

  return 0;
}

/* The asynchronous calls, from a main loop: a save, then a load of what
 * it wrote, and a write to a stream and a load from it. */
typedef struct
{
  GMainLoop   *loop;
  SerioBundle *loaded;
  gboolean     saved;
  guint        pending;
} AsyncChild;

static void
child_saved_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      data)
{
  AsyncChild *child = data;

  child->saved = serio_bundle_save_to_file_finish (SERIO_BUNDLE (source), result, NULL);
  g_main_loop_quit (child->loop);
}

static void
child_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  AsyncChild *child = data;

  child->loaded = serio_bundle_new_from_file_finish (result, NULL);
  g_main_loop_quit (child->loop);
}

static void
child_written_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      data)
{
  AsyncChild *child = data;

  child->saved = serio_bundle_write_to_stream_finish (SERIO_BUNDLE (source), result, NULL);
  g_main_loop_quit (child->loop);
}

static void
child_read_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  AsyncChild *child = data;

  child->loaded = serio_bundle_new_from_stream_finish (result, NULL);
  g_main_loop_quit (child->loop);
}

/* Runs the asynchronous calls once; returns 0 or the number of the check
 * that failed (a call that never completes hangs, which the parent's
 * deadline catches). */
static int
save_and_load_async (const char *dir,
                     int         first_check)
{
  g_autoptr(SerioBundle) bundle = make_bundle (11);
  g_autofree char *path = g_build_filename (dir, "async.serio", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GInputStream) in = NULL;
  AsyncChild child = { loop, NULL, FALSE, 0 };

  serio_bundle_save_to_file_async (bundle, file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL,
                                   NULL, NULL, NULL, child_saved_cb, &child);
  g_main_loop_run (loop);
  if (!child.saved)
    return first_check;

  serio_bundle_new_from_file_async (file, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL,
                                    child_loaded_cb, &child);
  g_main_loop_run (loop);
  if (child.loaded == NULL || !same_bundles (child.loaded, bundle))
    return first_check + 1;
  g_clear_object (&child.loaded);
  g_unlink (path);

  child.saved = FALSE;
  serio_bundle_write_to_stream_async (bundle, out, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL,
                                      child_written_cb, &child);
  g_main_loop_run (loop);
  if (!child.saved || !g_output_stream_close (out, NULL, NULL))
    return first_check + 2;
  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
  in = g_memory_input_stream_new_from_bytes (written);
  serio_bundle_new_from_stream_async (in, G_PRIORITY_DEFAULT, NULL, child_read_cb, &child);
  g_main_loop_run (loop);
  if (child.loaded == NULL || !same_bundles (child.loaded, bundle))
    return first_check + 3;
  g_clear_object (&child.loaded);

  return 0;
}

static int
child_async (gpointer data)
{
  return save_and_load_async (data, 10);
}

static char *
make_dir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("serio-fork-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

/* ------------------------------------------------------------------ */
/* After parallel work in the parent                                  */
/* ------------------------------------------------------------------ */

static void
test_after_bundle (void)
{
  g_autoptr(SerioBundle) bundle = make_bundle (1);
  g_autoptr(GBytes) text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(SerioBundle) parsed = serio_bundle_new_from_bytes (text, NULL);
  g_autofree char *dir = make_dir ();

  g_test_summary ("After parallel to_bytes and from_bytes in the parent, a forked "
                  "child's parallel to_bytes, from_bytes, save and load finish "
                  "and give the same bits.");

  g_assert_nonnull (parsed);
  g_assert_true (same_bundles (parsed, bundle));
  if (g_get_num_processors () < 2)
    g_test_message ("one processor: the bundle's calls are not parallel here");

  assert_child_succeeds (child_save_and_load, dir);
  /* And again: the parent's threads still work after the fork. */
  {
    g_autoptr(GBytes) again = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);

    g_assert_true (g_bytes_equal (again, text));
  }
  assert_child_succeeds (child_save_and_load, dir);

  g_assert_no_errno (g_rmdir (dir));
}

/* A writer and a reader that the parent used with threads, carried on
 * with in the child. */
typedef struct
{
  SerioWriter          *writer;
  GMemoryOutputStream  *written;
  SerioReader          *reader;
  const double         *values;
  GBytes               *expected;   /* the whole text the writer must give */
  const char           *dir;
} Streams;

static int
child_streams (gpointer data)
{
  Streams *s = data;
  g_autofree double *rest = g_new (double, N_VALUES);
  g_autoptr(GBytes) text = NULL;
  gsize n_read = 0;
  int status;

  /* The writer's second array, with threads, then the whole text. */
  if (!serio_writer_write_array (s->writer, "second", s->values, N_VALUES, NULL, NULL) ||
      !serio_writer_end (s->writer, NULL, NULL))
    return 10;
  text = g_bytes_new (g_memory_output_stream_get_data (s->written),
                      g_memory_output_stream_get_data_size (s->written));
  if (!g_bytes_equal (text, s->expected))
    return 11;

  /* The rest of the reader's array, with threads. */
  if (!serio_reader_read_values (s->reader, rest, N_VALUES, &n_read, NULL, NULL) ||
      n_read != N_VALUES / 2 ||
      memcmp (rest, s->values + N_VALUES / 2, n_read * sizeof (double)) != 0)
    return 12;

  /* A writer and a reader of the child's own, to and from a file. */
  {
    g_autofree char *path = g_build_filename (s->dir, "streams.serio", NULL);
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autoptr(SerioWriter) writer = serio_writer_new_for_file (file, SERIO_SAVE_FLAGS_NONE, NULL, NULL);
    g_autoptr(GFileInputStream) in = NULL;
    g_autoptr(SerioReader) reader = NULL;

    if (writer == NULL)
      return 13;
    serio_writer_set_threads (writer, 4);
    if (!serio_writer_write_array (writer, "w", s->values, N_VALUES, NULL, NULL) ||
        !serio_writer_close (writer, NULL, NULL))
      return 14;
    in = g_file_read (file, NULL, NULL);
    if (in == NULL)
      return 15;
    reader = serio_reader_new (G_INPUT_STREAM (in));
    serio_reader_set_threads (reader, 4);
    if (!serio_reader_next (reader, NULL, NULL) ||
        !serio_reader_read_values (reader, rest, N_VALUES, &n_read, NULL, NULL) ||
        n_read != N_VALUES || memcmp (rest, s->values, N_VALUES * sizeof (double)) != 0)
      return 16;
    g_unlink (path);
  }

  status = child_save_and_load ((gpointer) s->dir);
  return status;
}

static void
test_streams (void)
{
  g_autofree double *values = make_values (2);
  g_autofree double *first = g_new (double, N_VALUES / 2);
  g_autoptr(SerioBundle) both = serio_bundle_new ();
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GBytes) reader_text = NULL;
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GInputStream) in = NULL;
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = make_dir ();
  Streams streams;
  gsize n_read = 0;

  g_test_summary ("A writer and a reader that ran threads in the parent go on in "
                  "a forked child: the writer's next array and the reader's rest "
                  "are parallel there, finish and give the same bits, as do a new "
                  "writer to a file and a new reader of it.");

  serio_bundle_append (both, "first", values, N_VALUES);
  serio_bundle_append (both, "second", values, N_VALUES);
  expected = serio_bundle_to_bytes (both, SERIO_SAVE_FLAGS_NONE);

  serio_writer_set_threads (writer, 4);
  g_assert_true (serio_writer_write_array (writer, "first", values, N_VALUES, NULL, &error));
  g_assert_no_error (error);

  {
    g_autoptr(SerioBundle) one = serio_bundle_new ();

    serio_bundle_append (one, "w", values, N_VALUES);
    reader_text = serio_bundle_to_bytes (one, SERIO_SAVE_FLAGS_PLAIN);
  }
  in = g_memory_input_stream_new_from_bytes (reader_text);
  reader = serio_reader_new (in);
  serio_reader_set_threads (reader, 4);
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_reader_read_values (reader, first, N_VALUES / 2, &n_read, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_read, ==, N_VALUES / 2);
  g_assert_cmpmem (first, n_read * sizeof (double), values, n_read * sizeof (double));

  streams = (Streams) { writer, G_MEMORY_OUTPUT_STREAM (out), reader, values, expected, dir };
  assert_child_succeeds (child_streams, &streams);

  /* The parent's copies go on as if nothing happened. */
  g_assert_true (serio_writer_write_array (writer, "second", values, N_VALUES, NULL, &error));
  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_no_error (error);
  {
    GMemoryOutputStream *memory = G_MEMORY_OUTPUT_STREAM (out);
    g_autoptr(GBytes) text = g_bytes_new (g_memory_output_stream_get_data (memory),
                                          g_memory_output_stream_get_data_size (memory));

    g_assert_true (g_bytes_equal (text, expected));
  }

  g_assert_no_errno (g_rmdir (dir));
}

/* ------------------------------------------------------------------ */
/* While another thread's parallel calls run                          */
/* ------------------------------------------------------------------ */

/* An input stream without end: one record whose declared count no
 * thread reaches, its values the @pattern's tokens over and over. A
 * reader of it parses in parallel for as long as it is read, with no
 * object made or freed between calls. */
#define TEST_TYPE_ENDLESS_STREAM (test_endless_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestEndlessStream, test_endless_stream, TEST, ENDLESS_STREAM, GInputStream)

struct _TestEndlessStream
{
  GInputStream parent_instance;
  char        *text;     /* the header, then the tokens of one period */
  gsize        len;
  gsize        period;   /* where the period starts in @text */
  gsize        pos;
};

G_DEFINE_FINAL_TYPE (TestEndlessStream, test_endless_stream, G_TYPE_INPUT_STREAM)

static gssize
test_endless_stream_read (GInputStream  *stream,
                          void          *buffer,
                          gsize          count,
                          GCancellable  *cancellable,
                          GError       **error)
{
  TestEndlessStream *self = TEST_ENDLESS_STREAM (stream);
  gsize n = MIN (count, self->len - self->pos);

  memcpy (buffer, self->text + self->pos, n);
  self->pos += n;
  if (self->pos == self->len)
    self->pos = self->period;

  return n;
}

static void
test_endless_stream_finalize (GObject *object)
{
  g_free (TEST_ENDLESS_STREAM (object)->text);

  G_OBJECT_CLASS (test_endless_stream_parent_class)->finalize (object);
}

static void
test_endless_stream_class_init (TestEndlessStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_endless_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = test_endless_stream_read;
}

static void
test_endless_stream_init (TestEndlessStream *self)
{
}

/* A stream of one endless array "w" whose values repeat @pattern. */
static GInputStream *
endless_stream_new (const double *pattern,
                    gsize         n_pattern)
{
  TestEndlessStream *self = g_object_new (TEST_TYPE_ENDLESS_STREAM, NULL);
  g_autoptr(SerioBundle) one = serio_bundle_new ();
  g_autoptr(GBytes) record = NULL;
  GString *text = g_string_new ("v1|w|1000000000000000|");
  const char *tokens;
  gsize len;

  serio_bundle_append (one, "p", pattern, n_pattern);
  record = serio_bundle_to_bytes (one, SERIO_SAVE_FLAGS_PLAIN);
  tokens = g_bytes_get_data (record, &len);
  /* "v1|p|<n>|" before the tokens, "\n" after them */
  tokens = strchr (strchr (tokens + 3, '|') + 1, '|') + 1;
  len -= tokens - (const char *) g_bytes_get_data (record, NULL);
  self->period = text->len;
  g_string_append_len (text, tokens, len - 1);
  g_string_append_c (text, ',');
  self->len = text->len;
  self->text = g_string_free (text, FALSE);

  return G_INPUT_STREAM (self);
}

typedef struct
{
  const double *pattern;
  gsize         n_pattern;
  gint          started;    /* atomic */
  gint          stop;       /* atomic */
  gint          rounds;     /* atomic */
  gint          failures;   /* atomic */
} Busy;

#define BUSY_PATTERN 8192
#define BUSY_READ (4 * BUSY_PATTERN + 1)

/* Reads the endless array in parallel until told to stop, checking the
 * bits of every value: the whole time between its first call and the
 * last is spent in the reader's parallel parse and the stream's reads. */
static gpointer
busy_thread (gpointer data)
{
  Busy *busy = data;
  g_autofree double *values = g_new (double, BUSY_READ);
  g_autoptr(GInputStream) in = endless_stream_new (busy->pattern, busy->n_pattern);
  g_autoptr(SerioReader) reader = serio_reader_new (in);
  guint64 offset = 0;

  serio_reader_set_threads (reader, 4);
  if (!serio_reader_next (reader, NULL, NULL))
    g_atomic_int_inc (&busy->failures);
  g_atomic_int_set (&busy->started, 1);
  while (!g_atomic_int_get (&busy->stop) && g_atomic_int_get (&busy->failures) == 0)
    {
      gsize n_read = 0;

      if (!serio_reader_read_values (reader, values, BUSY_READ, &n_read, NULL, NULL) ||
          n_read != BUSY_READ)
        g_atomic_int_inc (&busy->failures);
      for (gsize i = 0; i < n_read; i++)
        {
          if (memcmp (&values[i], &busy->pattern[(offset + i) % busy->n_pattern], sizeof (double)) != 0)
            {
              g_atomic_int_inc (&busy->failures);
              break;
            }
        }
      offset += n_read;
      g_atomic_int_inc (&busy->rounds);
    }

  return NULL;
}

static void
test_busy (void)
{
  g_autofree double *pattern = make_values (3);
  g_autofree char *dir = make_dir ();
  Busy busy = { pattern, BUSY_PATTERN, 0, 0, 0, 0 };
  GThread *thread;

  g_test_summary ("A fork while another thread is in the middle of parallel "
                  "parses: the child's own parallel calls finish and give the "
                  "same bits.");
#ifdef HAVE_VALGRIND_H
  /* The child has a copy of the other thread's reader and stream, which
   * no thread of the child holds: memcheck counts them as lost in the
   * child, though nothing of libserio leaked. */
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("under valgrind, the other thread's objects count as lost in the child");
      return;
    }
#endif

  /* The other thread makes its stream and reader before the first fork
   * and no object afterwards: GObject's own locks (the notify lock that
   * every g_object_new() with properties and every last unref takes) are
   * not fork-safe, and a fork while a thread holds one leaves the child
   * without it, whatever library the objects are from. What this test
   * holds libserio to is its own state: a fork in the middle of the other
   * thread's parallel calls. */
  thread = g_thread_new ("busy", busy_thread, &busy);
  while (!g_atomic_int_get (&busy.started))
    g_usleep (1000);
  for (guint i = 0; i < 10; i++)
    {
      gint rounds = g_atomic_int_get (&busy.rounds);

      /* Fork at various moments of the other thread's calls. */
      g_usleep (g_test_rand_int_range (0, 20000));
      assert_child_succeeds (child_save_and_load, dir);
      while (g_atomic_int_get (&busy.rounds) == rounds && g_atomic_int_get (&busy.failures) == 0)
        g_usleep (1000);
    }
  g_atomic_int_set (&busy.stop, 1);
  g_thread_join (thread);
  g_assert_cmpint (busy.failures, ==, 0);
  g_assert_cmpint (busy.rounds, >=, 10);

  g_assert_no_errno (g_rmdir (dir));
}

static void
test_async (void)
{
  g_autofree char *dir = make_dir ();

  g_test_summary ("The bundle's asynchronous loads and saves complete in a child "
                  "forked after the parent used them: they run on libserio's own "
                  "threads. On GLib's shared GTask pool, whose threads the parent's "
                  "calls had started, the child's calls never completed.");

  /* The parent's own asynchronous calls first, as a program does before
   * it forks workers. */
  g_assert_cmpint (save_and_load_async (dir, 1), ==, 0);
  assert_child_succeeds (child_async, dir);
  /* and the parent's calls still work afterwards */
  g_assert_cmpint (save_and_load_async (dir, 1), ==, 0);

  g_assert_no_errno (g_rmdir (dir));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/fork/after-bundle", test_after_bundle);
  g_test_add_func ("/fork/streams", test_streams);
  g_test_add_func ("/fork/busy-thread", test_busy);
  g_test_add_func ("/fork/async", test_async);

  return g_test_run ();
}
