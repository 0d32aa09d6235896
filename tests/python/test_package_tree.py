# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio.save()/serio.load() of trees: every leaf type back with its type
and its bits, the record names C and the CLI see, what is refused (naming
the key path, nothing written) and what a hostile serio.tree gets.

Bits are compared as bytes (ndarray.tobytes(), struct.pack), never with ==
on floats. Exits 77 (skip) without NumPy.
"""

import collections
import inspect
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from package_common import Gio, GLib, Serio, numpy, serio, torch


def stored_names(path):
    """The stored names of a file's records, as a C reader sees them."""
    reader = Serio.Reader.new(Gio.File.new_for_path(path).read(None))
    names = []
    while reader.next(None):
        names.append(reader.get_name())
        reader.skip_array(None)
    return names


def write_records(path, records):
    """A plain v1 file of (stored name, values) records, whatever the
    values (the library would refuse to append a value its type cannot
    hold): the tokens are the library's, of float64 arrays named r0, r1,
    ..., whose names are then replaced."""
    bundle = Serio.Bundle.new()
    for index, (_, values) in enumerate(records):
        bundle.append('r%d' % index, [float(v) for v in values])
    text = bundle.to_bytes(Serio.SaveFlags.PLAIN).get_data()
    lines = text.split(b'\n')
    for index, (name, _) in enumerate(records):
        prefix = b'v1|r%d|' % index
        assert lines[index].startswith(prefix)
        lines[index] = b'v1|' + name.encode('utf-8') + b'|' + lines[index][len(prefix):]
    with open(path, 'wb') as f:
        f.write(b'\n'.join(lines))


def tree_record(document):
    """The serio.tree record of a JSON document (a str or an object)."""
    text = document if isinstance(document, (str, bytes)) else json.dumps(document)
    data = text if isinstance(text, bytes) else text.encode('utf-8', 'surrogatepass')
    return ('serio.tree@uint8[%d]' % len(data), list(data))


def tree(root):
    return {'format': 'serio.tree', 'version': 1, 'root': root}


def bits(value):
    return struct.pack('<d', value)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name='state.serio'):
        return os.path.join(self.tmp.name, name)

    def assert_same(self, a, b, where='root'):
        """a and b are the same tree: the same types all the way down, the
        same keys in the same order, the same bits at the leaves."""
        self.assertIs(type(a), type(b), where)
        if isinstance(a, dict):
            self.assertEqual([(type(k), k) for k in a], [(type(k), k) for k in b], where)
            for key in a:
                self.assert_same(a[key], b[key], '%s.%s' % (where, key))
        elif isinstance(a, (list, tuple)):
            self.assertEqual(len(a), len(b), where)
            for index, (x, y) in enumerate(zip(a, b)):
                self.assert_same(x, y, '%s.%d' % (where, index))
        elif isinstance(a, numpy.ndarray) or isinstance(a, numpy.generic):
            self.assertEqual(a.dtype, b.dtype, where)
            self.assertEqual(a.shape, b.shape, where)
            self.assertEqual(numpy.asarray(a).tobytes(), numpy.asarray(b).tobytes(), where)
        elif torch is not None and isinstance(a, torch.Tensor):
            self.assertEqual(a.dtype, b.dtype, where)
            self.assertEqual(tuple(a.shape), tuple(b.shape), where)
            self.assertEqual(a.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes(),
                             b.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes(),
                             where)
        elif isinstance(a, float):
            self.assertEqual(bits(a), bits(b), where)
        else:
            self.assertEqual(a, b, where)


class TestRoundTrip(Base):
    def every_leaf(self):
        rng = numpy.random.default_rng(20261201)
        state = {
            'f64': rng.standard_normal((2, 3)),
            'f32': rng.standard_normal(5).astype(numpy.float32),
            'f16': rng.standard_normal((1, 4)).astype(numpy.float16),
            'i8': numpy.array([-128, 0, 127], dtype=numpy.int8),
            'i16': numpy.array([-32768, 32767], dtype=numpy.int16),
            'i32': numpy.array([[-2 ** 31, 2 ** 31 - 1]], dtype=numpy.int32),
            'i64': numpy.array([-2 ** 53, 2 ** 53, 2 ** 62, -2 ** 63], dtype=numpy.int64),
            'u8': numpy.arange(256, dtype=numpy.uint8),
            'u16': numpy.array([0, 65535], dtype=numpy.uint16),
            'u32': numpy.array([2 ** 32 - 1], dtype=numpy.uint32),
            'u64': numpy.array([2 ** 63, 2 ** 53], dtype=numpy.uint64),
            'bool': numpy.array([[True, False], [False, True]]),
            'zero-d': numpy.array(0.1),
            'empty': numpy.zeros((0, 3), dtype=numpy.float32),
            'specials': numpy.array([-0.0, math.inf, -math.inf, 5e-324]),
            'np-scalar': numpy.float32(0.1),
            'np-int': numpy.int64(-7),
            'np-bool': numpy.bool_(True),
            'int': 3, 'big-int': 2 ** 60, 'neg-int': -2 ** 53,
            'float': 0.1, 'neg-zero': -0.0, 'true': True, 'false': False,
            'none': None, 'str': 'run-1 ✓', 'empty-str': '', 'bytes': b'\x00\xff\n|',
            'tuple': (1, (2.5, None), []), 'list': [[], {}, ()],
            0: 'int key', -1: {'x': 1}, 2 ** 70: 'a big int key',
            'odict': collections.OrderedDict([('b', 1), ('a', 2)]),
        }
        if torch is not None:
            state['tensors'] = {
                'f32': torch.randn(3, 2),
                'bf16': torch.tensor([1.0, -2.5, 3.0e38, 1.0 / 128], dtype=torch.bfloat16),
                'f16': torch.tensor([65504.0, -0.0], dtype=torch.float16),
                'i64': torch.tensor([2 ** 53, -3]),
                'u8': torch.tensor([0, 255], dtype=torch.uint8),
                'bool': torch.tensor([True, False]),
                'strided': torch.arange(12.0).reshape(3, 4).t(),
                'zero-d': torch.tensor(3.0),
            }
        return state

    def test_every_leaf_type_comes_back_with_its_type_and_bits(self):
        state = self.every_leaf()
        for sealed in (True, False):
            serio.save(self.path(), state, sealed=sealed)
            self.assert_same(state if torch is None else self.contiguous(state),
                             serio.load(self.path()))

    def contiguous(self, state):
        # A transposed tensor comes back in C order with the same values.
        state = dict(state)
        state['tensors'] = dict(state['tensors'])
        state['tensors']['strided'] = state['tensors']['strided'].contiguous()
        return state

    def test_the_file_is_plain_v1_and_every_leaf_a_record_by_name(self):
        state = {'model': {'fc.weight': numpy.zeros((2, 3), dtype=numpy.float32)},
                 'optimizer': {'state': {0: {'exp_avg': numpy.zeros(10, numpy.float32),
                                             'step': 3}},
                               'param_groups': [{'lr': 0.5, 'betas': (0.9, 0.999),
                                                 'name': 'g', 'foreach': None}]},
                 'epoch': 3, 'flag': True, 'mask': numpy.ones(2, dtype=bool)}
        serio.save(self.path(), state, sealed=False)
        names = stored_names(self.path())
        self.assertTrue(names[0].startswith('serio.tree@uint8['), names)
        self.assertEqual(names[1:], [
            'model.fc.weight@float32[2x3]',
            'optimizer.state.0.exp_avg@float32[10]',
            'optimizer.state.0.step@int64[]',
            'optimizer.param_groups.0.lr[]',
            'optimizer.param_groups.0.betas.0[]',
            'optimizer.param_groups.0.betas.1[]',
            'epoch@int64[]',
            'flag@bool[]',
            'mask@bool[2]',
        ])
        # Each a plain v1 record of exact tokens: a reader that knows
        # nothing of types reads the values as float64.
        bundle = Serio.Bundle.new_from_file(Gio.File.new_for_path(self.path()), None)
        index = [bundle.get_name(i) for i in range(bundle.get_n_arrays())].index(
            'optimizer.param_groups.0.lr[]')
        self.assertEqual(bundle.get_bytes(index).get_data(), struct.pack('=d', 0.5))
        with open(self.path(), encoding='utf-8') as f:
            self.assertIn('v1|epoch@int64[]|1|3\n', f.read())

    def test_keys_are_escaped_in_names_and_come_back_whole(self):
        state = {'a.b': 1, 'w@int8': 2.5, 'x[2]': 3, 'p|q': 4, 'per%cent': 5, 'l\nf': 6,
                 'serio': {'tree': 7}, 'serio.sealed': 8, '': 9, 'ü': 10}
        serio.save(self.path(), state, sealed=False)
        names = stored_names(self.path())[1:]
        self.assertEqual(names, ['a.b@int64[]', 'w%40int8[]', 'x%5B2%5D@int64[]',
                                 'p%7Cq@int64[]', 'per%25cent@int64[]', 'l%0Af@int64[]',
                                 '%73erio.tree@int64[]', '%73erio.sealed@int64[]',
                                 '@int64[]', 'ü@int64[]'])
        self.assert_same(state, serio.load(self.path()))

    def test_names_loads_subtrees_and_leaves_only(self):
        state = {'model': {'w': numpy.arange(3.0)}, 'epoch': 4, 'name': 'r',
                 'optimizer': {'state': {0: {'m': numpy.ones(2, numpy.float32)}}}}
        serio.save(self.path(), state)
        got = serio.load(self.path(), names=['model', 'optimizer.state.0.m', 'name'])
        self.assert_same({'model': state['model'],
                          'optimizer.state.0.m': state['optimizer']['state'][0]['m'],
                          'name': 'r'}, got)
        with self.assertRaises(KeyError) as caught:
            serio.load(self.path(), names=['model', 'nope'])
        self.assertIn("'nope'", str(caught.exception))
        with self.assertRaises(TypeError):
            serio.load(self.path(), names='model')

    def test_a_flat_file_loads_as_a_dict_of_arrays(self):
        write_records(self.path(), [('w[2x2]', [1, 2, 3, 4]), ('b', [0.5]),
                                    ('i@int16[2]', [-1, 7]), ('w[4]', [9, 9, 9, 9])])
        got = serio.load(self.path())
        self.assertEqual(list(got), ['w', 'b', 'i'])
        self.assert_same(numpy.array([[1.0, 2], [3, 4]]), got['w'])
        self.assert_same(numpy.array([0.5]), got['b'])
        self.assert_same(numpy.array([-1, 7], dtype=numpy.int16), got['i'])
        self.assert_same({'b': numpy.array([0.5])}, serio.load(self.path(), names=['b']))

    def test_serio_numpy_savez_and_load(self):
        w = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
        serio.numpy.savez(self.path(), w, mask=numpy.array([True, False]))
        self.assertEqual(stored_names(self.path()), ['arr_0@float32[2x3]', 'mask@bool[2]'])
        got = serio.numpy.load(self.path())
        self.assert_same({'arr_0': w, 'mask': numpy.array([True, False])}, got)
        # A tree file, as records by key path.
        serio.save(self.path(), {'m': {'w': w}, 'n': 2})
        self.assert_same({'m.w': w, 'n': numpy.array(2)}, serio.numpy.load(self.path()))


class TestPackage(unittest.TestCase):
    def test_one_import_documented_and_typed(self):
        # A fresh interpreter: import serio alone is enough.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'n.serio')
            child = subprocess.run([sys.executable, '-B', '-c',
                                    'import serio, sys; '
                                    'serio.save(sys.argv[1], {"n": 1}); '
                                    'print(serio.load(sys.argv[1]))', path],
                                   capture_output=True, text=True, check=False)
        self.assertEqual((child.returncode, child.stdout), (0, "{'n': 1}\n"), child.stderr)
        for module in (serio, serio.numpy, serio.torch):
            self.assertTrue(module.__doc__, module)
            for name in module.__all__:
                value = getattr(module, name)
                if callable(value):
                    self.assertTrue(value.__doc__, name)
                if inspect.isfunction(value):
                    signature = inspect.signature(value)
                    self.assertIsNot(signature.return_annotation, inspect.Signature.empty, name)
                    for parameter in signature.parameters.values():
                        self.assertIsNot(parameter.annotation, inspect.Parameter.empty,
                                         (name, parameter.name))
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(serio.__file__),
                                                    'py.typed')))


class TestRefused(Base):
    def assert_refused(self, state, key, *words):
        path = self.path()
        with open(path, 'w', encoding='ascii') as f:
            f.write('old\n')
        with self.assertRaises(serio.UnstorableError) as caught:
            serio.save(path, state)
        error = caught.exception
        self.assertIsInstance(error, TypeError)
        self.assertIsInstance(error, ValueError)
        self.assertIsInstance(error, GLib.Error)
        self.assertEqual(error.key, key)
        self.assertTrue(str(error).startswith(key + ': '), str(error))
        for word in words:
            self.assertIn(word, str(error))
        with open(path, encoding='ascii') as f:
            self.assertEqual(f.read(), 'old\n')
        self.assertEqual(os.listdir(self.tmp.name), ['state.serio'])

    def test_what_cannot_be_stored_exactly_is_refused_by_key_path(self):
        self.assert_refused({'optimizer': {'state': {0: {'step': 2 ** 53 + 1}}}},
                            'optimizer.state.0.step', '9007199254740993')
        self.assert_refused({'a': [1, 2 ** 63]}, 'a.1', str(2 ** 63))
        self.assert_refused({'a': {'b': object()}}, 'a.b', 'object')
        self.assert_refused({'c': numpy.array([1j])}, 'c', 'complex128')
        self.assert_refused({'o': numpy.array(['x'], dtype=object)}, 'o', 'object')
        self.assert_refused({'l': numpy.array([1.0], dtype=numpy.longdouble)}, 'l')
        self.assert_refused({'u': numpy.array([2 ** 53 + 1], dtype=numpy.uint64)}, 'u',
                            '9007199254740993')
        self.assert_refused({'s': 'a\ud800b'}, 's', 'surrogate')
        self.assert_refused({'k': {'\udc80': 1}}, 'k.\udc80', 'surrogate')
        self.assert_refused({'k': {1.5: 1}}, 'k', 'float key')
        self.assert_refused({'k': {True: 1}}, 'k', 'bool key')
        self.assert_refused({'ba': bytearray(b'x')}, 'ba', 'bytearray')
        self.assert_refused({'a.b': 1, 'a': {'b': 2}}, 'a.b', 'same record name')
        self.assert_refused({0: 1, '0': 2}, '0', 'same record name')
        deep = {}
        node = deep
        for _ in range(100):
            node['x'] = {}
            node = node['x']
        self.assert_refused(deep, '.'.join(['x'] * 64), 'nested deeper')
        loop = {}
        loop['self'] = loop
        self.assert_refused(loop, '.'.join(['self'] * 64), 'a cycle')
        with self.assertRaises(serio.UnstorableError):
            serio.save(self.path(), numpy.zeros(3))

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_tensors_that_cannot_be_stored_are_refused(self):
        self.assert_refused({'t': torch.tensor([2 ** 53 + 1])}, 't', '9007199254740993')
        self.assert_refused({'t': torch.tensor([1 + 2j])}, 't', 'complex')
        self.assert_refused({'t': torch.eye(2).to_sparse()}, 't', 'sparse')


class TestHostileTree(Base):
    """What a serio.tree that lies or is not well formed gets: a DataError
    (a ValueError) naming the file, and the key path where there is one."""

    def assert_invalid(self, records, *words, key=None):
        write_records(self.path(), records)
        with self.assertRaises(serio.DataError) as caught:
            serio.load(self.path())
        error = caught.exception
        self.assertIsInstance(error, ValueError)
        self.assertTrue(str(error).startswith(self.path() + ': '), str(error))
        self.assertEqual(error.key, key)
        for word in words:
            self.assertIn(word, str(error))
        return error

    def test_malformed_documents(self):
        leaf = {'dict': [['x', {'leaf': 'int'}]]}
        int_record = ('x@int64[]', [1])
        self.assert_invalid([tree_record(b'{"format"\xff')], 'not UTF-8')
        self.assert_invalid([tree_record('{"format": ')], 'not valid JSON')
        self.assert_invalid([tree_record(json.dumps(tree(leaf))[:-1] + ',"root":1}')],
                            'repeats a member')
        self.assert_invalid([tree_record(dict(tree(leaf), extra=1))], 'not a serio.tree')
        self.assert_invalid([tree_record(dict(tree(leaf), version=2))], 'version 2')
        self.assert_invalid([tree_record(tree({'leaf': 'int'}))], 'root')
        self.assert_invalid([tree_record(tree({'dict': [[1.5, None]]}))], 'not an integer')
        self.assert_invalid([tree_record(tree({'dict': [[True, None]]}))],
                            'neither a str nor an int')
        self.assert_invalid([tree_record(tree({'dict': [['a', None], ['a', None]]}))],
                            'repeated')
        # a leaf's key repeated; an int key and a str one of one name
        self.assert_invalid([tree_record(tree({'dict': [['a', {'leaf': 'int'}],
                                                        ['a', {'leaf': 'int'}]]}))],
                            "the key 'a' is repeated")
        self.assert_invalid([tree_record(tree({'dict': [[1, {'leaf': 'int'}],
                                                        ['1', {'leaf': 'int'}]]}))],
                            "the record name '1'", key='1')
        self.assert_invalid([tree_record(tree({'dict': [['1', None], [1, None]]}))],
                            "the record name '1'", key='1')
        self.assert_invalid([tree_record(tree({'dict': [['a', {'leaf': 'pickle'}]]}))],
                            "'pickle'", key='a')
        # a kind that is not a str (a list or an object cannot be looked up
        # in a set), as a dict's item and as a list's
        for kind in (['ndarray'], {'x': 1}, 1):
            for root in ({'dict': [['a', {'leaf': kind}]]}, {'list': [{'leaf': kind}]}):
                self.assert_invalid([tree_record(tree(root))], 'unknown leaf kind',
                                    key='a' if 'dict' in root else '0')
        self.assert_invalid([tree_record(tree({'dict': [['a', {'set': []}]]}))], 'unknown node',
                            key='a')
        self.assert_invalid([tree_record(tree({'dict': [['a', 1]]}))], 'a node', key='a')
        self.assert_invalid([tree_record('{"format":"serio.tree","version":1,"root":'
                                         '{"dict":[["a","\\ud800"]]}}')],
                            'surrogate', key='a')
        self.assert_invalid([tree_record('{"format":"serio.tree","version":1,"root":'
                                         '{"dict":[["\\udfff",null]]}}')], 'surrogate')
        self.assert_invalid([tree_record(tree({'dict': [['a.b', None],
                                                        ['a', {'dict': [['b', None]]}]]}))],
                            'the record name', key='a.b')
        # the same for leaves, which the parser makes on a shorter path
        self.assert_invalid([tree_record(tree({'dict': [['a', {'dict': [['b', {'leaf': 'int'}]]}],
                                                        ['a.b', {'leaf': 'int'}]]}))],
                            'the record name', key='a.b')
        self.assert_invalid([tree_record(tree({'dict': [['a', {'leaf': 'int', 'x': 1}]]}))],
                            'a node', key='a')
        deep = {'leaf': 'int'}
        for _ in range(100):
            deep = {'list': [deep]}
        self.assert_invalid([tree_record(tree(deep))], 'nested', key='.'.join(['0'] * 64))
        self.assert_invalid([tree_record(tree(leaf)), int_record, int_record],
                            'not in the tree')
        self.assert_invalid([tree_record(tree(leaf))], 'ends before', key='x')

    def test_records_that_the_tree_does_not_describe(self):
        leaf = tree({'dict': [['x', {'leaf': 'int'}], ['y', {'leaf': 'bytes'}]]})
        self.assert_invalid([tree_record(leaf), ('y@uint8[1]', [1]), ('x@int64[]', [1])],
                            "'y@uint8[1]'", key='x')
        self.assert_invalid([tree_record(leaf), ('x[]', [1]), ('y@uint8[1]', [1])],
                            'float64 record', key='x')
        self.assert_invalid([tree_record(leaf), ('x@int64[1]', [1]), ('y@uint8[1]', [1])],
                            '1 dimensions', key='x')
        self.assert_invalid([tree_record(leaf), ('x@int64[]', [1]), ('y@int8[1]', [1])],
                            'int8 record', key='y')
        self.assert_invalid([('x@int64[]', [1]), tree_record(leaf)], 'first')

    def test_values_that_do_not_fit_their_type_name_the_key(self):
        doc = tree({'dict': [['opt', {'dict': [['step', {'leaf': 'int'}]]}]]})
        error = self.assert_invalid([tree_record(doc), ('opt.step@int64[]', [0.5])],
                                    key='opt.step')
        self.assertEqual(error.code, int(Serio.Error.DOMAIN))


class TestTensorBatches(Base):
    """serio.load makes the tensors of a batch of tensor leaves in one go:
    the same tensors, and the same error for an array torch refuses, as a
    record at a time."""

    def load_both(self, path):
        """(the state or the error) of path, with the batch's tensors made
        at once and a record at a time, and how often they were made at
        once."""
        made, taken = [], []
        tensors_of = serio._io.tensors_of

        def counted(*args):
            tensors = tensors_of(*args)
            taken.append(tensors is not None)
            return tensors

        for patched in (counted, lambda *args: None):
            with mock.patch.object(serio._io, 'tensors_of', patched):
                try:
                    made.append(serio.load(path))
                except serio.DataError as error:
                    made.append((str(error), error.key, error.code))
        if isinstance(made[0], tuple):
            self.assertEqual(made[0], made[1])
        else:
            self.assert_same(made[0], made[1])
        return made[0], sum(taken)

    def test_tensors_made_at_once_are_those_of_a_record_at_a_time(self):
        if torch is None:
            self.skipTest('no PyTorch')
        g = torch.Generator().manual_seed(3)
        weights = {'layer%d.weight' % i: torch.randn(5, 3, generator=g) for i in range(30)}
        mixed = dict(weights, bf=torch.randn(4, generator=g).to(torch.bfloat16),
                     half=torch.randn(4, generator=g).half(), step=torch.tensor(7, dtype=torch.int32))
        for what, state in (('float32', weights), ('with bfloat16 and others', mixed)):
            with self.subTest(what):
                serio.save(self.path(), state)
                loaded, taken = self.load_both(self.path())
                self.assertEqual(taken, 1)
                self.assert_same(loaded, state)
        # uint16, which torch 1.13 has no tensor of, under a tensor leaf
        document = tree({'dict': [['a', {'leaf': 'tensor'}], ['b', {'leaf': 'tensor'}]]})
        write_records(self.path(), [tree_record(document), ('a@float32[2]', [1, 2]),
                                    ('b@uint16[2]', [3, 4])])
        error, taken = self.load_both(self.path())
        try:
            torch.from_numpy(numpy.zeros(1, dtype=numpy.uint16))
        except TypeError:
            self.assertEqual(taken, 0)
            self.assertIn('cannot be a torch tensor', error[0])
            self.assertEqual(error[1:], ('b', int(Serio.Error.SYNTAX)))
        else:
            self.assertEqual(taken, 1)


class TestVectorBatches(Base):
    """serio.load hands out the vectors of a batch of one type as views of
    its buffer: runs of one count as the rows of one strided view, the
    others as slices; both give each record its own values."""

    def test_runs_of_one_length_and_others(self):
        rng = numpy.random.default_rng(11)

        def vectors(dtype, lengths):
            info = numpy.iinfo(dtype) if numpy.dtype(dtype).kind in 'iu' else None
            return {'v%d' % i: (rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
                                if info is not None else
                                rng.standard_normal(n).astype(dtype))
                    for i, n in enumerate(lengths)}

        states = {
            # back to back (24 bytes a record), and 12 bytes a record
            # padded to 16, 5 a record padded to 8: one strided view each
            'float32 x6': vectors(numpy.float32, [6] * 40),
            'float32 x3': vectors(numpy.float32, [3] * 40),
            'uint8 x5': vectors(numpy.uint8, [5] * 40),
            'float64 x1': vectors(numpy.float64, [1] * 40),
            # not one count: slices
            'float32 of many lengths': vectors(numpy.float32, rng.integers(1, 9, 40)),
            'int16, the last longer': vectors(numpy.int16, [4] * 39 + [5]),
            'int16, the first shorter': vectors(numpy.int16, [3] + [4] * 39),
            'float32 with empty ones': vectors(numpy.float32, [0, 2, 0, 2] * 10),
            'empty ones': vectors(numpy.float32, [0] * 20),
        }
        records_into = serio._io._native.records_into
        for what, state in states.items():
            with self.subTest(what):
                batches = []

                def counted(*args):
                    batches.append(records_into(*args))
                    return batches[-1]

                serio.save(self.path(), state)
                with mock.patch.object(serio._io._native, 'records_into', counted):
                    loaded = serio.load(self.path())
                self.assertEqual(sum(batches), len(state))
                self.assert_same(loaded, state)
                # each its own memory: writes to the others change none
                arrays = list(loaded.values())
                for i, a in enumerate(arrays):
                    a[...] = i + 1
                for i, a in enumerate(arrays):
                    self.assertTrue((a == i + 1).all(), '%s: %s' % (what, i))


class TestTemplate(unittest.TestCase):
    """serio.tree's parser makes a dict of leaves of one kind (a model's
    state_dict) in one pass of checks over all its items: the template it
    makes, and the error of every tree it declines, are those of the
    parser's item at a time path."""

    @staticmethod
    def describe(template):
        def node(value):
            if type(value) is int:
                return ('slot', value)
            if isinstance(value, serio._tree._Container):
                if value.kind in ('dict', 'odict'):
                    return (value.kind, [((type(k), k), node(v)) for k, v in value.items],
                            value.run)
                return (value.kind, [node(v) for v in value.items], value.run)
            return value

        return ([(s.keys, s.name, s.kind, s.index) for s in template.slots],
                [(name, node(value)) for name, value in template.nodes.items()],
                node(template.root))

    def parse_both(self, root):
        """(template or error message) of the tree of root, in the parser
        and with the one-pass path turned off, and how many dicts the
        one-pass path took."""
        data = json.dumps(tree(root), ensure_ascii=False).encode('utf-8')
        made = []
        taken = []
        one_pass = serio._tree._Parser.leaf_pairs

        def counted(parser, *args):
            took = one_pass(parser, *args)
            taken.append(took)
            return took

        for patched in (counted, lambda parser, *args: False):
            with mock.patch.object(serio._tree._Parser, 'leaf_pairs', patched):
                try:
                    made.append(self.describe(serio._tree.parse(data, 'f')))
                except serio.DataError as error:
                    made.append((str(error), error.key))
        self.assertEqual(made[0], made[1], root)
        return made[0], sum(taken)

    def test_one_pass_and_item_at_a_time_agree(self):
        leaves = lambda kind, keys: {'dict': [[k, {'leaf': kind}] for k in keys]}  # noqa: E731
        flat = ['layer%d.weight' % i for i in range(50)]
        taken = {
            'flat ndarrays': (leaves('ndarray', flat), 1),
            'flat tensors': (leaves('tensor', flat), 1),
            'one leaf': (leaves('int', ['step']), 1),
            'non-ASCII keys': (leaves('float', ['é', 'ß.λ', '日本']), 1),
            'nested, with a prefix': ({'dict': [['model', leaves('ndarray', flat)],
                                                ['opt', {'dict': [['state', leaves('tensor', ['0', '1'])]]}]]}, 2),
            'in a list': ({'list': [leaves('bytes', ['a', 'b']), leaves('bool', ['a'])]}, 2),
            # declined: an escape, a reserved name, under a reserved prefix,
            # an int key, two kinds, a container among leaves, nothing
            'an escaped key': (leaves('int', ['a', 'b@c', 'd']), 0),
            'a line feed in a key': (leaves('int', ['a', 'b\nc']), 0),
            'a reserved name': (leaves('int', ['a', 'serio.x']), 0),
            'a reserved name first': (leaves('int', ['serio.x', 'a']), 0),
            'under a reserved prefix': ({'dict': [['serio', leaves('int', ['x', 'y'])]]}, 0),
            'a key that only looks reserved': (leaves('int', ['serio', 'seriox', 's']), 1),
            'an int key': ({'dict': [['a', {'leaf': 'int'}], [1, {'leaf': 'int'}]]}, 0),
            'two kinds': ({'dict': [['a', {'leaf': 'int'}], ['b', {'leaf': 'float'}]]}, 0),
            'a container among leaves': ({'dict': [['a', {'leaf': 'int'}], ['b', {'list': []}]]}, 0),
            'a str among leaves': ({'dict': [['a', {'leaf': 'int'}], ['b', 'text']]}, 0),
            'empty': ({'dict': []}, 0),
            # declined, and refused by the item at a time path
            'a repeated key': (leaves('int', ['a', 'b', 'a']), 0),
            'a repeated key in a dict': ({'dict': [['m', leaves('int', ['a', 'b', 'a'])]]}, 0),
            'a name met before': ({'dict': [['a.b', None], ['a', leaves('int', ['b'])]]}, 0),
            'a name met after': ({'dict': [['a', leaves('int', ['b'])], ['a.b', {'leaf': 'int'}]]}, 1),
            'an unknown kind': (leaves('pickle', ['a', 'b']), 0),
            'a kind that is not a str': (leaves(['int'], ['a']), 0),
            'a leaf of two members': ({'dict': [['a', {'leaf': 'int', 'x': 1}]]}, 0),
            'a pair of three': ({'dict': [['a', {'leaf': 'int'}, 1]]}, 0),
        }
        for what, (root, want_taken) in taken.items():
            with self.subTest(what):
                made, n_taken = self.parse_both(root)
                self.assertEqual(n_taken, want_taken, made)
        self.assertIsInstance(self.parse_both(taken['flat ndarrays'][0])[0], tuple)
        for what, words in (('a repeated key', "the key 'a' is repeated"),
                            ('a name met before', "two key paths give the record name 'a.b'"),
                            ('a name met after', "two key paths give the record name 'a.b'"),
                            ('an unknown kind', "unknown leaf kind 'pickle'")):
            self.assertIn(words, self.parse_both(taken[what][0])[0][0], what)

    def test_the_text_of_a_dict_of_leaves(self):
        """The text that serio.save writes of a dict of leaves of one kind
        is taken as it is, without the JSON parser: the template, and the
        error of every text it declines, are the parser's."""
        leaves = lambda kind, keys: [[k, {'leaf': kind}] for k in keys]  # noqa: E731
        compact = lambda document: json.dumps(document, ensure_ascii=False,  # noqa: E731
                                              separators=(',', ':'))
        flat = ['layer%d.weight' % i for i in range(50)]
        head = '{"format":"serio.tree","version":1,"root":{"dict":'
        texts = {
            # taken
            'flat ndarrays': (compact(tree({'dict': leaves('ndarray', flat)})), True),
            'flat tensors': (compact(tree({'dict': leaves('tensor', flat)})), True),
            'one leaf': (compact(tree({'dict': leaves('int', ['step'])})), True),
            'an empty key': (compact(tree({'dict': leaves('int', [''])})), True),
            'non-ASCII keys': (compact(tree({'dict': leaves('float', ['é', 'ß.λ', '日本'])})),
                               True),
            'keys of spaces and brackets': (
                compact(tree({'dict': leaves('int', [' ', '}]', '],['])})), True),
            # taken, then declined by the checks of the keys: the parser's
            # errors or template
            'a repeated key': (compact(tree({'dict': leaves('int', ['a', 'b', 'a'])})), True),
            'a reserved name': (compact(tree({'dict': leaves('int', ['a', 'serio.x'])})), True),
            'a reserved name first': (compact(tree({'dict': leaves('int', ['serio.x', 'a'])})),
                                      True),
            'an escaped key': (compact(tree({'dict': leaves('int', ['a', 'b@c'])})), True),
            # declined
            'a quotation mark in a key': (compact(tree({'dict': leaves('int', ['a"b', 'c'])})),
                                          False),
            'the text between keys in a key': (
                compact(tree({'dict': leaves('int', ['a",{"leaf":"int"}],["b', 'c'])})), False),
            'a backslash in a key': (compact(tree({'dict': leaves('int', ['a\\b'])})), False),
            'a control character': (compact(tree({'dict': leaves('int', ['a\x01'])})), False),
            'a raw quotation mark': (head + '[["a"b",{"leaf":"int"}]]}}', False),
            'an item that is no pair': (head + '[["a",{"leaf":"int"}],"x",["b",{"leaf":"int"}]]}}',
                                        False),
            'a raw control character': (head + '[["a\x01",{"leaf":"int"}]]}}', False),
            'a raw line feed': (head + '[["a\nb",{"leaf":"int"}]]}}', False),
            'an escape of a letter': (head + '[["\\u0061",{"leaf":"int"}]]}}', False),
            'two kinds': (head + '[["a",{"leaf":"int"}],["b",{"leaf":"float"}]]}}', False),
            'an unknown kind': (head + '[["a",{"leaf":"pickle"}]]}}', False),
            'a leaf of two members': (head + '[["a",{"leaf":"int","leaf":"int"}]]}}', False),
            'spaces': (json.dumps(tree({'dict': leaves('int', ['a', 'b'])})), False),
            'members in another order': (
                '{"version":1,"format":"serio.tree","root":{"dict":[["a",{"leaf":"int"}]]}}',
                False),
            'a space after it': (compact(tree({'dict': leaves('int', ['a'])})) + ' ', False),
            'something after it': (compact(tree({'dict': leaves('int', ['a'])})) + '}', False),
            'cut short': (head + '[["a",{"leaf":"int"}]]}', False),
            'the head alone': (head + '[["', False),
            'a head and a tail that meet': (head + '[[",{"leaf":"int"}]]}}', False),
            'no items': (head + '[]}}', False),
            'another version': (compact(tree({'dict': leaves('int', ['a'])})).replace(
                '"version":1', '"version":2'), False),
        }
        one_pass = serio._tree._canonical_leaves
        for what, (text, want_taken) in texts.items():
            with self.subTest(what):
                made = []
                taken = []

                def counted(data, text):
                    found = one_pass(data, text)
                    taken.append(found is not None)
                    return found

                for patched in (counted, lambda data, text: None):
                    with mock.patch.object(serio._tree, '_canonical_leaves', patched):
                        try:
                            made.append(self.describe(serio._tree.parse(text.encode('utf-8'),
                                                                        'f')))
                        except serio.DataError as error:
                            made.append((str(error), error.key))
                self.assertEqual(made[0], made[1])
                self.assertEqual(taken, [want_taken])
        self.assertIsInstance(made[0], tuple)
        # serio.save's own text of a state_dict is taken
        state = {'fc%d.weight' % i: numpy.zeros(2, numpy.float32) for i in range(3)}
        data, _ = serio._tree.flatten(state)
        self.assertEqual(one_pass(data, data.decode('utf-8')), (list(state), 'ndarray'))

    def test_the_text_of_a_dict_of_leaves_mutated(self):
        """Texts a few characters away from serio.save's text of a dict
        of leaves (each taken by the split, as its checks of the keys
        allow, or declined): the same template or error as the JSON
        parser's, every time. A seeded random walk of 3,000 texts."""
        rng = random.Random(21)
        alphabet = ['"', '\\', ',', '[', ']', '{', '}', ':', 'a', '.', ' ', '\x01', '\n',
                    'é', '\x7f', 'leaf', 'int', '",{"leaf":"int"}],["']
        leaves = [[k, {'leaf': 'int'}] for k in ('w', 'b.1', 'x y', 'é')]
        start = json.dumps(tree({'dict': leaves}), ensure_ascii=False, separators=(',', ':'))
        one_pass = serio._tree._canonical_leaves
        taken = 0
        for _ in range(3000):
            text = list(start)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(text) + 1)
                what = rng.random()
                if what < 0.4:
                    text.insert(at, rng.choice(alphabet))
                elif what < 0.7 and at < len(text):
                    del text[at]
                elif at < len(text):
                    text[at] = rng.choice(alphabet)
            text = ''.join(text)
            made = []
            for patched in (one_pass, lambda data, text: None):
                with mock.patch.object(serio._tree, '_canonical_leaves', patched):
                    try:
                        made.append(self.describe(serio._tree.parse(text.encode('utf-8'), 'f')))
                    except serio.DataError as error:
                        made.append((str(error), error.key))
            self.assertEqual(made[0], made[1], text)
            taken += one_pass(text.encode('utf-8'), text) is not None
        # The walk reaches both kinds of text (76 taken with this seed).
        self.assertGreater(taken, 30)
        self.assertLess(taken, 2970)

    def test_runs_of_leaves(self):
        """A dict or odict whose items are all record leaves keeps their
        keys and the span of their indexes, from which build() makes it
        in one step; any other container keeps none."""
        leaf = {'leaf': 'int'}
        root = {'dict': [['a', leaf],
                         ['b', {'odict': [['x', leaf], ['y', leaf]]}],
                         ['c', {'dict': [['p', leaf], ['q', 'text']]}],
                         ['d', {'list': [leaf]}],
                         ['e', {'dict': [['z', leaf]]}]]}
        template = serio._tree.parse(json.dumps(tree(root)).encode('utf-8'), 'f')
        nodes = template.nodes
        self.assertIsNone(template.root.run)  # containers among its items
        self.assertEqual(nodes['b'].run, (['x', 'y'], 1, 3))
        self.assertIsNone(nodes['c'].run)  # a str among its items
        self.assertIsNone(nodes['d'].run)  # a list
        self.assertEqual(nodes['e'].run, (['z'], 5, 6))
        built = template.build(template.root, ['v%d' % i for i in range(len(template))])
        self.assertEqual(built, {'a': 'v0',
                                 'b': collections.OrderedDict([('x', 'v1'), ('y', 'v2')]),
                                 'c': {'p': 'v3', 'q': 'text'}, 'd': ['v4'], 'e': {'z': 'v5'}})
        self.assertIs(type(built['b']), collections.OrderedDict)
        self.assertEqual(template.build(nodes['b'], ['v%d' % i for i in range(6)]),
                         collections.OrderedDict([('x', 'v1'), ('y', 'v2')]))


class TestFlatten(unittest.TestCase):
    """Flattening makes a dict of ndarrays (a model's state_dict as NumPy
    arrays) in one pass of checks over all its items: the tree, the leaves
    and the error of every state it declines are those of the item at a
    time path."""

    @staticmethod
    def describe(made):
        def value(leaf):
            if leaf.kind == 'tensor':
                return (str(leaf.value.dtype), leaf.value.requires_grad,
                        leaf.value.reshape(-1).view(torch.uint8).numpy().tobytes())
            return (leaf.value.dtype.str, leaf.value.tobytes())

        tree, leaves = made
        return tree, [(leaf.keys, leaf.name, leaf.kind, leaf.dtype, type(leaf.shape), leaf.shape,
                       value(leaf))
                      for leaf in leaves]

    def flatten_both(self, state):
        """(tree and leaves, or the error) of state, by flatten() and with
        the one-pass path turned off, and how many dicts it took."""
        made = []
        taken = []
        one_pass = serio._tree._Flattener.array_items

        def counted(walker, *args):
            items = one_pass(walker, *args)
            taken.append(items is not None)
            return items

        for patched in (counted, lambda walker, *args: None):
            with mock.patch.object(serio._tree._Flattener, 'array_items', patched):
                try:
                    made.append(self.describe(serio._tree.flatten(state)))
                except serio.UnstorableError as error:
                    made.append((str(error), error.key, error.code))
        self.assertEqual(made[0], made[1])
        return made[0], sum(taken)

    def test_one_pass_and_item_at_a_time_agree(self):
        f32 = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
        layers = {'layer%d.weight' % i: f32 * i for i in range(40)}
        cases = {
            'a state_dict': (layers, 1),
            'every native type but the 64-bit integers': (
                {name: numpy.arange(3).astype(name) for name in
                 ('float64', 'float32', 'float16', 'int8', 'int16', 'int32',
                  'uint8', 'uint16', 'uint32', 'bool')}, 1),
            'nested, with a prefix, and 0-d and empty arrays': (
                {'model': layers, 'stats': {'mean': numpy.array(1.5),
                                            'none': numpy.zeros((0, 4))}}, 2),
            'an OrderedDict': (collections.OrderedDict(layers), 1),
            'non-ASCII keys': ({'é': f32, 'λ.μ': f32}, 1),
            'keys that only look reserved': ({'serio': f32, 'seriox': f32}, 1),
            'the most dimensions': ({'a': numpy.zeros((1,) * Serio.SHAPE_MAX_DIMS)}, 1),
            # declined, and stored by the item at a time path
            'int64, whose values are checked': ({'a': numpy.arange(3)}, 0),
            'uint64': ({'a': numpy.arange(3, dtype=numpy.uint64)}, 0),
            'not of native byte order': ({'a': numpy.arange(3, dtype='>f4')}, 0),
            'an escaped key': ({'a': f32, 'b@c': f32}, 0),
            'a line feed in a key': ({'a': f32, 'b\nc': f32}, 0),
            'a reserved name': ({'a': f32, 'serio.x': f32}, 0),
            'under a reserved prefix': ({'serio': {'x': f32}}, 0),
            'an int key': ({'a': f32, 1: f32}, 0),
            'a scalar among arrays': ({'a': f32, 'b': 1.5}, 0),
            'a NumPy scalar among arrays': ({'a': f32, 'b': numpy.float32(1)}, 0),
            'a subclass of ndarray': ({'a': numpy.ma.masked_array([1.0])}, 0),
            'empty': ({}, 0),
            # declined, and refused by the item at a time path
            'a name claimed before': ({'a.b': f32, 'a': {'b': f32}}, 0),
            'a name claimed after': ({'a': {'b': f32}, 'a.b': f32}, 1),
            'a key with a lone surrogate': ({'a': f32, '\udc80': f32}, 0),
            'complex': ({'a': numpy.array([1j])}, 0),
            'int64 that a float64 does not hold': ({'a': numpy.array([2 ** 53 + 1])}, 0),
        }
        for what, (state, want_taken) in cases.items():
            with self.subTest(what):
                made, n_taken = self.flatten_both(state)
                self.assertEqual(n_taken, want_taken, made[0] if isinstance(made[0], str) else None)
        for what, words in (('a name claimed before', 'same record name'),
                            ('a name claimed after', 'same record name'),
                            ('a key with a lone surrogate', 'surrogate'),
                            ('int64 that a float64 does not hold', '9007199254740993')):
            self.assertIn(words, self.flatten_both(cases[what][0])[0][0], what)

    def test_one_pass_and_item_at_a_time_agree_on_tensors(self):
        if torch is None:
            self.skipTest('no PyTorch')
        weights = {'layer%d.weight' % i: torch.linspace(-1, 1, 6).reshape(2, 3) * i
                   for i in range(40)}
        parameter = torch.nn.Parameter(torch.ones(2))
        cases = {
            'a state_dict': (weights, 1),
            'of every type but int64': (
                {'%s' % dtype: torch.arange(3).to(dtype) for dtype in
                 (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int8,
                  torch.int16, torch.int32, torch.uint8, torch.bool)}, 1),
            'that need a gradient, 0-d and empty': (
                {'w': torch.ones(3, requires_grad=True), 'step': torch.tensor(2.0),
                 'none': torch.zeros(0, 2)}, 1),
            'not contiguous': ({'t': torch.ones(3, 4).t()}, 1),
            'the most dimensions': ({'a': torch.zeros((1,) * Serio.SHAPE_MAX_DIMS)}, 1),
            # declined, and stored or refused by the item at a time path
            'int64, whose values are checked': ({'a': torch.arange(3)}, 0),
            'int64 that a float64 does not hold': ({'a': torch.tensor([2 ** 53 + 1])}, 0),
            'a Parameter': ({'p': parameter}, 0),
            'tensors and ndarrays': ({'a': torch.ones(2), 'b': numpy.ones(2)}, 0),
            'an escaped key': ({'a': torch.ones(2), 'b[0]': torch.ones(2)}, 0),
            'sparse': ({'a': torch.ones(2), 's': torch.eye(2).to_sparse()}, 0),
            'complex': ({'c': torch.ones(2, dtype=torch.complex64)}, 0),
            'too many dimensions': ({'a': torch.zeros((1,) * (Serio.SHAPE_MAX_DIMS + 1))}, 0),
            'a name claimed before': ({'a.b': torch.ones(1), 'a': {'b': torch.ones(1)}}, 0),
        }
        for what, (state, want_taken) in cases.items():
            with self.subTest(what):
                made, n_taken = self.flatten_both(state)
                self.assertEqual(n_taken, want_taken, made[0] if isinstance(made[0], str) else None)
        for what, words in (('int64 that a float64 does not hold', '9007199254740993'),
                            ('sparse', 'dense'), ('complex', 'complex64'),
                            ('too many dimensions', 'more than 32'),
                            ('a name claimed before', 'same record name')):
            self.assertIn(words, self.flatten_both(cases[what][0])[0][0], what)

    def test_the_addresses_of_a_batch(self):
        arrays = [numpy.arange(4, dtype=numpy.float32), numpy.ones((2, 3))]
        want = [a.__array_interface__['data'][0] for a in arrays]
        self.assertEqual(serio._io._addresses(arrays), want)
        # a read-only or an empty one: all of them the other way
        for odd in (numpy.frombuffer(b'abcd', dtype=numpy.uint8), numpy.zeros(0)):
            mixed = arrays + [odd]
            self.assertEqual(serio._io._addresses(mixed),
                             want + [odd.__array_interface__['data'][0]])


class TestLegacy(Base):
    """Files of the old Serio.save(): a serio.dtypes table first."""

    def test_the_table_is_applied(self):
        write_records(self.path(), [('serio.dtypes', [1, 4, 12, 13, 0]), ('w[2]', [0.5, -2]),
                                    ('i', [2 ** 53]), ('m', [1, 0]), ('s', [72, 105]),
                                    ('d', [0.1])])
        got = serio.load(self.path())
        self.assert_same({'w': numpy.array([0.5, -2], dtype=numpy.float32),
                          'i': numpy.array([2 ** 53], dtype=numpy.int64),
                          'm': numpy.array([True, False]), 's': 'Hi',
                          'd': numpy.array([0.1])}, got)

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_bfloat16_and_float16_from_the_table(self):
        write_records(self.path(), [('serio.dtypes', [3, 2]), ('h', [1, 129 / 128]),
                                    ('f', [65504, -0.0])])
        got = serio.load(self.path())
        self.assert_same({'h': torch.tensor([1, 129 / 128], dtype=torch.bfloat16),
                          'f': numpy.array([65504, -0.0], dtype=numpy.float16)}, got)
        # 1 + 2**-10 is not a bfloat16: refused, not rounded.
        self.assert_invalid([('serio.dtypes', [3]), ('h', [1 + 2 ** -10])], 'h', 'bfloat16')

    def assert_invalid(self, records, key, *words):
        write_records(self.path(), records)
        with self.assertRaises(serio.DataError) as caught:
            serio.load(self.path())
        self.assertEqual(caught.exception.key, key)
        for word in words:
            self.assertIn(word, str(caught.exception))

    def test_strings_are_code_points_of_characters(self):
        self.assert_invalid([('serio.dtypes', [13]), ('s', [72.9, 105.2])], 's', '72.9')
        self.assert_invalid([('serio.dtypes', [13]), ('s', [72, 0xD800])], 's', 'value 2')
        self.assert_invalid([('serio.dtypes', [13]), ('s', [0x110000])], 's', 'code point')
        self.assert_invalid([('serio.dtypes', [13]), ('s', [-1])], 's', 'code point')

    def test_a_bad_table_is_refused(self):
        self.assert_invalid([('serio.dtypes', [1.5]), ('w', [1])], 'serio.dtypes', '1.5')
        self.assert_invalid([('serio.dtypes', [14]), ('w', [1])], 'serio.dtypes', '14')
        self.assert_invalid([('serio.dtypes', [1, 1]), ('w', [1])], 'serio.dtypes', '2 codes')
        self.assert_invalid([('serio.dtypes', [1]), ('w', [1]), ('v', [1])], 'serio.dtypes')
        self.assert_invalid([('serio.dtypes', [1]), ('w', [0.1])], 'w', 'float32')
        self.assert_invalid([('serio.dtypes', [7]), ('w', [300])], 'w', 'int8')


if __name__ == '__main__':
    unittest.main()
