/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-task-private.h: the asynchronous calls' threads and progress
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <gio/gio.h>

#include "serio-flags.h"

G_BEGIN_DECLS

/* Runs @func (as g_task_run_in_thread() would) in a thread of its own
 * rather than in GLib's shared pool, which a forked child inherits with
 * threads that no longer exist: an asynchronous call then never
 * completes. A new thread works in any process. */
void _serio_task_run_in_thread (GTask                *task,
                                GTaskThreadFunc       func);

/* A progress callback of an asynchronous call, called back in the task's
 * main context at the task's priority, so before the task's result
 * (which GTask sends the same way after it). */
typedef struct _SerioProgressRelay SerioProgressRelay;

SerioProgressRelay *_serio_progress_relay_new   (GTask                 *task,
                                                 SerioProgressCallback  callback,
                                                 gpointer               user_data,
                                                 GDestroyNotify         notify);
void                _serio_progress_relay_unref (SerioProgressRelay    *relay);
/* A SerioProgressCallback: its data is the relay; callable from any
 * thread. */
void                _serio_progress_relay_report (guint64               done,
                                                  guint64               total,
                                                  gpointer              relay);

G_END_DECLS
