/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-workers.c: long runs of values formatted and parsed by several
 * threads
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-workers.h"

/* One thread's share of a span: the tokens of [start, end), where end is
 * a comma or the span's end. */
typedef struct
{
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
  GThreadPool      *pool;
  GFunc             job;        /* what the pool does with the batch's items */
  GMutex            lock;
  GCond             done;
  guint             pending;    /* items of the batch not done yet */

  SerioFormatBlock  blocks[SERIO_MAX_THREADS];
  gsize             block_size; /* of each block's out */
  ParsePart         parts[SERIO_MAX_THREADS];
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

  workers->job (item, NULL);

  g_mutex_lock (&workers->lock);
  if (--workers->pending == 0)
    g_cond_signal (&workers->done);
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
      g_free (workers->blocks[i].out);
      g_free (workers->parts[i].out);
    }
  g_mutex_clear (&workers->lock);
  g_cond_clear (&workers->done);
  g_free (workers);
}

/* Runs @job on the @n_items items of @items, each @item_size bytes: the
 * first on this thread, the others on the pool; returns when all are done. */
static void
run_batch (SerioWorkers *workers,
           GFunc         job,
           gpointer      items,
           gsize         item_size,
           guint         n_items)
{
  if (n_items > 1)
    {
      if (workers->pool == NULL)
        {
          workers->pool = g_thread_pool_new (run_in_pool, workers, SERIO_MAX_THREADS - 1, FALSE, NULL);
          g_assert (workers->pool != NULL);
        }
      g_thread_pool_set_max_threads (workers->pool, n_items - 1, NULL);

      workers->job = job;
      workers->pending = n_items - 1;
      for (guint i = 1; i < n_items; i++)
        g_thread_pool_push (workers->pool, (char *) items + i * item_size, NULL);
    }

  job (items, NULL);

  if (n_items > 1)
    {
      g_mutex_lock (&workers->lock);
      while (workers->pending > 0)
        g_cond_wait (&workers->done, &workers->lock);
      g_mutex_unlock (&workers->lock);
    }
}

static void
format_block (gpointer item,
              gpointer unused)
{
  SerioFormatBlock *block = item;
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

const SerioFormatBlock *
_serio_workers_format (SerioWorkers *workers,
                       const double *values,
                       gsize         block_values,
                       guint         n_blocks,
                       gboolean      leading_comma)
{
  gsize block_size = block_values * (SERIO_CODEC_TOKEN_MAX + 1) + SERIO_CODEC_WRITE_SLACK;

  g_assert (n_blocks >= 1 && n_blocks <= SERIO_MAX_THREADS && block_values >= 1);

  if (block_size > workers->block_size)
    {
      for (guint i = 0; i < SERIO_MAX_THREADS; i++)
        g_clear_pointer (&workers->blocks[i].out, g_free);
      workers->block_size = block_size;
    }

  for (guint i = 0; i < n_blocks; i++)
    {
      SerioFormatBlock *block = &workers->blocks[i];

      if (block->out == NULL)
        block->out = g_malloc (workers->block_size);
      block->values = values + (gsize) i * block_values;
      block->n_values = block_values;
      block->leading_comma = leading_comma || i > 0;
    }

  run_batch (workers, format_block, workers->blocks, sizeof (SerioFormatBlock), n_blocks);

  return workers->blocks;
}

static void
parse_part (gpointer item,
            gpointer unused)
{
  ParsePart *part = item;
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
      part->start = start;
      part->end = cut;
      part->buf_end = buf_end;
      n_parts++;
      if (cut == span_end)
        break;
      start = cut + 1;
    }

  run_batch (workers, parse_part, workers->parts, sizeof (ParsePart), n_parts);

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
