#!/usr/bin/env bash
# What a desktop and Debian see of Dragoman: the AppStream metadata and the desktop entry validate, the man page
# renders with every user command, the hicolor icons exist in every size, and the .deb CPack builds from this
# build tree installs them all and passes lintian without errors. Skipped (77) where a tool is missing.
#   desktop_integration.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir="$1" build_dir="$2"
for tool in appstreamcli desktop-file-validate lintian man cpack dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed (installer/packages.txt)"; exit 77; }
done
appstreamcli validate --no-net "$source_dir/resources/io.github.dragoman.Dragoman.metainfo.xml"
desktop-file-validate "$source_dir/installer/dragoman.desktop"

page="$build_dir/dragoman-cli.1.gz"
[[ -f "$page" ]] || { echo "missing $page (help2man not installed when the build was configured?)"; exit 1; }
rendered="$(MANWIDTH=100 man --warnings -l "$page" 2>"$build_dir/man-warnings.txt")"
[[ ! -s "$build_dir/man-warnings.txt" ]] || { cat "$build_dir/man-warnings.txt"; exit 1; }
for section in NAME SYNOPSIS COMMANDS; do
    grep -q "^$section" <<<"$rendered" || { echo "the man page has no $section section"; exit 1; }
done
for command in translate translate-file models quantize serve; do
    grep -q "dragoman-cli $command" <<<"$rendered" || { echo "the man page does not document '$command'"; exit 1; }
done

for size in 16 22 24 32 48 64 128 256 512; do
    icon="$source_dir/resources/icons/hicolor/${size}x${size}/apps/dragoman.png"
    [[ "$(file -b "$icon")" == "PNG image data, $size x $size,"* ]] || { echo "$icon is not a ${size}x$size PNG"; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$build_dir" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb="$(ls "$work"/*.deb)"
contents="$(dpkg-deb --contents "$deb")"
for path in usr/bin/dragoman usr/bin/dragoman-cli usr/lib/dragoman/dragoman usr/lib/dragoman/dragoman-cli \
    usr/lib/dragoman/libdragoman_spm.so usr/lib/dragoman/libdragoman_pdf.so usr/share/applications/dragoman.desktop \
    usr/share/metainfo/io.github.dragoman.Dragoman.metainfo.xml usr/share/icons/hicolor/48x48/apps/dragoman.png \
    usr/share/icons/hicolor/scalable/apps/dragoman.svg usr/share/man/man1/dragoman-cli.1.gz usr/share/man/man1/dragoman.1.gz usr/share/doc/dragoman/copyright \
    usr/share/doc/dragoman/changelog.gz usr/share/dragoman/models/dragoman-en-de-zh/model.safetensors; do
    grep -q " \./$path\$" <<<"$contents" || { echo "the package lacks /$path"; exit 1; }
done
# The installed command runs from the package's own tree: the launcher in usr/bin starts its program in
# usr/lib/dragoman, which finds the bundled model in usr/share/dragoman.
dpkg-deb -x "$deb" "$work/root"
listing="$(DRAGOMAN_MODELS="$work/models" XDG_DATA_HOME="$work/data" "$work/root/usr/bin/dragoman-cli" models list 2>&1)"
[[ "$listing" == *"$work/root/usr/share/dragoman/models/dragoman-en-de-zh"* ]] ||
    { echo "the installed dragoman-cli does not list its bundled model: $listing"; exit 1; }
# Both programs load the package's empty stand-ins for libtorch's unused libraries (cmake/StandInLibraries.cmake)
# with libtorch, which they open with libdragoman_torch.so.
if [[ -n "$(ls "$build_dir/lib/dragoman/standins" 2>/dev/null)" ]]; then
    python3 "$source_dir/tools/unused_libraries.py" check "$work/root/usr/lib/dragoman/standins" \
        --opens "$work/root/usr/lib/dragoman/libdragoman_torch.so" "$work/root/usr/lib/dragoman/dragoman-cli" "$work/root/usr/lib/dragoman/dragoman" || exit 1
fi
# Errors fail; warnings are printed for the record.
lintian --fail-on error --tag-display-limit 0 "$deb"
echo "ok: $(basename "$deb")"
