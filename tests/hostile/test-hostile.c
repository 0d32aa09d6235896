/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-hostile.c: inputs built to make the parser slow or big
 *
 * Copyright 2026 The libserio authors
 *
 * Each input is parsed in a forked child that reports the result, the
 * parse time and its peak resident memory (getrusage() ru_maxrss, which the
 * child starts from its parent's). Outside ASan and valgrind, the child
 * also caps its address space, so that allocating for a hostile count
 * fails loudly even if the memory is never touched. Inputs that scale are
 * parsed at full size and at a tenth of it, and the two times must be
 * roughly proportional.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile-common.h"

#define MIB ((gsize) 1024 * 1024)

/* ASan adds redzones and a quarantine of freed blocks to the heap, and
 * reserves terabytes of address space. */
#if defined(__SANITIZE_ADDRESS__)
# define UNDER_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define UNDER_ASAN 1
# endif
#endif

/* The memory bound: peak ≤ baseline + MEMORY_FACTOR × input + MEMORY_SLACK.
 * The input itself is part of it. */
#ifdef UNDER_ASAN
# define MEMORY_FACTOR  24
#else
# define MEMORY_FACTOR  6
#endif
#define MEMORY_SLACK    (32 * MIB)

/* The time bound against the input a tenth of the size: at most
 * TIME_FACTOR times as long, plus TIME_SLACK for a noisy machine. */
#define TIME_FACTOR     40
#define TIME_SLACK_USEC (2 * G_USEC_PER_SEC)

/* ------------------------------------------------------------------ */
/* Building inputs of a known size                                    */
/* ------------------------------------------------------------------ */

/* A buffer allocated once at its final size, so that building an input
 * leaves no freed garbage behind to hide the parser's own peak. */
typedef struct
{
  char  *data;
  gsize  len;
  gsize  cap;
} Buf;

static void
buf_init (Buf   *buf,
          gsize  cap)
{
  buf->data = g_malloc (cap);
  buf->len = 0;
  buf->cap = cap;
}

static void
buf_add_len (Buf        *buf,
             const char *text,
             gsize       len)
{
  g_assert_cmpuint (len, <=, buf->cap - buf->len);
  memcpy (buf->data + buf->len, text, len);
  buf->len += len;
}

static void
buf_add (Buf        *buf,
         const char *text)
{
  buf_add_len (buf, text, strlen (text));
}

static void
buf_fill (Buf   *buf,
          char   c,
          gsize  n)
{
  g_assert_cmpuint (n, <=, buf->cap - buf->len);
  memset (buf->data + buf->len, c, n);
  buf->len += n;
}

static GBytes *
buf_finish (Buf *buf)
{
  return g_bytes_new_take (buf->data, buf->len);
}

/* @prefix, @n copies of @c, and @suffix. */
static GBytes *
long_run (const char *prefix,
          char        c,
          gsize       n,
          const char *suffix)
{
  Buf buf;

  buf_init (&buf, strlen (prefix) + n + strlen (suffix));
  buf_add (&buf, prefix);
  buf_fill (&buf, c, n);
  buf_add (&buf, suffix);
  return buf_finish (&buf);
}

/* ------------------------------------------------------------------ */
/* The cases                                                          */
/* ------------------------------------------------------------------ */

/* Makes an input of about @size bytes; scaled() divides the sizes by 100
 * unless the test runs with `-m slow`. */
typedef GBytes * (*MakeInput) (gsize size);
typedef gboolean (*CheckBundle) (SerioBundle *bundle, gsize size);

typedef struct
{
  const char  *path;
  const char  *label;
  const char  *text;         /* a fixed input, or NULL */
  MakeInput    make;         /* or an input of about @size bytes */
  gsize        size;
  int          expected;     /* a SerioError, or ACCEPTED */
  CheckBundle  check;        /* for ACCEPTED */
  const char *(*message_part) (gsize size);  /* in the error message */
} HostileCase;

/* Canonical tokens of about 20 bytes, and their bits. */
static const struct
{
  const char *token;
  guint64     bits;
} long_tokens[] = {
  { "3602879701896397p-55", G_GUINT64_CONSTANT (0x3FB999999999999A) },
  { "-9007199254740991p971", G_GUINT64_CONSTANT (0xFFEFFFFFFFFFFFFF) },
  { "4611686018427387392", G_GUINT64_CONSTANT (0x43CFFFFFFFFFFFFF) },
  { "4503599627370495p-1074", G_GUINT64_CONSTANT (0x000FFFFFFFFFFFFF) },
};

/* The number of long tokens that, with commas, fill @size bytes. */
static gsize
long_line_tokens (gsize size)
{
  gsize n = 0, len = 0;

  for (;;)
    {
      gsize next = strlen (long_tokens[n % G_N_ELEMENTS (long_tokens)].token) + 1;

      if (len + next > size)
        return n;
      len += next;
      n++;
    }
}

/* One record of @size bytes or so: the long tokens in turn, with @count
 * declared, and @last instead of the last token when it is not NULL. */
static GBytes *
make_long_line_full (gsize       size,
                     gsize       count,
                     const char *last)
{
  gsize n = long_line_tokens (size);
  g_autofree char *head = g_strdup_printf ("v1|big|%" G_GSIZE_FORMAT "|", count);
  Buf buf;

  buf_init (&buf, strlen (head) + size + (last ? strlen (last) : 0) + 1);
  buf_add (&buf, head);
  for (gsize i = 0; i < n; i++)
    {
      if (i > 0)
        buf_add (&buf, ",");
      if (i == n - 1 && last != NULL)
        buf_add (&buf, last);
      else
        buf_add (&buf, long_tokens[i % G_N_ELEMENTS (long_tokens)].token);
    }
  buf_add (&buf, "\n");
  return buf_finish (&buf);
}

static GBytes *
make_long_line (gsize size)
{
  return make_long_line_full (size, long_line_tokens (size), NULL);
}

static GBytes *
make_long_line_bad_end (gsize size)
{
  return make_long_line_full (size, long_line_tokens (size), "1.5");
}

static GBytes *
make_long_line_count_off (gsize size)
{
  return make_long_line_full (size, long_line_tokens (size) + 1, NULL);
}

static gboolean
check_long_line (SerioBundle *bundle,
                 gsize        size)
{
  gsize n_values;
  const double *values;

  if (serio_bundle_get_n_arrays (bundle) != 1)
    return FALSE;
  values = serio_bundle_get_values (bundle, 0, &n_values);
  if (n_values != long_line_tokens (size))
    return FALSE;

  for (gsize i = 0; i < n_values; i++)
    {
      guint64 bits;

      memcpy (&bits, &values[i], sizeof bits);
      if (bits != long_tokens[i % G_N_ELEMENTS (long_tokens)].bits)
        return FALSE;
    }

  return TRUE;
}

static const char *
long_line_bad_index (gsize size)
{
  static char part[64];

  g_snprintf (part, sizeof part, "value %" G_GSIZE_FORMAT " ", long_line_tokens (size));
  return part;
}

#define TINY_LINE "v1|a|1|1\n"
#define EMPTY_ARRAY "v1||0|\n"

static GBytes *
repeat_line (const char *line,
             gsize       n)
{
  gsize len = strlen (line);
  Buf buf;

  buf_init (&buf, len * n);
  for (gsize i = 0; i < n; i++)
    buf_add_len (&buf, line, len);
  return buf_finish (&buf);
}

static gsize
lines_in (const char *line,
          gsize       size)
{
  return size / strlen (line);
}

static GBytes *
make_tiny_lines (gsize size)
{
  return repeat_line (TINY_LINE, lines_in (TINY_LINE, size));
}

static gboolean
check_tiny_lines (SerioBundle *bundle,
                  gsize        size)
{
  guint n = serio_bundle_get_n_arrays (bundle);

  if (n != lines_in (TINY_LINE, size))
    return FALSE;

  for (guint i = 0; i < n; i += 997)
    {
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);

      if (strcmp (serio_bundle_get_name (bundle, i), "a") != 0 || n_values != 1 || values[0] != 1.0)
        return FALSE;
    }

  return TRUE;
}

static GBytes *
make_empty_arrays (gsize size)
{
  return repeat_line (EMPTY_ARRAY, lines_in (EMPTY_ARRAY, size));
}

static gboolean
check_empty_arrays (SerioBundle *bundle,
                    gsize        size)
{
  return serio_bundle_get_n_arrays (bundle) == lines_in (EMPTY_ARRAY, size);
}

#define CRLF_LINES(size) ((size) / 2)

static GBytes *
make_crlf_lines (gsize size)
{
  return repeat_line ("\r\n", CRLF_LINES (size));
}

static gboolean
check_empty_bundle (SerioBundle *bundle,
                    gsize        size)
{
  return serio_bundle_get_n_arrays (bundle) == 0;
}

static GBytes *
make_crlf_lines_then_bad (gsize size)
{
  gsize n = CRLF_LINES (size);
  Buf buf;

  buf_init (&buf, 2 * n + strlen ("v1|x|1|01\n"));
  for (gsize i = 0; i < n; i++)
    buf_add_len (&buf, "\r\n", 2);
  buf_add (&buf, "v1|x|1|01\n");
  return buf_finish (&buf);
}

static const char *
crlf_bad_line (gsize size)
{
  static char part[64];

  g_snprintf (part, sizeof part, "Line %" G_GSIZE_FORMAT ",", CRLF_LINES (size) + 1);
  return part;
}

static GBytes *
make_long_name (gsize size)
{
  return long_run ("v1|", 'n', size, "|1|-1p-1\n");
}

static gboolean
check_long_name (SerioBundle *bundle,
                 gsize        size)
{
  const char *name;
  gsize n_values;
  const double *values;

  if (serio_bundle_get_n_arrays (bundle) != 1)
    return FALSE;
  name = serio_bundle_get_name (bundle, 0);
  values = serio_bundle_get_values (bundle, 0, &n_values);

  return strlen (name) == size && strspn (name, "n") == size && n_values == 1 && values[0] == -0.5;
}

static GBytes *
make_long_name_bad_utf8 (gsize size)
{
  return long_run ("v1|", 'n', size, "\xC3|0|\n");
}

static GBytes *
make_long_name_nul (gsize size)
{
  return long_run ("v1|", '\0', size, "|0|\n");
}

static GBytes *
make_long_integer (gsize size)
{
  return long_run ("v1|x|1|1", '0', size - 1, "\n");
}

static GBytes *
make_long_significand (gsize size)
{
  return long_run ("v1|x|1|", '9', size, "p-1\n");
}

static GBytes *
make_long_exponent (gsize size)
{
  return long_run ("v1|x|1|1p1", '0', size - 1, "\n");
}

static GBytes *
make_long_negative_exponent (gsize size)
{
  return long_run ("v1|x|1|1p-1", '0', size - 1, "\n");
}

static GBytes *
make_long_count (gsize size)
{
  return long_run ("v1|x|1", '0', size - 1, "|1\n");
}

static GBytes *
make_long_count_of_nines (gsize size)
{
  return long_run ("v1|x|", '9', size, "|1\n");
}

/* 4 billion declared on a line that is long, but not that long. */
static GBytes *
make_count_4_billion_long (gsize size)
{
  return make_long_line_full (size, (gsize) G_GUINT64_CONSTANT (4000000000), NULL);
}

#define FULL_LINE (100 * MIB)
#define DIGITS    100000

/* Counts that wrap: 2^61 + 1 wraps to 8 when multiplied by the size of a
 * double, 2^63 + 1 to 2 when by the minimum length of a token and comma. */
static const HostileCase cases[] = {
  { "/hostile/count/wrap-32", "count 2^32+1, one token", "v1|x|4294967297|1\n", .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/2-32-empty", "count 2^32, no token", "v1|x|4294967296|\n", .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/wrap-64", "count 2^64+1, one token", "v1|x|18446744073709551617|1\n",
    .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/2-64-empty", "count 2^64, no token", "v1|x|18446744073709551616|\n",
    .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/max-u64", "count 2^64-1, one token", "v1|x|18446744073709551615|1\n",
    .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/bytes-wrap", "count 2^61+1 (x8 wraps), one token", "v1|x|2305843009213693953|1\n",
    .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/text-wrap", "count 2^63+1 (x2 wraps), two tokens", "v1|x|9223372036854775809|1,2\n",
    .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/4-billion", "count 4e9, one token", "v1|x|4000000000|0\n", .expected = SERIO_ERROR_LENGTH },
  { "/hostile/count/4-billion-long", "count 4e9, 100 MB line", NULL, make_count_4_billion_long, FULL_LINE,
    SERIO_ERROR_LENGTH },
  { "/hostile/count/100000-digits", "count of 100,000 digits", NULL, make_long_count, DIGITS, SERIO_ERROR_LENGTH },
  { "/hostile/count/100000-nines", "count of 100,000 nines", NULL, make_long_count_of_nines, DIGITS,
    SERIO_ERROR_LENGTH },
  { "/hostile/line/valid", "100 MB line, valid", NULL, make_long_line, FULL_LINE, ACCEPTED, check_long_line },
  { "/hostile/line/bad-end", "100 MB line, bad last token", NULL, make_long_line_bad_end, FULL_LINE,
    SERIO_ERROR_SYNTAX, NULL, long_line_bad_index },
  { "/hostile/line/count-off", "100 MB line, count one too many", NULL, make_long_line_count_off, FULL_LINE,
    SERIO_ERROR_LENGTH },
  { "/hostile/lines/tiny", "10^6 tiny lines", NULL, make_tiny_lines, 1000000 * (sizeof TINY_LINE - 1),
    ACCEPTED, check_tiny_lines },
  { "/hostile/lines/empty-arrays", "10^6 empty arrays", NULL, make_empty_arrays, 1000000 * (sizeof EMPTY_ARRAY - 1),
    ACCEPTED, check_empty_arrays },
  { "/hostile/lines/crlf-blank", "10^6 CR LF blank lines", NULL, make_crlf_lines, 2000000, ACCEPTED,
    check_empty_bundle },
  { "/hostile/lines/crlf-blank-then-bad", "10^6 CR LF lines, then a bad one", NULL, make_crlf_lines_then_bad,
    2000000, SERIO_ERROR_SYNTAX, NULL, crlf_bad_line },
  { "/hostile/name/1mb", "1 MB name", NULL, make_long_name, MIB, ACCEPTED, check_long_name },
  { "/hostile/name/1mb-bad-utf8", "1 MB name, bad UTF-8 at the end", NULL, make_long_name_bad_utf8, MIB,
    SERIO_ERROR_SYNTAX },
  { "/hostile/name/1mb-nul", "1 MB name of NUL bytes", NULL, make_long_name_nul, MIB, SERIO_ERROR_SYNTAX },
  { "/hostile/token/100000-digit-integer", "100,000-digit integer", NULL, make_long_integer, DIGITS,
    SERIO_ERROR_DOMAIN },
  { "/hostile/token/100000-digit-significand", "100,000-digit significand", NULL, make_long_significand, DIGITS,
    SERIO_ERROR_DOMAIN },
  { "/hostile/token/100000-digit-exponent", "100,000-digit exponent", NULL, make_long_exponent, DIGITS,
    SERIO_ERROR_DOMAIN },
  { "/hostile/token/100000-digit-negative-exponent", "100,000-digit negative exponent", NULL,
    make_long_negative_exponent, DIGITS, SERIO_ERROR_DOMAIN },
};

/* ------------------------------------------------------------------ */
/* Measuring in a child                                               */
/* ------------------------------------------------------------------ */

typedef struct
{
  gsize    input_size;
  gint64   parse_usec;
  gsize    baseline;     /* bytes, before the input was built */
  gsize    peak;         /* bytes */
  int      result;       /* a SerioError, or ACCEPTED */
  gboolean content_ok;   /* the bundle holds what the input says */
  char     message[200];
} Measurement;

static gboolean
slow_tool (void)
{
  return g_getenv ("SERIO_TEST_SLOW_TOOL") != NULL;
}

/* The full sizes (up to 100 MB) with `-m slow`, as the `slow` suite runs
 * this; a hundredth of them otherwise, and always under a slow tool. */
static gsize
scaled (gsize size)
{
  return slow_tool () || !g_test_slow () ? MAX (size / 100, 1) : size;
}

static gsize
max_rss (void)
{
  struct rusage usage;

  g_assert_no_errno (getrusage (RUSAGE_SELF, &usage));
  return (gsize) usage.ru_maxrss * 1024;
}

/* Limits the address space to what is mapped now plus @extra, so that an
 * allocation for a hostile count fails even if it is never touched. Not
 * under ASan or valgrind, which reserve terabytes of their own. */
static void
cap_address_space (gsize extra)
{
  g_autofree char *statm = NULL;
  unsigned long pages;
  struct rlimit limit;

#ifdef UNDER_ASAN
  return;
#endif

  if (slow_tool () ||
      !g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL) ||
      sscanf (statm, "%lu", &pages) != 1)
    return;

  limit.rlim_cur = limit.rlim_max = (rlim_t) pages * sysconf (_SC_PAGESIZE) + extra;
  g_assert_no_errno (setrlimit (RLIMIT_AS, &limit));
}

/* Runs in the child; frees all it allocates, so that valgrind's leak check
 * at the child's exit stays quiet. */
static Measurement
parse_and_measure (const HostileCase *hc,
                   gsize              size)
{
  Measurement m = { 0, };
  g_autoptr(GBytes) input = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  gint64 start;

  m.baseline = max_rss ();
  cap_address_space (8 * size + 512 * MIB);

  input = hc->text ? g_bytes_new_static (hc->text, strlen (hc->text)) : hc->make (size);
  m.input_size = g_bytes_get_size (input);

  start = g_get_monotonic_time ();
  bundle = serio_bundle_new_from_bytes (input, &error);
  m.parse_usec = g_get_monotonic_time () - start;

  if (bundle != NULL)
    {
      m.result = ACCEPTED;
      m.content_ok = hc->check == NULL || hc->check (bundle, size);
    }
  else
    {
      m.result = error->domain == SERIO_ERROR ? error->code : G_MAXINT;
      g_strlcpy (m.message, error->message, sizeof m.message);
    }

  m.peak = max_rss ();

  return m;
}

static Measurement
measure (const HostileCase *hc,
         gsize              size)
{
  Measurement m;
  int fds[2];
  int status;
  pid_t pid;
  gssize got;

  g_assert_no_errno (pipe (fds));
  pid = fork ();
  g_assert_cmpint (pid, !=, -1);
  if (pid == 0)
    {
      close (fds[0]);
      m = parse_and_measure (hc, size);
      _exit (write (fds[1], &m, sizeof m) == sizeof m ? 0 : 1);
    }

  close (fds[1]);
  do
    got = read (fds[0], &m, sizeof m);
  while (got == -1 && errno == EINTR);
  close (fds[0]);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);

  if (WIFSIGNALED (status))
    g_error ("%s: the child died of signal %d", hc->label, WTERMSIG (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_cmpint (got, ==, sizeof m);

  return m;
}

/* ------------------------------------------------------------------ */
/* The table for the closing note                                     */
/* ------------------------------------------------------------------ */

/* One row of the table for the closing note; the rows are TAP comments,
 * so "grep '^# |'" on the log gives the table. */
static void
add_row (const char        *label,
         const Measurement *m)
{
  static gboolean header_done = FALSE;

  if (!header_done)
    {
      g_test_message ("| %-42s | %12s | %-9s | %9s | %8s |", "input", "bytes", "result", "parse ms", "peak MiB");
      g_test_message ("|%s|%s|%s|%s|%s|", "--------------------------------------------", "--------------",
                      "-----------", "-----------", "----------");
      header_done = TRUE;
    }

  g_test_message ("| %-42s | %12" G_GSIZE_FORMAT " | %-9s | %9.1f | %8.1f |",
                  label, m->input_size, result_name (m->result),
                  m->parse_usec / 1000.0,
                  (double) (m->peak - MIN (m->peak, m->baseline)) / MIB);
}

/* ------------------------------------------------------------------ */
/* The tests                                                          */
/* ------------------------------------------------------------------ */

static void
check_measurement (const HostileCase *hc,
                   gsize              size,
                   const Measurement *m)
{
  gsize bound = m->baseline + MEMORY_FACTOR * m->input_size + MEMORY_SLACK;

  g_assert_cmpstr (result_name (m->result), ==, result_name (hc->expected));
  if (hc->expected == ACCEPTED)
    g_assert_true (m->content_ok);
  else if (hc->message_part != NULL)
    g_assert_nonnull (strstr (m->message, hc->message_part (size)));

  g_assert_cmpuint (m->peak, <=, bound);
}

static void
test_case (gconstpointer data)
{
  const HostileCase *hc = data;
  gsize size = scaled (hc->size);
  Measurement full;

  g_test_summary ("A hostile input is accepted or rejected as the spec says, with "
                  "peak memory within a small multiple of its size and parse time "
                  "roughly proportional to it.");

  full = measure (hc, size);
  add_row (hc->label, &full);
  check_measurement (hc, size, &full);

  if (hc->size > 0)
    {
      g_autofree char *label = g_strdup_printf ("%s (a tenth)", hc->label);
      Measurement tenth = measure (hc, size / 10);

      add_row (label, &tenth);
      check_measurement (hc, size / 10, &tenth);
      /* Times are compared only with `-m perf`: they depend on the
       * machine's load. */
      if (g_test_perf ())
        g_assert_cmpint (full.parse_usec, <=, TIME_FACTOR * tenth.parse_usec + TIME_SLACK_USEC);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (cases[i].path, &cases[i], test_case);

  return g_test_run ();
}
