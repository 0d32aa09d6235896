/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-workers-fork.c: a child of fork() whose parent held the workers'
 * lock at the fork
 *
 * Copyright 2026 The libserio authors
 *
 * A thread of the workers that stops spinning after a call takes the
 * lock to go to sleep, so that a fork() just after a parallel call can
 * copy it held into the child, where no thread will ever release it.
 * Here another thread of the parent holds it, for certain, across the
 * fork: the child's parallel and one-thread calls must still finish. And
 * workers given back in the parent are kept with their threads, which a
 * child does not have: it must start its own.
 */

#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serio-workers-private.h"
#include "test-utils.h"

#define N_TOKENS   300000
#define PADDING    64
#define DEADLINE_S 20

typedef struct
{
  GMutex   *lock;       /* the workers' lock, held by the holder thread */
  GMutex    state_lock;
  GCond     state_cond;
  gboolean  held;
  gboolean  release;
} Holder;

static gpointer
hold_lock (gpointer data)
{
  Holder *h = data;

  g_mutex_lock (h->lock);
  g_mutex_lock (&h->state_lock);
  h->held = TRUE;
  g_cond_broadcast (&h->state_cond);
  while (!h->release)
    g_cond_wait (&h->state_cond, &h->state_lock);
  g_mutex_unlock (&h->state_lock);
  g_mutex_unlock (h->lock);

  return NULL;
}

/* Parses the N_TOKENS tokens of @text (its end at @len, padded) with
 * @n_threads threads, as doubles or, with @typed, as float32 elements
 * (which go through the ring of slots even on one thread); whether it
 * gave every value, each its index. */
static gboolean
parse_all (SerioWorkers *workers,
           const char   *text,
           gsize         len,
           guint         n_threads,
           gboolean      typed)
{
  SerioDtype dtype = typed ? SERIO_DTYPE_FLOAT32 : SERIO_DTYPE_FLOAT64;
  g_autofree double *out = g_new (double, N_TOKENS);
  const float *elements = (const float *) (gpointer) out;
  SerioParseStop stop;
  const char *end = NULL;
  gboolean ended = FALSE;
  gsize n;

  n = _serio_workers_parse (workers, text, text + len, text + len + PADDING, dtype, dtype, out,
                            N_TOKENS, n_threads, &end, &ended, &stop, NULL, NULL);
  if (n != N_TOKENS || stop.problem.reason != NULL || stop.misfit || end != text + len || !ended)
    return FALSE;
  for (gsize i = 0; i < N_TOKENS; i++)
    {
      if (typed ? elements[i] != (float) i : out[i] != (double) i)
        return FALSE;
    }
  return TRUE;
}

/* The text "0,1,2,…" of N_TOKENS tokens, followed by PADDING line feeds
 * past its length. */
static GString *
counting_text (void)
{
  GString *text = g_string_new (NULL);

  for (gsize i = 0; i < N_TOKENS; i++)
    g_string_append_printf (text, i == 0 ? "%" G_GSIZE_FORMAT : ",%" G_GSIZE_FORMAT, i);
  for (gsize i = 0; i < PADDING; i++)
    g_string_append_c (text, '\n');
  text->len -= PADDING;

  return text;
}

/* The holder thread, reachable from here in the child too, where the
 * thread is not there to be joined (memcheck would count its handle as
 * lost there, as the library keeps the handles of its own). */
static GThread *holder;

static void
test_lock_held_at_fork (void)
{
  g_autoptr(GString) text = counting_text ();
  SerioWorkers *workers = _serio_workers_new ();
  Holder h = { _serio_workers_get_lock (workers), { 0 }, { 0 }, FALSE, FALSE };
  int status = 0;
  gboolean ended;
  pid_t pid;

  g_test_summary ("A child of fork() whose parent had the workers' lock held by another "
                  "thread at the fork, as a thread of the workers can just after a call, "
                  "finishes its parallel and one-thread parses instead of waiting for "
                  "the lock for ever.");

  /* The parent's threads, started and idle. */
  g_assert_true (parse_all (workers, text->str, text->len, 2, FALSE));

  g_mutex_init (&h.state_lock);
  g_cond_init (&h.state_cond);
  holder = g_thread_new ("lock-holder", hold_lock, &h);
  g_mutex_lock (&h.state_lock);
  while (!h.held)
    g_cond_wait (&h.state_cond, &h.state_lock);
  g_mutex_unlock (&h.state_lock);

  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      gboolean ok;

      alarm (2 * DEADLINE_S);
      /* one thread first: the call that starts no thread takes the lock
       * too */
      ok = parse_all (workers, text->str, text->len, 1, TRUE) &&
           parse_all (workers, text->str, text->len, 2, FALSE) &&
           parse_all (workers, text->str, text->len, 3, TRUE);
      /* given back, for memcheck in the child (kept for the next user, or
       * freed with the workers' threads joined) */
      _serio_workers_free (workers);
      g_string_free (g_steal_pointer (&text), TRUE);
      _exit (ok ? 0 : 1);
    }

  ended = test_wait_child (pid, DEADLINE_S, &status);

  g_mutex_lock (&h.state_lock);
  h.release = TRUE;
  g_cond_broadcast (&h.state_cond);
  g_mutex_unlock (&h.state_lock);
  g_thread_join (g_steal_pointer (&holder));
  g_mutex_clear (&h.state_lock);
  g_cond_clear (&h.state_cond);

  if (!ended)
    g_test_fail_printf ("the child waited for the lock: killed after %d s", DEADLINE_S);
  else
    {
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
    }

  /* The parent's workers go on. */
  g_assert_true (parse_all (workers, text->str, text->len, 2, TRUE));
  _serio_workers_free (workers);
}

static void
test_kept_at_fork (void)
{
  g_autoptr(GString) text = counting_text ();
  SerioWorkers *taken[2];
  SerioWorkers *workers;
  int status = 0;
  pid_t pid;

  g_test_summary ("Workers given back in the parent, kept with their threads asleep, are "
                  "handed out in a child of fork(), where those threads are not: the "
                  "child's parallel parses start threads of their own and finish.");

  /* The workers kept before are taken, so that these are kept. */
  for (gsize i = 0; i < G_N_ELEMENTS (taken); i++)
    taken[i] = _serio_workers_new ();
  workers = _serio_workers_new ();
  g_assert_true (parse_all (workers, text->str, text->len, 2, FALSE));
  _serio_workers_free (workers);

  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      SerioWorkers *kept = _serio_workers_new ();
      gboolean ok;

      alarm (2 * DEADLINE_S);
      ok = kept == workers &&
           parse_all (kept, text->str, text->len, 2, FALSE) &&
           parse_all (kept, text->str, text->len, 3, TRUE);
      /* all given back, for memcheck in the child */
      _serio_workers_free (kept);
      for (gsize i = 0; i < G_N_ELEMENTS (taken); i++)
        _serio_workers_free (taken[i]);
      g_string_free (g_steal_pointer (&text), TRUE);
      _exit (ok ? 0 : 1);
    }

  if (!test_wait_child (pid, DEADLINE_S, &status))
    g_test_fail_printf ("the child's parses did not end: killed after %d s", DEADLINE_S);
  else
    {
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
    }

  /* The parent's kept workers go on. */
  workers = _serio_workers_new ();
  g_assert_true (parse_all (workers, text->str, text->len, 2, TRUE));
  _serio_workers_free (workers);
  for (gsize i = 0; i < G_N_ELEMENTS (taken); i++)
    _serio_workers_free (taken[i]);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/workers/fork/lock-held", test_lock_held_at_fork);
  g_test_add_func ("/workers/fork/kept", test_kept_at_fork);

  return g_test_run ();
}
