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

/* Buffers of parsed doubles, per thread: a thread whose window cannot be
 * stored yet (a window before it is still being parsed) keeps it in its
 * buffer and parses on into another one, rather than waiting. */
#define PARSE_BUFFERS_PER_THREAD 3
#define MAX_PARSE_BUFFERS        (PARSE_BUFFERS_PER_THREAD * SERIO_MAX_THREADS)

/* The output of a parse is mapped ahead of the threads' writes this much
 * at a time (a huge page), see prefault_output(). */
#define PREFAULT_STEP (2 * 1024 * 1024)
/* … by a thread of the parse that is free, while this many windows are
 * left to parse or more: a step can take several hundred microseconds on
 * a virtual machine, and the call ends only once it is done. */
#define PREFAULT_MIN_LEFT 16

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

/* Where a window of a parse is: each goes through these in order, each
 * change under the lock. What a thread writes of a window without the
 * lock (its parse's results, its misfit) it writes before the change
 * that hands the window on. */
typedef enum
{
  WINDOW_WAITING,       /* no thread took it yet */
  WINDOW_PARSING,       /* a thread parses it into a buffer */
  WINDOW_PARSED,        /* its doubles are in its buffer; where they go is
                         * not known while a window before it is parsed */
  WINDOW_COUNTED,       /* where they go is known (first): to be stored */
  WINDOW_STORING,       /* a thread stores them */
  WINDOW_STORED,        /* its buffer is free; the caller may take it */
} WindowState;

/* A window of a parse, and what its parse found. */
typedef struct
{
  const char        *start;
  const char        *end;
  WindowState        state;
  guint              buffer;    /* its doubles, from its parse until stored */
  guint              parser;    /* the thread that parsed it: 0 for the caller,
                                 * from 1 for the workers' (run_parse_thread()) */
  gsize              n;         /* the values parsed */
  SerioCodecProblem  problem;   /* why the parse stopped before the end, if it did */
  const char        *stop;      /* the bad token, on a problem */
  gsize              first;     /* where its values go in the output, once counted */
  gsize              misfit;    /* the first value the type does not hold, or NO_MISFIT */
  double             misfit_value;
} ParseWindow;

/*
 * A call that formats blocks, or parses groups of short lines, works
 * through them as items with a ring of slots: item i goes into slot i % n_slots
 * once the item before it in that slot was taken. The workers' threads
 * and the calling thread claim items in order and work them; the calling
 * thread also takes the results in order, whenever the next one is ready,
 * and works an item itself otherwise, so that the call keeps n_threads
 * threads busy and no more. A parse of a long run of values goes so too,
 * but for its windows' results, which do not wait in slots for the
 * caller: see run_parse(). Everything below @lock is under it; @done is
 * broadcast whenever a slot is filled or emptied, and whenever a parse's
 * window is ready for its next step.
 *
 * The threads are the workers' own, not GLib's shared pool, whose count
 * of threads a child of fork() inherits though the threads are not there
 * (so that its first parallel call waited for ever): each SerioWorkers
 * remembers the process its threads run in, and in another one (a child
 * of fork()) starts new ones. A SerioWorkers in the middle of a call in
 * another thread at the fork is not usable in the child, as its owner is
 * not; every other one is.
 *
 * A SerioWorkers that its reader or writer frees is kept for the next one
 * (cached_workers, up to CACHED_WORKERS of them), its threads asleep and
 * its buffers kept, unless they hold more than CACHED_BUFFER_BYTES: a
 * reader or writer used for one array, as the bundle's calls use them,
 * otherwise started its threads, had the system map its buffers and
 * joined the threads again on every call, which cost more than two
 * threads gave to an array of up to 5x10^4 values.
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

  void            (*run_thread) (SerioWorkers *workers);  /* a thread's part of the call */
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

  /* parsing: the windows, and buffers for their doubles, of which those
   * not in use are free[0, n_free) */
  ParseWindow      *windows;
  gsize             windows_size;
  double           *buffers[MAX_PARSE_BUFFERS];
  guint             free[MAX_PARSE_BUFFERS];
  guint             n_free;
  gsize             next_count;     /* windows before it are counted */
  gsize             counted_values; /* their values */
  guint             n_joined;       /* threads of the workers that joined the parse */
  gsize             next_store;     /* windows before it are stored or being stored */
  guint             n_to_store;     /* windows counted and not being stored */
  const char       *buf_end;
  SerioDtype        dtype;
  SerioDtype        out_dtype;
  char             *out;
  gsize             max_values;
  char             *prefault_base;    /* the output of the call that mapped ... */
  char             *prefaulted;       /* ... up to here, or is mapping it */
  gboolean          prefaulting;      /* a thread maps it */
  gsize             prefault_values;  /* the output is to be mapped up to this value */
  gsize             prefault_ahead;   /* values past those counted that can be stored */

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

/* The SerioWorkers kept for the next readers and writers (see above):
 * taken and put back with atomic operations, no lock, so that a child of
 * fork() finds the slots usable whatever another thread of the parent
 * was doing. */
#define CACHED_WORKERS 2
#define CACHED_BUFFER_BYTES (16 * 1024 * 1024)
static SerioWorkers *cached_workers[CACHED_WORKERS];

SerioWorkers *
_serio_workers_new (void)
{
  SerioWorkers *workers;

  for (guint i = 0; i < CACHED_WORKERS; i++)
    {
      workers = g_atomic_pointer_get (&cached_workers[i]);
      /* (whoever takes a pointer from a slot owns what it points to: the
       * object may have been taken and put back meanwhile, still idle) */
      if (workers != NULL &&
          g_atomic_pointer_compare_and_exchange (&cached_workers[i], workers, NULL))
        {
          /* The output of its last parse was its last owner's. */
          workers->prefault_base = workers->prefaulted = NULL;
          return workers;
        }
    }

  workers = g_new0 (SerioWorkers, 1);

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

gsize
_serio_workers_get_buffer_bytes (SerioWorkers *workers)
{
  gsize bytes = 0;

  for (guint i = 0; i < MAX_SLOTS; i++)
    {
      bytes += workers->blocks[i].out != NULL ? workers->block_size : 0;
      bytes += workers->doubles[i] != NULL ? workers->doubles_values * sizeof (double) : 0;
    }
  for (guint i = 0; i < MAX_PARSE_BUFFERS; i++)
    bytes += workers->buffers[i] != NULL ? PARSE_ROOM * sizeof (double) : 0;

  return bytes;
}

static void
free_buffers (SerioWorkers *workers)
{
  for (guint i = 0; i < MAX_SLOTS; i++)
    {
      g_clear_pointer (&workers->blocks[i].out, g_free);
      g_clear_pointer (&workers->doubles[i], g_free);
    }
  for (guint i = 0; i < MAX_PARSE_BUFFERS; i++)
    g_clear_pointer (&workers->buffers[i], g_free);
}

void
_serio_workers_free (SerioWorkers *workers)
{
  if (workers == NULL)
    return;

  forget_threads_of_parent (workers);
  /* Kept for the next reader or writer, if a slot is free (see
   * cached_workers); buffers of many threads are not kept idle. */
  if (_serio_workers_get_buffer_bytes (workers) > CACHED_BUFFER_BYTES)
    free_buffers (workers);
  for (guint i = 0; i < CACHED_WORKERS; i++)
    {
      if (g_atomic_pointer_compare_and_exchange (&cached_workers[i], NULL, workers))
        return;
    }

  g_mutex_lock (&workers->lock);
  workers->quit = TRUE;
  signal_all (&workers->wake);
  g_mutex_unlock (&workers->lock);
  for (guint i = 0; i < workers->n_threads; i++)
    g_thread_join (workers->threads[i]);

  free_buffers (workers);
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
      workers->run_thread (workers);
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

/* Starts a call of @n_threads threads (the calling one included; fewer
 * when the system will not start more), each of the workers' running
 * @run_thread, and returns with the lock held and the number of threads
 * in the call. */
static guint
begin_call (SerioWorkers  *workers,
            void         (*run_thread) (SerioWorkers *workers),
            guint          n_threads)
{
  forget_threads_of_parent (workers);
  if (n_threads > 1)
    n_threads = 1 + start_threads (workers, n_threads - 1);

  g_mutex_lock (&workers->lock);
  workers->run_thread = run_thread;
  workers->next_claim = 0;
  workers->stop = FALSE;
  workers->running = n_threads - 1;
  workers->wanted = n_threads - 1;
  if (n_threads > 1)
    signal_all (&workers->wake);

  return n_threads;
}

/* Ends a call, with the lock held, which it releases: the threads read
 * the caller's data, so they must be done. One that has not joined the
 * call yet need not. */
static void
end_call (SerioWorkers *workers)
{
  workers->stop = TRUE;
  workers->running -= workers->wanted;
  workers->wanted = 0;
  signal_all (&workers->done);
  while (workers->running > 0)
    wait_signal (workers, &workers->done);
  g_mutex_unlock (&workers->lock);
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

  n_threads = (guint) MIN ((gsize) CLAMP (n_threads, 1, SERIO_MAX_THREADS), n_items);
  n_threads = begin_call (workers, run_in_thread, n_threads);
  workers->work = work;
  workers->n_slots = SLOTS_PER_THREAD * n_threads;
  for (guint i = 0; i < workers->n_slots; i++)
    workers->slot_item[i] = NO_ITEM;
  workers->n_items = n_items;
  workers->next_take = 0;

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

  end_call (workers);

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

/*
 * A parse of a long run of values: the span is cut into windows at commas
 * (cut_windows()), and each window is
 *  1. parsed by a thread into a buffer of doubles of its own;
 *  2. counted: where its values go in the output is known once every
 *     window before it was parsed (count_windows());
 *  3. stored: its values checked against the type and written to the
 *     output, which frees its buffer (store_window()): by the thread that
 *     parsed it, when the window is counted as soon as it is parsed, and
 *     otherwise by the first thread that is free;
 *  4. taken by the calling thread, in order (take_values()).
 * No thread waits for another's window: one whose window cannot be
 * counted yet leaves it in its buffer and parses the next one into
 * another, as long as a buffer is free; and the windows do not wait for
 * the caller to take them, which it does as it is free (between its own
 * parses, the reads and the hashing of its sink).
 */

/* Under the lock: counts the windows parsed, in order, from the first
 * not counted yet. Returns whether it counted any. */
static gboolean
count_windows (SerioWorkers *workers)
{
  gsize from = workers->next_count;

  while (workers->next_count < workers->n_items &&
         workers->windows[workers->next_count].state == WINDOW_PARSED)
    {
      ParseWindow *window = &workers->windows[workers->next_count++];

      window->first = workers->counted_values;
      window->state = WINDOW_COUNTED;
      workers->counted_values += window->n;
      workers->n_to_store++;
    }

  return workers->next_count > from;
}

/* Under the lock: a window counted that no thread stores yet, parsed by
 * thread @parser unless @any, or NO_ITEM. The windows counted are those
 * before next_count, and none before next_store is to be stored; each of
 * those to be stored holds a buffer, so that there are few. */
static gsize
window_to_store (SerioWorkers *workers,
                 guint         parser,
                 gboolean      any)
{
  if (workers->n_to_store == 0)
    return NO_ITEM;
  while (workers->windows[workers->next_store].state != WINDOW_COUNTED)
    workers->next_store++;
  for (gsize i = workers->next_store; i < workers->next_count; i++)
    {
      const ParseWindow *window = &workers->windows[i];

      if (window->state == WINDOW_COUNTED && (any || window->parser == parser))
        return i;
    }

  return NO_ITEM;
}

/* Under the lock, which it releases while it works: stores the counted
 * window @index, whose values, up to the first that the type does not
 * hold, go to the output, after the values of the windows before it. */
static void
store_window (SerioWorkers *workers,
              gsize         index)
{
  ParseWindow *window = &workers->windows[index];
  const double *values = workers->buffers[window->buffer];

  window->state = WINDOW_STORING;
  workers->n_to_store--;
  g_mutex_unlock (&workers->lock);

  /* Values past those wanted are neither checked nor stored: the caller
   * has no room, and take_values() looks for a misfit only among those
   * wanted. */
  if (window->first < workers->max_values)
    {
      gpointer out = workers->out + window->first * serio_dtype_get_size (workers->out_dtype);
      gsize n_store = MIN (window->n, workers->max_values - window->first), stored;

      stored = n_store;
      if (workers->out_dtype == workers->dtype)
        stored = _serio_dtype_store_doubles (workers->dtype, values, n_store, out);
      else
        {
          /* the doubles of a typed record (out_dtype is float64): checked,
           * and copied as they are */
          _serio_dtype_find_misfit (workers->dtype, values, n_store, &stored);
          memcpy (out, values, stored * sizeof (double));
        }
      if (stored < n_store)
        {
          window->misfit = stored;
          window->misfit_value = values[stored];
        }
    }

  g_mutex_lock (&workers->lock);
  workers->free[workers->n_free++] = window->buffer;
  window->state = WINDOW_STORED;
  signal_all (&workers->done);
}

/* Under the lock, which it releases while it parses: parses window @index
 * into a free buffer and counts it, with the windows after it that were
 * parsed before it; stores it while its doubles are in this thread's
 * cache if it was counted, and leaves it to be stored otherwise. */
static void
parse_window (SerioWorkers *workers,
              gsize         index,
              guint         parser)
{
  ParseWindow *window = &workers->windows[index];
  const char *s = window->start;
  gboolean ended;

  window->state = WINDOW_PARSING;
  window->parser = parser;
  window->buffer = workers->free[--workers->n_free];
  g_mutex_unlock (&workers->lock);

  window->n = _serio_codec_parse_tokens (&s, window->end, workers->buf_end,
                                         workers->buffers[window->buffer], PARSE_ROOM, &ended,
                                         &window->problem);
  window->stop = s;
  window->misfit = NO_MISFIT;

  g_mutex_lock (&workers->lock);
  window->state = WINDOW_PARSED;
  if (count_windows (workers))
    {
      /* Windows after it that other threads parsed may be counted too:
       * they are to be stored. */
      signal_all (&workers->done);
      if (window->state == WINDOW_COUNTED && !workers->stop)
        store_window (workers, index);
    }
}

/* Under the lock: whether the output of the parse is to be mapped further
 * ahead of the threads' writes, which go no further than the values
 * counted and a buffer's room for each window in the threads' hands. Sets
 * *@target to where it is to be mapped up to: a step past the huge page
 * that holds that bound. Were the threads to map it by writing to it,
 * those that meet at a page they find unmapped would each have a huge
 * page cleared for it (see _serio_prefault()). */
static gboolean
prefault_due (SerioWorkers  *workers,
              char         **target)
{
  gsize size = serio_dtype_get_size (workers->out_dtype);
  gsize upto = workers->counted_values + workers->prefault_ahead;
  char *out_end = workers->out + workers->prefault_values * size;
  char *bound;
  gsize to_page;

  if (workers->prefaulting || workers->n_items - workers->next_claim < PREFAULT_MIN_LEFT ||
      upto >= workers->prefault_values)
    return FALSE;
  bound = workers->out + upto * size;
  to_page = PREFAULT_STEP - ((guintptr) bound & (PREFAULT_STEP - 1));
  *target = (gsize) (out_end - bound) > to_page + PREFAULT_STEP ? bound + to_page + PREFAULT_STEP : out_end;

  return *target > workers->prefaulted;
}

/* Under the lock, which it releases while it works: maps the output up
 * to @target for writing, from where it is mapped. Mapping it ahead is
 * only advice: the values stored do not depend on it. */
static void
prefault_output (SerioWorkers *workers,
                 char         *target)
{
  char *from = workers->prefaulted;

  workers->prefaulted = target;
  workers->prefaulting = TRUE;
  g_mutex_unlock (&workers->lock);
  _serio_prefault (from, target - from);
  g_mutex_lock (&workers->lock);
  workers->prefaulting = FALSE;
}

/* Under the lock: works a step of the parse on thread @parser, if there
 * is one to work: a window it parsed that is to be stored (its doubles
 * are in its cache), then the output to map ahead of the stores, then a
 * window to parse, then a window that another thread parsed to store.
 * Returns whether it worked one. */
static gboolean
work_parse (SerioWorkers *workers,
            guint         parser)
{
  char *target;
  gsize index;

  if (workers->stop)
    return FALSE;
  index = window_to_store (workers, parser, FALSE);
  if (index != NO_ITEM)
    {
      store_window (workers, index);
      return TRUE;
    }
  if (prefault_due (workers, &target))
    {
      prefault_output (workers, target);
      return TRUE;
    }
  if (workers->next_claim < workers->n_items && workers->n_free > 0)
    {
      parse_window (workers, workers->next_claim++, parser);
      return TRUE;
    }
  index = window_to_store (workers, parser, TRUE);
  if (index != NO_ITEM)
    {
      store_window (workers, index);
      return TRUE;
    }

  return FALSE;
}

/* Under the lock, on a thread of the workers: works steps of the parse
 * until every window was counted and is stored, or the caller stops. */
static void
run_parse_thread (SerioWorkers *workers)
{
  guint parser = ++workers->n_joined;

  while (!workers->stop && (workers->next_count < workers->n_items || workers->n_to_store > 0))
    {
      if (!work_parse (workers, parser))
        wait_signal (workers, &workers->done);
    }
  workers->running--;
  signal_all (&workers->done);
}

typedef struct
{
  gsize               max_values;
  gsize               stored;
  const char         *end;      /* where the values taken end */
  gboolean            ended;    /* at the span's end */
  SerioParseStop     *stop;
  SerioTextSink       sink;
  gpointer            sink_data;
} ParseTake;

/* On the calling thread, the lock released: takes the stored window
 * @index. Returns whether to go on. */
static gboolean
take_values (SerioWorkers *workers,
             gsize         index,
             ParseTake    *take)
{
  const ParseWindow *window = &workers->windows[index];
  gsize left = take->max_values - take->stored;

  /* A value the type does not hold, among those wanted: the values
   * before it are stored, and it comes before any bad token after it. */
  if (window->misfit < left)
    {
      take->stored += window->misfit;
      take->stop->misfit = TRUE;
      take->stop->value = window->misfit_value;
      return FALSE;
    }

  /* The values wanted end inside this window, or just before its bad
   * token: they are stored; find where the next token starts. A bad
   * token beyond them is not reached yet, as on one thread. */
  if (window->n > left || (window->n == left && window->problem.reason != NULL))
    {
      const char *p = window->start;

      take->stored += left;
      for (gsize k = 0; k < left; k++)
        p = (const char *) memchr (p, ',', window->end - p) + 1;
      take->end = p;
      return FALSE;
    }

  take->stored += window->n;
  if (window->problem.reason == NULL)
    {
      /* The next token starts after the comma that ends the window, or
       * the last window ends the span. */
      take->ended = index + 1 == workers->n_items;
      take->end = window->end + !take->ended;
      if (take->sink != NULL)
        take->sink (window->start, take->end - window->start, take->sink_data);
      return take->stored < take->max_values;
    }

  take->stop->problem = window->problem;
  take->stop->bad = window->stop;
  return FALSE;
}

/* Parses the @n_windows windows cut with @n_threads threads (the calling
 * one included), the calling thread taking them in order as they are
 * stored and working steps of the parse otherwise. */
static void
run_parse (SerioWorkers *workers,
           ParseTake    *take,
           guint         n_threads,
           gsize         n_windows)
{
  gsize taken = 0;
  guint n_buffers;

  n_threads = (guint) MIN ((gsize) CLAMP (n_threads, 1, SERIO_MAX_THREADS), n_windows);
  n_threads = begin_call (workers, run_parse_thread, n_threads);
  n_buffers = PARSE_BUFFERS_PER_THREAD * n_threads;
  for (guint i = 0; i < n_buffers; i++)
    {
      if (workers->buffers[i] == NULL)
        workers->buffers[i] = g_new (double, PARSE_ROOM);
      workers->free[i] = i;
    }
  workers->n_free = n_buffers;
  workers->n_items = n_windows;
  workers->next_count = 0;
  workers->counted_values = 0;
  workers->n_joined = 0;
  workers->next_store = 0;
  workers->n_to_store = 0;
  workers->prefault_ahead = n_buffers * PARSE_ROOM;

  while (taken < n_windows && !workers->stop)
    {
      if (workers->windows[taken].state == WINDOW_STORED)
        {
          gboolean more;

          g_mutex_unlock (&workers->lock);
          more = take_values (workers, taken++, take);
          g_mutex_lock (&workers->lock);
          if (!more)
            workers->stop = TRUE;
        }
      else if (!work_parse (workers, 0))
        {
          wait_signal (workers, &workers->done);
        }
    }

  end_call (workers);
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
      workers->windows[n].state = WINDOW_WAITING;
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
                      gboolean           *ended,
                      SerioParseStop     *stop,
                      SerioTextSink       sink,
                      gpointer            sink_data)
{
  ParseTake take = { max_values, 0, s, FALSE, stop, sink, sink_data };
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
      gsize stored = _serio_codec_parse_tokens (&s, span_end, buf_end, out, max_values, ended,
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

  workers->buf_end = buf_end;
  workers->dtype = dtype;
  workers->out_dtype = out_dtype;
  workers->out = out;
  workers->max_values = max_values;

  /* The output is mapped ahead of the values counted as the parse goes
   * (work_parse()), up to the most values the span can hold (a token and
   * its comma take two bytes or more), by a thread that has nothing else
   * to do, from where it is mapped: where the values of this parse follow
   * those of the parse before (a long line parsed a window of the
   * reader's at a time), its mapping goes on. */
  workers->prefault_values = MIN (max_values, (gsize) (span_end - s) / 2 + 1);
  if ((char *) out <= workers->prefault_base || (char *) out > workers->prefaulted)
    workers->prefaulted = out;
  workers->prefault_base = out;
  workers->prefaulting = FALSE;

  run_parse (workers, &take, n_threads, n_windows);
  *end = take.end;
  *ended = take.ended;

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
  gsize n_groups = 0, bytes = 0, left = 0, target = 0;

  for (gsize i = 0; i < n_lines; i++)
    left += lines[i].end - lines[i].start;

  /* Groups of about PARSE_WINDOW bytes, as the windows of a long line:
   * enough work per item for its cost in locking to be small; smaller
   * towards the end (a share of what is left, down to a quarter of
   * PARSE_WINDOW), so that the threads finish close together, the call
   * ending when the last group is parsed. */
  for (gsize i = 0; i < n_lines; i++)
    {
      if (i == 0 || bytes >= target)
        {
          reserve_groups (workers, n_groups);
          workers->groups[n_groups++] = i;
          bytes = 0;
          target = CLAMP (left / (2 * MAX (n_threads, 1)), PARSE_WINDOW / 4, PARSE_WINDOW);
        }
      bytes += lines[i].end - lines[i].start;
      left -= lines[i].end - lines[i].start;
    }
  if (n_groups == 0)
    return;
  workers->groups[n_groups] = n_lines;
  workers->lines = lines;
  workers->buf_end = buf_end;

  run_ring (workers, parse_lines_item, take_lines, &take, n_threads, n_groups);
}
