/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-held-workers.c: a parallel parse returns only once its workers are
 * done (issue 20, item 13)
 *
 * Copyright 2026 The libserio authors
 *
 * A reader on 2 threads reads a long record in pieces, so that many
 * parses stop at the values wanted while the pool's thread works a window
 * beyond them. This program defines g_mutex_unlock(), which takes the
 * place of GLib's for the library's calls: when the library's worker
 * thread lets go of the lock to work an item, it sleeps first, so that
 * its item outlasts the caller's. A parse that returned before its
 * workers are done would leave that thread writing into the slots and
 * windows of the next parse, and the next read's values (or the reader)
 * would go wrong. No source of the library is changed for this.
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <string.h>

#include <gio/gio.h>
#include <serio.h>

#include "test-utils.h"

#define N_VALUES  300000

/* Sleeps of the worker, one round each: the shorter ones end while the
 * next parse is under way, the longer ones outlast several. */
static const gint delays_us[] = { 50, 100, 150, 200, 300, 500, 1000, 3000 };

static GThread *main_thread;
static gconstpointer library_base;
static gint armed;
static gint n_delays;
static gint delay_us;

/* Where the object that holds @address is loaded. */
static gconstpointer
object_base (gconstpointer address)
{
  Dl_info info;

  if (dladdr (address, &info) == 0)
    return NULL;

  return info.dli_fbase;
}

/* GLib's, for every caller; a thread of the library's workers that lets
 * go of a lock (to work an item) sleeps first while the test is armed. */
void
g_mutex_unlock (GMutex *mutex)
{
  static gpointer real;
  gpointer unlock = g_atomic_pointer_get (&real);
  gconstpointer caller = __builtin_return_address (0);

  if (unlock == NULL)
    {
      unlock = dlsym (RTLD_NEXT, "g_mutex_unlock");
      g_assert (unlock != NULL);
      g_atomic_pointer_set (&real, unlock);
    }
  ((void (*) (GMutex *)) unlock) (mutex);

  if (g_atomic_int_get (&armed) && g_thread_self () != main_thread &&
      library_base != NULL && object_base (caller) == library_base)
    {
      g_atomic_int_inc (&n_delays);
      g_usleep ((gulong) g_atomic_int_get (&delay_us));
    }
}

/* A record "w" of small integers of both signs, up to 6 bytes a token, so
 * that a piece's span of 24 bytes a value wanted reaches windows well
 * beyond the values. */
static GBytes *
small_integers_text (guint64 *bits,
                     gsize    n)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();

  for (gsize i = 0; i < n; i++)
    bits[i] = test_bits_of ((double) g_test_rand_int_range (-99999, 100000));
  serio_bundle_append (bundle, "w", (const double *) bits, n);

  return serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
}

static void
test_workers_done (void)
{
  g_autofree guint64 *bits = g_new (guint64, N_VALUES);
  g_autoptr(GBytes) text = small_integers_text (bits, N_VALUES);
  g_autofree double *values = g_new (double, N_VALUES);

  g_test_summary ("A reader's parallel parse returns only once its worker threads are done: "
                  "with a worker slowed whenever it works an item, every piece read next is "
                  "right, bit for bit.");

  main_thread = g_thread_self ();
  library_base = object_base ((gconstpointer) serio_reader_new);
  g_assert_nonnull (library_base);
  g_assert_true (library_base != object_base ((gconstpointer) test_workers_done));
  g_unsetenv ("SERIO_THREADS");

  /* one round under a slow tool, which runs one thread at a time */
  for (guint round = 0; round < test_iterations (G_N_ELEMENTS (delays_us)); round++)
    {
      g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (text);
      g_autoptr(SerioReader) reader = serio_reader_new (in);
      g_autoptr(GError) error = NULL;
      gsize got = 0;

      serio_reader_set_threads (reader, 2);
      g_assert_true (serio_reader_next (reader, NULL, &error));
      g_assert_no_error (error);

      memset (values, 0, N_VALUES * sizeof (double));
      g_atomic_int_set (&delay_us, delays_us[round]);
      g_atomic_int_set (&armed, TRUE);
      while (got < N_VALUES)
        {
          gsize want = (gsize) g_test_rand_int_range (8192, 40000);
          gsize n_read;

          want = MIN (want, N_VALUES - got);

          g_assert_true (serio_reader_read_values (reader, values + got, want, &n_read, NULL, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (n_read, ==, want);
          test_assert_same_bits (values + got, bits + got, n_read);
          got += n_read;
        }
      g_atomic_int_set (&armed, FALSE);

      test_assert_same_bits (values, bits, N_VALUES);
      g_assert_false (serio_reader_next (reader, NULL, &error));
      g_assert_no_error (error);
    }

  /* the premise: the worker thread was slowed, so it ran */
  g_test_message ("%d items delayed", g_atomic_int_get (&n_delays));
  g_assert_cmpint (g_atomic_int_get (&n_delays), >, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/held/workers-done", test_workers_done);

  return g_test_run ();
}
