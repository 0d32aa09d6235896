/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-sniff.c: saying what a file that is not serio text is
 *
 * Copyright 2026 The libserio authors
 *
 * The leading bytes of the formats a serio file is most often confused
 * with, so that `serio check net.pt` says “not a serio file: it looks like
 * a PyTorch .pt file” rather than that the file was cut short.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-error.h"
#include "serio-error-private.h"
#include "serio-sniff-private.h"

SerioSniffVerdict
_serio_sniff_first_record (const char *p,
                           gsize       len)
{
  static const char v1[] = "v1|";
  gsize i;

  /* “v1|”, or a prefix of it. */
  for (i = 0; i < MIN (len, 3) && p[i] == v1[i]; i++)
    ;
  if (i == 3)
    return SERIO_SNIFF_RECORD;
  /* A lone CR may be the start of a blank line. */
  if (i == len || (len == 1 && p[0] == '\r'))
    return SERIO_SNIFF_UNDECIDED;

  /* A version tag: “v” or “V”, digits, “|”. */
  if (p[0] != 'v' && p[0] != 'V')
    return SERIO_SNIFF_NOT_SERIO;
  for (i = 1; i < len && g_ascii_isdigit (p[i]); i++)
    ;
  if (i == len)
    return SERIO_SNIFF_UNDECIDED;

  return i > 1 && p[i] == '|' ? SERIO_SNIFF_RECORD : SERIO_SNIFF_NOT_SERIO;
}

static gboolean
starts_with (const guint8 *p,
             gsize         len,
             const char   *magic,
             gsize         magic_len)
{
  return len >= magic_len && memcmp (p, magic, magic_len) == 0;
}

#define STARTS_WITH(p, len, magic) starts_with ((p), (len), (magic), sizeof (magic) - 1)

static guint
get_le16 (const guint8 *p)
{
  return p[0] | (guint) p[1] << 8;
}

/* What a zip archive whose first local header is at @p holds, from the
 * name of its first member: a PyTorch file (“archive/data.pkl”,
 * “NAME/data.pkl”, “NAME/version”, “NAME/.data/version”), a NumPy .npz
 * (“a.npy”), or either. */
static const char *
describe_zip (const guint8 *p,
              gsize         len)
{
  const char *name;
  gsize name_len;

  if (len >= 30 && 30 + (gsize) get_le16 (p + 26) <= len)
    {
      name = (const char *) p + 30;
      name_len = get_le16 (p + 26);

      if (name_len >= 8 && (memcmp (name + name_len - 8, "data.pkl", 8) == 0 ||
                            memcmp (name + name_len - 8, "/version", 8) == 0))
        return _("it looks like a PyTorch .pt file (a zip archive); save its tensors as NumPy "
                 "arrays (.npz), which `serio convert` reads");
      if (name_len >= 4 && memcmp (name + name_len - 4, ".npy", 4) == 0)
        return _("it looks like a NumPy .npz archive; `serio convert` reads it");
    }

  return _("it looks like a zip archive (NumPy .npz or PyTorch .pt); `serio convert` "
           "reads a NumPy .npz");
}

/* safetensors: the length of the JSON header, 8 bytes little-endian, then
 * the header, a JSON object. */
static gboolean
is_safetensors (const guint8 *p,
                gsize         len)
{
  guint64 header_len = 0;

  if (len < 10)
    return FALSE;
  for (int i = 7; i >= 0; i--)
    header_len = header_len << 8 | p[i];

  return header_len >= 2 && header_len < G_GUINT64_CONSTANT (1) << 32 &&
         p[8] == '{' && (p[9] == '"' || p[9] == '}');
}

/* The description of the format whose leading bytes are @p, or NULL. */
static const char *
describe (const guint8 *p,
          gsize         len)
{
  /* A pickle of PyTorch's format before 1.6: protocol 2, then the magic
   * number 0x1950a86a20f9469cfc6c as a long. */
  static const char legacy_torch[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";

  if (STARTS_WITH (p, len, "PK\x03\x04"))
    return describe_zip (p, len);
  if (STARTS_WITH (p, len, "PK\x05\x06"))
    return _("it looks like an empty zip archive");
  if (STARTS_WITH (p, len, "\x93NUMPY"))
    return _("it looks like a NumPy .npy file; `serio convert` reads it");
  if (is_safetensors (p, len))
    return _("it looks like a safetensors file");
  if (STARTS_WITH (p, len, "GGUF"))
    return _("it looks like a GGUF file");
  if (STARTS_WITH (p, len, "\x89HDF\r\n\x1a\n"))
    return _("it looks like an HDF5 file");
  if (STARTS_WITH (p, len, "\x1f\x8b"))
    return _("it looks like gzip-compressed data: decompress it first");
  if (STARTS_WITH (p, len, "\x28\xb5\x2f\xfd"))
    return _("it looks like zstd-compressed data: decompress it first");
  if (STARTS_WITH (p, len, "\xfd\x37\x7a\x58\x5a\x00"))
    return _("it looks like xz-compressed data: decompress it first");
  if (STARTS_WITH (p, len, legacy_torch))
    return _("it looks like a PyTorch .pt file of the format before PyTorch 1.6 (a pickle)");
  if (len >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
    return _("it looks like a Python pickle");
  if (STARTS_WITH (p, len, "\x7f" "ELF"))
    return _("it looks like an ELF program or library");
  if (STARTS_WITH (p, len, "\xef\xbb\xbf"))
    return _("it starts with a UTF-8 byte order mark, which a serio file does not have");

  return NULL;
}

void
_serio_sniff_set_error (GError    **error,
                        const char *p,
                        gsize       len,
                        gulong      line)
{
  const char *looks_like = describe ((const guint8 *) p, MIN (len, SERIO_SNIFF_BYTES));
  g_autofree char *detail = NULL;

  if (error == NULL)
    return;

  if (looks_like != NULL)
    /* TRANSLATORS: what the file looks like, such as "it looks like a
     * NumPy .npz archive; `serio convert` reads it" */
    detail = g_strdup_printf (_("not a serio file: %s"), looks_like);
  else
    detail = g_strdup (_("not a serio file"));

  /* As every error about a line: see set_line_error() in serio-codec.c. */
  g_set_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX, _("Line %lu: %s"), line, detail);
  _serio_error_set_location (*error, line, 0, detail);
}

gboolean
_serio_sniff_check_text (const char *text,
                         gsize       len,
                         GError    **error)
{
  const char *p = text;
  const char *end = text + len;
  gulong line = 1;

  /* Blank lines before the first record are allowed. */
  while (p < end && (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')))
    {
      p += *p == '\r' ? 2 : 1;
      line++;
    }

  if (_serio_sniff_first_record (p, end - p) != SERIO_SNIFF_NOT_SERIO)
    return TRUE;

  _serio_sniff_set_error (error, p, end - p, line);
  return FALSE;
}
