/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-memory.c: allocation of large buffers
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdlib.h>
#ifdef HAVE_MADVISE
# include <sys/mman.h>
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
