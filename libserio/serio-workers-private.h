/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-workers-private.h: long runs of values formatted and parsed by several
 * threads (private, not installed)
 *
 * Copyright 2026 The libserio authors
 *
 * The one copy of libserio's parallel paths, shared by the writer and the
 * in-memory serialiser (formatting) and by the reader and the in-memory
 * parser (parsing). A SerioWorkers holds threads of its owner's, started
 * as calls need them and joined when it is freed; in a child of fork()
 * it starts new ones. In a call, the threads work through the
 * blocks (or windows) one after the other while the calling thread takes
 * the results in order, so the work flows without a pause between
 * rounds: formatted blocks wait in a ring of slots for the caller; a
 * parse's windows, each parsed into a buffer of the thread's, are stored
 * in the output as soon as the windows before them are parsed, by
 * whichever thread is free, so that no thread waits for another's window
 * or for the caller. Every call ends with its threads done. The
 * results do not depend on the number of threads: formatted blocks are
 * put out in order, and the first bad value reported (a bad token, or a
 * value that the type does not hold) is the first in the order of the
 * text.
 */

#pragma once

#include <glib.h>

#include "serio-codec-private.h"
#include "serio-dtype.h"
#include "serio-threads-private.h"

G_BEGIN_DECLS

typedef struct _SerioWorkers SerioWorkers;

/* The threads to use when @requested (0 for one per processor) are
 * asked for, capped by the environment variable SERIO_THREADS. */
guint         _serio_threads_effective    (guint               requested);

/* The last comma of the @len bytes at @p, or %NULL. */
const char   *_serio_last_comma           (const char         *p,
                                           gsize               len);

/* Workers for a reader or writer: those another one of this process
 * gave back, if any are kept, with their threads and buffers; new ones
 * otherwise, which start threads on their first parallel call. Given
 * back with _serio_workers_free(), they are kept for the next one (at
 * most two are kept; the others are freed, their threads joined). */
SerioWorkers *_serio_workers_new          (void);
void          _serio_workers_free         (SerioWorkers       *workers);

/* The lock of @workers, for the tests alone: test-workers-fork holds it
 * in another thread across a fork(), as a thread of the workers can. */
GMutex       *_serio_workers_get_lock     (SerioWorkers       *workers);

/* The bytes of the buffers that @workers hold (kept with them when they
 * are given back, up to 16 MiB; freed otherwise). */
gsize         _serio_workers_get_buffer_bytes (SerioWorkers   *workers);

/* A block of values that a thread formatted into @out. */
typedef struct
{
  const double *values;         /* the values formatted */
  gsize         n_values;
  gboolean      leading_comma;  /* a comma before the first token */
  char         *out;
  gsize         len;            /* the bytes formatted */
} SerioFormatBlock;

/* Takes the formatted blocks in order, on the calling thread; returns
 * %FALSE to stop. */
typedef gboolean (*SerioBlockSink) (const SerioFormatBlock *block,
                                    gpointer                user_data);

/* Whether the elements of @dtype at @elements are doubles that can be
 * formatted where they are (aligned float64), rather than converted. */
static inline gboolean
_serio_elements_in_place (gconstpointer elements,
                          SerioDtype    dtype)
{
  return dtype == SERIO_DTYPE_FLOAT64 && (guintptr) elements % G_ALIGNOF (double) == 0;
}

/* Formats the whole blocks of @block_values values at the start of the
 * @n_values elements of @dtype at @elements with up to @n_threads threads
 * and hands them to @sink in order, while the threads format the next
 * ones. Each thread converts the elements of its block to doubles itself
 * (aligned float64 ones are formatted where they are); the caller has
 * checked that a double holds every one (_serio_dtype_to_doubles()), and
 * @elements needs no alignment. A comma goes before every token but the
 * very first when !@leading_comma. Returns the number of values handed
 * over: every whole block, or fewer when @sink stopped. The tail of fewer
 * than @block_values values is the caller's. */
gsize         _serio_workers_format       (SerioWorkers       *workers,
                                           gconstpointer       elements,
                                           SerioDtype          dtype,
                                           gsize               n_values,
                                           gsize               block_values,
                                           guint               n_threads,
                                           gboolean            leading_comma,
                                           SerioBlockSink      sink,
                                           gpointer            user_data);

/* A whole record for _serio_workers_format_lines(): its stored name, as
 * written (sanitised), and its elements, each of which a double holds
 * (_serio_dtype_to_doubles()); they need no alignment. */
typedef struct
{
  const char    *name;
  gsize          name_len;
  gconstpointer  elements;
  SerioDtype     dtype;
  gsize          n_values;
} SerioFormatLine;

/* Formats the @n_lines records whole, each "v1|" name "|" count "|",
 * its tokens and a line feed, with up to @n_threads threads, and hands
 * them to @sink in order, in blocks of consecutive records of at least
 * @group_values values each (but the last), while the threads format the
 * next blocks; a block's values are %NULL and its n_values the count of
 * its records' values. Returns the number of records handed over: all of
 * them, or fewer when @sink stopped. */
gsize         _serio_workers_format_lines (SerioWorkers          *workers,
                                           const SerioFormatLine *lines,
                                           gsize                  n_lines,
                                           gsize                  group_values,
                                           guint                  n_threads,
                                           SerioBlockSink         sink,
                                           gpointer               user_data);

/* Why a parse stopped before the values wanted, if it did. */
typedef struct
{
  SerioCodecProblem  problem;   /* a bad token: reason set (%NULL otherwise) */
  const char        *bad;       /* that token */
  gboolean           misfit;    /* a value that the type does not hold */
  double             value;     /* that value */
} SerioParseStop;

/* Takes the text of each window that a parse took whole, in the order
 * of the text, on the calling thread while the threads parse the next
 * windows: the reader hashes a sealed text there, so that the hash is
 * not left to do after the parse. */
typedef void (*SerioTextSink) (const char *text,
                               gsize       len,
                               gpointer    user_data);

/* Parses up to @max_values tokens of [s, span_end), which ends at a comma
 * or at the end of a line, with up to @n_threads threads, in windows of
 * 64 KiB cut at commas, and checks that @dtype holds every value. The
 * values go to @out as elements of @out_dtype (float64, or @dtype): each
 * thread checks and converts the values of its window and writes them in
 * place, so that nothing is left to do on the calling thread. @buf_end
 * bounds the 8-byte loads. Returns the number of values stored, sets
 * *@end to where the next token starts, and *@ended to whether the last
 * value stored ended at @span_end (every token of the span was parsed;
 * *@end is then @span_end, which the start of a token that follows the
 * values wanted can also be: an empty one). The first bad value in the
 * text among those within @max_values, be it a bad token or a value that
 * @dtype does not hold, stops the parse after the values before it and
 * is described in @stop (whose problem.reason is %NULL and misfit %FALSE
 * otherwise); the elements of @out after them are then undefined. When @sink is not
 * %NULL, the text from @s to where the values stored end (the comma after
 * the last window taken whole included) goes to it in pieces, from @s on
 * and without a gap, as far as the threads parsed it; the rest of the
 * span, if any, is the caller's. */
gsize         _serio_workers_parse        (SerioWorkers       *workers,
                                           const char         *s,
                                           const char         *span_end,
                                           const char         *buf_end,
                                           SerioDtype          dtype,
                                           SerioDtype          out_dtype,
                                           gpointer            out,
                                           gsize               max_values,
                                           guint               n_threads,
                                           const char        **end,
                                           gboolean           *ended,
                                           SerioParseStop     *stop,
                                           SerioTextSink       sink,
                                           gpointer            sink_data);

/* A record's whole line, for _serio_workers_parse_lines(). */
typedef struct
{
  const char *start;    /* its first value */
  const char *end;      /* the end of the line, its CR LF or LF excluded */
  SerioDtype  dtype;    /* the record's type */
  gsize       count;    /* the values it declares, at least one */
  double     *out;      /* room for @count doubles */
  gpointer    typed;    /* room for @count elements of @dtype, or %NULL */
  gboolean    ok;       /* set by the parse */
} SerioParseLine;

/* Parses each of the @n_lines lines whole into its out as doubles, with
 * up to @n_threads threads, and sets its ok: %TRUE when the line holds
 * exactly count tokens, each valid, whose values its type holds (the
 * values are then in out, and in typed as elements of its type when
 * typed is not %NULL, converted by the thread that parsed the line);
 * %FALSE otherwise, when out and typed are undefined and the reader's
 * own parse of the line says what is wrong with it. The
 * lines are short (far less than the reader's parallel span), so that a
 * thread takes several of them at a time, in order. @buf_end bounds the
 * 8-byte loads. When @sink is not %NULL, it gets each group of lines that
 * the threads parsed, in order, on the calling thread while they parse
 * the next ones: the text from the first line's start to the last one's
 * end. */
void          _serio_workers_parse_lines  (SerioWorkers       *workers,
                                           SerioParseLine     *lines,
                                           gsize               n_lines,
                                           const char         *buf_end,
                                           guint               n_threads,
                                           SerioTextSink       sink,
                                           gpointer            sink_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioWorkers, _serio_workers_free)

G_END_DECLS
