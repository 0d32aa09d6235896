// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Element types from GJS (run as `gjs -m test-dtype.js`), printing TAP: a
// Float32Array (and the other typed arrays) in and out of a bundle, a
// writer and a reader as GLib.Bytes, with no loop over the elements in
// between; compared by bit patterns (Uint32Array views).

import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import Serio from 'gi://Serio?version=1.0';
import System from 'system';

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

function assertEqual(got, expected, message = '') {
    if (!Object.is(got, expected))
        throw new Error(`${message}: got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
}

// A typed array's bytes, as the typed APIs take them.
function bytesOf(typed) {
    return new GLib.Bytes(new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength));
}

// The bytes of two typed arrays are the same.
function assertSameBytes(got, expected, message) {
    const a = new Uint8Array(got.buffer, got.byteOffset, got.byteLength);
    const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
    assertEqual(a.length, b.length, `${message}: length`);
    const i = a.findIndex((v, j) => v !== b[j]);
    if (i >= 0)
        throw new Error(`${message}: byte ${i}: ${a[i]} != ${b[i]}`);
}

// Float32 values by their bits: the largest, the smallest subnormal, 0.1f,
// -0, ±inf, the quiet NaN, 1 + 2^-23.
const F32_BITS = new Uint32Array([
    0x7f7fffff, 0x00000001, 0x3dcccccd, 0x80000000, 0x7f800000, 0xff800000,
    0x7fc00000, 0x3f800001,
]);
const F32 = new Float32Array(F32_BITS.buffer);

test('a Float32Array in and out of a bundle, as bytes', () => {
    const bundle = Serio.Bundle.new();
    bundle.append_typed('w', Serio.Dtype.FLOAT32, [2, 4], bytesOf(F32));
    assertEqual(bundle.get_name(0), 'w@float32[2x4]', 'stored name');
    assertEqual(bundle.get_dtype(0), Serio.Dtype.FLOAT32, 'dtype');
    assertEqual(bundle.get_base_name(0), 'w', 'base name');

    const out = new Float32Array(bundle.get_typed_bytes(0).toArray().buffer);
    assertSameBytes(out, F32, 'bundle');

    // through the text
    const back = Serio.Bundle.new_from_bytes(bundle.to_bytes(Serio.SaveFlags.PLAIN));
    assertEqual(back.get_dtype(0), Serio.Dtype.FLOAT32, 'dtype read back');
    assertSameBytes(new Float32Array(back.get_typed_bytes(0).toArray().buffer), F32, 'text');

    // get_bytes still gives doubles
    const doubles = new Float64Array(back.get_bytes(0).toArray().buffer);
    assertEqual(doubles.length, F32.length, 'doubles');
    assertEqual(doubles[2], Math.fround(0.1), 'the double of 0.1f');
});

test('every typed array of JavaScript in and out', () => {
    const arrays = [
        [Serio.Dtype.FLOAT64, new Float64Array([0.1, -0, Infinity])],
        [Serio.Dtype.INT8, new Int8Array([-128, 127, 0])],
        [Serio.Dtype.UINT8, new Uint8Array([0, 255, 7])],
        [Serio.Dtype.INT16, new Int16Array([-32768, 32767])],
        [Serio.Dtype.UINT16, new Uint16Array([0, 65535])],
        [Serio.Dtype.INT32, new Int32Array([-2147483648, 2147483647])],
        [Serio.Dtype.UINT32, new Uint32Array([0, 4294967295])],
        [Serio.Dtype.INT64, new BigInt64Array([-(2n ** 63n), 2n ** 53n, -1n])],
        [Serio.Dtype.UINT64, new BigUint64Array([0n, 2n ** 64n - 2048n])],
        [Serio.Dtype.FLOAT16, new Uint16Array([0x3c00, 0x0001, 0x7bff, 0x8000])],
        [Serio.Dtype.BFLOAT16, new Uint16Array([0x3f80, 0x0001, 0x7f7f])],
        [Serio.Dtype.BOOL, new Uint8Array([1, 0, 0, 1])],
    ];
    const bundle = Serio.Bundle.new();
    for (const [dtype, array] of arrays)
        bundle.append_typed(Serio.Dtype.to_string(dtype), dtype, [array.length], bytesOf(array));

    const back = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN));
    arrays.forEach(([dtype, array], i) => {
        assertEqual(back.get_dtype(i), dtype, `dtype ${i}`);
        const got = back.get_typed_bytes(i).toArray();
        assertEqual(got.byteLength, array.length * Serio.Dtype.get_size(dtype), `size ${i}`);
        assertSameBytes(got, array, Serio.Dtype.to_string(dtype));
    });
});

test('names of types and stored names', () => {
    assertEqual(Serio.Dtype.to_string(Serio.Dtype.BFLOAT16), 'bfloat16', 'to_string');
    const [found, dtype] = Serio.Dtype.from_string('uint16');
    assert(found, 'uint16 is a type');
    assertEqual(dtype, Serio.Dtype.UINT16, 'from_string');
    assert(!Serio.Dtype.from_string('complex64')[0], 'complex64 is not');
    assert(Serio.Dtype.holds(Serio.Dtype.FLOAT32, Math.fround(0.1)), '0.1f is a float32');
    assert(!Serio.Dtype.holds(Serio.Dtype.FLOAT32, 0.1), '0.1 is not');
    assertEqual(Serio.name_compose('step', Serio.Dtype.INT64, []), 'step@int64[]', 'compose');
    assert(Serio.name_is_metadata('serio.dtypes'), 'serio.dtypes is metadata');
});

test('out-of-type values are Serio.Error.DOMAIN, in and out', () => {
    try {
        Serio.Bundle.new_from_string('v1|m@bool[2]|2|1,2\n');
        throw new Error('no error');
    } catch (e) {
        assert(e.matches(Serio.Error, Serio.Error.DOMAIN), `${e} is DOMAIN`);
        assertEqual(Serio.Error.get_value_index(e), 2, 'index');
        assert(e.message.includes('bool'), 'names the type');
    }

    const bundle = Serio.Bundle.new();
    try {
        bundle.append_typed('m', Serio.Dtype.BOOL, [2], bytesOf(new Uint8Array([1, 2])));
        throw new Error('no error');
    } catch (e) {
        assert(e.matches(Serio.Error, Serio.Error.DOMAIN), `${e} is DOMAIN`);
    }
    assertEqual(bundle.get_n_arrays(), 0, 'nothing appended');
});

test('a Float32Array through a Writer and a Reader, in pieces', () => {
    const n = 50000;
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++)
        values[i] = Math.fround(Math.sin(i) * 1e-3);

    const out = Gio.MemoryOutputStream.new_resizable();
    const writer = Serio.Writer.new(out, Serio.SaveFlags.NONE);
    writer.begin_typed_array('x', Serio.Dtype.FLOAT32, [n / 2, 2], null);
    for (let start = 0; start < n; start += 7000)
        writer.add_typed_bytes(bytesOf(values.subarray(start, start + 7000)), null);
    writer.write_typed('m', Serio.Dtype.BOOL, [3], bytesOf(new Uint8Array([1, 0, 1])), null);
    writer.close(null);

    const reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(out.steal_as_bytes()));
    assert(reader.next(null), 'first array');
    assertEqual(reader.get_dtype(), Serio.Dtype.FLOAT32, 'dtype');
    assertEqual(reader.get_name(), `x@float32[${n / 2}x2]`, 'name');
    const back = new Float32Array(n);
    let got = 0;
    for (;;) {
        const piece = reader.read_typed_bytes(9999, null).toArray();
        if (piece.byteLength === 0)
            break;
        back.set(new Float32Array(piece.buffer, piece.byteOffset, piece.byteLength / 4), got);
        got += piece.byteLength / 4;
    }
    assertEqual(got, n, 'count');
    assertSameBytes(back, values, 'values');
    assert(reader.next(null), 'second array');
    assertSameBytes(reader.read_typed_bytes(10, null).toArray(), new Uint8Array([1, 0, 1]), 'bools');
    assert(!reader.next(null), 'end');
    assert(reader.get_sealed() && reader.get_finished(), 'sealed and valid');
});

print(`1..${nTests}`);
System.exit(nFailed > 0 ? 1 : 0);
