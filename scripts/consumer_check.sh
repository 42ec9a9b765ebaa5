#!/usr/bin/env bash
# Installs build/ into a scratch directory and builds a program against it the way the README's
# "Using the library" section does (pkg-config --cflags --libs blockdnn), then runs it: a
# round trip nchw -> nChw16c -> nchw. Checks that blockdnn.pc names everything a user links, and,
# when the build has the Python package, that it imports from where it was installed.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C build --destdir "$tmp/root" --no-rebuild >/dev/null
pc=$(dirname "$(find "$tmp/root" -name blockdnn.pc | head -1)")
cat > "$tmp/app.cpp" <<'CPP'
#include <blockdnn/blockdnn.hpp>
#include <cstdio>
using namespace blockdnn;
int main() {
    const tensor x(tensor_desc({2, 20, 5, 5}, format_tag::nchw));
    for (dim_t i = 0; i < x.desc().nelems(); ++i) x.f32()[i] = static_cast<float>(i);
    const tensor y = reorder(reorder(x, format_tag::nChw16c), format_tag::nchw);
    for (dim_t i = 0; i < x.desc().nelems(); ++i)
        if (y.f32()[i] != x.f32()[i]) return std::printf("element %lld differs\n", static_cast<long long>(i)), 1;
    return 0;
}
CPP
flags=$(PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs blockdnn)
g++ -std=c++20 "$tmp/app.cpp" -o "$tmp/app" $flags
"$tmp/app"
echo "consumer check: built and ran a program with pkg-config --cflags --libs blockdnn"
# The Python package, where the build has it: imported from where `meson install` put it.
site=$(find "$tmp/root" -type d \( -path '*/dist-packages/blockdnn' -o -path '*/site-packages/blockdnn' \) | head -1)
if [ -n "$site" ]; then
  PYTHONPATH=$(dirname "$site") /usr/bin/python3 -c '
import blockdnn, numpy
x = numpy.arange(2 * 20 * 5 * 5, dtype=numpy.float32).reshape(2, 20, 5, 5)
y = numpy.asarray(blockdnn.from_dlpack(blockdnn._blockdnn.to_dense(blockdnn.to_blocked(x))))
assert (x == y).all() and blockdnn.__file__.startswith("'"$tmp"'"), blockdnn.__file__'
  echo "consumer check: imported the installed Python package and ran a round trip"
fi
