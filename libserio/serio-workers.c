/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-workers.c: long runs of values formatted and parsed by several
 * threads
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-workers.h"

/* What the pool runs: every job starts with this. */
typedef struct
{
  void   (*run) (gpointer job);
  guint   *pending;             /* the count of its batch, decremented when done */
} Job;

/* One block to format. */
typedef struct
{
  Job               job;
  SerioFormatBlock  block;
} FormatJob;

/* One thread's share of a span: the tokens of [start, end), where end is
 * a comma or the span's end. */
typedef struct
{
  Job                job;
  const char        *start;
  const char        *end;
  const char        *buf_end;
  double            *out;
  gsize              room;      /* in values */
  gsize              n;
  gboolean           ended;
  SerioCodecProblem  problem;
  const char        *stop;      /* the bad token, on a problem */
} ParsePart;

struct _SerioWorkers
{
  GThreadPool  *pool;
  GMutex        lock;
  GCond         done;

  /* Formatting: two sets of blocks, one handed out while the other is
   * formatted. */
  FormatJob     blocks[2][SERIO_MAX_THREADS];
  guint         blocks_pending[2];
  gsize         block_size;     /* of each block's out */

  ParsePart     parts[SERIO_MAX_THREADS];
  guint         parts_pending;
};

guint
_serio_threads_effective (guint requested)
{
  const char *cap = g_getenv ("SERIO_THREADS");
  guint n = requested != 0 ? requested : g_get_num_processors ();

  if (cap != NULL && *cap != '\0')
    {
      guint64 limit = g_ascii_strtoull (cap, NULL, 10);

      if (limit >= 1)
        n = MIN (n, limit);
    }

  return CLAMP (n, 1, SERIO_MAX_THREADS);
}

const char *
_serio_last_comma (const char *p,
                   gsize       len)
{
  for (const char *q = p + len; q > p; q--)
    {
      if (q[-1] == ',')
        return q - 1;
    }

  return NULL;
}

static void
run_in_pool (gpointer item,
             gpointer user_data)
{
  SerioWorkers *workers = user_data;
  Job *job = item;

  job->run (job);

  g_mutex_lock (&workers->lock);
  if (--*job->pending == 0)
    g_cond_broadcast (&workers->done);
  g_mutex_unlock (&workers->lock);
}

SerioWorkers *
_serio_workers_new (void)
{
  SerioWorkers *workers = g_new0 (SerioWorkers, 1);

  g_mutex_init (&workers->lock);
  g_cond_init (&workers->done);

  return workers;
}

void
_serio_workers_free (SerioWorkers *workers)
{
  if (workers == NULL)
    return;

  if (workers->pool != NULL)
    g_thread_pool_free (workers->pool, FALSE, TRUE);
  for (guint i = 0; i < SERIO_MAX_THREADS; i++)
    {
      g_free (workers->blocks[0][i].block.out);
      g_free (workers->blocks[1][i].block.out);
      g_free (workers->parts[i].out);
    }
  g_mutex_clear (&workers->lock);
  g_cond_clear (&workers->done);
  g_free (workers);
}

/* Hands the @n_jobs jobs at @jobs, each @job_size bytes, to a pool of up
 * to @max_threads threads; *@pending counts those not done yet. */
static void
push_jobs (SerioWorkers *workers,
           gpointer      jobs,
           gsize         job_size,
           guint         n_jobs,
           guint        *pending,
           guint         max_threads)
{
  if (workers->pool == NULL)
    {
      workers->pool = g_thread_pool_new (run_in_pool, workers, SERIO_MAX_THREADS, FALSE, NULL);
      g_assert (workers->pool != NULL);
    }
  g_thread_pool_set_max_threads (workers->pool, max_threads, NULL);

  g_mutex_lock (&workers->lock);
  *pending = n_jobs;
  g_mutex_unlock (&workers->lock);
  for (guint i = 0; i < n_jobs; i++)
    {
      Job *job = (Job *) (gpointer) ((char *) jobs + i * job_size);

      job->pending = pending;
      g_thread_pool_push (workers->pool, job, NULL);
    }
}

static void
wait_jobs (SerioWorkers *workers,
           guint        *pending)
{
  g_mutex_lock (&workers->lock);
  while (*pending > 0)
    g_cond_wait (&workers->done, &workers->lock);
  g_mutex_unlock (&workers->lock);
}

static void
format_block (gpointer job)
{
  SerioFormatBlock *block = &((FormatJob *) job)->block;
  char *out = block->out;

  if (block->leading_comma)
    {
      out = _serio_codec_write_tokens (out, block->values, block->n_values, TRUE);
    }
  else
    {
      out = _serio_codec_write_token (out, block->values[0]);
      out = _serio_codec_write_tokens (out, block->values + 1, block->n_values - 1, TRUE);
    }

  block->len = out - block->out;
}

/* Starts formatting set @set: up to @n_threads blocks of @block_values
 * values from block @first of @values on. Returns the blocks started. */
static guint
start_round (SerioWorkers *workers,
             guint         set,
             const double *values,
             gsize         block_values,
             gsize         first,
             gsize         n_blocks_total,
             guint         n_threads,
             gboolean      leading_comma)
{
  guint n = (guint) MIN ((gsize) n_threads, n_blocks_total - first);

  for (guint i = 0; i < n; i++)
    {
      FormatJob *job = &workers->blocks[set][i];

      if (job->block.out == NULL)
        job->block.out = g_malloc (workers->block_size);
      job->job.run = format_block;
      job->block.values = values + (first + i) * block_values;
      job->block.n_values = block_values;
      job->block.leading_comma = leading_comma || first + i > 0;
    }
  /* Every thread formats: the calling one hands the blocks out meanwhile. */
  push_jobs (workers, workers->blocks[set], sizeof (FormatJob), n, &workers->blocks_pending[set], n_threads);

  return n;
}

gsize
_serio_workers_format (SerioWorkers   *workers,
                       const double   *values,
                       gsize           n_values,
                       gsize           block_values,
                       guint           n_threads,
                       gboolean        leading_comma,
                       SerioBlockSink  sink,
                       gpointer        user_data)
{
  gsize block_size = block_values * (SERIO_CODEC_TOKEN_MAX + 1) + SERIO_CODEC_WRITE_SLACK;
  gsize n_blocks_total = n_values / block_values;
  gsize first = 0;
  guint set = 0;
  guint n_round;

  g_assert (block_values >= 1);
  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);
  if (n_blocks_total == 0)
    return 0;

  if (block_size > workers->block_size)
    {
      for (guint i = 0; i < SERIO_MAX_THREADS; i++)
        {
          g_clear_pointer (&workers->blocks[0][i].block.out, g_free);
          g_clear_pointer (&workers->blocks[1][i].block.out, g_free);
        }
      workers->block_size = block_size;
    }

  n_round = start_round (workers, set, values, block_values, first, n_blocks_total, n_threads, leading_comma);
  for (;;)
    {
      gsize next = first + n_round;
      guint n_next = 0;

      wait_jobs (workers, &workers->blocks_pending[set]);
      if (next < n_blocks_total)
        n_next = start_round (workers, set ^ 1, values, block_values, next, n_blocks_total, n_threads,
                              leading_comma);

      for (guint i = 0; i < n_round; i++)
        {
          if (!sink (&workers->blocks[set][i].block, user_data))
            {
              /* The blocks being formatted point into the caller's values. */
              wait_jobs (workers, &workers->blocks_pending[set ^ 1]);
              return (first + i) * block_values;
            }
        }

      if (n_next == 0)
        return next * block_values;
      first = next;
      n_round = n_next;
      set ^= 1;
    }
}

static void
parse_part (gpointer job)
{
  ParsePart *part = job;
  const char *s = part->start;

  part->n = _serio_codec_parse_tokens (&s, part->end, part->buf_end, part->out, part->room,
                                       &part->ended, &part->problem);
  part->stop = s;
}

gsize
_serio_workers_parse (SerioWorkers       *workers,
                      const char         *s,
                      const char         *span_end,
                      const char         *buf_end,
                      double             *values,
                      guint               n_threads,
                      SerioCodecProblem  *problem,
                      const char        **bad)
{
  gsize len = span_end - s;
  guint n_parts = 0;
  gsize stored = 0;
  const char *start = s;

  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);

  /* Cut at the first comma after each share's end. */
  while (n_parts < n_threads && start <= span_end)
    {
      ParsePart *part = &workers->parts[n_parts];
      const char *target = s + len * (n_parts + 1) / n_threads;
      const char *cut = NULL;
      gsize room;

      if (n_parts + 1 < n_threads && target < span_end)
        cut = memchr (MAX (target, start), ',', span_end - MAX (target, start));
      if (cut == NULL)
        cut = span_end;

      /* Tokens of at least one byte, with commas between them. */
      room = (cut - start + 1) / 2 + 1;
      if (part->room < room)
        {
          part->out = g_renew (double, part->out, room);
          part->room = room;
        }
      part->job.run = parse_part;
      part->start = start;
      part->end = cut;
      part->buf_end = buf_end;
      n_parts++;
      if (cut == span_end)
        break;
      start = cut + 1;
    }

  /* The calling thread parses the first share, the pool the others. */
  if (n_parts > 1)
    push_jobs (workers, workers->parts + 1, sizeof (ParsePart), n_parts - 1, &workers->parts_pending,
               n_parts - 1);
  parse_part (&workers->parts[0]);
  wait_jobs (workers, &workers->parts_pending);

  problem->reason = NULL;
  for (guint i = 0; i < n_parts; i++)
    {
      ParsePart *part = &workers->parts[i];

      memcpy (values + stored, part->out, part->n * sizeof (double));
      stored += part->n;
      if (part->problem.reason != NULL)
        {
          *problem = part->problem;
          *bad = part->stop;
          break;
        }
    }

  return stored;
}
