/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-numpy.h: NumPy's .npy (serio-npy.c) and .npz (serio-npz.c)
 * formats, read and written as streams
 *
 * Copyright 2026 The libserio authors
 *
 * Nothing here holds a whole file or a whole array: a .npy file is read
 * header first, then its data in pieces handed to a sink; a .npz archive
 * is read member by member through a bounded window; a .npy file or a .npz
 * archive is written as the values come. Memory never depends on a size
 * or a count read from a file.
 */

#pragma once

#include "serio-tool.h"

G_BEGIN_DECLS

/* NumPy allows 64 dimensions (32 before NumPy 2.0). */
#define SERIO_NUMPY_MAX_DIMS 64

/* The values handed to a sink at a time, and read from a serio file at a
 * time on the way to NumPy. */
#define SERIO_NUMPY_CHUNK_VALUES 65536

typedef struct _SerioNumpySource SerioNumpySource;

/*
 * SerioNumpySource:
 * @read: reads up to @size bytes into @buffer; returns how many, 0 at the
 *   end, or -1 with @error set
 * @read_at: (nullable): reads @size bytes at @offset from the start of
 *   the .npy bytes (fewer, in @n_read, only at the end), without moving
 *   where @read reads; %NULL when the source cannot seek
 * @size: the number of .npy bytes, or -1 when it is not known
 * @io_failed: set by @read and @read_at when the error they set is one of
 *   the stream, not of the data (the exit status differs)
 *
 * The bytes of one .npy file: a file of its own, or a member of a .npz
 * archive.
 */
struct _SerioNumpySource
{
  gssize   (*read)      (SerioNumpySource  *source,
                         void              *buffer,
                         gsize              size,
                         GError           **error);
  gboolean (*read_at)   (SerioNumpySource  *source,
                         guint64            offset,
                         void              *buffer,
                         gsize              size,
                         gsize             *n_read,
                         GError           **error);
  gint64     size;
  gboolean   io_failed;
};

/* What a .npy header says, once it was checked. */
typedef struct
{
  const char *name;                 /* a .npz member's name less ".npy", or NULL */
  guint64     shape[SERIO_NUMPY_MAX_DIMS];
  guint       n_dims;               /* 0 for a 0-d scalar */
  guint64     n_values;
  const char *type_name;            /* such as "float32" */
  SerioDtype  dtype;                /* the same type (never bfloat16) */
} SerioNumpyHeader;

/*
 * SerioNumpySink:
 * @begin: the header of an array was read; its values follow
 * @values: the next values, in C order: elements of the header's dtype in
 *   the host's byte order (serio's typed bytes), checked to be values that
 *   a serio array of that type holds
 * @end: every value of the array was handed over
 *
 * Each returns %FALSE with @error set to stop the reading, which then
 * fails with that error (a .npz reader puts the member's name before it).
 * A sink that keeps an error of its own (its output failed) still sets
 * one here: a reader never fails without an error.
 */
typedef struct
{
  gboolean (*begin)  (gpointer                user_data,
                      const SerioNumpyHeader *header,
                      GError                **error);
  gboolean (*values) (gpointer                user_data,
                      const void             *elements,
                      gsize                   n_values,
                      GError                **error);
  gboolean (*end)    (gpointer                user_data,
                      GError                **error);
} SerioNumpySink;

gboolean     serio_numpy_read_npy       (SerioNumpySource      *source,
                                         const char            *name,
                                         const SerioNumpySink  *sink,
                                         gpointer               user_data,
                                         GError               **error);
gboolean     serio_numpy_read_npz       (GInputStream          *stream,
                                         gint64                 size,
                                         const SerioNumpySink  *sink,
                                         gpointer               user_data,
                                         gboolean              *io_failed,
                                         GError               **error);

/* A source on a whole .npy file. */
typedef struct
{
  SerioNumpySource  source;
  GInputStream     *stream;
} SerioNumpyFileSource;

void         serio_numpy_file_source_init (SerioNumpyFileSource *file_source,
                                           GInputStream         *stream,
                                           gint64                size);

typedef enum
{
  SERIO_NUMPY_NPY,
  SERIO_NUMPY_NPZ,
  SERIO_NUMPY_NPZ_COMPRESSED,
} SerioNumpyFormat;

typedef struct _SerioNumpyWriter SerioNumpyWriter;

SerioNumpyWriter *serio_numpy_writer_new         (GOutputStream         *stream,
                                                  SerioNumpyFormat       format);
void              serio_numpy_writer_free        (SerioNumpyWriter      *writer);
gboolean          serio_numpy_writer_begin_array (SerioNumpyWriter      *writer,
                                                  const char            *name,
                                                  SerioDtype             dtype,
                                                  const guint64         *shape,
                                                  guint                  n_dims,
                                                  guint64                n_values,
                                                  GError               **error);
gboolean          serio_numpy_writer_add_elements (SerioNumpyWriter     *writer,
                                                   const void           *elements,
                                                   gsize                 n_values,
                                                   GError              **error);
gboolean          serio_numpy_writer_end_array   (SerioNumpyWriter      *writer,
                                                  GError               **error);
gboolean          serio_numpy_writer_finish      (SerioNumpyWriter      *writer,
                                                  GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioNumpyWriter, serio_numpy_writer_free)

/* Between serio-npy.c and serio-npz.c: the writer of a .npz archive
 * hands the .npy bytes of each array to serio-npz.c, which makes them a
 * member of the archive: */
typedef struct _SerioNumpyZipWriter SerioNumpyZipWriter;

/* the archive, stored or compressed with deflate, */
SerioNumpyZipWriter *serio_numpy_zip_writer_new          (GOutputStream        *stream,
                                                          gboolean              compressed);
/* a member NAME.npy of @size .npy bytes, */
gboolean             serio_numpy_zip_writer_begin_member (SerioNumpyZipWriter  *zip,
                                                          const char           *name,
                                                          guint64               size,
                                                          GError              **error);
/* the next of them, */
gboolean             serio_numpy_zip_writer_write        (SerioNumpyZipWriter  *zip,
                                                          const void           *data,
                                                          gsize                 size,
                                                          GError              **error);
/* once they were all written, */
gboolean             serio_numpy_zip_writer_end_member   (SerioNumpyZipWriter  *zip,
                                                          GError              **error);
/* and the central directory after the last member. */
gboolean             serio_numpy_zip_writer_finish       (SerioNumpyZipWriter  *zip,
                                                          GError              **error);
void                 serio_numpy_zip_writer_free         (SerioNumpyZipWriter  *zip);

/* An array too large for a .npy file, or for a member of a .npz archive:
 * sets @error and returns %FALSE. */
gboolean             serio_numpy_too_large               (GError              **error);

G_END_DECLS
