/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-codec.c: the v1 text codec
 *
 * Copyright 2026 The libserio authors
 *
 * Values are written as integers ("m p e" means m·2^e with m odd), so
 * neither direction ever converts between binary and decimal fractions:
 * writing is taking the bits apart and printing at most two integers,
 * reading is parsing them and putting the bits together. Both directions
 * work on whole 8-byte groups of digits (SWAR) and never call into libc's
 * locale-dependent number functions.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-codec-private.h"
#include "serio-codec-kernel.h"
#include "serio-dtype-private.h"
#include "serio-exponent-table.h"
#include "serio-error.h"
#include "serio-error-private.h"
#include "serio-i18n-private.h"
#include "serio-name-private.h"
#include "serio-sniff-private.h"

/* A token is shown in messages up to this many bytes. */
#define MAX_SHOWN_TOKEN 40

/* The forms of the codec, chosen once: AVX2 where the library is built
 * with it (x86-64) and the CPU has AVX2, BMI1 and BMI2, else SSE2 where
 * built (x86-64, and i686 with -msse2), else portable (SWAR). The
 * environment variable SERIO_CODEC forces one: "portable", "sse2" or
 * "avx2"; a form that this build or CPU lacks falls back to the best one
 * below it ("avx2" on a CPU without it gives "sse2"), and any other value
 * is ignored. Every form gives the same bytes, values and errors, so that
 * every test suite can run on each of them. */
static gboolean
cpu_has_avx2 (void)
{
#ifdef SERIO_CODEC_HAVE_AVX2
  __builtin_cpu_init ();
  return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("bmi") &&
         __builtin_cpu_supports ("bmi2");
#else
  return FALSE;
#endif
}

/* The forms built here; serio-codec-avx2.c builds the AVX2 one. */
SERIO_CODEC_DEFINE_KERNEL (portable, FALSE);
#ifdef SERIO_CODEC_SSE2
SERIO_CODEC_DEFINE_KERNEL (sse2, TRUE);
#endif

/* Each form's kernels, by SerioCodecPath; %NULL for a form that this
 * build lacks. */
static const SerioCodecKernel *const kernels[SERIO_CODEC_PATH_AVX2 + 1] = {
  [SERIO_CODEC_PATH_PORTABLE] = &_serio_codec_kernel_portable,
#ifdef SERIO_CODEC_SSE2
  [SERIO_CODEC_PATH_SSE2] = &_serio_codec_kernel_sse2,
#endif
#ifdef SERIO_CODEC_HAVE_AVX2
  [SERIO_CODEC_PATH_AVX2] = &_serio_codec_kernel_avx2,
#endif
};

static gboolean
path_built (SerioCodecPath path)
{
  return (guint) path < G_N_ELEMENTS (kernels) && kernels[path] != NULL;
}

gboolean
_serio_codec_path_available (SerioCodecPath path)
{
  if (!path_built (path))
    return FALSE;

  return path != SERIO_CODEC_PATH_AVX2 || cpu_has_avx2 ();
}

static SerioCodecPath
codec_path_detect (void)
{
  const char *forced = g_getenv ("SERIO_CODEC");
  SerioCodecPath path = SERIO_CODEC_PATH_AVX2;

  if (g_strcmp0 (forced, "portable") == 0)
    path = SERIO_CODEC_PATH_PORTABLE;
  else if (g_strcmp0 (forced, "sse2") == 0)
    path = SERIO_CODEC_PATH_SSE2;

  while (!_serio_codec_path_available (path))
    path--;

  return path;
}

static inline SerioCodecPath
codec_path (void)
{
  /* 0: not known yet */
  static gint state = 0;
  gint known = g_atomic_int_get (&state);

  if (G_UNLIKELY (known == 0))
    {
      known = (gint) codec_path_detect ();
      g_atomic_int_set (&state, known);
    }

  return (SerioCodecPath) known;
}

/* The kernels of the form that the library takes, which is built. */
static inline const SerioCodecKernel *
chosen_kernel (void)
{
  return kernels[codec_path ()];
}

static inline gboolean
codec_simd (void)
{
  return codec_path () != SERIO_CODEC_PATH_PORTABLE;
}

SerioCodecPath
_serio_codec_get_path (void)
{
  return codec_path ();
}

const SerioCodecKernel *
_serio_codec_kernel_on (SerioCodecPath path)
{
  return kernels[path_built (path) ? path : SERIO_CODEC_PATH_PORTABLE];
}

const char *
_serio_codec_path_name (SerioCodecPath path)
{
  switch (path)
    {
    case SERIO_CODEC_PATH_PORTABLE:
      return "portable";
    case SERIO_CODEC_PATH_SSE2:
      return "sse2";
    case SERIO_CODEC_PATH_AVX2:
      return "avx2";
    default:
      return "unknown";
    }
}

gboolean
_serio_codec_uses_simd (void)
{
  return codec_simd ();
}

char *
_serio_codec_write_token (char   *out,
                          double  value)
{
  return write_token (out, value, codec_simd ());
}

/* "v1|" name "|" count "|" tokens and commas "\n", plus slack. */
gsize
_serio_codec_record_bound (gsize name_len,
                           gsize n_values)
{
  gsize per_values, bound;

  if (!g_size_checked_mul (&per_values, n_values, SERIO_CODEC_TOKEN_MAX + 1) ||
      !g_size_checked_add (&bound, per_values, name_len) ||
      !g_size_checked_add (&bound, bound, 3 + 1 + 20 + 1 + 1 + SERIO_CODEC_WRITE_SLACK))
    g_error ("%s: a record of %" G_GSIZE_FORMAT " values does not fit in memory",
             G_STRLOC, n_values);

  return bound;
}

/* Writes "v1|" name "|" count "|"; @out must have room for the name plus
 * 25 + SERIO_CODEC_WRITE_SLACK bytes. */
char *
_serio_codec_write_header (char       *out,
                           const char *name,
                           gsize       name_len,
                           gsize       n_values)
{
  memcpy (out, "v1|", 3);
  out += 3;
  memcpy (out, name, name_len);
  out += name_len;
  *out++ = '|';
  out = write_count (out, n_values);
  *out++ = '|';

  return out;
}

char *
_serio_codec_write_tokens (char         *out,
                           const double *values,
                           gsize         n_values,
                           gboolean      leading_comma)
{
  return chosen_kernel ()->write_tokens (out, values, n_values, leading_comma);
}

/* Writes one record; @out must have _serio_codec_record_bound() bytes. */
char *
_serio_codec_write_record (char         *out,
                           const char   *name,
                           gsize         name_len,
                           const double *values,
                           gsize         n_values)
{
  out = _serio_codec_write_header (out, name, name_len, n_values);
  out = _serio_codec_write_tokens (out, values, n_values, FALSE);
  *out++ = '\n';

  return out;
}

/* Writes the closing record of a sealed text whose @n_records records
 * (the opening one included) hash to @hash; @out must have
 * SERIO_SEAL_CLOSE_MAX bytes. */
char *
_serio_seal_write_close (char    *out,
                         guint64  n_records,
                         guint64  hash)
{
  memcpy (out, "v1|" SERIO_SEAL_CLOSE_NAME "|3|", strlen ("v1|" SERIO_SEAL_CLOSE_NAME "|3|"));
  out += strlen ("v1|" SERIO_SEAL_CLOSE_NAME "|3|");
  out = write_count (out, n_records);
  *out++ = ',';
  out = write_count (out, hash >> 32);
  *out++ = ',';
  out = write_count (out, hash & G_GUINT64_CONSTANT (0xffffffff));
  *out++ = '\n';

  return out;
}

/* A short, printable, valid UTF-8 rendering of untrusted bytes for
 * messages: control characters and invalid bytes become \xNN escapes and
 * long texts end in an ellipsis. */
static char *
describe_bytes (const char *text,
                gsize       len)
{
  GString *out = g_string_sized_new (MIN (len, MAX_SHOWN_TOKEN) + 8);
  const char *p = text;
  const char *end = text + len;

  while (p < end)
    {
      gunichar c;
      const char *next;

      if (out->len >= MAX_SHOWN_TOKEN)
        {
          g_string_append (out, "…");
          break;
        }

      c = g_utf8_get_char_validated (p, end - p);
      if (c == (gunichar) -1 || c == (gunichar) -2 || c < 0x20 || c == 0x7F)
        {
          g_string_append_printf (out, "\\x%02X", (guint) (guchar) *p);
          p++;
          continue;
        }

      next = g_utf8_next_char (p);
      g_string_append_len (out, p, next - p);
      p = next;
    }

  return g_string_free (out, FALSE);
}

char *
_serio_codec_describe (const char *text,
                       gsize       len)
{
  return describe_bytes (text, len);
}

G_GNUC_PRINTF (4, 5)
static void
set_line_error (GError     **error,
                SerioError   code,
                gulong       line,
                const char  *format,
                ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  if (error == NULL)
    return;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  /* TRANSLATORS: the prefix of every error about a line of a v1 file;
   * the first placeholder is a line number, the second the problem. */
  g_set_error (error, SERIO_ERROR, code, _("Line %lu: %s"), line, detail);
  if (*error != NULL && (*error)->domain == SERIO_ERROR)
    _serio_error_set_location (*error, line, 0, detail);
}

/* Sets a token error whose @reason is translated already. */
static void
set_token_error_reason (GError      **error,
                        int           code,
                        const char   *reason,
                        gulong        line,
                        guint64       index,
                        const char   *token,
                        const char   *line_end)
{
  const char *comma;
  g_autofree char *shown = NULL;
  g_autofree char *detail = NULL;

  if (error == NULL)
    return;

  comma = memchr (token, ',', line_end - token);
  shown = describe_bytes (token, (comma ? comma : line_end) - token);

  g_set_error (error, SERIO_ERROR, code,
               /* TRANSLATORS: an error about one value of a v1 record: line
                * number, 1-based index of the value in its record, the
                * value's text as found, and the problem. */
               _("Line %lu, value %lu “%s”: %s"),
               line, (gulong) index, shown, reason);
  /* TRANSLATORS: the same error without its line, for programs that show
   * the line apart (FILE:LINE: …): 1-based index of the value in its
   * record, the value's text as found, and the problem. */
  detail = g_strdup_printf (_("value %lu “%s”: %s"),
                            (gulong) index, shown, reason);
  if (*error != NULL && (*error)->domain == SERIO_ERROR)
    _serio_error_set_location (*error, line, index, detail);
}

void
_serio_codec_set_dtype_error (GError     **error,
                              SerioDtype   dtype,
                              double       value,
                              gulong       line,
                              guint64      index)
{
  /* The reader takes only canonical tokens: the value's own token is the
   * text that the line holds. */
  char token[SERIO_CODEC_TOKEN_MAX + SERIO_CODEC_WRITE_SLACK + 1];
  char *end = write_token (token, value, codec_simd ());
  g_autofree char *reason = _serio_dtype_misfit_reason (dtype, value);

  set_token_error_reason (error, SERIO_ERROR_DOMAIN, reason, line, index, token, end);
}

gboolean
_serio_codec_check_typed (SerioDtype     dtype,
                          const double  *values,
                          gsize          n_values,
                          guint64        first_index,
                          gulong         line,
                          GError       **error)
{
  gsize bad;

  if (G_LIKELY (dtype == SERIO_DTYPE_FLOAT64) || values == NULL ||
      !_serio_dtype_find_misfit (dtype, values, n_values, &bad))
    return TRUE;

  _serio_codec_set_dtype_error (error, dtype, values[bad], line, first_index + bad + 1);
  return FALSE;
}

void
_serio_codec_set_token_error (GError                  **error,
                              const SerioCodecProblem  *problem,
                              gulong                    line,
                              guint64                   index,
                              const char               *token,
                              const char               *line_end)
{
  set_token_error_reason (error, problem->code, _(problem->reason), line, index, token, line_end);
}

void
_serio_codec_set_length_error (GError     **error,
                               gulong       line,
                               const char  *declared,
                               guint64      n_tokens)
{
  set_line_error (error, SERIO_ERROR_LENGTH, line,
                  g_dngettext (GETTEXT_PACKAGE,
                               /* TRANSLATORS: the count as written in
                                * the file, and the number of values the
                                * record really holds */
                               "the count is %s but the record holds %lu value",
                               "the count is %s but the record holds %lu values",
                               n_tokens),
                  declared, (gulong) n_tokens);
}

void
_serio_codec_set_memory_error (GError **error,
                               gulong   line,
                               guint64  count)
{
  g_autofree char *declared = g_strdup_printf ("%" G_GUINT64_FORMAT, count);

  set_line_error (error, SERIO_ERROR_LENGTH, line,
                  /* TRANSLATORS: the count of a record, whose
                   * values cannot all be allocated */
                  _("the count %s is too large for the memory of this system"),
                  declared);
}

void
_serio_codec_set_truncated_error (GError **error,
                                  gulong   line)
{
  set_line_error (error, SERIO_ERROR_TRUNCATED, line, "%s",
                  _("the input does not end with a line feed; it may have been cut short"));
}

/* "v" or "V", one or more digits, then "|". */
static gboolean
has_version_tag (const char *p,
                 const char *line_end)
{
  const char *q = p + 1;

  if (p == line_end || (*p != 'v' && *p != 'V'))
    return FALSE;
  while (q < line_end && g_ascii_isdigit (*q))
    q++;

  return q > p + 1 && q < line_end && *q == '|';
}

/* Whether the @len bytes at @name are all ASCII, none of them NUL or a
 * carriage return: then check_name() passes them, from one look at eight
 * bytes at a time where it otherwise takes three (g_utf8_validate_len()
 * alone cost about 270 instructions a name of 29 bytes). A name with
 * bytes beyond ASCII gets %FALSE, and the three looks, even when it is
 * good UTF-8. */
static inline gboolean
name_is_plain_ascii (const char *name,
                     gsize       len)
{
  const guint64 ones = G_GUINT64_CONSTANT (0x0101010101010101);
  const guint64 highs = G_GUINT64_CONSTANT (0x8080808080808080);
  const guint64 crs = G_GUINT64_CONSTANT (0x0D0D0D0D0D0D0D0D);
  gsize i = 0;

  /* Where every byte is below 0x80, a byte of w - ones has its high bit
   * set at the first zero byte (and none before it), so that a NUL, or
   * a carriage return (a zero byte of w ^ crs), is never missed. */
  for (; i + 8 <= len; i += 8)
    {
      guint64 w;

      memcpy (&w, name + i, 8);
      if (((w - ones) | ((w ^ crs) - ones) | w) & highs)
        return FALSE;
    }
  for (; i < len; i++)
    {
      guchar c = (guchar) name[i];

      if (c == '\0' || c == '\r' || c >= 0x80)
        return FALSE;
    }

  return TRUE;
}

static gboolean
check_name (const char  *name,
            const char  *name_end,
            gulong       line,
            GError     **error)
{
  const char *reason = NULL;

  if (G_LIKELY (name_is_plain_ascii (name, name_end - name)))
    return TRUE;

  if (memchr (name, '\0', name_end - name) != NULL)
    reason = _("the array name contains a NUL byte");
  else if (memchr (name, '\r', name_end - name) != NULL)
    reason = _("the array name contains a carriage return");
  else if (!g_utf8_validate_len (name, name_end - name, NULL))
    reason = _("the array name is not valid UTF-8");

  if (reason != NULL)
    {
      set_line_error (error, SERIO_ERROR_SYNTAX, line, "%s", reason);
      return FALSE;
    }

  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Seals                                                              */
/* ------------------------------------------------------------------ */

void
_serio_seal_check_clear (SerioSealCheck *check)
{
  g_clear_pointer (&check->hash, XXH3_freeState);
}

gboolean
_serio_seal_check_name (SerioSealCheck  *check,
                        SerioNameKind    kind,
                        gulong           line,
                        GError         **error)
{
  if (kind == SERIO_NAME_SEAL_OPEN)
    {
      if (check->n_records > 0)
        {
          set_line_error (error, SERIO_ERROR_SYNTAX, line, "%s",
                          /* TRANSLATORS: “serio.sealed” is a reserved array
                           * name; do not translate it */
                          _("the reserved name “serio.sealed” may only name the first record"));
          return FALSE;
        }

      check->hash = XXH3_createState ();
      if (check->hash == NULL || XXH3_64bits_reset (check->hash) != XXH_OK)
        g_error ("%s: cannot set up an XXH3 hash state", G_STRLOC);
    }
  else if (kind == SERIO_NAME_SEAL_CLOSE && check->hash == NULL)
    {
      set_line_error (error, SERIO_ERROR_SYNTAX, line, "%s",
                      /* TRANSLATORS: “serio.seal” and “serio.sealed” are
                       * reserved array names; do not translate them */
                      _("the reserved name “serio.seal” may only close a text that opens with “serio.sealed”"));
      return FALSE;
    }

  return TRUE;
}

/* Whether @value has exactly the bits of the integer @expected. */
static gboolean
is_integer (double  value,
            guint64 expected)
{
  double wanted = (double) expected;

  return memcmp (&value, &wanted, sizeof value) == 0;
}

gboolean
_serio_seal_check_record (SerioSealCheck  *check,
                          SerioNameKind    kind,
                          gsize            n_values,
                          const double    *values,
                          gulong           line,
                          GError         **error)
{
  if (kind == SERIO_NAME_SEAL_OPEN &&
      (n_values != 1 || !is_integer (values[0], SERIO_SEAL_SCHEME)))
    {
      set_line_error (error, SERIO_ERROR_VERSION, line, "%s",
                      _("the text is sealed with a scheme this library does not know "
                        "(it reads “v1|serio.sealed|1|1”)"));
      return FALSE;
    }

  if (kind == SERIO_NAME_SEAL_CLOSE)
    {
      guint64 hash = XXH3_64bits_digest (check->hash);

      if (n_values != 3)
        {
          set_line_error (error, SERIO_ERROR_INTEGRITY, line,
                          g_dngettext (GETTEXT_PACKAGE,
                                       "the seal holds %lu value instead of 3: it was changed or "
                                       "damaged after it was written",
                                       "the seal holds %lu values instead of 3: it was changed or "
                                       "damaged after it was written",
                                       n_values),
                          (gulong) n_values);
          return FALSE;
        }
      if (!is_integer (values[0], check->n_records))
        {
          set_line_error (error, SERIO_ERROR_INTEGRITY, line,
                          g_dngettext (GETTEXT_PACKAGE,
                                       /* TRANSLATORS: the placeholder is the
                                        * number of records before the seal */
                                       "the seal does not match the %lu record before it: records "
                                       "were lost, added or repeated after it was written",
                                       "the seal does not match the %lu records before it: records "
                                       "were lost, added or repeated after it was written",
                                       check->n_records),
                          (gulong) check->n_records);
          return FALSE;
        }
      if (!is_integer (values[1], hash >> 32) ||
          !is_integer (values[2], hash & G_GUINT64_CONSTANT (0xffffffff)))
        {
          set_line_error (error, SERIO_ERROR_INTEGRITY, line, "%s",
                          _("the seal does not match the contents: the text was changed or "
                            "damaged after it was written"));
          return FALSE;
        }

      check->closed = TRUE;
    }

  check->n_records++;
  return TRUE;
}

gboolean
_serio_seal_check_trailing (SerioSealCheck  *check,
                            gulong           line,
                            GError         **error)
{
  if (!check->closed)
    return TRUE;

  set_line_error (error, SERIO_ERROR_INTEGRITY, line, "%s",
                  _("text follows the seal: it was added after the text was written"));
  return FALSE;
}

gboolean
_serio_seal_check_finish (SerioSealCheck  *check,
                          gulong           last_line,
                          GError         **error)
{
  if (check->hash == NULL || check->closed)
    return TRUE;

  set_line_error (error, SERIO_ERROR_TRUNCATED, last_line, "%s",
                  _("the sealed text ends without its seal: it may have been cut short"));
  return FALSE;
}

/* ------------------------------------------------------------------ */
/* The pieces of the reader (serio-reader.c)                          */
/* ------------------------------------------------------------------ */

gboolean
_serio_codec_parse_name (const char        *p,
                         const char        *line_end,
                         gulong             line,
                         SerioCodecHeader  *header,
                         GError           **error)
{
  const char *name, *bar;

  if (G_UNLIKELY (line_end - p < 3 || p[0] != 'v' || p[1] != '1' || p[2] != '|'))
    {
      if (has_version_tag (p, line_end))
        {
          g_autofree char *tag = describe_bytes (p, (const char *) memchr (p, '|', line_end - p) - p);

          set_line_error (error, SERIO_ERROR_VERSION, line,
                          _("unsupported format version “%s” (this library reads “v1”)"), tag);
        }
      else
        {
          set_line_error (error, SERIO_ERROR_SYNTAX, line, "%s",
                          _("a record must start with “v1|”"));
        }
      return FALSE;
    }

  name = p + 3;
  bar = memchr (name, '|', line_end - name);
  if (G_UNLIKELY (!check_name (name, bar ? bar : line_end, line, error)))
    return FALSE;
  if (G_UNLIKELY (bar == NULL))
    {
      set_line_error (error, SERIO_ERROR_SYNTAX, line, "%s",
                      _("the array name is not followed by “|” and a count"));
      return FALSE;
    }

  header->name = name;
  header->name_len = bar - name;
  header->kind = _serio_seal_name_kind (name, bar - name);

  return TRUE;
}

gboolean
_serio_codec_parse_count (SerioCodecHeader  *header,
                          const char        *line_end,
                          const char        *buf_end,
                          gulong             line,
                          GError           **error)
{
  const char *count_start = header->name + header->name_len + 1;
  const char *s;

  if (G_UNLIKELY (!g_ascii_isdigit (*count_start)))
    goto bad_count;
  s = scan_digits (count_start, buf_end, &header->count, &header->count_digits);
  if (G_UNLIKELY (*s != '|' || (*count_start == '0' && header->count_digits > 1)))
    goto bad_count;

  header->count_start = count_start;
  header->count_exact = header->count_digits <= MAX_EXACT_DIGITS;
  header->values = s + 1;
  return TRUE;

bad_count:
  {
    const char *count_end = memchr (count_start, '|', line_end - count_start);
    g_autofree char *shown = describe_bytes (count_start,
                                             (count_end ? count_end : line_end) - count_start);

    set_line_error (error, SERIO_ERROR_SYNTAX, line,
                    _("the count “%s” is not a decimal number without sign or "
                      "leading zero, followed by “|”"),
                    shown);
    return FALSE;
  }
}

gsize
_serio_codec_parse_tokens (const char         **s_inout,
                           const char          *seg_end,
                           const char          *buf_end,
                           double              *values,
                           gsize                max_tokens,
                           gboolean            *ended,
                           SerioCodecProblem   *problem)
{
  return chosen_kernel ()->parse_tokens (s_inout, seg_end, buf_end, values, max_tokens, ended,
                                         problem);
}

gboolean
_serio_codec_parse_long_token (const char         *token,
                               gsize               len,
                               const char        **end,
                               SerioCodecProblem  *problem)
{
  guint64 bits;

  problem->reason = NULL;
  *end = parse_token_general (token, token + len, token + len + 1, &bits, problem);

  return *end != NULL;
}
