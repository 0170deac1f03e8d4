"""Downloads the source packages with `apt-get download` (never installing them) and unpacks each with
`dpkg-deb -x` into its own folder. Both steps are skipped for packages already there, so a rerun is cheap."""
import subprocess
from pathlib import Path


def deb_path(debs, package):
    found = sorted(Path(debs).glob(f"{package}_*.deb"))
    return found[-1] if found else None


def download(debs, packages):
    debs = Path(debs)
    debs.mkdir(parents=True, exist_ok=True)
    missing = [p for p in packages if deb_path(debs, p) is None]
    if missing:
        # apt-get download writes into the current directory.
        subprocess.run(["apt-get", "download", *missing], cwd=debs, check=True)


def version(deb):
    return subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def extract(debs, tree_root, package):
    """Unpacks PACKAGE's .deb under TREE_ROOT/PACKAGE and returns (tree, version)."""
    deb = deb_path(debs, package)
    tree = Path(tree_root) / package
    done = tree / ".extracted"
    if not done.exists():
        tree.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
        done.write_text(deb.name + "\n")
    return tree, version(deb)
