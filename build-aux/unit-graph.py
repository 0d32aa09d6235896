#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Who calls whom among libserio's units, from the built objects.

Usage: unit-graph.py [--dot] [--check] OBJECT-OR-ARCHIVE...

Each object file of the library (given as such, or as a member of a
static archive such as libserio/libserio-static.a) is a unit
(serio-codec.c.o is "serio-codec").  A unit uses another when it refers to a symbol the
other defines (nm's undefined symbols against its defined ones), so the
graph is that of the code as compiled, calls and data alike, static
inline helpers aside.  The script prints the edges, a layer for each
unit (0 uses nothing of the library, every unit is one layer above the
highest it uses), and any cycle.  --dot prints a Graphviz graph instead;
--check exits 1 when there is a cycle.  `meson compile unit-graph` prints
it for the build's libserio-static.a, and the "layering" test checks it.
"""

import os
import re
import subprocess
import sys


def unit_name(path):
    base = os.path.basename(path)
    base = re.sub(r'\.o(bj)?$', '', base)
    base = re.sub(r'\.c$', '', base)
    # meson names generated sources meson-generated_.._NAME.c.o
    return re.sub(r'^meson-generated_(\.\._)*', '', base)


MEMBER = re.compile(r'^(?:.*?):([^:\s]+\.o(?:bj)?):(.*)$')


def nm_lines(path, nm, *flags):
    return subprocess.run([nm, '-A', *flags, path], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def units_of(path, nm):
    """{unit: (defined, undefined)} of an object file, or of each member
    of a static archive."""
    units = {}
    for flags, which in ((('--defined-only', '-g'), 0), (('--undefined-only',), 1)):
        for line in nm_lines(path, nm, *flags):
            if path.endswith('.a'):
                m = MEMBER.match(line)
                if m is None:
                    continue
                member, rest = m.group(1), m.group(2)
            else:
                member, rest = path, line.split(':', 1)[1]
            fields = rest.split()
            if not fields or (which == 0 and len(fields) < 3):
                continue
            entry = units.setdefault(unit_name(member), (set(), set()))
            entry[which].add(fields[-1])
    return units


def find_cycles(graph):
    """Tarjan's strongly connected components of more than one unit, or
    of one unit using itself (never, from nm)."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    result = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def layers(graph):
    layer = {}

    def depth(v, seen=()):
        if v in layer:
            return layer[v]
        if v in seen:
            return 0
        d = 0
        for w in graph[v]:
            d = max(d, depth(w, seen + (v,)) + 1)
        layer[v] = d
        return d

    for v in graph:
        depth(v)
    return layer


def self_test(nm):
    """Checks that a cycle is found: two units that call each other, and
    a third that only calls one of them."""
    import tempfile
    cc = os.environ.get('CC', 'cc').split()
    sources = {
        'unit-a.c': 'int b (int); int a (int x) { return x > 0 ? b (x - 1) : 0; }\n',
        'unit-b.c': 'int a (int); int b (int x) { return a (x); }\n',
        'unit-c.c': 'int a (int); int c (void) { return a (3); }\n',
    }
    with tempfile.TemporaryDirectory() as tmp:
        objects = []
        for name, text in sources.items():
            src = os.path.join(tmp, name)
            with open(src, 'w') as f:
                f.write(text)
            subprocess.run(cc + ['-c', src, '-o', src + '.o'], check=True)
            objects.append(src + '.o')
        status = subprocess.run([sys.executable, __file__, '--check'] + objects,
                                capture_output=True, text=True)
        ok = (status.returncode == 1 and 'cycle: unit-a <-> unit-b' in status.stdout
              and 'unit-c' not in status.stdout.split('cycle:')[1])
        status_acyclic = subprocess.run([sys.executable, __file__, '--check'] + objects[2:] + objects[:1],
                                        capture_output=True, text=True)
        ok = ok and status_acyclic.returncode == 0
    print('self-test ' + ('passed' if ok else 'FAILED:\n' + status.stdout))
    return 0 if ok else 1


def main(argv):
    if argv == ['--self-test']:
        return self_test(os.environ.get('NM', 'nm'))
    dot = '--dot' in argv
    check = '--check' in argv
    objects = [a for a in argv if not a.startswith('--')]
    if not objects:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    nm = os.environ.get('NM', 'nm')

    defined_by = {}
    uses = {}
    for path in objects:
        for unit, (defined, undefined) in units_of(path, nm).items():
            for sym in defined:
                defined_by[sym] = unit
            uses[unit] = undefined

    graph = {unit: set() for unit in uses}
    via = {}
    for unit, undefined in uses.items():
        for sym in undefined:
            other = defined_by.get(sym)
            if other is not None and other != unit:
                graph[unit].add(other)
                via.setdefault((unit, other), []).append(sym)

    cycles = find_cycles(graph)
    if dot:
        print('digraph libserio {')
        print('  rankdir=BT;')
        for unit in sorted(graph):
            for other in sorted(graph[unit]):
                print(f'  "{unit}" -> "{other}";')
        print('}')
    else:
        layer = layers(graph)
        for unit in sorted(graph, key=lambda u: (layer[u], u)):
            used = ', '.join(sorted(graph[unit])) or '(nothing of the library)'
            print(f'{layer[unit]}  {unit}: {used}')
        for cycle in cycles:
            print('cycle: ' + ' <-> '.join(cycle))
            for a in cycle:
                for b in cycle:
                    if (a, b) in via:
                        names = ', '.join(sorted(via[(a, b)])[:4])
                        print(f'  {a} -> {b} via {names}')
        if not cycles:
            print('no cycle among %d units' % len(graph))
    return 1 if (check and cycles) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
