// SPDX-License-Identifier: LGPL-2.1-or-later
// Save two arrays with libserio, load them back, compare bits.

const double[] WEIGHTS = { 0.1, -0.0, 1e-300, double.MAX, 1.0 / 3.0 };
const double[] BIAS = { -2.5 };

bool same_bits (Serio.Bundle bundle, string name, double[] expected) {
    uint index;
    if (!bundle.lookup (name, out index)) {
        return false;
    }
    double[] values = bundle.get_values (index);
    return values.length == expected.length
        && Memory.cmp (values, expected, expected.length * sizeof (double)) == 0;
}

bool save_and_load () throws Error {
    var bundle = new Serio.Bundle ();
    // The shape travels in the name: this array is stored as "dense.w[1x5]".
    bundle.append_with_shape ("dense.w", { 1, 5 }, WEIGHTS);
    bundle.append ("dense.b", BIAS);

    var dir = File.new_for_path (DirUtils.make_tmp ("serio-example-XXXXXX"));
    var file = dir.get_child ("model.serio");
    try {
        // Atomic: a crash leaves either the old file or the new one.
        bundle.save_to_file (file, Serio.SaveFlags.NONE);
        var loaded = new Serio.Bundle.from_file (file);

        if (!same_bits (loaded, "dense.w", WEIGHTS)
            || !same_bits (loaded, "dense.b", BIAS)) {
            printerr ("The arrays did not come back bit for bit\n");
            return false;
        }

        uint index;
        loaded.lookup ("dense.w", out index);
        uint64[] shape = loaded.get_shape (index);
        print ("%s: base name %s, shape [%s, %s]\n", loaded.get_name (index),
               loaded.get_base_name (index), shape[0].to_string (), shape[1].to_string ());
        var checksum = Serio.compute_checksum_for_bytes (loaded.to_bytes (Serio.SaveFlags.PLAIN));
        print ("Restored %u arrays bit for bit, checksum %08x\n",
               loaded.get_n_arrays (), checksum);
        return true;
    } finally {
        FileUtils.unlink (file.get_path ());
        DirUtils.remove (dir.get_path ());
    }
}

bool reject_bad_count () throws Error {
    try {
        new Serio.Bundle.from_string ("v1|x|2|1\n");
    } catch (Serio.Error.LENGTH error) {
        print ("Rejected as expected: %s\n", error.message);
        return true;
    }
    printerr ("A record with a wrong count was not rejected\n");
    return false;
}

bool keep_float32 () throws Error {
    float[] kernel = { 0.1f, -0.5f, 2.0f, 1e-3f, -0.0f, 3.0f };
    var bundle = new Serio.Bundle ();
    // The type travels in the name: this array is stored as "conv.w@float32[2x3]".
    bundle.append_typed ("conv.w", Serio.Dtype.FLOAT32, { 2, 3 }, new Bytes ((uint8[]) kernel));

    var loaded = new Serio.Bundle.from_string (bundle.to_string (Serio.SaveFlags.PLAIN));
    var typed = loaded.get_typed_bytes (0);
    unowned uint8[] back = typed.get_data ();
    if (loaded.get_dtype (0) != Serio.Dtype.FLOAT32
        || back.length != kernel.length * sizeof (float)
        || Memory.cmp (back, kernel, back.length) != 0) {
        printerr ("The float32 array did not come back bit for bit\n");
        return false;
    }
    print ("Kept the %s array %s\n", loaded.get_dtype (0).to_string (), loaded.get_name (0));
    return true;
}

int main () {
    // libserio's messages follow the user's language once this is done.
    Intl.setlocale ();
    try {
        return save_and_load () && reject_bad_count () && keep_float32 () ? 0 : 1;
    } catch (Error error) {
        printerr ("%s\n", error.message);
        return 1;
    }
}
