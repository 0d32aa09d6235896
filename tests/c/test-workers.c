/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-workers.c: a parse on the workers' threads against the one-thread
 * parse of the same text
 *
 * Copyright 2026 The libserio authors
 *
 * The threads of a parse take its windows in turn, park those whose place
 * in the output is not known yet and store them when it is, in whatever
 * order they finish, while the calling thread takes the results in the
 * order of the text. Whatever that order, a parse on several threads must
 * give what the codec gives on one: the same values, bit for bit, the
 * same count, the same end, and the same first bad token or value that
 * the type does not hold. Here the reference is the codec's own loop
 * (_serio_codec_parse_tokens()) and the type's check, called directly.
 */

#include "config.h"

#include <string.h>

#include "serio-dtype-private.h"
#include "serio-workers-private.h"
#include "test-utils.h"

/* The bytes after the text, which bound the parser's 8-byte loads. */
#define PADDING 64
/* The most bytes of buffers that workers given back keep
 * (CACHED_BUFFER_BYTES in serio-workers.c). */
#define KEPT_BUFFER_BYTES (16 * 1024 * 1024)

/* A text of tokens, as the reader hands it to the threads. */
typedef struct
{
  GString    *text;
  SerioDtype  dtype;
  gsize       n_tokens;
} Text;

/* What a parse gave. */
typedef struct
{
  gsize           n;
  const char     *end;
  gboolean        ended;
  SerioParseStop  stop;
  guint8         *out;    /* n elements of the output type */
} Result;

/* The pieces of text a parse handed its sink, which must follow one
 * another from the span's start. */
typedef struct
{
  const char *next;       /* where the next piece must start */
  gsize       pieces;
  gboolean    gap;        /* a piece did not start where the last ended */
  guint       slow_every; /* sleep in every slow_every-th piece, if not 0 */
} Sink;

static void
sink_piece (const char *text,
            gsize       len,
            gpointer    user_data)
{
  Sink *sink = user_data;

  if (text != sink->next)
    sink->gap = TRUE;
  sink->next = text + len;
  sink->pieces++;
  /* A calling thread that is slow to take the windows: the threads run
   * ahead of it and hold their windows until it does. */
  if (sink->slow_every != 0 && sink->pieces % sink->slow_every == 1)
    g_usleep (300);
}

/* A random element of @dtype that a double holds, as that double. */
static double
random_element (SerioDtype dtype)
{
  guint64 bits = test_rand_u64 ();

  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT32:
      {
        guint32 b32 = (guint32) bits;
        float f;

        memcpy (&f, &b32, sizeof f);
        return f != f ? 0.5 : (double) f;
      }
    case SERIO_DTYPE_INT16:
      return (double) (gint16) bits;
    case SERIO_DTYPE_FLOAT64:
    default:
      return test_double_of (test_canonical_bits (bits));
    }
}

/* A value that @dtype does not hold. */
static double
misfit_for (SerioDtype dtype)
{
  return dtype == SERIO_DTYPE_INT16 ? 40000.0 : 0.1;
}

/* A text of @n_tokens random elements of @dtype, the token at @misfit (if
 * it is not G_MAXSIZE) a value the type does not hold and the one at @bad
 * (likewise) @bad_token, or an invalid token of any kind when it is %NULL,
 * followed by PADDING line feeds. */
static Text
make_text_with (SerioDtype  dtype,
                gsize       n_tokens,
                gsize       misfit,
                gsize       bad,
                const char *bad_token)
{
  Text t = { g_string_sized_new (n_tokens * 24 + PADDING), dtype, n_tokens };

  for (gsize i = 0; i < n_tokens; i++)
    {
      char token[SERIO_CODEC_TOKEN_MAX + SERIO_CODEC_WRITE_SLACK + 1];
      char *end;

      if (i > 0)
        g_string_append_c (t.text, ',');
      if (i == bad)
        {
          /* an empty token too: a comma after the last value, when last */
          static const char *const bad_tokens[] = { "1x", "01", "" };

          g_string_append (t.text, bad_token != NULL ? bad_token :
                                   bad_tokens[g_test_rand_int_range (0, 3)]);
          continue;
        }
      end = _serio_codec_write_token (token, i == misfit ? misfit_for (dtype) : random_element (dtype));
      g_string_append_len (t.text, token, end - token);
    }
  for (gsize i = 0; i < PADDING; i++)
    g_string_append_c (t.text, '\n');
  t.text->len -= PADDING;

  return t;
}

static Text
make_text (SerioDtype dtype,
           gsize      n_tokens,
           gsize      misfit,
           gsize      bad)
{
  return make_text_with (dtype, n_tokens, misfit, bad, NULL);
}

/* The one-thread parse of up to @max_values tokens of @t, as the codec
 * and the type's check give it, into @out_dtype. */
static Result
reference_parse (const Text *t,
                 SerioDtype  out_dtype,
                 gsize       max_values)
{
  const char *s = t->text->str;
  const char *span_end = s + t->text->len;
  g_autofree double *doubles = g_new (double, MAX (t->n_tokens, 1));
  Result r = { 0 };
  gsize misfit;

  r.n = _serio_codec_parse_tokens (&s, span_end, span_end + PADDING, doubles,
                                   MIN (max_values, t->n_tokens), &r.ended, &r.stop.problem);
  r.end = s;
  r.stop.bad = r.stop.problem.reason != NULL ? s : NULL;
  if (_serio_dtype_find_misfit (t->dtype, doubles, r.n, &misfit))
    {
      r.n = misfit;
      r.stop.misfit = TRUE;
      r.stop.value = doubles[misfit];
      r.stop.problem.reason = NULL;
      r.stop.bad = NULL;
    }
  r.out = g_malloc (MAX (r.n, 1) * serio_dtype_get_size (out_dtype));
  if (out_dtype == SERIO_DTYPE_FLOAT64)
    memcpy (r.out, doubles, r.n * sizeof (double));
  else
    g_assert_cmpuint (_serio_dtype_store_doubles (out_dtype, doubles, r.n, r.out), ==, r.n);

  return r;
}

/* Checks the parse's @got against the one-thread parse @want. */
static void
assert_same_result (const Result *got,
                    const Result *want,
                    SerioDtype    out_dtype,
                    const char   *what)
{
  /* The bad token is set only with a problem. */
  if (got->n != want->n || got->stop.misfit != want->stop.misfit ||
      g_strcmp0 (got->stop.problem.reason, want->stop.problem.reason) != 0 ||
      (want->stop.problem.reason != NULL && got->stop.bad != want->stop.bad))
    g_error ("%s: %" G_GSIZE_FORMAT " values, misfit %d, problem \"%s\" at %p; one thread: "
             "%" G_GSIZE_FORMAT " values, misfit %d, problem \"%s\" at %p", what,
             got->n, got->stop.misfit, got->stop.problem.reason, got->stop.bad,
             want->n, want->stop.misfit, want->stop.problem.reason, want->stop.bad);
  if (want->stop.problem.reason != NULL)
    g_assert_cmpint (got->stop.problem.code, ==, want->stop.problem.code);
  else if (want->stop.misfit)
    g_assert_cmphex (test_bits_of (got->stop.value), ==, test_bits_of (want->stop.value));
  else
    {
      g_assert_true (got->end == want->end);
      g_assert_cmpint (got->ended, ==, want->ended);
    }
  if (memcmp (got->out, want->out, want->n * serio_dtype_get_size (out_dtype)) != 0)
    g_error ("%s: the values differ from the one-thread parse's", what);
}

/* Parses up to @max_values tokens of @t with @n_threads threads into
 * @out_dtype, and checks the result and the sink's pieces. */
static void
check_parse (SerioWorkers *workers,
             const Text   *t,
             SerioDtype    out_dtype,
             gsize         max_values,
             guint         n_threads,
             guint         slow_every)
{
  const char *s = t->text->str;
  const char *span_end = s + t->text->len;
  g_autofree char *what = g_strdup_printf ("%s into %s, %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                                           " tokens, %u threads%s",
                                           serio_dtype_to_string (t->dtype),
                                           serio_dtype_to_string (out_dtype), max_values,
                                           t->n_tokens, n_threads, slow_every ? ", slow sink" : "");
  gsize room = MIN (max_values, t->n_tokens);
  Result want = reference_parse (t, out_dtype, max_values);
  Result got = { 0 };
  Sink sink = { s, 0, FALSE, slow_every };

  got.out = g_malloc (MAX (room, 1) * serio_dtype_get_size (out_dtype));
  got.n = _serio_workers_parse (workers, s, span_end, span_end + PADDING, t->dtype, out_dtype,
                                got.out, max_values, n_threads, &got.end, &got.ended,
                                &got.stop, sink_piece, &sink);
  assert_same_result (&got, &want, out_dtype, what);

  /* The sink had the text in order, without a gap, and nothing past the
   * values stored. */
  g_assert_false (sink.gap);
  if (want.stop.problem.reason == NULL && !want.stop.misfit)
    g_assert_true (sink.next <= got.end);
  else if (want.stop.problem.reason != NULL)
    g_assert_true (sink.next <= got.stop.bad);

  g_free (got.out);
  g_free (want.out);
}

/* The element types and outputs of the reader's parses: doubles, a typed
 * record read as doubles, and typed elements. */
static const struct
{
  SerioDtype dtype;
  SerioDtype out_dtype;
} kinds[] = {
  { SERIO_DTYPE_FLOAT64, SERIO_DTYPE_FLOAT64 },
  { SERIO_DTYPE_FLOAT32, SERIO_DTYPE_FLOAT64 },
  { SERIO_DTYPE_FLOAT32, SERIO_DTYPE_FLOAT32 },
  { SERIO_DTYPE_INT16, SERIO_DTYPE_INT16 },
};

static const guint thread_counts[] = { 1, 2, 3, 4, 8 };

static gsize
n_tokens_for_test (void)
{
  /* about 4 MB of float64 text: some 60 windows of 64 KiB */
  return test_slow_tool () ? 30000 : 200000;
}

static void
test_parse_clean (void)
{
  gsize n = n_tokens_for_test ();
  g_autoptr(SerioWorkers) workers = _serio_workers_new ();

  g_test_summary ("A text of valid tokens that its type holds, parsed whole or up to a "
                  "count of values, on 1 to 8 threads, gives the one-thread parse's values "
                  "bit for bit, count and end.");

  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      Text t = make_text (kinds[k].dtype, n, G_MAXSIZE, G_MAXSIZE);
      const gsize maxima[] = { n, n + 7, n - 1, n / 3, 40000, 32769, 1 };

      for (gsize m = 0; m < G_N_ELEMENTS (maxima); m++)
        for (gsize i = 0; i < G_N_ELEMENTS (thread_counts); i++)
          check_parse (workers, &t, kinds[k].out_dtype, maxima[m], thread_counts[i], 0);
      g_string_free (t.text, TRUE);
    }
}

static void
test_parse_errors (void)
{
  gsize n = n_tokens_for_test ();
  guint rounds = test_slow_tool () ? 4 : 24;
  g_autoptr(SerioWorkers) workers = _serio_workers_new ();

  g_test_summary ("A bad token or a value that the type does not hold, anywhere in a long "
                  "text, alone or both (either first), within the values wanted or past "
                  "them, is reported as the one-thread parse reports it, after the same "
                  "values, on 1 to 8 threads.");

  for (guint r = 0; r < rounds; r++)
    {
      gsize k = r % G_N_ELEMENTS (kinds);
      /* the first and the last token, then anywhere */
      gsize at = r == 0 ? 0 : r == 1 ? n - 1 : (gsize) g_test_rand_int_range (0, (gint32) n);
      gsize other = g_test_rand_int_range (0, (gint32) n);
      gboolean has_misfit = kinds[k].dtype != SERIO_DTYPE_FLOAT64 && r % 3 != 0;
      gboolean has_bad = !has_misfit || r % 2 == 0;
      Text t = make_text (kinds[k].dtype, n, has_misfit ? at : G_MAXSIZE,
                          has_bad ? (has_misfit ? other : at) : G_MAXSIZE);
      const gsize maxima[] = { n, at, at + 1, other + 1 };

      for (gsize m = 0; m < G_N_ELEMENTS (maxima); m++)
        for (gsize i = 0; i < G_N_ELEMENTS (thread_counts); i++)
          {
            if (maxima[m] == 0)
              continue;
            check_parse (workers, &t, kinds[k].out_dtype, maxima[m], thread_counts[i], 0);
          }
      g_string_free (t.text, TRUE);
    }
}

static void
test_parse_empty_token (void)
{
  gsize n = n_tokens_for_test ();
  g_autoptr(SerioWorkers) workers = _serio_workers_new ();

  g_test_summary ("An empty token after the values wanted, at the end of the span (a comma "
                  "after the last value) or inside it, is not reached, and the parse that "
                  "wants it too reports it, as on one thread: the end of the values wanted "
                  "is not taken for the end of the span.");

  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      const gsize places[] = { n - 1, n / 2 };

      for (gsize p = 0; p < G_N_ELEMENTS (places); p++)
        {
          Text t = make_text_with (kinds[k].dtype, n, G_MAXSIZE, places[p], "");
          const gsize maxima[] = { places[p], places[p] + 1, n };

          for (gsize m = 0; m < G_N_ELEMENTS (maxima); m++)
            for (gsize i = 0; i < G_N_ELEMENTS (thread_counts); i++)
              check_parse (workers, &t, kinds[k].out_dtype, maxima[m], thread_counts[i], 0);
          g_string_free (t.text, TRUE);
        }
    }
}

static void
test_parse_slow_caller (void)
{
  gsize n = n_tokens_for_test ();
  g_autoptr(SerioWorkers) workers = _serio_workers_new ();

  g_test_summary ("When the calling thread is slow to take the windows, so that the "
                  "threads run ahead and hold theirs until their place is known, the "
                  "result is still the one-thread parse's, errors included.");

  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      gsize at = g_test_rand_int_range ((gint32) (n / 2), (gint32) n);
      Text clean = make_text (kinds[k].dtype, n, G_MAXSIZE, G_MAXSIZE);
      Text damaged = make_text (kinds[k].dtype, n,
                                kinds[k].dtype != SERIO_DTYPE_FLOAT64 ? at : G_MAXSIZE,
                                kinds[k].dtype != SERIO_DTYPE_FLOAT64 ? G_MAXSIZE : at);

      for (guint slow = 1; slow <= 7; slow += 6)
        for (gsize i = 1; i < G_N_ELEMENTS (thread_counts); i++)
          {
            check_parse (workers, &clean, kinds[k].out_dtype, n, thread_counts[i], slow);
            check_parse (workers, &damaged, kinds[k].out_dtype, n, thread_counts[i], slow);
          }
      g_string_free (clean.text, TRUE);
      g_string_free (damaged.text, TRUE);
    }
}

static void
test_parse_in_pieces (void)
{
  gsize n = n_tokens_for_test ();
  g_autoptr(SerioWorkers) workers = _serio_workers_new ();

  g_test_summary ("A long text parsed in successive calls of random counts, each from where "
                  "the last ended into the output after its values, as the reader parses a "
                  "line a window at a time, gives the values of one parse of the whole.");

  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      Text t = make_text (kinds[k].dtype, n, G_MAXSIZE, G_MAXSIZE);
      gsize size = serio_dtype_get_size (kinds[k].out_dtype);
      Result want = reference_parse (&t, kinds[k].out_dtype, n);

      for (gsize i = 0; i < G_N_ELEMENTS (thread_counts); i++)
        {
          g_autofree guint8 *out = g_malloc (n * size);
          const char *s = t.text->str;
          const char *span_end = s + t.text->len;
          gsize done = 0;

          while (done < n)
            {
              gsize piece = g_test_rand_int_range (1, 90000);
              gsize max = MIN (n - done, piece);
              SerioParseStop stop;
              const char *end = NULL;
              gboolean ended = FALSE;
              gsize got;

              got = _serio_workers_parse (workers, s, span_end, span_end + PADDING, t.dtype,
                                          kinds[k].out_dtype, out + done * size, max,
                                          thread_counts[i], &end, &ended, &stop, NULL, NULL);
              g_assert_null (stop.problem.reason);
              g_assert_false (stop.misfit);
              if (got != max)
                g_error ("%s into %s on %u threads: %" G_GSIZE_FORMAT " values from %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT ", not %" G_GSIZE_FORMAT, serio_dtype_to_string (t.dtype), serio_dtype_to_string (kinds[k].out_dtype), thread_counts[i], got, done, n, max);
              done += got;
              g_assert_true (end > s);
              g_assert_cmpint (ended, ==, done == n);
              s = end;
            }
          g_assert_true (s == span_end);
          if (memcmp (out, want.out, n * size) != 0)
            g_error ("%s in pieces on %u threads: the values differ from one parse's",
                     serio_dtype_to_string (t.dtype), thread_counts[i]);
        }
      g_free (want.out);
      g_string_free (t.text, TRUE);
    }
}

static gboolean
append_block (const SerioFormatBlock *block,
              gpointer                user_data)
{
  g_string_append_len (user_data, block->out, block->len);
  return TRUE;
}

/* Formats @values (whole blocks of 4096) on @n_threads threads and checks
 * the text against the codec's own. */
static void
check_format (SerioWorkers *workers,
              const double *values,
              gsize         n_values,
              guint         n_threads)
{
  const gsize block_values = 4096;
  gsize n = n_values / block_values * block_values;
  g_autoptr(GString) got = g_string_new (NULL);
  g_autofree char *want = g_malloc (n * (SERIO_CODEC_TOKEN_MAX + 1) + SERIO_CODEC_WRITE_SLACK);
  char *want_end = _serio_codec_write_tokens (want, values, n, FALSE);

  g_assert_cmpuint (_serio_workers_format (workers, values, SERIO_DTYPE_FLOAT64, n_values,
                                           block_values, n_threads, FALSE, append_block, got),
                    ==, n);
  g_assert_cmpmem (got->str, got->len, want, want_end - want);
}

/* Takes the workers kept by the tests before (at most two; new ones if
 * fewer), so that the next ones given back are kept; freeing the array
 * gives them back. */
static GPtrArray *
take_kept (void)
{
  GPtrArray *taken = g_ptr_array_new_with_free_func ((GDestroyNotify) _serio_workers_free);

  for (int i = 0; i < 2; i++)
    g_ptr_array_add (taken, _serio_workers_new ());
  return taken;
}

static void
test_kept (void)
{
  gsize n = n_tokens_for_test ();
  Text t = make_text (SERIO_DTYPE_FLOAT32, n, G_MAXSIZE, G_MAXSIZE);
  g_autofree double *values = g_new (double, n);
  g_autoptr(GPtrArray) others = take_kept ();
  SerioWorkers *workers = _serio_workers_new ();
  SerioWorkers *again;
  gsize held;

  g_test_summary ("Workers given back are handed out again, threads and buffers with them, "
                  "and parse and format as new ones do, also after buffers of many threads "
                  "were freed when they were given back; a third set given back while two "
                  "are kept is freed.");

  for (gsize i = 0; i < n; i++)
    values[i] = random_element (SERIO_DTYPE_FLOAT64);

  check_parse (workers, &t, SERIO_DTYPE_FLOAT32, n, 2, 0);
  check_format (workers, values, n, 2);
  held = _serio_workers_get_buffer_bytes (workers);
  g_assert_cmpuint (held, >, 0);
  g_assert_cmpuint (held, <=, KEPT_BUFFER_BYTES);
  _serio_workers_free (workers);
  again = _serio_workers_new ();
  g_assert_true (again == workers);
  g_assert_cmpuint (_serio_workers_get_buffer_bytes (again), ==, held);
  check_parse (again, &t, SERIO_DTYPE_FLOAT32, n, 2, 0);
  check_format (again, values, n, 2);

  /* Buffers of 48 threads are more than are kept (but for memcheck's
   * smaller text, of fewer windows and blocks than that): freed when
   * given back, then made again. */
  check_parse (again, &t, SERIO_DTYPE_FLOAT64, n, 48, 0);
  check_format (again, values, n, 48);
  held = _serio_workers_get_buffer_bytes (again);
  if (!test_slow_tool ())
    g_assert_cmpuint (held, >, KEPT_BUFFER_BYTES);
  _serio_workers_free (again);
  again = _serio_workers_new ();
  g_assert_true (again == workers);
  g_assert_cmpuint (_serio_workers_get_buffer_bytes (again), ==,
                    held > KEPT_BUFFER_BYTES ? 0 : held);
  check_parse (again, &t, SERIO_DTYPE_FLOAT32, n, 3, 0);
  check_format (again, values, n, 3);

  /* With two kept, a third is freed (its threads joined): memcheck and
   * LeakSanitizer see that nothing of it is lost. */
  g_ptr_array_set_size (others, 0);
  _serio_workers_free (again);
  g_string_free (t.text, TRUE);
}

typedef struct
{
  const Text   *text;
  const double *values;
  gsize         n_values;
  guint         rounds;
} KeptRun;

static gpointer
use_kept (gpointer data)
{
  const KeptRun *run = data;

  for (guint i = 0; i < run->rounds; i++)
    {
      g_autoptr(SerioWorkers) workers = _serio_workers_new ();

      check_parse (workers, run->text, SERIO_DTYPE_FLOAT64, run->text->n_tokens, 2, 0);
      check_format (workers, run->values, run->n_values, 2);
    }
  return NULL;
}

static void
test_kept_threads (void)
{
  gsize n = test_slow_tool () ? 20000 : 60000;
  Text t = make_text (SERIO_DTYPE_FLOAT64, n, G_MAXSIZE, G_MAXSIZE);
  g_autofree double *values = g_new (double, n);
  KeptRun run = { &t, values, n, test_slow_tool () ? 5 : 40 };
  GThread *threads[4];

  g_test_summary ("Threads that take workers, parse and format with them and give them "
                  "back at the same time, as readers and writers of several threads do, "
                  "each get workers of their own: every parse and text is right.");

  for (gsize i = 0; i < n; i++)
    values[i] = random_element (SERIO_DTYPE_FLOAT64);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("kept", use_kept, &run);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_string_free (t.text, TRUE);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/workers/parse/clean", test_parse_clean);
  g_test_add_func ("/workers/parse/errors", test_parse_errors);
  g_test_add_func ("/workers/parse/empty-token", test_parse_empty_token);
  g_test_add_func ("/workers/parse/slow-caller", test_parse_slow_caller);
  g_test_add_func ("/workers/parse/in-pieces", test_parse_in_pieces);
  g_test_add_func ("/workers/kept/one", test_kept);
  g_test_add_func ("/workers/kept/threads", test_kept_threads);

  return g_test_run ();
}
