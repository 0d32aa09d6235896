// SPDX-License-Identifier: LGPL-2.1-or-later

// A map between namespaces and base URLs for their online documentation
baseURLs = [
    [ 'GLib', 'https://docs.gtk.org/glib/' ],
    [ 'GObject', 'https://docs.gtk.org/gobject/' ],
    [ 'Gio', 'https://docs.gtk.org/gio/' ],
]
