# Sourced by the act scripts beside it. stand_ins WORKFLOW ACTION=DIR...: sets the array
# `stand_ins` to act's --local-repository options that give each remote ACTION, at the exact
# commit WORKFLOW pins it to, the stand-in directory DIR beside this file (act fetches every remote
# action of a job before it starts, and nothing here can reach GitHub).
stand_ins() {
    local workflow=$1 pair action sha here
    shift
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    stand_ins=()
    for pair in "$@"; do
        action=${pair%%=*}
        sha=$(grep -oE "uses: $action@[0-9a-f]{40}" "$workflow" | head -n 1 | cut -d@ -f2)
        [[ -n "$sha" ]] || { echo "stand-ins.sh: $workflow pins no $action" >&2; return 1; }
        stand_ins+=(--local-repository "$action@$sha=$here/${pair#*=}")
    done
}

# The stand-ins for release.yml's package, provenance and publish jobs (attestations need GitHub's
# OIDC issuer and Sigstore: their steps are skipped under act).
PACKAGE_STAND_INS=(actions/setup-python=setup-python actions/upload-artifact=upload-artifact
    actions/download-artifact=download-artifact pypa/gh-action-pypi-publish=pypi-publish
    actions/attest-build-provenance=never-run)
