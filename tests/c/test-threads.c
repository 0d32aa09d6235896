/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-threads.c: concurrent readers of one bundle
 *
 * Copyright 2026 The libserio authors
 *
 * The class documentation promises that reading a bundle from several
 * threads at once is safe. Every thread here compares what it reads with
 * what one thread read alone; a mismatch is counted, not asserted, so that
 * the main thread reports it.
 */

#include <locale.h>
#include <string.h>

#include <serio.h>

#include "test-utils.h"

#define N_THREADS 4

/* The threads wait here until all of them exist, then start together. */
typedef struct
{
  GMutex mutex;
  GCond  cond;
  guint  waiting;
} StartLine;

static void
start_line_wait (StartLine *start)
{
  g_mutex_lock (&start->mutex);
  start->waiting++;
  if (start->waiting == N_THREADS)
    g_cond_broadcast (&start->cond);
  while (start->waiting < N_THREADS)
    g_cond_wait (&start->cond, &start->mutex);
  g_mutex_unlock (&start->mutex);
}

/* ------------------------------------------------------------------ */
/* First use from several threads                                     */
/* ------------------------------------------------------------------ */

static const char first_good[] = "v1|w|2|1p-1,nan\n";
static const char first_bad[] = "v1|w|2|1p-1,1p0\n";

typedef struct
{
  StartLine *start;
  char      *text;
  char      *message;
  int        code;
} FirstUse;

static gpointer
first_use_thread (gpointer data)
{
  FirstUse *use = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) good = NULL;
  g_autoptr(SerioBundle) bad = NULL;

  start_line_wait (use->start);

  bad = serio_bundle_new_from_string (first_bad, &error);
  use->code = error != NULL ? error->code : -1;
  use->message = error != NULL ? g_strdup (error->message) : NULL;

  good = serio_bundle_new_from_string (first_good, NULL);
  use->text = good != NULL ? serio_bundle_to_string (good, SERIO_SAVE_FLAGS_PLAIN) : NULL;

  return NULL;
}

static void
test_first_use (void)
{
  StartLine start = { 0 };
  FirstUse uses[N_THREADS];
  GThread *threads[N_THREADS];
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bad = NULL;

  g_test_summary ("The library's first calls (type registration, message "
                  "catalogue binding) made from several threads at once "
                  "give what one thread gets alone.");

  g_mutex_init (&start.mutex);
  g_cond_init (&start.cond);

  for (guint i = 0; i < N_THREADS; i++)
    {
      uses[i] = (FirstUse) { &start, NULL, NULL, -1 };
      threads[i] = g_thread_new ("first-use", first_use_thread, &uses[i]);
    }
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);

  bad = serio_bundle_new_from_string (first_bad, &error);
  g_assert_null (bad);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);

  for (guint i = 0; i < N_THREADS; i++)
    {
      g_assert_cmpint (uses[i].code, ==, error->code);
      g_assert_cmpstr (uses[i].message, ==, error->message);
      g_assert_cmpstr (uses[i].text, ==, first_good);
      g_free (uses[i].message);
      g_free (uses[i].text);
    }

  g_mutex_clear (&start.mutex);
  g_cond_clear (&start.cond);
}

/* ------------------------------------------------------------------ */
/* Readers of one shared bundle                                       */
/* ------------------------------------------------------------------ */

typedef struct
{
  SerioBundle  *bundle;       /* shared by every thread */
  const char   *text;         /* what one thread read alone */
  GBytes       *bytes;
  GPtrArray    *values;       /* of GBytes, one per array */
  GArray       *lookups;      /* of guint: where each array's name is found */
  guint32       checksum;
  guint         iterations;
  StartLine     start;
} Shared;

typedef struct
{
  Shared *shared;
  guint   mismatches;
  guint   checks;
} Reader;

static void
expect (Reader   *reader,
        gboolean  ok)
{
  reader->checks++;
  if (!ok)
    reader->mismatches++;
}

static gpointer
reader_thread (gpointer data)
{
  Reader *reader = data;
  Shared *shared = reader->shared;
  SerioBundle *bundle = shared->bundle;
  g_autoptr(SerioBundle) own = serio_bundle_new_from_string (shared->text, NULL);

  start_line_wait (&shared->start);

  for (guint k = 0; k < shared->iterations; k++)
    {
      g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
      g_autoptr(GBytes) bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
      g_autoptr(SerioBundle) parsed = serio_bundle_new_from_string (text, NULL);

      expect (reader, strcmp (text, shared->text) == 0);
      expect (reader, g_bytes_equal (bytes, shared->bytes));
      expect (reader, serio_compute_checksum (text) == shared->checksum);
      expect (reader, serio_bundle_equal (bundle, own));
      expect (reader, serio_bundle_equal (own, bundle));
      expect (reader, parsed != NULL && serio_bundle_equal (parsed, bundle));
      expect (reader, serio_bundle_get_n_arrays (bundle) == shared->values->len);

      for (guint i = 0; i < shared->values->len; i++)
        {
          GBytes *expected = g_ptr_array_index (shared->values, i);
          g_autoptr(GBytes) got = serio_bundle_get_bytes (bundle, i);
          const char *name = serio_bundle_get_name (bundle, i);
          gsize n_values;
          const double *values = serio_bundle_get_values (bundle, i, &n_values);
          guint index = G_MAXUINT;

          expect (reader, g_bytes_equal (got, expected));
          expect (reader, n_values * sizeof (double) == g_bytes_get_size (expected) &&
                          (n_values == 0 ||
                           memcmp (values, g_bytes_get_data (expected, NULL),
                                   g_bytes_get_size (expected)) == 0));
          expect (reader, serio_bundle_lookup (bundle, name, &index) &&
                          index == g_array_index (shared->lookups, guint, i));
        }
    }

  return NULL;
}

static void
test_shared_readers (void)
{
  static const char *names[] = { "dense.w", "dense.b", "größe", "", "名前", "w", "w", "last" };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *text = NULL;
  Shared shared = { 0 };
  Reader readers[N_THREADS];
  GThread *threads[N_THREADS];
  guint checks = 0;

  g_test_summary ("Several threads serialise, parse, compare and read the "
                  "arrays of one shared bundle at once; every result equals "
                  "the single-threaded one.");

  for (guint a = 0; a < G_N_ELEMENTS (names); a++)
    {
      gsize n_values = a == 3 ? 0 : 4000 + 1000 * a;
      g_autofree double *values = g_new (double, MAX (n_values, 1));

      for (gsize i = 0; i < n_values; i++)
        values[i] = test_double_of (test_rand_interesting ());
      serio_bundle_append (bundle, names[a], values, n_values);
    }

  /* What one thread reads alone. */
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  shared.bundle = bundle;
  shared.text = text;
  shared.bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  shared.checksum = serio_compute_checksum (text);
  shared.values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  shared.lookups = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);

      guint index = G_MAXUINT;

      g_ptr_array_add (shared.values, g_bytes_new (values, n_values * sizeof (double)));
      g_assert_true (serio_bundle_lookup (bundle, serio_bundle_get_name (bundle, i), &index));
      g_array_append_val (shared.lookups, index);
    }
  shared.iterations = test_iterations (25);
  g_mutex_init (&shared.start.mutex);
  g_cond_init (&shared.start.cond);

  for (guint t = 0; t < N_THREADS; t++)
    {
      readers[t] = (Reader) { &shared, 0, 0 };
      threads[t] = g_thread_new ("reader", reader_thread, &readers[t]);
    }
  for (guint t = 0; t < N_THREADS; t++)
    {
      g_thread_join (threads[t]);
      g_assert_cmpuint (readers[t].mismatches, ==, 0);
      g_assert_cmpuint (readers[t].checks, >, 0);
      checks += readers[t].checks;
    }

  g_test_message ("%u threads, %u iterations each, %u comparisons",
                  N_THREADS, shared.iterations, checks);

  g_bytes_unref (shared.bytes);
  g_ptr_array_unref (shared.values);
  g_array_unref (shared.lookups);
  g_mutex_clear (&shared.start.mutex);
  g_cond_clear (&shared.start.cond);
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);

  /* first: it needs a process in which the library has not run yet */
  g_test_add_func ("/threads/first-use", test_first_use);
  g_test_add_func ("/threads/shared-readers", test_shared_readers);

  return g_test_run ();
}
