/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-memory.c: large buffers, and their pages mapped ahead of the writes
 *
 * Copyright 2026 The libserio authors
 *
 * _serio_prefault() maps pages for writing without changing what they
 * hold: the parallel parser calls it on the caller's buffer while other
 * threads store values into the pages before the range. Here it runs on
 * buffers full of random bytes, over ranges that start and end inside a
 * page, and must leave every byte as it was; and, where the system can
 * map pages ahead (Linux 5.14 and later), it must have mapped exactly the
 * pages of the range.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#ifdef HAVE_MADVISE
# include <sys/mman.h>
# include <unistd.h>
#endif

#include "serio-memory-private.h"
#include "test-utils.h"

#define BUFFER_SIZE (5 * 1024 * 1024 + 123)

static void
fill_random (guint8 *buffer,
             gsize   size)
{
  for (gsize i = 0; i < size; i += 8)
    {
      guint64 r = test_rand_u64 ();

      memcpy (buffer + i, &r, MIN (8, size - i));
    }
}

static void
test_prefault_keeps_contents (void)
{
  static const struct {
    gsize offset;
    gsize len;
  } ranges[] = {
    { 0, 0 }, { 1, 1 }, { 4095, 2 }, { 4096, 4096 }, { 12345, 3 * 1024 * 1024 },
    { 2 * 1024 * 1024 - 1, 2 }, { 0, BUFFER_SIZE }, { BUFFER_SIZE - 1, 1 },
  };
  /* a buffer advised for huge pages, as a bundle's values are, and one
   * of the allocator's */
  guint8 *buffers[] = { _serio_alloc_large (BUFFER_SIZE), g_malloc (BUFFER_SIZE) };
  g_autofree guint8 *copy = g_malloc (BUFFER_SIZE);

  for (gsize b = 0; b < G_N_ELEMENTS (buffers); b++)
    {
      fill_random (buffers[b], BUFFER_SIZE);
      memcpy (copy, buffers[b], BUFFER_SIZE);
      for (gsize i = 0; i < G_N_ELEMENTS (ranges); i++)
        {
          _serio_prefault (buffers[b] + ranges[i].offset, ranges[i].len);
          g_assert_cmpmem (buffers[b], BUFFER_SIZE, copy, BUFFER_SIZE);
        }
      g_free (buffers[b]);
    }
}

/* The pages of a fresh mapping that _serio_prefault() maps: those of the
 * range, from the one of its first byte to the one of its last, and no
 * other. */
static void
test_prefault_maps_range (void)
{
#if defined(HAVE_MADVISE) && defined(MADV_POPULATE_WRITE) && defined(MADV_NOHUGEPAGE) && \
    defined(__linux__)
  const gsize n_pages = 64, first = 10, last = 30;
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  unsigned char resident[64];
  guint8 *map;

  map = mmap (NULL, n_pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (map != MAP_FAILED);
  /* pages of the base size, which mincore() tells apart */
  g_assert_cmpint (madvise (map, n_pages * page, MADV_NOHUGEPAGE), ==, 0);

  /* A system without the advice: the writes map the pages, as before. */
  if (madvise (map + (n_pages - 1) * page, page, MADV_POPULATE_WRITE) != 0)
    {
      int saved_errno = errno;

      g_assert_cmpint (saved_errno, ==, EINVAL);
      g_assert_cmpint (munmap (map, n_pages * page), ==, 0);
      g_test_skip ("the system cannot map pages ahead of the writes (MADV_POPULATE_WRITE)");
      return;
    }

  /* from inside page @first to inside page @last */
  _serio_prefault (map + first * page + 100, (last - first) * page);
  g_assert_cmpint (mincore (map, n_pages * page, resident), ==, 0);
  /* (the last page is the probe's) */
  for (gsize i = 0; i < n_pages - 1; i++)
    {
      gboolean in_range = i >= first && i <= last;

      if (((resident[i] & 1) != 0) != in_range)
        g_error ("page %" G_GSIZE_FORMAT " is %s, but the range is pages %" G_GSIZE_FORMAT
                 "-%" G_GSIZE_FORMAT, i, resident[i] & 1 ? "mapped" : "not mapped", first, last);
    }
  g_assert_cmpint (munmap (map, n_pages * page), ==, 0);
#else
  g_test_skip ("no MADV_POPULATE_WRITE on this system");
#endif
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory/prefault/keeps-contents", test_prefault_keeps_contents);
  g_test_add_func ("/memory/prefault/maps-range", test_prefault_maps_range);

  return g_test_run ();
}
