#!/usr/bin/env node
// ONNX Runtime (CPU) as the float oracle: runs MODEL.onnx on .npy inputs and writes each output
// to OUTDIR/<sanitized name>.npy, like `fixpoint run`.
// usage: node ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy [NAME=FILE.npy ...] [--repeat N] [--threads T]
// With --repeat N (> 1) it prints "timing: ..." like `fixpoint run --repeat` (bench/speed.py).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '|i1': ['int8', Int8Array],
  '<i2': ['int16', Int16Array], '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array], '|b1': ['bool', Uint8Array],
  '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array], '<f2': ['float16', Uint16Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order not supported`);
  const [type, Arr] = DTYPES[descr] || (() => { throw new Error(`${file}: dtype ${descr}`); })();
  const start = hstart + hlen;
  const bytes = buf.subarray(start);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  let data = new Arr(copy.buffer, 0, copy.length / Arr.BYTES_PER_ELEMENT);
  if (type === 'bool') data = Uint8Array.from(data);
  return new ort.Tensor(type, type === 'bool' ? Array.from(data, v => v !== 0) : data, shape);
}

function writeNpy(file, tensor) {
  const codes = { float32: '<f4', float64: '<f8', int8: '|i1', int16: '<i2', int32: '<i4', int64: '<i8', uint8: '|u1',
                  uint16: '<u2', uint32: '<u4', uint64: '<u8', float16: '<f2', bool: '|b1' };
  const code = codes[tensor.type];
  if (!code) throw new Error(`cannot write ${tensor.type}`);
  const dims = tensor.dims;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${code}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  let data = tensor.data;
  if (tensor.type === 'bool') data = Uint8Array.from(data, v => (v ? 1 : 0));
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = process.argv.slice(2);
  const option = (flag, dflt) => {
    const i = args.indexOf(flag);
    if (i < 0) return dflt;
    const v = Number(args[i + 1]);
    args.splice(i, 2);
    return v;
  };
  const repeat = option('--repeat', 1), threads = option('--threads', 1);
  // --no-optimize: run the operators as written (no fusion of QDQ pairs into ONNX Runtime's
  // integer kernels, whose u8s8 AVX2 path saturates pair sums on CPUs without VNNI).
  const flagAt = args.indexOf('--no-optimize');
  const optimize = flagAt < 0;
  if (!optimize) args.splice(flagAt, 1);
  const [model, outdir, ...specs] = args;
  if (!model || !outdir) {
    console.error('usage: node ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy ...');
    process.exit(2);
  }
  const feeds = {};
  for (const s of specs) {
    const eq = s.indexOf('=');
    feeds[s.slice(0, eq)] = readNpy(s.slice(eq + 1));
  }
  // Single-threaded and without graph rewrites that change float rounding more than needed.
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, ...(optimize ? {} : { graphOptimizationLevel: 'disabled' }) });
  const t0 = process.hrtime.bigint();
  let results = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const times = [];
  for (let i = 1; i < repeat; ++i) {
    const t = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  if (times.length) {
    times.sort((a, b) => a - b);
    console.log(`timing: onnxruntime threads=${threads} min ${times[0].toFixed(3)} ms median ` +
                `${times[Math.floor(times.length / 2)].toFixed(3)} ms over ${times.length} runs (after 1 warm-up)`);
  }
  fs.mkdirSync(outdir, { recursive: true });
  for (const [name, t] of Object.entries(results)) {
    writeNpy(path.join(outdir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), t);
  }
  console.log(`ort: ran ${path.basename(model)} in ${ms.toFixed(1)} ms`);
}

main().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
