# SPDX-License-Identifier: LGPL-2.1-or-later
"""libserio from Python through PyGObject: the API as a Python user sees it.

Values are compared by their bit patterns (struct.pack), never with ==.
"""

import os
import struct
import tempfile
import unittest

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

ERROR_CODES = ('VERSION', 'SYNTAX', 'LENGTH', 'DOMAIN', 'TRUNCATED')

# One input per code, and the token text the message must quote (if any).
BAD_INPUTS = {
    'VERSION': ('v2|x|0|\n', None),
    'SYNTAX': ('v1|x|2|1,01\n', '01'),
    'LENGTH': ('v1|x|1|\n', None),
    'DOMAIN': ('v1|x|1|1p1024\n', '1p1024'),
    'TRUNCATED': ('v1|x|1|1', None),
}


def bits(values):
    return struct.pack('<%dd' % len(values), *values)


def from_bits(pattern):
    return struct.unpack('<d', struct.pack('<Q', pattern))[0]


def assert_bytes_match_values(bundle):
    """get_bytes(i) holds exactly the values of get_values(i), for every
    array: a slice at the wrong offset of a shared block would not."""
    for i in range(bundle.get_n_arrays()):
        values = bundle.get_values(i)
        data = bundle.get_bytes(i).get_data()
        expected = struct.pack('=%dd' % len(values), *values)
        if data != expected:
            raise AssertionError('array %d: get_bytes %r, get_values %r' % (i, data, expected))


def parse(text):
    """Serio.Bundle.new_from_string, then every array's bytes checked."""
    bundle = Serio.Bundle.new_from_string(text)
    assert_bytes_match_values(bundle)
    return bundle


def parse_bytes(data):
    """Serio.Bundle.new_from_bytes, then every array's bytes checked."""
    bundle = Serio.Bundle.new_from_bytes(data)
    assert_bytes_match_values(bundle)
    return bundle


def fnv1a64_folded(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return (h >> 32) ^ (h & 0xffffffff)


class SpecSnippetTest(unittest.TestCase):
    def test_snippet_verbatim(self):
        b = Serio.Bundle.new()
        b.append("dense.w", [0.1, -0.0, float("inf")])
        s = b.to_string(Serio.SaveFlags.PLAIN)
        self.assertEqual(s, 'v1|dense.w|3|3602879701896397p-55,-0,inf\n')
        c = parse(s)
        values = c.get_values(0)
        self.assertIsInstance(values, list)
        self.assertEqual(bits(values), bits([0.1, -0.0, float("inf")]))
        checksum = Serio.compute_checksum(s)
        self.assertIsInstance(checksum, int)
        self.assertGreaterEqual(checksum, 0)
        self.assertLess(checksum, 2**32)
        self.assertEqual(checksum, fnv1a64_folded(s.encode()))
        with self.assertRaises(GLib.Error) as cm:
            parse("v2|x|0|\n")
        self.assertEqual(cm.exception.domain, 'serio-error-quark')

    def test_reference_tokens(self):
        b = Serio.Bundle.new()
        b.append('r', [0.5, 0.1, from_bits(0x7fefffffffffffff), from_bits(1),
                       2.0**1023, 2.0**61, 2.0**62])
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN),
                         'v1|r|7|1p-1,3602879701896397p-55,9007199254740991p971,'
                         '1p-1074,1p1023,2305843009213693952,1p62\n')


class ChecksumTest(unittest.TestCase):
    VECTORS = ((b'', 0x4fd0bfc1), (b'a', 0x296230c0), (b'foobar', 0x72ad2699))

    def test_spec_vectors(self):
        for data, folded in self.VECTORS:
            with self.subTest(data=data):
                self.assertEqual(fnv1a64_folded(data), folded)
                self.assertEqual(Serio.compute_checksum(data.decode()), folded)
                self.assertEqual(Serio.compute_checksum_for_bytes(GLib.Bytes.new(data)), folded)

    def test_bytes_with_nul_and_invalid_utf8(self):
        data = bytes(range(256)) * 3
        self.assertEqual(Serio.compute_checksum_for_bytes(GLib.Bytes.new(data)), fnv1a64_folded(data))

    def test_utf8_text(self):
        text = 'v1|température 日本語|0|\n'
        self.assertEqual(Serio.compute_checksum(text), fnv1a64_folded(text.encode()))


class ErrorTest(unittest.TestCase):
    def assert_serio_error(self, error, name, token):
        code = getattr(Serio.Error, name)
        self.assertEqual(error.domain, GLib.quark_to_string(Serio.error_quark()))
        self.assertEqual(error.domain, 'serio-error-quark')
        self.assertEqual(error.code, int(code))
        self.assertTrue(error.matches(Serio.error_quark(), code))
        self.assertTrue(error.matches(Serio.Error.quark(), code))
        for other in ERROR_CODES:
            if other != name:
                self.assertFalse(error.matches(Serio.error_quark(), getattr(Serio.Error, other)))
        self.assertTrue(error.message)
        if token is not None:
            self.assertIn(token, error.message)

    def test_enum(self):
        codes = [getattr(Serio.Error, name) for name in ERROR_CODES]
        for code in codes:
            self.assertIsInstance(code, Serio.Error)
        self.assertEqual(len(set(int(code) for code in codes)), len(codes))
        self.assertEqual(Serio.Error.quark(), Serio.error_quark())
        self.assertEqual(GLib.quark_to_string(Serio.error_quark()), 'serio-error-quark')

    def test_from_string(self):
        for name, (text, token) in BAD_INPUTS.items():
            with self.subTest(code=name):
                with self.assertRaises(GLib.Error) as cm:
                    parse(text)
                self.assert_serio_error(cm.exception, name, token)

    def test_from_bytes(self):
        for name, (text, token) in BAD_INPUTS.items():
            with self.subTest(code=name):
                with self.assertRaises(GLib.Error) as cm:
                    parse_bytes(GLib.Bytes.new(text.encode()))
                self.assert_serio_error(cm.exception, name, token)

    def test_nul_and_invalid_utf8_in_bytes(self):
        for data in (b'v1|a\0b|0|\n', b'v1|\xff|0|\n', b'v1|ok|1|1\n\0\n'):
            with self.subTest(data=data):
                with self.assertRaises(GLib.Error) as cm:
                    parse_bytes(GLib.Bytes.new(data))
                self.assert_serio_error(cm.exception, 'SYNTAX', None)

    def test_bad_line_fails_whole_parse(self):
        with self.assertRaises(GLib.Error) as cm:
            parse('v1|a|1|1\nv1|b|1|1p1024\nv1|c|0|\n')
        self.assert_serio_error(cm.exception, 'DOMAIN', '1p1024')


class BundleTest(unittest.TestCase):
    def test_empty(self):
        b = Serio.Bundle.new()
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), '')
        self.assertEqual(b.to_bytes(Serio.SaveFlags.PLAIN).get_size(), 0)
        c = parse('')
        self.assertEqual(c.get_n_arrays(), 0)
        self.assertTrue(b.equal(c))

    def test_empty_array(self):
        b = Serio.Bundle.new()
        b.append('e', [])
        b.append_array('a', [])
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|e|0|\nv1|a|0|\n')
        self.assertEqual(b.get_values(0), [])
        self.assertEqual(b.get_values(1), [])
        # values are required: None is not an empty array
        with self.assertRaises(TypeError):
            b.append('n', None)

    def test_no_length_argument_in_signatures(self):
        b = Serio.Bundle.new()
        with self.assertRaises(TypeError):
            b.append('x', [1.0, 2.0], 2)
        b.append('x', [1.0, 2.0])
        values = b.get_values(0)
        self.assertIsInstance(values, list)
        self.assertEqual(len(values), 2)
        self.assertEqual(bits(values), bits([1.0, 2.0]))

    def test_lookup(self):
        b = Serio.Bundle.new()
        for name in ('a', 'b', 'a'):
            b.append(name, [])
        found, index = b.lookup('b')
        self.assertIs(found, True)
        self.assertEqual(index, 1)
        self.assertEqual(tuple(b.lookup('a')), (True, 0))
        found, _ = b.lookup('missing')
        self.assertIs(found, False)

    def test_n_arrays_property(self):
        b = Serio.Bundle.new()
        notified = []
        b.connect('notify::n-arrays', lambda obj, pspec: notified.append(obj.props.n_arrays))
        self.assertEqual(b.props.n_arrays, 0)
        b.append('a', [1.0])
        b.append_bytes('b', GLib.Bytes.new(bits([2.0])))
        self.assertEqual(b.props.n_arrays, 2)
        self.assertEqual(b.get_property('n-arrays'), 2)
        self.assertEqual(b.get_n_arrays(), 2)
        self.assertEqual(notified, [1, 2])
        with self.assertRaises(TypeError):
            b.props.n_arrays = 5

    def test_equal_compares_bits_and_names(self):
        def bundle(name, values):
            b = Serio.Bundle.new()
            b.append(name, values)
            return b

        self.assertTrue(bundle('x', [0.0]).equal(bundle('x', [0.0])))
        self.assertFalse(bundle('x', [0.0]).equal(bundle('x', [-0.0])))
        self.assertTrue(bundle('x', [float('nan')]).equal(bundle('x', [-float('nan')])))
        self.assertFalse(bundle('x', [1.0]).equal(bundle('y', [1.0])))
        self.assertFalse(bundle('x', [1.0]).equal(bundle('x', [1.0, 1.0])))

    def test_nan_is_canonical(self):
        nan_bits = (0x7ff0000000000001, 0xfff8000000000000, 0x7fffffffffffffff, 0xfff0000000000001)
        values = [from_bits(p) for p in nan_bits]
        b = Serio.Bundle.new()
        b.append('n', values)
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|n|4|nan,nan,nan,nan\n')
        for value in (b.get_values(0), parse(b.to_string(Serio.SaveFlags.PLAIN)).get_values(0)):
            self.assertEqual(bits(value), struct.pack('<Q', 0x7ff8000000000000) * 4)

    def test_get_bytes_of_parsed_arrays(self):
        """Issue 12: every array of a parsed bundle of several arrays, which
        share one block, gives its own values from get_bytes."""
        for text in ('v1|a|2|1,2\nv1|b|2|3,4\n',
                     'v1|a|1|1\nv1|e|0|\nv1|b|3|-0,inf,nan\nv1|c|2|5,6\n'):
            with self.subTest(text=text):
                c = parse(text)
                self.assertEqual(c.get_bytes(1).get_data(), bits(c.get_values(1)))
        c = parse('v1|a|2|1,2\nv1|b|2|3,4\n')
        self.assertEqual(c.get_bytes(1).get_data(), bits([3.0, 4.0]))

    def test_negative_default_nan_by_bytes(self):
        """Issue 12: the negative default NaN appended by bytes reads back
        from to_string as the canonical nan, in an equal bundle."""
        b = Serio.Bundle.new()
        b.append_bytes('n', GLib.Bytes.new(struct.pack('=Q', 0xfff8000000000000)))
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|n|1|nan\n')
        self.assertEqual(b.get_bytes(0).get_data(), struct.pack('=Q', 0x7ff8000000000000))
        self.assertTrue(b.equal(parse(b.to_string(Serio.SaveFlags.PLAIN))))

    def test_from_bytes_and_to_bytes(self):
        c = parse_bytes(GLib.Bytes.new(b'v1|x|2|1,-1p-1\r\n\nv1|y|0|\n'))
        self.assertEqual(c.to_string(Serio.SaveFlags.PLAIN), 'v1|x|2|1,-1p-1\nv1|y|0|\n')
        self.assertEqual(bits(c.get_values(0)), bits([1.0, -0.5]))
        data = c.to_bytes(Serio.SaveFlags.PLAIN)
        self.assertIsInstance(data, GLib.Bytes)
        self.assertEqual(data.get_data(), c.to_string(Serio.SaveFlags.PLAIN).encode())
        self.assertTrue(parse_bytes(data).equal(c))


class NameTest(unittest.TestCase):
    NAMES = ['dense.w', 'température', '日本語の重み', '🙂', '', 'tab\there and space',
             'dup', 'dup', ' ']

    def test_round_trip_as_str(self):
        b = Serio.Bundle.new()
        for i, name in enumerate(self.NAMES):
            b.append(name, [float(i)])
        c = parse(b.to_string(Serio.SaveFlags.PLAIN))
        self.assertTrue(b.equal(c))
        self.assertEqual(c.get_n_arrays(), len(self.NAMES))
        for i, name in enumerate(self.NAMES):
            got = c.get_name(i)
            self.assertIsInstance(got, str)
            self.assertEqual(got, name)
            self.assertEqual(bits(c.get_values(i)), bits([float(i)]))
        self.assertEqual(tuple(c.lookup('dup')), (True, self.NAMES.index('dup')))
        self.assertEqual(tuple(c.lookup('')), (True, self.NAMES.index('')))

    def test_separators_become_underscores(self):
        b = Serio.Bundle.new()
        b.append('a|b\rc\nd|', [1.0])
        self.assertEqual(b.get_name(0), 'a_b_c_d_')
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|a_b_c_d_|1|1\n')
        self.assertFalse(b.lookup('a|b\rc\nd|')[0])
        self.assertEqual(tuple(b.lookup('a_b_c_d_')), (True, 0))
        self.assertTrue(b.equal(parse(b.to_string(Serio.SaveFlags.PLAIN))))


class FileTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-python-')
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.bundle = Serio.Bundle.new()
        self.bundle.append('w', [0.1, -0.0, 5e-324, float('-inf')])
        self.bundle.append('名前', [])

    def file(self, name):
        return Gio.File.new_for_path(os.path.join(self.dir, name))

    def test_save_and_load(self):
        file = self.file('weights.serio')
        self.assertIs(self.bundle.save_to_file(file, Serio.SaveFlags.NONE), True)
        with open(file.get_path(), 'rb') as f:
            self.assertEqual(f.read(), self.bundle.to_bytes(Serio.SaveFlags.NONE).get_data())
        self.assertTrue(Serio.Bundle.new_from_file(file).equal(self.bundle))

    def test_save_and_load_async(self):
        file = self.file('async.serio')
        loop = GLib.MainLoop()
        results = {}

        def loaded(source, result):
            results['loaded'] = Serio.Bundle.new_from_file_finish(result)
            loop.quit()

        def saved(bundle, result):
            results['saved'] = bundle.save_to_file_finish(result)
            Serio.Bundle.new_from_file_async(file, GLib.PRIORITY_DEFAULT, None, None, None, loaded)

        self.bundle.save_to_file_async(file, Serio.SaveFlags.NONE, GLib.PRIORITY_DEFAULT, None, None, None, saved)
        GLib.timeout_add_seconds(20, loop.quit)
        loop.run()
        self.assertIs(results.get('saved'), True)
        self.assertTrue(results['loaded'].equal(self.bundle))

    def test_missing_file(self):
        with self.assertRaises(GLib.Error) as cm:
            Serio.Bundle.new_from_file(self.file('missing.serio'))
        self.assertTrue(cm.exception.matches(Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND))

    def test_corrupt_file(self):
        file = self.file('cut.serio')
        with open(file.get_path(), 'wb') as f:
            f.write(self.bundle.to_string(Serio.SaveFlags.PLAIN).encode()[:-1])
        with self.assertRaises(GLib.Error) as cm:
            Serio.Bundle.new_from_file(file)
        self.assertTrue(cm.exception.matches(Serio.error_quark(), Serio.Error.TRUNCATED))


if __name__ == '__main__':
    unittest.main(verbosity=2)
