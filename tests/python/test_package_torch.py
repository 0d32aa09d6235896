# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio.torch: a model, its optimizer and counters in one call each way,
and a resumed training that equals the uninterrupted one bit for bit.

Parameters are compared as bytes (a uint8 view of each tensor). Exits 77
(skip) without NumPy or PyTorch.
"""

import os
import sys
import tempfile
import unittest

try:
    import numpy  # noqa: F401
    import torch
except ImportError as error:
    print('NumPy or PyTorch is not installed: %s' % (error,), file=sys.stderr)
    sys.exit(77)

import serio  # noqa: E402
import serio.torch  # noqa: E402

STEPS = 3


def tensor_bytes(tensor):
    return tensor.detach().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes()


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(),
                               torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))


def batches():
    generator = torch.Generator().manual_seed(7)
    return [(torch.randn(16, 6, generator=generator), torch.randint(0, 3, (16,),
                                                                    generator=generator))
            for _ in range(2 * STEPS)]


def train(model, optimizer, data):
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()


OPTIMIZERS = {
    'adam': lambda params: torch.optim.Adam(params, lr=1e-2),
    'sgd-momentum': lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9,
                                                   nesterov=True, weight_decay=1e-4),
    'adamw-amsgrad': lambda params: torch.optim.AdamW(params, lr=1e-2, amsgrad=True),
}


class TestResume(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, 'ckpt.serio')

    def assert_resume_is_bit_identical(self, name):
        data = batches()
        # Uninterrupted: six steps.
        straight = make_model(1)
        straight_opt = OPTIMIZERS[name](straight.parameters())
        train(straight, straight_opt, data)

        # Three steps, saved; a new model and optimizer (other initial
        # weights), loaded; three more steps.
        first = make_model(1)
        first_opt = OPTIMIZERS[name](first.parameters())
        train(first, first_opt, data[:STEPS])
        serio.torch.save(self.path, first, first_opt, epoch=STEPS, name='run-1',
                         rng=torch.get_rng_state())
        del first, first_opt

        resumed = make_model(2)
        resumed_opt = OPTIMIZERS[name](resumed.parameters())
        extra = serio.torch.load(self.path, resumed, resumed_opt)
        self.assertEqual(sorted(extra), ['epoch', 'name', 'rng'])
        self.assertIs(type(extra['epoch']), int)
        self.assertEqual(extra['epoch'], STEPS)
        self.assertEqual(extra['name'], 'run-1')
        self.assertEqual(extra['rng'].dtype, torch.uint8)
        train(resumed, resumed_opt, data[STEPS:])

        expected = straight.state_dict()
        got = resumed.state_dict()
        self.assertEqual(list(expected), list(got))
        for key in expected:
            self.assertEqual(expected[key].dtype, got[key].dtype, key)
            self.assertEqual(tensor_bytes(expected[key]), tensor_bytes(got[key]), key)
        # The optimizers' states agree too.
        for a, b in zip(straight_opt.state.values(), resumed_opt.state.values()):
            for key in a:
                self.assertEqual(tensor_bytes(torch.as_tensor(a[key])),
                                 tensor_bytes(torch.as_tensor(b[key])), key)

    def test_adam(self):
        self.assert_resume_is_bit_identical('adam')

    def test_sgd_with_momentum(self):
        self.assert_resume_is_bit_identical('sgd-momentum')

    def test_adamw_amsgrad(self):
        self.assert_resume_is_bit_identical('adamw-amsgrad')

    def test_the_records_are_named_by_key_path(self):
        model = make_model(1)
        optimizer = OPTIMIZERS['adam'](model.parameters())
        train(model, optimizer, batches()[:1])
        serio.torch.save(self.path, model, optimizer, epoch=1)
        arrays = serio.numpy.load(self.path)
        self.assertEqual(tensor_bytes(torch.from_numpy(arrays['model.0.weight'])),
                         tensor_bytes(model[0].weight))
        self.assertEqual(tensor_bytes(torch.from_numpy(arrays['optimizer.state.0.exp_avg'])),
                         tensor_bytes(optimizer.state[model[0].weight]['exp_avg']))
        self.assertEqual(arrays['model.2.num_batches_tracked'].dtype, numpy.int64)
        self.assertEqual(arrays['epoch'].dtype, numpy.int64)

    def test_a_whole_state_through_serio_save(self):
        model = make_model(1)
        optimizer = OPTIMIZERS['adam'](model.parameters())
        train(model, optimizer, batches()[:1])
        state = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                 'epoch': 3, 'rng': torch.get_rng_state(), 'name': 'run-1'}
        serio.save(self.path, state)
        back = serio.load(self.path)
        self.assertEqual(list(back), list(state))
        groups = back['optimizer']['param_groups']
        self.assertEqual(groups, state['optimizer']['param_groups'])
        self.assertIs(type(groups[0]['betas']), tuple)
        self.assertEqual(list(back['optimizer']['state']), list(state['optimizer']['state']))
        self.assertIs(type(next(iter(back['optimizer']['state']))), int)
        self.assertEqual(tensor_bytes(back['rng']), tensor_bytes(state['rng']))

    def test_names_and_map_location(self):
        model = make_model(1)
        serio.torch.save(self.path, model, step=5)
        fresh = make_model(2)
        extra = serio.torch.load(self.path, fresh, map_location=torch.device('cpu'))
        self.assertEqual(extra, {'step': 5})
        for key, value in model.state_dict().items():
            self.assertEqual(tensor_bytes(value), tensor_bytes(fresh.state_dict()[key]), key)
        got = serio.load(self.path, names=['model.0.bias'])
        self.assertEqual(tensor_bytes(got['model.0.bias']), tensor_bytes(model[0].bias))

    def test_misuse_and_strictness(self):
        model = make_model(1)
        with self.assertRaises(TypeError):
            serio.torch.save(self.path, model, model=1)
        serio.torch.save(self.path, model)
        with self.assertRaises(KeyError) as caught:
            serio.torch.load(self.path, make_model(2), torch.optim.SGD(model.parameters(),
                                                                       lr=1))
        self.assertIn('optimizer', str(caught.exception))
        smaller = torch.nn.Sequential(torch.nn.Linear(6, 8))
        with self.assertRaises(RuntimeError):
            serio.torch.load(self.path, smaller)
        serio.torch.load(self.path, smaller, strict=False)
        self.assertEqual(tensor_bytes(smaller[0].weight), tensor_bytes(model[0].weight))
        serio.save(self.path, {'weights': model.state_dict()})
        with self.assertRaises(KeyError):
            serio.torch.load(self.path, make_model(2))


if __name__ == '__main__':
    unittest.main()
