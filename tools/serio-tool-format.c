/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-format.c: names, shapes and JSON strings as the serio tool
 * prints them
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include "serio-tool.h"

/*
 * serio_tool_escape_name:
 *
 * Makes an array name safe to print on a terminal: backslashes are doubled
 * and control characters written as \xNN (C0, DEL) or \uNNNN (C1).
 */
char *
serio_tool_escape_name (const char *name)
{
  GString *out = g_string_sized_new (strlen (name));

  for (const char *p = name; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '\\')
        g_string_append (out, "\\\\");
      else if (c < 0x20 || c == 0x7F)
        g_string_append_printf (out, "\\x%02X", c);
      else if (c >= 0x80 && c < 0xA0)
        g_string_append_printf (out, "\\u%04X", c);
      else
        g_string_append_unichar (out, c);
    }

  return g_string_free (out, FALSE);
}

/* The shape as a Python tuple: "()", "(3,)", "(2, 3)". */
char *
serio_tool_shape_to_string (const guint64 *shape,
                            guint          n_dims)
{
  GString *out = g_string_new ("(");

  for (guint k = 0; k < n_dims; k++)
    g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? ", " : "", shape[k]);
  g_string_append (out, n_dims == 1 ? ",)" : ")");

  return g_string_free (out, FALSE);
}

/*
 * serio_tool_append_json_string:
 *
 * Appends @text, UTF-8, as a JSON string, as serde_json and Python's json
 * write it: the two-character escapes where JSON has them, \u00XX for the
 * other control characters, the rest as it is.
 */
void
serio_tool_append_json_string (GString    *out,
                               const char *text)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) text; *p != '\0'; p++)
    switch (*p)
      {
      case '"': g_string_append (out, "\\\""); break;
      case '\\': g_string_append (out, "\\\\"); break;
      case '\b': g_string_append (out, "\\b"); break;
      case '\f': g_string_append (out, "\\f"); break;
      case '\n': g_string_append (out, "\\n"); break;
      case '\r': g_string_append (out, "\\r"); break;
      case '\t': g_string_append (out, "\\t"); break;
      default:
        if (*p < 0x20)
          g_string_append_printf (out, "\\u%04x", *p);
        else
          g_string_append_c (out, (char) *p);
      }
  g_string_append_c (out, '"');
}
