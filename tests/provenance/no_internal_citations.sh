#!/usr/bin/env bash
# Citations in shipped files must point at public sources (a spec and its section, a Linux/KVM
# function, file and commit, a list posting's Message-ID, a paper). This test fails when any file
# of the source tree cites what users do not have: the project's internal fact sheets and notes,
# paths under the development machine's shared folder, or an issue number of the project tracker.
#
#   no_internal_citations.sh SOURCE_DIR     scan the tree; exit 1 listing every offending line
#   no_internal_citations.sh --self-test    plant each forbidden form in a temporary tree and check
#                                           that the scan reports it (and nothing in a clean file)
#
# This file itself is not scanned (it spells out what it looks for).
set -u

# One extended regex per forbidden form (grep -E, case-insensitive).
PATTERNS=(
  'fact[ -]?sheets?'                           # "fact sheet §3.3", "fact-sheet cases"
  '/work/shared'                               # the development machine's shared folder
  '(^|[^a-z])shared/(reference|seeds|data)/'   # the same, relative ("../shared/reference/...")
  'anchors\.md|anchors [0-9]+\.[0-9]'          # the internal anchors note and its sections
  'gicv41-vsgi\.md|hyperv-ipi\.md'             # the internal GICv4.1 / Hyper-V notes
  '(^|[^a-z])issue #?[0-9]+'                   # "issue 3", "Issue 5", "issue #8": tracker numbers
)
# What is scanned, relative to SOURCE_DIR (missing entries are skipped).
SCOPE=(src tests bench fuzz profiles scenarios docs data scripts cmake .ci README.md CMakeLists.txt
       CMakePresets.json dev)

scan() {  # scan ROOT: prints "path:line: text" for every hit; returns 1 if any
  local root=$1 found=0 p out
  local -a targets=()
  for t in "${SCOPE[@]}"; do [[ -e $root/$t ]] && targets+=("$t"); done
  ((${#targets[@]})) || { echo "no_internal_citations: nothing to scan under $root" >&2; return 2; }
  for p in "${PATTERNS[@]}"; do
    # -I: skip binary files (trace.dat, images, fuzz inputs); build trees are not scanned.
    out=$(cd "$root" && grep -rnIiE --exclude-dir=build --exclude-dir=.git \
            --exclude=no_internal_citations.sh -e "$p" -- "${targets[@]}")
    if [[ -n $out ]]; then
      found=1
      printf '%s\n' "$out"
    fi
  done
  return $found
}

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src" "$tmp/profiles" "$tmp/docs"
  # Each line below must be reported.
  bad=(
    "// Decision (fact sheet §3.3): VP < 64"
    "// the fact-sheet validation cases"
    "source = \"see /work/shared/reference/x.md\""
    "// (see ../shared/reference/notes.md)"
    "// gem5 uses the same tick (anchors.md section 2.1)"
    "# figures (anchors 1.6)"
    "# (gicv41-vsgi.md 5.2)"
    "// /x/hyperv-ipi.md §4.2"
    "// Shape (Issue 5, \"A small VMM\")"
    "// as issue #8 asks"
  )
  i=0
  for line in "${bad[@]}"; do
    printf 'int x;\n%s\n' "$line" > "$tmp/src/bad$i.h"
    i=$((i + 1))
  done
  # Public citations and ordinary words must not be reported.
  cat > "$tmp/docs/clean.md" <<'CLEAN'
Arm IHI 0069H.b §5.2; Hyper-V TLFS "Hypercall Interface"; commit f1a3fac4095c; LKML
<20191027151938.7296-1-vkuznets@redhat.com>; a shared vPE table; shared_ptr; expect step issued=2;
the CLI issues 3 hypercalls; tissue 4; anchors of the plot; /shared/ipilab/bin on a cluster node.
CLEAN
  out=$(scan "$tmp"); rc=$?
  fail=0
  [[ $rc -eq 1 ]] || { echo "self-test: scan returned $rc, expected 1"; fail=1; }
  for ((j = 0; j < i; j++)); do
    grep -q "^src/bad$j.h:2:" <<<"$out" || { echo "self-test: not reported: ${bad[$j]}"; fail=1; }
  done
  if grep -q '^docs/clean.md' <<<"$out"; then
    echo "self-test: false positive:"; grep '^docs/clean.md' <<<"$out"; fail=1
  fi
  rm -f "$tmp"/src/bad*.h
  out=$(scan "$tmp"); rc=$?
  [[ $rc -eq 0 ]] || { echo "self-test: a clean tree gave $rc: $out"; fail=1; }
  ((fail)) || echo "self-test: all ${i} forbidden forms reported, clean text passes"
  exit $fail
fi

root=${1:?usage: no_internal_citations.sh SOURCE_DIR | --self-test}
out=$(scan "$root"); rc=$?
if [[ $rc -ne 0 ]]; then
  [[ -n $out ]] && printf '%s\n' "$out"
  echo
  echo "These lines cite files or numbers users do not have (internal fact sheets or notes, the"
  echo "development machine's shared folder, tracker issue numbers). Cite the public source the"
  echo "note names instead: a spec and section, a Linux/KVM function, file and commit, a list"
  echo "posting's Message-ID or lore link, a paper; say ESTIMATE or inference where none exists."
  exit 1
fi
echo "no internal citations under $root"
