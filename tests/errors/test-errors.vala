// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The location of reading errors, from Vala: Serio.Error is an errordomain,
// and the error caught is the GError itself, data included.

void test_value_error () {
    try {
        new Serio.Bundle.from_string ("v1|a|1|1\n\r\nv1|b|3|1,2,01\n");
        assert_not_reached ();
    } catch (Serio.Error.SYNTAX e) {
        assert (Serio.Error.get_line (e) == 3);
        assert (Serio.Error.get_value_index (e) == 3);
        assert (Serio.Error.get_detail (e) == "value 3 “01”: a number must not start with a leading zero");
    } catch (GLib.Error e) {
        assert_not_reached ();
    }
}

void test_line_error () {
    try {
        new Serio.Bundle.from_string ("v1|a|0|\nv1|b|2|1\n");
        assert_not_reached ();
    } catch (Serio.Error e) {
        assert (e is Serio.Error.LENGTH);
        assert (Serio.Error.get_line (e) == 2);
        assert (Serio.Error.get_value_index (e) == 0);
    }
}

void test_made_here () {
    var e = new Serio.Error.SYNTAX ("Line 7: made here");
    assert (Serio.Error.get_line (e) == 0);
    assert (Serio.Error.get_detail (e) == null);
}

int main (string[] args) {
    Intl.setlocale (LocaleCategory.ALL, "");
    Intl.setlocale (LocaleCategory.MESSAGES, "C");
    Test.init (ref args);
    Test.add_func ("/errors/vala/value", test_value_error);
    Test.add_func ("/errors/vala/line", test_line_error);
    Test.add_func ("/errors/vala/made-here", test_made_here);
    return Test.run ();
}
