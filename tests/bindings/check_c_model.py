#!/usr/bin/env python3
"""The header model that generates the bindings (tools/abigen/header.py) against the C compiler, case
by case: every prototype the model reads is the header's (a static assertion per function, see
c_view.py); every struct's size, alignment and field offsets computed by the model (they set the
Fortran struct_size defaults) are the compiler's; every constant's value and every _INIT macro's values
are the compiler's. Prints "c model: N passed, M failed".

  check_c_model.py --cc CC"""
import argparse
import sys

import c_view
import header


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", default="cc")
    args = parser.parse_args()
    checker = c_view.Checker("c model")
    try:
        api, view = c_view.read(args.cc)
    except RuntimeError as e:
        print("FAIL:", e)
        checker.failed += 1
        return checker.finish()
    checker.check(True, "every prototype of the model is the header's (%d static assertions)" % len(api.functions))
    for s in api.structs:
        c = view["structs"][s.name]
        rows, (size, align) = api.layout(s.name)
        checker.check((size, align) == (c["size"], c["align"]), "rule: the model's layout is the compiler's: %s is "
                      "%d bytes aligned %d, the model says %d aligned %d" % (s.name, c["size"], c["align"], size, align))
        for f, offset, fsize in rows:
            checker.check((offset, fsize) == c["fields"][f.name], "rule: the model's layout is the compiler's: "
                          "%s.%s at %s, the model says (%d, %d)" % (s.name, f.name, c["fields"][f.name], offset, fsize))
        if s.init:
            for f, expr in zip(s.fields, s.init):
                value = header.init_value(api, s, expr)
                model = [0 if v is None else v for v in (value if isinstance(value, list) else [value])]
                checker.check(model == c["init"][f.name], "rule: the model evaluates %s as C does: %s is %s, "
                              "the model says %s" % (s.init_name, f.name, c["init"][f.name], model))
    for k in api.constants:
        checker.check(view["constants"].get(k.name) == k.value, "rule: constants are the compiler's: %s is %r, the "
                      "model says %r" % (k.name, view["constants"].get(k.name), k.value))
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
