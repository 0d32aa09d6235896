# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio check INDEX and serio convert of sharded checkpoints.

Usage: test_shards_cli.py SERIO VERSION [unittest arguments]

Sharded serio checkpoints (MODEL.serio.index.json and its sealed shards)
are built here from the format's description, their seals computed with
python3-xxhash (test_serio_tool.sealed), independently of libserio;
sharded .safetensors checkpoints (MODEL.safetensors.index.json and its
shards) with test_safetensors.build. `serio check INDEX` must pass a good
checkpoint and, for every kind of damage, exit 1 (2 for a missing shard)
naming the bad shard (and the key); `serio convert` must turn a sharded
safetensors checkpoint into a sharded serio one and back with the same
names, dtypes, shapes, bytes and metadata, and refuse, naming the file,
a shard that disagrees with its index, leaving no output.
"""

import json
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import ToolTestCase, record, sealed  # noqa: E402
from test_safetensors import build, parse_safetensors, serio_records, stored_name  # noqa: E402

try:
    import xxhash  # noqa: F401
except ImportError:
    print('python3-xxhash is not installed', file=sys.stderr)
    sys.exit(77)


def seal_tokens(data):
    """The tokens of the seal record that ends a sealed text."""
    last = data.rstrip(b'\n').rsplit(b'\n', 1)[-1]
    assert last.startswith(b'v1|serio.seal|3|'), last
    return last[len(b'v1|serio.seal|3|'):].decode()


# Three shards of typed records, as serio.save(..., max_shard_size=…)
# would cut a state.
SHARDS = [
    ('model-00001-of-00003.serio', [('embed.weight@float32[2x2]', [0.5, -1.0, 2.0, 0.25])]),
    ('model-00002-of-00003.serio', [('fc.weight[3]', [1.0, 2.0, 3.0]),
                                    ('fc.bias[1]', [-0.0])]),
    ('model-00003-of-00003.serio', [('step@int64[]', [41]),
                                    ('mask@bool[4]', [1, 0, 0, 1])]),
]


class ShardTestCase(ToolTestCase):

    def shard_text(self, records):
        return sealed(''.join(record(name, values) for name, values in records).encode())

    def write_checkpoint(self, shards=SHARDS, name='model.serio.index.json', extra_keys=None,
                         drop_keys=(), document=None):
        """Writes the shards and an index that names them; returns the
        index's name."""
        weight_map, entries = {}, {}
        for file_name, records in shards:
            data = self.shard_text(records)
            self.write(file_name, data)
            entries[file_name] = {'size': len(data), 'seal': seal_tokens(data)}
            for stored, _ in records:
                key = stored.split('@')[0].split('[')[0]
                if key not in drop_keys:
                    weight_map[key] = file_name
        weight_map.update(extra_keys or {})
        index = {'metadata': {'format': 'serio-shards', 'version': 1, 'total_size': 60},
                 'weight_map': weight_map, 'shards': entries}
        if document is not None:
            index = document(index)
        self.write(name, json.dumps(index, indent=1).encode())
        return name

    def check(self, index, status):
        return self.run_tool('check', index, status=status)

    def assert_check_fails(self, index, status, *needles):
        proc = self.check(index, status)
        err = proc.stderr.decode('utf-8')
        for needle in needles:
            self.assertIn(needle, err)
        self.assertNotIn(b'verified', proc.stdout)
        return err


class CheckIndexTests(ShardTestCase):

    def test_good_checkpoint(self):
        index = self.write_checkpoint()
        proc = self.check(index, 0)
        self.assertIn(b'model.serio.index.json: sharded checkpoint', proc.stdout)
        self.assertEqual(proc.stderr, b'')
        self.assertEqual(self.run_tool('check', '--quiet', index, status=0).stdout, b'')

    def test_shard_of_another_save(self):
        index = self.write_checkpoint()
        self.write('model-00002-of-00003.serio',
                   self.shard_text([('fc.weight[3]', [1.0, 2.0, 5.0]), ('fc.bias[1]', [-0.0])]))
        self.assert_check_fails(index, 1, 'model-00002-of-00003.serio', 'another save',
                                'its seal differs')

    def test_stale_size(self):
        index = self.write_checkpoint()
        self.write('model-00003-of-00003.serio',
                   self.shard_text([('step@int64[]', [1041]), ('mask@bool[4]', [1, 0, 0, 1])]))
        self.assert_check_fails(index, 1, 'model-00003-of-00003.serio', 'its size differs')

    def test_changed_digit(self):
        index = self.write_checkpoint()
        name = 'model-00003-of-00003.serio'
        data = self.read(name)
        self.write(name, data.replace(b'|1|41\n', b'|1|42\n'))
        self.assertEqual(len(self.read(name)), len(data))
        self.assert_check_fails(index, 1, name, 'seal')

    def test_bad_token_names_shard_and_line(self):
        # A shard whose seal matches a text the reader refuses: the error
        # is the shard's own, with its line.
        bad = [('step@int64[]', [41]), ('mask@bool[4]', [1, 0, 0, 2])]
        shards = SHARDS[:2] + [('model-00003-of-00003.serio', bad)]
        index = self.write_checkpoint(shards)
        err = self.assert_check_fails(index, 1, 'model-00003-of-00003.serio:3:')
        self.assertEqual(len(err.splitlines()), 1, err)

    def test_record_the_index_does_not_list(self):
        index = self.write_checkpoint(drop_keys=('fc.bias',))
        self.assert_check_fails(index, 1, 'model-00002-of-00003.serio', 'fc.bias',
                                'does not list')

    def test_key_in_no_shard(self):
        index = self.write_checkpoint(extra_keys={'fc.weight': 'model-00001-of-00003.serio'})
        self.assert_check_fails(index, 1, 'model-00001-of-00003.serio', 'fc.weight')

    def test_key_in_two_shards(self):
        shards = SHARDS[:2] + [('model-00003-of-00003.serio',
                                SHARDS[2][1] + [('fc.bias[1]', [-0.0])])]
        index = self.write_checkpoint(shards)
        self.assert_check_fails(index, 1, 'model-00003-of-00003.serio', 'fc.bias')

    def test_large_shards(self):
        # Shards of several reads of the library's stream (256 KiB): names
        # fall anywhere in a read, and are still checked.
        big = [('layer%d[40000]' % i, [float(v % 1000) for v in range(i, i + 40000)])
               for i in range(8)]
        shards = [('model-00001-of-00002.serio', big), ('model-00002-of-00002.serio', SHARDS[2][1])]
        index = self.write_checkpoint(shards)
        self.assertGreater(len(self.read('model-00001-of-00002.serio')), 3 << 18)
        self.check(index, 0)
        index = self.write_checkpoint(shards, drop_keys=('layer7',))
        self.assert_check_fails(index, 1, 'model-00001-of-00002.serio', 'layer7',
                                'does not list')

    def test_missing_shard(self):
        index = self.write_checkpoint()
        os.unlink(self.path('model-00002-of-00003.serio'))
        self.assert_check_fails(index, 2, 'model-00002-of-00003.serio')

    def test_strict_index(self):
        cases = {
            'duplicate': (lambda t: t.replace('"weight_map": {', '"weight_map": {"step": "x", ', 1),
                          'twice'),
            'unknown': (lambda t: t.replace('"shards"', '"comment": 1, "shards"', 1), 'unknown'),
            'float': (lambda t: t.replace('"total_size": 60', '"total_size": 6e1', 1), 'byte'),
            'nan': (lambda t: t.replace('"total_size": 60', '"total_size": NaN', 1), 'byte'),
            'version': (lambda t: t.replace('"version": 1', '"version": 2', 1), 'version 2'),
            'format': (lambda t: t.replace('serio-shards', 'serio-dcp', 1), 'serio-shards'),
            'path': (lambda t: t.replace('"model-00002-of-00003.serio": {',
                                         '"../model-00002-of-00003.serio": {', 1), 'beside'),
            'trailing': (lambda t: t + '{}', 'follows'),
        }
        for what, (change, needle) in cases.items():
            with self.subTest(what):
                index = self.write_checkpoint()
                text = self.read(index).decode()
                changed = change(text)
                self.assertNotEqual(changed, text)
                self.write(index, changed.encode())
                self.assert_check_fails(index, 1, 'model.serio.index.json', needle)


# Two shards of a Hugging Face checkpoint, with every kind of tensor the
# model files hold.
HF = [
    ('model-00001-of-00002.safetensors', [
        ('embed.weight', 'F32', [2, 2], struct.pack('<4f', 0.1, -2.5, 3e-45, 1e30)),
        ('norm.weight', 'BF16', [3], struct.pack('<3H', 0x3F80, 0x0001, 0xFF80)),
    ]),
    ('model-00002-of-00002.safetensors', [
        ('lm_head.weight', 'F16', [2], struct.pack('<2H', 0x3C00, 0x8000)),
        ('position_ids', 'I64', [1, 3], struct.pack('<3q', 0, 1, 2)),
        ('mask', 'BOOL', [2], bytes([1, 0])),
    ]),
]


class ConvertIndexTests(ShardTestCase):

    def write_hf(self, shards=HF, weight_map=None, metadata=None):
        computed = {}
        for file_name, tensors in shards:
            self.write(file_name, build(tensors, metadata={'format': 'pt'}))
            for name, _, _, _ in tensors:
                computed[name] = file_name
        total = sum(len(raw) for _, tensors in shards for _, _, _, raw in tensors)
        index = {'metadata': metadata or {'total_size': total},
                 'weight_map': weight_map or dict(sorted(computed.items()))}
        self.write('model.safetensors.index.json', json.dumps(index, indent=2).encode())
        return 'model.safetensors.index.json'

    def tensors_of(self, index_name):
        """{name: (dtype, shape, bytes, file)} and the metadata of every
        shard of a safetensors index, read by test_safetensors' parser."""
        with open(self.path(index_name), 'rb') as f:
            index = json.loads(f.read())
        found, metadata = {}, {}
        for name in sorted(set(index['weight_map'].values())):
            meta, tensors, _ = parse_safetensors(self.read(name))
            metadata[name] = meta
            for key, (dtype, shape, raw) in tensors.items():
                self.assertEqual(index['weight_map'][key], name)
                found[key] = (dtype, shape, raw)
        self.assertEqual(set(found), set(index['weight_map']))
        return found, index, metadata

    def test_safetensors_to_serio_and_back(self):
        source = self.write_hf()
        proc = self.run_tool('convert', source, 'ckpt.serio.index.json', status=0)
        self.assertEqual(proc.stderr, b'')
        names = sorted(n for n in os.listdir(self.dir) if n.startswith('ckpt'))
        self.assertEqual(names, ['ckpt-00001-of-00002.serio', 'ckpt-00002-of-00002.serio',
                                 'ckpt.serio.index.json'])
        with open(self.path('ckpt.serio.index.json'), 'rb') as f:
            index = json.loads(f.read())
        total = sum(len(raw) for _, tensors in HF for _, _, _, raw in tensors)
        self.assertEqual(total, 52)
        self.assertEqual(index['metadata'], {'format': 'serio-shards', 'version': 1,
                                             'total_size': total})
        want = {name: ('ckpt-%05d-of-00002.serio' % (k + 1))
                for k, (_, tensors) in enumerate(HF) for name, _, _, _ in tensors}
        self.assertEqual(index['weight_map'], want)
        for k, (_, tensors) in enumerate(HF):
            shard = 'ckpt-%05d-of-00002.serio' % (k + 1)
            data = self.read(shard)
            self.assertEqual(index['shards'][shard], {'size': len(data),
                                                      'seal': seal_tokens(data)})
            stored = {name for name, _ in serio_records(data)}
            self.assertEqual(stored, {'serio.metadata.format@uint8[2]'} |
                             {stored_name(n, d, s) for n, d, s, _ in tensors})
        self.check('ckpt.serio.index.json', 0)

        self.run_tool('convert', 'ckpt.serio.index.json', 'back.safetensors.index.json',
                      status=0)
        got, back_index, metadata = self.tensors_of('back.safetensors.index.json')
        want, _, _ = self.tensors_of(source)
        self.assertEqual(got, want)
        self.assertEqual(back_index['metadata'], {'total_size': total})
        self.assertEqual(list(back_index['weight_map']), sorted(back_index['weight_map']))
        self.assertEqual(sorted(set(back_index['weight_map'].values())),
                         ['back-00001-of-00002.safetensors', 'back-00002-of-00002.safetensors'])
        self.assertEqual(set(map(str, metadata.values())), {str({'format': 'pt'})})

    def assert_nothing_written(self, before):
        self.assertEqual(sorted(os.listdir(self.dir)), before)

    def test_tensor_the_index_does_not_list(self):
        source = self.write_hf(weight_map={'embed.weight': 'model-00001-of-00002.safetensors',
                                           'lm_head.weight': 'model-00002-of-00002.safetensors',
                                           'position_ids': 'model-00002-of-00002.safetensors',
                                           'mask': 'model-00002-of-00002.safetensors'})
        before = sorted(os.listdir(self.dir))
        proc = self.run_tool('convert', source, 'ckpt.serio.index.json', status=1)
        err = proc.stderr.decode()
        self.assertIn('model-00001-of-00002.safetensors', err)
        self.assertIn('norm.weight', err)
        self.assert_nothing_written(before)

    def test_tensor_missing_from_its_shard(self):
        weight_map = {name: file_name for file_name, tensors in HF for name, _, _, _ in tensors}
        weight_map['extra'] = 'model-00002-of-00002.safetensors'
        source = self.write_hf(weight_map=weight_map)
        before = sorted(os.listdir(self.dir))
        proc = self.run_tool('convert', source, 'ckpt.serio.index.json', status=1)
        self.assertIn('model-00002-of-00002.safetensors', proc.stderr.decode())
        self.assert_nothing_written(before)

    def test_bad_shard_is_refused_by_name(self):
        source = self.write_hf()
        self.write('model-00002-of-00002.safetensors', b'\x08' + b'\x00' * 7 + b'{"a":1} ')
        before = sorted(os.listdir(self.dir))
        proc = self.run_tool('convert', source, 'ckpt.serio.index.json', status=1)
        self.assertIn('model-00002-of-00002.safetensors', proc.stderr.decode())
        self.assert_nothing_written(before)

    def test_damaged_serio_checkpoint_is_not_converted(self):
        index = self.write_checkpoint()
        name = 'model-00003-of-00003.serio'
        self.write(name, self.read(name).replace(b'|1|41\n', b'|1|42\n'))
        before = sorted(os.listdir(self.dir))
        proc = self.run_tool('convert', index, 'out.safetensors.index.json', status=1)
        self.assertIn(name, proc.stderr.decode())
        self.assert_nothing_written(before)

    def test_usage(self):
        source = self.write_hf()
        for args in ((source, 'ckpt.safetensors.index.json'), (source, 'ckpt.serio'),
                     ('--plain', source, 'ckpt.serio.index.json'),
                     (source, '.serio.index.json')):
            with self.subTest(args=args):
                self.run_tool('convert', *args, status=2)

    def test_strict_safetensors_index(self):
        source = self.write_hf()
        text = self.read(source).decode()
        self.write(source, text.replace('"weight_map": {', '"weight_map": {"mask": "x", ', 1)
                   .encode())
        proc = self.run_tool('convert', source, 'ckpt.serio.index.json', status=1)
        self.assertIn('model.safetensors.index.json', proc.stderr.decode())
        self.assertIn('twice', proc.stderr.decode())


if __name__ == '__main__':
    # Called as test_serio_tool.py is: SERIO VERSION [unittest arguments].
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
