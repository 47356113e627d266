# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each role README's option tables, generated from the role's meta/argument_specs.yml (as dev-sec's role docs are).

    python .ci/role_readme.py           # rewrite the tables between the markers of every roles/*/README.md
    python .ci/role_readme.py --check   # fail (exit 1) when a README's tables are not what the specs give (make lint)

The tables stand between ``<!-- role-options:begin -->`` and ``<!-- role-options:end -->``; the rest of a README is
written by hand. One table per entry point, one row per option, in the spec's order: the option, its type, its default
and its description with Ansible's markup (C(), O(), V(), M(), P(), ...) as Markdown."""

import argparse
import difflib
import json
import pathlib
import re
import sys

import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
BEGIN = "<!-- role-options:begin (generated from meta/argument_specs.yml by .ci/role_readme.py; edit the specs, not this) -->"
END = "<!-- role-options:end -->"
MARKUP = [
    (re.compile(r"L\(([^,()]+),\s*([^)]+)\)"), r"[\1](\2)"),
    (re.compile(r"U\(([^)]+)\)"), r"\1"),
    (re.compile(r"P\(([^#)]+)#[^)]+\)"), r"`\1`"),
    (re.compile(r"O\(([^#)]+)#[^:)]+:([^)]+)\)"), r"`\1`'s `\2`"),
    (re.compile(r"(?:RV|[COVME])\(([^)]*)\)"), r"`\1`"),
    (re.compile(r"I\(([^)]*)\)"), r"*\1*"),
    (re.compile(r"B\(([^)]*)\)"), r"**\1**"),
    (re.compile(r"HORIZONTALLINE"), " "),
]


def markdown(text):
    for pattern, repl in MARKUP:
        text = pattern.sub(repl, text)
    return text


def cell(text):
    return " ".join(("%s" % text).split()).replace("|", "\\|")


def default_of(spec):
    if "default" not in spec:
        return "required" if spec.get("required") else ""
    value = spec["default"]
    return "`%s`" % (value if isinstance(value, str) and value else json.dumps(value))


def type_of(spec):
    kind = spec.get("type", "str")
    if kind == "list" and spec.get("elements"):
        kind = "list of %s" % spec["elements"]
    if spec.get("choices"):
        kind += ": " + ", ".join("`%s`" % c for c in spec["choices"])
    return kind


def tables(specs):
    out = []
    for entry, spec in specs.items():
        options = spec.get("options") or {}
        out.append("### Entry point `%s`: %s" % (entry, cell(markdown(spec.get("short_description", "")))))
        out.append("")
        if not options:
            out.append("No options.")
            out.append("")
            continue
        out.append("| option | type | default | description |")
        out.append("|---|---|---|---|")
        for name, opt in options.items():
            desc = opt.get("description") or ""
            desc = " ".join(desc) if isinstance(desc, list) else desc
            out.append("| `%s` | %s | %s | %s |" % (name, cell(type_of(opt)), cell(default_of(opt)), cell(markdown(desc))))
        out.append("")
    return "\n".join(out).rstrip("\n")


def generated(role):
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return "%s\n%s\n%s" % (BEGIN, tables(specs), END)


def render(role):
    """The README with its tables as the specs give them; None when it has no markers."""
    text = (role / "README.md").read_text()
    if BEGIN not in text or END not in text:
        return None
    head, rest = text.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    return head + generated(role) + tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args()
    rc = 0
    for role in sorted(p.parents[1] for p in REPO.glob("roles/*/meta/argument_specs.yml")):
        readme = role / "README.md"
        new = render(role)
        if new is None:
            print("%s: no %s ... %s markers: the option tables are generated between them" % (readme.relative_to(REPO), BEGIN, END))
            rc = 1
            continue
        old = readme.read_text()
        if new == old:
            continue
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(readme), "generated", n=1))
            print("%s: its option tables differ from meta/argument_specs.yml; run python .ci/role_readme.py" % readme.relative_to(REPO))
            rc = 1
        else:
            readme.write_text(new)
            print("wrote %s" % readme.relative_to(REPO))
    return rc


if __name__ == "__main__":
    sys.exit(main())
