#!/usr/bin/env python3
"""helix's front-matter YAML against PyYAML on generated flow-collection layouts.

Front matter PyYAML reads (flow collections spread over lines, closed at or
left of the key's indentation, comment lines; quoted scalars with under-indented
continuation lines) must read the same in helix. Generates every layout below, feeds them
to index-format's `yaml_json` example and to PyYAML, and counts agreement.

  cargo build --release -p helix-index-format --example yaml_json
  python3 benches/yaml-pyyaml.py target/release/examples/yaml_json   # needs PyYAML
"""
import json
import subprocess
import sys

import yaml


def layouts():
    for depth in range(4):
        key_col = 2 * depth
        head = ["title: t"] + ["  " * i + f"k{i}:" for i in range(depth)]
        for opener, closer, items in (
            ("[", "]", ['"--fix"', "'src/'", "plain item"]),
            ("{", "}", ["a: 1", '"b": two', "c: [x, y]"]),
        ):
            for item_col in range(key_col + 7):
                for close_col in range(key_col + 5):
                    for comment in (False, True):
                        for trailing in (False, True):
                            for sibling in (None, "same", "parent", "top"):
                                lines = head + [" " * key_col + "args: " + opener]
                                for j, item in enumerate(items):
                                    if comment and j == 1:
                                        lines.append(" " * item_col + "# comment line")
                                    last = j == len(items) - 1
                                    comma = "," if not last or trailing else ""
                                    lines.append(" " * item_col + item + comma)
                                lines.append(" " * close_col + closer)
                                if sibling == "same":
                                    lines.append(" " * key_col + "next: 1")
                                if sibling == "parent" and depth:
                                    lines.append(" " * (key_col - 2) + "up: 2")
                                if sibling == "top":
                                    lines.append("top: 3")
                                yield "\n".join(lines) + "\n"
    for depth in range(3):
        key_col = 2 * depth
        head = ["title: t"] + ["  " * i + f"k{i}:" for i in range(depth)]
        for quote in ('"', "'"):
            for col in range(key_col + 4):
                yield "\n".join(head + [
                    " " * key_col + f"desc: {quote}first",
                    " " * col + "second",
                    " " * col + f"third{quote}",
                    " " * key_col + "after: 1",
                ]) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    docs = list(dict.fromkeys(layouts()))
    out = subprocess.run([sys.argv[1]], input="\0".join(docs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(docs), (len(out), len(docs))
    py_ok = helix_ok = same = 0
    shown = 0
    for doc, line in zip(docs, out):
        try:
            want = yaml.safe_load(doc)
            py_ok += 1
        except yaml.YAMLError:
            want = None
        got = json.loads(line[3:]) if line.startswith("ok ") else None
        helix_ok += got is not None
        if want is not None and got == want:
            same += 1
        elif want is not None and shown < 3:
            shown += 1
            print(f"--- differs:\n{doc}PyYAML: {want}\nhelix:  {line}")
    print(f"{len(docs)} layouts: PyYAML reads {py_ok}, helix reads {helix_ok}, "
          f"{same} with the same data as PyYAML")


if __name__ == "__main__":
    main()
