# Sourced by main.sh and test.sh from the repository root: packages.sh and step.sh, and
#   configure_build TESTS PACKAGE...
# which installs what is missing of the packages (scripts/deps.sh), then configures build/
# (release when it is new) with -Dtests=TESTS. Either script may run after the other: the
# reconfigure replaces a -Dtests value set by hand in build/.
source scripts/packages.sh
source scripts/step.sh
configure_build() {
  local tests=$1 reconf
  shift
  bash scripts/deps.sh "$@"
  if [ -f build/meson-private/coredata.dat ]; then reconf=(--reconfigure); else reconf=(--buildtype=release); fi
  step "meson setup build" meson setup "${reconf[@]}" -Dtests="$tests" -Dpython="$tests" build
}
