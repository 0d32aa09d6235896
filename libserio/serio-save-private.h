/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-save-private.h: replacing a file atomically (private, not installed)
 *
 * Copyright 2026 The libserio authors
 *
 * Shared by the library (serio_bundle_save_to_file(),
 * serio_writer_new_for_file()) and the serio tool's convenience library
 * (tools/meson.build), which compiles serio-save.c in for the files it
 * writes that are not serio text (.npy, .npz, .safetensors): no symbol of
 * it is exported from the shared library.
 *
 * A save: _serio_save_begin(), write to _serio_save_get_stream(), then
 * either _serio_save_commit() or _serio_save_abort(), each of which frees
 * the save (g_autoptr(SerioSave) aborts a save that is neither).
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SerioSave SerioSave;

SerioSave     *_serio_save_begin      (GFile         *target,
                                       GCancellable  *cancellable,
                                       GError       **error);
GOutputStream *_serio_save_get_stream (SerioSave     *save);
gboolean       _serio_save_commit     (SerioSave     *save,
                                       GCancellable  *cancellable,
                                       GError       **error);
void           _serio_save_abort      (SerioSave     *save);

gboolean       _serio_save_bytes      (GFile         *target,
                                       GBytes        *bytes,
                                       GCancellable  *cancellable,
                                       GError       **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioSave, _serio_save_abort)

G_END_DECLS
