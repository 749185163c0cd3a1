import { measureSize } from './bench/support/size.ts';
const s = await measureSize(true);
console.log(s.pageGzipBytes, s.workerOwnGzipBytes);
for (const m of s.workerModules!) console.log(String(m.gzipBytes).padStart(6), String(m.bytes).padStart(7), m.source);
