#!/usr/bin/env bash
# Snapshot every example's outputs (plan JSON, sweep CSV, export-all set) into one folder, so a
# refactor that must change no number can be checked byte for byte:
#   scripts/snapshot_outputs.sh out/before   # on the base commit
#   scripts/snapshot_outputs.sh out/after    # after the change
#   diff -r out/before out/after
set -u
export COLUMNS=120
dest=${1:?usage: snapshot_outputs.sh FOLDER}
ct=${CT:-.venv/bin/clustertwin}
rm -rf "$dest"; mkdir -p "$dest/plan" "$dest/sweep" "$dest/export"
for f in examples/*.yaml; do
  name=$(basename "$f" .yaml)
  $ct plan "$f" --json > "$dest/plan/$name.json" 2> "$dest/plan/$name.err"
  echo "rc=$?" >> "$dest/plan/$name.err"
  # the elapsed-time line differs run to run
  sed -i '/^([0-9.]* s)$/d' "$dest/plan/$name.err"
  [ -s "$dest/plan/$name.json" ] || continue
  # what the terminal shows, the page and the one-stage commands (the views draw these)
  COLUMNS=120 $ct plan "$f" --out "$dest/plan/$name.out" --force > "$dest/plan/$name.txt" 2>/dev/null
  sed -i "s|$dest|DEST|g" "$dest/plan/$name.txt"
  # plotly gives each figure a random element id
  sed -i -E 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/FIGURE-ID/g' "$dest/plan/$name.out/plan.html"
  COLUMNS=120 $ct validate "$f" > "$dest/plan/$name.validate" 2>&1
  for cmd in design reliability buildout; do
    COLUMNS=120 $ct $cmd "$f" > "$dest/plan/$name.$cmd.txt" 2>&1
    $ct $cmd "$f" --json > "$dest/plan/$name.$cmd.json" 2>&1
  done
done
for name in ladder h100-vs-nvl72; do
  $ct sweep "examples/$name.yaml" --out "$dest/sweep/$name.run" --workers 1 --force >/dev/null 2>&1
  echo "rc=$?" > "$dest/sweep/$name.rc"
  cp "$dest/sweep/$name.run/sweep.csv" "$dest/sweep/$name.csv" 2>/dev/null
  rm -rf "$dest/sweep/$name.run"
done
for name in default llama3-70b-gb200-nvl72; do
  $ct export all "examples/$name.yaml" --out "$dest/export/$name" --force >/dev/null 2>"$dest/export/$name.err"
  echo "rc=$?" >> "$dest/export/$name.err"
  sed -i '/([0-9.]* s)/d' "$dest/export/$name.err"
done
