/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-i18n-library.c: the library's messages in English, German and French
 *
 * Copyright 2026 The libserio authors
 *
 * The library binds its gettext domain to LOCALEDIR, which holds the
 * catalogues only once they are installed. These tests let the library make
 * its binding first (it does so once, by the time it first reads), then bind
 * the domain again to the catalogues built in the build tree: the later
 * binding wins. The binding itself is checked on its own, in a fresh
 * process. The locale is set per test with setlocale(), as an application
 * would; a locale that is not installed makes its test skip.
 */

#include "config.h"

#include <libintl.h>
#include <locale.h>

#include <serio.h>

/* French puts a no-break space before two-part punctuation and inside
 * guillemets. */
#define NBSP "\u00a0"

typedef struct
{
  const char *text;
  int         code;   /* a SerioError */
  const char *english;
  const char *german;
  const char *french;
} MessageCase;

/* Each placeholder and plural of the catalogue's library messages, with
 * line and value numbers that differ, so that a swapped placeholder shows. */
static const MessageCase message_cases[] = {
  /* Plural: one value (and "1" is singular in both languages). */
  {
    "v1|w|2|5\n", SERIO_ERROR_LENGTH,
    "Line 1: the count is 2 but the record holds 1 value",
    "Zeile 1: Die angegebene Anzahl ist 2, aber der Datensatz enthält 1 Wert",
    "Ligne 1" NBSP ": le nombre de valeurs annoncé est 2, mais l’enregistrement contient 1 valeur",
  },
  /* Plural: two values, on line 2. */
  {
    "v1|a|0|\nv1|w|3|1,2\n", SERIO_ERROR_LENGTH,
    "Line 2: the count is 3 but the record holds 2 values",
    "Zeile 2: Die angegebene Anzahl ist 3, aber der Datensatz enthält 2 Werte",
    "Ligne 2" NBSP ": le nombre de valeurs annoncé est 3, mais l’enregistrement contient 2 valeurs",
  },
  /* Plural: zero is plural in English and German, singular in French. */
  {
    "v1|w|1|\n", SERIO_ERROR_LENGTH,
    "Line 1: the count is 1 but the record holds 0 values",
    "Zeile 1: Die angegebene Anzahl ist 1, aber der Datensatz enthält 0 Werte",
    "Ligne 1" NBSP ": le nombre de valeurs annoncé est 1, mais l’enregistrement contient 0 valeur",
  },
  /* A value: line, index and text, and the reason translated apart. */
  {
    "v1|a|1|1\nv1|b|3|1,2,0x\n", SERIO_ERROR_SYNTAX,
    "Line 2, value 3 “0x”: a number must not start with a leading zero",
    "Zeile 2, Wert 3 »0x«: Eine Zahl darf nicht mit einer führenden Null beginnen",
    "Ligne 2, valeur 3 «" NBSP "0x" NBSP "»" NBSP ": un nombre ne doit pas commencer par un zéro non significatif",
  },
  {
    "v1|a|1|1p1024\n", SERIO_ERROR_DOMAIN,
    "Line 1, value 1 “1p1024”: the value is out of the range of a 64-bit float",
    "Zeile 1, Wert 1 »1p1024«: Der Wert liegt außerhalb des Bereichs einer 64-Bit-Gleitkommazahl",
    "Ligne 1, valeur 1 «" NBSP "1p1024" NBSP "»" NBSP ": la valeur est hors de l’intervalle d’un flottant 64 bits",
  },
  {
    "v1|a|0|\nv1|b|0|\nv2|c|0|\n", SERIO_ERROR_VERSION,
    "Line 3: unsupported format version “v2” (this library reads “v1”)",
    "Zeile 3: Nicht unterstützte Formatversion »v2« (diese Bibliothek liest »v1«)",
    "Ligne 3" NBSP ": version de format «" NBSP "v2" NBSP "» non prise en charge (cette bibliothèque lit «" NBSP "v1" NBSP "»)",
  },
  {
    "v1|a|1|1\nv1|b|1|2", SERIO_ERROR_TRUNCATED,
    "Line 2: the input does not end with a line feed; it may have been cut short",
    "Zeile 2: Die Eingabe endet nicht mit einem Zeilenvorschub; sie wurde möglicherweise abgeschnitten",
    "Ligne 2" NBSP ": l’entrée ne se termine pas par un saut de ligne" NBSP "; elle a peut-être été tronquée",
  },
};

typedef enum
{
  LANGUAGE_ENGLISH,
  LANGUAGE_GERMAN,
  LANGUAGE_FRENCH,
} Language;

typedef struct
{
  const char *locale;
  Language    language;
} LocaleCase;

static const LocaleCase locale_cases[] = {
  { "C", LANGUAGE_ENGLISH },
  { "C.UTF-8", LANGUAGE_ENGLISH },
  { "de_DE.UTF-8", LANGUAGE_GERMAN },
  { "fr_FR.UTF-8", LANGUAGE_FRENCH },
};

static const char *
expected_message (const MessageCase *message,
                  Language           language)
{
  switch (language)
    {
    case LANGUAGE_ENGLISH:
      return message->english;
    case LANGUAGE_GERMAN:
      return message->german;
    case LANGUAGE_FRENCH:
      return message->french;
    default:
      g_assert_not_reached ();
    }
}

/* The library binds its domain once, by the time it first reads; after
 * that, the catalogues built in the build tree take over. */
static void
use_built_catalogues (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string ("v1|a|0|\n", NULL);

  g_assert_nonnull (bundle);
  g_assert_nonnull (bindtextdomain (GETTEXT_PACKAGE, SERIO_TEST_LOCALEDIR));
}

static void
test_binding (void)
{
  g_test_summary ("Using the library binds its domain to LOCALEDIR, with UTF-8 "
                  "messages, and leaves the locale and the default domain alone");

  if (g_test_subprocess ())
    {
      g_autofree char *locale_before = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = NULL;

      /* As an application sets itself up. */
      g_assert_nonnull (setlocale (LC_ALL, "C.UTF-8"));
      g_assert_cmpstr (textdomain ("serio-test-application"), ==, "serio-test-application");
      locale_before = g_strdup (setlocale (LC_ALL, NULL));

      bundle = serio_bundle_new_from_string ("v1|w|2|5\n", &error);
      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);

      g_assert_cmpstr (bindtextdomain (GETTEXT_PACKAGE, NULL), ==, LOCALEDIR);
#ifdef HAVE_BIND_TEXTDOMAIN_CODESET
      g_assert_cmpstr (bind_textdomain_codeset (GETTEXT_PACKAGE, NULL), ==, "UTF-8");
#endif
      g_assert_cmpstr (textdomain (NULL), ==, "serio-test-application");
      g_assert_cmpstr (setlocale (LC_ALL, NULL), ==, locale_before);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_messages (gconstpointer data)
{
  const LocaleCase *locale_case = data;

  if (setlocale (LC_ALL, locale_case->locale) == NULL)
    {
      g_autofree char *reason = g_strdup_printf ("locale %s is not installed", locale_case->locale);

      g_test_skip (reason);
      return;
    }

  use_built_catalogues ();

  for (gsize i = 0; i < G_N_ELEMENTS (message_cases); i++)
    {
      const MessageCase *message = &message_cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (message->text, &error);

      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, message->code);
      g_assert_cmpstr (error->message, ==, expected_message (message, locale_case->language));
    }

  /* Reading changes neither the locale nor the default domain. */
  g_assert_cmpstr (setlocale (LC_MESSAGES, NULL), ==, locale_case->locale);
  g_assert_cmpstr (textdomain (NULL), ==, "messages");

  setlocale (LC_ALL, "C");
}

int
main (int    argc,
      char **argv)
{
  /* LANGUAGE would take precedence over the locale under test. */
  g_unsetenv ("LANGUAGE");

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/library/binding", test_binding);
  for (gsize i = 0; i < G_N_ELEMENTS (locale_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/library/messages/%s", locale_cases[i].locale);

      g_test_add_data_func (path, &locale_cases[i], test_messages);
    }

  return g_test_run ();
}
