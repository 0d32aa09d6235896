/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-limits.c: a record whose values do not fit in memory fails the
 * read with an error, not an abort or a wrapped size
 *
 * Copyright 2026 The libserio authors
 */

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <serio.h>

#include "test-utils.h"

#if defined(__SANITIZE_ADDRESS__)
# define UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define UNDER_ASAN 1
# endif
#endif

#define MIB (1024 * 1024)

/* Values of a record, as "0,0,…,0": 2 bytes of text per 8-byte value. */
#define N_VALUES (16 * MIB)

/* Caps the address space at what is mapped now plus @extra. */
static gboolean
cap_address_space (gsize extra)
{
  g_autofree char *statm = NULL;
  unsigned long pages;
  struct rlimit limit;

  if (!g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL) ||
      sscanf (statm, "%lu", &pages) != 1)
    return FALSE;

  limit.rlim_cur = limit.rlim_max = (rlim_t) pages * sysconf (_SC_PAGESIZE) + extra;
  return setrlimit (RLIMIT_AS, &limit) == 0;
}

static void
test_values_beyond_memory (void)
{
  if (test_slow_tool ())
    {
      g_test_skip ("address-space limits do not mix with valgrind");
      return;
    }
#ifdef UNDER_ASAN
  g_test_skip ("address-space limits do not mix with ASan");
  return;
#endif

  if (g_test_subprocess ())
    {
      GString *text = g_string_sized_new (2 * N_VALUES + 32);
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = NULL;

      g_string_append_printf (text, "v1|big|%d|0", N_VALUES);
      for (gsize i = 1; i < N_VALUES; i++)
        g_string_append (text, ",0");
      g_string_append_c (text, '\n');
      bytes = g_string_free_to_bytes (text);

      /* The values need 128 MiB; a quarter of it is left. */
      g_assert_true (cap_address_space (32 * MIB));

      bundle = serio_bundle_new_from_bytes (bytes, &error);
      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
      g_assert_cmpuint (serio_error_get_line (error), ==, 1);
      g_assert_cmpstr (serio_error_get_detail (error), ==,
                       "the count 16777216 is too large for the memory of this system");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* A count far beyond what a short text can hold costs no more memory than
 * the text could fill: with 2 MiB of address space left, a count of 4·10^6
 * values (32 MB) in a text of 20 bytes is a LENGTH error, not an
 * allocation that aborts. */
static void
test_hostile_count_in_short_text (void)
{
  if (test_slow_tool ())
    {
      g_test_skip ("address-space limits do not mix with valgrind");
      return;
    }
#ifdef UNDER_ASAN
  g_test_skip ("address-space limits do not mix with ASan");
  return;
#endif

  if (g_test_subprocess ())
    {
      static const char text[] = "v1|w|4000000|1,2\n";
      g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = NULL;

      g_assert_true (cap_address_space (2 * MIB));

      bundle = serio_bundle_new_from_bytes (bytes, &error);
      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
      g_assert_cmpstr (serio_error_get_detail (error), ==,
                       "the count is 4000000 but the record holds 2 values");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  setlocale (LC_MESSAGES, "C");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/limits/values-beyond-memory", test_values_beyond_memory);
  g_test_add_func ("/limits/hostile-count-in-short-text", test_hostile_count_in_short_text);

  return g_test_run ();
}
