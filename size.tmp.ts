import { measureSize } from '/work/main/test/bench/support/size.ts'; const r = await measureSize(true); console.log(r.pageGzipBytes, r.workerOwnGzipBytes);
