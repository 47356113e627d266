#!/usr/bin/env bash
# ansible-test sanity for the collection, without docker and without reaching the internet.
# ansible-test must run from inside ansible_collections/<namespace>/<name>, so the working
# tree (tracked and untracked-but-not-ignored files) is copied into a temporary one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# Seed the pip bootstrap cache for every pip version this ansible-test may ask for.
cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
for v in $("$py" - <<'PY'
import ansible_test._internal.python_requirements as r, inspect, re
src = inspect.getsource(r)
print(" ".join(sorted(set(re.findall(r"pip='(\d+(?:\.\d+)+)'", src)))) or "24.2")
PY
); do
    cp "$repo/tests/sanity/get_pip_standin.py" "$cache/get_pip_${v//./_}.py"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/gpufabric/roce"
mkdir -p "$dest"
(cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$dest")
cd "$dest"
git init -q && git add -A  # ansible-test lists a collection's files through git when it can
echo "sanity: ansible-test sanity --venv --python $pyver in $dest"
ansible-test sanity --venv --python "$pyver" "$@"
