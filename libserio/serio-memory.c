/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-memory.c: allocation of large buffers
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdlib.h>
#ifdef HAVE_MADVISE
# include <sys/mman.h>
# include <unistd.h>
#endif

#include "serio-memory-private.h"

/* Below this, the allocator's own pools are the better choice. */
#define LARGE_BUFFER (4 * 1024 * 1024)
#define HUGE_PAGE    (2 * 1024 * 1024)

/*
 * _serio_try_alloc_large:
 * @size: the number of bytes
 *
 * Allocates a buffer that is about to be filled from end to end, such as
 * the text of a bundle or the values of a long array. A fresh buffer of many
 * megabytes costs one page fault per 4 KiB page, which on a virtual machine
 * is slower than writing the data itself; large buffers are therefore
 * aligned to, and marked for, transparent huge pages where the system has
 * them (Linux's MADV_HUGEPAGE), which cuts the faults 512-fold.
 *
 * The result is freed with g_free() and resized with g_realloc(), like any
 * g_malloc() block.
 *
 * Returns: the buffer, or %NULL if @size bytes cannot be allocated (on a
 *   32-bit system, a size near the address space)
 */
gpointer
_serio_try_alloc_large (gsize size)
{
#if defined(HAVE_MADVISE) && defined(MADV_HUGEPAGE) && defined(HAVE_POSIX_MEMALIGN)
  if (size >= LARGE_BUFFER)
    {
      void *buffer;

      if (posix_memalign (&buffer, HUGE_PAGE, size) == 0)
        {
          /* Only advice: where huge pages are unavailable, nothing changes. */
          madvise (buffer, size, MADV_HUGEPAGE);
          return buffer;
        }
    }
#endif

  return g_try_malloc (size);
}

/*
 * _serio_alloc_large:
 * @size: the number of bytes
 *
 * _serio_try_alloc_large() for sizes that must be had: aborts, as
 * g_malloc() does, when they cannot. Never returns %NULL for a nonzero
 * @size.
 */
gpointer
_serio_alloc_large (gsize size)
{
  gpointer buffer = _serio_try_alloc_large (size);

  if (G_UNLIKELY (buffer == NULL && size > 0))
    g_error ("%s: failed to allocate %" G_GSIZE_FORMAT " bytes", G_STRLOC, size);

  return buffer;
}

/*
 * _serio_prefault:
 * @start: the first byte
 * @len: the number of bytes
 *
 * Has the system map the pages of [@start, @start + @len) for writing now,
 * as a write to each of them would, without changing what they hold
 * (Linux's MADV_POPULATE_WRITE, from Linux 5.14).
 *
 * For a buffer that several threads fill side by side: the first write to
 * a huge page has the kernel allocate and clear its 2 MiB before it maps
 * it, and two threads that reach the page at about the same time each
 * clear one, of which one is dropped. A thread that maps the pages ahead
 * of the writes takes those faults on its own, once each.
 *
 * Only advice: where the system cannot do it, the pages are mapped by the
 * writes, as before, and nothing else changes.
 */
void
_serio_prefault (gpointer start,
                 gsize    len)
{
#if defined(HAVE_MADVISE) && defined(MADV_POPULATE_WRITE)
  long n = sysconf (_SC_PAGESIZE);
  gsize page_size = n > 0 ? (gsize) n : 4096;
  guintptr first, last;

  if (len == 0)
    return;

  /* Whole pages: the range's first and last ones may hold other data,
   * which the advice leaves as it is. */
  first = (guintptr) start & ~(guintptr) (page_size - 1);
  last = ((guintptr) start + len - 1) & ~(guintptr) (page_size - 1);
  madvise ((void *) first, last - first + page_size, MADV_POPULATE_WRITE);
#else
  (void) start;
  (void) len;
#endif
}
