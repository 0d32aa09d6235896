/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bench.c: libserio against the usual ways of saving doubles
 *
 * Copyright 2026 The libserio authors
 *
 * One process, one run: for each data set and size, every codec writes the
 * same values and reads its own output back. A write starts from the
 * doubles (for libserio, from a bundle that already holds them, since
 * serio_bundle_to_bytes() is what is measured) and ends with one buffer
 * holding the encoded form; a read starts from that buffer and ends with
 * an array of doubles the caller owns. Freeing what a codec leaves behind
 * (its output, a document tree, a parser) happens after the clock stops,
 * for every codec alike.
 *
 * The figures are for a program that keeps serialising: glibc's malloc is
 * told to keep the memory it is given back (up to 32 MiB a block), so that
 * a repetition reuses warm pages instead of paying the kernel's page
 * faults again, however the codecs' allocations interleave. Without that,
 * glibc's adaptive mmap threshold makes whether a buffer is fresh depend on
 * which codec freed what before.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <serio.h>
#ifdef HAVE_JSON_GLIB
# include <json-glib/json-glib.h>
#endif
#ifdef HAVE_PEERS
# include "serio-bench-peers.h"
#endif

/* ------------------------------------------------------------------ */
/* Data sets                                                           */

/* xoshiro256** (Blackman and Vigna), seeded through splitmix64, so that
 * every run on every machine measures the same values. */
typedef struct
{
  guint64 s[4];
} Rng;

static inline guint64
rotl (guint64 x,
      int     k)
{
  return (x << k) | (x >> (64 - k));
}

static void
rng_seed (Rng     *rng,
          guint64  seed)
{
  for (int i = 0; i < 4; i++)
    {
      guint64 z = (seed += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));

      z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
      z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
      rng->s[i] = z ^ (z >> 31);
    }
}

static guint64
rng_next (Rng *rng)
{
  guint64 *s = rng->s;
  guint64 result = rotl (s[1] * 5, 7) * 9;
  guint64 t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);

  return result;
}

/* Uniform in [-1, 1), with 53 random bits. */
static double
rng_symmetric (Rng *rng)
{
  return (double) (rng_next (rng) >> 11) * 0x1p-52 - 1.0;
}

/* normal(0, 0.05), by Marsaglia's polar method: the values a trained
 * network's weights look like. */
static double *
make_weights (gsize n)
{
  double *values = g_new (double, n);
  Rng rng;

  rng_seed (&rng, G_GUINT64_CONSTANT (20260101));

  for (gsize i = 0; i < n; i += 2)
    {
      double u, v, s, f;

      do
        {
          u = rng_symmetric (&rng);
          v = rng_symmetric (&rng);
          s = u * u + v * v;
        }
      while (s >= 1.0 || s == 0.0);

      f = 0.05 * sqrt (-2.0 * log (s) / s);
      values[i] = u * f;
      if (i + 1 < n)
        values[i + 1] = v * f;
    }

  return values;
}

/* Uniformly random bit patterns, NaNs drawn again: every exponent, so
 * subnormals, huge values and integers alike. */
static double *
make_domain (gsize n)
{
  const guint64 exp_mask = G_GUINT64_CONSTANT (0x7FF0000000000000);
  double *values = g_new (double, n);
  Rng rng;

  rng_seed (&rng, G_GUINT64_CONSTANT (0xd0a1));

  for (gsize i = 0; i < n; i++)
    {
      guint64 bits;

      do
        bits = rng_next (&rng);
      while ((bits & exp_mask) == exp_mask && (bits & ~(exp_mask | (G_GUINT64_CONSTANT (1) << 63))) != 0);

      memcpy (&values[i], &bits, sizeof bits);
    }

  return values;
}

typedef struct
{
  const char *name;
  const char *description;
  double   *(*make) (gsize n);
} DataSet;

static const DataSet data_sets[] = {
  { "weights", "normal(0, 0.05) doubles", make_weights },
  { "domain", "uniformly random 64-bit patterns, no NaN", make_domain },
};

/* ------------------------------------------------------------------ */
/* Codecs                                                              */

/* What one write or read hands back. After a write, @data and @size are
 * the encoded bytes; after a read, the decoded doubles. */
typedef struct
{
  gconstpointer  data;
  gsize          size;
  gpointer       owner;        /* keeps @data alive */
  GDestroyNotify free_owner;
  gpointer       garbage;      /* left over, freed once the clock stops */
  GDestroyNotify free_garbage;
} Output;

/* A writer that leaves @size unknown (NUL-terminated text whose length
 * the API does not return) sets it to this; it is measured untimed. */
#define SIZE_IS_STRLEN G_MAXSIZE

static void
output_drop_garbage (Output *out)
{
  if (out->garbage != NULL)
    out->free_garbage (out->garbage);
  out->garbage = NULL;
}

static void
output_clear (Output *out)
{
  output_drop_garbage (out);
  if (out->owner != NULL)
    out->free_owner (out->owner);
  memset (out, 0, sizeof *out);
}

static void
output_take (Output         *out,
             gpointer        data,
             gsize           size,
             GDestroyNotify  free_data)
{
  out->data = data;
  out->size = size;
  out->owner = data;
  out->free_owner = free_data;
}

/* The name of the C++ peers' codec: Dragonbox writes, fast_float reads. */
#define PEERS_CODEC "dragonbox-fastfloat"

/* The width of the codec column. */
#define CODEC_WIDTH 19

typedef struct
{
  const char *name;
  const char *description;
  /* Untimed set-up from the input values, e.g. libserio's bundle. */
  gpointer  (*prepare)   (const double *values,
                          gsize         n);
  GDestroyNotify unprepare;
  void      (*write)     (gpointer      prepared,
                          const double *values,
                          gsize         n,
                          Output       *out);
  gboolean  (*read)      (const char   *data,
                          gsize         size,
                          gsize         n,
                          Output       *out,
                          GError      **error);
  /* Larger sizes are measured only when the codec is asked for by name
   * (0: no limit). */
  gsize      default_max_n;
} Codec;

static gboolean
check_count (gsize    got,
             gsize    n,
             GError **error)
{
  if (got == n)
    return TRUE;

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               "read %" G_GSIZE_FORMAT " values instead of %" G_GSIZE_FORMAT, got, n);
  return FALSE;
}

/* libserio */

static gpointer
serio_prepare (const double *values,
               gsize         n)
{
  SerioBundle *bundle = serio_bundle_new ();

  serio_bundle_append (bundle, "w", values, n);
  return bundle;
}

/* The text in a GBytes, as the peers are given it: with its size, which
 * from_string() would find with a pass over it of its own (4-15 % of a
 * read). */
static void
write_bytes (gpointer        prepared,
             SerioSaveFlags  flags,
             Output         *out)
{
  gsize size;
  gpointer data = g_bytes_unref_to_data (serio_bundle_to_bytes (prepared, flags), &size);

  output_take (out, data, size, g_free);
}

static void
serio_write (gpointer      prepared,
             const double *values,
             gsize         n,
             Output       *out)
{
  write_bytes (prepared, SERIO_SAVE_FLAGS_PLAIN, out);
}

static gboolean
serio_read (const char  *data,
            gsize        size,
            gsize        n,
            Output      *out,
            GError     **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  SerioBundle *bundle = serio_bundle_new_from_bytes (bytes, error);
  gsize n_values = 0;

  if (bundle == NULL)
    return FALSE;

  out->owner = bundle;
  out->free_owner = g_object_unref;

  if (serio_bundle_get_n_arrays (bundle) != 1)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "read %u arrays instead of 1", serio_bundle_get_n_arrays (bundle));
      return FALSE;
    }

  out->data = serio_bundle_get_values (bundle, 0, &n_values);
  out->size = n_values * sizeof (double);

  return check_count (n_values, n, error);
}

/* libserio, sealed: the same text between the seal's two records, hashed
 * with XXH3-64 as it is written and verified as it is read (by
 * serio_read(), as a plain text). */

static void
serio_sealed_write (gpointer      prepared,
                    const double *values,
                    gsize         n,
                    Output       *out)
{
  write_bytes (prepared, SERIO_SAVE_FLAGS_NONE, out);
}

/* Comma-separated text through libc or GLib: one buffer, sized once for
 * the longest token and trimmed at the end, as libserio's own writer
 * does; one array of n doubles on reading. */

/* "-2.2250738585072014e-308", "-0x1.fffffffffffffp+1023" */
#define LIBC_TOKEN_MAX 24

typedef char  *(*FormatFunc) (char   *out,
                              gsize   room,
                              double  value);
typedef double (*ParseFunc)  (const char  *text,
                              char       **end);

static inline void
write_list (const double *values,
            gsize         n,
            FormatFunc    format,
            Output       *out)
{
  gsize bound = n * (LIBC_TOKEN_MAX + 1) + 1;
  char *buffer = g_malloc (bound);
  char *p = buffer;

  for (gsize i = 0; i < n; i++)
    {
      if (i > 0)
        *p++ = ',';
      p = format (p, bound - (p - buffer), values[i]);
    }

  *p = '\0';
  output_take (out, g_realloc (buffer, p - buffer + 1), p - buffer, g_free);
}

static inline gboolean
read_list (const char  *text,
           gsize        n,
           ParseFunc    parse,
           Output      *out,
           GError     **error)
{
  double *values = g_new (double, n);
  const char *p = text;

  output_take (out, values, n * sizeof (double), g_free);

  for (gsize i = 0; i < n; i++)
    {
      char *end;

      values[i] = parse (p, &end);
      if (end == p || *end != (i + 1 < n ? ',' : '\0'))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "value %" G_GSIZE_FORMAT " does not parse", i + 1);
          return FALSE;
        }
      p = end + 1;
    }

  return TRUE;
}

static char *
format_g17 (char   *out,
            gsize   room,
            double  value)
{
  return out + snprintf (out, room, "%.17g", value);
}

static char *
format_hex (char   *out,
            gsize   room,
            double  value)
{
  return out + snprintf (out, room, "%a", value);
}

static char *
format_g_ascii (char   *out,
                gsize   room,
                double  value)
{
  g_ascii_dtostr (out, room, value);
  return out + strlen (out);
}

static void
g17_write (gpointer      prepared,
           const double *values,
           gsize         n,
           Output       *out)
{
  write_list (values, n, format_g17, out);
}

static void
hex_write (gpointer      prepared,
           const double *values,
           gsize         n,
           Output       *out)
{
  write_list (values, n, format_hex, out);
}

static void
g_ascii_write (gpointer      prepared,
               const double *values,
               gsize         n,
               Output       *out)
{
  write_list (values, n, format_g_ascii, out);
}

static gboolean
strtod_read (const char  *data,
             gsize        size,
             gsize        n,
             Output      *out,
             GError     **error)
{
  return read_list (data, n, strtod, out, error);
}

static gboolean
g_ascii_read (const char  *data,
              gsize        size,
              gsize        n,
              Output      *out,
              GError     **error)
{
  return read_list (data, n, g_ascii_strtod, out, error);
}

/* json-glib: a JsonArray of doubles through JsonGenerator and JsonParser. */

#ifdef HAVE_JSON_GLIB
static void
json_write (gpointer      prepared,
            const double *values,
            gsize         n,
            Output       *out)
{
  JsonArray *array = json_array_sized_new (n);
  JsonNode *root = json_node_new (JSON_NODE_ARRAY);
  JsonGenerator *generator = json_generator_new ();
  char *text;
  gsize len;

  for (gsize i = 0; i < n; i++)
    json_array_add_double_element (array, values[i]);

  json_node_take_array (root, array);
  /* The generator keeps its own copy of the root, sharing the array. */
  json_generator_set_root (generator, root);
  json_node_unref (root);

  text = json_generator_to_data (generator, &len);
  output_take (out, text, len, g_free);
  out->garbage = generator;
  out->free_garbage = g_object_unref;
}

static gboolean
json_read (const char  *data,
           gsize        size,
           gsize        n,
           Output      *out,
           GError     **error)
{
  JsonParser *parser = json_parser_new ();
  JsonNode *root;
  JsonArray *array;
  double *values;

  out->garbage = parser;
  out->free_garbage = g_object_unref;

  if (!json_parser_load_from_data (parser, data, size, error))
    return FALSE;

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_ARRAY (root))
    return check_count (0, n, error);

  array = json_node_get_array (root);
  if (!check_count (json_array_get_length (array), n, error))
    return FALSE;

  values = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    values[i] = json_array_get_double_element (array, i);

  output_take (out, values, n * sizeof (double), g_free);
  return TRUE;
}
#endif

/* GVariant "ad": the binary serialization, and its text form. Reading
 * copies the doubles out of the variant, so that, as for every codec, the
 * caller ends up owning them. */

static void
gvariant_write (gpointer      prepared,
                const double *values,
                gsize         n,
                Output       *out)
{
  GVariant *variant = g_variant_ref_sink (g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE,
                                                                     values, n, sizeof (double)));

  out->data = g_variant_get_data (variant);
  out->size = g_variant_get_size (variant);
  out->owner = variant;
  out->free_owner = (GDestroyNotify) g_variant_unref;
}

static gboolean
copy_from_variant (GVariant  *variant,
                   gsize      n,
                   Output    *out,
                   GError   **error)
{
  gsize n_values;
  gconstpointer values = g_variant_get_fixed_array (variant, &n_values, sizeof (double));

  out->garbage = variant;
  out->free_garbage = (GDestroyNotify) g_variant_unref;

  if (!check_count (n_values, n, error))
    return FALSE;

  output_take (out, g_memdup2 (values, n * sizeof (double)), n * sizeof (double), g_free);
  return TRUE;
}

static gboolean
gvariant_read (const char  *data,
               gsize        size,
               gsize        n,
               Output      *out,
               GError     **error)
{
  GVariant *variant = g_variant_new_from_data (G_VARIANT_TYPE ("ad"), data, size,
                                               FALSE, NULL, NULL);

  return copy_from_variant (g_variant_ref_sink (variant), n, out, error);
}

static void
gvariant_text_write (gpointer      prepared,
                     const double *values,
                     gsize         n,
                     Output       *out)
{
  GVariant *variant = g_variant_ref_sink (g_variant_new_fixed_array (G_VARIANT_TYPE_DOUBLE,
                                                                     values, n, sizeof (double)));

  output_take (out, g_variant_print (variant, FALSE), SIZE_IS_STRLEN, g_free);
  out->garbage = variant;
  out->free_garbage = (GDestroyNotify) g_variant_unref;
}

static gboolean
gvariant_text_read (const char  *data,
                    gsize        size,
                    gsize        n,
                    Output      *out,
                    GError     **error)
{
  GVariant *variant = g_variant_parse (G_VARIANT_TYPE ("ad"), data, data + size, NULL, error);

  if (variant == NULL)
    return FALSE;

  return copy_from_variant (variant, n, out, error);
}

/* The C++ peers (serio-bench-peers.cc): shortest round-trip decimals,
 * comma-separated, written by fmt's Dragonbox and read by fast_float. */

#ifdef HAVE_PEERS
static void
dragonbox_write (gpointer      prepared,
                 const double *values,
                 gsize         n,
                 Output       *out)
{
  gsize size = 0;
  char *text = serio_bench_dragonbox_write (values, n, &size);

  if (text == NULL)
    g_error ("dragonbox: out of memory for %" G_GSIZE_FORMAT " values", n);
  output_take (out, text, size, free);
}

static gboolean
fastfloat_read (const char  *data,
                gsize        size,
                gsize        n,
                Output      *out,
                GError     **error)
{
  double *values = g_new (double, n);
  gsize n_read;

  output_take (out, values, n * sizeof (double), g_free);
  n_read = serio_bench_fastfloat_read (data, size, values, n);
  if (n_read != n)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "value %" G_GSIZE_FORMAT " does not parse", n_read + 1);
      return FALSE;
    }

  return TRUE;
}
#endif

/* memcpy: the floor, what any format costs at the least. */

static void
memcpy_write (gpointer      prepared,
              const double *values,
              gsize         n,
              Output       *out)
{
  output_take (out, g_memdup2 (values, n * sizeof (double)), n * sizeof (double), g_free);
}

static gboolean
memcpy_read (const char  *data,
             gsize        size,
             gsize        n,
             Output      *out,
             GError     **error)
{
  if (!check_count (size / sizeof (double), n, error))
    return FALSE;

  output_take (out, g_memdup2 (data, size), size, g_free);
  return TRUE;
}

static const Codec codecs[] = {
  { "libserio", "serio_bundle_to_bytes / serio_bundle_new_from_bytes",
    serio_prepare, g_object_unref, serio_write, serio_read },
  { "libserio-sealed", "serio_bundle_to_bytes / serio_bundle_new_from_bytes (XXH3-64 seal)",
    serio_prepare, g_object_unref, serio_sealed_write, serio_read },
  { "printf-17g", "snprintf \"%.17g\" / strtod",
    NULL, NULL, g17_write, strtod_read },
  { "printf-a", "snprintf \"%a\" / strtod",
    NULL, NULL, hex_write, strtod_read },
  { "g_ascii", "g_ascii_dtostr / g_ascii_strtod",
    NULL, NULL, g_ascii_write, g_ascii_read },
#ifdef HAVE_PEERS
  { PEERS_CODEC, "fmt::format_to(FMT_COMPILE(\"{}\")) = Dragonbox / fast_float::from_chars (C++)",
    NULL, NULL, dragonbox_write, fastfloat_read },
#endif
#ifdef HAVE_JSON_GLIB
  { "json-glib", "JsonArray + json_generator_to_data / json_parser_load_from_data",
    NULL, NULL, json_write, json_read },
#endif
  /* Close to a microsecond per value each way: at 10^6 values it would
   * double the length of a run. */
  { "gvariant-text", "g_variant_print / g_variant_parse of \"ad\"",
    NULL, NULL, gvariant_text_write, gvariant_text_read, 100000 },
  { "gvariant", "GVariant \"ad\", binary: g_variant_new_fixed_array / get_fixed_array + copy",
    NULL, NULL, gvariant_write, gvariant_read },
  { "memcpy", "g_memdup2 both ways (binary, the floor)",
    NULL, NULL, memcpy_write, memcpy_read },
};

/* ------------------------------------------------------------------ */
/* Measuring                                                           */

typedef struct
{
  double write_median, write_min;   /* ns per value */
  double read_median, read_min;
  double bytes_per_value;
  gsize  mismatches;
  char  *error;                     /* the read failed: why */
  gboolean skipped;
} Result;

/* The CPU time of this thread by default: on a shared machine, time spent
 * waiting for the CPU is not the codec's. --wall switches to wall time. */
static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static inline guint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (clock_id, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static int
compare_u64 (gconstpointer a,
             gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return (x > y) - (x < y);
}

static void
summarize (guint64 *times,
           guint    reps,
           gsize    n,
           double  *median,
           double  *min)
{
  double mid;

  qsort (times, reps, sizeof *times, compare_u64);
  mid = reps % 2 == 1 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2.0;
  *median = mid / n;
  *min = (double) times[0] / n;
}

/* Counts the values whose bit patterns differ. */
static gsize
count_mismatches (const double *expected,
                  const double *got,
                  gsize         n)
{
  gsize mismatches = 0;

  for (gsize i = 0; i < n; i++)
    mismatches += memcmp (&expected[i], &got[i], sizeof (double)) != 0;

  return mismatches;
}

/* One codec's measurement in progress. */
typedef struct
{
  const Codec *codec;
  Result      *result;
  gpointer     prepared;
  Output       encoded;
  Output       decoded;
  guint64     *write_times;
  guint64     *read_times;
  GError      *error;
} Trial;

static inline guint64
time_write (Trial        *trial,
            const double *values,
            gsize         n)
{
  guint64 start;

  output_clear (&trial->encoded);
  start = now_ns ();
  trial->codec->write (trial->prepared, values, n, &trial->encoded);
  return now_ns () - start;
}

static inline guint64
time_read (Trial *trial,
           gsize  n)
{
  guint64 start;

  output_clear (&trial->decoded);
  start = now_ns ();
  trial->codec->read (trial->encoded.data, trial->encoded.size, n,
                      &trial->decoded, &trial->error);
  return now_ns () - start;
}

/* Measures every codec whose result is not marked skipped. The codecs take
 * turns, one repetition each, rather than running all their repetitions in
 * a row: a burst of load from elsewhere on the machine then spreads over
 * all of them instead of shifting one codec's median. */
static void
measure (const Codec  **to_run,
         Result        *results,
         gsize          n_codecs,
         const double  *values,
         gsize          n,
         guint          reps)
{
  g_autofree Trial *trials = g_new0 (Trial, n_codecs);

  for (gsize i = 0; i < n_codecs; i++)
    {
      Trial *t = &trials[i];

      t->codec = to_run[i];
      t->result = &results[i];
      if (t->result->skipped)
        continue;
      t->prepared = t->codec->prepare != NULL ? t->codec->prepare (values, n) : NULL;
      t->write_times = g_new (guint64, reps);
      t->read_times = g_new (guint64, reps);
    }

  for (guint r = 0; r < reps; r++)
    {
      for (gsize i = 0; i < n_codecs; i++)
        {
          if (trials[i].result->skipped)
            continue;
          trials[i].write_times[r] = time_write (&trials[i], values, n);
          output_drop_garbage (&trials[i].encoded);
        }
    }

  for (gsize i = 0; i < n_codecs; i++)
    {
      Output *encoded = &trials[i].encoded;

      if (trials[i].result->skipped)
        continue;
      if (encoded->size == SIZE_IS_STRLEN)
        encoded->size = strlen (encoded->data);
      trials[i].result->bytes_per_value = (double) encoded->size / n;
    }

  for (guint r = 0; r < reps; r++)
    {
      for (gsize i = 0; i < n_codecs; i++)
        {
          if (trials[i].result->skipped || trials[i].error != NULL)
            continue;
          trials[i].read_times[r] = time_read (&trials[i], n);
          output_drop_garbage (&trials[i].decoded);
        }
    }

  for (gsize i = 0; i < n_codecs; i++)
    {
      Trial *t = &trials[i];
      Result *result = t->result;

      if (result->skipped)
        continue;

      summarize (t->write_times, reps, n, &result->write_median, &result->write_min);
      if (t->error != NULL)
        {
          result->error = g_strdup (t->error->message);
          result->read_median = result->read_min = NAN;
          result->mismatches = n;
        }
      else
        {
          summarize (t->read_times, reps, n, &result->read_median, &result->read_min);
          result->mismatches = count_mismatches (values, t->decoded.data, n);
        }

      output_clear (&t->decoded);
      output_clear (&t->encoded);
      if (t->prepared != NULL)
        t->codec->unprepare (t->prepared);
      g_free (t->write_times);
      g_free (t->read_times);
      g_clear_error (&t->error);
    }
}

/* ------------------------------------------------------------------ */
/* Memory: how far libserio's reader and writer raise the process's peak
 * resident set, measured with Linux's resettable high-water mark. */

static gssize
proc_status_kib (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;

  line = strstr (status, field);
  if (line == NULL)
    return -1;

  return g_ascii_strtoll (line + strlen (field), NULL, 10);
}

/* Returns the growth of the peak RSS during @func, in bytes, or -1 where
 * the system cannot tell. */
static gssize
peak_growth (GDestroyNotify func,
             gpointer       data)
{
  gssize before;
  FILE *clear_refs;
  gboolean reset;

#ifdef __GLIBC__
  /* Hand freed heap back to the system, so that it is counted again when
   * @func reuses it. */
  malloc_trim (0);
#endif
  before = proc_status_kib ("VmRSS:");
  if (before < 0)
    return -1;

  /* "5" resets VmHWM to the current RSS (Linux 4.0). */
  clear_refs = fopen ("/proc/self/clear_refs", "w");
  if (clear_refs == NULL)
    return -1;
  reset = fputs ("5", clear_refs) >= 0;
  reset = fclose (clear_refs) == 0 && reset;
  if (!reset)
    return -1;

  func (data);

  return (proc_status_kib ("VmHWM:") - before) * 1024;
}

static void
parse_and_free (gpointer data)
{
  g_autoptr(GError) error = NULL;
  SerioBundle *bundle = serio_bundle_new_from_string (data, &error);

  g_assert_no_error (error);
  g_object_unref (bundle);
}

static void
serialize_and_free (gpointer data)
{
  g_free (serio_bundle_to_string (data, SERIO_SAVE_FLAGS_PLAIN));
}

static void
print_memory (const double *values,
              gsize         n)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *text = NULL;
  gssize from_peak, to_peak;
  double mib = 1024.0 * 1024.0;

  serio_bundle_append (bundle, "w", values, n);
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);

  to_peak = peak_growth (serialize_and_free, bundle);
  from_peak = peak_growth (parse_and_free, text);
  if (from_peak < 0 || to_peak < 0)
    {
      printf ("libserio peak memory: not measurable here (needs /proc/self/clear_refs)\n");
      return;
    }

  printf ("libserio peak RSS growth: from_string %.1f MiB (%.2f bytes/value) on %.1f MiB of text; "
          "to_string %.1f MiB (%.2f bytes/value)\n",
          from_peak / mib, (double) from_peak / n, strlen (text) / mib,
          to_peak / mib, (double) to_peak / n);
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

static void
print_machine (guint reps)
{
  g_autofree char *cpuinfo = NULL;
  g_autofree char *model = NULL;
  struct utsname uts;

  if (g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL))
    {
      const char *line = strstr (cpuinfo, "model name");
      const char *colon = line != NULL ? strchr (line, ':') : NULL;

      if (colon != NULL)
        model = g_strstrip (g_strndup (colon + 1, strcspn (colon + 1, "\n")));
    }

  printf ("serio-bench: libserio %s, GLib %u.%u.%u",
          SERIO_VERSION, glib_major_version, glib_minor_version, glib_micro_version);
#ifdef HAVE_JSON_GLIB
  printf (", json-glib %s", JSON_VERSION_S);
#endif
#ifdef HAVE_PEERS
  printf (", %s", serio_bench_peers_versions ());
#endif
  printf ("\nCPU:      %s, %u logical cores available\n",
          model != NULL ? model : "unknown", g_get_num_processors ());
  if (uname (&uts) == 0)
    printf ("Kernel:   %s %s %s\n", uts.sysname, uts.release, uts.machine);
  printf ("Compiler: %s, buildtype %s (-O%s)\n", BENCH_COMPILER, BENCH_BUILDTYPE, BENCH_OPTIMIZATION);
#ifdef HAVE_PEERS
  printf ("          C++ peers: %s\n", BENCH_CXX_COMPILER);
#endif
  printf ("Threads:  SERIO_THREADS=%s\n", g_getenv ("SERIO_THREADS") != NULL ? g_getenv ("SERIO_THREADS") : "(unset)");
  printf ("Method:   single thread, %s; median and minimum of %u repetitions,\n"
          "          codecs taking turns, in ns per value, warm heap (freed memory kept by malloc);\n"
          "          \"x lib\" = this codec's median / libserio's median;\n"
          "          mismatches = values whose 64-bit pattern did not survive the round trip.\n",
          clock_id == CLOCK_MONOTONIC ? "wall time (CLOCK_MONOTONIC)" : "thread CPU time (CLOCK_THREAD_CPUTIME_ID)",
          reps);
  printf ("Codecs:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (codecs); i++)
    printf ("  %-*s %s\n", CODEC_WIDTH, codecs[i].name, codecs[i].description);
#ifndef HAVE_JSON_GLIB
  printf ("  (json-glib was not found at build time and is left out)\n");
#endif
#ifndef HAVE_PEERS
  printf ("  (" PEERS_CODEC ": a C++ compiler, fmt or fast_float was not found at build time)\n");
#endif
}

static void
format_ratio (char   *buf,
              gsize   size,
              double  time,
              double  reference)
{
  if (isnan (time) || isnan (reference))
    g_strlcpy (buf, "-", size);
  else
    g_snprintf (buf, size, "%.2fx", time / reference);
}

static void
print_table (const DataSet *set,
             gsize          n,
             const Codec  **selected,
             const Result  *results,
             gsize          n_selected)
{
  double lib_write = NAN, lib_read = NAN;

  for (gsize i = 0; i < n_selected; i++)
    {
      if (g_str_equal (selected[i]->name, "libserio"))
        {
          lib_write = results[i].write_median;
          lib_read = results[i].read_median;
        }
    }

  printf ("\n%s (%s), N = %" G_GSIZE_FORMAT "\n", set->name, set->description, n);
  printf ("%-*s %9s %9s %9s   %9s %9s %9s   %9s %10s\n",
          CODEC_WIDTH, "codec", "write", "min", "x lib", "read", "min", "x lib", "bytes/val", "mismatches");

  for (gsize i = 0; i < n_selected; i++)
    {
      const Result *r = &results[i];
      char write_ratio[32], read_ratio[32], mismatches[32];

      if (r->skipped)
        {
          printf ("%-*s (not run above N = %" G_GSIZE_FORMAT " unless named with --only)\n",
                  CODEC_WIDTH, selected[i]->name, selected[i]->default_max_n);
          continue;
        }

      format_ratio (write_ratio, sizeof write_ratio, r->write_median, lib_write);
      format_ratio (read_ratio, sizeof read_ratio, r->read_median, lib_read);
      if (r->error != NULL)
        g_strlcpy (mismatches, "read failed", sizeof mismatches);
      else
        g_snprintf (mismatches, sizeof mismatches, "%" G_GSIZE_FORMAT, r->mismatches);

      printf ("%-*s %9.1f %9.1f %9s   %9.1f %9.1f %9s   %9.2f %10s\n",
              CODEC_WIDTH, selected[i]->name,
              r->write_median, r->write_min, write_ratio,
              r->read_median, r->read_min, read_ratio,
              r->bytes_per_value, mismatches);
    }

  for (gsize i = 0; i < n_selected; i++)
    {
      if (results[i].error != NULL)
        printf ("  %s: %s\n", selected[i]->name, results[i].error);
    }
}

static gboolean
select_by_name (char       **names,
                gconstpointer table,
                gsize        n_entries,
                gsize        entry_size,
                gboolean    *chosen,
                const char  *what,
                GError     **error)
{
  if (names == NULL)
    {
      for (gsize i = 0; i < n_entries; i++)
        chosen[i] = TRUE;
      return TRUE;
    }

  for (char **name = names; *name != NULL; name++)
    {
      gboolean found = FALSE;

      for (gsize i = 0; i < n_entries; i++)
        {
          const char *entry;

          /* Each entry of @table starts with its name. */
          memcpy (&entry, (const char *) table + i * entry_size, sizeof entry);
          if (g_str_equal (*name, entry))
            found = chosen[i] = TRUE;
        }

      if (!found)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "unknown %s \"%s\"", what, *name);
          return FALSE;
        }
    }

  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Instructions per value, under callgrind: the count of the machine's
 * own instructions does not depend on the load of the machine. The
 * program runs itself under valgrind, once per codec, data set and
 * direction, with only the write or the read collected. */

#define CALLGRIND_N 200000

static const Codec *find_codec (const char *name);

G_GNUC_NO_INLINE static void
bench_cg_write (const Codec  *codec,
                gpointer      prepared,
                const double *values,
                gsize         n,
                Output       *out)
{
  codec->write (prepared, values, n, out);
}

G_GNUC_NO_INLINE static gboolean
bench_cg_read (const Codec  *codec,
               const Output *encoded,
               gsize         n,
               Output       *out,
               GError      **error)
{
  return codec->read (encoded->data, encoded->size, n, out, error);
}

/* The child: "CODEC,SET,write" or "CODEC,SET,read". */
static int
callgrind_child (const char *spec)
{
  g_auto(GStrv) parts = g_strsplit (spec, ",", 3);
  const Codec *codec = g_strv_length (parts) == 3 ? find_codec (parts[0]) : NULL;
  const DataSet *set = NULL;
  g_autofree double *values = NULL;
  g_autoptr(GError) error = NULL;
  Output encoded = { 0 }, decoded = { 0 };
  gpointer prepared;

  for (gsize i = 0; codec != NULL && i < G_N_ELEMENTS (data_sets); i++)
    {
      if (strcmp (data_sets[i].name, parts[1]) == 0)
        set = &data_sets[i];
    }
  if (set == NULL)
    return EXIT_FAILURE;

  values = set->make (CALLGRIND_N);
  prepared = codec->prepare != NULL ? codec->prepare (values, CALLGRIND_N) : NULL;
  if (strcmp (parts[2], "write") == 0)
    bench_cg_write (codec, prepared, values, CALLGRIND_N, &encoded);
  else
    {
      codec->write (prepared, values, CALLGRIND_N, &encoded);
      if (encoded.size == SIZE_IS_STRLEN)
        encoded.size = strlen (encoded.data);
      if (!bench_cg_read (codec, &encoded, CALLGRIND_N, &decoded, &error) ||
          count_mismatches (values, decoded.data, CALLGRIND_N) != 0)
        return EXIT_FAILURE;
    }

  output_clear (&decoded);
  output_clear (&encoded);
  if (prepared != NULL)
    codec->unprepare (prepared);
  return EXIT_SUCCESS;
}

/* Instructions per value spent in @function and what it calls, from
 * callgrind_annotate's inclusive costs of @out_file, or NAN. */
static double
callgrind_function_count (const char *out_file,
                          const char *function)
{
  g_autofree char *annotate = g_find_program_in_path ("callgrind_annotate");
  g_autofree char *report = NULL;
  g_auto(GStrv) lines = NULL;
  const char *argv[] = { annotate, "--inclusive=yes", "--threshold=100", out_file, NULL };
  int status = 0;

  if (annotate == NULL ||
      !g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &report, NULL, &status, NULL) ||
      !g_spawn_check_wait_status (status, NULL))
    return NAN;

  /* "30,787,508 (30.82%)  ???:fmt::v9::...::to_decimal<double>(double) [...]" */
  lines = g_strsplit (report, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      GString *digits;
      double count;

      if (strstr (lines[i], function) == NULL || strstr (lines[i], "%)") == NULL)
        continue;
      digits = g_string_new (NULL);
      for (const char *c = lines[i]; *c == ' ' || *c == ',' || g_ascii_isdigit (*c); c++)
        if (g_ascii_isdigit (*c))
          g_string_append_c (digits, *c);
      count = digits->len > 0 ? g_ascii_strtod (digits->str, NULL) / CALLGRIND_N : NAN;
      g_string_free (digits, TRUE);
      return count;
    }

  return NAN;
}

/* Instructions per value of one codec's write or read, or NAN; with
 * @function, also those spent in that function (NAN where not found). */
static double
callgrind_count (const char *valgrind,
                 const char *codec,
                 const char *set,
                 const char *direction,
                 const char *codec_path,
                 const char *function,
                 double     *function_count)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *out_file = NULL;
  g_autofree char *out_arg = NULL;
  g_autofree char *toggle = g_strdup_printf ("--toggle-collect=bench_cg_%s*", direction);
  g_autofree char *spec = g_strdup_printf ("--callgrind-child=%s,%s,%s", codec, set, direction);
  g_autofree char *contents = NULL;
  g_auto(GStrv) envp = g_get_environ ();
  g_auto(GStrv) lines = NULL;
  int fd, status = 0;
  double count = NAN;

  if (self == NULL || (fd = g_file_open_tmp ("serio-bench-XXXXXX.callgrind", &out_file, NULL)) < 0)
    return NAN;
  close (fd);
  out_arg = g_strdup_printf ("--callgrind-out-file=%s", out_file);

  {
    const char *argv[] = { valgrind, "--tool=callgrind", out_arg, toggle, self, spec, NULL };

    envp = g_environ_setenv (envp, "SERIO_THREADS", "1", TRUE);
    if (codec_path != NULL)
      envp = g_environ_setenv (envp, "SERIO_CODEC", codec_path, TRUE);
    else
      envp = g_environ_unsetenv (envp, "SERIO_CODEC");
    if (!g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, NULL, NULL, &status, NULL) ||
        !g_spawn_check_wait_status (status, NULL) ||
        !g_file_get_contents (out_file, &contents, NULL, NULL))
      {
        g_unlink (out_file);
        return NAN;
      }
  }
  if (function != NULL)
    *function_count = callgrind_function_count (out_file, function);
  g_unlink (out_file);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], "summary:") || g_str_has_prefix (lines[i], "totals:"))
        {
          count = g_ascii_strtod (strchr (lines[i], ':') + 1, NULL) / CALLGRIND_N;
          break;
        }
    }

  return count;
}

/* libserio against its peers in this run, per data set: instructions per
 * value (NAN where not counted) and the timed medians in ns per value at
 * the largest N the timed tables measured (0: not timed). */
typedef struct
{
  double lib_write_ins, lib_read_ins, peer_write_ins, peer_read_ins;
  double to_decimal_ins;          /* Dragonbox alone, within fmt's write */
  gsize  n;
  double lib_write_ns, lib_read_ns, peer_write_ns, peer_read_ns;
} PeerRatios;

static PeerRatios peer_ratios[G_N_ELEMENTS (data_sets)];

/* Keeps libserio's and the peers' timed medians of one table. */
static void
note_timed (gsize          set,
            gsize          n,
            const Codec  **selected,
            const Result  *results,
            gsize          n_selected)
{
  double lib_write = NAN, lib_read = NAN, peer_write = NAN, peer_read = NAN;

  for (gsize i = 0; i < n_selected; i++)
    {
      if (results[i].skipped || results[i].error != NULL || results[i].mismatches != 0)
        continue;
      if (g_str_equal (selected[i]->name, "libserio"))
        {
          lib_write = results[i].write_median;
          lib_read = results[i].read_median;
        }
      else if (g_str_equal (selected[i]->name, PEERS_CODEC))
        {
          peer_write = results[i].write_median;
          peer_read = results[i].read_median;
        }
    }

  if (isnan (lib_write) || isnan (peer_write) || n < peer_ratios[set].n)
    return;

  peer_ratios[set].n = n;
  peer_ratios[set].lib_write_ns = lib_write;
  peer_ratios[set].lib_read_ns = lib_read;
  peer_ratios[set].peer_write_ns = peer_write;
  peer_ratios[set].peer_read_ns = peer_read;
}

static void
print_instructions (const gboolean *set_chosen)
{
  g_autofree char *valgrind = g_find_program_in_path ("valgrind");
  /* libserio's forms of the codec (the default takes AVX2 on CPUs with
   * it, else SSE2), and its peers; the ratios are against printf-17g,
   * the usual way. For fmt, the write's share of Dragonbox proper
   * (to_decimal, shortest digits and exponent) and of fmt's formatting
   * of them shows apart, where callgrind_annotate is. */
  static const struct { const char *label, *codec, *path, *write_part, *part_label; } rows[] = {
    { "libserio (AVX2 where the CPU has it)", "libserio", NULL, NULL, NULL },
    { "libserio (SSE2, SERIO_CODEC=sse2)", "libserio", "sse2", NULL, NULL },
    { "libserio (portable, SERIO_CODEC=portable)", "libserio", "portable", NULL, NULL },
    { "%.17g / strtod", "printf-17g", NULL, NULL, NULL },
#ifdef HAVE_PEERS
    { "Dragonbox (fmt) / fast_float", PEERS_CODEC, NULL,
      "dragonbox::to_decimal<double>", "of which Dragonbox's to_decimal" },
#endif
  };
  const gsize reference = 3;     /* %.17g / strtod; the peers come last */

  printf ("\nInstructions per value (callgrind, %d values, one thread)\n", CALLGRIND_N);
  if (valgrind == NULL)
    {
      printf ("  valgrind not found: no instruction counts\n");
      return;
    }

  for (gsize s = 0; s < G_N_ELEMENTS (data_sets); s++)
    {
      double counts[G_N_ELEMENTS (rows)][2];
      double parts[G_N_ELEMENTS (rows)];

      if (!set_chosen[s])
        continue;
      for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
        {
          counts[r][0] = callgrind_count (valgrind, rows[r].codec, data_sets[s].name, "write", rows[r].path,
                                          rows[r].write_part, &parts[r]);
          counts[r][1] = callgrind_count (valgrind, rows[r].codec, data_sets[s].name, "read", rows[r].path,
                                          NULL, NULL);
        }
      peer_ratios[s].lib_write_ins = counts[0][0];
      peer_ratios[s].lib_read_ins = counts[0][1];
#ifdef HAVE_PEERS
      peer_ratios[s].peer_write_ins = counts[G_N_ELEMENTS (rows) - 1][0];
      peer_ratios[s].peer_read_ins = counts[G_N_ELEMENTS (rows) - 1][1];
      peer_ratios[s].to_decimal_ins = parts[G_N_ELEMENTS (rows) - 1];
#endif

      printf ("  %-8s %-44s %10s %10s\n", data_sets[s].name, "", "write", "read");
      for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
        {
          printf ("           %-44s %10.1f %10.1f   (%.2fx / %.2fx of %%.17g/strtod)\n", rows[r].label,
                  counts[r][0], counts[r][1], counts[r][0] / counts[reference][0],
                  counts[r][1] / counts[reference][1]);
          if (rows[r].write_part != NULL && !isnan (parts[r]))
            printf ("             %-42s %10.1f\n", rows[r].part_label, parts[r]);
        }
    }
}

#ifdef HAVE_PEERS
static void
print_peer_ratio (const char *what,
                  const char *peer,
                  double      peer_ins,
                  double      lib_ins,
                  double      peer_ns,
                  double      lib_ns,
                  const char *target)
{
  char ins[64], ns[64];

  if (isnan (peer_ins) || isnan (lib_ins))
    g_strlcpy (ins, "-", sizeof ins);
  else
    g_snprintf (ins, sizeof ins, "%.1f / %.1f = %.2fx", peer_ins, lib_ins, peer_ins / lib_ins);
  if (isnan (peer_ns) || isnan (lib_ns))
    g_strlcpy (ns, "-", sizeof ns);
  else
    g_snprintf (ns, sizeof ns, "%.1f / %.1f = %.2fx", peer_ns, lib_ns, peer_ns / lib_ns);

  printf ("           %-5s %-10s %-26s %-26s %s\n", what, peer, ins, ns, target);
}
#endif

/* libserio against Dragonbox and fast_float, from this run's callgrind
 * counts and timed tables: above 1x, libserio is ahead. */
static void
print_peers (const gboolean *set_chosen)
{
#ifdef HAVE_PEERS
  printf ("\nlibserio against its peers, this run: peer / libserio (above 1x: libserio ahead);\n"
          "instructions per value (callgrind, %d values) and the timed median in ns per value\n"
          "(%s) at the largest N of the tables above\n",
          CALLGRIND_N, clock_id == CLOCK_MONOTONIC ? "wall time" : "thread CPU time");
  for (gsize s = 0; s < G_N_ELEMENTS (data_sets); s++)
    {
      const PeerRatios *p = &peer_ratios[s];
      char timed[64];

      if (!set_chosen[s])
        continue;
      if (p->n > 0)
        g_snprintf (timed, sizeof timed, "ns/value, N = %" G_GSIZE_FORMAT, p->n);
      else
        g_strlcpy (timed, "ns/value (not timed)", sizeof timed);
      printf ("  %-8s %-16s %-26s %-26s %s\n", data_sets[s].name, "", "instructions", timed, "issue 21 asks");
      print_peer_ratio ("read", "fast_float", p->peer_read_ins, p->lib_read_ins,
                        p->n > 0 ? p->peer_read_ns : NAN, p->n > 0 ? p->lib_read_ns : NAN, ">= 2x (time)");
      print_peer_ratio ("write", "Dragonbox", p->peer_write_ins, p->lib_write_ins,
                        p->n > 0 ? p->peer_write_ns : NAN, p->n > 0 ? p->lib_write_ns : NAN, ">= 3x (time)");
      print_peer_ratio ("write", "to_decimal", p->to_decimal_ins, p->lib_write_ins, NAN, NAN,
                        "(Dragonbox alone, no text)");
    }
#else
  printf ("\nlibserio against its peers: not built (" PEERS_CODEC " needs a C++ compiler, fmt and fast_float)\n");
#endif
}

/* ------------------------------------------------------------------ */
/* Threads and the save's floor: wall time of libserio's calls with one
 * and with two threads, and of the kernel taking a save's bytes. */

#define THREADS_N 10000000
#define THREADS_REPS 5

static guint64
clock_ns (clockid_t clock)
{
  struct timespec ts;

  clock_gettime (clock, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

typedef enum { OP_TO_BYTES, OP_FROM_BYTES, OP_SAVE, OP_FROM_FILE, OP_FLOOR, N_OPS } ThreadOp;

static const char *const thread_op_names[N_OPS] = {
  "to_bytes", "from_bytes", "save_to_file", "from_file", "write(2)+fsync (floor)",
};

/* Writes @text to @path with write(2) in pieces of 1 MiB and syncs it: no
 * save of that text can be faster. */
static gboolean
write_and_sync (const char *path,
                GBytes     *text)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  int fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  gboolean ok = fd >= 0;

  for (gsize done = 0; ok && done < size; )
    {
      gssize written = write (fd, data + done, MIN (size - done, 1024 * 1024));

      ok = written > 0;
      done += MAX (written, 0);
    }
  ok = ok && fsync (fd) == 0;
  if (fd >= 0)
    close (fd);

  return ok;
}

/* Wall, all threads' CPU and the calling thread's CPU time of one call. */
typedef struct
{
  guint64 wall, cpu, caller;
} OpTime;

static OpTime
time_thread_op (ThreadOp     op,
                SerioBundle *bundle,
                GBytes      *text,
                GFile       *file,
                const char  *floor_path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) back = NULL;
  g_autoptr(GBytes) bytes = NULL;
  OpTime start = { clock_ns (CLOCK_MONOTONIC), clock_ns (CLOCK_PROCESS_CPUTIME_ID),
                   clock_ns (CLOCK_THREAD_CPUTIME_ID) };
  gboolean ok = TRUE;

  switch (op)
    {
    case OP_TO_BYTES:
      bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
      break;
    case OP_FROM_BYTES:
      ok = (back = serio_bundle_new_from_bytes (text, &error)) != NULL;
      break;
    case OP_SAVE:
      ok = serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, &error);
      break;
    case OP_FROM_FILE:
      ok = (back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error)) != NULL;
      break;
    case OP_FLOOR:
    case N_OPS:
    default:
      ok = write_and_sync (floor_path, text);
      break;
    }

  start.wall = clock_ns (CLOCK_MONOTONIC) - start.wall;
  start.cpu = clock_ns (CLOCK_PROCESS_CPUTIME_ID) - start.cpu;
  start.caller = clock_ns (CLOCK_THREAD_CPUTIME_ID) - start.caller;
  if (!ok)
    g_error ("%s: %s", thread_op_names[op], error != NULL ? error->message : g_strerror (errno));
  return start;
}

/* One of the two parses of time_pair(). */
static gpointer
pair_parse (gpointer text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) back = serio_bundle_new_from_bytes (text, &error);

  if (back == NULL)
    g_error ("from_bytes: %s", error->message);
  return NULL;
}

/* Wall time of two one-thread parses of @text at once, each on a thread
 * of its own, with nothing between them: what the machine's two cores give
 * to two threads that share no work, the most that the library's two
 * threads could give to one parse. A virtual machine's cores can be far
 * from twice one (hyperthreads of one core, a neighbour's load). */
static guint64
time_pair (GBytes *text)
{
  guint64 start = clock_ns (CLOCK_MONOTONIC);
  GThread *other = g_thread_new ("serio-bench-pair", pair_parse, text);

  pair_parse (text);
  g_thread_join (other);
  return clock_ns (CLOCK_MONOTONIC) - start;
}

static double
median_ms (guint64 *times,
           gsize    n)
{
  qsort (times, n, sizeof (guint64), compare_u64);
  return times[n / 2] / 1e6;
}

static void
print_threads (void)
{
  g_autofree double *values = make_weights (THREADS_N);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) text = NULL;
  g_autofree char *dir = g_dir_make_tmp ("serio-bench-XXXXXX", NULL);
  g_autofree char *path = NULL;
  g_autofree char *floor_path = NULL;
  g_autoptr(GFile) file = NULL;
  const char *saved = g_getenv ("SERIO_THREADS");
  g_autofree char *saved_threads = g_strdup (saved);
  /* [op][threads][wall, cpu, caller][rep] */
  guint64 times[N_OPS][2][3][THREADS_REPS];
  guint64 pair[THREADS_REPS];
  double median[N_OPS][2][3], pair_ms;

  if (dir == NULL)
    return;
  path = g_build_filename (dir, "w.serio", NULL);
  floor_path = g_build_filename (dir, "floor", NULL);
  file = g_file_new_for_path (path);
  serio_bundle_append (bundle, "w", values, THREADS_N);
  text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);

  /* A first round, untimed: the first touch of fresh memory costs a
   * virtual machine's kernel far more than later ones. */
  for (ThreadOp op = 0; op < N_OPS; op++)
    (void) time_thread_op (op, bundle, text, file, floor_path);

  /* one and two threads take turns, one repetition each */
  for (guint r = 0; r < THREADS_REPS; r++)
    for (ThreadOp op = 0; op < N_OPS; op++)
      for (int t = 0; t < 2; t++)
        {
          OpTime time;

          g_setenv ("SERIO_THREADS", t == 0 ? "1" : "2", TRUE);
          time = time_thread_op (op, bundle, text, file, floor_path);
          times[op][t][0][r] = time.wall;
          times[op][t][1][r] = time.cpu;
          times[op][t][2][r] = time.caller;
          if (op == OP_FROM_BYTES && t == 0)
            pair[r] = time_pair (text);
        }
  if (saved_threads != NULL)
    g_setenv ("SERIO_THREADS", saved_threads, TRUE);
  else
    g_unsetenv ("SERIO_THREADS");
  g_unlink (path);
  g_unlink (floor_path);
  g_rmdir (dir);

  printf ("\nThreads and the save's floor: %d weights (%.1f MB of text), median of %d, one and\n"
          "two threads taking turns. Wall time shows the load of a shared machine; CPU time\n"
          "(all threads', and the calling thread's) less so: \"bound\" = 2 x 1T cpu / 2T cpu,\n"
          "the most that two free cores can give with the work that two threads do\n",
          THREADS_N, g_bytes_get_size (text) / 1e6, THREADS_REPS);
  printf ("  %-24s %9s %9s %8s   %9s %9s %9s %7s\n", "", "1T wall", "2T wall", "speedup",
          "1T cpu", "2T cpu", "2T caller", "bound");
  for (ThreadOp op = 0; op < N_OPS; op++)
    {
      for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++)
          median[op][t][k] = median_ms (times[op][t][k], THREADS_REPS);
      printf ("  %-24s %9.1f %9.1f %7.2fx   %9.1f %9.1f %9.1f %6.2fx\n", thread_op_names[op],
              median[op][0][0], median[op][1][0], median[op][0][0] / median[op][1][0],
              median[op][0][1], median[op][1][1], median[op][1][2], 2 * median[op][0][1] / median[op][1][1]);
    }
  printf ("  a save against its floor (wall): %.2fx with one thread, %.2fx with two\n",
          median[OP_SAVE][0][0] / median[OP_FLOOR][0][0], median[OP_SAVE][1][0] / median[OP_FLOOR][1][0]);
  pair_ms = median_ms (pair, THREADS_REPS);
  printf ("  the machine: two one-thread from_bytes at once, a thread each, %.1f ms against %.1f\n"
          "  for one alone: its two cores give %.2fx one core's work, the most that two threads\n"
          "  can give here (two free cores: 2x)\n",
          pair_ms, median[OP_FROM_BYTES][0][0], 2 * median[OP_FROM_BYTES][0][0] / pair_ms);
}

static const Codec *
find_codec (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (codecs); i++)
    {
      if (strcmp (codecs[i].name, name) == 0)
        return &codecs[i];
    }

  return NULL;
}

int
main (int   argc,
      char *argv[])
{
  gboolean large = FALSE;
  gboolean wall = FALSE;
  gboolean no_callgrind = FALSE;
  gboolean no_threads = FALSE;
  g_autofree char *cg_child = NULL;
  int reps = 11;
  g_auto(GStrv) only = NULL;
  g_auto(GStrv) data = NULL;
  const GOptionEntry entries[] = {
    { "large", 0, 0, G_OPTION_ARG_NONE, &large, "Also measure N = 10^7", NULL },
    { "wall", 0, 0, G_OPTION_ARG_NONE, &wall, "Measure wall time instead of the thread's CPU time", NULL },
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions per measurement (default 11)", "N" },
    { "only", 0, 0, G_OPTION_ARG_STRING_ARRAY, &only, "Measure only this codec (repeatable)", "NAME" },
    { "data", 0, 0, G_OPTION_ARG_STRING_ARRAY, &data, "Use only this data set, weights or domain (repeatable)", "NAME" },
    { "no-callgrind", 0, 0, G_OPTION_ARG_NONE, &no_callgrind, "Do not count instructions under valgrind", NULL },
    { "no-threads", 0, 0, G_OPTION_ARG_NONE, &no_threads, "Do not time one against two threads and the save's floor", NULL },
    { "callgrind-child", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &cg_child, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- time libserio against other ways of saving doubles");
  g_autoptr(GError) error = NULL;
  gboolean codec_chosen[G_N_ELEMENTS (codecs)] = { FALSE };
  gboolean set_chosen[G_N_ELEMENTS (data_sets)] = { FALSE };
  const Codec *selected[G_N_ELEMENTS (codecs)];
  gsize n_selected = 0;
  const gsize sizes[] = { 10000, 1000000, 10000000 };

  g_autoptr(GString) description = g_string_new ("Codecs:");

  for (gsize i = 0; i < G_N_ELEMENTS (codecs); i++)
    g_string_append_printf (description, " %s", codecs[i].name);
  g_string_append_c (description, '\n');
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context, description->str);
  if (!g_option_context_parse (context, &argc, &argv, &error) ||
      !select_by_name (only, codecs, G_N_ELEMENTS (codecs), sizeof (Codec),
                       codec_chosen, "codec", &error) ||
      !select_by_name (data, data_sets, G_N_ELEMENTS (data_sets), sizeof (DataSet),
                       set_chosen, "data set", &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      return EXIT_FAILURE;
    }
  if (cg_child != NULL)
    return callgrind_child (cg_child);
  if (reps < 1)
    {
      g_printerr ("%s: --reps must be at least 1\n", g_get_prgname ());
      return EXIT_FAILURE;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (codecs); i++)
    {
      if (codec_chosen[i])
        selected[n_selected++] = &codecs[i];
    }

  if (wall)
    clock_id = CLOCK_MONOTONIC;
  /* The thread's CPU time would leave out what libserio's worker threads
   * do: the single-threaded cost is measured on one thread, unless the
   * caller set SERIO_THREADS (then with --wall, to see the threads'). */
  else if (g_getenv ("SERIO_THREADS") == NULL)
    g_setenv ("SERIO_THREADS", "1", TRUE);

#ifdef __GLIBC__
  mallopt (M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt (M_TRIM_THRESHOLD, G_MAXINT);
#endif

  print_machine (reps);

  for (gsize s = 0; s < G_N_ELEMENTS (data_sets); s++)
    {
      if (!set_chosen[s])
        continue;

      for (gsize k = 0; k < G_N_ELEMENTS (sizes) - (large ? 0 : 1); k++)
        {
          gsize n = sizes[k];
          g_autofree double *values = data_sets[s].make (n);
          Result results[G_N_ELEMENTS (codecs)] = { { 0 } };

          for (gsize i = 0; i < n_selected; i++)
            results[i].skipped = (only == NULL && selected[i]->default_max_n != 0 &&
                                  n > selected[i]->default_max_n);
          measure (selected, results, n_selected, values, n, reps);

          print_table (&data_sets[s], n, selected, results, n_selected);
          note_timed (s, n, selected, results, n_selected);
          /* codecs[0] is libserio. */
          if (n >= 1000000 && codec_chosen[0])
            print_memory (values, n);
          fflush (stdout);

          for (gsize i = 0; i < n_selected; i++)
            g_free (results[i].error);
        }
    }

  for (gsize s = 0; s < G_N_ELEMENTS (data_sets); s++)
    peer_ratios[s].lib_write_ins = peer_ratios[s].lib_read_ins =
      peer_ratios[s].peer_write_ins = peer_ratios[s].peer_read_ins = peer_ratios[s].to_decimal_ins = NAN;
  if (!no_callgrind)
    print_instructions (set_chosen);
  print_peers (set_chosen);
  if (!no_threads)
    print_threads ();

  return EXIT_SUCCESS;
}
