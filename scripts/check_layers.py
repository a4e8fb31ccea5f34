#!/usr/bin/python3
"""Layers only look down (docs/architecture.md): every #include in src/ and include/fixpoint/
must name a header of its own layer or a lower one. Run by the build (CMake target
check_layers): an upward include fails the build with one line per offence.

usage: check_layers.py SOURCE_DIR
"""
import os
import re
import sys

# Bottom to top. The float reference (kernels + graph executor) sits right above the IR: constant
# folding, calibration and table building evaluate float nodes with it; the fast float kernels
# (prepared Conv/Gemm/MatMul) sit right above it, so calibration and compare can use them.
LAYERS = ["fixedpoint", "ir", "reference", "float_kernels", "import", "passes", "partition", "quantize", "artifact", "kernels",
          "runtime", "debug"]

HEADERS = {
    "fixedpoint": ["error.h", "dtype.h", "fixedpoint.h", "parallel.h", "task_buffer.h", "cpu_isa.h", "table_curve.h"],
    "ir": ["tensor.h", "page_allocator.h", "buffer_pool.h", "ir.h", "graph_match.h", "inspect.h", "npy.h", "conv_layout.h"],
    "reference": ["runtime.h"],
    "float_kernels": ["float_kernels.h"],
    "import": ["onnx_import.h"],
    "passes": ["passes.h", "model.h"],
    "partition": ["partition.h"],
    "quantize": ["compiler.h", "program.h", "op_params.h"],
    "artifact": ["artifact.h"],
    "runtime": ["program_runner.h"],
    "debug": ["compare.h", "analyze.h", "output_error.h", "auto_mixed.h", "range_search.h", "compile_job.h", "graph_dot.h", "trace.h", "qdq_export.h"],
}

# src/ folders, most specific first.
DIRS = [
    ("src/kernels/reference/integer", "kernels"),
    ("src/kernels/x86", "kernels"),
    ("src/kernels/reference", "reference"),
    ("src/kernels/float", "float_kernels"),
    ("src/fixedpoint", "fixedpoint"),
    ("src/ir", "ir"),
    ("src/io", "ir"),
    ("src/import", "import"),
    ("src/passes", "passes"),
    ("src/partition", "partition"),
    ("src/quantize", "quantize"),
    ("src/artifact", "artifact"),
    ("src/runtime", "runtime"),
    ("src/debug", "debug"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of_path(rel):
    if rel.startswith("include/fixpoint/"):
        name = rel[len("include/fixpoint/"):]
        for layer, hs in HEADERS.items():
            if name in hs:
                return layer
        return None
    for d, layer in DIRS:
        if rel == d or rel.startswith(d + "/"):
            return layer
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    errors = []
    unknown = []
    for top in ("src", "include/fixpoint"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                here = layer_of_path(rel)
                if here is None:
                    unknown.append(rel)
                    continue
                for no, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc.startswith("fixpoint/"):
                        target = os.path.join("include", inc)
                    else:  # next to the file, else under src/ (each layer's private include root)
                        target = os.path.relpath(os.path.normpath(os.path.join(dirpath, inc)), root)
                        if not os.path.exists(os.path.join(root, target)):
                            target = os.path.join("src", inc)
                    there = layer_of_path(target)
                    if there is None:
                        if target.startswith(("include/", "src/")):
                            unknown.append(target)
                        continue
                    if LAYERS.index(there) > LAYERS.index(here):
                        errors.append(f"{rel}:{no}: includes \"{inc}\" (layer {there}) from layer {here}: "
                                      f"layers only look down ({' <- '.join(LAYERS)}; docs/architecture.md)")
    for u in sorted(set(unknown)):
        errors.append(f"{u}: belongs to no layer (add it to scripts/check_layers.py)")
    for e in errors:
        print(e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
