# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""One rank of the serio.dcp tests (test_dcp.py starts them):

    dcp_worker.py save|load DIR RANK WORLD RENDEZVOUS_FILE SEED

Joins a gloo group of WORLD processes on this machine (a file:// store,
sockets on the loopback interface), then saves the checkpoint of
expected_state(SEED) with serio.dcp.StorageWriter into DIR, its
"sharded" tensor split by rows across the ranks, or loads DIR with
serio.dcp.StorageReader into a state whose "sharded" tensor is split
across this group and checks every value bit for bit. Prints "ok" and
exits 0, or prints the failure and exits 1.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch_shard_compat  # noqa: E402

torch_shard_compat.install()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import dcp_common  # noqa: E402


def main():
    mode, directory, rank, world, rendezvous, seed = sys.argv[1:]
    rank, world, seed = int(rank), int(world), int(seed)
    dist.init_process_group('gloo', init_method='file://' + rendezvous,
                            rank=rank, world_size=world)
    try:
        import serio.dcp
        import torch.distributed._shard.checkpoint as checkpoint
        from torch.distributed._shard import sharded_tensor
        from torch.distributed._shard.sharding_spec import ChunkShardingSpec
        expected = dcp_common.expected_state(seed)
        spec = ChunkShardingSpec(dim=0, placements=['rank:%d/cpu' % r for r in range(world)])
        full = expected['sharded']
        sharded = sharded_tensor.empty(spec, *full.shape, dtype=full.dtype)
        for shard in sharded.local_shards():
            rows, cols = shard.metadata.shard_offsets
            n_rows, n_cols = shard.metadata.shard_sizes
            if mode == 'save':
                shard.tensor.copy_(full[rows:rows + n_rows, cols:cols + n_cols])
            else:
                shard.tensor.zero_()
        if mode == 'save':
            state = dict(expected, sharded=sharded)
            checkpoint.save_state_dict(
                state, storage_writer=serio.dcp.StorageWriter(directory))
            print('ok')
            return 0
        state = dict(dcp_common.blank_state(seed), sharded=sharded)
        checkpoint.load_state_dict(
            state, storage_reader=serio.dcp.StorageReader(directory))
        problems = dcp_common.compare(state, expected, skip=('sharded',))
        for shard in sharded.local_shards():
            rows, cols = shard.metadata.shard_offsets
            n_rows, n_cols = shard.metadata.shard_sizes
            want = full[rows:rows + n_rows, cols:cols + n_cols]
            if not dcp_common.same_bits(shard.tensor, want):
                problems.append('sharded: the shard at row %d differs' % rows)
        print('\n'.join(problems) if problems else 'ok')
        return 1 if problems else 0
    finally:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    sys.exit(main())
