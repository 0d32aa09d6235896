# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio convert between .safetensors and serio files.

Usage: test_safetensors.py SERIO VERSION [unittest arguments]

The .safetensors files are read and written here by a parser and a writer
of this file's own, from the format's description (an 8-byte little-endian
header length, a JSON header, the data), with struct and json; the serio
texts by a reader of v1 records and tokens of its own. Data is compared by
bytes, never with == on floats. Every file a conversion must refuse is
built here, with the problem named in the test's name; the refusal must
exit 1, name the file (and the tensor), print nothing on standard output,
and leave OUT as it was, with no temporary file beside it.
"""

import json
import math
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import ToolTestCase, record  # noqa: E402
from test_convert_streams import ConvertStreamTests  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

# Public files written by other projects (tests/data/SOURCES.md).
SHARED = os.path.join(os.environ.get('SERIO_TEST_DATA') or
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data'),
                      'safetensors')

RSS_LIMIT_KIB = 64 * 1024
RSS_VALUES = 2 * 10 ** 7

# The format's element types: struct format (None for the 16-bit floats,
# handled by bits), size, the serio type, and the reference writer's order
# of alignment (its Dtype enum).
DTYPES = {
    'BOOL': ('?', 1, 'bool', 0), 'U8': ('B', 1, 'uint8', 1), 'I8': ('b', 1, 'int8', 2),
    'I16': ('h', 2, 'int16', 5), 'U16': ('H', 2, 'uint16', 6), 'F16': ('e', 2, 'float16', 7),
    'BF16': (None, 2, 'bfloat16', 8), 'I32': ('i', 4, 'int32', 9), 'U32': ('I', 4, 'uint32', 10),
    'F32': ('f', 4, 'float32', 11), 'F64': ('d', 8, 'float64', 12), 'I64': ('q', 8, 'int64', 13),
    'U64': ('Q', 8, 'uint64', 14),
}


# --- An independent model of the format ---------------------------------------

def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError('duplicate key')
    return dict(pairs)


def parse_safetensors(data):
    """(metadata or None, {name: (dtype, shape, bytes)}, header bytes),
    checking what the format's description requires."""
    (n,) = struct.unpack('<Q', data[:8])
    header_bytes = data[8:8 + n]
    header = json.loads(header_bytes.decode('utf-8'), object_pairs_hook=no_duplicates)
    metadata = header.pop('__metadata__', None)
    tensors, spans = {}, []
    for name, info in header.items():
        begin, end = info['data_offsets']
        size = DTYPES[info['dtype']][1]
        assert math.prod(info['shape']) * size == end - begin, name
        spans.append((begin, end))
        tensors[name] = (info['dtype'], info['shape'], data[8 + n + begin:8 + n + end])
    at = 0
    for begin, end in sorted(spans):
        assert begin == at, 'hole or overlap'
        at = end
    assert 8 + n + at == len(data), 'bytes after the last tensor'
    return metadata, tensors, header_bytes


def build(entries, metadata=None, order=None, dumps=None, pad=True, data_order=None):
    """A .safetensors file as another writer may write it: @entries are
    (name, dtype, shape, bytes); the data in @data_order of names (default:
    as given), the header's keys in @order (default: as given)."""
    dumps = dumps or (lambda h: json.dumps(h, separators=(',', ':')))
    by_name = {e[0]: e for e in entries}
    offsets, blob = {}, b''
    for name in data_order or [e[0] for e in entries]:
        raw = by_name[name][3]
        offsets[name] = [len(blob), len(blob) + len(raw)]
        blob += raw
    header = {}
    if metadata is not None:
        header['__metadata__'] = metadata
    for name in order or [e[0] for e in entries]:
        _, dtype, shape, _ = by_name[name]
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': offsets[name]}
    text = dumps(header).encode('utf-8')
    if pad:
        text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + blob


def raw_file(header_text, data=b''):
    if isinstance(header_text, str):
        header_text = header_text.encode('utf-8')
    return struct.pack('<Q', len(header_text)) + header_text + data


def reference_layout(tensors, metadata=None):
    """What the reference writer writes for {name: (dtype, shape, bytes)}:
    the tensors by alignment descending then name, compact JSON with the
    metadata first (its keys sorted here), padded with spaces to 8."""
    names = sorted(tensors, key=lambda k: (-DTYPES[tensors[k][0]][3], k.encode('utf-8')))
    header, blob = {}, b''
    if metadata:
        header['__metadata__'] = {k: metadata[k] for k in sorted(metadata, key=lambda k: k.encode())}
    for name in names:
        dtype, shape, raw = tensors[name]
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(header, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
    text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + blob


# --- An independent model of serio's records ----------------------------------

def parse_token(tok):
    if tok == 'nan':
        return float('nan')
    if tok in ('inf', '-inf'):
        return float(tok)
    if tok == '-0':
        return -0.0
    if 'p' in tok:
        m, e = (int(x) for x in tok.split('p'))
        # An integer stays one (int64 beyond 2^53 included).
        return m << e if e >= 0 else math.ldexp(m, e)
    return int(tok)


def serio_records(text):
    """[(stored name, [values])] of the records of a serio text, less the
    seal's."""
    out = []
    for line in text.decode('utf-8').split('\n'):
        if not line:
            continue
        v, rest = line.split('|', 1)
        assert v == 'v1'
        name, count, values = rest.rsplit('|', 2)
        if name in ('serio.sealed', 'serio.seal'):
            continue
        tokens = values.split(',') if values else []
        assert len(tokens) == int(count)
        out.append((name, [parse_token(t) for t in tokens]))
    return out


def element_bytes(dtype, values):
    """The little-endian bytes of serio values as elements of @dtype."""
    fmt = DTYPES[dtype][0]
    if dtype == 'BF16':
        out = b''
        for v in values:
            (b,) = struct.unpack('<I', struct.pack('<f', v))
            assert b & 0xFFFF == 0 or math.isnan(v)
            out += struct.pack('<H', b >> 16)
        return out
    if dtype == 'BOOL':
        assert all(v in (0, 1) for v in values)
        return bytes(values)
    if fmt in 'efd':
        return struct.pack('<%d%s' % (len(values), fmt), *[float(v) for v in values])
    return struct.pack('<%d%s' % (len(values), fmt), *values)


def stored_name(name, dtype, shape):
    suffix = '[%s]' % 'x'.join(str(d) for d in shape)
    return name + ('' if dtype == 'F64' else '@' + DTYPES[dtype][2]) + suffix


def all_dtypes():
    """One tensor of every element type, with telling values."""
    return [
        ('flag', 'BOOL', [4], bytes([1, 0, 0, 1])),
        ('u8', 'U8', [3], bytes([0, 127, 255])),
        ('i8', 'I8', [2], struct.pack('<2b', -128, 127)),
        ('i16', 'I16', [2], struct.pack('<2h', -32768, 32767)),
        ('u16', 'U16', [1], struct.pack('<H', 65535)),
        ('h', 'F16', [2, 2], struct.pack('<4H', 0x3C00, 0x0001, 0xFC00, 0x8000)),
        ('bf', 'BF16', [3], struct.pack('<3H', 0x3F80, 0x0001, 0xFF80)),
        ('i32', 'I32', [], struct.pack('<i', -2 ** 31)),
        ('u32', 'U32', [2], struct.pack('<2I', 2 ** 32 - 1, 7)),
        ('f', 'F32', [2, 1], struct.pack('<2f', 0.1, -3e-45)),
        ('d', 'F64', [2], struct.pack('<2d', 5e-324, -0.0)),
        ('i64', 'I64', [3], struct.pack('<3q', -2 ** 63, 2 ** 53, -(2 ** 53 + 2))),
        ('u64', 'U64', [2], struct.pack('<2Q', 2 ** 64 - 2 ** 11, 2 ** 53 - 1)),
        ('empty', 'F32', [0, 3], b''),
    ]


class SafetensorsTestCase(ToolTestCase):

    def shared(self, name):
        path = os.path.join(SHARED, name)
        if not os.path.exists(path):
            self.skipTest('%s is not here' % path)
        with open(path, 'rb') as f:
            return f.read()

    def convert(self, src, dst, *options, status=0, stdin=b''):
        return self.run_tool('convert', *options, src, dst, status=status, stdin=stdin)

    def assert_serio_holds(self, text, tensors, metadata=None):
        """The serio text holds @metadata as serio.metadata.KEY records,
        then every tensor as a typed array of its bytes."""
        records = serio_records(text)
        expect_meta = [('serio.metadata.%s@uint8[%d]' % (k, len(v.encode())), list(v.encode()))
                       for k, v in (metadata or {}).items()]
        self.assertEqual(records[:len(expect_meta)], expect_meta)
        got = {}
        for name, values in records[len(expect_meta):]:
            got[name] = values
        self.assertEqual(len(got), len(tensors))
        for name, (dtype, shape, raw) in tensors.items():
            stored = stored_name(name, dtype, shape)
            self.assertIn(stored, got)
            self.assertEqual(element_bytes(dtype, got[stored]), raw, name)

    def assert_refused(self, data, *needles, into='out.serio', name='bad.safetensors'):
        """Converting @data exits 1 naming the file and @needles, and
        leaves OUT and the directory as they were."""
        self.write(name, data)
        self.write(into, b'old')
        before = sorted(os.listdir(self.dir))
        proc = self.convert(name, into, status=1)
        self.assertEqual(proc.stdout, b'')
        err = proc.stderr.decode('utf-8')
        self.assertIn(name, err)
        for needle in needles:
            self.assertIn(needle, err)
        self.assertEqual(len(self.stderr_lines(proc)), 1, err)
        self.assertEqual(self.read(into), b'old')
        self.assertEqual(sorted(os.listdir(self.dir)), before)
        return err


# --- The shared files ----------------------------------------------------------

class SharedFileTests(SafetensorsTestCase):

    def round_trip(self, name, expect_names):
        data = self.shared(name)
        metadata, tensors, _ = parse_safetensors(data)
        self.assertEqual(sorted(tensors), expect_names)
        self.write(name, data)
        self.convert(name, 'x.serio')
        text = self.read('x.serio')
        self.assertTrue(text.startswith(b'v1|serio.sealed|'))
        self.assert_serio_holds(text, tensors, metadata)

        self.convert('x.serio', 'back.safetensors')
        back = self.read('back.safetensors')
        back_metadata, back_tensors, _ = parse_safetensors(back)
        self.assertEqual(back_metadata, metadata)
        self.assertEqual(back_tensors, tensors)
        self.assertEqual(back, reference_layout(tensors, metadata))
        # Both files were written by the reference layout already.
        self.assertEqual(back, data)

    def test_syoyo_f64(self):
        self.round_trip('syoyo-f64.safetensors', ['weight1', 'weight2'])

    def test_m2v_float16(self):
        self.round_trip('m2v-float16.safetensors', ['embeddings'])
        self.assertIn(b'\nv1|embeddings@float16[29528x2]|59056|', self.read('x.serio'))

    def test_syoyo_abuse_1_is_refused(self):
        # Its header length, 1000, is longer than the file.
        self.assert_refused(self.shared('syoyo-abuse-1.safetensors'), 'longer than the')


# --- Files as other writers write them ------------------------------------------

class OtherWriterTests(SafetensorsTestCase):

    def check_round_trip(self, data, plain=False):
        metadata, tensors, _ = parse_safetensors(data)
        self.write('in.safetensors', data)
        self.convert('in.safetensors', 'x.serio', *(['--plain'] if plain else []))
        text = self.read('x.serio')
        self.assertEqual(text.startswith(b'v1|serio.sealed|'), not plain)
        self.assert_serio_holds(text, tensors, metadata)
        self.convert('x.serio', 'back.safetensors')
        back = self.read('back.safetensors')
        back_metadata, back_tensors, _ = parse_safetensors(back)
        self.assertEqual(back_tensors, tensors)
        self.assertEqual(back_metadata, metadata)
        self.assertEqual(back, reference_layout(tensors, metadata))
        return text, back

    def test_every_element_type(self):
        entries = all_dtypes()
        text, back = self.check_round_trip(build(entries))
        records = dict(serio_records(text))
        self.assertEqual(records['i64@int64[3]'], [-2 ** 63, 2 ** 53, -(2 ** 53 + 2)])
        self.assertEqual(records['i32@int32[]'], [-2 ** 31])
        self.assertEqual(records['flag@bool[4]'], [1, 0, 0, 1])
        self.assertEqual(records['empty@float32[0x3]'], [])
        # The reference order: alignment descending (the reference
        # writer's Dtype enum: U64, I64, F64, F32, U32, I32, BF16, F16, U16,
        # I16, I8, U8, BOOL), then name.
        names = list(json.loads(back[8:8 + struct.unpack('<Q', back[:8])[0]]))
        self.assertEqual(names, ['u64', 'i64', 'd', 'empty', 'f', 'u32', 'i32', 'bf', 'h', 'u16',
                                 'i16', 'i8', 'u8', 'flag'])

    def test_metadata_survives_both_ways(self):
        metadata = {'format': 'pt', 'clé': 'välue "quoted" \\ \n\t\u0001', 'empty': ''}
        entries = [('w', 'F32', [2], struct.pack('<2f', 1.5, -2.0))]
        text, back = self.check_round_trip(build(entries, metadata=metadata))
        self.assertIn('v1|serio.metadata.format@uint8[2]|2|112,116\n'.encode(), text)
        self.assertIn(b'v1|serio.metadata.empty@uint8[0]|0|\n', text)
        self.assertIn('"__metadata__":{"clé":"välue \\"quoted\\" \\\\ \\n\\t\\u0001",'
                      '"empty":"","format":"pt"}'.encode(), back)

    def test_json_with_spaces_and_any_order(self):
        # As json.dumps writes by default (", " and ": "), keys in no
        # particular order, the data in yet another, no padding.
        entries = [('b.weight', 'F64', [2, 2], struct.pack('<4d', 1, 2, 3, 4)),
                   ('a.bias', 'F16', [3], struct.pack('<3H', 1, 2, 3)),
                   ('c', 'I64', [1], struct.pack('<q', -7))]
        data = build(entries, metadata={'k': 'v'}, order=['c', 'a.bias', 'b.weight'],
                     data_order=['a.bias', 'c', 'b.weight'],
                     dumps=lambda h: json.dumps(h, indent=1), pad=False)
        self.check_round_trip(data, plain=True)

    def test_serio_arrays_in_the_order_of_the_data(self):
        entries = [('z', 'F32', [1], struct.pack('<f', 1)), ('a', 'F32', [1], struct.pack('<f', 2))]
        self.write('in.safetensors', build(entries, data_order=['z', 'a'], order=['a', 'z']))
        self.convert('in.safetensors', 'x.serio')
        self.assertEqual([n for n, _ in serio_records(self.read('x.serio'))],
                         ['z@float32[1]', 'a@float32[1]'])

    def test_empty_file(self):
        data = build([])
        self.assertEqual(data, b'\x08\0\0\0\0\0\0\0{}      ')
        self.check_round_trip(data)

    def test_unusual_names_round_trip(self):
        entries = [('', 'F32', [1], struct.pack('<f', 1)),
                   ('w[2]', 'F64', [2], struct.pack('<2d', 1, 2)),
                   ('a@b', 'F32', [1], struct.pack('<f', 3)),
                   ('x@int8', 'F32', [1], struct.pack('<f', 4)),
                   ('tab\there ünï', 'U8', [1], b'\x05')]
        self.check_round_trip(build(entries))

    def test_special_floats_and_nan_note(self):
        # The default NaN of each type comes back as it was; a NaN with a
        # payload becomes the default NaN, with a note.
        entries = [('f', 'F32', [4], struct.pack('<4I', 0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000)),
                   ('h', 'F16', [1], struct.pack('<H', 0x7E00))]
        self.check_round_trip(build(entries))
        self.write('nan.safetensors', build([('p', 'F32', [2], struct.pack('<2I', 0x7FC00001, 0xFFC00000))]))
        proc = self.convert('nan.safetensors', 'p.serio')
        self.assertIn('2 NaNs with a sign or payload in “p” are stored as the default NaN',
                      proc.stderr.decode())
        self.convert('p.serio', 'p.safetensors')
        _, tensors, _ = parse_safetensors(self.read('p.safetensors'))
        self.assertEqual(tensors['p'][2], struct.pack('<2I', 0x7FC00000, 0x7FC00000))

    def test_replaces_an_existing_output(self):
        self.write('in.safetensors', build([('w', 'U8', [1], b'\x01')]))
        self.write('x.serio', b'old')
        self.convert('in.safetensors', 'x.serio')
        self.assertEqual(serio_records(self.read('x.serio')), [('w@uint8[1]', [1])])


# --- serio files to .safetensors -------------------------------------------------

class FromSerioTests(SafetensorsTestCase):

    def test_typed_and_float64_records(self):
        text = (record('serio.metadata.format@uint8[2]', [112, 116]) +
                record('b[2x2]', [1.0, 2.5, -0.0, 5e-324]) +
                record('a@int8[2]', [-1, 7]) +
                record('v', [0.1]) +
                record('s@bool[]', [1])).encode()
        self.write('in.serio', text)
        self.convert('in.serio', 'out.safetensors')
        out = self.read('out.safetensors')
        tensors = {'b': ('F64', [2, 2], struct.pack('<4d', 1.0, 2.5, -0.0, 5e-324)),
                   'a': ('I8', [2], struct.pack('<2b', -1, 7)),
                   'v': ('F64', [1], struct.pack('<d', 0.1)),
                   's': ('BOOL', [], b'\x01')}
        self.assertEqual(out, reference_layout(tensors, {'format': 'pt'}))

    def test_from_standard_input(self):
        text = (record('w@float32[3]', [1.0, 0.5, -2.0]) + record('z', [3.0])).encode()
        self.convert('-', 'out.safetensors', stdin=text)
        _, tensors, _ = parse_safetensors(self.read('out.safetensors'))
        self.assertEqual(tensors, {'w': ('F32', [3], struct.pack('<3f', 1.0, 0.5, -2.0)),
                                   'z': ('F64', [1], struct.pack('<d', 3.0))})

    def test_values_are_spooled_in_tmpdir(self):
        # More than the spool's 256 KiB in memory: the rest goes to an
        # unlinked file in $TMPDIR, which must exist.
        values = [float(i) for i in range(100_000)]
        self.write('in.serio', record('w', values).encode())
        self.write('out.safetensors', b'old')
        proc = self.run_tool('convert', 'in.serio', 'out.safetensors', status=2,
                             env={'TMPDIR': os.path.join(self.dir, 'missing')})
        self.assertIn('serio-convert-', proc.stderr.decode())
        self.assertEqual(self.read('out.safetensors'), b'old')
        os.mkdir(self.path('tmp'))
        self.run_tool('convert', 'in.serio', 'out.safetensors', status=0,
                      env={'TMPDIR': os.path.join(self.dir, 'tmp')})
        self.assertEqual(os.listdir(self.path('tmp')), [])
        _, tensors, _ = parse_safetensors(self.read('out.safetensors'))
        self.assertEqual(tensors, {'w': ('F64', [100_000], struct.pack('<100000d', *values))})

    def test_other_metadata_is_left_out_with_a_note(self):
        text = (record('w', [1.0]) + record('serio.tree', [0.0])).encode()
        self.write('in.serio', text)
        proc = self.convert('in.serio', 'out.safetensors')
        self.assertIn('serio.tree', proc.stderr.decode())
        self.assertIn('left out', proc.stderr.decode())
        _, tensors, _ = parse_safetensors(self.read('out.safetensors'))
        self.assertEqual(list(tensors), ['w'])

    def refuse_serio(self, text, *needles):
        self.write('in.serio', text.encode())
        self.write('out.safetensors', b'old')
        before = sorted(os.listdir(self.dir))
        proc = self.convert('in.serio', 'out.safetensors', status=1)
        err = proc.stderr.decode()
        self.assertIn('in.serio', err)
        for needle in needles:
            self.assertIn(needle, err)
        self.assertEqual(self.read('out.safetensors'), b'old')
        self.assertEqual(sorted(os.listdir(self.dir)), before)

    def test_duplicate_base_names_are_refused(self):
        self.refuse_serio(record('w[2]', [1, 2]) + record('w@int8[1]', [3]), '“w”', 'one tensor per name')

    def test_an_array_called_metadata_is_refused(self):
        self.refuse_serio(record('__metadata__', [1]), '__metadata__')

    def test_metadata_record_of_another_type_is_refused(self):
        self.refuse_serio(record('serio.metadata.k@int8[1]', [1]), 'serio.metadata.k', 'uint8')

    def test_metadata_record_that_is_not_utf8_is_refused(self):
        self.refuse_serio(record('serio.metadata.k@uint8[1]', [255]), 'UTF-8')

    def test_a_damaged_serio_file_is_refused(self):
        self.write('in.serio', (record('w', [1.0]) + 'v1|v|2|1\n').encode())
        self.write('out.safetensors', b'old')
        proc = self.convert('in.serio', 'out.safetensors', status=1)
        self.assertIn('in.serio:2', proc.stderr.decode())
        self.assertEqual(self.read('out.safetensors'), b'old')


# --- Every strictness rule --------------------------------------------------------

T = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
ONE = struct.pack('<f', 1.0)


class StrictTests(SafetensorsTestCase):

    def test_shorter_than_the_length(self):
        self.assert_refused(b'\x08\0\0', 'shorter than the 8 bytes')

    def test_header_over_100_mb(self):
        self.assert_refused(struct.pack('<Q', 100_000_001) + b'{}' + b' ' * 6,
                            '100000001 bytes', 'over the 100000000')

    def test_header_longer_than_the_file(self):
        self.assert_refused(struct.pack('<Q', 64) + b'{}', 'longer than the 2 bytes')

    def test_leading_whitespace(self):
        self.assert_refused(raw_file(' {"w":%s}' % T, ONE), 'starts with whitespace')

    def test_not_an_object(self):
        for header in ('[]', '"w"', '7', 'null'):
            with self.subTest(header=header):
                self.assert_refused(raw_file(header + ' ' * (-len(header) % 8)), 'not a JSON object')

    def test_invalid_json(self):
        for header, what in (('{"w":%s' % T, '“}” was expected'),
                             ('{"w":%s,}' % T, 'a string was expected'),
                             ('{"w" %s}' % T, '“:” was expected'),
                             ('{"w":%s}x' % T, 'only the spaces of padding'),
                             ('{"w":%s}\n' % T, 'only the spaces of padding'),
                             ('{"w\x01":%s}' % T, 'control character'),
                             ('{"w\\q":%s}' % T, 'unknown escape'),
                             ('{"w":%s}' % T.replace('[0,4]', '[0,04]'), 'leading zero'),
                             ('{"w":%s}' % T.replace('[0,4]', '[0,4.0]'), 'non-negative integer'),
                             ('{"w":%s}' % T.replace('[1]', '[-1]'), 'non-negative integer'),
                             ('{"w":%s}' % T.replace('[1]', '[18446744073709551616]'), 'too large')):
            with self.subTest(header=header):
                self.assert_refused(raw_file(header, ONE), 'not valid JSON at byte', what)

    def test_bad_utf8(self):
        self.assert_refused(raw_file(b'{"w\xff":' + T.encode() + b'}', ONE),
                            'not valid UTF-8 (byte 3)')

    def test_lone_surrogate(self):
        self.assert_refused(raw_file('{"w\\ud800":%s}' % T, ONE), 'lone surrogate')

    def test_nul_in_a_name(self):
        self.assert_refused(raw_file('{"w\\u0000":%s}' % T, ONE), 'U+0000')

    def test_duplicate_names(self):
        self.assert_refused(raw_file('{"w":%s,"w":%s}' % (T, T.replace('[0,4]', '[4,8]')), ONE * 2),
                            'tensor “w”', 'given twice')

    def test_duplicate_fields(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('}', ',"shape":[1]}'), ONE),
                            'tensor “w”', 'the field “shape” is given twice')

    def test_unknown_field(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('}', ',"offset":0}'), ONE),
                            'tensor “w”', 'unknown field “offset”')

    def test_missing_field(self):
        self.assert_refused(raw_file('{"w":{"dtype":"F32","shape":[1]}}', ONE),
                            'tensor “w”', 'has no “data_offsets”')

    def test_tensor_entry_not_an_object(self):
        self.assert_refused(raw_file('{"w":[1]}'), 'tensor “w”', 'not a JSON object')

    def test_unknown_dtype(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('F32', 'Q8')), 'tensor “w”',
                            'unknown dtype “Q8”')

    def test_dtypes_serio_has_not_are_refused_by_name(self):
        for dtype in ('F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'F4', 'F6_E2M3', 'F6_E3M2', 'C64'):
            with self.subTest(dtype=dtype):
                self.assert_refused(raw_file('{"w":%s}' % T.replace('F32', dtype), ONE),
                                    'tensor “w”', 'the dtype %s has no serio element type' % dtype)

    def test_shape_disagrees_with_the_offsets(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('[1]', '[2]'), ONE),
                            'tensor “w”', 'shape [2] of F32', 'the 4 bytes')

    def test_shape_product_beyond_64_bits(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('[1]', '[4294967296,4294967296]'), ONE),
                            'tensor “w”', 'the 4 bytes')

    def test_too_many_dimensions(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('[1]', '[' + ','.join(['1'] * 33) + ']'),
                                     ONE), 'tensor “w”', 'more than 32 dimensions')

    def test_offsets_backwards(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('[0,4]', '[4,0]'), ONE),
                            'tensor “w”', 'end before they begin')

    def test_hole(self):
        header = '{"a":%s,"b":%s}' % (T, T.replace('[0,4]', '[8,12]'))
        self.assert_refused(raw_file(header, ONE * 3), 'tensor “b”', 'hole from byte 4')

    def test_hole_at_the_start(self):
        self.assert_refused(raw_file('{"w":%s}' % T.replace('[0,4]', '[4,8]'), ONE * 2),
                            'tensor “w”', 'hole from byte 0')

    def test_overlap(self):
        header = '{"a":%s,"b":%s}' % (T.replace('[1]', '[2]').replace('[0,4]', '[0,8]'),
                                      T.replace('[0,4]', '[4,8]'))
        self.assert_refused(raw_file(header, ONE * 2), 'tensor “b”', 'overlaps that of tensor “a”')

    def test_bytes_after_the_last_tensor(self):
        self.assert_refused(raw_file('{"w":%s}' % T, ONE + b'\0'), '1 bytes follow')

    def test_data_shorter_than_the_tensors(self):
        self.assert_refused(raw_file('{"w":%s}' % T, ONE[:3]), 'take 4 bytes of data, and the file holds 3')

    def test_metadata_must_be_strings(self):
        for meta in ('{"k":1}', '[]', 'null', '{"k":null}'):
            with self.subTest(meta=meta):
                self.assert_refused(raw_file('{"__metadata__":%s,"w":%s}' % (meta, T), ONE),
                                    'not valid JSON')

    def test_duplicate_metadata(self):
        self.assert_refused(raw_file('{"__metadata__":{"k":"a","k":"b"},"w":%s}' % T, ONE),
                            'the metadata key “k” is given twice')
        self.assert_refused(raw_file('{"__metadata__":{},"__metadata__":{},"w":%s}' % T, ONE),
                            '“__metadata__” is given twice')

    def test_names_serio_cannot_hold(self):
        self.assert_refused(raw_file('{"a|b":%s}' % T, ONE), 'tensor “a|b”', '“|”, CR or LF')
        self.assert_refused(raw_file('{"a\\nb":%s}' % T, ONE), 'tensor “a\\x0Ab”', '“|”, CR or LF')
        self.assert_refused(raw_file('{"serio.x":%s}' % T, ONE), 'tensor “serio.x”', 'reserved')
        self.assert_refused(raw_file('{"__metadata__":{"a|b":""},"w":%s}' % T, ONE),
                            'metadata key “a|b”')

    def test_float64_name_ending_in_a_type_marker(self):
        self.assert_refused(raw_file('{"w@int8":%s}' % T.replace('F32', 'F64').replace('4]', '8]'),
                                     ONE * 2), 'tensor “w@int8”', 'type marker')

    def test_values_serio_cannot_hold(self):
        # A BOOL byte other than 0 and 1; an I64 that no double holds.
        self.assert_refused(build([('m', 'BOOL', [2], b'\x01\x02')]), 'tensor “m”')
        self.assert_refused(build([('i', 'I64', [2], struct.pack('<2q', 1, 2 ** 53 + 1))]),
                            'tensor “i”', '9007199254740993')

    def test_errors_are_not_confused_with_a_usage_error(self):
        self.write('in.safetensors', build([('w', 'U8', [1], b'\x01')]))
        proc = self.convert('in.safetensors', 'out.npy', status=2)
        self.assertIn('exactly one of the files', proc.stderr.decode())
        proc = self.convert('in.safetensors', 'out.serio', '--name', 'w', status=2)
        self.assertIn('--name', proc.stderr.decode())


# --- Memory --------------------------------------------------------------------

class MemoryTests(SafetensorsTestCase):

    # The tool's peak RSS in KiB, measured as for the NumPy conversions.
    run_measured = ConvertStreamTests.run_measured

    @unittest.skipIf(numpy is None, 'NumPy is not installed')
    def test_peak_memory_is_bounded(self):
        # 2x10^7 float32 of random bits (80 MB of data, some 250 MB of
        # serio text), in two tensors, and a large header's worth of
        # metadata.
        rng = numpy.random.default_rng(19)
        bits = rng.integers(0, 2 ** 32, size=RSS_VALUES, dtype=numpy.uint32)
        values = bits.view('<f4').copy()
        values[numpy.isnan(values)] = numpy.float32('nan')
        half = RSS_VALUES // 2
        with open(self.path('big.safetensors'), 'wb') as f:
            header = json.dumps({
                'a': {'dtype': 'F32', 'shape': [half // 1000, 1000], 'data_offsets': [0, 4 * half]},
                'b': {'dtype': 'F32', 'shape': [half], 'data_offsets': [4 * half, 8 * half]},
            }, separators=(',', ':')).encode()
            header += b' ' * (-len(header) % 8)
            f.write(struct.pack('<Q', len(header)) + header)
            values.tofile(f)
        for args in (('convert', 'big.safetensors', 'big.serio'),
                     ('convert', 'big.serio', 'back.safetensors')):
            with self.subTest(args=args):
                rss = self.run_measured(*args)
                if not base.tool_is_sanitized():
                    self.assertLessEqual(rss, RSS_LIMIT_KIB, 'peak RSS %d KiB' % rss)
        self.assertGreater(os.path.getsize(self.path('big.serio')), 100 << 20)
        with open(self.path('back.safetensors'), 'rb') as f, \
                open(self.path('big.safetensors'), 'rb') as g:
            while True:
                a, b = f.read(1 << 20), g.read(1 << 20)
                self.assertEqual(a, b)
                if not a:
                    break


if __name__ == '__main__':
    # Called as test_serio_tool.py is: SERIO VERSION [unittest arguments].
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
