/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-json-private.h: a small strict JSON reader, for the few JSON
 * documents libserio and its tool read (a .safetensors header, the index
 * of a sharded checkpoint). Not public API.
 *
 * Copyright 2026 The libserio authors
 *
 * A pull parser over text in memory: the caller walks the document it
 * expects with expect/accept/string/uint and refuses what it does not
 * know. It is stricter than most parsers: a string holding a control
 * character, a lone surrogate or U+0000, an integer with a sign, a
 * fraction, an exponent or a leading zero is refused; serio_json_skip_value()
 * walks a value the caller does not use with the same rules (and refuses
 * a member twice in an object, NaN, Infinity and fractions).
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* What the document is, which its error messages name. */
typedef enum
{
  SERIO_JSON_HEADER,  /* the header of a .safetensors file */
  SERIO_JSON_INDEX,   /* the index of a sharded checkpoint */
} SerioJsonSubject;

typedef struct
{
  const char *start;
  const char *p;
  const char *end;
  SerioJsonSubject subject;
} SerioJson;

/* Errors are G_IO_ERROR_INVALID_DATA “the header is not valid JSON at
 * byte N: …” (or “the index …”). */
void      serio_json_init        (SerioJson        *j,
                                  const char       *text,
                                  gsize             len,
                                  SerioJsonSubject  subject);
gboolean  serio_json_error       (SerioJson        *j,
                                  const char       *what,
                                  GError          **error);
void      serio_json_skip_spaces (SerioJson        *j);
gboolean  serio_json_expect      (SerioJson        *j,
                                  char              c,
                                  GError          **error);
gboolean  serio_json_accept      (SerioJson        *j,
                                  char              c);
char     *serio_json_string      (SerioJson        *j,
                                  GError          **error);
gboolean  serio_json_uint        (SerioJson        *j,
                                  guint64          *out,
                                  GError          **error);
gboolean  serio_json_skip_value  (SerioJson        *j,
                                  GError          **error);

G_END_DECLS
