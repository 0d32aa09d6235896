/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-stream-threads.c: how many threads the writer and reader use
 *
 * Copyright 2026 The libserio authors
 */

#include <serio.h>

#include "serio-workers-private.h"

static void
test_effective (void)
{
  guint n_cpus = g_get_num_processors ();

  g_test_summary ("SERIO_THREADS caps the threads, whatever the code asks; "
                  "0 asks for one per processor; nonsense is ignored.");

  g_unsetenv ("SERIO_THREADS");
  g_assert_cmpuint (_serio_threads_effective (0), ==, CLAMP (n_cpus, 1, 64));
  g_assert_cmpuint (_serio_threads_effective (5), ==, 5);
  g_assert_cmpuint (_serio_threads_effective (1), ==, 1);

  g_setenv ("SERIO_THREADS", "3", TRUE);
  g_assert_cmpuint (_serio_threads_effective (0), ==, MIN (CLAMP (n_cpus, 1, 64), 3));
  g_assert_cmpuint (_serio_threads_effective (8), ==, 3);
  g_assert_cmpuint (_serio_threads_effective (2), ==, 2);

  g_setenv ("SERIO_THREADS", "1", TRUE);
  g_assert_cmpuint (_serio_threads_effective (16), ==, 1);

  for (guint i = 0; i < 3; i++)
    {
      const char *ignored[] = { "0", "many", "" };

      g_setenv ("SERIO_THREADS", ignored[i], TRUE);
      g_assert_cmpuint (_serio_threads_effective (4), ==, 4);
    }

  g_unsetenv ("SERIO_THREADS");
}

static void
test_properties (void)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(GInputStream) in = g_memory_input_stream_new ();
  g_autoptr(SerioWriter) writer = g_object_new (SERIO_TYPE_WRITER, "stream", out, "threads", 3, NULL);
  g_autoptr(SerioReader) reader = g_object_new (SERIO_TYPE_READER, "stream", in, "threads", 2, NULL);
  guint threads = 0;

  g_assert_cmpuint (serio_writer_get_threads (writer), ==, 3);
  g_assert_cmpuint (serio_reader_get_threads (reader), ==, 2);
  serio_writer_set_threads (writer, 0);
  g_object_get (writer, "threads", &threads, NULL);
  g_assert_cmpuint (threads, ==, 0);
  serio_reader_set_threads (reader, 7);
  g_object_get (reader, "threads", &threads, NULL);
  g_assert_cmpuint (threads, ==, 7);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/stream-threads/effective", test_effective);
  g_test_add_func ("/stream-threads/properties", test_properties);

  return g_test_run ();
}
