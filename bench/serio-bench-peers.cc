/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bench-peers.cc: Dragonbox (through fmt) and fast_float, the
 * fastest known ways to write and read shortest round-trip decimals, as
 * peers of libserio in serio-bench
 *
 * Copyright 2026 The libserio authors
 *
 * What a user of these libraries would write: fmt::format_to with a
 * format string compiled ahead (FMT_COMPILE, so that no format string is
 * parsed per value) and fast_float::from_chars on each comma-separated
 * token.
 */

#include "serio-bench-peers.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fast_float/fast_float.h>
#include <fmt/compile.h>
#include <fmt/format.h>

/* "-2.2250738585072014e-308" and "-0.00012345678901234567" are the
 * longest shortest forms fmt writes (24 and 23 bytes); some room to
 * spare. */
#define PEER_TOKEN_MAX 32

extern "C" char *
serio_bench_dragonbox_write (const double *values,
                             size_t        n,
                             size_t       *size)
{
  size_t bound = n * (PEER_TOKEN_MAX + 1) + 1;
  char *buffer = static_cast<char *> (std::malloc (bound));
  char *p = buffer;
  char *trimmed;

  if (buffer == nullptr)
    return nullptr;

  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        *p++ = ',';
      p = fmt::format_to (p, FMT_COMPILE ("{}"), values[i]);
    }

  *p = '\0';
  *size = static_cast<size_t> (p - buffer);
  trimmed = static_cast<char *> (std::realloc (buffer, *size + 1));
  return trimmed != nullptr ? trimmed : buffer;
}

extern "C" size_t
serio_bench_fastfloat_read (const char *text,
                            size_t      size,
                            double     *values,
                            size_t      n)
{
  const char *p = text;
  const char *end = text + size;

  for (size_t i = 0; i < n; i++)
    {
      fast_float::from_chars_result result = fast_float::from_chars (p, end, values[i]);

      if (result.ec != std::errc () ||
          (i + 1 < n ? result.ptr == end || *result.ptr != ',' : result.ptr != end))
        return i;
      p = result.ptr + 1;
    }

  return n;
}

extern "C" const char *
serio_bench_peers_versions (void)
{
  static char versions[64];

  if (versions[0] == '\0')
    std::snprintf (versions, sizeof versions, "fmt %d.%d.%d (Dragonbox), fast_float",
                   FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100);
  return versions;
}
