/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-task.c: the asynchronous calls' threads and progress
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include "serio-task-private.h"

typedef struct
{
  GTask           *task;
  GTaskThreadFunc  func;
} TaskThread;

static gboolean
unref_in_context (gpointer data)
{
  g_object_unref (data);
  return G_SOURCE_REMOVE;
}

static gpointer
task_thread (gpointer data)
{
  TaskThread *run = data;
  GTask *task = run->task;
  g_autoptr(GSource) source = g_idle_source_new ();

  run->func (task, g_task_get_source_object (task), g_task_get_task_data (task),
             g_task_get_cancellable (task));
  g_free (run);

  /* The thread's reference goes in the task's context, after the result
   * (sent there before at the same priority): the task and its data,
   * whose callbacks belong to that context, are freed there. */
  g_source_set_priority (source, g_task_get_priority (task));
  g_source_set_callback (source, unref_in_context, task, NULL);
  g_source_set_static_name (source, "[serio] task done");
  g_source_attach (source, g_task_get_context (task));

  return NULL;
}

void
_serio_task_run_in_thread (GTask           *task,
                           GTaskThreadFunc  func)
{
  TaskThread *run = g_new (TaskThread, 1);
  GThread *thread;
  GError *error = NULL;

  run->task = g_object_ref (task);
  run->func = func;

  thread = g_thread_try_new ("serio-async", task_thread, run, &error);
  if (thread == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (run->task);
      g_free (run);
      return;
    }

  g_thread_unref (thread);
}

struct _SerioProgressRelay
{
  gatomicrefcount        ref;
  GMainContext          *context;
  int                    priority;
  SerioProgressCallback  callback;
  gpointer               user_data;
  GDestroyNotify         notify;
};

typedef struct
{
  SerioProgressRelay *relay;
  guint64             done;
  guint64             total;
} ProgressReport;

SerioProgressRelay *
_serio_progress_relay_new (GTask                 *task,
                           SerioProgressCallback  callback,
                           gpointer               user_data,
                           GDestroyNotify         notify)
{
  SerioProgressRelay *relay;

  if (callback == NULL)
    {
      if (notify != NULL)
        notify (user_data);
      return NULL;
    }

  relay = g_new0 (SerioProgressRelay, 1);
  g_atomic_ref_count_init (&relay->ref);
  relay->context = g_main_context_ref (g_task_get_context (task));
  relay->priority = g_task_get_priority (task);
  relay->callback = callback;
  relay->user_data = user_data;
  relay->notify = notify;

  return relay;
}

static SerioProgressRelay *
relay_ref (SerioProgressRelay *relay)
{
  g_atomic_ref_count_inc (&relay->ref);
  return relay;
}

void
_serio_progress_relay_unref (SerioProgressRelay *relay)
{
  if (relay == NULL || !g_atomic_ref_count_dec (&relay->ref))
    return;

  if (relay->notify != NULL)
    relay->notify (relay->user_data);
  g_main_context_unref (relay->context);
  g_free (relay);
}

static gboolean
report_in_context (gpointer data)
{
  ProgressReport *report = data;

  report->relay->callback (report->done, report->total, report->relay->user_data);
  return G_SOURCE_REMOVE;
}

static void
report_free (gpointer data)
{
  ProgressReport *report = data;

  _serio_progress_relay_unref (report->relay);
  g_free (report);
}

void
_serio_progress_relay_report (guint64  done,
                              guint64  total,
                              gpointer data)
{
  SerioProgressRelay *relay = data;
  ProgressReport *report = g_new (ProgressReport, 1);
  g_autoptr(GSource) source = g_idle_source_new ();

  report->relay = relay_ref (relay);
  report->done = done;
  report->total = total;

  g_source_set_priority (source, relay->priority);
  g_source_set_callback (source, report_in_context, report, report_free);
  g_source_set_static_name (source, "[serio] progress");
  g_source_attach (source, relay->context);
}
