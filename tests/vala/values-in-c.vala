/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* values-in-c.vala: Vala code that reads values in the usual ways. Its C,
 * as valac writes it, must compile without -Wdiscarded-qualifiers (issue
 * 10): check-c-warnings.py checks that. It is never run.
 */

double sum_values (Serio.Bundle bundle, uint index)
{
  var values = bundle.get_values (index);
  double[] copy = bundle.get_values (index);
  double sum = copy.length;
  foreach (var v in bundle.get_values (index))
    sum += v;
  return sum + values[0];
}

int main ()
{
  var bundle = new Serio.Bundle ();
  bundle.append ("w", { 1.0 });
  return sum_values (bundle, 0) > 0 ? 0 : 1;
}
