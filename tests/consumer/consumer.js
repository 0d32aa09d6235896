// SPDX-License-Identifier: LGPL-2.1-or-later
//
// An installed libserio from GJS, run by run.sh as `gjs -m consumer.js`.
//
// SERIO_CONSUMER_ROOT is the DESTDIR: the typelib and the shared library
// must come from under it. Exits 0 when a round trip keeps every bit and a
// bad version line fails with Serio.Error.VERSION; otherwise exits 1.

import GIRepository from 'gi://GIRepository?version=2.0';
import GLib from 'gi://GLib';
import Serio from 'gi://Serio?version=1.0';
import System from 'system';

const ROOT = `${GLib.canonicalize_filename(GLib.getenv('SERIO_CONSUMER_ROOT'), null)}/`;

// A JS engine may rewrite NaN payloads, so the NaN goes in as a JS NaN; the
// rest are exact bit patterns.
const INPUT_BITS = [
    0x0000000000000000n, // +0
    0x8000000000000000n, // -0
    0x7ff0000000000000n, // +inf
    0xfff0000000000000n, // -inf
    0x0000000000000001n, // smallest subnormal
    0x7fefffffffffffffn, // largest finite
    0x3fb999999999999an, // 0.1
    0x43d0000000000000n, // 2^62
];
const EXPECTED_BITS = [...INPUT_BITS, 0x7ff8000000000000n];

function check(condition, what) {
    if (!condition)
        throw new Error(what);
}

function underRoot(path) {
    return GLib.canonicalize_filename(path, null).startsWith(ROOT);
}

// Bit patterns and doubles share their bytes in native order, so that no
// NaN is rewritten on the way and the bundle's GBytes is read as stored.
function f64FromBits(patterns) {
    return new Float64Array(BigUint64Array.from(patterns).buffer);
}

function bitsOf(bytes) {
    return Array.from(new BigUint64Array(bytes.toArray().slice().buffer));
}

function main() {
    const typelib = GIRepository.Repository.get_default().get_typelib_path('Serio');
    check(underRoot(typelib), `typelib ${typelib} is not the installed one`);

    const bundle = new Serio.Bundle();
    bundle.append('dense.w', [...f64FromBits(INPUT_BITS), NaN]);
    const parsed = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN));
    const [found, index] = parsed.lookup('dense.w');
    check(found, 'the array is missing after the round trip');
    const got = bitsOf(parsed.get_bytes(index));
    check(got.length === EXPECTED_BITS.length && got.every((b, i) => b === EXPECTED_BITS[i]),
        `the round trip changed bits: ${got.map(b => b.toString(16))}`);
    check(parsed.equal(bundle), 'the round trip differs');

    let caught = null;
    try {
        Serio.Bundle.new_from_string('v2|x|0|\n');
    } catch (e) {
        caught = e;
    }
    check(caught instanceof GLib.Error && caught.matches(Serio.Error, Serio.Error.VERSION),
        `a v2 line failed with ${caught}`);

    // GJS opens the library at the first call into it, so look only now.
    const [, maps] = GLib.file_get_contents('/proc/self/maps');
    const libraries = new TextDecoder().decode(maps).split('\n')
        .filter(line => line.includes('libserio-1.0.so'))
        .map(line => line.split(/\s+/).pop());
    check(libraries.length > 0 && libraries.every(underRoot),
        `libserio loaded from ${libraries}`);

    print(`typelib ${typelib.slice(ROOT.length - 1)}: round trip and error code ok`);
}

try {
    main();
} catch (e) {
    printerr(`consumer.js: ${e.message}`);
    System.exit(1);
}
