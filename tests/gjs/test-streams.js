// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Serio.Writer and Serio.Reader from GJS (run as `gjs -m test-streams.js`),
// printing TAP: a Float64Array written in pieces through GLib.Bytes and read
// back in pieces, compared by bit patterns (BigUint64Array views).

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

function bytesOf(float64array) {
    return new GLib.Bytes(new Uint8Array(float64array.buffer, float64array.byteOffset,
        float64array.byteLength));
}

function sameBits(a, b) {
    if (a.length !== b.length)
        return false;
    const x = new BigUint64Array(a.buffer, a.byteOffset, a.length);
    const y = new BigUint64Array(b.buffer, b.byteOffset, b.length);
    return x.every((v, i) => v === y[i]);
}

function randomValues(n) {
    const bits = new BigUint64Array(n);
    for (let i = 0; i < n; i++) {
        bits[i] = (BigInt(Math.floor(Math.random() * 2 ** 32)) << 32n) |
            BigInt(Math.floor(Math.random() * 2 ** 32));
        // no NaN: it reads back as the canonical one
        if (((bits[i] >> 52n) & 0x7ffn) === 0x7ffn)
            bits[i] &= ~(1n << 62n);
    }
    return new Float64Array(bits.buffer);
}

const VALUES = randomValues(50000);

function writeText(sealed) {
    const stream = Gio.MemoryOutputStream.new_resizable();
    const writer = sealed ? Serio.Writer.new(stream, Serio.SaveFlags.NONE) : Serio.Writer.new(stream, Serio.SaveFlags.PLAIN);
    writer.write_array('small', [0.5, -0, Infinity], null);
    writer.begin_array('big', VALUES.length, null);
    for (let start = 0; start < VALUES.length; start += 7000)
        writer.add_bytes(bytesOf(VALUES.subarray(start, start + 7000)), null);
    assert(writer.get_n_missing() === 0, 'nothing missing');
    writer.close(null);
    return stream.steal_as_bytes();
}

test('writer gives the bundle\'s bytes', () => {
    const bundle = Serio.Bundle.new();
    bundle.append('small', [0.5, -0, Infinity]);
    bundle.append_bytes('big', bytesOf(VALUES));
    const sealed = writeText(true).toArray();
    const plain = writeText(false).toArray();
    const expectedSealed = bundle.to_bytes(Serio.SaveFlags.NONE).toArray();
    const expectedPlain = bundle.to_bytes(Serio.SaveFlags.PLAIN).toArray();
    assert(sealed.length === expectedSealed.length && sealed.every((b, i) => b === expectedSealed[i]),
        'sealed text');
    assert(plain.length === expectedPlain.length && plain.every((b, i) => b === expectedPlain[i]),
        'plain text');
});

test('reader gives the values back in pieces', () => {
    const reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(writeText(true)));
    const names = [];
    let big = null;
    while (reader.next(null)) {
        names.push(reader.get_name());
        const out = new Float64Array(reader.get_n_values());
        let at = 0;
        for (;;) {
            const piece = reader.read_bytes(6000, null).toArray();
            if (piece.length === 0)
                break;
            out.set(new Float64Array(piece.buffer, piece.byteOffset, piece.length / 8), at);
            at += piece.length / 8;
        }
        if (reader.get_name() === 'big')
            big = out;
    }
    assert(reader.get_finished() && reader.get_sealed(), 'finished, sealed');
    assert(names.join() === 'small,big', `names ${names}`);
    assert(sameBits(big, VALUES), 'same bits');
});

test('a reader of bytes reads them in place', () => {
    const text = writeText(true);
    const reader = Serio.Reader.new_for_bytes(text);
    assert(reader.get_stream() === null, 'no stream');
    assert(reader.get_size() === text.get_size(), 'size known');
    let big = null;
    while (reader.next(null)) {
        if (reader.get_name() !== 'big')
            continue;
        const piece = reader.read_bytes(VALUES.length, null).toArray();
        big = new Float64Array(piece.buffer, piece.byteOffset, piece.length / 8);
    }
    assert(reader.get_finished() && reader.get_sealed(), 'finished, sealed');
    assert(big !== null && sameBits(big, VALUES), 'same bits');
});

test('reader fails like from_bytes', () => {
    const text = new TextEncoder().encode('v1|a|1|1\nv1|b|2|1,1p0\n');
    let whole = null, streamed = null;
    try {
        Serio.Bundle.new_from_bytes(new GLib.Bytes(text));
    } catch (e) {
        whole = e;
    }
    try {
        const reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(new GLib.Bytes(text)));
        while (reader.next(null))
            while (reader.read_bytes(1, null).get_size() > 0)
                ;
    } catch (e) {
        streamed = e;
    }
    assert(whole !== null && streamed !== null, 'both fail');
    assert(streamed.matches(Serio.Error, Serio.Error.SYNTAX), 'SYNTAX');
    assert(streamed.message === whole.message, `${streamed.message} / ${whole.message}`);
});

test('too many values is an error that writes nothing', () => {
    const stream = Gio.MemoryOutputStream.new_resizable();
    const writer = Serio.Writer.new(stream, Serio.SaveFlags.PLAIN);
    writer.begin_array('w', 1, null);
    let caught = null;
    try {
        writer.add_bytes(bytesOf(new Float64Array([1, 2])), null);
    } catch (e) {
        caught = e;
    }
    assert(caught !== null && caught.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.INVALID_ARGUMENT),
        `${caught}`);
    writer.add_values([2], null);
    writer.close(null);
    assert(new TextDecoder().decode(stream.steal_as_bytes().toArray()) === 'v1|w|1|2\n', 'text');
});

test('a writer for a file replaces it on close, and only then', () => {
    const dir = GLib.dir_make_tmp('serio-gjs-XXXXXX');
    const path = GLib.build_filenamev([dir, 'model.serio']);
    const file = Gio.File.new_for_path(path);
    const old = new TextEncoder().encode('v1|old|1|1\n');
    file.replace_contents(old, null, false, Gio.FileCreateFlags.NONE, null);

    // dropped before close (disposed, as the last unref does): the old
    // file stays
    const dropped = Serio.Writer.new_for_file(file, Serio.SaveFlags.NONE, null);
    dropped.begin_array('big', VALUES.length, null);
    dropped.add_bytes(bytesOf(VALUES.subarray(0, 1000)), null);
    dropped.run_dispose();
    let [, now] = file.load_contents(null);
    assert(new TextDecoder().decode(now) === 'v1|old|1|1\n', 'old file kept');

    const writer = Serio.Writer.new_for_file(file, Serio.SaveFlags.NONE, null);
    writer.write_array('small', [0.5, -0, Infinity], null);
    writer.begin_array('big', VALUES.length, null);
    for (let start = 0; start < VALUES.length; start += 7000)
        writer.add_bytes(bytesOf(VALUES.subarray(start, start + 7000)), null);
    writer.close(null);
    [, now] = file.load_contents(null);
    const expected = writeText(true).toArray();
    assert(now.length === expected.length && now.every((b, i) => b === expected[i]), 'sealed file');
    file.delete(null);
    Gio.File.new_for_path(dir).delete(null);
});

print(`1..${nTests}`);
System.exit(nFailed > 0 ? 1 : 0);
