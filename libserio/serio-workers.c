/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-workers.c: long runs of values formatted and parsed by several
 * threads
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-dtype-private.h"
#include "serio-memory-private.h"
#include "serio-workers-private.h"

#ifdef G_OS_UNIX
# include <unistd.h>
#endif

/* Parsing cuts a span into windows of about this many bytes, each ending
 * at a comma or at the end of the span. */
#define PARSE_WINDOW (64 * 1024)
/* A window holds no more tokens than this: at most one token runs past
 * PARSE_WINDOW bytes, since it ends at the first comma after them. */
#define PARSE_ROOM   (PARSE_WINDOW / 2 + 2)

/* Slots of the ring, per thread: enough for the threads never to wait on
 * one another, few enough that little is worked ahead of a caller that
 * stops. */
#define SLOTS_PER_THREAD 2
#define MAX_SLOTS        (SLOTS_PER_THREAD * SERIO_MAX_THREADS)

/* The output of a parse is mapped ahead of the threads' writes this much
 * at a time (a huge page), see prefault_output(). */
#define PREFAULT_STEP (2 * 1024 * 1024)

/* A thread that waits for another spins this long before it sleeps: a
 * sleeping thread takes tens of microseconds to wake on a virtual
 * machine, as long as a third of a window's parse, and most waits are
 * shorter than that. */
#define SPIN_USEC 50

/* A slot is empty when it holds no item. */
#define NO_ITEM G_MAXSIZE
/* A window whose values all fit the type. */
#define NO_MISFIT G_MAXSIZE

/* A condition with a count of its signals, which a thread can wait for
 * spinning before it sleeps (wait_signal()). */
typedef struct
{
  GCond cond;
  gint  count;          /* changed atomically, under the lock, at each signal */
  guint n_waiting;      /* threads asleep on cond */
} Signal;

typedef struct
{
  const char *start;
  const char *end;
  /* Set under the lock once the window is parsed: where its values go
   * in the call's output, and how many it has. */
  gboolean    counted;
  gsize       first;
  gsize       n;
} ParseWindow;

/* The values of one window, once parsed, checked and stored. */
typedef struct
{
  double            *out;       /* PARSE_ROOM values */
  gsize              n;
  SerioCodecProblem  problem;
  const char        *stop;      /* the bad token, on a problem */
  gsize              misfit;    /* the first value the type does not hold, or NO_MISFIT */
} ParseSlot;

/*
 * A call works through items (blocks to format, windows to parse) with a
 * ring of slots: item i goes into slot i % n_slots once the item before it
 * in that slot was taken. The workers' threads and the calling thread
 * claim items in order and work them; the calling thread also takes the
 * results in order, whenever the next one is ready, and works an item
 * itself otherwise, so that the call keeps n_threads threads busy and no
 * more. Everything below @lock is under it; @done is broadcast whenever a
 * slot is filled or emptied.
 *
 * The threads are the workers' own, not GLib's shared pool, whose count
 * of threads a child of fork() inherits though the threads are not there
 * (so that its first parallel call waited for ever): each SerioWorkers
 * remembers the process its threads run in, and in another one (a child
 * of fork()) starts new ones. A SerioWorkers in the middle of a call in
 * another thread at the fork is not usable in the child, as its owner is
 * not; every other one is.
 */
struct _SerioWorkers
{
  GMutex            lock;
  Signal            done;

  /* The threads of this process (@pid), started as calls need them and
   * joined when the workers are freed. A child of fork() has none of
   * them: it forgets them and starts its own. */
  GThread          *threads[SERIO_MAX_THREADS - 1];
  guint             n_threads;
  gint64            pid;
  Signal            wake;       /* a thread is wanted, or quit */
  guint             wanted;     /* threads still to join the call */
  gboolean          quit;

  void            (*work) (SerioWorkers *workers,
                           gsize         index);
  guint             running;    /* threads of the workers in the call */
  guint             n_slots;
  gsize             slot_item[MAX_SLOTS];   /* the item a slot holds, or NO_ITEM */
  gsize             n_items;
  gsize             next_claim; /* the next item to work */
  gsize             next_take;  /* the next item the caller takes */
  gboolean          stop;       /* no more items are worked */

  /* formatting */
  SerioFormatBlock  blocks[MAX_SLOTS];
  gsize             block_size; /* of each block's out */
  const guint8     *elements;
  SerioDtype        format_dtype;
  gboolean          in_place;   /* aligned float64: formatted where they are */
  double           *doubles[MAX_SLOTS];     /* block_values each, otherwise */
  gsize             doubles_values;
  gsize             block_values;
  gboolean          leading_comma;

  /* parsing */
  ParseSlot         parsed[MAX_SLOTS];
  ParseWindow      *windows;
  gsize             windows_size;
  const char       *buf_end;
  SerioDtype        dtype;
  SerioDtype        out_dtype;
  char             *out;
  gsize             max_values;
  char             *prefaulted;      /* the output is mapped up to here */
  gsize             prefault_values;  /* and is to be up to this value */

  /* parsing whole lines: item i is lines[groups[i], groups[i + 1]) */
  SerioParseLine   *lines;
  gsize            *groups;
  gsize             groups_size;

  /* formatting whole records, grouped as the lines above */
  const SerioFormatLine *format_lines;
};

/* The processor's hint that the thread is spinning. */
static inline void
spin_pause (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__ ("yield");
#endif
}

/* Under the lock: tells the threads waiting on @signal that something
 * changed. */
static void
signal_all (Signal *signal)
{
  g_atomic_int_inc (&signal->count);
  if (signal->n_waiting > 0)
    g_cond_broadcast (&signal->cond);
}

/* Under the lock: waits for signal_all() on @signal, which may be for
 * something else than the thread waits for, as with a condition's wait.
 * The thread first spins a while with the lock released (SPIN_USEC), and
 * sleeps only if no signal came meanwhile: one that comes before it
 * sleeps is seen under the lock. */
static void
wait_signal (SerioWorkers *workers,
             Signal       *signal)
{
  gint count = g_atomic_int_get (&signal->count);
  gint64 deadline = 0;

  g_mutex_unlock (&workers->lock);
  for (guint i = 1; g_atomic_int_get (&signal->count) == count; i++)
    {
      spin_pause ();
      if (i % 64 == 0)
        {
          gint64 now = g_get_monotonic_time ();

          if (deadline == 0)
            deadline = now + SPIN_USEC;
          else if (now >= deadline)
            break;
        }
    }
  g_mutex_lock (&workers->lock);

  if (g_atomic_int_get (&signal->count) == count)
    {
      signal->n_waiting++;
      g_cond_wait (&signal->cond, &workers->lock);
      signal->n_waiting--;
    }
}

guint
_serio_threads_effective (guint requested)
{
  return _serio_threads_capped (requested);
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

static gint64
current_process (void)
{
#ifdef G_OS_UNIX
  return getpid ();
#else
  return 0;
#endif
}

SerioWorkers *
_serio_workers_new (void)
{
  SerioWorkers *workers = g_new0 (SerioWorkers, 1);

  g_mutex_init (&workers->lock);
  g_cond_init (&workers->done.cond);
  g_cond_init (&workers->wake.cond);
  workers->pid = current_process ();

  return workers;
}

/* The handles of threads that a parent process started, which its child
 * can neither join nor free (the threads are not there to drop their own
 * reference): kept, reachable, for the life of the process rather than
 * lost. A list pushed without a lock, since a lock could have been held by
 * another thread of the parent at the moment of the fork. */
typedef struct _Orphan Orphan;
struct _Orphan
{
  Orphan  *next;
  GThread *thread;
};
static Orphan *orphans;

static void
keep_orphan (GThread *thread)
{
  Orphan *orphan = g_new (Orphan, 1);

  orphan->thread = thread;
  do
    orphan->next = g_atomic_pointer_get (&orphans);
  while (!g_atomic_pointer_compare_and_exchange (&orphans, orphan->next, orphan));
}

/* In a child of fork(), the threads of the parent are not there: forget
 * them (they cannot be joined, nor their handles freed). One of them may
 * have held the lock at the fork (a thread that stops spinning takes it
 * to go to sleep, just after a call), which the child would then wait
 * for for ever, and those asleep are counted: the lock and the
 * conditions are made anew, which is safe as no thread but the calling
 * one can reach them in the child. Called before the lock is first taken
 * in a call. */
static void
forget_threads_of_parent (SerioWorkers *workers)
{
  gint64 pid = current_process ();

  if (workers->pid == pid)
    return;
  workers->pid = pid;
  for (guint i = 0; i < workers->n_threads; i++)
    keep_orphan (workers->threads[i]);
  workers->n_threads = 0;
  workers->wanted = 0;
  g_mutex_init (&workers->lock);
  g_cond_init (&workers->done.cond);
  g_cond_init (&workers->wake.cond);
  workers->done.n_waiting = 0;
  workers->wake.n_waiting = 0;
}

GMutex *
_serio_workers_get_lock (SerioWorkers *workers)
{
  return &workers->lock;
}

void
_serio_workers_free (SerioWorkers *workers)
{
  if (workers == NULL)
    return;

  forget_threads_of_parent (workers);
  g_mutex_lock (&workers->lock);
  workers->quit = TRUE;
  signal_all (&workers->wake);
  g_mutex_unlock (&workers->lock);
  for (guint i = 0; i < workers->n_threads; i++)
    g_thread_join (workers->threads[i]);

  for (guint i = 0; i < MAX_SLOTS; i++)
    {
      g_free (workers->blocks[i].out);
      g_free (workers->doubles[i]);
      g_free (workers->parsed[i].out);
    }
  g_free (workers->windows);
  g_free (workers->groups);
  g_mutex_clear (&workers->lock);
  g_cond_clear (&workers->done.cond);
  g_cond_clear (&workers->wake.cond);
  g_free (workers);
}

/* Under the lock: whether item @index may go into its slot now. */
static gboolean
slot_free_for (SerioWorkers *workers,
               gsize         index)
{
  return index < workers->next_take + workers->n_slots;
}

/* Works item @index into its slot, with the lock released. */
static void
work_item (SerioWorkers *workers,
           gsize         index)
{
  g_mutex_unlock (&workers->lock);
  workers->work (workers, index);
  g_mutex_lock (&workers->lock);

  workers->slot_item[index % workers->n_slots] = index;
  signal_all (&workers->done);
}

/* Under the lock, on a thread of the workers: works items of the call
 * until there are none left or the caller stops. */
static void
run_in_thread (SerioWorkers *workers)
{
  while (!workers->stop && workers->next_claim < workers->n_items)
    {
      gsize index = workers->next_claim++;

      while (!workers->stop && !slot_free_for (workers, index))
        wait_signal (workers, &workers->done);
      if (workers->stop)
        break;
      work_item (workers, index);
    }
  workers->running--;
  signal_all (&workers->done);
}

/* A thread of the workers: joins each call that wants it, until the
 * workers are freed. */
static gpointer
worker_thread (gpointer data)
{
  SerioWorkers *workers = data;

  g_mutex_lock (&workers->lock);
  for (;;)
    {
      while (workers->wanted == 0 && !workers->quit)
        wait_signal (workers, &workers->wake);
      if (workers->quit)
        break;
      workers->wanted--;
      run_in_thread (workers);
    }
  g_mutex_unlock (&workers->lock);

  return NULL;
}

/* Starts threads of this process up to @n (fewer if the system will not
 * start more); returns how many there are. */
static guint
start_threads (SerioWorkers *workers,
               guint         n)
{
  while (workers->n_threads < n)
    {
      GThread *thread = g_thread_try_new ("serio-worker", worker_thread, workers, NULL);

      if (thread == NULL)
        break;
      workers->threads[workers->n_threads++] = thread;
    }

  return MIN (workers->n_threads, n);
}

/* Works the @n_items items with @n_threads threads (the calling one
 * included) and hands each, in order, to @take on the calling thread,
 * which returns FALSE to stop. Returns the number of items taken. */
static gsize
run_ring (SerioWorkers  *workers,
          void         (*work) (SerioWorkers *workers,
                                gsize         index),
          gboolean     (*take) (SerioWorkers *workers,
                                gsize         index,
                                gpointer      data),
          gpointer       data,
          guint          n_threads,
          gsize          n_items)
{
  gsize taken = 0;

  forget_threads_of_parent (workers);
  n_threads = (guint) MIN ((gsize) CLAMP (n_threads, 1, SERIO_MAX_THREADS), n_items);
  if (n_threads > 1)
    n_threads = 1 + start_threads (workers, n_threads - 1);

  g_mutex_lock (&workers->lock);
  workers->work = work;
  workers->n_slots = SLOTS_PER_THREAD * n_threads;
  for (guint i = 0; i < workers->n_slots; i++)
    workers->slot_item[i] = NO_ITEM;
  workers->n_items = n_items;
  workers->next_claim = 0;
  workers->next_take = 0;
  workers->stop = FALSE;
  workers->running = n_threads - 1;
  workers->wanted = n_threads - 1;
  if (n_threads > 1)
    signal_all (&workers->wake);

  while (taken < n_items && !workers->stop)
    {
      gsize slot = taken % workers->n_slots;

      if (workers->slot_item[slot] == taken)
        {
          gboolean more;

          g_mutex_unlock (&workers->lock);
          more = take (workers, taken, data);
          g_mutex_lock (&workers->lock);

          workers->slot_item[slot] = NO_ITEM;
          workers->next_take = ++taken;
          if (!more)
            workers->stop = TRUE;
          signal_all (&workers->done);
        }
      else if (workers->next_claim < n_items && slot_free_for (workers, workers->next_claim))
        {
          work_item (workers, workers->next_claim++);
        }
      else
        {
          wait_signal (workers, &workers->done);
        }
    }

  /* The threads read the caller's data: they must be done. One that has
   * not joined the call yet need not. */
  workers->stop = TRUE;
  workers->running -= workers->wanted;
  workers->wanted = 0;
  signal_all (&workers->done);
  while (workers->running > 0)
    wait_signal (workers, &workers->done);
  g_mutex_unlock (&workers->lock);

  return taken;
}

static void
format_item (SerioWorkers *workers,
             gsize         index)
{
  guint slot = index % workers->n_slots;
  SerioFormatBlock *block = &workers->blocks[slot];
  const guint8 *elements = workers->elements +
    index * workers->block_values * serio_dtype_get_size (workers->format_dtype);
  char *out = block->out;
  gsize bad;

  if (workers->in_place)
    {
      block->values = (const double *) (gconstpointer) elements;
    }
  else
    {
      /* The caller checked that every element fits a double. */
      if (!_serio_dtype_to_doubles (workers->format_dtype, elements, workers->block_values,
                                    workers->doubles[slot], &bad))
        g_assert_not_reached ();
      block->values = workers->doubles[slot];
    }
  block->n_values = workers->block_values;
  block->leading_comma = workers->leading_comma || index > 0;

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

typedef struct
{
  SerioBlockSink  sink;
  gpointer        user_data;
} FormatTake;

static gboolean
take_block (SerioWorkers *workers,
            gsize         index,
            gpointer      data)
{
  FormatTake *take = data;

  return take->sink (&workers->blocks[index % workers->n_slots], take->user_data);
}

gsize
_serio_workers_format (SerioWorkers   *workers,
                       gconstpointer   elements,
                       SerioDtype      dtype,
                       gsize           n_values,
                       gsize           block_values,
                       guint           n_threads,
                       gboolean        leading_comma,
                       SerioBlockSink  sink,
                       gpointer        user_data)
{
  gsize block_size = block_values * (SERIO_CODEC_TOKEN_MAX + 1) + SERIO_CODEC_WRITE_SLACK;
  gsize n_blocks = n_values / block_values;
  FormatTake take = { sink, user_data };

  g_assert (block_values >= 1);
  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);
  if (n_blocks == 0)
    return 0;

  if (block_size > workers->block_size)
    {
      for (guint i = 0; i < MAX_SLOTS; i++)
        g_clear_pointer (&workers->blocks[i].out, g_free);
      workers->block_size = block_size;
    }
  workers->in_place = _serio_elements_in_place (elements, dtype);
  if (!workers->in_place && block_values > workers->doubles_values)
    {
      for (guint i = 0; i < MAX_SLOTS; i++)
        g_clear_pointer (&workers->doubles[i], g_free);
      workers->doubles_values = block_values;
    }
  for (guint i = 0; i < SLOTS_PER_THREAD * n_threads; i++)
    {
      if (workers->blocks[i].out == NULL)
        workers->blocks[i].out = g_malloc (workers->block_size);
      if (!workers->in_place && workers->doubles[i] == NULL)
        workers->doubles[i] = g_new (double, workers->doubles_values);
    }

  workers->elements = elements;
  workers->format_dtype = dtype;
  workers->block_values = block_values;
  workers->leading_comma = leading_comma;

  return run_ring (workers, format_item, take_block, &take, n_threads, n_blocks) * block_values;
}

/* Formats the @n_values elements of @dtype at @elements, commas between
 * them; @out has SERIO_CODEC_TOKEN_MAX + 1 bytes a value and
 * SERIO_CODEC_WRITE_SLACK. */
static char *
format_elements (char          *out,
                 gconstpointer  elements,
                 SerioDtype     dtype,
                 gsize          n_values)
{
  const guint8 *data = elements;
  gsize element = serio_dtype_get_size (dtype);

  if (_serio_elements_in_place (elements, dtype))
    return _serio_codec_write_tokens (out, elements, n_values, FALSE);

  for (gsize done = 0; done < n_values;)
    {
      double chunk[1024];
      gsize n = MIN (n_values - done, G_N_ELEMENTS (chunk));
      gsize bad;

      /* The caller checked that every element fits a double. */
      if (!_serio_dtype_to_doubles (dtype, data + done * element, n, chunk, &bad))
        g_assert_not_reached ();
      out = _serio_codec_write_tokens (out, chunk, n, done > 0);
      done += n;
    }

  return out;
}

/* Formats the records of group @index into its slot's block. */
static void
format_lines_item (SerioWorkers *workers,
                   gsize         index)
{
  SerioFormatBlock *block = &workers->blocks[index % workers->n_slots];
  char *out = block->out;
  gsize n_values = 0;

  for (gsize i = workers->groups[index]; i < workers->groups[index + 1]; i++)
    {
      const SerioFormatLine *line = &workers->format_lines[i];

      out = _serio_codec_write_header (out, line->name, line->name_len, line->n_values);
      out = format_elements (out, line->elements, line->dtype, line->n_values);
      *out++ = '\n';
      n_values += line->n_values;
    }

  block->values = NULL;
  block->n_values = n_values;
  block->leading_comma = FALSE;
  block->len = out - block->out;
}

/* Makes room for @n_groups + 1 group starts. */
static void
reserve_groups (SerioWorkers *workers,
                gsize         n_groups)
{
  if (n_groups + 1 >= workers->groups_size)
    {
      workers->groups_size = MAX (64, 2 * workers->groups_size);
      workers->groups = g_renew (gsize, workers->groups, workers->groups_size);
    }
}

gsize
_serio_workers_format_lines (SerioWorkers          *workers,
                             const SerioFormatLine *lines,
                             gsize                  n_lines,
                             gsize                  group_values,
                             guint                  n_threads,
                             SerioBlockSink         sink,
                             gpointer               user_data)
{
  FormatTake take = { sink, user_data };
  gsize n_groups = 0, values = 0, bound = 0, block_size = 0, taken;

  g_assert (group_values >= 1);
  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);
  for (gsize i = 0; i < n_lines; i++)
    {
      if (i == 0 || values >= group_values)
        {
          reserve_groups (workers, n_groups);
          workers->groups[n_groups++] = i;
          values = 0;
          bound = SERIO_CODEC_WRITE_SLACK;
        }
      values += lines[i].n_values;
      /* _serio_codec_record_bound() but for the slack, which the block
       * needs once */
      bound += _serio_codec_record_bound (lines[i].name_len, lines[i].n_values) -
               SERIO_CODEC_WRITE_SLACK;
      block_size = MAX (block_size, bound);
    }
  if (n_groups == 0)
    return 0;
  workers->groups[n_groups] = n_lines;

  if (block_size > workers->block_size)
    {
      for (guint i = 0; i < MAX_SLOTS; i++)
        g_clear_pointer (&workers->blocks[i].out, g_free);
      workers->block_size = block_size;
    }
  for (guint i = 0; i < SLOTS_PER_THREAD * n_threads; i++)
    {
      if (workers->blocks[i].out == NULL)
        workers->blocks[i].out = g_malloc (workers->block_size);
    }
  workers->format_lines = lines;

  taken = run_ring (workers, format_lines_item, take_block, &take, n_threads, n_groups);

  return workers->groups[taken];
}

/* Parses window @index into its slot's doubles, checks them against the
 * type and writes those before the first misfit to the output, after the
 * values of the windows before it: where that is, the thread learns from
 * the window before, which was claimed first and so is parsed about as
 * soon as this one. */
static void
parse_item (SerioWorkers *workers,
            gsize         index)
{
  ParseSlot *slot = &workers->parsed[index % workers->n_slots];
  ParseWindow *window = &workers->windows[index];
  const char *s = window->start;
  gsize first;
  gboolean ended;

  slot->n = _serio_codec_parse_tokens (&s, window->end, workers->buf_end, slot->out,
                                       PARSE_ROOM, &ended, &slot->problem);
  slot->stop = s;
  slot->misfit = NO_MISFIT;

  g_mutex_lock (&workers->lock);
  while (index > 0 && !workers->windows[index - 1].counted && !workers->stop)
    wait_signal (workers, &workers->done);
  if (workers->stop)
    {
      /* The caller took what it wanted: the window before may never be
       * parsed, and nothing of this one is needed. */
      g_mutex_unlock (&workers->lock);
      return;
    }
  first = index > 0 ? workers->windows[index - 1].first + workers->windows[index - 1].n : 0;
  window->first = first;
  window->n = slot->n;
  window->counted = TRUE;
  signal_all (&workers->done);
  g_mutex_unlock (&workers->lock);

  /* Values past those wanted are neither checked nor stored: the caller
   * has no room, and take_values() looks for a misfit only among those
   * wanted. A window is taken only once the item that parses it is
   * done. */
  if (first < workers->max_values)
    {
      gpointer out = workers->out + first * serio_dtype_get_size (workers->out_dtype);
      gsize n_store = MIN (slot->n, workers->max_values - first), stored;

      stored = n_store;
      if (workers->out_dtype == workers->dtype)
        stored = _serio_dtype_store_doubles (workers->dtype, slot->out, n_store, out);
      else
        {
          /* the doubles of a typed record (out_dtype is float64): checked,
           * and copied as they are */
          _serio_dtype_find_misfit (workers->dtype, slot->out, n_store, &stored);
          memcpy (out, slot->out, stored * sizeof (double));
        }
      if (stored < n_store)
        slot->misfit = stored;
    }
}

/* On the calling thread: maps the output of a parse for writing up to a
 * step past the huge page that holds the value @upto (from the start of
 * the output), a bound on the threads' writes. Were the threads to map it
 * by writing to it, those that meet at a page they find unmapped would
 * each have a huge page cleared for it (see _serio_prefault()). Mapping it
 * ahead is only advice: the values stored do not depend on it. */
static void
prefault_output (SerioWorkers *workers,
                 gsize         upto)
{
  gsize size = serio_dtype_get_size (workers->out_dtype);
  char *out_end = workers->out + workers->prefault_values * size;
  char *bound, *target;
  gsize to_page;

  if (upto >= workers->prefault_values)
    return;
  bound = workers->out + upto * size;
  to_page = PREFAULT_STEP - ((guintptr) bound & (PREFAULT_STEP - 1));
  target = (gsize) (out_end - bound) > to_page + PREFAULT_STEP ? bound + to_page + PREFAULT_STEP : out_end;
  if (target > workers->prefaulted)
    {
      _serio_prefault (workers->prefaulted, target - workers->prefaulted);
      workers->prefaulted = target;
    }
}

typedef struct
{
  gsize               max_values;
  gsize               stored;
  const char         *end;      /* where the values taken end */
  SerioParseStop     *stop;
  SerioTextSink       sink;
  gpointer            sink_data;
} ParseTake;

static gboolean
take_values (SerioWorkers *workers,
             gsize         index,
             gpointer      data)
{
  ParseTake *take = data;
  ParseSlot *slot = &workers->parsed[index % workers->n_slots];
  gsize left = take->max_values - take->stored;

  /* The windows in the threads' hands, this one and those after it,
   * store less than a slot's room each after the values taken. */
  prefault_output (workers, take->stored + workers->n_slots * PARSE_ROOM);

  /* A value the type does not hold, among those wanted: the values
   * before it are stored, and it comes before any bad token after it. */
  if (slot->misfit < left)
    {
      take->stored += slot->misfit;
      take->stop->misfit = TRUE;
      take->stop->value = slot->out[slot->misfit];
      return FALSE;
    }

  /* The values wanted end inside this window: they are stored; find where
   * the next token starts. A bad token beyond them is not reached yet. */
  if (slot->n > left)
    {
      const char *p = workers->windows[index].start;

      take->stored += left;
      for (gsize k = 0; k < left; k++)
        p = (const char *) memchr (p, ',', workers->windows[index].end - p) + 1;
      take->end = p;
      return FALSE;
    }

  take->stored += slot->n;
  if (slot->problem.reason == NULL)
    {
      /* The next token starts after the comma that ends the window. */
      take->end = workers->windows[index].end + (index + 1 < workers->n_items);
      if (take->sink != NULL)
        take->sink (workers->windows[index].start,
                    take->end - workers->windows[index].start, take->sink_data);
      return take->stored < take->max_values;
    }

  take->stop->problem = slot->problem;
  take->stop->bad = slot->stop;
  return FALSE;
}

/* Cuts [s, span_end) into windows of about PARSE_WINDOW bytes, each ending
 * at the first comma after that many bytes, or at the span's end: every
 * byte is looked at once. Returns the number of windows. */
static gsize
cut_windows (SerioWorkers *workers,
             const char   *s,
             const char   *span_end)
{
  gsize n = 0;

  for (;;)
    {
      const char *target = s + MIN ((gsize) (span_end - s), PARSE_WINDOW);
      const char *cut = target < span_end ? memchr (target, ',', span_end - target) : NULL;

      if (cut == NULL)
        cut = span_end;
      if (n == workers->windows_size)
        {
          workers->windows_size = MAX (64, 2 * workers->windows_size);
          workers->windows = g_renew (ParseWindow, workers->windows, workers->windows_size);
        }
      workers->windows[n].start = s;
      workers->windows[n].end = cut;
      workers->windows[n].counted = FALSE;
      n++;
      if (cut == span_end)
        return n;
      s = cut + 1;
    }
}

gsize
_serio_workers_parse (SerioWorkers       *workers,
                      const char         *s,
                      const char         *span_end,
                      const char         *buf_end,
                      SerioDtype          dtype,
                      SerioDtype          out_dtype,
                      gpointer            out,
                      gsize               max_values,
                      guint               n_threads,
                      const char        **end,
                      SerioParseStop     *stop,
                      SerioTextSink       sink,
                      gpointer            sink_data)
{
  ParseTake take = { max_values, 0, s, stop, sink, sink_data };
  gsize n_windows;

  g_assert (out_dtype == SERIO_DTYPE_FLOAT64 || out_dtype == dtype);
  n_threads = CLAMP (n_threads, 1, SERIO_MAX_THREADS);
  stop->problem.reason = NULL;
  stop->bad = NULL;
  stop->misfit = FALSE;
  n_windows = cut_windows (workers, s, span_end);

  /* Doubles wanted from one window, or with one thread: no threads, no
   * copy. */
  if (out_dtype == SERIO_DTYPE_FLOAT64 && (n_windows == 1 || n_threads == 1))
    {
      gboolean ended;
      gsize stored = _serio_codec_parse_tokens (&s, span_end, buf_end, out, max_values, &ended,
                                                &stop->problem);
      gsize misfit;

      stop->bad = s;
      *end = s;
      if (dtype != SERIO_DTYPE_FLOAT64 && _serio_dtype_find_misfit (dtype, out, stored, &misfit))
        {
          stop->problem.reason = NULL;
          stop->misfit = TRUE;
          stop->value = ((const double *) out)[misfit];
          return misfit;
        }
      return stored;
    }

  for (guint i = 0; i < SLOTS_PER_THREAD * n_threads; i++)
    {
      if (workers->parsed[i].out == NULL)
        workers->parsed[i].out = g_new (double, PARSE_ROOM);
    }
  workers->buf_end = buf_end;
  workers->dtype = dtype;
  workers->out_dtype = out_dtype;
  workers->out = out;
  workers->max_values = max_values;

  /* The output is mapped ahead of the first windows' values here, and
   * ahead of the others' as windows are taken (take_values()), up to
   * the most values the span can hold (a token and its comma take two
   * bytes or more). */
  workers->prefaulted = out;
  workers->prefault_values = MIN (max_values, (gsize) (span_end - s) / 2 + 1);
  prefault_output (workers, (gsize) SLOTS_PER_THREAD * n_threads * PARSE_ROOM);

  run_ring (workers, parse_item, take_values, &take, n_threads, n_windows);
  *end = take.end;

  return take.stored;
}

/* Parses the lines of group @index. */
static void
parse_lines_item (SerioWorkers *workers,
                  gsize         index)
{
  for (gsize i = workers->groups[index]; i < workers->groups[index + 1]; i++)
    {
      SerioParseLine *line = &workers->lines[i];
      const char *s = line->start;
      SerioCodecProblem problem;
      gboolean ended;
      gsize n, misfit;

      n = _serio_codec_parse_tokens (&s, line->end, workers->buf_end, line->out, line->count,
                                     &ended, &problem);
      line->ok = problem.reason == NULL && ended && n == line->count;
      /* The typed elements (into the reader's scratch), checked against
       * the type as they are stored */
      if (line->ok && line->typed != NULL)
        line->ok = _serio_dtype_store_doubles (line->dtype, line->out, n, line->typed) == n;
      else if (line->ok && line->dtype != SERIO_DTYPE_FLOAT64)
        line->ok = !_serio_dtype_find_misfit (line->dtype, line->out, n, &misfit);
    }
}

typedef struct
{
  SerioTextSink  sink;
  gpointer       sink_data;
} LinesTake;

/* Every line was parsed by the time its group is taken: the sink, if
 * any, gets the group's text while the threads parse on. */
static gboolean
take_lines (SerioWorkers *workers,
            gsize         index,
            gpointer      data)
{
  LinesTake *take = data;
  const SerioParseLine *first = &workers->lines[workers->groups[index]];
  const SerioParseLine *last = &workers->lines[workers->groups[index + 1] - 1];

  if (take->sink != NULL)
    take->sink (first->start, last->end - first->start, take->sink_data);
  return TRUE;
}

void
_serio_workers_parse_lines (SerioWorkers   *workers,
                            SerioParseLine *lines,
                            gsize           n_lines,
                            const char     *buf_end,
                            guint           n_threads,
                            SerioTextSink   sink,
                            gpointer        sink_data)
{
  LinesTake take = { sink, sink_data };
  gsize n_groups = 0, bytes = 0;

  /* Groups of about PARSE_WINDOW bytes, as the windows of a long line:
   * enough work per item for its cost in locking to be small. */
  for (gsize i = 0; i < n_lines; i++)
    {
      if (i == 0 || bytes >= PARSE_WINDOW)
        {
          reserve_groups (workers, n_groups);
          workers->groups[n_groups++] = i;
          bytes = 0;
        }
      bytes += lines[i].end - lines[i].start;
    }
  if (n_groups == 0)
    return;
  workers->groups[n_groups] = n_lines;
  workers->lines = lines;
  workers->buf_end = buf_end;

  run_ring (workers, parse_lines_item, take_lines, &take, n_threads, n_groups);
}
