/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-commands.h: the commands of the serio tool, one file each
 *
 * Copyright 2026 The libserio authors
 *
 * As the commands of GLib's gio tool: each is given its arguments with
 * its own name first, and do_help when it is to print its help instead
 * of running (“serio help COMMAND”, which prints what
 * “serio COMMAND --help” prints). Each returns its exit status.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

int handle_cat      (int argc, char *argv[], gboolean do_help);
int handle_check    (int argc, char *argv[], gboolean do_help);
int handle_checksum (int argc, char *argv[], gboolean do_help);
int handle_convert  (int argc, char *argv[], gboolean do_help);
int handle_diff     (int argc, char *argv[], gboolean do_help);
int handle_info     (int argc, char *argv[], gboolean do_help);
int handle_seal     (int argc, char *argv[], gboolean do_help);

G_END_DECLS
