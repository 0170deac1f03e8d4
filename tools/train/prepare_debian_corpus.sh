#!/usr/bin/env bash
# Recreates the Debian part of the default model's training data (issue #25, model version 2) in WORKDIR:
# downloads the packages listed in tools/train/debian_corpus/packages.py with `apt-get download` (nothing is
# installed), unpacks them with `dpkg-deb -x`, aligns LibreOffice help paragraphs by id and gettext entries by
# msgid, cleans, deduplicates, holds out dev sets and writes WORKDIR/corpus (see debian_corpus/build.py).
# Usage: tools/train/prepare_debian_corpus.sh WORKDIR [--dev-size N] [--general-size N] [--shared DIR]
# Then: DRAGOMAN_EXTRA_CORPORA=WORKDIR/corpus tools/train/train_default_model.sh ...
# Reruns reuse the downloaded and unpacked packages. The corpora stay out of the repository.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(realpath -m "${1:?usage: $0 WORKDIR [build.py options]}")"
shift
case "$work/" in "$root"/*) echo "WORKDIR must be outside the repository ($root)" >&2; exit 1 ;; esac
mkdir -p "$work"
start=$SECONDS
nice -n 19 /usr/bin/python3 "$here/debian_corpus/build.py" "$work" "$@"
echo "wrote $work/corpus in $((SECONDS - start)) s"
