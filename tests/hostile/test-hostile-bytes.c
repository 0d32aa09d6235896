/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-hostile-bytes.c: every byte value in every field of a record
 *
 * Copyright 2026 The libserio authors
 *
 * Each byte 0-255 replaces, in turn, one byte of a valid record: each byte
 * of the version tag, the first, middle and last byte of the name, of the
 * count and of a value, and the final line feed. The expected outcome of
 * each is worked out here from the spec, not from the parser.
 */

#include <string.h>

#include "hostile-common.h"


/* Names the count field; its 123 values are all 0. */
#define COUNT_RECORD_HEAD "v1|nm|123|"

typedef struct
{
  int     result;   /* a SerioError, or ACCEPTED */
  double  value;    /* the first value, when accepted */
} Outcome;

typedef Outcome (*Oracle) (guchar b);

typedef struct
{
  const char *path;
  const char *base;       /* NULL: the count record */
  gsize       offset;     /* of the byte that is replaced */
  Oracle      oracle;
} Field;

static gboolean
is_digit (guchar b)
{
  return b >= '0' && b <= '9';
}

static Outcome
accept (double value)
{
  return (Outcome) { ACCEPTED, value };
}

static Outcome
reject (SerioError code)
{
  return (Outcome) { code, 0 };
}

/* "v1|abc|1|125\n" with byte 0 replaced. */
static Outcome
version_first (guchar b)
{
  if (b == 'v')
    return accept (125);
  return reject (b == 'V' ? SERIO_ERROR_VERSION : SERIO_ERROR_SYNTAX);
}

static Outcome
version_digit (guchar b)
{
  if (b == '1')
    return accept (125);
  return reject (is_digit (b) ? SERIO_ERROR_VERSION : SERIO_ERROR_SYNTAX);
}

static Outcome
version_bar (guchar b)
{
  return b == '|' ? accept (125) : reject (SERIO_ERROR_SYNTAX);
}

/* Any byte of a name but NUL, CR, LF, "|" and bytes that are not ASCII
 * (alone, they are never valid UTF-8). */
static Outcome
name_byte (guchar b)
{
  if (b == '\0' || b == '\r' || b == '\n' || b == '|' || b >= 0x80)
    return reject (SERIO_ERROR_SYNTAX);
  return accept (125);
}

/* The count "123" of COUNT_RECORD_HEAD: another digit makes it differ from
 * the number of values, except a leading zero, which is malformed. */
static Outcome
count_digit (guchar  b,
             guchar  original,
             gboolean first)
{
  if (b == original)
    return accept (0);
  if (is_digit (b) && !(first && b == '0'))
    return reject (SERIO_ERROR_LENGTH);
  return reject (SERIO_ERROR_SYNTAX);
}

static Outcome
count_first (guchar b)
{
  return count_digit (b, '1', TRUE);
}

static Outcome
count_middle (guchar b)
{
  return count_digit (b, '2', FALSE);
}

static Outcome
count_last (guchar b)
{
  return count_digit (b, '3', FALSE);
}

/* The value "125" of "v1|abc|1|125\n". */
static Outcome
token_first (guchar b)
{
  if (b >= '1' && b <= '9')
    return accept ((b - '0') * 100 + 25);
  if (b == '-')
    return accept (-25);
  /* The record ends before any value. */
  if (b == '\n')
    return reject (SERIO_ERROR_LENGTH);
  return reject (SERIO_ERROR_SYNTAX);
}

static Outcome
token_middle (guchar b)
{
  if (is_digit (b))
    return accept (105 + 10 * (b - '0'));
  /* "1,5": two values for a count of 1. */
  if (b == ',')
    return reject (SERIO_ERROR_LENGTH);
  return reject (SERIO_ERROR_SYNTAX);
}

static Outcome
token_last (guchar b)
{
  if (is_digit (b))
    return accept (120 + (b - '0'));
  /* "12" then a blank line, or "12" and CR LF. */
  if (b == '\n' || b == '\r')
    return accept (12);
  return reject (SERIO_ERROR_SYNTAX);
}

static Outcome
line_feed (guchar b)
{
  return b == '\n' ? accept (125) : reject (SERIO_ERROR_TRUNCATED);
}

#define RECORD "v1|abc|1|125\n"

static const Field fields[] = {
  { "/hostile-bytes/version/v", RECORD, 0, version_first },
  { "/hostile-bytes/version/digit", RECORD, 1, version_digit },
  { "/hostile-bytes/version/bar", RECORD, 2, version_bar },
  { "/hostile-bytes/name/first", RECORD, 3, name_byte },
  { "/hostile-bytes/name/middle", RECORD, 4, name_byte },
  { "/hostile-bytes/name/last", RECORD, 5, name_byte },
  { "/hostile-bytes/count/first", NULL, sizeof COUNT_RECORD_HEAD - 5, count_first },
  { "/hostile-bytes/count/middle", NULL, sizeof COUNT_RECORD_HEAD - 4, count_middle },
  { "/hostile-bytes/count/last", NULL, sizeof COUNT_RECORD_HEAD - 3, count_last },
  { "/hostile-bytes/value/first", RECORD, 9, token_first },
  { "/hostile-bytes/value/middle", RECORD, 10, token_middle },
  { "/hostile-bytes/value/last", RECORD, 11, token_last },
  { "/hostile-bytes/line-feed", RECORD, 12, line_feed },
};

static char *
count_record (void)
{
  GString *record = g_string_new (COUNT_RECORD_HEAD);

  for (int i = 0; i < 123; i++)
    g_string_append (record, i == 0 ? "0" : ",0");
  g_string_append_c (record, '\n');

  return g_string_free (record, FALSE);
}

/* Why the bundle parsed from @input is not what @expected says, or NULL. */
static char *
check_accepted (SerioBundle *bundle,
                const Field *field,
                const char  *input,
                Outcome      expected)
{
  g_autofree char *name = NULL;
  gsize n_values;
  const double *values;

  if (serio_bundle_get_n_arrays (bundle) != 1)
    return g_strdup_printf ("%u arrays", serio_bundle_get_n_arrays (bundle));

  values = serio_bundle_get_values (bundle, 0, &n_values);
  if (n_values != (field->base == NULL ? 123 : 1))
    return g_strdup_printf ("%" G_GSIZE_FORMAT " values", n_values);
  if (memcmp (&values[0], &expected.value, sizeof (double)) != 0)
    return g_strdup_printf ("the value is %g, not %g", values[0], expected.value);

  name = g_strndup (input + 3, 3);
  if (field->oracle == name_byte && strcmp (serio_bundle_get_name (bundle, 0), name) != 0)
    return g_strdup ("the name changed");

  return NULL;
}

static void
test_field (gconstpointer data)
{
  const Field *field = data;
  g_autofree char *base = field->base ? g_strdup (field->base) : count_record ();
  gsize len = strlen (base);
  guint tally[SERIO_ERROR_TRUNCATED + 2] = { 0, };

  g_test_summary ("Every byte value at one position of a record is accepted or "
                  "rejected with the code the spec gives, and every message is "
                  "valid UTF-8.");

  for (guint b = 0; b < 256; b++)
    {
      g_autofree char *input = g_memdup2 (base, len);
      g_autofree char *problem = NULL;
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(SerioBundle) bundle = NULL;
      g_autoptr(GError) error = NULL;
      Outcome expected = field->oracle ((guchar) b);
      int result;

      input[field->offset] = (char) b;
      bytes = g_bytes_new_static (input, len);
      bundle = serio_bundle_new_from_bytes (bytes, &error);
      result = bundle != NULL ? ACCEPTED : error->domain == SERIO_ERROR ? error->code : G_MAXINT;

      if (result != expected.result)
        problem = g_strdup_printf ("%s instead of %s (%s)", result_name (result),
                                   result_name (expected.result), error ? error->message : "");
      else if (bundle != NULL)
        problem = check_accepted (bundle, field, input, expected);
      else if (!g_utf8_validate (error->message, -1, NULL))
        problem = g_strdup ("the message is not valid UTF-8");

      if (problem != NULL)
        g_test_fail_printf ("byte 0x%02X: %s", b, problem);
      tally[expected.result + 1]++;
    }

  g_test_message ("%s: accepted %u, VERSION %u, SYNTAX %u, LENGTH %u, DOMAIN %u, TRUNCATED %u",
                  field->path, tally[0], tally[SERIO_ERROR_VERSION + 1],
                  tally[SERIO_ERROR_SYNTAX + 1], tally[SERIO_ERROR_LENGTH + 1],
                  tally[SERIO_ERROR_DOMAIN + 1], tally[SERIO_ERROR_TRUNCATED + 1]);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    g_test_add_data_func (fields[i].path, &fields[i], test_field);

  return g_test_run ();
}
