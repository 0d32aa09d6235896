/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-codec-private.h: the v1 text codec (private, no GObject)
 *
 * Copyright 2026 The libserio authors
 *
 * The kernel of libserio: it turns arrays of doubles into v1 records and v1
 * text back into arrays, on buffers with explicit lengths, with no
 * allocation of its own on the hot path and no locale-dependent call.
 */

#pragma once

#include <glib.h>
#include <xxhash.h>

#include "serio-dtype-private.h"
#include "serio-name-private.h"
#ifdef HAVE_XXH_X86DISPATCH_H
/* Makes XXH3_64bits_update() use the best kernel of the CPU. */
# include <xxh_x86dispatch.h>
#endif

G_BEGIN_DECLS

/* The longest token: "-9007199254740991p-1074". */
#define SERIO_CODEC_TOKEN_MAX 23

/* The writer stores whole 8-byte groups of digits; a buffer sized with
 * _serio_codec_record_bound() leaves room for them. */
#define SERIO_CODEC_WRITE_SLACK 8


gsize    _serio_codec_record_bound   (gsize         name_len,
                                      gsize         n_values);
char    *_serio_codec_write_record   (char         *out,
                                      const char   *name,
                                      gsize         name_len,
                                      const double *values,
                                      gsize         n_values);
char    *_serio_codec_write_token    (char         *out,
                                      double        value);
char    *_serio_codec_write_header   (char         *out,
                                      const char   *name,
                                      gsize         name_len,
                                      gsize         n_values);

/* Writes the tokens of @values separated by commas, with a comma before
 * the first one if @leading_comma; @out must have SERIO_CODEC_TOKEN_MAX + 1
 * bytes per value plus SERIO_CODEC_WRITE_SLACK. Its type is named because
 * each form of the kernels (SerioCodecKernel) has a function of it. */
typedef char *SerioCodecWriteTokens (char         *out,
                                     const double *values,
                                     gsize         n_values,
                                     gboolean      leading_comma);
SerioCodecWriteTokens _serio_codec_write_tokens;

/* The forms of the codec's kernels (see SERIO_CODEC in serio-codec.c),
 * each giving the same bytes, values and errors. */
typedef enum
{
  SERIO_CODEC_PATH_PORTABLE = 1,  /* SWAR, any CPU */
  SERIO_CODEC_PATH_SSE2,          /* x86 built with SSE2 */
  SERIO_CODEC_PATH_AVX2,          /* x86-64 CPUs with AVX2, BMI1 and BMI2 */
} SerioCodecPath;

/* The AVX2 form is built on x86-64 (serio-codec-avx2.c), and taken where
 * the CPU has it. */
#if defined(__x86_64__) && defined(__SSE2__) && defined(__GNUC__) && !defined(SERIO_CODEC_SCALAR)
# define SERIO_CODEC_HAVE_AVX2 1
#endif

/* The form that the library takes, and its name ("portable", "sse2",
 * "avx2"), for the benchmarks and tests to report. */
SerioCodecPath _serio_codec_get_path       (void);
const char    *_serio_codec_path_name      (SerioCodecPath path);
/* Whether @path is built and this CPU can run it. */
gboolean       _serio_codec_path_available (SerioCodecPath path);
/* Whether the codec takes a SIMD form (SSE2 or AVX2). */
gboolean       _serio_codec_uses_simd      (void);

/* Seals (serio-v1-files.md §2) */

#define SERIO_SEAL_SCHEME      1
/* The first line of a sealed text. */
#define SERIO_SEAL_OPEN_RECORD "v1|" SERIO_SEAL_OPEN_NAME "|1|1\n"
/* Room for the last line of a sealed text: "v1|serio.seal|3|", three
 * counts of at most 20 digits, two commas, a line feed, and slack. */
#define SERIO_SEAL_CLOSE_MAX   (16 + 3 * 20 + 2 + 1 + SERIO_CODEC_WRITE_SLACK)


/* What a reader knows of a text's seal, record by record. */
typedef struct
{
  guint64       n_records;  /* records read so far, the opening one included */
  XXH3_state_t *hash;       /* non-NULL once the text is known to be sealed */
  gboolean      closed;     /* the closing record was read and matched */
} SerioSealCheck;

G_DEFINE_AUTOPTR_CLEANUP_FUNC (XXH3_state_t, XXH3_freeState)

char         *_serio_seal_write_close    (char            *out,
                                          guint64          n_records,
                                          guint64          hash);

/* Called once a record's name is known: the reserved names are only valid
 * in their places. Opening a sealed text creates check->hash, to which the
 * reader then feeds every byte from the start of the text up to the start
 * of the closing record's line. */
gboolean      _serio_seal_check_name     (SerioSealCheck  *check,
                                          SerioNameKind    kind,
                                          gulong           line,
                                          GError         **error);
/* Called once a record has parsed; @values holds its values when @kind is
 * not SERIO_NAME_ARRAY (up to 3 of them). */
gboolean      _serio_seal_check_record   (SerioSealCheck  *check,
                                          SerioNameKind    kind,
                                          gsize            n_values,
                                          const double    *values,
                                          gulong           line,
                                          GError         **error);
/* Called before each line after the first: nothing may follow the seal. */
gboolean      _serio_seal_check_trailing (SerioSealCheck  *check,
                                          gulong           line,
                                          GError         **error);
/* Called at the end of the text. */
gboolean      _serio_seal_check_finish   (SerioSealCheck  *check,
                                          gulong           last_line,
                                          GError         **error);
void          _serio_seal_check_clear    (SerioSealCheck  *check);

/* The pieces of the reader (serio-reader.c): records and tokens, their
 * errors and messages. */

typedef struct
{
  int         code;             /* a SerioError */
  const char *reason;           /* untranslated, marked with N_() */
} SerioCodecProblem;

/* What the start of a record holds: "v1|" name "|" count "|". */
typedef struct
{
  const char    *name;
  gsize          name_len;
  SerioNameKind  kind;
  const char    *count_start;
  gsize          count_digits;
  guint64        count;         /* when count_exact */
  gboolean       count_exact;   /* the count has at most 19 digits */
  const char    *values;        /* the first byte after the count's "|" */
} SerioCodecHeader;

/* Checks the version tag and the name of the record at @p, which ends at
 * @line_end (its CR LF or LF excluded), and fills in the name and kind. */
gboolean _serio_codec_parse_name         (const char         *p,
                                          const char         *line_end,
                                          gulong              line,
                                          SerioCodecHeader   *header,
                                          GError            **error);
/* Then parses the count. @buf_end bounds the 8-byte loads; the digits of
 * the count must be followed by a non-digit before it. */
gboolean _serio_codec_parse_count        (SerioCodecHeader   *header,
                                          const char         *line_end,
                                          const char         *buf_end,
                                          gulong              line,
                                          GError            **error);
/* Parses up to @max_tokens tokens from *@s_inout, each ending at a comma
 * or at @seg_end, whose byte is a comma or ends the line. Stores their
 * values in @values unless it is %NULL. Returns the number parsed and
 * leaves *@s_inout at the start of the next token; sets @ended when the
 * last one ended at @seg_end. On a bad token, *@s_inout is that token and
 * problem->reason is set (it is %NULL otherwise). Its type is named for
 * SerioCodecKernel, as SerioCodecWriteTokens is.
 *
 * As it parses, it asks the CPU to fetch the text SERIO_CODEC_PREFETCH
 * bytes ahead of each token (a hint, which cannot fault: the address may
 * lie past the text). */
#define SERIO_CODEC_PREFETCH (128 * 1024)
typedef gsize SerioCodecParseTokens (const char        **s_inout,
                                     const char         *seg_end,
                                     const char         *buf_end,
                                     double             *values,
                                     gsize               max_tokens,
                                     gboolean           *ended,
                                     SerioCodecProblem  *problem);
SerioCodecParseTokens _serio_codec_parse_tokens;

/* One form of the codec's kernels: serio-codec-kernel.h compiled for it,
 * its loops inlined in these two functions, so that the form is chosen
 * once per call and not per value. SERIO_CODEC_DEFINE_KERNEL() defines
 * each: the portable and SSE2 ones in serio-codec.c, the AVX2 one in
 * serio-codec-avx2.c; a form that the build lacks is not defined. */
typedef struct
{
  SerioCodecParseTokens *parse_tokens;
  SerioCodecWriteTokens *write_tokens;
} SerioCodecKernel;

extern const SerioCodecKernel _serio_codec_kernel_portable;
extern const SerioCodecKernel _serio_codec_kernel_sse2;
extern const SerioCodecKernel _serio_codec_kernel_avx2;

/* The kernels of @path, which must be available (for the tests, which
 * compare the forms); a form that this build lacks gives the portable
 * ones. The library calls the chosen form's through
 * _serio_codec_parse_tokens() and _serio_codec_write_tokens(). */
const SerioCodecKernel *_serio_codec_kernel_on (SerioCodecPath path);

/* Parses the @len bytes at @token as one token; the byte at @token + @len
 * must be a comma or a line feed. */
gboolean _serio_codec_parse_long_token   (const char         *token,
                                          gsize               len,
                                          const char        **end,
                                          SerioCodecProblem  *problem);
char    *_serio_codec_describe           (const char         *text,
                                          gsize               len);
void     _serio_codec_set_token_error    (GError            **error,
                                          const SerioCodecProblem *problem,
                                          gulong              line,
                                          guint64             index,
                                          const char         *token,
                                          const char         *line_end);
/* The value at @index (1-based) of a record of @dtype, which @dtype cannot
 * hold: a %SERIO_ERROR_DOMAIN error showing the value's token. */
void     _serio_codec_set_dtype_error    (GError            **error,
                                          SerioDtype          dtype,
                                          double              value,
                                          gulong              line,
                                          guint64             index);
/* Checks that @dtype holds the @n_values values of a record from its
 * value @first_index (0-based) on; %FALSE with the error of the first
 * that it does not. Nothing to do for float64 or %NULL @values. */
gboolean _serio_codec_check_typed        (SerioDtype          dtype,
                                          const double       *values,
                                          gsize               n_values,
                                          guint64             first_index,
                                          gulong              line,
                                          GError            **error);
void     _serio_codec_set_length_error   (GError            **error,
                                          gulong              line,
                                          const char         *declared,
                                          guint64             n_tokens);
/* The values of a record of @count values cannot be allocated. */
void     _serio_codec_set_memory_error   (GError            **error,
                                          gulong              line,
                                          guint64             count);
void     _serio_codec_set_truncated_error (GError           **error,
                                          gulong              line);

G_END_DECLS
