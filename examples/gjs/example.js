// SPDX-License-Identifier: LGPL-2.1-or-later
// Save two arrays with libserio, load them back, compare bits.

import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import Serio from 'gi://Serio?version=1.0';
import System from 'system';

const WEIGHTS = [0.1, -0, 1e-300, Number.MAX_VALUE, 1 / 3];
const BIAS = [-2.5];

// The IEEE-754 bytes of an array of numbers: compare these, not numbers.
function bits(values) {
    return new Uint8Array(Float64Array.from(values).buffer);
}

function sameBits(bundle, name, expected) {
    const [found, index] = bundle.lookup(name);
    if (!found)
        return false;
    const a = bits(bundle.get_values(index));
    const b = bits(expected);
    return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function saveAndLoad() {
    const bundle = Serio.Bundle.new();
    // The shape travels in the name: this array is stored as "dense.w[1x5]".
    bundle.append_with_shape('dense.w', [1, 5], WEIGHTS);
    bundle.append('dense.b', BIAS);

    const dir = Gio.File.new_for_path(GLib.dir_make_tmp('serio-example-XXXXXX'));
    const file = dir.get_child('model.serio');
    let loaded;
    try {
        // Atomic: a crash leaves either the old file or the new one.
        bundle.save_to_file(file, Serio.SaveFlags.NONE, null, null);
        loaded = Serio.Bundle.new_from_file(file, null, null);
    } finally {
        file.delete(null);
        dir.delete(null);
    }

    if (!sameBits(loaded, 'dense.w', WEIGHTS) ||
        !sameBits(loaded, 'dense.b', BIAS)) {
        printerr('The arrays did not come back bit for bit');
        return false;
    }

    const [, index] = loaded.lookup('dense.w');
    print(`${loaded.get_name(index)}: base name ${loaded.get_base_name(index)}, ` +
          `shape [${loaded.get_shape(index).join(', ')}]`);
    const checksum = Serio.compute_checksum_for_bytes(loaded.to_bytes(Serio.SaveFlags.PLAIN));
    print(`Restored ${loaded.get_n_arrays()} arrays bit for bit, ` +
          `checksum ${checksum.toString(16).padStart(8, '0')}`);
    return true;
}

function rejectBadCount() {
    try {
        Serio.Bundle.new_from_string('v1|x|2|1\n');
    } catch (error) {
        if (error instanceof GLib.Error &&
            error.matches(Serio.Error, Serio.Error.LENGTH)) {
            print(`Rejected as expected: ${error.message}`);
            return true;
        }
        throw error;
    }
    printerr('A record with a wrong count was not rejected');
    return false;
}

function keepFloat32() {
    const kernel = Float32Array.from([0.1, -0.5, 2, 1e-3, -0, 3]);
    const bundle = Serio.Bundle.new();
    // The type travels in the name: this array is stored as "conv.w@float32[2x3]".
    bundle.append_typed('conv.w', Serio.Dtype.FLOAT32, [2, 3],
        new GLib.Bytes(new Uint8Array(kernel.buffer)));

    const loaded = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN));
    const back = new Float32Array(loaded.get_typed_bytes(0).toArray().buffer);
    const a = new Uint8Array(back.buffer);
    const b = new Uint8Array(kernel.buffer);
    if (loaded.get_dtype(0) !== Serio.Dtype.FLOAT32 ||
        a.length !== b.length || !a.every((byte, i) => byte === b[i])) {
        printerr('The float32 array did not come back bit for bit');
        return false;
    }
    print(`Kept the ${Serio.Dtype.to_string(loaded.get_dtype(0))} array ${loaded.get_name(0)}`);
    return true;
}

System.exit(saveAndLoad() && rejectBadCount() && keepFloat32() ? 0 : 1);
