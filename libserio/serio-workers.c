/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-workers.c: long runs of values formatted and parsed by several
 * threads
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-workers.h"

typedef struct _Job Job;

/* What the pool runs: every job starts with this. */
struct _Job
{
  void         (*run) (Job *job);
  SerioWorkers  *workers;
  guint         *pending;       /* the count of its batch, decremented when done */
};

/* One slot of the formatting ring: block @index, once @ready. */
typedef struct
{
  SerioFormatBlock  block;
  gsize             index;
  gboolean          ready;
} Slot;

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

/* Formatting is a ring of slots: the pool's threads claim blocks in order
 * and format each into the slot of its index (once the caller has handed
 * out the block that slot held), while the caller hands the blocks out in
 * order as they become ready. Everything below is under @lock, and @done
 * is broadcast at every change. */
#define SLOTS_PER_THREAD 2

struct _SerioWorkers
{
  GThreadPool  *pool;
  GMutex        lock;
  GCond         done;

  Slot          ring[SLOTS_PER_THREAD * SERIO_MAX_THREADS];
  guint         n_slots;
  gsize         slot_size;      /* of each slot's out */
  Job           formatters[SERIO_MAX_THREADS];
  guint         formatters_running;
  const double *values;
  gsize         block_values;
  gsize         n_blocks;
  gboolean      leading_comma;
  gsize         next_claim;     /* the next block a formatter takes */
  gsize         next_out;       /* the next block the caller hands out */
  gboolean      stop;           /* the caller hands out no more */

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
  if (job->pending != NULL && --*job->pending == 0)
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
  for (guint i = 0; i < G_N_ELEMENTS (workers->ring); i++)
    g_free (workers->ring[i].block.out);
  for (guint i = 0; i < SERIO_MAX_THREADS; i++)
    g_free (workers->parts[i].out);
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

  if (pending != NULL)
    {
      g_mutex_lock (&workers->lock);
      *pending = n_jobs;
      g_mutex_unlock (&workers->lock);
    }
  for (guint i = 0; i < n_jobs; i++)
    {
      Job *job = (Job *) (gpointer) ((char *) jobs + i * job_size);

      job->workers = workers;
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
format_block (SerioFormatBlock *block)
{
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

/* A formatter of the pool: claims blocks until there are none left or the
 * caller stops. */
static void
run_formatter (Job *job)
{
  SerioWorkers *workers = job->workers;

  g_mutex_lock (&workers->lock);
  for (;;)
    {
      gsize index;
      Slot *slot;

      if (workers->stop || workers->next_claim >= workers->n_blocks)
        break;
      index = workers->next_claim++;
      slot = &workers->ring[index % workers->n_slots];
      /* The slot is free once the caller handed out the block before. */
      while (!workers->stop && index >= workers->next_out + workers->n_slots)
        g_cond_wait (&workers->done, &workers->lock);
      if (workers->stop)
        break;
      g_mutex_unlock (&workers->lock);

      slot->block.values = workers->values + index * workers->block_values;
      slot->block.n_values = workers->block_values;
      slot->block.leading_comma = workers->leading_comma || index > 0;
      format_block (&slot->block);

      g_mutex_lock (&workers->lock);
      slot->index = index;
      slot->ready = TRUE;
      g_cond_broadcast (&workers->done);
    }
  workers->formatters_running--;
  g_cond_broadcast (&workers->done);
  g_mutex_unlock (&workers->lock);
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
  gsize slot_size = block_values * (SERIO_CODEC_TOKEN_MAX + 1) + SERIO_CODEC_WRITE_SLACK;
  gsize n_blocks = n_values / block_values;
  gsize handed = 0;

  g_assert (block_values >= 1);
  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);
  if (n_blocks == 0)
    return 0;

  if (slot_size > workers->slot_size)
    {
      for (guint i = 0; i < G_N_ELEMENTS (workers->ring); i++)
        g_clear_pointer (&workers->ring[i].block.out, g_free);
      workers->slot_size = slot_size;
    }
  workers->n_slots = SLOTS_PER_THREAD * n_threads;
  for (guint i = 0; i < workers->n_slots; i++)
    {
      if (workers->ring[i].block.out == NULL)
        workers->ring[i].block.out = g_malloc (workers->slot_size);
      workers->ring[i].ready = FALSE;
    }

  workers->values = values;
  workers->block_values = block_values;
  workers->n_blocks = n_blocks;
  workers->leading_comma = leading_comma;
  workers->next_claim = 0;
  workers->next_out = 0;
  workers->stop = FALSE;
  workers->formatters_running = n_threads;
  for (guint i = 0; i < n_threads; i++)
    workers->formatters[i].run = run_formatter;
  /* Every thread formats: the calling one hands the blocks out. */
  push_jobs (workers, workers->formatters, sizeof (Job), n_threads, NULL, n_threads);

  for (; handed < n_blocks; handed++)
    {
      Slot *slot = &workers->ring[handed % workers->n_slots];
      gboolean ok;

      g_mutex_lock (&workers->lock);
      while (!(slot->ready && slot->index == handed))
        g_cond_wait (&workers->done, &workers->lock);
      g_mutex_unlock (&workers->lock);

      ok = sink (&slot->block, user_data);

      g_mutex_lock (&workers->lock);
      slot->ready = FALSE;
      workers->next_out = handed + 1;
      if (!ok)
        workers->stop = TRUE;
      g_cond_broadcast (&workers->done);
      g_mutex_unlock (&workers->lock);
      if (!ok)
        break;
    }

  /* The formatters read the caller's values: they must be done. */
  g_mutex_lock (&workers->lock);
  while (workers->formatters_running > 0)
    g_cond_wait (&workers->done, &workers->lock);
  g_mutex_unlock (&workers->lock);

  return handed * block_values;
}

static void
parse_part (Job *job)
{
  ParsePart *part = (ParsePart *) job;
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
  parse_part (&workers->parts[0].job);
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
