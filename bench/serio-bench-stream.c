/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bench-stream.c: time and peak memory of the file and stream paths
 *
 * Copyright 2026 The libserio authors
 *
 * Each measurement runs in a child process of its own, so that its peak
 * resident set (getrusage's ru_maxrss) is its own. Printed per operation
 * and size: wall and thread-CPU nanoseconds per value, the peak RSS, and
 * how far the peak went above the RSS the child had just before the
 * operation (for a save, the bundle itself is already resident then).
 * The peak is reset just before the operation where Linux allows it
 * (/proc/self/clear_refs), so that making the bundle does not count.
 *
 *   build/bench/serio-bench-stream [--sizes 1000000,10000000] [--dir DIR]
 *   build/bench/serio-bench-stream --scale [--sizes 1000000,100000000,200000000]
 *
 * Wall time over thread CPU time shows what more threads bring
 * (SERIO_THREADS=1 against the default). Values are random bit patterns
 * (about 20 bytes of text each). The file is written to DIR (default: the
 * temporary directory) and removed.
 *
 * --scale prints the figures of issue 8 in one run, for each size: the
 * single-threaded ns/value of save_to_file, from_file, to_bytes and
 * from_bytes and how they grow from the first size (flat cost), the wall
 * time with one thread over that with one per processor (scaling), the
 * peak RSS against the bounds (from_file: 8 bytes a value + 64 MiB;
 * save_to_file: 64 MiB above the bundle), every serio command's wall time
 * and peak RSS on the same file (and its time over that of serio check),
 * NumPy's np.save/np.load of the same number of float64 values when
 * /usr/bin/python3 has NumPy, and the floor of a save: the time that
 * write(2) and fsync take to put the bytes of its text into a file, with
 * nothing formatted, which is what two threads of a save are compared
 * against, since the kernel writes one file's bytes one call at a time.
 */

#define _GNU_SOURCE   /* sync_file_range */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <serio.h>

typedef enum
{
  OP_SAVE_TO_FILE,
  OP_WRITE_TO_STREAM,
  OP_WRITE_TO_NULL,
  OP_FROM_FILE,
  OP_READER_SCAN,
  OP_FROM_BYTES,
  OP_TO_BYTES,
  OP_PARSE_BYTES,
  OP_WRITE_FLOOR,
  N_OPS
} Op;

static const char *op_names[N_OPS] = {
  "save_to_file",
  "write_to_stream(file)",
  "write_to_stream(null)",
  "from_file",
  "reader(file, 64 Ki)",
  "load+from_bytes",
  "to_bytes",
  "from_bytes",
  "write(2)+fsync of its text",
};

typedef struct
{
  double wall_ns;
  double cpu_ns;
  long   peak_kib;
  long   start_kib;
  int    peak_reset;
  int    ok;
} Result;

static double
thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The resident set now, in KiB. */
static long
current_rss_kib (void)
{
  g_autofree char *statm = NULL;
  long pages = 0, resident = 0;

  if (g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL) &&
      sscanf (statm, "%ld %ld", &pages, &resident) == 2)
    return resident * (sysconf (_SC_PAGESIZE) / 1024);

  return 0;
}

/* Resets the peak resident set to the current one (Linux 4.0 and later);
 * returns FALSE where that is not possible. */
static gboolean
reset_peak_rss (void)
{
  FILE *clear_refs = fopen ("/proc/self/clear_refs", "w");
  gboolean ok;

  if (clear_refs == NULL)
    return FALSE;
  ok = fputs ("5", clear_refs) >= 0;
  return fclose (clear_refs) == 0 && ok;
}

/* The peak resident set since the reset, in KiB, or -1. */
static long
peak_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *hwm;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (hwm = strstr (status, "VmHWM:")) == NULL)
    return -1;

  return strtol (hwm + strlen ("VmHWM:"), NULL, 10);
}

static SerioBundle *
random_bundle (gsize n)
{
  SerioBundle *bundle = serio_bundle_new ();
  double *values = g_new (double, n);
  GRand *rand = g_rand_new_with_seed (20261201);

  for (gsize i = 0; i < n; i++)
    {
      guint64 bits = ((guint64) g_rand_int (rand) << 32) | g_rand_int (rand);

      /* no NaN: it would only shorten the text */
      if (((bits >> 52) & 0x7ff) == 0x7ff)
        bits &= ~(G_GUINT64_CONSTANT (1) << 62);
      memcpy (&values[i], &bits, sizeof bits);
    }

  serio_bundle_append (bundle, "weights", values, n);
  g_free (values);
  g_rand_free (rand);

  return bundle;
}

/* The whole file, read in pieces of 64 MiB: GLib 2.74's
 * g_file_load_bytes() fails on files of several GiB. */
static GBytes *
load_file (const char  *path,
           GError     **error)
{
  GStatBuf st;
  FILE *in;
  char *data;
  gsize len = 0;

  if (g_stat (path, &st) != 0 || (in = fopen (path, "rb")) == NULL)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path, g_strerror (errno));
      return NULL;
    }
  data = g_malloc (MAX (st.st_size, 1));
  while (len < (gsize) st.st_size)
    {
      size_t n = fread (data + len, 1, MIN ((gsize) st.st_size - len, (gsize) 64 << 20), in);

      if (n == 0)
        break;
      len += n;
    }
  fclose (in);

  return g_bytes_new_take (data, len);
}

/* What the kernel's side of a save of the file at @path costs: writes as
 * many bytes as it has (its first MiB over and over, from the cache) with
 * write(2) in pieces of 1 MiB into a new file beside it and starts writing
 * each 8 MiB to the disk, as a save does, syncs and removes it. No save of
 * that text can be faster. */
static gboolean
write_floor (const char  *path,
             GError     **error)
{
  g_autofree char *floor_path = g_strconcat (path, ".floor", NULL);
  g_autofree char *chunk = g_malloc (1024 * 1024);
  GStatBuf st;
  gsize chunk_len;
  goffset left;
#ifdef HAVE_SYNC_FILE_RANGE
  goffset behind = 0;
#endif
  int in, out;
  gboolean ok = TRUE;

  if (g_stat (path, &st) != 0 || (in = g_open (path, O_RDONLY, 0)) < 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path, g_strerror (errno));
      return FALSE;
    }
  chunk_len = MAX (read (in, chunk, 1024 * 1024), 0);
  close (in);
  if (chunk_len == 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: nothing to read", path);
      return FALSE;
    }
  out = g_open (floor_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (out < 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", floor_path, g_strerror (errno));
      return FALSE;
    }

  for (left = st.st_size; left > 0 && ok; )
    {
      gssize written = write (out, chunk, MIN ((goffset) chunk_len, left));

      ok = written > 0;
      left -= MAX (written, 0);
#ifdef HAVE_SYNC_FILE_RANGE
      if (ok && (st.st_size - left) - behind >= 8 * 1024 * 1024)
        {
          sync_file_range (out, behind, (st.st_size - left) - behind, SYNC_FILE_RANGE_WRITE);
          behind = st.st_size - left;
        }
#endif
    }
  ok = ok && fsync (out) == 0;
  if (!ok)
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", floor_path, g_strerror (errno));
  close (out);
  g_unlink (floor_path);

  return ok;
}

/* Runs @op in the child; the file exists for the reading operations.
 * @threads, when not NULL, is the child's SERIO_THREADS. */
G_GNUC_NORETURN static void
run_child (Op          op,
           gsize       n,
           const char *path,
           const char *threads,
           int         fd)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GError) error = NULL;
  struct rusage usage;
  Result result = { 0 };
  gint64 start;
  double cpu;

  if (threads != NULL)
    g_setenv ("SERIO_THREADS", threads, TRUE);

  if (op == OP_SAVE_TO_FILE || op == OP_WRITE_TO_STREAM || op == OP_WRITE_TO_NULL || op == OP_TO_BYTES)
    bundle = random_bundle (n);
  if (op == OP_PARSE_BYTES)
    text = load_file (path, &error);

  /* The peak is the operation's, not that of making the bundle. */
  result.peak_reset = reset_peak_rss ();
  result.start_kib = current_rss_kib ();
  start = g_get_monotonic_time ();
  cpu = thread_cpu_ns ();

  switch (op)
    {
    case OP_SAVE_TO_FILE:
      result.ok = serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error);
      break;

    case OP_WRITE_TO_STREAM:
      {
        g_autoptr(GFileOutputStream) out = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);

        result.ok = out != NULL &&
                    serio_bundle_write_to_stream (bundle, G_OUTPUT_STREAM (out), SERIO_SAVE_FLAGS_NONE,
                                                  NULL, &error) &&
                    g_output_stream_close (G_OUTPUT_STREAM (out), NULL, &error);
      }
      break;

    case OP_WRITE_TO_NULL:
      {
        g_autoptr(GFile) null = g_file_new_for_path ("/dev/null");
        g_autoptr(GFileOutputStream) out = g_file_append_to (null, G_FILE_CREATE_NONE, NULL, &error);

        result.ok = out != NULL &&
                    serio_bundle_write_to_stream (bundle, G_OUTPUT_STREAM (out), SERIO_SAVE_FLAGS_NONE,
                                                  NULL, &error);
      }
      break;

    case OP_FROM_FILE:
      bundle = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);
      result.ok = bundle != NULL && serio_bundle_get_n_arrays (bundle) == 1;
      break;

    case OP_READER_SCAN:
      {
        g_autoptr(GFileInputStream) in = g_file_read (file, NULL, &error);
        g_autoptr(SerioReader) reader = in != NULL ? serio_reader_new (G_INPUT_STREAM (in)) : NULL;
        static double chunk[64 * 1024];
        gsize total = 0;

        while (reader != NULL && serio_reader_next (reader, NULL, &error))
          {
            gsize got;

            do
              {
                if (!serio_reader_read_values (reader, chunk, G_N_ELEMENTS (chunk), &got, NULL, &error))
                  break;
                total += got;
              }
            while (got > 0);
          }
        result.ok = error == NULL && total == n;
      }
      break;

    case OP_FROM_BYTES:
      {
        g_autoptr(GBytes) contents = load_file (path, &error);

        bundle = contents != NULL ? serio_bundle_new_from_bytes (contents, &error) : NULL;
        result.ok = bundle != NULL;
      }
      break;

    case OP_TO_BYTES:
      text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
      result.ok = g_bytes_get_size (text) > n;
      break;

    case OP_WRITE_FLOOR:
      result.ok = write_floor (path, &error);
      break;

    case OP_PARSE_BYTES:
      {
        g_autoptr(SerioBundle) parsed = text != NULL ? serio_bundle_new_from_bytes (text, &error) : NULL;

        result.ok = parsed != NULL && serio_bundle_get_n_arrays (parsed) == 1;
      }
      break;

    case N_OPS:
    default:
      g_assert_not_reached ();
    }

  result.cpu_ns = (thread_cpu_ns () - cpu) / n;
  result.wall_ns = (g_get_monotonic_time () - start) * 1000.0 / n;
  getrusage (RUSAGE_SELF, &usage);
  result.peak_kib = result.peak_reset && peak_rss_kib () > 0 ? peak_rss_kib () : usage.ru_maxrss;

  if (error != NULL)
    g_printerr ("%s: %s\n", op_names[op], error->message);

  if (write (fd, &result, sizeof result) != sizeof result)
    _exit (2);
  _exit (0);
}

static gboolean
measure (Op          op,
         gsize       n,
         const char *path,
         const char *threads,
         Result     *result)
{
  int fds[2];
  pid_t pid;
  int status;

  if (pipe (fds) != 0)
    return FALSE;

  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      close (fds[0]);
      run_child (op, n, path, threads, fds[1]);
    }
  close (fds[1]);

  if (read (fds[0], result, sizeof *result) != sizeof *result)
    result->ok = FALSE;
  close (fds[0]);
  waitpid (pid, &status, 0);

  return result->ok && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* The fastest of @repeat runs (the least disturbed on a shared machine),
 * with the largest peak RSS of them. */
static gboolean
measure_best (Op          op,
              gsize       n,
              const char *path,
              const char *threads,
              guint       repeat,
              Result     *best)
{
  long peak_kib = 0, above_kib = 0;

  for (guint r = 0; r < MAX (repeat, 1); r++)
    {
      Result result = { 0 };

      if (!measure (op, n, path, threads, &result))
        return FALSE;
      peak_kib = MAX (peak_kib, result.peak_kib);
      above_kib = MAX (above_kib, result.peak_kib - result.start_kib);
      if (r == 0 || result.wall_ns < best->wall_ns)
        *best = result;
    }
  best->peak_kib = peak_kib;
  best->start_kib = peak_kib - above_kib;

  return TRUE;
}

/* Runs @argv (a serio command, or Python) with its standard output to
 * /dev/null, and gives its wall time and peak RSS (wait4's ru_maxrss). */
static gboolean
run_command (const char * const *argv,
             double             *wall_s,
             long               *peak_kib,
             int                *exit_status)
{
  struct rusage usage;
  gint64 start = g_get_monotonic_time ();
  int status;
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      int null = open ("/dev/null", O_WRONLY);

      if (null >= 0)
        {
          dup2 (null, STDOUT_FILENO);
          dup2 (null, STDERR_FILENO);
        }
      execv (argv[0], (char * const *) argv);
      _exit (127);
    }
  if (pid < 0 || wait4 (pid, &status, 0, &usage) != pid)
    return FALSE;

  *wall_s = (g_get_monotonic_time () - start) / 1e6;
  *peak_kib = usage.ru_maxrss;
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : -1;

  return TRUE;
}

/* np.save and np.load of @n random float64 values: prints one line each,
 * in the format of the other rows. */
static void
measure_numpy (gsize       n,
               const char *dir)
{
  static const char script[] =
    "import resource, sys, time\n"
    "import numpy as np\n"
    "n, path, op = int(sys.argv[1]), sys.argv[2], sys.argv[3]\n"
    "if op == 'save':\n"
    "    a = np.random.default_rng(1).integers(0, 2**62, n, dtype=np.uint64).view(np.float64)\n"
    "    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    t = time.perf_counter(); np.save(path, a); t = time.perf_counter() - t\n"
    "else:\n"
    "    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    t = time.perf_counter(); a = np.load(path); t = time.perf_counter() - t\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(t * 1e9 / n, peak / 1024, (peak - base) / 1024)\n";
  g_autofree char *npy = g_build_filename (dir, "serio-bench-stream.npy", NULL);
  g_autofree char *count = g_strdup_printf ("%" G_GSIZE_FORMAT, n);
  const char *ops[] = { "save", "load" };

  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    return;

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      const char *argv[] = { "/usr/bin/python3", "-c", script, count, npy, ops[i], NULL };
      g_autofree char *out = NULL;
      double ns, peak, above;
      int status;

      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                         &out, NULL, &status, NULL) ||
          !g_spawn_check_wait_status (status, NULL) ||
          sscanf (out, "%lf %lf %lf", &ns, &peak, &above) != 3)
        {
          g_print ("  %-26s %11" G_GSIZE_FORMAT "   (NumPy not available)\n", ops[i], n);
          break;
        }
      g_print ("  %-26s %11" G_GSIZE_FORMAT " %10.1f %10s %10.1f %10.1f\n",
               i == 0 ? "numpy.save" : "numpy.load", n, ns, "", peak, above);
    }
  g_unlink (npy);
}

/* The serio commands on the file at @path, each against serio check. */
static int
measure_tool (const char *tool,
              gsize       n,
              const char *path,
              const char *dir)
{
  g_autofree char *npy = g_build_filename (dir, "serio-bench-stream-tool.npy", NULL);
  g_autofree char *back = g_build_filename (dir, "serio-bench-stream-back.serio", NULL);
  const char * const commands[][6] = {
    { "check", path, NULL },
    { "info", path, NULL },
    { "checksum", path, NULL },
    { "cat", path, NULL },
    { "cat", "--name", "nothing-called-this", path, NULL },
    { "diff", path, path, NULL },
    { "convert", path, npy, NULL },
    { "convert", npy, back, NULL },
  };
  const char *labels[] = { "serio check", "serio info", "serio checksum", "serio cat",
                           "serio cat --name (skips)", "serio diff (same file)",
                           "serio convert -> .npy", "serio convert .npy ->" };
  double check_s = 0;
  int failures = 0;

  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    {
      const char *argv[8] = { tool };
      double wall_s = 0;
      long peak_kib = 0;
      int exit_status = -1;
      gboolean ok;

      for (guint k = 0; commands[c][k] != NULL; k++)
        argv[k + 1] = commands[c][k];

      /* cat --name of a missing array exits 1 after reading the whole file */
      ok = run_command (argv, &wall_s, &peak_kib, &exit_status) &&
           exit_status == (c == 4 ? 1 : 0);
      if (c == 0)
        check_s = wall_s;

      if (!ok)
        {
          g_print ("  %-26s %11" G_GSIZE_FORMAT "   failed\n", labels[c], n);
          failures++;
          continue;
        }
      g_print ("  %-26s %11" G_GSIZE_FORMAT " %10.1f %10s %10.1f %10s  %.2fx check%s\n",
               labels[c], n, wall_s * 1e9 / n, "", peak_kib / 1024.0, "",
               check_s > 0 ? wall_s / check_s : 0.0,
               peak_kib <= 64 * 1024 ? "" : "  ABOVE 64 MiB");
    }
  g_unlink (npy);
  g_unlink (back);

  return failures;
}

/* Touches most of the free memory once, in a child, and gives it back. On
 * a virtual machine the first touch of a page since boot can cost
 * microseconds (the host backs it then), which would make the first large
 * measurement look slow. Returns the GiB touched. */
static guint
warm_memory (void)
{
  g_autofree char *meminfo = NULL;
  const char *line;
  guint64 available_kib = 0;
  guint gib;
  pid_t pid;

  if (!g_file_get_contents ("/proc/meminfo", &meminfo, NULL, NULL) ||
      (line = strstr (meminfo, "MemAvailable:")) == NULL)
    return 0;
  available_kib = g_ascii_strtoull (line + strlen ("MemAvailable:"), NULL, 10);
  if (available_kib < 4 * 1024 * 1024)
    return 0;
  gib = (guint) MIN (available_kib / (1024 * 1024) - 3, 20);

  pid = fork ();
  if (pid == 0)
    {
      for (guint i = 0; i < gib * 4; i++)
        {
          char *block = malloc (256 << 20);

          if (block == NULL)
            break;
          memset (block, 1, 256 << 20);
        }
      _exit (0);
    }
  if (pid > 0)
    waitpid (pid, NULL, 0);

  return gib;
}

/* The figures of issue 8 (see the top of the file). */
static int
run_scale (char      **sizes,
           const char *path,
           const char *dir,
           const char *tool,
           guint       repeat)
{
  const Op ops[] = { OP_SAVE_TO_FILE, OP_FROM_FILE, OP_TO_BYTES, OP_PARSE_BYTES };
  g_autofree char *all = g_strdup_printf ("%u", g_get_num_processors ());
  double first[G_N_ELEMENTS (ops)] = { 0 };
  int failures = 0;
  guint warmed = warm_memory ();
  Result floor_result = { 0 }, save_one = { 0 }, save_many = { 0 };

  g_print ("# memory warmed first: %u GiB touched once; each figure the fastest of %u runs\n",
           warmed, MAX (repeat, 1));
  g_print ("# 1 thread: SERIO_THREADS=1; %s threads: SERIO_THREADS=%s. ns/value in wall time; "
           "flat = ns/value over that of the first size; peak and above-start RSS in MiB\n",
           all, all);
  g_print ("# %-24s %11s %10s %10s %10s %10s  %s\n",
           "operation", "values", "1 thr ns", "cpu ns", "peak MiB", "above MiB", "flat, scaling, bound");

  for (guint s = 0; sizes[s] != NULL; s++)
    {
      gsize n = g_ascii_strtoull (sizes[s], NULL, 10);

      if (n == 0)
        continue;

      for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
        {
          Result one = { 0 }, many = { 0 };
          g_autofree char *bound = NULL;

          /* from_file and from_bytes read the file save_to_file wrote. */
          if (!measure_best (ops[i], n, path, "1", repeat, &one) ||
              !measure_best (ops[i], n, path, all, repeat, &many))
            {
              g_print ("  %-24s %11" G_GSIZE_FORMAT "   failed\n", op_names[ops[i]], n);
              failures++;
              continue;
            }
          if (first[i] == 0)
            first[i] = one.wall_ns;

          if (ops[i] == OP_SAVE_TO_FILE)
            {
              save_one = one;
              save_many = many;
              bound = g_strdup_printf ("above <= 64 MiB: %s",
                                       one.peak_kib - one.start_kib <= 64 * 1024 &&
                                       many.peak_kib - many.start_kib <= 64 * 1024 ? "yes" : "NO");
            }
          else if (ops[i] == OP_FROM_FILE)
            bound = g_strdup_printf ("peak <= 8 B/value + 64 MiB: %s",
                                     MAX (one.peak_kib, many.peak_kib) <= (long) (n * 8 / 1024) + 64 * 1024 ?
                                     "yes" : "NO");

          g_print ("  %-24s %11" G_GSIZE_FORMAT " %10.1f %10.1f %10.1f %10.1f  flat %.2fx, %s threads %.2fx faster%s%s\n",
                   op_names[ops[i]], n, one.wall_ns, one.cpu_ns,
                   MAX (one.peak_kib, many.peak_kib) / 1024.0,
                   MAX (one.peak_kib - one.start_kib, many.peak_kib - many.start_kib) / 1024.0,
                   one.wall_ns / first[i], all, one.wall_ns / many.wall_ns,
                   bound != NULL ? ", " : "", bound != NULL ? bound : "");

          /* The floor of a save: right after it, while its file is there. */
          if (ops[i] == OP_SAVE_TO_FILE)
            {
              if (measure_best (OP_WRITE_FLOOR, n, path, NULL, repeat, &floor_result))
                g_print ("  %-24s %11" G_GSIZE_FORMAT " %10.1f %10.1f %21s  a save's floor: "
                         "save_to_file with 1 thread %.2fx it, with %s threads %.2fx\n",
                         op_names[OP_WRITE_FLOOR], n, floor_result.wall_ns, floor_result.cpu_ns, "",
                         save_one.wall_ns / floor_result.wall_ns, all, save_many.wall_ns / floor_result.wall_ns);
              else
                failures++;
            }
        }

      measure_numpy (n, dir);
      if (tool != NULL)
        failures += measure_tool (tool, n, path, dir);
    }

  return failures;
}

static char *
cpu_model (void)
{
  g_autofree char *info = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/cpuinfo", &info, NULL, NULL))
    return g_strdup ("unknown CPU");

  lines = g_strsplit (info, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], "model name"))
        {
          const char *colon = strchr (lines[i], ':');

          return g_strstrip (g_strdup (colon != NULL ? colon + 1 : lines[i]));
        }
    }

  return g_strdup ("unknown CPU");
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *sizes_arg = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *tool = NULL;
  gboolean scale = FALSE;
  int repeat = 3;
  g_autofree char *cpu = NULL;
  g_autofree char *path = NULL;
  g_auto(GStrv) sizes = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  const GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_arg, "Numbers of values, comma-separated", "N,N" },
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "Where to write the file", "DIR" },
    { "scale", 0, 0, G_OPTION_ARG_NONE, &scale,
      "Flat cost, thread scaling, memory bounds and the serio commands (default sizes 10^6, 10^8, 2x10^8)", NULL },
    { "tool", 0, 0, G_OPTION_ARG_FILENAME, &tool, "The serio tool to measure with --scale", "PATH" },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "With --scale, the best of N runs of each operation (default 3)", "N" },
    { NULL }
  };
  int failures = 0;

  context = g_option_context_new ("- time and peak memory of the file and stream paths");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }

  sizes = g_strsplit (sizes_arg != NULL ? sizes_arg : scale ? "1000000,100000000,200000000" : "1000000,10000000",
                      ",", -1);
  if (dir == NULL)
    dir = g_strdup (g_get_tmp_dir ());
  path = g_build_filename (dir, "serio-bench-stream.serio", NULL);
  cpu = cpu_model ();
  if (tool == NULL && g_file_test (SERIO_BENCH_TOOL, G_FILE_TEST_IS_EXECUTABLE))
    tool = g_strdup (SERIO_BENCH_TOOL);

  g_print ("# serio-bench-stream, %s (%u processors), libserio %s, SERIO_THREADS=%s, file %s\n",
           cpu, g_get_num_processors (), SERIO_VERSION,
           g_getenv ("SERIO_THREADS") != NULL ? g_getenv ("SERIO_THREADS") : "(unset)", path);

  if (scale)
    {
      failures = run_scale (sizes, path, dir, tool, repeat);
      g_unlink (path);
      return failures == 0 ? 0 : 1;
    }
  g_print ("# %-22s %11s %12s %12s %10s %14s\n",
           "operation", "values", "wall ns/val", "cpu ns/val", "peak MiB", "above start MiB");

  for (guint s = 0; sizes[s] != NULL; s++)
    {
      gsize n = g_ascii_strtoull (sizes[s], NULL, 10);
      const Op order[] = { OP_SAVE_TO_FILE, OP_WRITE_TO_STREAM, OP_WRITE_TO_NULL, OP_FROM_FILE,
                           OP_READER_SCAN, OP_FROM_BYTES };

      if (n == 0)
        continue;

      for (gsize i = 0; i < G_N_ELEMENTS (order); i++)
        {
          Result r = { 0 };

          if (!measure (order[i], n, path, NULL, &r))
            {
              g_print ("  %-22s %11" G_GSIZE_FORMAT "   failed\n", op_names[order[i]], n);
              failures++;
              continue;
            }

          g_print ("  %-22s %11" G_GSIZE_FORMAT " %12.1f %12.1f %10.1f %14.1f\n",
                   op_names[order[i]], n, r.wall_ns, r.cpu_ns,
                   r.peak_kib / 1024.0, (r.peak_kib - r.start_kib) / 1024.0);
        }
    }

  g_unlink (path);

  return failures == 0 ? 0 : 1;
}
