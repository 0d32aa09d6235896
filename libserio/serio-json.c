/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-json.c: a small strict JSON reader (see serio-json-private.h)
 *
 * Copyright 2026 The libserio authors
 *
 * First written for the .safetensors header of the serio tool, whose
 * rules it keeps; shared since with the index of sharded checkpoints.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-json-private.h"

/* How deep serio_json_skip_value() goes into arrays and objects. */
#define MAX_DEPTH 512

void
serio_json_init (SerioJson        *j,
                 const char       *text,
                 gsize             len,
                 SerioJsonSubject  subject)
{
  /* An empty text may come as NULL. */
  j->start = len > 0 ? text : "";
  j->p = j->start;
  j->end = j->start + len;
  j->subject = subject;
}

gboolean
serio_json_error (SerioJson   *j,
                  const char  *what,
                  GError     **error)
{
  g_autofree char *at = g_strdup_printf ("%" G_GSIZE_FORMAT, (gsize) (j->p - j->start));

  if (j->subject == SERIO_JSON_INDEX)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: a byte offset in the index of a sharded
                  * checkpoint, then what is wrong there, such as “a string
                  * was expected” */
                 _("the index is not valid JSON at byte %s: %s"), at, what);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 /* TRANSLATORS: a byte offset in the header, then what is
                  * wrong there, such as “a string was expected” */
                 _("the header is not valid JSON at byte %s: %s"), at, what);
  return FALSE;
}

void
serio_json_skip_spaces (SerioJson *j)
{
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

/* Skips spaces, then consumes @c, which must be next. */
gboolean
serio_json_expect (SerioJson  *j,
                   char        c,
                   GError    **error)
{
  serio_json_skip_spaces (j);
  if (j->p < j->end && *j->p == c)
    {
      j->p++;
      return TRUE;
    }

  {
    g_autofree char *what = g_strdup_printf (_("“%c” was expected"), c);

    return serio_json_error (j, what, error);
  }
}

/* Skips spaces, then consumes @c if it is next. */
gboolean
serio_json_accept (SerioJson *j,
                   char       c)
{
  serio_json_skip_spaces (j);
  if (j->p < j->end && *j->p == c)
    {
      j->p++;
      return TRUE;
    }
  return FALSE;
}

static int
hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static gboolean
json_hex4 (SerioJson *j,
           gunichar  *out)
{
  gunichar c = 0;

  if (j->end - j->p < 4)
    return FALSE;
  for (int i = 0; i < 4; i++)
    {
      int d = hex_digit (j->p[i]);

      if (d < 0)
        return FALSE;
      c = c * 16 + (gunichar) d;
    }
  j->p += 4;
  *out = c;
  return TRUE;
}

/* A string, after spaces. The header was checked to be UTF-8, so that
 * only escapes can make a string that is not: a lone surrogate is
 * refused, as is U+0000, which no name or metadata string of serio
 * holds. */
char *
serio_json_string (SerioJson  *j,
                   GError    **error)
{
  g_autoptr(GString) out = g_string_new (NULL);

  serio_json_skip_spaces (j);
  if (j->p == j->end || *j->p != '"')
    {
      serio_json_error (j, _("a string was expected"), error);
      return NULL;
    }
  j->p++;

  for (;;)
    {
      const char *run = j->p;

      while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (guchar) *j->p >= 0x20)
        j->p++;
      g_string_append_len (out, run, j->p - run);

      if (j->p == j->end)
        {
          serio_json_error (j, _("a string does not end"), error);
          return NULL;
        }
      if (*j->p == '"')
        {
          j->p++;
          return g_string_free (g_steal_pointer (&out), FALSE);
        }
      if (*j->p != '\\')
        {
          serio_json_error (j, _("a string holds a control character"), error);
          return NULL;
        }

      j->p++;
      if (j->p == j->end)
        {
          serio_json_error (j, _("a string does not end"), error);
          return NULL;
        }
      switch (*j->p++)
        {
        case '"': g_string_append_c (out, '"'); break;
        case '\\': g_string_append_c (out, '\\'); break;
        case '/': g_string_append_c (out, '/'); break;
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'u':
          {
            gunichar c, low;

            if (!json_hex4 (j, &c))
              {
                serio_json_error (j, _("a \\u escape needs four hexadecimal digits"), error);
                return NULL;
              }
            if (c >= 0xDC00 && c <= 0xDFFF)
              {
                serio_json_error (j, _("a \\u escape is a lone surrogate, which UTF-8 cannot hold"), error);
                return NULL;
              }
            if (c >= 0xD800 && c <= 0xDBFF)
              {
                if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                  {
                    serio_json_error (j, _("a \\u escape is a lone surrogate, which UTF-8 cannot hold"), error);
                    return NULL;
                  }
                j->p += 2;
                if (!json_hex4 (j, &low))
                  {
                    serio_json_error (j, _("a \\u escape needs four hexadecimal digits"), error);
                    return NULL;
                  }
                if (low < 0xDC00 || low > 0xDFFF)
                  {
                    serio_json_error (j, _("a \\u escape is a lone surrogate, which UTF-8 cannot hold"), error);
                    return NULL;
                  }
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
              }
            if (c == 0)
              {
                serio_json_error (j, _("a string holds U+0000, which serio names and metadata cannot"), error);
                return NULL;
              }
            g_string_append_unichar (out, c);
          }
          break;
        default:
          j->p--;
          serio_json_error (j, _("a string holds an unknown escape"), error);
          return NULL;
        }
    }
}

/* A non-negative integer, as JSON writes it (no sign, fraction, exponent
 * or leading zero), that fits 64 bits. */
gboolean
serio_json_uint (SerioJson  *j,
                 guint64    *out,
                 GError    **error)
{
  guint64 n = 0;
  const char *digits;

  serio_json_skip_spaces (j);
  digits = j->p;
  while (j->p < j->end && g_ascii_isdigit (*j->p))
    {
      guint d = (guint) (*j->p - '0');

      if (n > (G_MAXUINT64 - d) / 10)
        return serio_json_error (j, _("an integer is too large"), error);
      n = n * 10 + d;
      j->p++;
    }

  if (j->p == digits ||
      (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')))
    return serio_json_error (j, _("a non-negative integer was expected"), error);
  if (*digits == '0' && j->p - digits > 1)
    return serio_json_error (j, _("an integer has a leading zero"), error);

  *out = n;
  return TRUE;
}

/* A number of the documents read here: an integer, with a sign if it is
 * negative; a fraction or an exponent is refused (no document here has
 * one, and a checkpoint's numbers must be exact). */
static gboolean
json_int (SerioJson  *j,
          GError    **error)
{
  guint64 n;

  if (j->p < j->end && *j->p == '-')
    j->p++;
  if (j->p == j->end || !g_ascii_isdigit (*j->p))
    return serio_json_error (j, _("a value was expected"), error);
  return serio_json_uint (j, &n, error);
}

static gboolean
json_word (SerioJson   *j,
           const char  *word,
           GError     **error)
{
  gsize len = strlen (word);

  if ((gsize) (j->end - j->p) < len || memcmp (j->p, word, len) != 0)
    return serio_json_error (j, _("a value was expected"), error);
  j->p += len;
  return TRUE;
}

static gboolean
skip_value (SerioJson  *j,
            guint       depth,
            GError    **error)
{
  serio_json_skip_spaces (j);
  if (j->p == j->end)
    return serio_json_error (j, _("a value was expected"), error);
  if (depth > MAX_DEPTH && (*j->p == '[' || *j->p == '{'))
    return serio_json_error (j, _("arrays and objects are nested too deeply"), error);

  switch (*j->p)
    {
    case '"':
      {
        g_autofree char *text = serio_json_string (j, error);

        return text != NULL;
      }
    case 't':
      return json_word (j, "true", error);
    case 'f':
      return json_word (j, "false", error);
    case 'n':
      return json_word (j, "null", error);
    case '[':
      j->p++;
      if (serio_json_accept (j, ']'))
        return TRUE;
      do
        if (!skip_value (j, depth + 1, error))
          return FALSE;
      while (serio_json_accept (j, ','));
      return serio_json_expect (j, ']', error);
    case '{':
      {
        g_autoptr(GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                            g_free, NULL);

        j->p++;
        if (serio_json_accept (j, '}'))
          return TRUE;
        do
          {
            char *key = serio_json_string (j, error);

            if (key == NULL)
              return FALSE;
            if (!g_hash_table_add (keys, key))
              return serio_json_error (j, _("an object has a member twice"), error);
            if (!serio_json_expect (j, ':', error) || !skip_value (j, depth + 1, error))
              return FALSE;
          }
        while (serio_json_accept (j, ','));
        return serio_json_expect (j, '}', error);
      }
    default:
      return json_int (j, error);
    }
}

/* Walks one value after spaces, checking it as strictly as the rest. */
gboolean
serio_json_skip_value (SerioJson  *j,
                       GError    **error)
{
  return skip_value (j, 0, error);
}
