#!/usr/bin/env bash
# The official OpenAI client for Node (npm registry), used by the serve wire-format test
# (tests/serve/openai_client.sh). Needs node and npm; without them the test is skipped, nothing fails here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v npm >/dev/null && command -v node >/dev/null && [[ $(id -u) -eq 0 ]]; then
    # Debian packages npm apart from nodejs (NodeSource's nodejs carries its own).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null 2>&1 || true
fi
if ! command -v npm >/dev/null; then
    echo "install-node-client: npm is not installed; the openai client check will be skipped"
    exit 0
fi
if [[ -f "$root/tests/serve/node_modules/openai/package.json" ]]; then
    echo "install-node-client: openai client present"
    exit 0
fi
npm install --prefix "$root/tests/serve" --no-audit --no-fund --loglevel=error || echo "install-node-client: npm install failed; the check will be skipped"
