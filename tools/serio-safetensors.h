/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-safetensors.h: Hugging Face's .safetensors format, read and
 * written as streams (private to serio convert)
 *
 * Copyright 2026 The libserio authors
 *
 * The format: an 8-byte little-endian header length N, N bytes of a JSON
 * object {name: {"dtype", "shape", "data_offsets": [begin, end]}, …} with
 * an optional "__metadata__" object of strings, then the data: each
 * tensor's elements little-endian in C order, the tensors covering it
 * without a hole. The header is held in memory (at most 100 MB, as the
 * reference reader allows); the data never is.
 */

#pragma once

#include "serio-tool.h"

G_BEGIN_DECLS

/* The reference reader's limit on the header (MAX_HEADER_SIZE). */
#define SERIO_SAFETENSORS_MAX_HEADER 100000000

/* What an element type of the format is to serio. */
typedef struct
{
  const char *name;        /* "F32" */
  guint       size;        /* bytes per element; 0 for types serio has not */
  guint       rank;        /* the reference writer's order (its Dtype enum) */
  const char *serio_name;  /* "float32", or NULL for types serio has not */
} SerioSafetensorsDtype;

const SerioSafetensorsDtype *serio_safetensors_dtype_lookup      (const char *name);
const SerioSafetensorsDtype *serio_safetensors_dtype_from_serio  (const char *serio_name);

typedef struct
{
  char                        *name;
  const SerioSafetensorsDtype *dtype;
  guint64                     *shape;
  guint                        n_dims;
  guint64                      n_values;
  guint64                      begin;     /* offsets in the data */
  guint64                      end;
  guint64                      source;    /* where the writer's caller keeps the data */
} SerioSafetensorsTensor;

/* A checked header: tensors in the order of their data. */
typedef struct
{
  GPtrArray *tensors;         /* of SerioSafetensorsTensor */
  GPtrArray *metadata_keys;   /* of char *, in the order of the header */
  GPtrArray *metadata_values; /* of char * */
  gboolean   has_metadata;    /* "__metadata__" was there, even empty */
  guint64    data_size;       /* the end of the last tensor */
} SerioSafetensorsHeader;

void                    serio_safetensors_header_free  (SerioSafetensorsHeader *header);
SerioSafetensorsHeader *serio_safetensors_header_parse (const char             *json,
                                                        gsize                   len,
                                                        GError                **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioSafetensorsHeader, serio_safetensors_header_free)

/*
 * SerioSafetensorsSink:
 * @header: the header was read and checked; the data follows
 * @begin: a tensor's data follows
 * @data: the next bytes of it, whole elements in host byte order
 * @end: every byte of the tensor was handed over
 *
 * Each returns %FALSE with its error set to stop the reading, which then
 * fails with that error.
 */
typedef struct
{
  gboolean (*header) (gpointer                      user_data,
                      const SerioSafetensorsHeader *header,
                      GError                      **error);
  gboolean (*begin)  (gpointer                      user_data,
                      const SerioSafetensorsTensor *tensor,
                      GError                      **error);
  gboolean (*data)   (gpointer                      user_data,
                      const void                   *data,
                      gsize                         len,
                      GError                      **error);
  gboolean (*end)    (gpointer                      user_data,
                      GError                      **error);
} SerioSafetensorsSink;

gboolean     serio_safetensors_read     (GInputStream                *stream,
                                         gint64                       size,
                                         const SerioSafetensorsSink  *sink,
                                         gpointer                     user_data,
                                         gboolean                    *io_failed,
                                         GError                     **error);

/* The writer's layout: the tensors in the reference writer's order
 * (alignment descending, then name), their offsets set, and the header
 * that says so, padded with spaces to a multiple of 8 bytes. */
GBytes      *serio_safetensors_layout   (GPtrArray                   *tensors,
                                         GPtrArray                   *metadata_keys,
                                         GPtrArray                   *metadata_values,
                                         GError                     **error);

void         serio_safetensors_swap     (void                        *data,
                                         gsize                        len,
                                         guint                        size);

int          serio_safetensors_to_serio   (const char                *in,
                                           const char                *out,
                                           gboolean                   plain);
int          serio_safetensors_from_serio (const char                *in,
                                           const char                *out);

G_END_DECLS
