// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The location of reading errors, from GJS (run as `gjs -m test-errors.js`),
// printing TAP. GJS keeps the GError it catches, extended data included,
// so Serio.error_get_line() reads it; an error made in JavaScript has none.

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
        for (const line of `${e}\n${e.stack ?? ''}`.split('\n'))
            print(`# ${line}`);
    }
}

function assertEqual(actual, expected, what) {
    if (actual !== expected)
        throw new Error(`${what}: got ${actual}, expected ${expected}`);
}

function caught(func) {
    try {
        func();
    } catch (e) {
        return e;
    }
    throw new Error('no error was thrown');
}

test('a value error carries its line and index', () => {
    const e = caught(() => Serio.Bundle.new_from_string('v1|a|1|1\n\r\nv1|b|3|1,2,01\n'));
    assertEqual(e.matches(Serio.Error, Serio.Error.SYNTAX), true, 'code');
    assertEqual(Serio.error_get_line(e), 3, 'line');
    assertEqual(Serio.error_get_value_index(e), 3, 'value index');
    assertEqual(Serio.error_get_detail(e),
        'value 3 “01”: a number must not start with a leading zero', 'detail');
    // The same functions, as static methods of the error domain.
    assertEqual(Serio.Error.get_line(e), 3, 'Serio.Error.get_line');
});

test('a line error has no value index', () => {
    const e = caught(() => Serio.Bundle.new_from_bytes(new GLib.Bytes(new TextEncoder().encode('v1|a|0|\nv1|b|2|1\n'))));
    assertEqual(e.matches(Serio.Error, Serio.Error.LENGTH), true, 'code');
    assertEqual(Serio.error_get_line(e), 2, 'line');
    assertEqual(Serio.error_get_value_index(e), 0, 'value index');
});

test('from_file names the file and keeps the location', () => {
    const [file, stream] = Gio.File.new_tmp('test-errors-XXXXXX.serio');
    stream.output_stream.write_all(new TextEncoder().encode('\n\nv1|x|1|1p1024\n'), null);
    stream.close(null);
    try {
        const e = caught(() => Serio.Bundle.new_from_file(file, null, null));
        assertEqual(e.matches(Serio.Error, Serio.Error.DOMAIN), true, 'code');
        assertEqual(e.message.startsWith(`${file.get_parse_name()}: `), true, 'message names the file');
        assertEqual(Serio.error_get_line(e), 3, 'line');
        assertEqual(Serio.error_get_value_index(e), 1, 'value index');
    } finally {
        file.delete(null);
    }
});

test('a damaged sealed text fails with Serio.Error.INTEGRITY on the seal\'s line', () => {
    const b = Serio.Bundle.new();
    b.append('w', [0.1, -0, 3]);
    const text = new TextDecoder().decode(b.to_bytes(Serio.SaveFlags.NONE).toArray());
    const damaged = text.replace('3602879701896397p-55', '3602879701896399p-55');
    assertEqual(damaged !== text, true, 'the digit was changed');
    const e = caught(() => Serio.Bundle.new_from_string(damaged));
    assertEqual(e.matches(Serio.Error, Serio.Error.INTEGRITY), true, 'code');
    assertEqual(Serio.error_get_line(e), 3, 'line');
    assertEqual(Serio.Bundle.new_from_string(text).equal(b), true, 'the undamaged text reads back');
});

test('an error made in JavaScript has no location', () => {
    const e = new GLib.Error(Serio.Error, Serio.Error.SYNTAX, 'Line 7: made here');
    assertEqual(Serio.error_get_line(e), 0, 'line');
    assertEqual(Serio.error_get_detail(e), null, 'detail');
    const io = new GLib.Error(Gio.IOErrorEnum, Gio.IOErrorEnum.FAILED, 'no');
    assertEqual(Serio.error_get_line(io), 0, 'other domain');
});

test('a failed reader keeps the location as values', () => {
    const text = new GLib.Bytes(new TextEncoder().encode('v1|a|2|1,1.5\n'));
    const reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(text));
    assertEqual(reader.get_error_line(), 0, 'no error yet');
    const e = caught(() => Serio.Bundle.new_from_reader(reader, null));
    assertEqual(e.code, Serio.Error.SYNTAX, 'code');
    assertEqual(reader.get_error_line(), 1, 'line');
    assertEqual(reader.get_error_value_index(), 2, 'value index');
    assertEqual(reader.get_error_line(), Serio.error_get_line(e), 'as the error says');
    const valid = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(
        new GLib.Bytes(new TextEncoder().encode('v1|a|0|\n'))));
    Serio.Bundle.new_from_reader(valid, null);
    assertEqual(valid.get_error_line(), 0, 'valid');
});

print(`1..${nTests}`);
System.exit(nFailed > 0 ? 1 : 0);
