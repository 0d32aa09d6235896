#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The serio tool's messages, and the library's through it, in one locale.

Usage: test_i18n_cli.py SERIO PRELOAD LOCALE

Runs the tool as built under LC_ALL=LOCALE (C, C.UTF-8, de_DE.UTF-8 or
fr_FR.UTF-8) and compares whole messages with their expected text in that
language: placeholders in the right places, plurals (with 0, 1 and more),
French typography, numbers written the same under every locale. PRELOAD
(serio-i18n-preload.so, in LD_PRELOAD) sends the tool's and the library's
bindings of the serio-1.0 domain to the catalogues built in the build tree.

Exits 77 (skipped) when LOCALE is not installed.
"""

import locale
import os
import struct
import subprocess
import sys
import tempfile
import unittest

SERIO, PRELOAD, LOCALE = sys.argv[1:4]
del sys.argv[1:4]

LANGUAGE = {'C': 'en', 'C.UTF-8': 'en', 'de_DE.UTF-8': 'de', 'fr_FR.UTF-8': 'fr'}[LOCALE]
NB = '\u00a0'   # French: before two-part punctuation and inside « »


def fnv1a_folded(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return (h >> 32) ^ (h & 0xffffffff)


def npy(shape, raw_values):
    """A version 1.0 .npy file of little-endian float64, from raw bytes."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ', '.join(map(str, shape))
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + raw_values


def f64(*values):
    return struct.pack('<%dd' % len(values), *values)


USAGE = {
    'en': ('Usage:\n'
           '  serio COMMAND [OPTION…] [ARGUMENT…]\n'
           '\n'
           'Commands:\n'
           '  cat        Print the values of arrays, one per line\n'
           '  check      Check that files are valid serio files\n'
           '  checksum   Print the checksums of files\n'
           '  convert    Convert between serio and .npy, .npz and .safetensors files\n'
           '  diff       Compare two serio files bit for bit\n'
           '  info       Describe the arrays in serio files\n'
           '  seal       Add a seal to plain serio files, in place\n'
           '  help       Show the help of a command\n'
           '\n'
           'Use “serio COMMAND --help” to get help on each command.\n'
           'Use “serio --version” to print the version.\n'),
    'de': ('Aufruf:\n'
           '  serio BEFEHL [OPTION …] [ARGUMENT …]\n'
           '\n'
           'Befehle:\n'
           '  cat        Die Werte von Arrays zeilenweise ausgeben\n'
           '  check      Prüfen, ob Dateien gültige serio-Dateien sind\n'
           '  checksum   Die Prüfsummen von Dateien ausgeben\n'
           '  convert    Zwischen serio- und .npy-, .npz- und .safetensors-Dateien umwandeln\n'
           '  diff       Zwei serio-Dateien Bit für Bit vergleichen\n'
           '  info       Die Arrays in serio-Dateien beschreiben\n'
           '  seal       serio-Dateien ohne Siegel an Ort und Stelle versiegeln\n'
           '  help       Die Hilfe zu einem Befehl anzeigen\n'
           '\n'
           '»serio BEFEHL --help« zeigt die Hilfe zu jedem Befehl an.\n'
           '»serio --version« gibt die Version aus.\n'),
    'fr': (f'Utilisation{NB}:\n'
           '  serio COMMANDE [OPTION…] [ARGUMENT…]\n'
           '\n'
           f'Commandes{NB}:\n'
           '  cat        Afficher les valeurs de tableaux, une par ligne\n'
           '  check      Vérifier que des fichiers sont des fichiers serio valides\n'
           '  checksum   Afficher les sommes de contrôle de fichiers\n'
           '  convert    Convertir entre fichiers serio et fichiers .npy, .npz et .safetensors\n'
           '  diff       Comparer deux fichiers serio bit pour bit\n'
           '  info       Décrire les tableaux de fichiers serio\n'
           '  seal       Ajouter un sceau à des fichiers serio sans sceau, sur place\n'
           '  help       Afficher l’aide d’une commande\n'
           '\n'
           f'Utilisez «{NB}serio COMMANDE --help{NB}» pour obtenir l’aide de chaque commande.\n'
           f'Utilisez «{NB}serio --version{NB}» pour afficher la version.\n'),
}


class TranslationTests(unittest.TestCase):

    maxDiff = None

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-i18n-')
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def write(self, name, data):
        with open(os.path.join(self.dir, name), 'wb') as f:
            f.write(data)

    def expect(self, texts):
        """The text for the language under test, as the tool prints it: GLib
        writes in the locale's character set, so the C locale gets "?" for
        what ASCII lacks."""
        text = texts[LANGUAGE]
        if LOCALE == 'C':
            text = ''.join(c if ord(c) < 128 else '?' for c in text)
        return text

    def run_serio(self, *args, status):
        env = dict(os.environ)
        env.pop('LANGUAGE', None)   # it would override LC_ALL for messages
        env['LC_ALL'] = LOCALE
        # Joined with ":": under valgrind, that is how the wrapper's own entries
        # are taken out of a child's LD_PRELOAD.
        env['LD_PRELOAD'] = ':'.join(filter(None, [env.get('LD_PRELOAD'), PRELOAD]))
        # In a sanitizer build, the runtime no longer comes first.
        env['ASAN_OPTIONS'] = ':'.join(filter(None, [env.get('ASAN_OPTIONS'), 'verify_asan_link_order=0']))
        proc = subprocess.run([SERIO, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=self.dir, env=env, timeout=60)
        self.assertEqual(proc.returncode, status,
                         'serio %r: exit %d, stderr %r' % (args, proc.returncode, proc.stderr))
        return proc.stdout.decode('utf-8'), proc.stderr.decode('utf-8')

    # The library's messages, through the tool.

    def test_parse_error_one_value(self):
        self.write('one.serio', b'v1|w|2|5\n')
        out, err = self.run_serio('check', 'one.serio', status=1)
        self.assertEqual(out, '')
        self.assertEqual(err, self.expect({
            'en': 'one.serio:1: the count is 2 but the record holds 1 value\n',
            'de': 'one.serio:1: Die angegebene Anzahl ist 2, aber der Datensatz enthält 1 Wert\n',
            'fr': 'one.serio:1: le nombre de valeurs annoncé est 2, mais '
                  'l’enregistrement contient 1 valeur\n',
        }))

    def test_parse_error_two_values(self):
        self.write('two.serio', b'v1|a|0|\nv1|w|3|1,2\n')
        out, err = self.run_serio('check', 'two.serio', status=1)
        self.assertEqual(err, self.expect({
            'en': 'two.serio:2: the count is 3 but the record holds 2 values\n',
            'de': 'two.serio:2: Die angegebene Anzahl ist 3, aber der Datensatz enthält 2 Werte\n',
            'fr': 'two.serio:2: le nombre de valeurs annoncé est 3, mais '
                  'l’enregistrement contient 2 valeurs\n',
        }))

    def test_parse_error_value(self):
        self.write('token.serio', b'v1|a|1|1\nv1|b|3|1,2,0x\n')
        out, err = self.run_serio('check', 'token.serio', status=1)
        self.assertEqual(err, self.expect({
            'en': 'token.serio:2: value 3 “0x”: a number must not start with a leading zero\n',
            'de': 'token.serio:2: Wert 3 »0x«: Eine Zahl darf nicht mit einer führenden '
                  'Null beginnen\n',
            'fr': f'token.serio:2: valeur 3 «{NB}0x{NB}»{NB}: un nombre ne doit pas '
                  'commencer par un zéro non significatif\n',
        }))

    # The tool's own messages.

    def test_usage_error(self):
        out, err = self.run_serio('check', status=2)
        self.assertEqual(err, self.expect({
            'en': 'serio check: no file given\n'
                  'Try “serio check --help” for more information.\n',
            'de': 'serio check: Keine Datei angegeben\n'
                  '»serio check --help« liefert weitere Informationen.\n',
            'fr': f'serio check{NB}: aucun fichier indiqué\n'
                  f'Saisissez «{NB}serio check --help{NB}» pour plus d’informations.\n',
        }))

    def test_unknown_command(self):
        out, err = self.run_serio('frobnicate', status=2)
        self.assertEqual(out, '')
        self.assertEqual(err, self.expect({
            'en': 'serio: unknown command “frobnicate”\n\n' + USAGE['en'],
            'de': 'serio: Unbekannter Befehl »frobnicate«\n\n' + USAGE['de'],
            'fr': f'serio{NB}: commande inconnue «{NB}frobnicate{NB}»\n\n' + USAGE['fr'],
        }))

    def test_help(self):
        out, err = self.run_serio('--help', status=0)
        self.assertEqual(out, self.expect(USAGE))
        self.assertEqual(err, '')

    def test_convert_help_names_safetensors(self):
        # The opening and the .safetensors paragraph of the convert help, as
        # translated: the catalogues follow the help when it changes.
        out, err = self.run_serio('convert', '--help', status=0)
        self.assertEqual(err, '')
        self.assertIn(self.expect({
            'en': '\nConvert NumPy .npy and .npz files and Hugging Face .safetensors files\n'
                  'to serio files, and serio files to them, bit for bit (but a bundle\n',
            'de': '\nNumPy-.npy- und -.npz-Dateien und Hugging-Face-.safetensors-Dateien in\n'
                  'serio-Dateien umwandeln und serio-Dateien in solche, Bit für Bit (nur\n',
            'fr': '\nConvertir des fichiers NumPy .npy et .npz et des fichiers Hugging Face\n'
                  '.safetensors en fichiers serio, et des fichiers serio en ces formats,\n',
        }), out)
        self.assertIn(self.expect({
            'en': 'C64 are refused); each key of “__metadata__” as a record\n'
                  '“serio.metadata.KEY” of the value\'s UTF-8 bytes, and back. The header\n',
            'de': 'Schlüssel von »__metadata__« als Datensatz »serio.metadata.SCHLÜSSEL«\n'
                  'aus den UTF-8-Bytes des Werts, und zurück. Der Kopf wird streng\n',
            'fr': f'de «{NB}__metadata__{NB}» en enregistrement «{NB}serio.metadata.CLÉ{NB}» des octets\n'
                  f'UTF-8 de la valeur, et inversement. L’en-tête est lu strictement{NB}: ce\n',
        }), out)

    def test_command_help(self):
        # GOption lays out the help and translates its own words from GLib's
        # catalogue, which may not be installed: only ours are compared.
        out, err = self.run_serio('cat', '--help', status=0)
        lines = out.split('\n')
        self.assertTrue(lines[1].startswith('  serio cat '), lines[1])
        self.assertTrue(lines[1].endswith(self.expect({'en': ' FILE', 'de': ' DATEI', 'fr': ' FICHIER'})),
                        lines[1])
        self.assertIn(self.expect({
            'en': '\nPrint the values of the arrays in a serio file, one per line, as the\n'
                  'shortest decimals that read back to the same bits (or nan, inf, -inf,\n'
                  '-0), the same under every locale. Each array starts with a line\n'
                  '“# NAME (N values)”. “-” stands for the standard input.\n'
                  '\n'
                  'Given one array NAME, only its values are printed, without the header\n'
                  'line; given several, the arrays are printed in the order given, each\n'
                  'with its header line.\n',
            'de': '\nDie Werte der Arrays einer serio-Datei zeilenweise ausgeben, als\n'
                  'kürzeste Dezimalzahlen, die wieder dieselben Bits ergeben (oder nan,\n'
                  'inf, -inf, -0), unabhängig von den Spracheinstellungen. Jedes Array\n'
                  'beginnt mit einer Zeile »# NAME (N values)«. »-« steht für die\n'
                  'Standardeingabe.\n'
                  '\n'
                  'Ist ein Array NAME angegeben, werden nur seine Werte ausgegeben, ohne\n'
                  'Kopfzeile; sind mehrere angegeben, werden die Arrays in der angegebenen\n'
                  'Reihenfolge ausgegeben, jedes mit seiner Kopfzeile.\n',
            'fr': '\nAfficher les valeurs des tableaux d’un fichier serio, une par ligne,\n'
                  'sous la forme des plus courts nombres décimaux qui redonnent les mêmes\n'
                  'bits (ou nan, inf, -inf, -0), à l’identique quels que soient les\n'
                  'paramètres régionaux. Chaque tableau commence par une ligne\n'
                  f'«{NB}# NOM (N values){NB}». «{NB}-{NB}» désigne l’entrée standard.\n'
                  '\n'
                  'Avec un seul tableau NOM, seules ses valeurs sont affichées, sans ligne\n'
                  f'd’en-tête{NB}; avec plusieurs, les tableaux sont affichés dans l’ordre\n'
                  'indiqué, chacun avec sa ligne d’en-tête.\n',
        }), out)
        option = {
            'en': ('--name=NAME', 'Print only the first array called NAME (may be repeated)'),
            'de': ('--name=NAME', 'Nur das erste Array namens NAME ausgeben (kann wiederholt werden)'),
            'fr': ('--name=NOM', 'Afficher uniquement le premier tableau nommé NOM (peut être répété)'),
        }[LANGUAGE]
        option_lines = [line.split() for line in lines if '--name' in line]
        self.assertEqual(option_lines, [['-n,', option[0]] + option[1].split()])
        self.assertTrue(out.endswith(self.expect({
            'en': '\nExit status: 0 on success, 1 if the file is not valid or has no array\n'
                  'NAME, 2 on a usage or input/output error.\n',
            'de': '\nRückgabewert: 0 bei Erfolg, 1, wenn die Datei ungültig ist oder kein Array\n'
                  'NAME enthält, 2 bei einem Aufruf- oder Ein-/Ausgabefehler.\n',
            'fr': f'\nCode de retour{NB}: 0 en cas de succès, 1 si le fichier n’est pas valide ou ne\n'
                  'contient aucun tableau NOM, 2 en cas d’erreur d’utilisation ou\n'
                  'd’entrée-sortie.\n',
        })), out)

    def test_info(self):
        data = b'v1|a|1|1p-1\nv1|b|2|1,inf\nv1|e|0|\nv1|n|1|nan\n'
        single = b'v1|a|1|1p-1\n'
        self.write('data.serio', data)
        self.write('single.serio', single)
        out, err = self.run_serio('info', 'data.serio', 'single.serio', status=0)
        sums = (fnv1a_folded(data), fnv1a_folded(single))
        # The numbers are written the same under every locale.
        self.assertEqual(out, self.expect({
            'en': 'data.serio: 4 arrays, checksum %08x, plain (no seal)\n'
                  '  [0] a float64: 1 value; min 0.5, max 0.5; NaN: 0, infinite: 0\n'
                  '  [1] b float64: 2 values; min 1, max inf; NaN: 0, infinite: 1\n'
                  '  [2] e float64: 0 values; NaN: 0\n'
                  '  [3] n float64: 1 value; NaN: 1\n'
                  'single.serio: 1 array, checksum %08x, plain (no seal)\n'
                  '  [0] a float64: 1 value; min 0.5, max 0.5; NaN: 0, infinite: 0\n' % sums,
            'de': 'data.serio: 4 Arrays, Prüfsumme %08x, ohne Siegel\n'
                  '  [0] a float64: 1 Wert; Min. 0.5, Max. 0.5; NaN: 0, unendlich: 0\n'
                  '  [1] b float64: 2 Werte; Min. 1, Max. inf; NaN: 0, unendlich: 1\n'
                  '  [2] e float64: 0 Werte; NaN: 0\n'
                  '  [3] n float64: 1 Wert; NaN: 1\n'
                  'single.serio: 1 Array, Prüfsumme %08x, ohne Siegel\n'
                  '  [0] a float64: 1 Wert; Min. 0.5, Max. 0.5; NaN: 0, unendlich: 0\n' % sums,
            'fr': (f'data.serio{NB}: 4 tableaux, somme de contrôle %08x, sans sceau\n'
                   f'  [0] a float64{NB}: 1 valeur{NB}; min 0.5, max 0.5{NB}; NaN{NB}: 0, infinies{NB}: 0\n'
                   f'  [1] b float64{NB}: 2 valeurs{NB}; min 1, max inf{NB}; NaN{NB}: 0, infinies{NB}: 1\n'
                   f'  [2] e float64{NB}: 0 valeur{NB}; NaN{NB}: 0\n'
                   f'  [3] n float64{NB}: 1 valeur{NB}; NaN{NB}: 1\n'
                   f'single.serio{NB}: 1 tableau, somme de contrôle %08x, sans sceau\n'
                   f'  [0] a float64{NB}: 1 valeur{NB}; min 0.5, max 0.5{NB}; NaN{NB}: 0, infinies{NB}: 0\n') % sums,
        }))

    def test_diff(self):
        self.write('a.serio', b'v1|w|3|1,2,3\nv1|x|3|1,2,3\nv1|z|2|1,2\nv1|v|2|1,2\nv1|y|1|1\n')
        # 6755399441055745p-51 is the double after 3.
        self.write('b.serio', b'v1|w|3|1,2,6755399441055745p-51\nv1|x|3|5,6,7\nv1|z|2|3,4\nv1|v|3|1,2,9\n')
        out, err = self.run_serio('diff', '--max-values', '1', 'a.serio', 'b.serio', status=1)
        # The values of "x" and "z" are all integers: their distances are in
        # units; those of "w" are not: in ULPs of the narrowest precision.
        self.assertEqual(out, self.expect({
            'en': '“w”: 1 of 3 values differs\n'
                  '  max absolute difference 4.440892098500626e-16, relative 1.480297366166875e-16, '
                  'distance 1 ULP (float64)\n'
                  '  [2] 3 → 3.0000000000000004 (1 ULP)\n'
                  '“x”: 3 of 3 values differ\n'
                  '  max absolute difference 4, relative 0.8, distance 4 units (integer)\n'
                  '  [0] 1 → 5 (4 units)\n'
                  '  … and 2 more\n'
                  '“z”: 2 of 2 values differ\n'
                  '  max absolute difference 2, relative 0.6666666666666666, distance 2 units (integer)\n'
                  '  [0] 1 → 3 (2 units)\n'
                  '  … and 1 more\n'
                  '“v”: length 2 in a.serio, 3 in b.serio\n'
                  'Only in a.serio: array 4 “y”\n',
            'de': '»w«: 1 von 3 Werten unterscheidet sich\n'
                  '  Größte absolute Abweichung 4.440892098500626e-16, relative 1.480297366166875e-16, '
                  'Abstand 1 ULP (float64)\n'
                  '  [2] 3 → 3.0000000000000004 (1 ULP)\n'
                  '»x«: 3 von 3 Werten unterscheiden sich\n'
                  '  Größte absolute Abweichung 4, relative 0.8, Abstand 4 Einheiten (ganzzahlig)\n'
                  '  [0] 1 → 5 (4 Einheiten)\n'
                  '  … und 2 weitere\n'
                  '»z«: 2 von 2 Werten unterscheiden sich\n'
                  '  Größte absolute Abweichung 2, relative 0.6666666666666666, '
                  'Abstand 2 Einheiten (ganzzahlig)\n'
                  '  [0] 1 → 3 (2 Einheiten)\n'
                  '  … und 1 weiterer\n'
                  '»v«: Länge 2 in a.serio, 3 in b.serio\n'
                  'Nur in a.serio: Array 4 »y«\n',
            'fr': f'«{NB}w{NB}»{NB}: 1 valeur sur 3 diffère\n'
                  '  écart absolu maximal 4.440892098500626e-16, relatif 1.480297366166875e-16, '
                  'distance 1 ULP (float64)\n'
                  '  [2] 3 → 3.0000000000000004 (1 ULP)\n'
                  f'«{NB}x{NB}»{NB}: 3 valeurs sur 3 diffèrent\n'
                  '  écart absolu maximal 4, relatif 0.8, distance 4 unités (entier)\n'
                  '  [0] 1 → 5 (4 unités)\n'
                  '  … et 2 autres\n'
                  f'«{NB}z{NB}»{NB}: 2 valeurs sur 2 diffèrent\n'
                  '  écart absolu maximal 2, relatif 0.6666666666666666, distance 2 unités (entier)\n'
                  '  [0] 1 → 3 (2 unités)\n'
                  '  … et 1 autre\n'
                  f'«{NB}v{NB}»{NB}: longueur 2 dans a.serio, 3 dans b.serio\n'
                  f'Seulement dans a.serio{NB}: tableau 4 «{NB}y{NB}»\n',
        }))

    def test_seal_check(self):
        self.write('plain.serio', b'v1|a|1|1p-1\n')
        self.write('sealed.serio', b'v1|a|1|1p-1\n')
        out, err = self.run_serio('seal', 'sealed.serio', status=0)
        self.assertEqual((out, err), (self.expect({
            'en': 'sealed.serio: sealed\n',
            'de': 'sealed.serio: Versiegelt\n',
            'fr': f'sealed.serio{NB}: scellé\n',
        }), ''))
        out, err = self.run_serio('seal', 'sealed.serio', status=0)
        self.assertEqual((out, err), (self.expect({
            'en': 'sealed.serio: already sealed, left as it is\n',
            'de': 'sealed.serio: Bereits versiegelt, unverändert gelassen\n',
            'fr': f'sealed.serio{NB}: déjà scellé, laissé tel quel\n',
        }), ''))
        out, err = self.run_serio('check', 'plain.serio', 'sealed.serio', status=0)
        self.assertEqual((out, err), (self.expect({
            'en': 'plain.serio: plain, without a seal: valid, but it cannot be verified\n'
                  'sealed.serio: sealed, verified\n',
            'de': 'plain.serio: Ohne Siegel: gültig, aber nicht überprüfbar\n'
                  'sealed.serio: Versiegelt, überprüft\n',
            'fr': f'plain.serio{NB}: sans sceau{NB}: valide, mais il ne peut pas être vérifié\n'
                  f'sealed.serio{NB}: scellé, vérifié\n',
        }), ''))
        out, err = self.run_serio('check', '--require-seal', 'plain.serio', 'sealed.serio', status=1)
        # The error goes to the standard error, the verified file to the output.
        self.assertEqual(err, self.expect({
            'en': 'plain.serio: not sealed, so it cannot be verified (--require-seal)\n',
            'de': 'plain.serio: Nicht versiegelt und daher nicht überprüfbar (--require-seal)\n',
            'fr': f'plain.serio{NB}: non scellé, il ne peut donc pas être vérifié (--require-seal)\n',
        }))
        self.assertEqual(out, self.expect({
            'en': 'sealed.serio: sealed, verified\n',
            'de': 'sealed.serio: Versiegelt, überprüft\n',
            'fr': f'sealed.serio{NB}: scellé, vérifié\n',
        }))
        with open(os.path.join(self.dir, 'sealed.serio'), 'rb') as f:
            checksum = fnv1a_folded(f.read())
        out, err = self.run_serio('info', 'sealed.serio', status=0)
        self.assertEqual(out, self.expect({
            'en': 'sealed.serio: 1 array, checksum %08x, sealed (verified)\n'
                  '  [0] a float64: 1 value; min 0.5, max 0.5; NaN: 0, infinite: 0\n' % checksum,
            'de': 'sealed.serio: 1 Array, Prüfsumme %08x, versiegelt (überprüft)\n'
                  '  [0] a float64: 1 Wert; Min. 0.5, Max. 0.5; NaN: 0, unendlich: 0\n' % checksum,
            'fr': (f'sealed.serio{NB}: 1 tableau, somme de contrôle %08x, scellé (vérifié)\n'
                   f'  [0] a float64{NB}: 1 valeur{NB}; min 0.5, max 0.5{NB}; NaN{NB}: 0, infinies{NB}: 0\n') % checksum,
        }))

    def test_diff_tolerance(self):
        self.write('a.serio', b'v1|x|2|1,2\n')
        self.write('b.serio', b'v1|x|2|1,5\n')
        out, err = self.run_serio('diff', '--atol', 'x', 'a.serio', 'b.serio', status=2)
        self.assertEqual(err, self.expect({
            'en': 'serio diff: --atol must be a number, zero or above, such as 1e-5, not “x”\n'
                  'Try “serio diff --help” for more information.\n',
            'de': 'serio diff: --atol muss eine Zahl größer oder gleich null sein, etwa 1e-5, '
                  'nicht »x«\n'
                  '»serio diff --help« liefert weitere Informationen.\n',
            'fr': f'serio diff{NB}: --atol doit être un nombre positif ou nul, comme 1e-5, '
                  f'pas «{NB}x{NB}»\n'
                  f'Saisissez «{NB}serio diff --help{NB}» pour plus d’informations.\n',
        }))
        out, err = self.run_serio('diff', '--atol', '10', 'a.serio', 'b.serio', status=0)
        self.assertEqual(out, self.expect({
            'en': '“x”: 1 of 2 values differs\n'
                  '  max absolute difference 3, relative 0.6, distance 3 units (integer)\n'
                  '  all within the tolerance\n',
            'de': '»x«: 1 von 2 Werten unterscheidet sich\n'
                  '  Größte absolute Abweichung 3, relative 0.6, Abstand 3 Einheiten (ganzzahlig)\n'
                  '  Alle innerhalb der Toleranz\n',
            'fr': f'«{NB}x{NB}»{NB}: 1 valeur sur 2 diffère\n'
                  '  écart absolu maximal 3, relatif 0.6, distance 3 unités (entier)\n'
                  '  tous dans la tolérance\n',
        }))

    def test_convert_notes(self):
        negative_nan = struct.pack('<Q', 0xFFF8000000000000)
        payload_nan = struct.pack('<Q', 0x7FF8000000000001)
        self.write('m.npy', npy((2, 3), f64(1, 2, 3, 4) + negative_nan + payload_nan))
        self.write('one.npy', npy((1, 1), negative_nan))
        out, err = self.run_serio('convert', 'm.npy', 'm.serio', status=0)
        self.assertEqual(err, self.expect({
            'en': 'm.npy: note: 2 NaNs with a sign or payload are stored as the default NaN\n',
            'de': 'm.npy: Hinweis: 2 NaNs mit Vorzeichen oder Nutzdaten werden als Standard-NaN '
                  'gespeichert\n',
            'fr': f'm.npy{NB}: remarque{NB}: 2 NaN avec un signe ou une charge utile sont '
                  'enregistrés comme le NaN par défaut\n',
        }))
        out, err = self.run_serio('convert', 'one.npy', 'one.serio', status=0)
        self.assertEqual(err, self.expect({
            'en': 'one.npy: note: 1 NaN with a sign or payload is stored as the default NaN\n',
            'de': 'one.npy: Hinweis: 1 NaN mit Vorzeichen oder Nutzdaten wird als Standard-NaN '
                  'gespeichert\n',
            'fr': f'one.npy{NB}: remarque{NB}: 1 NaN avec un signe ou une charge utile est '
                  'enregistré comme le NaN par défaut\n',
        }))

    def test_convert_choose_array(self):
        self.write('two.serio', b'v1|a|0|\nv1|b|0|\n')
        out, err = self.run_serio('convert', 'two.serio', 'out.npy', status=1)
        self.assertEqual(err, self.expect({
            'en': 'serio convert: two.serio holds 2 arrays: choose one with --name\n',
            'de': 'serio convert: two.serio enthält 2 Arrays: Eines muss mit --name gewählt werden\n',
            'fr': f'serio convert{NB}: two.serio contient 2 tableaux{NB}: choisissez-en un avec --name\n',
        }))
        self.assertFalse(os.path.exists(os.path.join(self.dir, 'out.npy')))


def locale_installed(name):
    try:
        locale.setlocale(locale.LC_ALL, name)
    except locale.Error:
        return False
    locale.setlocale(locale.LC_ALL, 'C')
    return True


if __name__ == '__main__':
    if not locale_installed(LOCALE):
        print('locale %s is not installed: skipped' % LOCALE)
        sys.exit(77)
    unittest.main(verbosity=2)
