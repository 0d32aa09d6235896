/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle.c: an ordered list of named Float64 arrays
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-bundle.h"
#include "serio-bundle-private.h"
#include "serio-dtype-private.h"
#include "serio-error.h"
#include "serio-i18n-private.h"
#include "serio-memory-private.h"
#include "serio-name-private.h"

/**
 * SerioBundle:
 *
 * An ordered list of named arrays of 64-bit floats ("Float64"), such as the
 * weights of a trained model, that is saved as v1 text and read back bit for
 * bit.
 *
 * A bundle is a list, not a map: names may repeat and may be empty, and
 * arrays keep the order in which they were appended.
 * [method@Serio.Bundle.lookup] finds the first array of a given name.
 *
 * An array's shape travels in its name: `conv1.weight[16x3x3x3]` holds a
 * 16×3×3×3 array in C order, `steps[]` a 0-d scalar, and any other name a
 * one-dimensional array. [method@Serio.Bundle.get_shape] and
 * [method@Serio.Bundle.get_base_name] read it,
 * [method@Serio.Bundle.append_with_shape] writes it, and
 * [method@Serio.Bundle.lookup] finds an array by its base name too.
 *
 * An array's element type travels in its name too, as a marker before
 * the shape suffix: `conv1.weight@float32[16x3x3x3]` is a float32 array
 * (see #SerioDtype). A bundle holds every array as 64-bit floats, each
 * exactly a value of the array's type, so [method@Serio.Bundle.get_values]
 * serves every type; [method@Serio.Bundle.append_typed] and
 * [method@Serio.Bundle.get_typed_bytes] take and give the elements in
 * their own type, and [method@Serio.Bundle.get_dtype] tells the type.
 *
 * Arrays are immutable once appended: a bundle only grows. Two
 * normalisations happen on the way in, so that a bundle always holds exactly
 * what its text will hold: every `|`, carriage return and line feed in a
 * name becomes `_`, and every NaN becomes the default quiet NaN (bits
 * `0x7FF8000000000000`), the format's one documented loss.
 *
 * [ctor@Serio.Bundle.new_from_string], [ctor@Serio.Bundle.new_from_bytes] and
 * [ctor@Serio.Bundle.new_from_file] accept only the canonical v1 text that
 * [method@Serio.Bundle.to_string] produces (plus CR LF line ends and blank
 * lines), and fail with a [error@Serio.Error] on anything else: they never
 * return part of a bundle.
 *
 * ## Sealed texts
 *
 * Every call that writes text writes a *sealed* text unless given
 * %SERIO_SAVE_FLAGS_PLAIN (see #SerioSaveFlags): plain v1 with
 * an opening record `v1|serio.sealed|1|1` and a closing record
 * `v1|serio.seal|3|…` holding the number of records and an XXH3-64 hash of
 * the text. Every reader verifies a sealed text and strips the two records,
 * so that a changed digit, a lost, doubled or swapped line, or a file cut
 * at a record boundary is reported rather than loaded as other weights.
 * The rule is the same for memory ([method@Serio.Bundle.to_bytes],
 * [method@Serio.Bundle.to_string]), streams
 * ([method@Serio.Bundle.write_to_stream]) and files
 * ([method@Serio.Bundle.save_to_file]); plain text is for readers that
 * need it (a v1 reader that does not know seals sees the two records as
 * arrays).
 *
 * ## Threads
 *
 * Reading a bundle (serialising it, getting its names, values or bytes,
 * comparing it) from several threads at once is safe. A bundle is not for
 * concurrent mutation: do not append to it while another thread uses it.
 * The values of an array never change after it has been appended, so
 * pointers from [method@Serio.Bundle.get_values] stay valid for the life of
 * the bundle, and [method@Serio.Bundle.get_bytes] is safe to hand to another
 * thread.
 */

typedef struct
{
  const char   *name;       /* in the bundle's names chunk */
  const double *values;     /* inside @owner, or empty_values */
  gsize         n_values;
  GBytes       *owner;      /* %NULL for an empty array; the bundle's
                             * blocks hold the reference */
} SerioEntry;

struct _SerioBundle
{
  GObject       parent_instance;

  GArray       *entries;    /* of SerioEntry */
  GStringChunk *names;
  GPtrArray    *blocks;     /* of GBytes: every owner of values, once */
};

G_DEFINE_FINAL_TYPE (SerioBundle, serio_bundle, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_N_ARRAYS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* get_values() of an empty array points here rather than returning NULL. */
static const double empty_values[1];

/* g_return_if_fail (), kept with G_DISABLE_CHECKS: for the checks on what
 * is appended, without which a bundle could hold what its text cannot (a
 * name that is not UTF-8, which the reader rejects) or sizes that wrap.
 * A failure is still a programmer error, with the same critical. */
#define return_if_fail_always(expr) \
  G_STMT_START { \
    if (G_LIKELY (expr)) { } \
    else \
      { \
        g_return_if_fail_warning (G_LOG_DOMAIN, G_STRFUNC, #expr); \
        return; \
      } \
  } G_STMT_END

#define NAMES_CHUNK_SIZE 1024


static void
serio_bundle_finalize (GObject *object)
{
  SerioBundle *self = (SerioBundle *) object;

  g_clear_pointer (&self->entries, g_array_unref);
  g_clear_pointer (&self->names, g_string_chunk_free);
  g_clear_pointer (&self->blocks, g_ptr_array_unref);

  G_OBJECT_CLASS (serio_bundle_parent_class)->finalize (object);
}

static void
serio_bundle_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SerioBundle *self = SERIO_BUNDLE (object);

  switch (prop_id)
    {
    case PROP_N_ARRAYS:
      g_value_set_uint (value, serio_bundle_get_n_arrays (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
serio_bundle_class_init (SerioBundleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = serio_bundle_finalize;
  object_class->get_property = serio_bundle_get_property;

  /**
   * SerioBundle:n-arrays:
   *
   * The number of arrays in the bundle. It only grows, with each
   * [method@Serio.Bundle.append] and its siblings.
   */
  properties[PROP_N_ARRAYS] =
    g_param_spec_uint ("n-arrays", NULL, NULL,
                       0, G_MAXUINT, 0,
                       (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  _serio_i18n_init ();
}

static void
serio_bundle_init (SerioBundle *self)
{
  self->entries = g_array_new (FALSE, FALSE, sizeof (SerioEntry));
  self->names = g_string_chunk_new (NAMES_CHUNK_SIZE);
  self->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
}

static inline SerioEntry *
get_entry (SerioBundle *self,
           guint        index)
{
  return &g_array_index (self->entries, SerioEntry, index);
}

/* Adds an array whose name is already in self->names and whose values,
 * already canonical, live in @owner (which the caller has added to
 * self->blocks) or are empty. */
static void
add_entry (SerioBundle  *self,
           const char   *name,
           const double *values,
           gsize         n_values,
           GBytes       *owner)
{
  SerioEntry entry = { name, n_values > 0 ? values : empty_values, n_values, owner };

  g_array_append_val (self->entries, entry);
}

/* Appends an array from the public API: sanitizes the name and takes
 * ownership of @owner, which holds exactly the canonical values. */
static void
append_values (SerioBundle *self,
               const char  *name,
               GBytes      *owner)
{
  char *stored = g_string_chunk_insert (self->names, name);
  gsize size;
  const double *values = g_bytes_get_data (owner, &size);

  for (char *p = stored; *p != '\0'; p++)
    {
      if (*p == '|' || *p == '\r' || *p == '\n')
        *p = '_';
    }

  if (size > 0)
    g_ptr_array_add (self->blocks, owner);
  else
    g_clear_pointer (&owner, g_bytes_unref);

  add_entry (self, stored, values, size / sizeof (double), owner);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ARRAYS]);
}

/**
 * serio_bundle_new:
 *
 * Creates an empty bundle, to be filled with [method@Serio.Bundle.append].
 * An empty bundle serialises to the empty string.
 *
 * Returns: (transfer full): a new, empty bundle
 */
SerioBundle *
serio_bundle_new (void)
{
  return g_object_new (SERIO_TYPE_BUNDLE, NULL);
}

/* The precondition of the float64 appends on a typed name: every value
 * fits the type. A value that does not is a programmer error, kept with
 * G_DISABLE_CHECKS like the others: a bundle never holds what its text
 * could not be read back as. */
static gboolean
check_fits (const char   *name,
            const double *values,
            gsize         n_values)
{
  SerioDtype dtype = _serio_name_get_dtype (name, strlen (name), n_values);
  gsize bad;

  if (G_LIKELY (dtype == SERIO_DTYPE_FLOAT64) ||
      !_serio_dtype_find_misfit (dtype, values, n_values, &bad))
    return TRUE;

  g_critical ("%s: value %" G_GSIZE_FORMAT " (%.17g) of the array “%s” does not fit its type %s; "
              "nothing was appended", G_STRFUNC, bad, values[bad], name, serio_dtype_to_string (dtype));
  return FALSE;
}

/**
 * serio_bundle_append:
 * @self: a #SerioBundle
 * @name: the name of the array, valid UTF-8
 * @values: (array length=n_values): the values to copy
 * @n_values: the number of values; @values may be %NULL when it is 0
 *
 * Appends a copy of @values to the bundle under @name.
 *
 * Every `|`, carriage return and line feed in @name is replaced with `_`,
 * and every NaN is stored as the default quiet NaN, so that the bundle holds
 * exactly what its text will hold. Names may be empty and may repeat, but
 * `serio.sealed` and `serio.seal` are reserved for the records of a sealed
 * text and are refused.
 *
 * A @name with a type marker (`w@int8[3]`, see #SerioDtype) makes a typed
 * array, whose values must all fit its type
 * ([func@Serio.Dtype.holds]): one that does not is a programmer error,
 * reported with a critical warning, and nothing is appended. Use
 * [method@Serio.Bundle.append_typed] to append typed data with a #GError.
 */
void
serio_bundle_append (SerioBundle  *self,
                     const char   *name,
                     const double *values,
                     gsize         n_values)
{
  double *copy;

  gsize size;

  return_if_fail_always (SERIO_IS_BUNDLE (self));
  return_if_fail_always (name != NULL);
  return_if_fail_always (g_utf8_validate (name, -1, NULL));
  return_if_fail_always (_serio_seal_name_kind (name, strlen (name)) == SERIO_NAME_ARRAY);
  return_if_fail_always (values != NULL || n_values == 0);
  return_if_fail_always (g_size_checked_mul (&size, n_values, sizeof (double)));

  if (!check_fits (name, values, n_values))
    return;

  copy = n_values > 0 ? g_memdup2 (values, size) : NULL;
  _serio_float64_canonicalize (copy, n_values);

  append_values (self, name, g_bytes_new_take (copy, size));
}

/**
 * serio_bundle_append_array:
 * @self: a #SerioBundle
 * @name: the name of the array, valid UTF-8
 * @values: (element-type gdouble): the values to copy
 *
 * Appends a copy of the doubles in @values, like
 * [method@Serio.Bundle.append].
 */
void
serio_bundle_append_array (SerioBundle *self,
                           const char  *name,
                           GArray      *values)
{
  return_if_fail_always (SERIO_IS_BUNDLE (self));
  return_if_fail_always (values != NULL);
  return_if_fail_always (g_array_get_element_size (values) == sizeof (double));

  serio_bundle_append (self, name, (const double *) (gconstpointer) values->data, values->len);
}

/**
 * serio_bundle_append_bytes:
 * @self: a #SerioBundle
 * @name: the name of the array, valid UTF-8
 * @values: the values as native-endian 64-bit floats; its size must be a
 *   multiple of 8
 *
 * Appends the doubles held in @values, like [method@Serio.Bundle.append].
 *
 * This is the fast path from bindings: in Python,
 * `bundle.append_bytes("w", GLib.Bytes.new(array.tobytes()))` for a NumPy
 * float64 array. When @values is suitably aligned and holds no NaN other
 * than the default quiet NaN, the bundle keeps a reference to it instead of
 * copying.
 *
 * With a typed @name, the values must fit the type, as for
 * [method@Serio.Bundle.append].
 */
void
serio_bundle_append_bytes (SerioBundle *self,
                           const char  *name,
                           GBytes      *values)
{
  gsize size;
  gconstpointer data;

  return_if_fail_always (SERIO_IS_BUNDLE (self));
  return_if_fail_always (name != NULL);
  return_if_fail_always (g_utf8_validate (name, -1, NULL));
  return_if_fail_always (_serio_seal_name_kind (name, strlen (name)) == SERIO_NAME_ARRAY);
  return_if_fail_always (values != NULL);

  data = g_bytes_get_data (values, &size);
  return_if_fail_always (size % sizeof (double) == 0);

  if ((guintptr) data % G_ALIGNOF (double) == 0 &&
      !check_fits (name, data, size / sizeof (double)))
    return;

  if ((guintptr) data % G_ALIGNOF (double) == 0 &&
           _serio_float64_is_canonical (data, size / sizeof (double)))
    {
      append_values (self, name, g_bytes_ref (values));
    }
  else
    {
      double *copy = g_memdup2 (data, size);

      if ((guintptr) data % G_ALIGNOF (double) != 0 &&
          !check_fits (name, copy, size / sizeof (double)))
        {
          g_free (copy);
          return;
        }
      _serio_float64_canonicalize (copy, size / sizeof (double));
      append_values (self, name, g_bytes_new_take (copy, size));
    }
}

/**
 * serio_bundle_get_n_arrays:
 * @self: a #SerioBundle
 *
 * Gets the number of arrays in the bundle.
 *
 * Returns: the number of arrays; valid indexes run from 0 to one less
 */
guint
serio_bundle_get_n_arrays (SerioBundle *self)
{
  g_return_val_if_fail (SERIO_IS_BUNDLE (self), 0);

  return self->entries->len;
}

/**
 * serio_bundle_get_name:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 *
 * Gets the name of the array at @index, as stored (after the replacement
 * of `|`, CR and LF described at [method@Serio.Bundle.append]).
 *
 * Returns: (transfer none): the name, valid UTF-8, owned by the bundle
 */
const char *
serio_bundle_get_name (SerioBundle *self,
                       guint        index)
{
  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);

  return get_entry (self, index)->name;
}

/**
 * serio_bundle_get_values:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 * @n_values: (out): return location for the number of values
 *
 * Gets the values of the array at @index. They stay valid, and never
 * change, as long as the bundle lives. For an empty array the result is
 * not %NULL but a valid pointer to no values.
 *
 * Returns: (array length=n_values) (transfer none): the values, owned by
 *   the bundle
 */
const double *
serio_bundle_get_values (SerioBundle *self,
                         guint        index,
                         gsize       *n_values)
{
  SerioEntry *entry;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);
  g_return_val_if_fail (n_values != NULL, NULL);

  entry = get_entry (self, index);
  *n_values = entry->n_values;

  return entry->values;
}

/**
 * serio_bundle_get_bytes:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 *
 * Gets the values of the array at @index as native-endian 64-bit floats in
 * a #GBytes, without copying them.
 *
 * This is the fast path to bindings: in Python,
 * `numpy.frombuffer(bundle.get_bytes(0).get_data(), dtype=numpy.float64)`;
 * in GJS, `new Float64Array(bundle.get_bytes(0).toArray().buffer)`.
 *
 * Returns: (transfer full): the values of the array
 */
GBytes *
serio_bundle_get_bytes (SerioBundle *self,
                        guint        index)
{
  SerioEntry *entry;
  gconstpointer data;
  gsize size, wanted;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);

  entry = get_entry (self, index);
  if (entry->owner == NULL)
    return g_bytes_new (NULL, 0);

  data = g_bytes_get_data (entry->owner, &size);
  wanted = entry->n_values * sizeof (double);
  if (data == (gconstpointer) entry->values && size == wanted)
    return g_bytes_ref (entry->owner);

  return g_bytes_new_from_bytes (entry->owner,
                                 (const char *) entry->values - (const char *) data,
                                 wanted);
}

/**
 * serio_bundle_lookup:
 * @self: a #SerioBundle
 * @name: the name to look for: a stored name or a base name
 * @index: (out) (optional): return location for the index of the array
 *
 * Finds an array by name, in two steps:
 *
 * 1. the first array whose stored name is exactly @name;
 * 2. if there is none, the first array whose base name (see
 *    [method@Serio.Bundle.get_base_name]) is @name.
 *
 * So `conv1.weight` finds `conv1.weight[16x3x3x3]`, and so does
 * `conv1.weight[16x3x3x3]`; `step` finds `step@int64[]`. When a bundle
 * holds both `w` and `w[2]`, `w` finds `w` (an exact name wins, wherever
 * it is) and `w[2]` finds `w[2]`; when it holds `w[2]` and `w[3]`, `w`
 * finds the first of them. A suffix that is not a shape (`w[5]` with 3
 * values) is part of the base name, so only `w[5]` finds that array.
 *
 * Names are compared as stored, that is after `|`, CR and LF have become
 * `_`.
 *
 * Returns: %TRUE if an array was found, %FALSE otherwise
 */
gboolean
serio_bundle_lookup (SerioBundle *self,
                     const char  *name,
                     guint       *index)
{
  gsize len;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  for (guint i = 0; i < self->entries->len; i++)
    {
      if (strcmp (get_entry (self, i)->name, name) == 0)
        {
          if (index != NULL)
            *index = i;
          return TRUE;
        }
    }

  len = strlen (name);
  for (guint i = 0; i < self->entries->len; i++)
    {
      SerioEntry *entry = get_entry (self, i);
      guint64 dims[SERIO_SHAPE_MAX_DIMS];
      gsize base_len;
      guint n_dims;

      /* Only a name that continues with '[' or '@' after @name can match. */
      if (strncmp (entry->name, name, len) != 0 || (entry->name[len] != '[' && entry->name[len] != '@'))
        continue;

      if (_serio_shape_parse (entry->name, entry->n_values, &base_len, dims, &n_dims) &&
          base_len == len)
        {
          if (index != NULL)
            *index = i;
          return TRUE;
        }
    }

  return FALSE;
}

/**
 * serio_bundle_equal:
 * @a: a #SerioBundle
 * @b: another #SerioBundle
 *
 * Compares two bundles bit for bit: they are equal when they have the same
 * number of arrays and, at every index, the same name and the same bit
 * patterns. So a NaN equals a NaN, and 0.0 differs from -0.0.
 *
 * Returns: %TRUE if @a and @b hold the same names and bits in the same
 *   order
 */
gboolean
serio_bundle_equal (SerioBundle *a,
                    SerioBundle *b)
{
  g_return_val_if_fail (SERIO_IS_BUNDLE (a), FALSE);
  g_return_val_if_fail (SERIO_IS_BUNDLE (b), FALSE);

  if (a == b)
    return TRUE;
  if (a->entries->len != b->entries->len)
    return FALSE;

  for (guint i = 0; i < a->entries->len; i++)
    {
      SerioEntry *ea = get_entry (a, i);
      SerioEntry *eb = get_entry (b, i);

      if (ea->n_values != eb->n_values ||
          strcmp (ea->name, eb->name) != 0 ||
          memcmp (ea->values, eb->values, ea->n_values * sizeof (double)) != 0)
        return FALSE;
    }

  return TRUE;
}

/* For the loader (serio-bundle-io.c): appends an array read
 * from a text, whose name is valid and whose canonical values live in
 * @owner (held by the bundle from then on), or are empty. Consecutive
 * arrays may share an owner. */
void
_serio_bundle_add_read_array (SerioBundle  *self,
                              const char   *name,
                              const double *values,
                              gsize         n_values,
                              GBytes       *owner)
{
  const char *stored = g_string_chunk_insert (self->names, name);

  if (owner != NULL &&
      (self->blocks->len == 0 || g_ptr_array_index (self->blocks, self->blocks->len - 1) != owner))
    g_ptr_array_add (self->blocks, g_bytes_ref (owner));

  add_entry (self, stored, values, n_values, owner);
}

const double *
_serio_bundle_peek (SerioBundle  *self,
                    guint         index,
                    const char  **name,
                    gsize        *n_values)
{
  SerioEntry *entry = get_entry (self, index);

  if (name != NULL)
    *name = entry->name;
  *n_values = entry->n_values;
  return entry->values;
}

/* A bundle sharing @self's values, which never change, so that a save in
 * another thread sees the bundle as it was when the save started. */
SerioBundle *
_serio_bundle_snapshot (SerioBundle *self)
{
  SerioBundle *copy = serio_bundle_new ();

  for (guint i = 0; i < self->blocks->len; i++)
    g_ptr_array_add (copy->blocks, g_bytes_ref (g_ptr_array_index (self->blocks, i)));

  for (guint i = 0; i < self->entries->len; i++)
    {
      SerioEntry *entry = get_entry (self, i);

      add_entry (copy, g_string_chunk_insert (copy->names, entry->name),
                 entry->values, entry->n_values, entry->owner);
    }

  return copy;
}

/* ------------------------------------------------------------------ */
/* Shapes                                                             */
/* ------------------------------------------------------------------ */

/* The shape of @entry, from its name; returns the length of its base
 * name. */
static gsize
entry_shape (const SerioEntry *entry,
             guint64           dims[SERIO_SHAPE_MAX_DIMS],
             guint            *n_dims)
{
  gsize base_len;

  _serio_shape_parse (entry->name, entry->n_values, &base_len, dims, n_dims);
  return base_len;
}

/**
 * serio_bundle_get_shape:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 * @n_dims: (out): return location for the number of dimensions
 *
 * Gets the shape of the array at @index, from its name (see
 * serio-v1-files.md §3, "Shapes").
 *
 * A name that ends in a shape suffix, such as `conv1.weight[16x3x3x3]` or
 * `bn1.num_batches_tracked[]`, gives that shape: (16, 3, 3, 3), or no
 * dimensions at all for a 0-d scalar. A suffix is a shape suffix when it
 * lists at most %SERIO_SHAPE_MAX_DIMS dimensions, each a canonical decimal
 * (`0`, or digits without a leading zero) below 2<sup>64</sup>, whose
 * product is the array's number of values. Any other name is that of a
 * one-dimensional array: its shape is its number of values.
 *
 * The values are in C (row-major) order: the last dimension varies
 * fastest.
 *
 * Returns: (array length=n_dims) (transfer full): the dimensions, a new
 *   array to free with g_free(); never %NULL, even for a 0-d array
 */
guint64 *
serio_bundle_get_shape (SerioBundle *self,
                        guint        index,
                        guint       *n_dims)
{
  guint64 dims[SERIO_SHAPE_MAX_DIMS];
  guint n;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);
  g_return_val_if_fail (n_dims != NULL, NULL);

  (void) entry_shape (get_entry (self, index), dims, &n);
  *n_dims = n;

  /* At least one element, so that a 0-d shape is not %NULL. */
  return g_memdup2 (dims, MAX (n, 1) * sizeof (guint64));
}

/**
 * serio_bundle_get_base_name:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 *
 * Gets the name of the array at @index without its shape suffix and type
 * marker: `conv1.weight` for `conv1.weight[16x3x3x3]` and for
 * `conv1.weight@float32[16x3x3x3]`. For a name without a shape suffix (see
 * [method@Serio.Bundle.get_shape]), this is the whole name, as
 * [method@Serio.Bundle.get_name] returns it; so an array has a shape
 * suffix exactly when the two differ. A marker counts only before a
 * valid shape suffix: `w@int8` without one is the base name `w@int8` of a
 * float64 array.
 *
 * Returns: (transfer full): the base name, valid UTF-8
 */
char *
serio_bundle_get_base_name (SerioBundle *self,
                            guint        index)
{
  SerioEntry *entry;
  guint64 dims[SERIO_SHAPE_MAX_DIMS];
  guint n;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);

  entry = get_entry (self, index);
  return g_strndup (entry->name, entry_shape (entry, dims, &n));
}

/* The stored name of an array of @shape, or %NULL if the shape is not one
 * of @n_values values. */
static char *
shaped_name (const char    *base_name,
             const guint64 *shape,
             guint          n_dims,
             gsize          n_values)
{
  guint64 count;

  if (!_serio_shape_count (shape, n_dims, &count) || count != n_values)
    return NULL;

  return _serio_shape_format_name (base_name, shape, n_dims);
}

/**
 * serio_bundle_append_with_shape:
 * @self: a #SerioBundle
 * @base_name: the base name of the array, valid UTF-8
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for a
 *   0-d scalar
 * @values: (array length=n_values) (nullable): the values, in C (row-major)
 *   order
 * @n_values: the number of values, which must be the product of the
 *   dimensions (1 for a 0-d scalar)
 *
 * Appends a copy of @values under @base_name followed by the shape suffix
 * of @shape: `w` with the shape (2, 3) is stored as `w[2x3]`, and with no
 * dimensions as `w[]`. The suffix is written for every shape, a
 * one-dimensional one included. [method@Serio.Bundle.get_shape] and
 * [method@Serio.Bundle.get_base_name] then give @shape and @base_name back
 * (the latter sanitized as by [method@Serio.Bundle.append]).
 *
 * A @n_values that is not the product of the dimensions is a programmer
 * error, like a @base_name that is not UTF-8: nothing is appended.
 */
void
serio_bundle_append_with_shape (SerioBundle   *self,
                                const char    *base_name,
                                const guint64 *shape,
                                guint          n_dims,
                                const double  *values,
                                gsize          n_values)
{
  g_autofree char *name = NULL;

  g_return_if_fail (SERIO_IS_BUNDLE (self));
  g_return_if_fail (base_name != NULL);
  g_return_if_fail (shape != NULL || n_dims == 0);
  g_return_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS);

  name = shaped_name (base_name, shape, n_dims, n_values);
  g_return_if_fail (name != NULL);

  serio_bundle_append (self, name, values, n_values);
}

/**
 * serio_bundle_append_bytes_with_shape:
 * @self: a #SerioBundle
 * @base_name: the base name of the array, valid UTF-8
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for a
 *   0-d scalar
 * @values: the values as native-endian 64-bit floats in C (row-major)
 *   order; its size must be 8 times the product of the dimensions
 *
 * Appends the doubles held in @values like
 * [method@Serio.Bundle.append_bytes], under @base_name followed by the
 * shape suffix of @shape, as [method@Serio.Bundle.append_with_shape] does.
 *
 * This is the fast path from NumPy: the Python override's `append_numpy()`
 * uses it for arrays of any number of dimensions.
 */
void
serio_bundle_append_bytes_with_shape (SerioBundle   *self,
                                      const char    *base_name,
                                      const guint64 *shape,
                                      guint          n_dims,
                                      GBytes        *values)
{
  g_autofree char *name = NULL;
  gsize size;

  g_return_if_fail (SERIO_IS_BUNDLE (self));
  g_return_if_fail (base_name != NULL);
  g_return_if_fail (shape != NULL || n_dims == 0);
  g_return_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS);
  g_return_if_fail (values != NULL);

  size = g_bytes_get_size (values);
  g_return_if_fail (size % sizeof (double) == 0);

  name = shaped_name (base_name, shape, n_dims, size / sizeof (double));
  g_return_if_fail (name != NULL);

  serio_bundle_append_bytes (self, name, values);
}

/**
 * serio_bundle_dup_values:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 * @n_values: (out): return location for the number of values
 *
 * Gets a copy of the values of the array at @index, which the caller owns
 * and may change without changing the bundle.
 *
 * Bindings that cannot express a read-only array use this: in Vala,
 * `bundle.get_values (i)` calls it, so that writing into the result never
 * changes the bundle, whose values never change once appended. In C,
 * [method@Serio.Bundle.get_values] gives the values without a copy.
 *
 * Returns: (array length=n_values) (transfer full): a copy of the values,
 *   to free with g_free(); never %NULL, even for an empty array
 */
double *
serio_bundle_dup_values (SerioBundle *self,
                         guint        index,
                         gsize       *n_values)
{
  const double *values = serio_bundle_get_values (self, index, n_values);

  if (values == NULL)
    return NULL;

  /* An empty array points at one double, so the copy is never NULL. */
  return g_memdup2 (values, MAX (*n_values, 1) * sizeof (double));
}

/* ------------------------------------------------------------------ */
/* Element types                                                      */
/* ------------------------------------------------------------------ */

/**
 * serio_bundle_get_dtype:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 *
 * Gets the element type of the array at @index, from the type marker of
 * its name (see #SerioDtype): %SERIO_DTYPE_FLOAT32 for
 * `conv1.weight@float32[16x3x3x3]`, %SERIO_DTYPE_FLOAT64 for a name
 * without a marker. The values of a typed array all fit its type: every
 * reader and every append checks them.
 *
 * Returns: the element type
 */
SerioDtype
serio_bundle_get_dtype (SerioBundle *self,
                        guint        index)
{
  SerioEntry *entry;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), SERIO_DTYPE_FLOAT64);
  g_return_val_if_fail (index < self->entries->len, SERIO_DTYPE_FLOAT64);

  entry = get_entry (self, index);
  return _serio_name_get_dtype (entry->name, strlen (entry->name), entry->n_values);
}

/**
 * serio_bundle_get_typed_bytes:
 * @self: a #SerioBundle
 * @index: the index of an array, below [method@Serio.Bundle.get_n_arrays]
 *
 * Gets the values of the array at @index as elements of its own type
 * ([method@Serio.Bundle.get_dtype]): host-order floats for a float32
 * array, 16-bit patterns for float16 and bfloat16, bytes 0 and 1 for
 * bool, and so on (see #SerioDtype), in C order. For a float64 array this
 * is [method@Serio.Bundle.get_bytes], without a copy; for the others the
 * bytes are a new conversion, exact since the values fit the type.
 *
 * This is the fast path to bindings: in Python,
 * `numpy.frombuffer(bundle.get_typed_bytes(i).get_data(), dtype=numpy.float32)`;
 * in GJS, `new Float32Array(bundle.get_typed_bytes(i).toArray().buffer)`.
 *
 * Returns: (transfer full): the values in the array's type
 */
GBytes *
serio_bundle_get_typed_bytes (SerioBundle *self,
                              guint        index)
{
  SerioEntry *entry;
  SerioDtype dtype;
  gsize size;
  gpointer out;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail (index < self->entries->len, NULL);

  dtype = serio_bundle_get_dtype (self, index);
  if (dtype == SERIO_DTYPE_FLOAT64)
    return serio_bundle_get_bytes (self, index);

  entry = get_entry (self, index);
  if (entry->n_values == 0)
    return g_bytes_new (NULL, 0);

  size = entry->n_values * serio_dtype_get_size (dtype);
  out = _serio_alloc_large (size);
  _serio_dtype_from_doubles (dtype, entry->values, entry->n_values, out);

  return g_bytes_new_take (out, size);
}

/**
 * serio_bundle_append_typed:
 * @self: a #SerioBundle
 * @base_name: the base name of the array, valid UTF-8
 * @dtype: the element type of @data
 * @shape: (array length=n_dims) (nullable): the dimensions
 * @n_dims: the number of dimensions, at most %SERIO_SHAPE_MAX_DIMS; 0 for a
 *   0-d scalar
 * @data: the elements of @dtype in host byte order and C order (see
 *   #SerioDtype); its size must be the size of an element
 *   ([func@Serio.Dtype.get_size]) times the product of the dimensions
 * @error: return location for a #GError
 *
 * Appends an array of @dtype under the stored name
 * [func@Serio.name_compose] gives: `w` of float32 and shape (2, 3) is
 * stored as `w@float32[2x3]`, and reads back, through every reader, as a
 * float32 array of that shape with the same bytes
 * ([method@Serio.Bundle.get_typed_bytes]). The base name is sanitized as
 * by [method@Serio.Bundle.append]. Every NaN is stored as the quiet NaN
 * of no payload, as for float64.
 *
 * The text holds each value as a 64-bit float, so an int64 or uint64
 * element that a 64-bit float cannot hold (some integers beyond
 * 2<sup>53</sup>) fails with %SERIO_ERROR_DOMAIN naming its index and
 * value, and so does a bool byte other than 0 and 1. A size of @data that
 * does not match the shape, and a float64 array whose @base_name ends in
 * a type marker (which would make its name that of a typed array), fail
 * with %G_IO_ERROR_INVALID_ARGUMENT. Nothing is appended on an error.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_bundle_append_typed (SerioBundle    *self,
                           const char     *base_name,
                           SerioDtype      dtype,
                           const guint64  *shape,
                           guint           n_dims,
                           GBytes         *data,
                           GError        **error)
{
  g_autofree char *name = NULL;
  gconstpointer bytes;
  gsize size, n_values, doubles_size, bad;
  guint64 count;
  double *values;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (base_name != NULL, FALSE);
  g_return_val_if_fail (g_utf8_validate (base_name, -1, NULL), FALSE);
  g_return_val_if_fail ((guint) dtype <= SERIO_DTYPE_LAST, FALSE);
  g_return_val_if_fail (shape != NULL || n_dims == 0, FALSE);
  g_return_val_if_fail (n_dims <= SERIO_SHAPE_MAX_DIMS, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  bytes = g_bytes_get_data (data, &size);
  name = _serio_typed_name (base_name, dtype, shape, n_dims, &count, error);
  if (name == NULL)
    return FALSE;
  if (!_serio_typed_size_matches (dtype, count, size, error))
    return FALSE;
  /* As for the float64 appends: the doubles' size must not wrap. */
  g_return_val_if_fail (count <= G_MAXSIZE / sizeof (double), FALSE);

  n_values = (gsize) count;
  doubles_size = n_values * sizeof (double);
  values = n_values > 0 ? _serio_alloc_large (doubles_size) : NULL;
  if (!_serio_dtype_to_doubles (dtype, bytes, n_values, values, &bad))
    {
      _serio_dtype_set_element_error (error, dtype, bytes, bad);
      g_free (values);
      return FALSE;
    }

  append_values (self, name, g_bytes_new_take (values, doubles_size));
  return TRUE;
}
