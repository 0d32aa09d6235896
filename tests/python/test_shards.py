# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sharded checkpoints: serio.save(path, state, max_shard_size=N) and
serio.load() of the index. A 3-shard save loads back bit for bit; each
shard that is not the one the index names (of another save, stale, with a
changed digit, missing), each disagreement between the index and the
shards' records (a key in no shard, in two, a record the index does not
list) and each index that is not strict JSON is a serio error naming the
file (and the key); names= reads only the shards it needs; a small state
is one file; a save that fails midway leaves the previous checkpoint as it
was, and no index naming a shard that is not there.

Exits 77 (skip) without NumPy.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from package_common import Gio, GLib, Serio, bits, numpy, serio, torch  # noqa: E402
from serio import _files, _io, _shards  # noqa: E402

SERIO_DOMAIN = 'serio-error-quark'


def state_of(seed):
    """A nested state of several element types, values from seed; 9600
    bytes of arrays, in leaves of 4000, 2000, 2000 and fewer bytes."""
    rng = numpy.random.default_rng(seed)
    state = {
        'model': {
            'embed.weight': rng.standard_normal((25, 40)).astype(numpy.float32),
            'fc': {'weight': rng.standard_normal((10, 25)),
                   'bias': rng.standard_normal(250).astype(numpy.float64)[:250]},
            'half': rng.standard_normal(300).astype(numpy.float16),
            'ids': rng.integers(-100, 100, 128, dtype=numpy.int8),
            'mask': rng.integers(0, 2, 64).astype(numpy.bool_),
            'codes': rng.integers(0, 60000, (4, 8), dtype=numpy.uint16),
            'big': rng.integers(-2 ** 40, 2 ** 40, 16, dtype=numpy.int64),
        },
        'optimizer': [{'step': seed, 'lr': 1e-3 * (seed + 1), 'nesterov': True},
                      (numpy.float32(0.5), b'\x00\xffraw', None, 'adam')],
        'name': 'run-%d' % seed,
    }
    if torch is not None:
        torch.manual_seed(seed)
        state['model']['bf'] = torch.randn(3, 5).to(torch.bfloat16)
        state['model']['t32'] = torch.randn(7, dtype=torch.float32)
    return state


def leaves_of(value, path=()):
    """(key path, value) of every leaf, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves_of(item, path + (key,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from leaves_of(item, path + (index,))
    else:
        yield path, value


def shape_of(value):
    """The containers of a value, with leaves replaced by their type."""
    if isinstance(value, dict):
        return (type(value), [(key, shape_of(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value), [shape_of(item) for item in value])
    return type(value)


def leaf_bits(value):
    """The bytes and element type of a leaf, to compare bit for bit."""
    if torch is not None and isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16:
            return str(value.dtype), tuple(value.shape), bits(value.view(torch.int16).numpy())
        return str(value.dtype), tuple(value.shape), bits(value.numpy())
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return value.dtype.str, numpy.shape(value), bits(numpy.asarray(value))
    if isinstance(value, float):
        return 'float', (), numpy.float64(value).tobytes()
    return type(value).__name__, (), value


def change_digit(path):
    """One less in the last digit of an int8 token of two digits or more
    of model.ids: a valid v1 text of the same size, whose seal no longer
    matches."""
    with open(path, 'rb') as stream:
        data = bytearray(stream.read())
    start = data.index(b'|128|', data.index(b'\nv1|model.ids@int8[128]')) + 5
    end = data.index(b'\n', start)
    token = next(m for m in re.finditer(rb'-?[0-9]{2,3}', bytes(data[start:end]))
                 if m.group()[-1:] != b'0')
    data[start + token.end() - 1] -= 1
    with open(path, 'wb') as stream:
        stream.write(data)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def assertSameState(self, got, want):
        self.assertEqual(shape_of(got), shape_of(want))
        got_leaves = list(leaves_of(got))
        want_leaves = list(leaves_of(want))
        self.assertEqual([p for p, _ in got_leaves], [p for p, _ in want_leaves])
        for (path, a), (_, b) in zip(got_leaves, want_leaves):
            self.assertEqual(leaf_bits(a), leaf_bits(b), path)

    def save3(self, directory=None, seed=1, name='model.serio'):
        """A 3-shard checkpoint of state_of(seed); its index's path."""
        directory = directory or self.dir
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name)
        serio.save(path, state_of(seed), max_shard_size=4000)
        return path + '.index.json'

    def contents(self):
        """name → bytes of every file in the directory."""
        found = {}
        for name in os.listdir(self.dir):
            with open(self.path(name), 'rb') as stream:
                found[name] = stream.read()
        return found

    def index(self, path):
        with open(path, 'rb') as stream:
            return json.loads(stream.read())

    def rewrite_index(self, path, document):
        with open(path, 'w', encoding='utf-8') as stream:
            json.dump(document, stream)

    def assertDataError(self, code, *names):
        """A context whose block must raise a serio DataError of code whose
        message names each of names."""
        test = self

        class Context:
            def __enter__(self):
                return self

            def __exit__(self, kind, error, traceback):
                test.assertIsNotNone(error, 'no error raised')
                test.assertIsInstance(error, serio.DataError)
                test.assertEqual(error.domain, SERIO_DOMAIN)
                test.assertEqual(error.code, int(code), str(error))
                for name in names:
                    test.assertIn(name, str(error))
                self.error = error
                return True
        return Context()


class RoundTrip(Base):
    def test_three_shards_bit_for_bit(self):
        state = state_of(1)
        index_path = self.save3()
        names = sorted(os.listdir(self.dir))
        self.assertEqual(names, ['model-00001-of-00003.serio', 'model-00002-of-00003.serio',
                                 'model-00003-of-00003.serio', 'model.serio.index.json'])
        document = self.index(index_path)
        self.assertEqual(set(document), {'metadata', 'weight_map', 'shards', 'tree'})
        self.assertEqual(document['metadata']['format'], 'serio-shards')
        self.assertEqual(document['metadata']['version'], 1)
        _, leaves = serio._tree.flatten(state)
        self.assertEqual(document['metadata']['total_size'],
                         sum(_shards._nbytes(numpy, leaf) for leaf in leaves))
        self.assertEqual(list(document['weight_map']), [leaf.name for leaf in leaves])
        self.assertEqual(list(document['shards']), names[:3])
        for shard in names[:3]:
            path = self.path(shard)
            with open(path, 'rb') as stream:
                data = stream.read()
            entry = document['shards'][shard]
            self.assertEqual(entry['size'], len(data))
            last = data.rstrip(b'\n').rsplit(b'\n', 1)[-1]
            self.assertEqual(b'v1|serio.seal|3|' + entry['seal'].encode(), last)
            self.assertTrue(data.startswith(b'v1|serio.sealed|1|1\n'))
            # Each shard alone is a serio file of exactly its records.
            alone = serio.load(path)
            self.assertEqual(list(alone), [key for key, where in document['weight_map'].items()
                                           if where == shard])
        # No shard holds more than the limit, unless one array alone does.
        for shard in names[:3]:
            sizes = [_shards._nbytes(numpy, leaf) for leaf in leaves
                     if document['weight_map'][leaf.name] == shard]
            self.assertTrue(sum(sizes) <= 4000 or len(sizes) == 1, (shard, sizes))
        for path in (index_path, self.path('model.serio')):
            self.assertSameState(serio.load(path), state)
        flat = serio.numpy.load(index_path)
        self.assertEqual(list(flat), list(document['weight_map']))
        self.assertEqual(bits(flat['model.fc.weight']), bits(state['model']['fc']['weight']))

    def test_size_strings(self):
        self.assertEqual(_shards.parse_size('2GB'), 2 * 10 ** 9)
        self.assertEqual(_shards.parse_size('500MB'), 500 * 10 ** 6)
        self.assertEqual(_shards.parse_size('1GiB'), 1 << 30)
        self.assertEqual(_shards.parse_size('4KB'), 4000)
        self.assertEqual(_shards.parse_size('8Gb'), 10 ** 9)
        self.assertEqual(_shards.parse_size(123), 123)
        for bad in ('', 'GB', '2 parsecs', '-1GB', '1.5GB', '0', 0, -3):
            with self.assertRaises(ValueError, msg=bad):
                _shards.parse_size(bad)
        for bad in (True, 2.0, None, b'2GB'):
            with self.assertRaises(TypeError, msg=bad):
                _shards.parse_size(bad)
        path = self.path('m.serio')
        serio.save(path, state_of(2), max_shard_size='4KB')
        self.assertEqual(len(self.index(path + '.index.json')['shards']), 3)

    def test_small_state_is_one_file(self):
        state = state_of(3)
        path = self.path('model.serio')
        serio.save(path, state, max_shard_size='1MB')
        self.assertEqual(os.listdir(self.dir), ['model.serio'])
        with open(path, 'rb') as stream:
            self.assertTrue(stream.read().startswith(b'v1|serio.sealed|1|1\nv1|serio.tree@'))
        self.assertSameState(serio.load(path), state)

    def test_index_path_always_gives_an_index(self):
        state = state_of(4)
        path = self.path('small.serio.index.json')
        serio.save(path, state, max_shard_size='1MB')
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ['small-00001-of-00001.serio', 'small.serio.index.json'])
        self.assertSameState(serio.load(path), state)

    def test_one_form_replaces_the_other(self):
        path = self.path('model.serio')
        serio.save(path, {'a': numpy.zeros(3)})
        index_path = self.save3(seed=5)
        self.assertFalse(os.path.exists(path))
        self.assertSameState(serio.load(path), state_of(5))
        # Fewer, larger shards: the three old ones go.
        serio.save(path, state_of(6), max_shard_size=6000)
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ['model-00001-of-00002.serio', 'model-00002-of-00002.serio',
                          'model.serio.index.json'])
        self.assertSameState(serio.load(index_path), state_of(6))
        serio.save(path, state_of(7), max_shard_size='1GB')
        self.assertEqual(os.listdir(self.dir), ['model.serio'])
        self.assertSameState(serio.load(path), state_of(7))

    def test_bad_arguments_write_nothing(self):
        path = self.path('model.serio')
        with self.assertRaises(ValueError):
            serio.save(path, state_of(1), max_shard_size=1000, sealed=False)
        with self.assertRaises(ValueError):
            serio.save(path, state_of(1), max_shard_size='lots')
        with self.assertRaises(serio.UnstorableError):
            serio.save(path, {'a': numpy.zeros(2000), 'b': object()}, max_shard_size=100)
        self.assertEqual(os.listdir(self.dir), [])


class Names(Base):
    def test_names_read_only_their_shards(self):
        state = state_of(8)
        index_path = self.save3(seed=8)
        document = self.index(index_path)
        where = document['weight_map']
        shard = where['model.fc.weight']
        # Remove every shard that holds none of the keys asked for.
        for other in document['shards']:
            if other != shard:
                os.unlink(self.path(other))
        keys = [key for key, value in where.items() if value == shard]
        got = serio.load(index_path, names=keys)
        self.assertEqual(list(got), keys)
        want = {serio._tree.name_of(path): value for path, value in leaves_of(state)}
        for key in keys:
            self.assertEqual(leaf_bits(got[key]), leaf_bits(want[key]), key)
        with self.assertRaises(serio.NotFoundError):
            serio.load(index_path)
        with self.assertRaises(KeyError) as caught:
            serio.load(index_path, names=['model.nothing'])
        self.assertIn('model.nothing', str(caught.exception))

    def test_names_of_subtrees(self):
        state = state_of(9)
        index_path = self.save3(seed=9)
        got = serio.load(index_path, names=['optimizer', 'model.fc'])
        self.assertSameState(got, {'optimizer': state['optimizer'],
                                   'model.fc': state['model']['fc']})


class Damage(Base):
    def test_shard_of_another_save(self):
        index_path = self.save3(seed=1)
        other = self.path('other')
        self.save3(other, seed=2)
        victim = 'model-00002-of-00003.serio'
        shutil.copyfile(os.path.join(other, victim), self.path(victim))
        with self.assertDataError(Serio.Error.INTEGRITY, self.path(victim), 'another save'):
            serio.load(index_path)

    def test_stale_shard(self):
        index_path = self.save3(seed=1)
        victim = self.path('model-00003-of-00003.serio')
        shutil.copyfile(victim, self.path('old'))
        state = state_of(1)
        state['optimizer'][0]['step'] = 2
        serio.save(self.path('model.serio'), state, max_shard_size=4000)
        os.replace(self.path('old'), victim)
        with self.assertDataError(Serio.Error.INTEGRITY, victim, 'stale'):
            serio.load(index_path)

    def test_changed_digit(self):
        index_path = self.save3()
        victim = self.path('model-00003-of-00003.serio')
        change_digit(victim)
        # Same size, same last line: the library's seal check finds it.
        with self.assertDataError(Serio.Error.INTEGRITY, victim):
            serio.load(index_path)

    def test_cut_shard(self):
        index_path = self.save3()
        victim = self.path('model-00002-of-00003.serio')
        with open(victim, 'rb') as stream:
            data = stream.read()
        with open(victim, 'wb') as stream:
            stream.write(data[:data.rindex(b'v1|serio.seal')])
        with self.assertDataError(Serio.Error.TRUNCATED, victim):
            serio.load(index_path)

    def test_missing_shard(self):
        index_path = self.save3()
        victim = self.path('model-00003-of-00003.serio')
        os.unlink(victim)
        with self.assertRaises(serio.NotFoundError) as caught:
            serio.load(index_path)
        self.assertIsInstance(caught.exception, FileNotFoundError)
        self.assertIn(victim, str(caught.exception))
        self.assertIn('missing', str(caught.exception))
        self.assertEqual(caught.exception.path, victim)

    def test_key_in_no_shard(self):
        index_path = self.save3()
        document = self.index(index_path)
        del document['weight_map']['model.half']
        self.rewrite_index(index_path, document)
        with self.assertDataError(Serio.Error.SYNTAX, index_path, 'model.half', 'no shard'):
            serio.load(index_path)

    def test_key_in_the_wrong_shard(self):
        index_path = self.save3()
        document = self.index(index_path)
        first = document['weight_map']['model.embed.weight']
        moved = next(key for key, shard in document['weight_map'].items() if shard != first)
        real = document['weight_map'][moved]
        document['weight_map'][moved] = first
        self.rewrite_index(index_path, document)
        # The first shard read finds the key missing, or the key's own
        # shard holds a record the index puts elsewhere.
        with self.assertDataError(Serio.Error.TRUNCATED, self.path(first), moved,
                                  'does not hold it'):
            serio.load(index_path)
        document['weight_map'][moved] = real
        self.rewrite_index(index_path, document)
        self.assertSameState(serio.load(index_path), state_of(1))

    def forge(self, index_path, shard, extra):
        """Rewrite shard with its records and then the extra ones (a list
        of name, array), and the index's entry to match, as a forger
        would."""
        path = self.path(shard)
        records = list(serio.numpy.load(path).items()) + extra
        writer = _io.open_writer(path, sealed=True)
        for name, array in records:
            writer.write(name, array.dtype.name, array.shape, array)
        writer.close()
        document = self.index(index_path)
        seal, size = _files.seal_of(path)
        document['shards'][shard] = {'size': size, 'seal': seal}
        self.rewrite_index(index_path, document)

    def test_record_twice_in_a_shard(self):
        index_path = self.save3()
        shard = 'model-00002-of-00003.serio'
        self.forge(index_path, shard, [('model.fc.bias', numpy.zeros(250))])
        with self.assertDataError(Serio.Error.SYNTAX, self.path(shard), 'model.fc.bias',
                                  'twice'):
            serio.load(index_path)

    def test_key_in_two_shards(self):
        index_path = self.save3()
        document = self.index(index_path)
        first = document['weight_map']['model.embed.weight']
        last = 'model-00002-of-00003.serio'
        self.assertNotEqual(first, last)
        self.forge(index_path, last, [('model.embed.weight', numpy.zeros((25, 40), numpy.float32))])
        with self.assertDataError(Serio.Error.SYNTAX, self.path(last), 'model.embed.weight',
                                  first):
            serio.load(index_path)

    def test_record_the_index_does_not_list(self):
        index_path = self.save3()
        shard = 'model-00002-of-00003.serio'
        self.forge(index_path, shard, [('smuggled', numpy.ones(3))])
        with self.assertDataError(Serio.Error.SYNTAX, self.path(shard), 'smuggled',
                                  'does not list'):
            serio.load(index_path)

    def test_index_names_a_key_the_tree_lacks(self):
        index_path = self.save3()
        document = self.index(index_path)
        document['weight_map']['ghost'] = 'model-00001-of-00003.serio'
        self.rewrite_index(index_path, document)
        with self.assertDataError(Serio.Error.SYNTAX, index_path, 'ghost'):
            serio.load(index_path)


class StrictIndex(Base):
    def edit(self, index_path, change):
        with open(index_path, 'r', encoding='utf-8') as stream:
            text = stream.read()
        changed = change(text)
        self.assertNotEqual(changed, text)
        with open(index_path, 'w', encoding='utf-8') as stream:
            stream.write(changed)

    def test_bad_indexes(self):
        cases = [
            ('duplicate member', lambda t: t.replace('"metadata": {', '"metadata": {"version": 1, ', 1),
             Serio.Error.SYNTAX, 'twice'),
            ('unknown field', lambda t: t.replace('"weight_map"', '"comment": "hi", "weight_map"', 1),
             Serio.Error.SYNTAX, 'comment'),
            ('unknown metadata', lambda t: t.replace('"total_size"', '"dtype": 1, "total_size"', 1),
             Serio.Error.SYNTAX, 'dtype'),
            ('NaN', lambda t: re.sub(r'"total_size": [0-9]+', '"total_size": NaN', t),
             Serio.Error.SYNTAX, 'NaN'),
            ('float', lambda t: re.sub(r'"total_size": [0-9]+', '"total_size": 1.5', t),
             Serio.Error.SYNTAX, '1.5'),
            ('other format', lambda t: t.replace('serio-shards', 'serio-dcp', 1),
             Serio.Error.SYNTAX, 'serio-shards'),
            ('other version', lambda t: t.replace('"version": 1', '"version": 2', 1),
             Serio.Error.VERSION, 'version 2'),
            ('not UTF-8', None, Serio.Error.SYNTAX, 'utf-8'),
            ('a path', lambda t: t.replace('"model-00002-of-00003.serio"',
                                           '"../model-00002-of-00003.serio"'),
             Serio.Error.SYNTAX, '../model-00002'),
            ('not an object', lambda t: '[' + t + ']', Serio.Error.SYNTAX, 'not a JSON object'),
            ('bad seal entry', lambda t: t.replace('"seal"', '"hash"', 1), Serio.Error.SYNTAX,
             'model-00001-of-00003.serio'),
        ]
        for what, change, code, needle in cases:
            with self.subTest(what):
                shutil.rmtree(self.path('c'), ignore_errors=True)
                index_path = self.save3(self.path('c'))
                if what == 'not UTF-8':
                    with open(index_path, 'rb') as stream:
                        raw = stream.read()
                    with open(index_path, 'wb') as stream:
                        stream.write(raw.replace(b'"serio-shards"', b'"serio-shards\xff"', 1))
                else:
                    self.edit(index_path, change)
                with self.assertDataError(code, index_path, needle):
                    serio.load(index_path)


class Interrupted(Base):
    def fail_at(self, calls):
        """RecordWriter.write raises OSError (a full disk) at its calls-th
        call, for the rest of the test."""
        original = _io.RecordWriter.write
        count = [0]

        def write(writer, *args, **kwargs):
            count[0] += 1
            if count[0] == calls:
                raise OSError(28, 'No space left on device')
            return original(writer, *args, **kwargs)
        _io.RecordWriter.write = write
        self.addCleanup(setattr, _io.RecordWriter, 'write', original)

    def test_fresh_save_leaves_nothing(self):
        # The 9th record is in the second or third shard: the first is
        # complete by then.
        self.fail_at(9)
        with self.assertRaises(OSError):
            serio.save(self.path('model.serio'), state_of(1), max_shard_size=4000)
        self.assertEqual(os.listdir(self.dir), [])

    def test_failed_save_keeps_the_previous_checkpoint(self):
        index_path = self.save3(seed=1)
        before = self.contents()
        self.fail_at(9)
        with self.assertRaises(OSError):
            serio.save(self.path('model.serio'), state_of(2), max_shard_size=4000)
        after = self.contents()
        self.assertEqual(after, before)
        self.assertSameState(serio.load(index_path), state_of(1))

    def test_interrupt_before_the_index(self):
        # KeyboardInterrupt while the index is written: the shards are in
        # place, there is no index, and nothing half-written.
        original = _files.write_json

        def interrupted(path, document, sort_keys=False):
            raise KeyboardInterrupt()
        _files.write_json = interrupted
        self.addCleanup(setattr, _files, 'write_json', original)
        with self.assertRaises(KeyboardInterrupt):
            serio.save(self.path('model.serio'), state_of(1), max_shard_size=4000)
        self.assertFalse(os.path.exists(self.path('model.serio.index.json')))
        self.assertFalse([name for name in os.listdir(self.dir) if name.endswith('.tmp')])
        with self.assertRaises(serio.NotFoundError):
            serio.load(self.path('model.serio'))


class CReader(Base):
    """Serio.Reader.new_for_index (libserio/serio-index.c), through
    introspection: the shards' records one after another, each shard
    checked against the index."""

    def records(self, index_path):
        reader = Serio.Reader.new_for_index(Gio.File.new_for_path(index_path), None)
        found = []
        while reader.next(None):
            data = reader.read_typed_bytes(1 << 20, None).get_data()
            found.append((reader.get_base_name(), Serio.dtype_to_string(reader.get_dtype()),
                          tuple(reader.get_shape()), bytes(data)))
        return found

    def assertGError(self, call, domain, code, *names):
        with self.assertRaises(GLib.Error) as caught:
            call()
        error = caught.exception
        self.assertEqual((error.domain, error.code), (domain, int(code)), error.message)
        for name in names:
            self.assertIn(name, error.message)

    def test_records_of_every_shard(self):
        index_path = self.save3(seed=11)
        want = []
        for shard in sorted(os.listdir(self.dir))[:3]:
            want += self.records_of_file(self.path(shard))
        got = self.records(index_path)
        self.assertEqual(got, want)
        self.assertEqual([name for name, _, _, _ in got],
                         list(self.index(index_path)['weight_map']))

    def records_of_file(self, path):
        reader = Serio.Reader.new(Gio.File.new_for_path(path).read(None))
        found = []
        while reader.next(None):
            data = reader.read_typed_bytes(1 << 20, None).get_data()
            found.append((reader.get_base_name(), Serio.dtype_to_string(reader.get_dtype()),
                          tuple(reader.get_shape()), bytes(data)))
        return found

    def test_damage(self):
        io = 'g-io-error-quark'
        first = 'model-00001-of-00003.serio'
        second = 'model-00002-of-00003.serio'

        def another_save(index_path):
            self.save3(self.path('other'), seed=2)
            shutil.copyfile(self.path('other', second), self.path(second))
            return Serio.Error.INTEGRITY, self.path(second), 'another save'

        def changed_digit(index_path):
            path = self.path('model-00003-of-00003.serio')
            change_digit(path)
            return Serio.Error.INTEGRITY, path, 'seal'

        def missing(index_path):
            os.unlink(self.path(second))
            return Gio.IOErrorEnum.NOT_FOUND, self.path(second)

        def smuggled(index_path):
            Damage.forge(self, index_path, second, [('smuggled', numpy.ones(3))])
            return Serio.Error.SYNTAX, self.path(second), 'smuggled', 'does not list'

        def in_two(index_path):
            Damage.forge(self, index_path, second,
                         [('model.embed.weight', numpy.zeros((25, 40), numpy.float32))])
            return Serio.Error.SYNTAX, self.path(second), 'model.embed.weight', first

        def wrong_shard(index_path):
            document = self.index(index_path)
            document['weight_map']['model.fc.weight'] = first
            self.rewrite_index(index_path, document)
            return Serio.Error.TRUNCATED, self.path(first), 'model.fc.weight'

        def duplicate(index_path):
            with open(index_path, 'r', encoding='utf-8') as stream:
                text = stream.read()
            with open(index_path, 'w', encoding='utf-8') as stream:
                stream.write(text.replace('"weight_map": {', '"weight_map": {"model.half": "x", ', 1))
            return Gio.IOErrorEnum.INVALID_DATA, index_path, 'twice'

        def version(index_path):
            document = self.index(index_path)
            document['metadata']['version'] = 2
            self.rewrite_index(index_path, document)
            return Serio.Error.VERSION, index_path, 'version 2'

        def unknown(index_path):
            document = self.index(index_path)
            document['comment'] = 'hi'
            self.rewrite_index(index_path, document)
            return Gio.IOErrorEnum.INVALID_DATA, index_path, 'unknown'

        for damage in (another_save, changed_digit, missing, smuggled, in_two, wrong_shard,
                       duplicate, version, unknown):
            with self.subTest(damage.__name__):
                shutil.rmtree(self.dir)
                os.mkdir(self.dir)
                index_path = self.save3()
                code, *names = damage(index_path)
                domain = io if isinstance(code, Gio.IOErrorEnum) else SERIO_DOMAIN
                self.assertGError(lambda: self.records(index_path), domain, code, *names)


class LocalFiles(Base):
    def test_gio_file(self):
        path = self.path('model.serio')
        serio.save(Gio.File.new_for_path(path), state_of(1), max_shard_size=4000)
        self.assertSameState(serio.load(Gio.File.new_for_path(path)), state_of(1))


if __name__ == '__main__':
    unittest.main()
