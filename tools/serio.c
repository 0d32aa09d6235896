/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio.c: the serio command-line tool
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-tool.h"

typedef struct
{
  const char *name;
  const char *summary;
  int       (*handle) (int       argc,
                       char     *argv[],
                       gboolean  do_help);
} Command;

static const Command commands[] = {
  { "cat", N_("Print the values of arrays, one per line"), handle_cat },
  { "check", N_("Check that files are valid serio files"), handle_check },
  { "checksum", N_("Print the checksums of files"), handle_checksum },
  { "convert", N_("Convert between serio and .npy, .npz and .safetensors files"), handle_convert },
  { "diff", N_("Compare two serio files bit for bit"), handle_diff },
  { "info", N_("Describe the arrays in serio files"), handle_info },
  { "seal", N_("Add a seal to plain serio files, in place"), handle_seal },
};

static void
print_usage (gboolean is_error)
{
  g_autoptr(GString) usage = g_string_new (NULL);

  g_string_append_printf (usage, "%s\n  serio %s\n\n%s\n",
                          _("Usage:"),
                          /* TRANSLATORS: keep the brackets: they mark
                           * what is optional */
                          _("COMMAND [OPTION…] [ARGUMENT…]"),
                          _("Commands:"));
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (usage, "  %-10s %s\n", commands[i].name, _(commands[i].summary));
  g_string_append_printf (usage, "  %-10s %s\n", "help", _("Show the help of a command"));
  g_string_append_printf (usage, "\n%s\n%s\n",
                          _("Use “serio COMMAND --help” to get help on each command."),
                          _("Use “serio --version” to print the version."));

  if (is_error)
    g_printerr ("%s", usage->str);
  else
    g_print ("%s", usage->str);
}

static const Command *
find_command (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      if (g_str_equal (name, commands[i].name))
        return &commands[i];
    }

  return NULL;
}

static int
unknown_command (const char *name)
{
  g_autofree char *shown = g_utf8_make_valid (name, -1);

  g_printerr (_("serio: unknown command “%s”"), shown);
  g_printerr ("\n\n");
  print_usage (TRUE);

  return SERIO_TOOL_EXIT_ERROR;
}

/* Runs @command on @argv, its name first, or prints its help. */
static int
run_command (const Command  *command,
             int             argc,
             char          **argv,
             gboolean        do_help)
{
  g_autofree char *prgname = g_strdup_printf ("serio %s", command->name);
  int status;

  /* GOptionContext shows the program name in its usage line. */
  g_set_prgname (prgname);

  status = command->handle (argc, argv, do_help);

  /* A full disk or a closed pipe must not pass for success. */
  if (fflush (stdout) != 0 || ferror (stdout))
    {
      g_printerr (_("%s: cannot write to the standard output: %s"), prgname, g_strerror (errno));
      g_printerr ("\n");
      return SERIO_TOOL_EXIT_ERROR;
    }

  return status;
}

int
main (int    argc,
      char **argv)
{
  const char *name;
  const Command *command;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
#ifdef HAVE_BIND_TEXTDOMAIN_CODESET
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
#endif
  textdomain (GETTEXT_PACKAGE);

  g_set_prgname ("serio");

  if (argc < 2)
    {
      print_usage (TRUE);
      return SERIO_TOOL_EXIT_ERROR;
    }

  name = argv[1];
  if (g_str_equal (name, "--help") || g_str_equal (name, "-h") || g_str_equal (name, "-?") ||
      (g_str_equal (name, "help") && argc == 2))
    {
      print_usage (FALSE);
      return SERIO_TOOL_EXIT_OK;
    }

  if (g_str_equal (name, "--version"))
    {
      g_print ("serio %s\n", PACKAGE_VERSION);
      return SERIO_TOOL_EXIT_OK;
    }

  if (g_str_equal (name, "help"))
    {
      if (argc != 3)
        {
          print_usage (TRUE);
          return SERIO_TOOL_EXIT_ERROR;
        }

      command = find_command (argv[2]);
      if (command == NULL)
        return unknown_command (argv[2]);

      return run_command (command, argc - 2, argv + 2, TRUE);
    }

  command = find_command (name);
  if (command == NULL)
    return unknown_command (name);

  return run_command (command, argc - 1, argv + 1, FALSE);
}
