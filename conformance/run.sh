#!/usr/bin/env bash
# Drop-in conformance run: the *installed* Stable-Baselines3's own test suite, run with sb3-fair's
# Fair classes substituted for their parents at zero fairness weight (FairDQN for DQN, FairTD3 for
# TD3, FairDDPG for DDPG, FairPPO for PPO; later FairMaskablePPO / FairRecurrentPPO against
# sb3-contrib's own tests). A Fair class that is a true drop-in passes its parent's tests.
#
# Usage:
#   bash conformance/run.sh [--quick] [--parents] [--only FairDQN,FairPPO] [--ref GITREF]
#                           [--out DIR] [extra pytest args...]
#
#   --quick     a short subset (test_run, test_save_load, test_predict, filtered with -k; see
#               QUICK_* below): about 1-3 min on 2 cores once the Fair classes pass.
#   --parents   the same selection without substitution: SB3's own classes (the baseline).
#   --only L    comma list of Fair classes (default: every row of sb3_fair_substitute.ROWS whose
#               class exists in sb3_fair). Tests parametrised only with *other* algorithms
#               (e.g. test_x[A2C]) are deselected; SB3_FAIR_SELECT=all keeps them.
#   --ref REF   test sb3_fair as committed at git REF (exported with `git archive` into the cache)
#               instead of the working tree, e.g. `--ref HEAD` while a refactor is half done.
#   --out DIR   where the per-test JSON-lines results go (default .cache/conformance/results);
#               `python conformance/summarize.py DIR/*.jsonl` turns them into tables.
#   anything else goes to pytest (e.g. -k save, --durations=15, -x, -n 2).
#
# What it does:
#   1. reads the installed versions (python -c 'import stable_baselines3; print(...__version__)');
#   2. fetches the matching sdist once into .cache/conformance/ (git-ignored):
#        python -m pip download --no-deps --no-binary :all: --no-build-isolation PKG==VERSION
#      (--no-build-isolation: pip still prepares the metadata, but with the installed setuptools,
#      ~2 s instead of ~15 s; if that fails, the same without it, then the .tar.gz link from PyPI's
#      simple index, sha256-checked; PyPI's JSON API answers 404 here), and extracts it without its
#      package folder, so only the installed library can be imported;
#   3. runs pytest from inside the extracted sdist, with its own pyproject.toml as config
#      (-c/--rootdir there, so this repo's pytest settings do not apply), -p no:cacheprovider,
#      -p sb3_fair_substitute (conformance/ on PYTHONPATH), `python -P` (the cwd is not put on
#      sys.path), no -x; -n only if pytest-xdist is installed (SB3_FAIR_XDIST, default 2).
#   SB3's test_logger needs pandas; when it is missing it is installed with --no-deps into
#   .cache/conformance/site (put on PYTHONPATH for these runs only), never into the environment.
#
# Env: PYTHON (default python), SB3_FAIR_CONFORMANCE_CACHE (default <repo>/.cache/conformance),
#      SB3_FAIR_SELECT=all, SB3_FAIR_XDIST=N. Exit status: pytest's (the worst over the suites).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
CACHE=${SB3_FAIR_CONFORMANCE_CACHE:-$REPO/.cache/conformance}
PY=${PYTHON:-python}

# ----------------------------------------------------------------------------- the suites
# One suite per sdist: pip name, import name, test modules, quick modules and quick -k filter.
SB3_MODULES=(test_run test_save_load test_predict test_callbacks test_train_eval_mode test_deterministic
             test_her test_custom_policy test_logger test_identity test_dict_env test_spaces test_cnn
             test_vec_normalize test_gae test_sde test_tensorboard test_n_step_replay)
SB3_QUICK_MODULES=(test_run test_save_load test_predict)
# Quick: everything the substituted classes meet in these three modules except the slow tests
# (>5 s with the parents: large model, CNN policies, n_critics=3, SAC) and the CUDA variants.
SB3_QUICK_K="not (test_save_load_large_model or test_save_load_pytorch_var or test_save_load_env_cnn or CnnPolicy \
or test_n_critics[3] or test_sac or cuda or test_subclassed_space_env)"
CONTRIB_MODULES=(test_run test_save_load test_train_eval_mode test_deterministic test_identity test_dict_env
                 test_cnn test_invalid_actions test_lstm)
CONTRIB_MARK="not slow"  # sb3-contrib's own marker: test_ppo_lstm_performance, a 50k-step learning check (>20 min here)
CONTRIB_QUICK_MODULES=(test_run test_invalid_actions test_lstm)
# sb3-contrib's test_save_load does not cover MaskablePPO/RecurrentPPO; its test_run only in these two.
CONTRIB_QUICK_K="test_advantage_normalization or test_trpo or (test_invalid_actions and not test_cnn and not test_supports_multi_envs) \
or (test_lstm and (test_check or test_run[ or test_ppo_multi_dimensional_action_space))"

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

main() {  # the whole run in a function: bash parses it before running, so editing this file mid-run is safe
  quick=0; parents=0; only=""; ref=""; out=""; extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --quick) quick=1 ;;
      --parents) parents=1 ;;
      --only) only=${2:?--only needs a list}; shift ;;
      --only=*) only=${1#--only=} ;;
      --ref) ref=${2:?--ref needs a git ref}; shift ;;
      --ref=*) ref=${1#--ref=} ;;
      --out) out=${2:?--out needs a folder}; shift ;;
      --out=*) out=${1#--out=} ;;
      -h|--help) usage; exit 0 ;;
      *) extra+=("$1") ;;
    esac
    shift
  done
  out=${out:-$CACHE/results}
  mkdir -p "$CACHE" "$out"
  out=$(cd "$out" && pwd)

  # ----------------------------------------------------------------------------- which sb3_fair
  if [ -n "$ref" ]; then
    sha=$(git -C "$REPO" rev-parse --verify "$ref^{commit}") || { echo "run.sh: unknown git ref $ref" >&2; exit 2; }
    SRC_ROOT=$CACHE/ref-$sha
    if [ ! -f "$SRC_ROOT/sb3_fair/__init__.py" ]; then
      rm -rf "$SRC_ROOT"; mkdir -p "$SRC_ROOT"
      git -C "$REPO" archive "$sha" sb3_fair | tar -x -C "$SRC_ROOT"
    fi
    echo "run.sh: sb3_fair from git $ref ($sha)"
  else
    SRC_ROOT=$REPO
    echo "run.sh: sb3_fair from the working tree $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$( [ -n "$(git -C "$REPO" status --porcelain -- sb3_fair 2>/dev/null)" ] && echo ', with uncommitted changes'))"
  fi
  # the repo (or snapshot) first: the editable install may point elsewhere
  PYPATH="$SRC_ROOT:$HERE${PYTHONPATH:+:$PYTHONPATH}"

  # ----------------------------------------------------------------------------- sdist
  fetch_sdist() {  # fetch_sdist PIPNAME IMPORTNAME -> prints the extracted folder
    local dist=$1 mod=$2 version dl tgz base dir
    version=$($PY -c "import $mod; print($mod.__version__)") || return 1
    base=${mod}-${version}
    dir=$CACHE/$base
    if [ -d "$dir/tests" ]; then echo "$dir"; return 0; fi
    dl=$CACHE/downloads; mkdir -p "$dl"
    tgz=$(ls "$dl/$base.tar.gz" 2>/dev/null || true)
    if [ -z "$tgz" ]; then
      echo "run.sh: downloading the $dist $version sdist" >&2
      $PY -m pip download --quiet --no-deps --no-binary :all: --no-build-isolation "$dist==$version" -d "$dl" >&2 \
        || $PY -m pip download --quiet --no-deps --no-binary :all: "$dist==$version" -d "$dl" >&2 \
        || $PY - "$dist" "$base.tar.gz" "$dl" >&2 <<'EOF'
# last resort: the sdist link from PyPI's simple index (PEP 503), checked against its sha256
import hashlib, re, sys, urllib.request
dist, name, dest = sys.argv[1:]
page = urllib.request.urlopen(f"https://pypi.org/simple/{dist}/", timeout=60).read().decode()
url = next(u for u in re.findall(r'href="([^"]+)"', page) if u.split("#")[0].endswith("/" + name))
data = urllib.request.urlopen(url.split("#")[0], timeout=120).read()
if "#sha256=" in url and hashlib.sha256(data).hexdigest() != url.split("#sha256=")[1]:
    sys.exit(f"sha256 mismatch for {url}")
open(f"{dest}/{name}", "wb").write(data)
EOF
      tgz=$(ls "$dl/$base.tar.gz" 2>/dev/null || true)
    fi
    [ -n "$tgz" ] || { echo "run.sh: no sdist $dl/$base.tar.gz" >&2; return 1; }
    tar -xzf "$tgz" -C "$CACHE" --exclude="$base/$mod" --exclude="$base/$mod.egg-info"
    [ -d "$dir/tests" ] || { echo "run.sh: $tgz has no tests/" >&2; return 1; }
    echo "$dir"
  }

  # pandas for SB3's test_logger, kept out of the environment
  if ! $PY -c "import pandas" 2>/dev/null; then
    if ! PYTHONPATH="$CACHE/site" $PY -c "import pandas" 2>/dev/null; then
      echo "run.sh: pandas (for test_logger) -> $CACHE/site" >&2
      $PY -m pip install --quiet --no-deps --target "$CACHE/site" pandas pytz tzdata >&2 || true
    fi
    PYPATH="$PYPATH:$CACHE/site"
  fi

  # ----------------------------------------------------------------------------- rows and suites
  rows=$(PYTHONPATH="$PYPATH" $PY "$HERE/sb3_fair_substitute.py" rows) || { echo "run.sh: cannot read the rows (does sb3_fair import?)" >&2; exit 2; }
  declare -A suite_of avail_of
  for r in $(echo "$rows" | awk '{print $1}'); do
    suite_of[$r]=$(echo "$rows" | awk -v r="$r" '$1==r{print $2}')
    avail_of[$r]=$(echo "$rows" | awk -v r="$r" '$1==r{print $3}')
  done
  if [ -n "$only" ]; then
    IFS=',' read -r -a chosen <<< "$only"
    for c in "${chosen[@]}"; do
      [ -n "${suite_of[$c]:-}" ] || { echo "run.sh: unknown Fair class $c (rows: $(echo "$rows" | awk '{print $1}' | xargs))" >&2; exit 2; }
      if [ "$parents" = 0 ] && [ "${avail_of[$c]}" != 1 ]; then echo "run.sh: sb3_fair.$c does not import (yet)" >&2; exit 2; fi
    done
  else
    chosen=(); for r in $(echo "$rows" | awk '$3==1{print $1}'); do chosen+=("$r"); done
    [ ${#chosen[@]} -gt 0 ] || { echo "run.sh: no Fair class imports from sb3_fair" >&2; exit 2; }
  fi

  xdist=()
  if $PY -c "import xdist" 2>/dev/null && ! printf '%s\n' "${extra[@]+"${extra[@]}"}" | grep -q '^-n'; then
    xdist=(-n "${SB3_FAIR_XDIST:-2}")
  fi

  status=0
  for suite in sb3 sb3-contrib; do
    names=(); for c in "${chosen[@]}"; do [ "${suite_of[$c]}" = "$suite" ] && names+=("$c"); done
    [ ${#names[@]} -gt 0 ] || continue
    if [ "$suite" = sb3 ]; then
      src=$(fetch_sdist stable-baselines3 stable_baselines3) || exit 2
      mark=""
      if [ $quick = 1 ]; then mods=("${SB3_QUICK_MODULES[@]}"); kexpr=$SB3_QUICK_K; else mods=("${SB3_MODULES[@]}"); kexpr=""; fi
    else
      src=$(fetch_sdist sb3-contrib sb3_contrib) || exit 2
      mark=$CONTRIB_MARK
      if [ $quick = 1 ]; then mods=("${CONTRIB_QUICK_MODULES[@]}"); kexpr=$CONTRIB_QUICK_K; else mods=("${CONTRIB_MODULES[@]}"); kexpr=""; fi
    fi
    files=(); for m in "${mods[@]}"; do [ -f "$src/tests/$m.py" ] && files+=("tests/$m.py") || echo "run.sh: $suite has no tests/$m.py" >&2; done
    list=$(IFS=,; echo "${names[*]}")
    label=$([ $parents = 1 ] && echo parents || echo fair)-$(echo "$list" | tr ',' '+')-$suite$([ $quick = 1 ] && echo -quick)
    results=$out/$label.jsonl; : > "$results"
    kargs=(); [ -n "$kexpr" ] && kargs=(-k "$kexpr"); [ -n "$mark" ] && kargs+=(-m "$mark")
    echo "run.sh: [$label] $([ $parents = 1 ] && echo 'parents (no substitution)' || echo "substituting $list") in $src"
    echo "run.sh: results -> $results"
    start=$(date +%s)
    (cd "$src" && env PYTHONPATH="$PYPATH" SB3_FAIR_SUBSTITUTE="$list" SB3_FAIR_PARENTS=$parents SB3_FAIR_RESULTS="$results" \
       $PY -P -m pytest -c "$src/pyproject.toml" --rootdir "$src" -p no:cacheprovider -p sb3_fair_substitute \
         -o console_output_style=count -rfE "${xdist[@]+"${xdist[@]}"}" "${kargs[@]+"${kargs[@]}"}" "${files[@]}" "${extra[@]+"${extra[@]}"}")
    rc=$?
    echo "run.sh: [$label] pytest exit $rc after $(( $(date +%s) - start )) s"
    [ $rc -gt $status ] && status=$rc
  done
  return $status
}

main "$@"
exit $?
