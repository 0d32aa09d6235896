/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-error.c: the SERIO_ERROR domain, an extended error domain whose
 * errors carry their location as data
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include "serio-error.h"
#include "serio-error-private.h"

/* What every error of the domain carries besides its message. */
typedef struct
{
  guint64  line;
  guint64  value_index;
  char    *detail;
} SerioErrorPrivate;

static void
serio_error_private_init (SerioErrorPrivate *priv)
{
  priv->line = 0;
  priv->value_index = 0;
  priv->detail = NULL;
}

static void
serio_error_private_copy (const SerioErrorPrivate *src_priv,
                          SerioErrorPrivate       *dest_priv)
{
  dest_priv->line = src_priv->line;
  dest_priv->value_index = src_priv->value_index;
  dest_priv->detail = g_strdup (src_priv->detail);
}

static void
serio_error_private_clear (SerioErrorPrivate *priv)
{
  g_clear_pointer (&priv->detail, g_free);
}

/* G_DEFINE_EXTENDED_ERROR (SerioError, serio_error) would register the
 * domain as "SerioError", changing the domain name that bindings show
 * (GLib.Error.domain in Python) and that the GIR records; so the macro's
 * expansion is spelled out here with the name the domain has always had. */
static inline SerioErrorPrivate *
serio_error_get_private (const GError *error)
{
  /* The private data sits before the GError, aligned as in gtype.c. */
  const gsize sa = 2 * sizeof (gsize);
  const gsize as = (sizeof (SerioErrorPrivate) + (sa - 1)) & -sa;

  return (SerioErrorPrivate *) (gpointer) (((guint8 *) error) - as);
}

static void
g_error_with_serio_error_private_init (GError *error)
{
  serio_error_private_init (serio_error_get_private (error));
}

static void
g_error_with_serio_error_private_copy (const GError *src_error,
                                       GError       *dest_error)
{
  serio_error_private_copy (serio_error_get_private (src_error),
                            serio_error_get_private (dest_error));
}

static void
g_error_with_serio_error_private_clear (GError *error)
{
  serio_error_private_clear (serio_error_get_private (error));
}

/**
 * serio_error_quark:
 *
 * The quark of the libserio error domain, `SERIO_ERROR` in C, whose codes
 * are the values of [error@Serio.Error].
 *
 * Test an error with `g_error_matches (error, SERIO_ERROR,
 * SERIO_ERROR_LENGTH)` in C, `error.matches(Serio.error_quark(),
 * Serio.Error.LENGTH)` in Python and `error.matches(Serio.Error,
 * Serio.Error.LENGTH)` in GJS; in Vala, catch `Serio.Error.LENGTH`.
 *
 * The domain is an extended one: its errors carry the location of the
 * problem, see [func@Serio.Error.get_line].
 *
 * Returns: the error domain quark, named `serio-error-quark`
 */
GQuark
serio_error_quark (void)
{
  static GQuark quark;
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      quark = g_error_domain_register_static ("serio-error-quark",
                                              sizeof (SerioErrorPrivate),
                                              g_error_with_serio_error_private_init,
                                              g_error_with_serio_error_private_copy,
                                              g_error_with_serio_error_private_clear);
      g_once_init_leave (&initialized, 1);
    }

  return quark;
}

/* An error of the domain made before the domain is registered has no
 * private data, and reading it would read before the GError: bindings
 * make such errors from the domain's name (PyGObject turns a GLib.Error
 * back into a GError with g_quark_from_string ()). So the domain is
 * registered as soon as the library is loaded. */
#if defined(__GNUC__)
__attribute__((constructor)) static void
register_domain (void)
{
  serio_error_quark ();
}
#endif

/* The private data of @error, or %NULL if it is in another domain. */
static const SerioErrorPrivate *
lookup_private (const GError *error)
{
  if (error->domain != SERIO_ERROR)
    return NULL;

  return serio_error_get_private (error);
}

/**
 * serio_error_get_line:
 * @error: a #GError
 *
 * Gets the line of the input that @error is about, counted from 1 and
 * including blank lines: the line that [error@Serio.Error] messages name
 * as `Line 3: …`, as a number, so that callers never need to read it out
 * of the (translated) message.
 *
 * Every error that the readers of libserio set in the `SERIO_ERROR` domain
 * has a line. For an error of another domain (a `G_IO_ERROR` from
 * [ctor@Serio.Bundle.new_from_file]), and for a `SERIO_ERROR` made by other
 * code (with g_error_new(), or rebuilt by a binding from its domain, code
 * and message, as PyGObject does), the line is not known and this returns
 * 0.
 *
 * Returns: the 1-based line, or 0 when it is not known
 */
guint64
serio_error_get_line (const GError *error)
{
  const SerioErrorPrivate *priv;

  g_return_val_if_fail (error != NULL, 0);

  priv = lookup_private (error);

  return priv != NULL ? priv->line : 0;
}

/**
 * serio_error_get_value_index:
 * @error: a #GError
 *
 * Gets the position, within its record, of the value that @error is
 * about, counted from 1: the `value 17` of a message such as
 * `Line 3, value 17 “1.5”: …`.
 *
 * Errors about a whole record or line (a count that does not match, an
 * unknown version, a bad name, a truncated input) have no value and give
 * 0, as do errors of other domains and errors whose location is not known
 * (see [func@Serio.Error.get_line]).
 *
 * Returns: the 1-based index of the value in its record, or 0 when the
 *   error is not about one value or the value is not known
 */
guint64
serio_error_get_value_index (const GError *error)
{
  const SerioErrorPrivate *priv;

  g_return_val_if_fail (error != NULL, 0);

  priv = lookup_private (error);

  return priv != NULL ? priv->value_index : 0;
}

/**
 * serio_error_get_detail:
 * @error: a #GError
 *
 * Gets the message of @error without its line: the part that follows
 * `Line 3: ` or `Line 3, ` in the message, such as `value 17 “1.5”:
 * unexpected character in a value`, translated like the message.
 *
 * This is for programs that show the line themselves, as compilers do in
 * `FILE:LINE: message`; the `serio` tool prints its errors this way. Show
 * the message itself otherwise.
 *
 * Returns: (nullable): the message without its location, or %NULL when
 *   the location is not known (see [func@Serio.Error.get_line])
 */
const char *
serio_error_get_detail (const GError *error)
{
  const SerioErrorPrivate *priv;

  g_return_val_if_fail (error != NULL, NULL);

  priv = lookup_private (error);

  return priv != NULL ? priv->detail : NULL;
}

void
_serio_error_set_location (GError     *error,
                           guint64     line,
                           guint64     value_index,
                           const char *detail)
{
  SerioErrorPrivate *priv;

  g_assert (error->domain == SERIO_ERROR);

  priv = serio_error_get_private (error);
  priv->line = line;
  priv->value_index = value_index;
  g_free (priv->detail);
  priv->detail = g_strdup (detail);
}
