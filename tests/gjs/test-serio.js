// SPDX-License-Identifier: LGPL-2.1-or-later
//
// libserio from GJS (run as `gjs -m test-serio.js`), printing TAP.
// Values are compared by their bit patterns (BigUint64Array views), never
// with ===.

import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import Serio from 'gi://Serio?version=1.0';
import System from 'system';

const CANONICAL_NAN = 0x7ff8000000000000n;
const N_RANDOM = GLib.getenv('SERIO_TEST_SLOW_TOOL') ? 10000 : 200000;
const ERROR_CODES = ['VERSION', 'SYNTAX', 'LENGTH', 'DOMAIN', 'TRUNCATED'];
const BAD_INPUTS = {
    VERSION: 'v2|x|0|\n',
    SYNTAX: 'v1|x|2|1,01\n',
    LENGTH: 'v1|x|1|\n',
    DOMAIN: 'v1|x|1|1p1024\n',
    TRUNCATED: 'v1|x|1|1',
};

let nTests = 0;
let nFailed = 0;

function test(name, func) {
    nTests++;
    try {
        func();
        print(`ok ${nTests} - ${name}`);
    } catch (e) {
        nFailed++;
        print(`not ok ${nTests} - ${name}`);
        for (const line of `${e}\n${e.stack ?? ''}`.trimEnd().split('\n'))
            print(`# ${line}`);
    }
}

function assert(condition, message) {
    if (!condition)
        throw new Error(`assertion failed: ${message}`);
}

function show(value) {
    return typeof value === 'bigint' ? `0x${value.toString(16)}` : JSON.stringify(value);
}

function assertEqual(got, expected, message = '') {
    if (!Object.is(got, expected))
        throw new Error(`${message}: got ${show(got)}, expected ${show(expected)}`);
}

function assertThrowsSerio(func, code) {
    try {
        func();
    } catch (e) {
        assert(e instanceof GLib.Error, `${e} is a GLib.Error`);
        assertEqual(GLib.quark_to_string(e.domain), 'serio-error-quark', 'domain');
        assertEqual(e.code, Serio.Error[code], 'code');
        assert(e.matches(Serio.Error, Serio.Error[code]), `matches Serio.Error.${code}`);
        for (const other of ERROR_CODES.filter(c => c !== code))
            assert(!e.matches(Serio.Error, Serio.Error[other]), `does not match ${other}`);
        assert(e.message.length > 0, 'has a message');
        return e;
    }
    throw new Error(`no Serio.Error.${code} was thrown`);
}

// BigUint64Array and Float64Array share the host's byte order, so a pattern
// written through one is the double read through the other.
function f64FromBits(patterns) {
    return new Float64Array(BigUint64Array.from(patterns).buffer);
}

// Typed arrays are read through their bytes: reading an element as a number
// would turn every NaN into the engine's canonical one.
function bitsOf(values) {
    const f64 = values instanceof Float64Array ? values : Float64Array.from(values);
    return Array.from(new BigUint64Array(f64.buffer, f64.byteOffset, f64.length));
}

function assertSameBits(got, expected) {
    const a = bitsOf(got);
    const b = bitsOf(expected);
    assertEqual(a.length, b.length, 'length');
    const i = a.findIndex((bits, j) => bits !== b[j]);
    if (i >= 0)
        throw new Error(`value ${i}: ${a[i].toString(16)} != ${b[i].toString(16)}`);
}

function canonical(patterns) {
    return patterns.map(p => (p & 0x7ff0000000000000n) === 0x7ff0000000000000n &&
        (p & 0xfffffffffffffn) !== 0n ? CANONICAL_NAN : p);
}

// The values in a GBytes as a Float64Array. toArray() may return a view into
// a larger buffer: use its offset, and copy only if that is unaligned.
function float64sOf(bytes) {
    const u8 = bytes.toArray();
    if (u8.byteOffset % 8 === 0)
        return new Float64Array(u8.buffer, u8.byteOffset, u8.byteLength / 8);
    return new Float64Array(u8.slice().buffer);
}

function bytesOfText(text) {
    return GLib.Bytes.new(new TextEncoder().encode(text));
}

function bytesOf(f64) {
    return GLib.Bytes.new(new Uint8Array(f64.buffer, f64.byteOffset, f64.byteLength));
}

// splitmix64: a seeded stream of 64-bit patterns.
function randomPatterns(n, seed) {
    const mask = (1n << 64n) - 1n;
    let state = seed;
    const out = [];
    for (let i = 0; i < n; i++) {
        state = (state + 0x9e3779b97f4a7c15n) & mask;
        let z = state;
        z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
        z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
        out.push(z ^ (z >> 31n));
    }
    return out;
}

const SPECIAL_BITS = [
    0x0000000000000000n, 0x8000000000000000n, // ±0
    0x7ff0000000000000n, 0xfff0000000000000n, // ±inf
    0x0000000000000001n, 0x800fffffffffffffn, // subnormals
    0x0010000000000000n, 0xffefffffffffffffn, // smallest normal, -max
    0x7fefffffffffffffn, 0x3fb999999999999an, // max, 0.1
    0x7ff8000000000000n, 0xfff8000000000000n, // NaNs
    0x7ff0000000000001n, 0x7fffffffffffffffn,
];

test('append and to_string give the spec line', () => {
    const b = Serio.Bundle.new();
    b.append('dense.w', [0.1, -0, Infinity]);
    assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|dense.w|3|3602879701896397p-55,-0,inf\n');
    assertEqual(b.n_arrays, 1, 'n_arrays');
    assertEqual(b.get_n_arrays(), 1, 'get_n_arrays');
});

test('from_string parses and equal compares names and bits', () => {
    const b = Serio.Bundle.new();
    b.append('dense.w', [0.1, -0, Infinity]);
    b.append('empty', []);
    const c = Serio.Bundle.new_from_string(b.to_string(Serio.SaveFlags.PLAIN));
    assert(c instanceof Serio.Bundle, 'from_string returns a Bundle');
    assert(b.equal(c), 'parsed bundle equals the original');
    const values = c.get_values(0);
    assert(Array.isArray(values), 'get_values returns an Array');
    assertSameBits(values, [0.1, -0, Infinity]);
    assertEqual(c.get_values(1).length, 0, 'empty array');
    assertEqual(c.to_string(Serio.SaveFlags.PLAIN), b.to_string(Serio.SaveFlags.PLAIN), 'canonical text');

    const zero = Serio.Bundle.new();
    zero.append('dense.w', [0.1, 0, Infinity]);
    zero.append('empty', []);
    assert(!b.equal(zero), '-0 and 0 differ');
});

test('special values keep their bits', () => {
    const b = Serio.Bundle.new();
    b.append_bytes('s', bytesOf(f64FromBits(SPECIAL_BITS)));
    const expected = f64FromBits(canonical(SPECIAL_BITS));
    assertSameBits(float64sOf(b.get_bytes(0)), expected);
    const c = Serio.Bundle.new_from_string(b.to_string(Serio.SaveFlags.PLAIN));
    assertSameBits(c.get_values(0), expected);
    assertSameBits(float64sOf(c.get_bytes(0)), expected);
    assert(b.equal(c), 'equal after the text');
});

test('random 64-bit patterns round-trip through the text', () => {
    const patterns = randomPatterns(N_RANDOM, 20260501n);
    const expected = f64FromBits(canonical(patterns));
    assert(canonical(patterns).some(p => p === CANONICAL_NAN), 'the sample holds NaNs');
    const b = Serio.Bundle.new();
    b.append('r', Array.from(f64FromBits(patterns)));
    const c = Serio.Bundle.new_from_string(b.to_string(Serio.SaveFlags.PLAIN));
    assertSameBits(c.get_values(0), expected);
    assertSameBits(float64sOf(c.get_bytes(0)), expected);
});

test('bytes bridge: append_bytes and get_bytes are bit-exact', () => {
    const patterns = randomPatterns(N_RANDOM, 7n).concat(SPECIAL_BITS);
    const source = f64FromBits(patterns);
    const expected = f64FromBits(canonical(patterns));
    const b = Serio.Bundle.new();
    b.append_bytes('w', bytesOf(source));
    source.fill(0);
    const got = float64sOf(b.get_bytes(0));
    assertSameBits(got, expected);
    assertEqual(bitsOf(got)[N_RANDOM + 1], 0x8000000000000000n, '-0 kept');

    const listed = Serio.Bundle.new();
    listed.append('w', Array.from(expected));
    assert(b.equal(listed), 'append_bytes and append agree');
    assertEqual(b.to_string(Serio.SaveFlags.PLAIN), listed.to_string(Serio.SaveFlags.PLAIN), 'same text');
});

test('bytes bridge: subarray views and empty arrays', () => {
    const whole = f64FromBits(SPECIAL_BITS);
    const part = whole.subarray(2, 6);
    const b = Serio.Bundle.new();
    b.append_bytes('part', bytesOf(part));
    b.append_bytes('empty', GLib.Bytes.new(new Uint8Array(0)));
    assertSameBits(float64sOf(b.get_bytes(0)), part);
    assertEqual(b.get_bytes(1).get_size(), 0, 'empty GBytes');
    assertEqual(float64sOf(b.get_bytes(1)).length, 0, 'empty Float64Array');
    assertEqual(b.to_string(Serio.SaveFlags.PLAIN).split('\n')[1], 'v1|empty|0|', 'empty record');
});

test('errors are GLib.Error in the Serio.Error domain', () => {
    for (const code of ERROR_CODES) {
        assertThrowsSerio(() => Serio.Bundle.new_from_string(BAD_INPUTS[code]), code);
        assertThrowsSerio(() => Serio.Bundle.new_from_bytes(bytesOfText(BAD_INPUTS[code])), code);
    }
    const text = 'v1|a|1|1\nv1|b|1|1p1024\n';
    const e = assertThrowsSerio(() => Serio.Bundle.new_from_string(text), 'DOMAIN');
    assert(e.message.includes('1p1024'), `message quotes the token: ${e.message}`);
});

test('from_bytes and to_bytes', () => {
    const c = Serio.Bundle.new_from_bytes(bytesOfText('v1|x|2|1,-1p-1\r\n\nv1|y|0|\n'));
    assertEqual(c.to_string(Serio.SaveFlags.PLAIN), 'v1|x|2|1,-1p-1\nv1|y|0|\n', 'CR LF and blank lines');
    assertSameBits(c.get_values(0), [1, -0.5]);
    const text = new TextDecoder().decode(c.to_bytes(Serio.SaveFlags.PLAIN).toArray());
    assertEqual(text, c.to_string(Serio.SaveFlags.PLAIN), 'to_bytes holds the text');
});

test('names round-trip and lookup returns [found, index]', () => {
    const names = ['température', '日本語', '🙂', '', 'dup', 'dup', 'a|b\rc\nd'];
    const b = Serio.Bundle.new();
    names.forEach((name, i) => b.append(name, [i]));
    const c = Serio.Bundle.new_from_string(b.to_string(Serio.SaveFlags.PLAIN));
    const stored = names.map(n => n.replace(/[|\r\n]/g, '_'));
    stored.forEach((name, i) => assertEqual(c.get_name(i), name, `name ${i}`));
    const [found, index] = c.lookup('dup');
    assertEqual(found, true, 'found');
    assertEqual(index, 4, 'first match');
    assertEqual(c.lookup('a_b_c_d')[1], 6, 'sanitized name');
    assertEqual(c.lookup('missing')[0], false, 'missing name');
});

test('checksum matches the FNV-1a vectors', () => {
    assertEqual(Serio.compute_checksum(''), 0x4fd0bfc1, '""');
    assertEqual(Serio.compute_checksum('a'), 0x296230c0, '"a"');
    assertEqual(Serio.compute_checksum('foobar'), 0x72ad2699, '"foobar"');
    assertEqual(Serio.compute_checksum_for_bytes(bytesOfText('foobar')), 0x72ad2699, 'bytes');
});

test('save_to_file and from_file', () => {
    const dir = GLib.dir_make_tmp('serio-gjs-XXXXXX');
    const file = Gio.File.new_for_path(GLib.build_filenamev([dir, 'w.serio']));
    try {
        const b = Serio.Bundle.new();
        b.append('w', [0.5, -0]);
        assert(b.save_to_file(file, Serio.SaveFlags.NONE, null, null), 'saved');
        assert(Serio.Bundle.new_from_file(file, null, null).equal(b), 'loaded');
    } finally {
        file.delete(null);
        Gio.File.new_for_path(dir).delete(null);
    }
});

test('shapes: append_with_shape, get_shape, get_base_name, lookup', () => {
    const b = Serio.Bundle.new();
    b.append_with_shape('conv.weight', [2, 1, 3], [1, 2, 3, 4, 5, 6]);
    b.append_with_shape('steps', [], [5]);
    b.append('bias', [0.5, 0.25]);
    b.append_bytes_with_shape('g', [1, 2], bytesOf(f64FromBits([0x3ff0000000000000n, 0x8000000000000000n])));
    assertEqual(b.to_string(Serio.SaveFlags.PLAIN),
        'v1|conv.weight[2x1x3]|6|1,2,3,4,5,6\nv1|steps[]|1|5\n' +
        'v1|bias|2|1p-1,1p-2\nv1|g[1x2]|2|1,-0\n', 'text');
    assertEqual(JSON.stringify(b.get_shape(0)), '[2,1,3]', 'shape 0');
    assertEqual(JSON.stringify(b.get_shape(1)), '[]', '0-d shape');
    assertEqual(JSON.stringify(b.get_shape(2)), '[2]', 'plain name');
    assertEqual(b.get_base_name(0), 'conv.weight', 'base name');
    assertEqual(b.get_base_name(2), 'bias', 'plain base name');
    assertEqual(b.lookup('steps')[1], 1, 'lookup by base name');
    assertEqual(b.lookup('conv.weight[2x1x3]')[1], 0, 'lookup by stored name');
    assertEqual(b.lookup('conv')[0], false, 'a prefix is no base name');
    assertEqual(Serio.SHAPE_MAX_DIMS, 32, 'SHAPE_MAX_DIMS');
    const copy = b.dup_values(0);
    copy[0] = 42;
    assertSameBits(b.get_values(0), [1, 2, 3, 4, 5, 6]);
});

function assertProgress(reports, total, minReports, what) {
    assert(reports.length >= minReports, `${what}: ${reports.length} reports, at least ${minReports}`);
    for (let i = 0; i < reports.length; i++) {
        assertEqual(reports[i][1], total, `${what}: total of report ${i}`);
        if (i > 0)
            assert(reports[i][0] > reports[i - 1][0], `${what}: report ${i} goes up`);
    }
    assertEqual(reports[reports.length - 1][0], total, `${what}: the last report is the total`);
}

test('async save and load report progress on the main loop before the result', () => {
    const n = 3 * 1024 * 1024;
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++)
        values[i] = (i % 1000003) / 1024;
    const b = Serio.Bundle.new();
    b.append_bytes('big', new GLib.Bytes(new Uint8Array(values.buffer)));
    const dir = GLib.dir_make_tmp('serio-gjs-XXXXXX');
    const file = Gio.File.new_for_path(GLib.build_filenamev([dir, 'big.serio']));
    const loop = GLib.MainLoop.new(null, false);
    const saving = [], loading = [];
    let saved = false, loaded = null, reportsAtSave = -1, reportsAtLoad = -1;

    b.save_to_file_async(file, Serio.SaveFlags.NONE, GLib.PRIORITY_DEFAULT, null,
        (done, total) => {
            assert(!saved, 'no save report after the result');
            saving.push([done, total]);
        },
        (source, result) => {
            saved = source.save_to_file_finish(result);
            reportsAtSave = saving.length;
            Serio.Bundle.new_from_file_async(file, GLib.PRIORITY_DEFAULT, null,
                (done, total) => {
                    assert(loaded === null, 'no load report after the result');
                    loading.push([done, total]);
                },
                (_source, result2) => {
                    loaded = Serio.Bundle.new_from_file_finish(result2);
                    reportsAtLoad = loading.length;
                    loop.quit();
                });
        });
    GLib.timeout_add(GLib.PRIORITY_DEFAULT, 120000, () => {
        loop.quit();
        return GLib.SOURCE_REMOVE;
    });
    loop.run();
    // a little longer: a report after the result would show here
    const until = GLib.get_monotonic_time() + 200000;
    while (GLib.get_monotonic_time() < until)
        GLib.MainContext.default().iteration(false);

    assert(saved, 'saved');
    assert(loaded !== null && loaded.equal(b), 'loaded back');
    assertEqual(saving.length, reportsAtSave, 'every save report came before the result');
    assertEqual(loading.length, reportsAtLoad, 'every load report came before the result');
    assertProgress(saving, n * 8, 3, 'save');
    const size = file.query_info('standard::size', Gio.FileQueryInfoFlags.NONE, null).get_size();
    assertProgress(loading, size, Math.floor(size / (1024 * 1024)), 'load');
    file.delete(null);
    GLib.rmdir(dir);
});

print(`1..${nTests}`);
System.exit(nFailed > 0 ? 1 : 0);
