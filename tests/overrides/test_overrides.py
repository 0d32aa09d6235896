# SPDX-License-Identifier: LGPL-2.1-or-later
"""The PyGObject overrides of Serio.Bundle without NumPy: the mapping
protocol (len, in, [], iteration over names, keys/items/values/get),
to_dict/from_dict, repr, the identity semantics of == and bool, IndexError
for indexes out of range, paths and bytes-like arguments, and the
ImportError of the NumPy methods when NumPy is missing.

meson runs this with PYTHONPATH on the build-tree copy of the override and
SERIO_TEST_OVERRIDE naming that copy.
"""

import collections.abc
import gc
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import gi

from overrides_common import (Serio, SPECIAL_BITS, canonical, load_patterns,
                              to_bits, to_floats)
from gi.repository import Gio, GLib  # noqa: E402


def bundle_of(*arrays):
    """A bundle built with the C API only, from (name, values) pairs."""
    bundle = Serio.Bundle.new()
    for name, values in arrays:
        bundle.append(name, values)
    return bundle


class TestOverrideLoaded(unittest.TestCase):

    def test_module_is_the_build_tree_copy(self):
        module = sys.modules['gi.overrides.Serio']
        self.assertEqual(os.path.realpath(module.__file__),
                         os.path.realpath(os.environ['SERIO_TEST_OVERRIDE']))

    def test_bundle_is_overridden(self):
        self.assertEqual(Serio.Bundle.__module__, 'gi.overrides.Serio')
        for attr in ('to_dict', 'from_dict', 'to_numpy', 'append_numpy',
                     'items', 'values', 'get', 'n_arrays'):
            self.assertTrue(hasattr(Serio.Bundle, attr), attr)
        # The ML helpers moved to the serio package (import serio).
        for function in ('save', 'load', 'iter_arrays', 'save_torch', 'load_torch',
                         'save_estimator', 'load_estimator', 'DTYPES_NAME'):
            self.assertFalse(hasattr(Serio, function), function)

    def test_constructors_return_the_override(self):
        self.assertIs(type(Serio.Bundle.new()), Serio.Bundle)
        self.assertIs(type(Serio.Bundle.new_from_string('v1|a|0|\n')), Serio.Bundle)

    def test_system_gi_is_not_shadowed(self):
        # The gi/ of the build tree has no __init__.py; the real package must
        # still be the one imported, with the build tree only added to the
        # path of gi.overrides.
        self.assertTrue(gi.__file__.endswith(os.path.join('gi', '__init__.py')))
        override_dir = os.path.dirname(os.environ['SERIO_TEST_OVERRIDE'])
        self.assertNotEqual(os.path.dirname(gi.__file__),
                            os.path.dirname(override_dir))
        self.assertIn(os.path.realpath(override_dir),
                      [os.path.realpath(p) for p in sys.modules['gi.overrides'].__path__])

    def test_public_overrides_are_documented(self):
        for attr in ('__len__', '__bool__', '__contains__', '__getitem__',
                     '__iter__', '__repr__', 'to_dict', 'from_dict',
                     'to_numpy', 'append_numpy', 'keys', 'items', 'values',
                     'get', 'get_name', 'get_values', 'get_bytes',
                     'get_shape', 'get_base_name', 'dup_values', 'new_from_file',
                     'new_from_bytes', 'new_from_string', 'to_bytes', 'to_string',
                     'save_to_file', 'save_to_file_async', 'new_from_file_async'):
            self.assertTrue(getattr(Serio.Bundle, attr).__doc__, attr)
        self.assertTrue(Serio.compute_checksum_for_bytes.__doc__)
        self.assertTrue(sys.modules['gi.overrides.Serio'].__doc__)


class TestLen(unittest.TestCase):

    def test_counts_names_as_iteration_does(self):
        self.assertEqual(len(Serio.Bundle.new()), 0)
        bundle = bundle_of(('a', [1.0]), ('b', []), ('a', [2.0]))
        self.assertEqual(len(bundle), 2)
        self.assertEqual(len(bundle), len(list(bundle)))
        self.assertEqual(bundle.n_arrays, 3)
        self.assertEqual(bundle.get_n_arrays(), 3)

    def test_empty_bundle_is_true(self):
        # Deliberately not list-like: "if bundle:" tests for None.
        self.assertIs(bool(Serio.Bundle.new()), True)
        self.assertIs(bool(bundle_of(('a', []))), True)


class TestLookup(unittest.TestCase):

    def setUp(self):
        self.bundle = bundle_of(('w', [1.0, 2.0]), ('', [3.0]), ('w', [4.0]),
                                ('a|b', [5.0]), ('\u00e9t\u00e9', []))

    def test_contains(self):
        for name in ('w', '', 'a_b', '\u00e9t\u00e9'):
            self.assertIn(name, self.bundle)
        for name in ('W', 'x', 'w ', 'a|b', 'ete'):
            self.assertNotIn(name, self.bundle)

    def test_getitem_returns_first_match_as_list(self):
        self.assertEqual(to_bits(self.bundle['w']), to_bits([1.0, 2.0]))
        self.assertIsInstance(self.bundle['w'], list)
        self.assertEqual(self.bundle['\u00e9t\u00e9'], [])
        self.assertEqual(to_bits(self.bundle['']), to_bits([3.0]))

    def test_getitem_missing_raises_key_error(self):
        for name in ('x', 'a|b', 'W'):
            with self.assertRaises(KeyError) as caught:
                self.bundle[name]
            self.assertEqual(caught.exception.args, (name,))

    def test_impossible_names_are_absent(self):
        # PyGObject would cut 'w\0x' to 'w', which is present.
        for name in ('w\0x', '\0', '\udc80'):
            self.assertNotIn(name, self.bundle)
            with self.assertRaises(KeyError):
                self.bundle[name]

    def test_non_str_keys_raise_type_error(self):
        for key in (0, 1.5, None, b'w', ('w',), slice(0, 1)):
            with self.assertRaises(TypeError):
                self.bundle[key]
            with self.assertRaises(TypeError):
                key in self.bundle


class TestIteration(unittest.TestCase):

    def test_names_once_in_order(self):
        bundle = bundle_of(('a', [0.5]), ('b', []), ('a', [1.0]), ('w[2]', [1.0, 2.0]))
        self.assertEqual(list(bundle), ['a', 'b', 'w[2]'])
        self.assertEqual(bundle.keys(), ['a', 'b', 'w[2]'])

    def test_items_and_values_with_duplicates(self):
        patterns = SPECIAL_BITS
        bundle = bundle_of(('a', to_floats(patterns)), ('b', []), ('a', [1.0]))
        pairs = bundle.items()
        self.assertEqual([name for name, values in pairs], ['a', 'b'])
        self.assertEqual([type(values) for name, values in pairs], [list] * 2)
        self.assertEqual(to_bits(pairs[0][1]), canonical(patterns))
        self.assertEqual(pairs[1][1], [])
        self.assertEqual([to_bits(v) for v in bundle.values()],
                         [canonical(patterns), []])
        # The second "a" is reached by index only.
        self.assertEqual(bundle.get_name(2), 'a')
        self.assertEqual(to_bits(bundle.get_values(2)), to_bits([1.0]))

    def test_empty_bundle(self):
        self.assertEqual(list(Serio.Bundle.new()), [])
        self.assertEqual(Serio.Bundle.new().items(), [])

    def test_arrays_appended_while_iterating_are_not_visited(self):
        bundle = bundle_of(('a', []), ('b', []))
        names = []
        for name in bundle:
            names.append(name)
            bundle.append(name + '+', bundle[name])
        self.assertEqual(names, ['a', 'b'])
        self.assertEqual(len(bundle), 4)

    def test_is_a_mapping(self):
        bundle = bundle_of(('a', [1.0]), ('w[2]', [2.0, 3.0]))
        self.assertIsInstance(bundle, collections.abc.Mapping)
        self.assertEqual(to_bits(bundle.get('a')), to_bits([1.0]))
        self.assertIsNone(bundle.get('x'))
        self.assertEqual(bundle.get('x', 7), 7)
        # A base name finds its array, as lookup() does.
        self.assertIn('w', bundle)
        self.assertEqual(to_bits(bundle['w']), to_bits([2.0, 3.0]))
        self.assertEqual(to_bits(bundle.get('w')), to_bits([2.0, 3.0]))


class TestIndexes(unittest.TestCase):

    def test_out_of_range_raises_index_error(self):
        bundle = bundle_of(('a', [1.0]), ('b', []))
        for method in ('get_name', 'get_values', 'get_bytes', 'get_shape',
                       'get_base_name', 'dup_values'):
            for index in (2, 3, -1, 2**32, 2**64):
                with self.assertRaises(IndexError, msg=(method, index)):
                    getattr(bundle, method)(index)
            with self.assertRaises(IndexError):
                getattr(Serio.Bundle.new(), method)(0)
            with self.assertRaises(TypeError):
                getattr(bundle, method)('a')
        self.assertEqual(bundle.get_name(1), 'b')
        self.assertEqual(bundle.get_shape(0), [1])
        self.assertEqual(bundle.get_base_name(0), 'a')
        self.assertEqual(bundle.dup_values(0), [1.0])

    def test_no_critical_is_printed(self):
        child = ('import gi\n'
                 'gi.require_version("Serio", "1.0")\n'
                 'from gi.repository import Serio\n'
                 'b = Serio.Bundle.new()\n'
                 'try:\n'
                 '    b.get_values(0)\n'
                 'except IndexError:\n'
                 '    print("IndexError")\n')
        env = dict(os.environ, G_DEBUG='fatal-criticals')
        result = subprocess.run([sys.executable, '-B', '-c', child], env=env,
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, 'IndexError\n')
        self.assertNotIn('CRITICAL', result.stderr)


class TestPathsAndBytes(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix='serio-overrides-')
        self.addCleanup(self.tmp.cleanup)

    def test_files_from_str_pathlike_and_gio_file(self):
        from gi.repository import Gio
        bundle = bundle_of(('w', [0.5, -0.0]))
        path = os.path.join(self.tmp.name, 'w.serio')
        for target in (path, pathlib.Path(path), Gio.File.new_for_path(path)):
            os.unlink(path) if os.path.exists(path) else None
            self.assertTrue(bundle.save_to_file(target))
            for source in (path, pathlib.Path(path), Gio.File.new_for_path(path)):
                self.assertTrue(Serio.Bundle.new_from_file(source).equal(bundle))

    def test_bad_path_types(self):
        bundle = bundle_of(('w', [0.5]))
        for target in (None, 3, b'/tmp/x.serio'):
            with self.assertRaises(TypeError):
                bundle.save_to_file(target)
            with self.assertRaises(TypeError):
                Serio.Bundle.new_from_file(target)

    def test_async_with_a_path(self):
        from gi.repository import GLib
        bundle = bundle_of(('w', [0.5]))
        path = pathlib.Path(self.tmp.name) / 'a.serio'
        loop = GLib.MainLoop()
        results = []

        def loaded(source, result):
            results.append(Serio.Bundle.new_from_file_finish(result))
            loop.quit()

        def saved(source, result):
            results.append(bundle.save_to_file_finish(result))
            Serio.Bundle.new_from_file_async(path, GLib.PRIORITY_DEFAULT, None, loaded)

        bundle.save_to_file_async(path, Serio.SaveFlags.NONE, GLib.PRIORITY_DEFAULT, None, saved)
        loop.run()
        self.assertTrue(results[0])
        self.assertTrue(results[1].equal(bundle))

    def test_bytes_like(self):
        text = b'v1|w|2|1,-0\n'
        for data in (text, bytearray(text), memoryview(text)):
            self.assertEqual(Serio.Bundle.new_from_bytes(data).to_string(Serio.SaveFlags.PLAIN), text.decode())
            self.assertEqual(Serio.compute_checksum_for_bytes(data), Serio.compute_checksum(text.decode()))
        self.assertEqual(Serio.compute_checksum_for_bytes(memoryview(b'foobar')), 0x72ad2699)
        for data in ('v1|w|0|\n', None, 3):
            with self.assertRaises(TypeError):
                Serio.Bundle.new_from_bytes(data)
            with self.assertRaises(TypeError):
                Serio.compute_checksum_for_bytes(data)


class TestToDict(unittest.TestCase):

    def test_first_duplicate_wins_in_bundle_order(self):
        bundle = bundle_of(('z', [1.0]), ('a', [2.0]), ('z', [3.0]), ('m', []))
        result = bundle.to_dict()
        self.assertEqual(list(result), ['z', 'a', 'm'])
        self.assertEqual(to_bits(result['z']), to_bits([1.0]))
        self.assertEqual(to_bits(result['a']), to_bits([2.0]))
        self.assertEqual(result['m'], [])

    def test_empty_bundle(self):
        self.assertEqual(Serio.Bundle.new().to_dict(), {})

    def test_keys_make_dict_agree_with_to_dict(self):
        bundle = bundle_of(('z', [1.0]), ('a', [2.0]), ('z', [3.0]), ('m', []))
        self.assertEqual(bundle.keys(), ['z', 'a', 'm'])
        as_dict = dict(bundle)
        self.assertEqual(list(as_dict), ['z', 'a', 'm'])
        self.assertEqual(to_bits(as_dict['z']), to_bits([1.0]))
        self.assertEqual(Serio.Bundle.new().keys(), [])

    def test_lists_are_copies(self):
        bundle = bundle_of(('a', [1.0]))
        bundle.to_dict()['a'].append(2.0)
        self.assertEqual(to_bits(bundle['a']), to_bits([1.0]))

    def test_hard_patterns_bit_exact(self):
        patterns = load_patterns() + SPECIAL_BITS
        bundle = bundle_of(('p', to_floats(patterns)))
        self.assertEqual(to_bits(bundle.to_dict()['p']), canonical(patterns))


class TestFromDict(unittest.TestCase):

    def test_matches_the_c_api(self):
        patterns = SPECIAL_BITS
        arrays = {'w': to_floats(patterns), 'b': (0.5, -0.0), 'e': [], 'i': [1, 2]}
        bundle = Serio.Bundle.from_dict(arrays)
        self.assertIs(type(bundle), Serio.Bundle)
        expected = bundle_of(*arrays.items())
        self.assertTrue(bundle.equal(expected))
        self.assertEqual(bundle.to_string(Serio.SaveFlags.PLAIN), expected.to_string(Serio.SaveFlags.PLAIN))
        self.assertEqual(to_bits(bundle['w']), canonical(patterns))

    def test_round_trip_through_text(self):
        patterns = load_patterns() + SPECIAL_BITS
        bundle = Serio.Bundle.from_dict({'p': to_floats(patterns), 'q': [-0.0]})
        back = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN)).to_dict()
        self.assertEqual(list(back), ['p', 'q'])
        self.assertEqual(to_bits(back['p']), canonical(patterns))
        self.assertEqual(to_bits(back['q']), [0x8000000000000000])

    def test_names_are_sanitized(self):
        bundle = Serio.Bundle.from_dict({'a|b\r\n': [1.0]})
        self.assertEqual(list(bundle.to_dict()), ['a_b__'])

    def test_empty_mapping(self):
        self.assertEqual(len(Serio.Bundle.from_dict({})), 0)

    def test_not_a_mapping(self):
        for arrays in ([('a', [1.0])], None, 'a'):
            with self.assertRaises(TypeError):
                Serio.Bundle.from_dict(arrays)

    def test_bad_names(self):
        for name in (1, None, b'a'):
            with self.assertRaises(TypeError):
                Serio.Bundle.from_dict({name: [1.0]})
        with self.assertRaises(ValueError):
            Serio.Bundle.from_dict({'a\0b': [1.0]})

    def test_bad_values_name_the_key(self):
        for values in ('12', ['1.5'], [1.0, None], None, (v for v in [1.0])):
            with self.assertRaises(TypeError, msg=repr(values)) as caught:
                Serio.Bundle.from_dict({'ok': [1.0], 'bad.key': values})
            self.assertIn("'bad.key'", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            Serio.Bundle.from_dict({'big': 2**53 + 1})
        self.assertIn("'big'", str(caught.exception))
        with self.assertRaises(OverflowError) as caught:
            Serio.Bundle.from_dict({'huge': [10**400]})
        self.assertIn("'huge'", str(caught.exception))

    def test_numbers_are_0d(self):
        bundle = Serio.Bundle.from_dict({'n': 5, 'x': -0.0, 't': True, 'v': [5.0]})
        self.assertEqual(bundle.to_string(Serio.SaveFlags.PLAIN), 'v1|n[]|1|5\nv1|x[]|1|-0\nv1|t[]|1|1\nv1|v|1|5\n')
        self.assertEqual(bundle.get_shape(0), [])
        self.assertEqual(to_bits(bundle['x']), [0x8000000000000000])


class TestRepr(unittest.TestCase):

    def test_names_and_lengths(self):
        bundle = bundle_of(('dense.w', [1.0, 2.0, 3.0]), ('b', [1.0]), ('e', []))
        self.assertEqual(repr(bundle), "<Serio.Bundle with 3 arrays: "
                         "'dense.w' (3 values), 'b' (1 value), 'e' (0 values)>")

    def test_empty_and_long(self):
        self.assertEqual(repr(Serio.Bundle.new()), '<Serio.Bundle with 0 arrays>')
        bundle = bundle_of(*[('n%d' % i, []) for i in range(11)])
        self.assertTrue(repr(bundle).startswith("<Serio.Bundle with 11 arrays: 'n0' (0 values), "))
        self.assertTrue(repr(bundle).endswith("'n7' (0 values), and 3 more>"))
        self.assertNotIn('n8', repr(bundle))


class TestIdentity(unittest.TestCase):

    def test_equality_is_identity_and_equal_compares_bits(self):
        a = Serio.Bundle.from_dict({'w': [1.0]})
        b = Serio.Bundle.from_dict({'w': [1.0]})
        self.assertTrue(a.equal(b))
        self.assertFalse(a == b)
        self.assertTrue(a == a)
        self.assertEqual(len({a, b, a}), 2)
        self.assertFalse(a.equal(Serio.Bundle.from_dict({'w': [-1.0]})))


class TestLifetime(unittest.TestCase):

    def test_values_outlive_the_bundle(self):
        bundle = Serio.Bundle.from_dict({'w': [0.1, -0.0]})
        items = bundle.items()
        result = bundle.to_dict()
        del bundle
        gc.collect()
        self.assertEqual(to_bits(items[0][1]), to_bits([0.1, -0.0]))
        self.assertEqual(to_bits(result['w']), to_bits([0.1, -0.0]))


class TestFileErrors(unittest.TestCase):
    """Errors of the path-taking methods are the serio package's: a
    GLib.Error that is also the OSError (or, for bad contents, the
    ValueError) Python code catches, with str() its message."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-errors-')
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def assert_os_error(self, call, builtin, code, path):
        with self.assertRaises(builtin) as caught:
            call()
        error = caught.exception
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Gio.io_error_quark(), code), error)
        self.assertEqual(error.filename, path)
        self.assertEqual(str(error), error.message)

    def test_file_errors_are_oserrors(self):
        missing = os.path.join(self.dir, 'missing.serio')
        bundle = Serio.Bundle.from_dict({'w': [1.0]})
        self.assert_os_error(lambda: Serio.Bundle.new_from_file(missing), FileNotFoundError,
                             Gio.IOErrorEnum.NOT_FOUND, missing)
        self.assert_os_error(lambda: Serio.Reader.open(missing), FileNotFoundError,
                             Gio.IOErrorEnum.NOT_FOUND, missing)
        self.assert_os_error(lambda: Serio.Bundle.new_from_file(self.dir), IsADirectoryError,
                             Gio.IOErrorEnum.IS_DIRECTORY, self.dir)
        inside = os.path.join(self.dir, 'no-such-dir', 'w.serio')
        self.assert_os_error(lambda: bundle.save_to_file(inside), FileNotFoundError,
                             Gio.IOErrorEnum.NOT_FOUND, inside)
        self.assert_os_error(lambda: bundle.save_to_file(inside, Serio.SaveFlags.PLAIN),
                             FileNotFoundError, Gio.IOErrorEnum.NOT_FOUND, inside)

    def test_bad_contents_are_value_errors_with_their_location(self):
        path = os.path.join(self.dir, 'bad.serio')
        with open(path, 'w', encoding='ascii') as f:
            f.write('v1|a|1|1\nv1|b|2|1,01\n')
        with self.assertRaises(ValueError) as caught:
            Serio.Bundle.new_from_file(path)
        error = caught.exception
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.SYNTAX))
        self.assertEqual((error.line, error.value_index), (2, 2))
        self.assertTrue(str(error).startswith(path + ': Line 2, value 2'), str(error))


class TestTextErrors(unittest.TestCase):
    def test_bad_text_is_a_value_error_with_its_location(self):
        for parse in (Serio.Bundle.new_from_string, lambda t: Serio.Bundle.new_from_bytes(t.encode())):
            with self.assertRaises(ValueError) as caught:
                parse('v1|a|1|1\nv1|b|2|1,1p1024\n')
            error = caught.exception
            self.assertIsInstance(error, GLib.Error)
            self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.DOMAIN))
            self.assertEqual((error.line, error.value_index), (2, 2))
            self.assertEqual(str(error), error.message)
            self.assertTrue(str(error).startswith('Line 2, value 2'), str(error))


class TestWithoutNumPy(unittest.TestCase):

    def run_child(self, mode):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'no_numpy.py')
        with tempfile.TemporaryDirectory(prefix='serio-no-numpy-') as tmp:
            child = subprocess.run([sys.executable, '-B', script, mode,
                                    os.path.join(tmp, 'w.serio')],
                                   capture_output=True, text=True, check=False)
        self.assertEqual(child.returncode, 0, child.stderr)
        return json.loads(child.stdout)

    def test_numpy_methods_raise_import_error(self):
        seen = self.run_child('block')
        self.assertEqual(seen['module'], 'gi.overrides.Serio')
        self.assertEqual(seen['to_dict'], repr({'w': [1.5, -0.0]}))
        self.assertEqual(len(seen['import_errors']), 3)
        for message, method in zip(seen['import_errors'],
                                   ('Serio.Bundle.to_numpy', 'Serio.Bundle.append_numpy',
                                    'Serio.Reader.read_array')):
            self.assertIn('%s() needs NumPy' % method, message)
        self.assertEqual(seen['n_arrays'], 1)

    def test_numpy_is_imported_only_when_needed(self):
        seen = self.run_child('lazy')
        self.assertEqual(seen['module'], 'gi.overrides.Serio')
        self.assertEqual(seen['items'], repr([('w', [1.5, -0.0])]))
        self.assertEqual(seen['names'], repr(['w']))
        self.assertEqual(seen['w'], repr([1.5, -0.0]))
        self.assertFalse(seen['numpy_imported'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
